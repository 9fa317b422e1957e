//! `analysis.json`: the machine-readable result of step 2, and the value every step-2
//! renderer reads.
//!
//! Schema 1: `{schema, tool, files: [{path, kind, facts}], findings: [{rule, category, path,
//! line, end_line, column, severity, resource, message, fix: {applicability, edits} | null}],
//! demand, verdict: {value, basis, bottleneck, bottleneck_saturation, threshold}, ceilings,
//! warnings}`. Lines are 1-based; fix edits are byte ranges of the file as read.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::model::{Category, CodeKind, Demand, Finding, Severity};
use crate::ceilings::model::Ceilings;
use crate::report::escape::LineIndex;
use crate::verdict::Verdict;

/// Current schema version of `analysis.json`.
pub const SCHEMA: u32 = 1;

/// Everything step 2 found, ready to render.
#[derive(Debug, Clone, Serialize)]
pub struct AnalysisReport {
    /// [`SCHEMA`].
    pub schema: u32,
    /// Name and version of the tool that wrote it.
    pub tool: Tool,
    /// One entry per analysed file, sorted by path.
    pub files: Vec<FileEntry>,
    /// Every finding, sorted by path, line, column and rule.
    pub findings: Vec<Finding>,
    /// The demand model: hot loops and estimated saturation per resource.
    pub demand: Demand,
    /// RED or GREEN, with its basis, bottleneck and threshold.
    pub verdict: Verdict,
    /// The ceilings the demand was set against, when `--ceilings` named a file.
    pub ceilings: Option<Ceilings>,
    /// Everything that could not be analysed, and why (also printed on stderr).
    pub warnings: Vec<String>,
    /// Metadata of every rule that can fire (SARIF rule descriptors, HTML help).
    #[serde(skip)]
    pub rules: Vec<RuleMeta>,
    /// Source text of files with findings (code excerpts, fix locations).
    #[serde(skip)]
    pub sources: Sources,
}

/// Tool identity.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Tool {
    /// `efficiency-audit`.
    pub name: String,
    /// Crate version.
    pub version: String,
}

impl Tool {
    /// This build.
    #[must_use]
    pub fn this() -> Self {
        Self {
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// One analysed file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileEntry {
    /// Path as given on the command line, or below a walked folder (forward slashes).
    pub path: String,
    /// Train / infer / data / other.
    pub kind: CodeKind,
    /// What the facts engine extracted (imports, loaders, precision, ...).
    pub facts: serde_json::Value,
    /// `false` (and then written) when the file was not parsed: empty, binary, not UTF-8, or
    /// shown by the pre-parse scan to hold nothing any rule or fact uses (`analysis::prefilter`).
    #[serde(skip_serializing_if = "is_true")]
    pub parsed: bool,
}

fn is_true(b: &bool) -> bool {
    *b
}

/// What a renderer needs to know about a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleMeta {
    /// Stable id, e.g. `EA101`.
    pub id: String,
    /// Human name, e.g. `host-sync-in-loop`.
    pub name: String,
    /// Category from the fixed vocabulary.
    pub category: Category,
    /// Default severity of its findings.
    pub severity: Severity,
    /// One sentence: what it finds.
    pub summary: String,
    /// Full documentation in Markdown (what it does, why it is slow, example, fix safety).
    pub docs: String,
}

/// Source text by path, with a line index per file.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    files: BTreeMap<String, (String, LineIndex)>,
}

impl Sources {
    /// Adds (or replaces) the text of `path`.
    pub fn insert(&mut self, path: String, text: String) {
        let index = LineIndex::new(&text);
        self.files.insert(path, (text, index));
    }

    /// The text and line index of `path`, if kept.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<(&str, &LineIndex)> {
        self.files.get(path).map(|(t, i)| (t.as_str(), i))
    }
}

/// Renders `analysis.json` (pretty-printed, trailing newline).
pub fn render(report: &AnalysisReport) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::model::{
        Applicability, Edit, Estimate, Fix, HotLoop, Resource, Saturation, Stage, StageKind,
    };
    use crate::verdict::{Basis, decide};

    pub(crate) const TRAIN_PY: &str = "import torch\nfrom torch.utils.data import DataLoader\n\nloader = DataLoader(ds, batch_size=32)\nfor x, y in loader:\n    x = x.cuda()\n    loss = model(x).sum()\n    loss.backward()\n    print(loss.item())  # café\n";

    fn estimate(value: Option<f64>, reason: &str) -> Estimate {
        Estimate {
            value,
            reason: reason.to_owned(),
        }
    }

    /// A report as the engine would produce for [`TRAIN_PY`], built by hand.
    pub(crate) fn sample() -> AnalysisReport {
        let saturation = Saturation {
            gpu: estimate(
                Some(0.07),
                "fp32 without TF32 on H100: 67 of 989 TFLOP/s → ≤ 7 %",
            ),
            cpu: estimate(Some(0.0625), "main-process loader: 1 of 16 CPUs → ≤ 6 %"),
            io: estimate(None, "no file reads seen"),
        };
        let findings = vec![
            Finding {
                rule: "EA001".into(),
                category: Category::DataloaderWorkers,
                path: "src/train.py".into(),
                line: 4,
                end_line: 4,
                column: 10,
                severity: Severity::High,
                resource: Resource::Cpu,
                message: "DataLoader loads in the main process; set num_workers".into(),
                fix: Some(Fix {
                    applicability: Applicability::Safe,
                    edits: vec![Edit {
                        start: 91,
                        end: 91,
                        content: ", num_workers=8".into(),
                    }],
                }),
            },
            Finding {
                rule: "EA010".into(),
                category: Category::HostSync,
                path: "src/train.py".into(),
                line: 9,
                end_line: 9,
                column: 11,
                severity: Severity::Medium,
                resource: Resource::Gpu,
                message: "`.item()` waits for the GPU every step: 50% idle, a:b,c\nsecond line"
                    .into(),
                fix: None,
            },
        ];
        let demand = Demand {
            loops: vec![HotLoop {
                path: "src/train.py".into(),
                line: 5,
                end_line: 9,
                function: None,
                kind: CodeKind::Train,
                stages: vec![
                    Stage {
                        kind: StageKind::DataSource,
                        detail: "ds (unknown Dataset)".into(),
                        line: None,
                    },
                    Stage {
                        kind: StageKind::Loader,
                        detail: "DataLoader(batch_size=32, num_workers=0)".into(),
                        line: Some(4),
                    },
                    Stage {
                        kind: StageKind::HostToDevice,
                        detail: "x.cuda() (blocking)".into(),
                        line: Some(6),
                    },
                    Stage {
                        kind: StageKind::Compute,
                        detail: "model(x) fp32".into(),
                        line: Some(7),
                    },
                    Stage {
                        kind: StageKind::SyncPoint,
                        detail: "loss.item()".into(),
                        line: Some(9),
                    },
                ],
                saturation: saturation.clone(),
            }],
            saturation: saturation.clone(),
            notes: vec!["no --ceilings: assumed 16 logical CPUs".into()],
        };
        let verdict = decide(&demand.saturation, Basis::Estimated, 0.7);
        let mut sources = Sources::default();
        sources.insert("src/train.py".into(), TRAIN_PY.into());
        AnalysisReport {
            schema: SCHEMA,
            tool: Tool {
                name: "efficiency-audit".into(),
                version: "0.0.0-test".into(),
            },
            files: vec![FileEntry {
                path: "src/train.py".into(),
                kind: CodeKind::Train,
                facts: serde_json::json!({"imports": {"DataLoader": "torch.utils.data.DataLoader"}}),
                parsed: true,
            }],
            findings,
            demand,
            verdict,
            ceilings: None,
            warnings: vec!["src/broken.py:3:1: syntax error; analysed what parses".into()],
            rules: vec![
                RuleMeta {
                    id: "EA001".into(),
                    name: "dataloader-without-workers".into(),
                    category: Category::DataloaderWorkers,
                    severity: Severity::High,
                    summary: "DataLoader without worker processes.".into(),
                    docs: "## What it does\nFinds `DataLoader(...)` without `num_workers`.\n"
                        .into(),
                },
                RuleMeta {
                    id: "EA010".into(),
                    name: "item-in-loop".into(),
                    category: Category::HostSync,
                    severity: Severity::Medium,
                    summary: "`.item()` inside the step loop.".into(),
                    docs: "## What it does\nFinds `.item()` in step loops.\n".into(),
                },
            ],
            sources,
        }
    }

    #[test]
    fn json_has_the_documented_shape() {
        let text = render(&sample()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["files"][0]["path"], "src/train.py");
        assert_eq!(v["files"][0]["kind"], "train");
        let f = &v["findings"][0];
        for key in [
            "rule", "category", "path", "line", "end_line", "column", "severity", "resource",
            "message", "fix",
        ] {
            assert!(f.get(key).is_some(), "finding lacks {key}");
        }
        assert_eq!(f["fix"]["applicability"], "safe");
        assert_eq!(f["fix"]["edits"][0]["start"], 91);
        assert!(v["findings"][1]["fix"].is_null());
        assert_eq!(v["verdict"]["value"], "RED");
        assert_eq!(v["verdict"]["basis"], "estimated");
        assert_eq!(v["verdict"]["bottleneck"], "gpu");
        assert_eq!(v["verdict"]["threshold"], 0.7);
        assert!(v["demand"]["loops"].is_array());
        assert_eq!(
            v["warnings"][0],
            "src/broken.py:3:1: syntax error; analysed what parses"
        );
        assert!(v.get("rules").is_none() && v.get("sources").is_none());
        insta::assert_snapshot!(text);
    }

    #[test]
    fn sample_edit_offset_points_after_batch_size() {
        // Keeps the hand-built fix honest: byte 91 is just before the closing parenthesis.
        assert_eq!(&TRAIN_PY[91..92], ")");
    }
}
