//! Step 5, input side: read what steps 1–4 wrote into the output folder, read the audited
//! source for excerpts and diffs, and assemble one [`Report`].
//!
//! Every absent or unreadable input becomes a [`Missing`] entry; nothing is invented.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::analysis::model::{Applicability, Estimate, Finding, Saturation};
use crate::ceilings::model::Ceilings;
use crate::report::model::{
    Context, Diff, Excerpt, Experiment, ExperimentStatus, Missing, Report, ReportFinding, SCHEMA,
    SaturationPair, SaturationTable, Strategy,
};
use crate::report::summary;
use crate::verdict::{Basis, Verdict};

/// Step 1's file.
pub const CEILINGS_FILE: &str = "theoretical_limits.yaml";
/// Step 2's machine-readable file.
pub const ANALYSIS_FILE: &str = "analysis.json";
/// Step 3's ranking as report rows (a JSON array of [`Strategy`]), written by `audit` beside
/// `strategies.md`.
pub const STRATEGIES_FILE: &str = "strategies.json";
/// Step 4's outcome ([`crate::experiments::ExperimentsOutcome`]).
pub const EXPERIMENTS_FILE: &str = "experiments/outcome.json";

/// Lines shown around a finding in an excerpt.
const EXCERPT_CONTEXT: usize = 2;
/// Longest excerpt, in lines: a finding spanning a whole loop shows its head only.
const EXCERPT_MAX: usize = 12;

/// The parts of `analysis.json` the report uses; other keys are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct AnalysisFile {
    /// Findings.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The demand model; only its combined `saturation` is read.
    #[serde(default)]
    pub demand: Option<DemandSaturation>,
    /// The verdict step 2 decided.
    #[serde(default)]
    pub verdict: Option<Verdict>,
}

/// `demand.saturation` of `analysis.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct DemandSaturation {
    /// Combined estimate.
    pub saturation: Saturation,
}

/// What the earlier steps left in the output folder.
#[derive(Debug, Clone, Default)]
pub struct StepOutputs {
    /// Step 1.
    pub ceilings: Option<Ceilings>,
    /// Step 2.
    pub analysis: Option<AnalysisFile>,
    /// Step 3.
    pub strategies: Vec<Strategy>,
    /// Step 4.
    pub experiments: Vec<Experiment>,
    measured: Measured,
    /// Whether step 4's outcome was found (it may hold no comparison).
    pub experiments_ran: bool,
    /// What could not be read, and why.
    pub missing: Vec<Missing>,
}

/// Saturation sampled by step 4, per resource.
#[derive(Debug, Clone, Default)]
struct Measured {
    gpu: Option<Estimate>,
    cpu: Option<Estimate>,
    io: Option<Estimate>,
}

fn missing(step: &str, reason: String) -> Missing {
    Missing {
        step: step.to_owned(),
        reason,
    }
}

/// Reads the step outputs in `dir`; absent or broken files become [`Missing`] entries.
#[must_use]
pub fn read_outputs(dir: &Path) -> StepOutputs {
    let mut out = StepOutputs::default();
    let shown = dir.display();
    match std::fs::read_to_string(dir.join(CEILINGS_FILE)) {
        Ok(text) => match Ceilings::from_yaml(&text) {
            Ok(c) => out.ceilings = Some(c),
            Err(err) => out.missing.push(missing(
                "ceilings",
                format!("{shown}/{CEILINGS_FILE} could not be read: {err}"),
            )),
        },
        Err(_) => out.missing.push(missing(
            "ceilings",
            format!("{CEILINGS_FILE} not found in {shown}: step 1 (ceilings) did not run"),
        )),
    }
    match std::fs::read_to_string(dir.join(ANALYSIS_FILE)) {
        Ok(text) => match serde_json::from_str::<AnalysisFile>(&text) {
            Ok(a) => out.analysis = Some(a),
            Err(err) => out.missing.push(missing(
                "analysis",
                format!("{shown}/{ANALYSIS_FILE} could not be read: {err}"),
            )),
        },
        Err(_) => out.missing.push(missing(
            "analysis",
            format!("{ANALYSIS_FILE} not found in {shown}: step 2 (analyze) did not run"),
        )),
    }
    match std::fs::read_to_string(dir.join(STRATEGIES_FILE)) {
        Ok(text) => match serde_json::from_str::<Vec<Strategy>>(&text) {
            Ok(s) => out.strategies = s,
            Err(err) => out.missing.push(missing(
                "strategies",
                format!("{shown}/{STRATEGIES_FILE} could not be read: {err}"),
            )),
        },
        Err(_) => out.missing.push(missing(
            "strategies",
            format!("{STRATEGIES_FILE} not found in {shown}: step 3 did not run"),
        )),
    }
    match std::fs::read_to_string(dir.join(EXPERIMENTS_FILE)) {
        Ok(text) => match serde_json::from_str::<crate::experiments::ExperimentsOutcome>(&text) {
            Ok(outcome) => {
                let (rows, skipped) = experiment_rows(&outcome);
                out.experiments = rows;
                out.experiments_ran = true;
                out.missing.extend(skipped);
                if let Some(m) = &outcome.measured_saturation {
                    out.measured = Measured {
                        gpu: Some(m.saturation.gpu.clone()),
                        cpu: Some(m.saturation.cpu.clone()),
                        io: Some(m.saturation.io.clone()),
                    };
                }
            }
            Err(err) => out.missing.push(missing(
                "experiments",
                format!("{shown}/{EXPERIMENTS_FILE} could not be read: {err}"),
            )),
        },
        Err(_) => out.missing.push(missing(
            "experiments",
            format!("{EXPERIMENTS_FILE} not found in {shown}: step 4 did not run, so speed-ups and measured saturation are unknown"),
        )),
    }
    out
}

/// Assembles the report. `source_root` is where the findings' paths are read from (for
/// excerpts and diffs); `threshold` decides the verdict when step 2 did not write one.
#[must_use]
pub fn assemble(
    outputs: StepOutputs,
    source_root: &Path,
    threshold: f64,
    context: Context,
    reproduce: Vec<String>,
) -> Report {
    let StepOutputs {
        ceilings,
        analysis,
        strategies,
        experiments,
        measured,
        experiments_ran,
        mut missing,
    } = outputs;
    let (findings, estimate, verdict) = match analysis {
        Some(a) => (a.findings, a.demand.map(|d| d.saturation), a.verdict),
        None => (Vec::new(), None, None),
    };
    let reason = |e: &Option<Saturation>, pick: fn(&Saturation) -> &Estimate| {
        e.as_ref().map(|s| pick(s).clone())
    };
    let pair = |est: Option<Estimate>, measured: Option<Estimate>| SaturationPair {
        estimated: est.as_ref().and_then(|e| e.value),
        reason: est.map(|e| e.reason).unwrap_or_default(),
        measured: measured.as_ref().and_then(|m| m.value),
        measured_reason: measured.map(|m| m.reason).unwrap_or_default(),
    };
    let saturation = SaturationTable {
        gpu: pair(reason(&estimate, |s| &s.gpu), measured.gpu.clone()),
        cpu: pair(reason(&estimate, |s| &s.cpu), measured.cpu.clone()),
        io: pair(reason(&estimate, |s| &s.io), measured.io.clone()),
    };
    // Measured saturation overrides the estimate (DESIGN §1 Step 2, "Verdict").
    let verdict = if [&measured.gpu, &measured.cpu, &measured.io]
        .iter()
        .any(|m| m.as_ref().is_some_and(|e| e.value.is_some()))
    {
        let e = |m: &Option<Estimate>| Estimate {
            value: m.as_ref().and_then(|e| e.value),
            reason: "measured".to_owned(),
        };
        let threshold = verdict.as_ref().map_or(threshold, |v| v.threshold);
        Some(crate::verdict::decide(
            &Saturation {
                gpu: e(&measured.gpu),
                cpu: e(&measured.cpu),
                io: e(&measured.io),
            },
            Basis::Measured,
            threshold,
        ))
    } else {
        verdict.or_else(|| {
            estimate
                .as_ref()
                .map(|s| crate::verdict::decide(s, Basis::Estimated, threshold))
        })
    };

    let mut report_findings: Vec<ReportFinding> = findings
        .into_iter()
        .map(|finding| {
            let excerpt = read_excerpt(&resolve(source_root, &finding.path), &finding);
            ReportFinding { finding, excerpt }
        })
        .collect();
    report_findings.sort_by(|a, b| {
        let (a, b) = (&a.finding, &b.finding);
        b.severity
            .cmp(&a.severity)
            .then(a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });

    let mut diffs = Vec::new();
    // Strategy patches when step 3 wrote any, else the findings' own fixes.
    if strategies.iter().all(|s| s.patch.is_none()) {
        for f in &report_findings {
            let f = &f.finding;
            let Some(fix) = &f.fix else { continue };
            match std::fs::read_to_string(resolve(source_root, &f.path)) {
                Ok(old) => match apply_edits(&old, &fix.edits) {
                    Some(new) if new != old => diffs.push(Diff {
                        origin: f.rule.clone(),
                        path: f.path.clone(),
                        applicability: fix.applicability,
                        text: unified_diff(&f.path, &old, &new),
                    }),
                    Some(_) => {}
                    None => missing.push(Missing {
                        step: "diff".to_owned(),
                        reason: format!(
                            "the fix of {} at {}:{} does not fit the file as it is now",
                            f.rule, f.path, f.line
                        ),
                    }),
                },
                Err(_) => missing.push(Missing {
                    step: "diff".to_owned(),
                    reason: format!("{} could not be read to show the fix of {}", f.path, f.rule),
                }),
            }
        }
    } else {
        let mut ranked: Vec<&Strategy> = strategies.iter().collect();
        ranked.sort_by_key(|s| s.rank);
        for s in ranked {
            if let Some(patch) = &s.patch {
                diffs.push(Diff {
                    origin: s.id.clone(),
                    path: patch_path(patch).unwrap_or_default(),
                    applicability: s.safety,
                    text: patch.clone(),
                });
            }
        }
    }

    let recommendations = summary::recommendations(&strategies, &report_findings);
    let summary = summary::paragraph(
        verdict.as_ref(),
        &saturation,
        &recommendations,
        &experiments,
        experiments_ran,
    );
    Report {
        schema: SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        context,
        verdict,
        saturation,
        findings: report_findings,
        strategies,
        experiments,
        recommendations,
        diffs,
        summary,
        ceilings,
        reproduce,
        artifact_url: None,
        missing,
    }
}

/// A finding's file: relative to the audited folder when walked, or as given on the command
/// line (relative to the working directory) when the analysis was run on named files.
/// Step 4's results as report rows; skipped variants (nothing measured) become notes.
fn experiment_rows(
    outcome: &crate::experiments::ExperimentsOutcome,
) -> (Vec<Experiment>, Vec<Missing>) {
    use crate::experiments::Status;
    use crate::experiments::stats::Direction;
    let unit = match outcome.baseline.direction {
        Direction::LowerIsBetter => "s",
        Direction::HigherIsBetter => "metric",
    };
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for r in outcome.results.iter().chain(outcome.stacked.iter()) {
        let (Some(speedup), Some(lo), Some(hi)) = (r.speedup, r.ci_low, r.ci_high) else {
            let name = match &r.variant {
                Some(v) => format!("experiment {} ({v})", r.strategy),
                None => format!("experiment {}", r.strategy),
            };
            skipped.push(missing(
                &name,
                format!("{}: {}", r.status.label(), r.reason),
            ));
            continue;
        };
        let status = match r.status {
            Status::Passed
                if r.applicability == Some(Applicability::Numerics)
                    && !matches!(r.gate, crate::experiments::Gate::Passed { .. }) =>
            {
                ExperimentStatus::Unverified
            }
            Status::Passed => ExperimentStatus::Faster,
            Status::Failed if lo <= 1.0 && hi >= 1.0 => ExperimentStatus::NoChange,
            _ => ExperimentStatus::Failed,
        };
        rows.push(Experiment {
            strategy: r.strategy.clone(),
            variant: r.variant.clone(),
            baseline: r.baseline.as_ref().map_or(f64::NAN, |b| b.median),
            candidate: r.candidate.as_ref().map_or(f64::NAN, |c| c.median),
            unit: unit.to_owned(),
            speedup,
            ci95: [lo, hi],
            runs: u32::try_from(r.pairs).unwrap_or(u32::MAX),
            status,
        });
    }
    (rows, skipped)
}

/// Step 3's ranking as report rows.
#[must_use]
pub fn strategy_rows(plan: &crate::strategies::Plan) -> Vec<Strategy> {
    plan.ranked
        .iter()
        .map(|r| Strategy {
            id: r.id.clone(),
            title: r.title.clone(),
            rank: u32::try_from(r.rank).unwrap_or(u32::MAX),
            bottleneck: Some(r.bottleneck),
            expected_gain: Some(format!(
                "≈ {:.2}× (at most {:.2}×; {})",
                r.expected_gain.expected, r.expected_gain.upper, r.expected_gain.source
            )),
            safety: r.safety,
            resolves: {
                let mut rules: Vec<String> = r.resolves.iter().map(|x| x.rule.clone()).collect();
                rules.sort();
                rules.dedup();
                rules
            },
            patch: r.candidates.first().map(|c| c.diff.clone()),
        })
        .collect()
}

fn resolve(root: &Path, path: &str) -> PathBuf {
    let joined = root.join(path);
    if joined.is_file() || !Path::new(path).is_file() {
        joined
    } else {
        PathBuf::from(path)
    }
}

fn read_excerpt(file: &Path, f: &Finding) -> Option<Excerpt> {
    let text = std::fs::read_to_string(file).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    if f.line == 0 || f.line > lines.len() {
        return None;
    }
    let first = f.line.saturating_sub(EXCERPT_CONTEXT).max(1);
    let last = (f.end_line.max(f.line) + EXCERPT_CONTEXT)
        .min(lines.len())
        .min(first + EXCERPT_MAX - 1);
    Some(Excerpt {
        first_line: first,
        lines: lines[first - 1..last]
            .iter()
            .map(|l| (*l).to_owned())
            .collect(),
    })
}

/// Applies byte-range edits bottom-up; `None` when an edit does not fit the text.
#[must_use]
pub fn apply_edits(text: &str, edits: &[crate::analysis::model::Edit]) -> Option<String> {
    let mut sorted: Vec<_> = edits.iter().collect();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut out = text.to_owned();
    let mut limit = text.len();
    for e in sorted {
        if e.start > e.end
            || e.end > limit
            || !out.is_char_boundary(e.start)
            || !out.is_char_boundary(e.end)
        {
            return None;
        }
        out.replace_range(e.start..e.end, &e.content);
        limit = e.start;
    }
    Some(out)
}

/// A unified diff (`git diff` style headers, 3 lines of context).
#[must_use]
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

fn patch_path(patch: &str) -> Option<String> {
    patch
        .lines()
        .find_map(|l| l.strip_prefix("+++ b/").or_else(|| l.strip_prefix("+++ ")))
        .map(|p| p.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::Edit;

    #[test]
    fn edits_apply_bottom_up() {
        let edits = [
            Edit {
                start: 0,
                end: 1,
                content: "A".into(),
            },
            Edit {
                start: 4,
                end: 4,
                content: "!".into(),
            },
        ];
        assert_eq!(apply_edits("abcd", &edits).as_deref(), Some("Abcd!"));
        let out_of_range = [Edit {
            start: 3,
            end: 9,
            content: String::new(),
        }];
        assert_eq!(apply_edits("abcd", &out_of_range), None);
    }

    #[test]
    fn diff_has_git_headers() {
        let d = unified_diff("t.py", "a\nb\n", "a\nc\n");
        assert!(d.starts_with("--- a/t.py\n+++ b/t.py\n@@"), "{d}");
        assert!(d.contains("-b\n+c\n"), "{d}");
    }

    #[test]
    fn missing_files_are_listed_not_invented() {
        let dir = tempfile::tempdir().unwrap();
        let out = read_outputs(dir.path());
        let steps: Vec<_> = out.missing.iter().map(|m| m.step.as_str()).collect();
        assert_eq!(steps, ["ceilings", "analysis", "strategies", "experiments"]);
        let r = assemble(out, dir.path(), 0.7, Context::default(), vec![]);
        assert!(r.verdict.is_none());
        assert!(r.summary.contains("not measured"));
    }
}
