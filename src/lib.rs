//! `efficiency-audit` tells whether training, inference or data-processing code already runs at
//! the speed its machine allows, and proves it with measurements.
//!
//! The pipeline, one module per arrow, in data-flow order:
//!
//! ```text
//! event ─► changes ─► ceilings (step 1) ─► analysis (step 2) ─► verdict ─► strategies (step 3)
//!       ─► experiments (step 4) ─► report (step 5) ─► publish
//! ```
//!
//! `pipeline` runs them in that order (`efficiency-audit audit`).
//!
//! A program runs no faster than its slowest resource: if none of GPU compute, CPU compute or IO
//! bandwidth reaches the threshold (70 % by default), speed-up is provably possible (RED).

pub mod cleanup;
pub mod cli;
pub mod config;
pub mod exit;
pub mod progress;

pub mod event;

pub mod changes;

pub mod walk;

pub mod analysis;
pub mod ceilings;
pub mod experiments;
pub mod strategies;
pub mod verdict;

pub mod report;

pub mod analyze_cmd;

pub mod publish;

pub mod pipeline;
