//! GitHub workflow-command annotations (`::warning file=...,line=...::message`) on stdout.
//!
//! Format and escaping follow `actions/toolkit:packages/core/src/command.ts` (reference
//! ci_bots.md §4 "File commands and workflow commands"). GitHub shows at most 10 annotations
//! per level per step and 50 per job and silently drops the rest (ci_bots.md §3 "Annotation
//! limits", community discussions #26680 and #68471), so the most severe findings go first and
//! a plain line says how many were left out.

use std::fmt::Write as _;

use crate::analysis::model::{Finding, Severity};
use crate::report::escape::{workflow_data, workflow_property};

/// Annotations GitHub shows per level (error, warning, notice) per step.
pub const PER_LEVEL_LIMIT: usize = 10;

/// The workflow command of a severity: high → `error`, medium → `warning`, low → `notice`.
#[must_use]
pub fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "notice",
    }
}

/// Renders the annotations of `findings`: at most [`PER_LEVEL_LIMIT`] per level, most severe
/// first (then by path and line), followed by a plain line counting those left out.
#[must_use]
pub fn render(findings: &[Finding]) -> String {
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.column.cmp(&b.column))
            .then_with(|| a.rule.cmp(&b.rule))
    });
    let mut out = String::new();
    let mut shown = [0usize; 3];
    let mut left_out = 0usize;
    for finding in sorted {
        let slot = match finding.severity {
            Severity::High => 0,
            Severity::Medium => 1,
            Severity::Low => 2,
        };
        if shown[slot] >= PER_LEVEL_LIMIT {
            left_out += 1;
            continue;
        }
        shown[slot] += 1;
        let title = format!(
            "efficiency-audit {}: {}",
            finding.rule,
            finding.category.as_str()
        );
        let _ = writeln!(
            out,
            "::{} file={},line={},endLine={},col={},title={}::{}",
            command(finding.severity),
            workflow_property(&finding.path.replace('\\', "/")),
            finding.line.max(1),
            finding.end_line.max(finding.line).max(1),
            finding.column.max(1),
            workflow_property(&title),
            workflow_data(&finding.message),
        );
    }
    if left_out > 0 {
        let _ = writeln!(
            out,
            "efficiency-audit: {left_out} more finding(s) not annotated (GitHub shows at most \
             {PER_LEVEL_LIMIT} per level per step); all are in analysis.sarif and analysis.html"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{Category, Resource};
    use crate::report::analysis_json::tests::sample;

    fn finding(severity: Severity, line: usize) -> Finding {
        Finding {
            rule: "EA010".into(),
            category: Category::HostSync,
            path: "a.py".into(),
            line,
            end_line: line,
            column: 1,
            severity,
            resource: Resource::Gpu,
            message: "m".into(),
            fix: None,
        }
    }

    #[test]
    fn escapes_message_and_properties() {
        let mut f = finding(Severity::Medium, 3);
        f.path = "dir,x/a:b%.py".into();
        f.message = "100% idle\r\nnext: a,b".into();
        let out = render(&[f]);
        assert_eq!(
            out,
            "::warning file=dir%2Cx/a%3Ab%25.py,line=3,endLine=3,col=1,\
             title=efficiency-audit EA010%3A host_sync::100%25 idle%0D%0Anext: a,b\n"
        );
        assert_eq!(out.lines().count(), 1);
    }

    #[test]
    fn at_most_ten_per_level_most_severe_first() {
        let mut findings = Vec::new();
        for line in 1..=12 {
            findings.push(finding(Severity::Low, line));
            findings.push(finding(Severity::Medium, line));
            findings.push(finding(Severity::High, line));
        }
        let out = render(&findings);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 31);
        assert!(lines[..10].iter().all(|l| l.starts_with("::error ")));
        assert!(lines[10..20].iter().all(|l| l.starts_with("::warning ")));
        assert!(lines[20..30].iter().all(|l| l.starts_with("::notice ")));
        assert!(lines[0].contains("line=1,"), "{}", lines[0]);
        assert!(lines[30].starts_with("efficiency-audit: 6 more finding(s) not annotated"));
    }

    #[test]
    fn nothing_left_out_no_summary_line() {
        assert_eq!(render(&[]), "");
        assert!(!render(&[finding(Severity::High, 1)]).contains("more finding"));
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!(render(&sample().findings));
    }
}
