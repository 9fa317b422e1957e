//! Renderers: pure functions from one report value to the text users read.
//!
//! Step 2's outputs (`analysis.json`, `analysis.html`, `analysis.sarif`, workflow-command
//! annotations) are all functions of one [`AnalysisReport`]; nothing here reads files, the
//! environment or the clock, so every change to what users see shows in a snapshot test.

pub mod analysis_html;
pub mod analysis_json;
pub mod annotations;
pub mod escape;
pub mod sarif;

pub use analysis_json::{AnalysisReport, FileEntry, RuleMeta, Sources};
