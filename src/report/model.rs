//! Step 5's data: one [`Report`] value from which `report.json`, `final_report.html`,
//! `comment.md` and the job summary are rendered by pure functions.
//!
//! It holds what the earlier steps wrote (ceilings, findings, verdict, later strategies and
//! experiments) plus what only step 5 computes from the audited files: code excerpts and the
//! fixes turned into unified diffs. A step that has not run, or is not built yet, is listed in
//! [`Report::missing`] — never filled in with invented numbers.

use serde::{Deserialize, Serialize};

use crate::analysis::model::{Applicability, Finding, Resource};
use crate::ceilings::model::Ceilings;
use crate::verdict::Verdict;

/// Schema version of `report.json`.
pub const SCHEMA: u32 = 1;

/// The hidden marker that identifies the bot's sticky comment; rendered last in `comment.md`.
pub const MARKER: &str = "<!-- efficiency-audit:report v1 -->";

/// Everything the final report shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: u32,
    /// Version of the tool that wrote it.
    pub tool_version: String,
    /// Where the audit ran (repository, commit, pull request), when known.
    pub context: Context,
    /// RED or GREEN with its basis; `None` when step 2 has not run.
    pub verdict: Option<Verdict>,
    /// Estimated (step 2) and measured (step 4) saturation per resource.
    pub saturation: SaturationTable,
    /// Findings of step 2, each with its code excerpt when the file could be read.
    pub findings: Vec<ReportFinding>,
    /// Ranked strategies of step 3 (empty until step 3 runs).
    pub strategies: Vec<Strategy>,
    /// Before/after measurements of step 4 (empty until step 4 runs).
    pub experiments: Vec<Experiment>,
    /// The recommended top changes (at most three), best first.
    pub recommendations: Vec<Recommendation>,
    /// Fixes (or strategy patches) as unified diffs, in recommendation order.
    pub diffs: Vec<Diff>,
    /// The one-paragraph summary: verdict, top bottleneck, top-3 changes, measured speed-ups.
    pub summary: String,
    /// The machine's ceilings of step 1, when measured.
    pub ceilings: Option<Ceilings>,
    /// Exact commands that reproduce this report.
    pub reproduce: Vec<String>,
    /// Link to the uploaded report artifact, once known.
    pub artifact_url: Option<String>,
    /// What is not in this report, and why.
    pub missing: Vec<Missing>,
}

/// Where the audit ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Context {
    /// `owner/name`.
    pub repository: Option<String>,
    /// The commit audited (the PR head on pull requests).
    pub commit: Option<String>,
    /// Pull request number.
    pub pull_request: Option<u64>,
    /// GitHub event name (`pull_request`, `push`, ...).
    pub event: Option<String>,
    /// Link to the workflow run.
    pub run_url: Option<String>,
    /// The changed files the audit looked at, when the event names them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<Vec<String>>,
}

/// Saturation of each resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SaturationTable {
    /// CPU compute.
    pub cpu: SaturationPair,
    /// GPU compute.
    pub gpu: SaturationPair,
    /// IO bandwidth.
    pub io: SaturationPair,
}

/// Estimated and measured saturation of one resource, as fractions in [0, 1].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SaturationPair {
    /// Upper bound read from the source (step 2); `None` when unknown.
    pub estimated: Option<f64>,
    /// The one-line reason of the estimate.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Sampled while the benchmark ran (step 4); `None` until measured.
    pub measured: Option<f64>,
    /// The one-line reason of the measurement.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub measured_reason: String,
}

impl SaturationTable {
    /// The three resources in display order with their values.
    #[must_use]
    pub fn rows(&self) -> [(Resource, &SaturationPair); 3] {
        [
            (Resource::Gpu, &self.gpu),
            (Resource::Cpu, &self.cpu),
            (Resource::Io, &self.io),
        ]
    }
}

/// A finding with the source lines it points at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportFinding {
    /// The finding as step 2 wrote it.
    #[serde(flatten)]
    pub finding: Finding,
    /// The lines around it, when the file could be read.
    pub excerpt: Option<Excerpt>,
}

/// Consecutive source lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    /// 1-based number of the first line.
    pub first_line: usize,
    /// The lines, without their line endings (raw audited text: renderers escape it).
    pub lines: Vec<String>,
}

/// A ranked strategy of step 3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Strategy {
    /// Stable id, e.g. `dataloader-workers`.
    pub id: String,
    /// One-line title.
    pub title: String,
    /// 1 = best.
    pub rank: u32,
    /// The resource it targets.
    pub bottleneck: Option<Resource>,
    /// Expected gain in words, with its source (e.g. "≤ 2× (bf16/fp32 ratio measured)").
    pub expected_gain: Option<String>,
    /// How safe the patch is.
    pub safety: Applicability,
    /// Rule ids of the findings it resolves.
    pub resolves: Vec<String>,
    /// The patch as a unified diff of the PR head.
    pub patch: Option<String>,
}

/// One before/after measurement of step 4.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// Strategy id.
    pub strategy: String,
    /// Variant, e.g. `num_workers=8`.
    pub variant: Option<String>,
    /// Median of the baseline runs, in `unit`.
    pub baseline: f64,
    /// Median of the candidate runs, in `unit`.
    pub candidate: f64,
    /// Unit of the medians (`s` wall time, or the throughput metric's unit).
    pub unit: String,
    /// Speed-up (baseline time / candidate time, or candidate / baseline throughput).
    pub speedup: f64,
    /// 95 % confidence interval of the speed-up, `[low, high]`.
    pub ci95: [f64; 2],
    /// Measured runs per side.
    pub runs: u32,
    /// Outcome.
    pub status: ExperimentStatus,
}

/// What an experiment showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExperimentStatus {
    /// Faster: the interval excludes 1.0 and the correctness gate passed.
    Faster,
    /// Faster, but a `numerics` change without a correctness gate.
    Unverified,
    /// No measurable speed-up (the interval contains 1.0).
    NoChange,
    /// Broke the benchmark or its correctness check.
    Failed,
}

impl ExperimentStatus {
    /// Word shown in tables.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            ExperimentStatus::Faster => "faster",
            ExperimentStatus::Unverified => "faster, correctness unverified",
            ExperimentStatus::NoChange => "no measurable change",
            ExperimentStatus::Failed => "FAILED",
        }
    }
}

/// A recommended change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recommendation {
    /// What to do, one line (audited text: renderers escape it).
    pub title: String,
    /// Where, `path:line`, when it comes from a finding.
    pub location: Option<String>,
    /// `strategy` or `finding`.
    pub source: String,
}

/// A unified diff of one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diff {
    /// What it is the diff of: a rule id or a strategy id.
    pub origin: String,
    /// File it changes.
    pub path: String,
    /// How safe it is.
    pub applicability: Applicability,
    /// The unified diff text.
    pub text: String,
}

/// A part of the report that is absent, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Missing {
    /// The step: `ceilings`, `analysis`, `strategies`, `experiments`, `measured saturation`...
    pub step: String,
    /// Why it is missing, in neutral words.
    pub reason: String,
}

impl Report {
    /// The best speed-up that counts (interval above 1.0), if any experiment measured one.
    #[must_use]
    pub fn best_speedup(&self) -> Option<&Experiment> {
        self.experiments
            .iter()
            .filter(|e| {
                matches!(
                    e.status,
                    ExperimentStatus::Faster | ExperimentStatus::Unverified
                )
            })
            .max_by(|a, b| a.speedup.total_cmp(&b.speedup))
    }

    /// Whether `step` is listed as missing.
    #[must_use]
    pub fn is_missing(&self, step: &str) -> bool {
        self.missing.iter().any(|m| m.step == step)
    }
}
