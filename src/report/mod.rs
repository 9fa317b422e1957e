//! Renderers: pure functions from one report value to the text users read.
//!
//! Step 2's outputs (`analysis.json`, `analysis.html`, `analysis.sarif`, workflow-command
//! annotations) are all functions of one [`AnalysisReport`]; step 5's (`report.json`,
//! `final_report.html`, `comment.md`) are functions of one [`model::Report`]. The renderers
//! read no files, environment or clock, so every change to what users see shows in a snapshot
//! test. Only the step 5 edges touch the disk: [`assemble`] reads what the steps wrote, and
//! [`command`] writes the rendered files.

pub mod analysis_html;
pub mod analysis_json;
pub mod annotations;
pub mod escape;
pub mod sarif;

pub mod assemble;
pub mod command;
pub mod comment;
pub mod final_html;
pub mod model;
pub mod summary;

pub use analysis_json::{AnalysisReport, FileEntry, RuleMeta, Sources};
