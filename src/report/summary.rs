//! The seed's one-paragraph summary (seed SKILL.md, "When the agent is finished"): verdict, top
//! bottleneck, recommended top-3 changes, measured speed-ups — and how the top three are chosen.
//!
//! Pure functions of the report's parts; the renderers escape the text they embed.

use crate::analysis::model::Resource;
use crate::report::model::{
    Experiment, ExperimentStatus, Recommendation, ReportFinding, SaturationTable, Strategy,
};
use crate::verdict::Verdict;

/// How many changes the summary recommends.
pub const TOP: usize = 3;

/// The top changes: ranked strategies when step 3 produced any, else the findings with the
/// highest severity (those with a fix first, one per category so the three differ), best first.
#[must_use]
pub fn recommendations(strategies: &[Strategy], findings: &[ReportFinding]) -> Vec<Recommendation> {
    if !strategies.is_empty() {
        let mut ranked: Vec<&Strategy> = strategies.iter().collect();
        ranked.sort_by_key(|s| s.rank);
        return ranked
            .into_iter()
            .take(TOP)
            .map(|s| Recommendation {
                title: s.title.clone(),
                location: None,
                source: "strategy".to_owned(),
            })
            .collect();
    }
    let mut ordered: Vec<&ReportFinding> = findings.iter().collect();
    ordered.sort_by(|a, b| {
        let (a, b) = (&a.finding, &b.finding);
        b.severity
            .cmp(&a.severity)
            .then(b.fix.is_some().cmp(&a.fix.is_some()))
            .then(a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for f in ordered {
        let f = &f.finding;
        if seen.contains(&f.category) {
            continue;
        }
        seen.push(f.category);
        out.push(Recommendation {
            title: f.message.clone(),
            location: Some(format!("{}:{}", f.path, f.line)),
            source: "finding".to_owned(),
        });
        if out.len() == TOP {
            break;
        }
    }
    out
}

/// The summary paragraph, plain text (the renderers escape it).
#[must_use]
pub fn paragraph(
    verdict: Option<&Verdict>,
    saturation: &SaturationTable,
    recommendations: &[Recommendation],
    experiments: &[Experiment],
    experiments_ran: bool,
) -> String {
    let mut parts = Vec::new();
    match verdict {
        Some(v) => {
            let basis = match v.basis {
                crate::verdict::Basis::Estimated => "estimated from the source",
                crate::verdict::Basis::Measured => "measured while the benchmark ran",
            };
            parts.push(format!("Verdict: {} ({basis}).", v.headline()));
            parts.push(top_bottleneck(v, saturation));
        }
        None => parts.push(
            "Verdict: not decided — the static analysis (step 2) produced no result.".to_owned(),
        ),
    }
    if recommendations.is_empty() {
        parts.push("Recommended changes: none — no finding points at a change.".to_owned());
    } else {
        let list: Vec<String> = recommendations
            .iter()
            .enumerate()
            .map(|(i, r)| match &r.location {
                Some(loc) => format!("({}) {} [{loc}]", i + 1, trim_sentence(&r.title)),
                None => format!("({}) {}", i + 1, trim_sentence(&r.title)),
            })
            .collect();
        let from = if recommendations[0].source == "strategy" {
            "ranked strategies"
        } else {
            "highest-severity findings"
        };
        parts.push(format!(
            "Recommended changes ({from}): {}.",
            list.join("; ")
        ));
    }
    parts.push(speedups(experiments, experiments_ran));
    parts.join(" ")
}

fn top_bottleneck(v: &Verdict, saturation: &SaturationTable) -> String {
    match (v.bottleneck, v.bottleneck_saturation) {
        (Some(r), Some(s)) => {
            let reason = reason_of(saturation, r, v.basis);
            if reason.is_empty() {
                format!("Top bottleneck: {} at {:.0} %.", r.as_str(), s * 100.0)
            } else {
                format!(
                    "Top bottleneck: {} at {:.0} % ({}).",
                    r.as_str(),
                    s * 100.0,
                    trim_sentence(reason)
                )
            }
        }
        _ => "Top bottleneck: unknown — no resource's saturation could be estimated.".to_owned(),
    }
}

fn reason_of(saturation: &SaturationTable, r: Resource, basis: crate::verdict::Basis) -> &str {
    let pair = match r {
        Resource::Gpu => &saturation.gpu,
        Resource::Cpu => &saturation.cpu,
        Resource::Io => &saturation.io,
    };
    match basis {
        crate::verdict::Basis::Measured => &pair.measured_reason,
        crate::verdict::Basis::Estimated => &pair.reason,
    }
}

fn speedups(experiments: &[Experiment], experiments_ran: bool) -> String {
    if experiments.is_empty() {
        return if experiments_ran {
            "Measured speed-ups: none measured — step 4 ran but compared no strategy (see what is not in this report)."
                .to_owned()
        } else {
            "Measured speed-ups: not measured — experiments (step 4) did not run.".to_owned()
        };
    }
    let counted: Vec<String> = experiments
        .iter()
        .filter(|e| {
            matches!(
                e.status,
                ExperimentStatus::Faster | ExperimentStatus::Unverified
            )
        })
        .map(|e| {
            format!(
                "{} {:.2}× (95 % CI {:.2}–{:.2}){}",
                e.strategy,
                e.speedup,
                e.ci95[0],
                e.ci95[1],
                if e.status == ExperimentStatus::Unverified {
                    ", correctness unverified"
                } else {
                    ""
                }
            )
        })
        .collect();
    if counted.is_empty() {
        format!(
            "Measured speed-ups: none — {} experiment(s) ran and none was faster beyond noise.",
            experiments.len()
        )
    } else {
        format!("Measured speed-ups: {}.", counted.join("; "))
    }
}

fn trim_sentence(text: &str) -> &str {
    text.trim().trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{Category, Finding, Severity};

    fn finding(category: Category, severity: Severity, line: usize) -> ReportFinding {
        ReportFinding {
            finding: Finding {
                rule: format!("R{line}"),
                category,
                path: "train.py".to_owned(),
                line,
                end_line: line,
                column: 1,
                severity,
                resource: Resource::Cpu,
                message: format!("message {line}."),
                fix: None,
            },
            excerpt: None,
        }
    }

    #[test]
    fn top_three_by_severity_one_per_category() {
        let findings = vec![
            finding(Category::LoggingInLoop, Severity::Low, 1),
            finding(Category::HostSync, Severity::High, 9),
            finding(Category::HostSync, Severity::High, 3),
            finding(Category::NoAmp, Severity::Medium, 5),
            finding(Category::DataloaderWorkers, Severity::High, 7),
        ];
        let recs = recommendations(&[], &findings);
        let locs: Vec<_> = recs.iter().filter_map(|r| r.location.clone()).collect();
        assert_eq!(locs, ["train.py:3", "train.py:7", "train.py:5"]);
    }

    #[test]
    fn says_not_measured_without_experiments() {
        let p = paragraph(None, &SaturationTable::default(), &[], &[], false);
        assert!(p.contains("not measured"), "{p}");
        assert!(p.contains("not decided"), "{p}");
    }
}
