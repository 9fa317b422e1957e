//! What users see: comment.md and final_report.html rendered from one fixed report, and
//! hostile text from the audited code rendered inert in HTML, Markdown and the log.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

mod common;

use efficiency_audit::report::model::MARKER;
use efficiency_audit::report::{comment, final_html};

#[test]
fn comment_snapshot_before_experiments() {
    insta::assert_snapshot!(comment::render(&common::fixture_report()));
}

#[test]
fn comment_snapshot_with_measured_speedups() {
    insta::assert_snapshot!(comment::render(&common::measured_report()));
}

#[test]
fn html_snapshot_before_experiments() {
    insta::assert_snapshot!(final_html::render(&common::fixture_report()));
}

#[test]
fn html_snapshot_with_measured_speedups() {
    insta::assert_snapshot!(final_html::render(&common::measured_report()));
}

#[test]
fn report_json_has_schema_1_shape() {
    let v = serde_json::to_value(common::fixture_report()).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["verdict"]["value"], "RED");
    assert_eq!(v["verdict"]["basis"], "estimated");
    assert_eq!(v["verdict"]["bottleneck"], "gpu");
    assert_eq!(v["verdict"]["threshold"], 0.7);
    assert_eq!(v["saturation"]["cpu"]["estimated"], 0.0625);
    assert!(v["saturation"]["gpu"]["measured"].is_null());
    assert_eq!(v["findings"].as_array().unwrap().len(), 4);
    assert_eq!(v["strategies"], serde_json::json!([]));
    assert_eq!(v["experiments"], serde_json::json!([]));
    assert!(v["summary"].as_str().unwrap().contains("not measured"));
    let steps: Vec<_> = v["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["step"].as_str().unwrap())
        .collect();
    assert!(
        steps.contains(&"strategies") && steps.contains(&"experiments"),
        "{steps:?}"
    );
    assert!(
        steps.contains(&"diff"),
        "the fix in a missing file is reported: {steps:?}"
    );
}

#[test]
fn summary_recommends_the_top_three_findings_and_says_nothing_was_measured() {
    let r = common::fixture_report();
    assert_eq!(r.recommendations.len(), 3);
    assert_eq!(
        r.recommendations[0].location.as_deref(),
        Some("src/train.py:8")
    );
    assert!(r.summary.starts_with("Verdict: RED"), "{}", r.summary);
    assert!(
        r.summary.contains("Top bottleneck: gpu at 7 %"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("Measured speed-ups: not measured"),
        "{}",
        r.summary
    );
}

#[test]
fn html_escapes_hostile_code_and_messages() {
    let html = final_html::render(&common::fixture_report());
    // The fixture's train.py and finding messages contain `</script>`, `<!--`, `::error::`,
    // backticks and an @-mention. None may reach the page as markup.
    assert!(!html.contains("</script>"), "raw </script> in the page");
    assert!(!html.contains("<script"), "raw <script> in the page");
    assert!(!html.contains("<!--"), "raw comment opener in the page");
    assert!(html.contains("&lt;/script&gt;"));
    assert!(html.contains("&lt;!-- --&gt;"));
    assert!(
        html.contains("`loss.item()`"),
        "backticks are plain text in HTML"
    );
    for external in [" src=", "<link", "url(http", "@import", "<script"] {
        assert!(!html.contains(external), "self-contained: found {external}");
    }
}

#[test]
fn markdown_escapes_hostile_messages() {
    let md = comment::render(&common::fixture_report());
    // Outside code fences, nothing audited can open HTML, mention, break a table or a command.
    let outside_fences: String = {
        let mut out = String::new();
        let mut fenced = false;
        for line in md.lines() {
            if line.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if !fenced {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    };
    assert!(!outside_fences.contains("</script>"), "{outside_fences}");
    assert!(!outside_fences.contains("::error::"), "{outside_fences}");
    assert!(!outside_fences.contains("@octocat"), "{outside_fences}");
    assert_eq!(
        outside_fences.matches("<!--").count(),
        1,
        "only the marker: {outside_fences}"
    );
    assert!(
        outside_fences.contains("\\`loss.item()\\`"),
        "{outside_fences}"
    );
    assert!(md.trim_end().ends_with(MARKER));
}

#[test]
fn comment_over_the_limit_drops_diffs_then_rows_and_keeps_the_marker() {
    let mut r = common::fixture_report();
    let big = r.findings[0].clone();
    for i in 0..40 {
        let mut f = big.clone();
        f.finding.line = i + 1;
        f.finding.message = "x".repeat(5_000);
        r.findings.push(f);
    }
    let diff = r.diffs[0].clone();
    for _ in 0..4 {
        let mut d = diff.clone();
        d.text = format!("{}{}", d.text, "+ padding line\n".repeat(2000));
        r.diffs.push(d);
    }
    let full = comment::render_limited(&r, usize::MAX);
    assert!(
        comment::length(&full) > comment::MAX_CHARS,
        "the case must exceed the limit"
    );
    let md = comment::render(&r);
    assert!(
        comment::length(&md) <= comment::MAX_CHARS,
        "{}",
        md.chars().count()
    );
    assert!(md.trim_end().ends_with(MARKER));
    assert!(md.contains("shortened to fit GitHub's 65 536-character limit"));
    assert!(
        md.starts_with("## 🔴 efficiency-audit"),
        "the verdict stays first"
    );
    assert!(!md.contains("<details><summary>EA101"), "diffs go first");
    assert!(md.contains("more in the full report"), "then rows");
}

#[test]
fn comment_cut_hard_when_even_the_summary_is_too_long() {
    let mut r = common::fixture_report();
    r.summary = "y".repeat(70_000);
    let md = comment::render(&r);
    assert!(comment::length(&md) <= comment::MAX_CHARS);
    assert!(md.trim_end().ends_with(MARKER));
}

#[test]
fn annotations_of_hostile_findings_stay_one_command_each() {
    let mut findings: Vec<_> = common::fixture_report()
        .findings
        .into_iter()
        .map(|f| f.finding)
        .collect();
    findings[0].message = "ok\n::error::injected\r\n::add-mask::x 100%".into();
    findings[0].path = "src/a,b:c.py".into();
    let text = efficiency_audit::report::annotations::render(&findings);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), findings.len(), "{text}");
    assert!(
        lines.iter().all(|l| l.starts_with("::warning ")
            || l.starts_with("::error ")
            || l.starts_with("::notice ")),
        "{text}"
    );
    assert!(
        !text.contains("\n::error::injected") && !text.contains("\n::add-mask::"),
        "{text}"
    );
    assert!(
        text.contains("file=src/a%2Cb%3Ac.py"),
        "properties escaped: {text}"
    );
    assert!(text.contains("100%25"), "data escaped: {text}");
}

/// A real audit of examples/torch-train on the 2-CPU development machine (no GPU, step 4's
/// budget too small for a comparison), recorded in tests/fixtures/report-recorded/.
#[test]
fn a_recorded_step_4_outcome_drives_the_measured_verdict() {
    use efficiency_audit::report::assemble::{assemble, read_outputs};
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report-recorded");
    let r = assemble(read_outputs(&dir), &dir, 0.7, Default::default(), vec![]);
    let v = r.verdict.as_ref().unwrap();
    assert_eq!(v.basis, efficiency_audit::verdict::Basis::Measured);
    assert!(r.saturation.cpu.measured.is_some() && r.saturation.cpu.estimated.is_some());
    assert!(r.experiments.is_empty(), "both variants were skipped");
    let skipped: Vec<_> = r
        .missing
        .iter()
        .filter(|m| m.step.starts_with("experiment "))
        .collect();
    assert_eq!(skipped.len(), 2, "{:?}", r.missing);
    assert!(
        skipped[0].reason.starts_with("SKIPPED: budget exhausted"),
        "{:?}",
        skipped[0]
    );
    assert!(!r.strategies.is_empty() && r.strategies[0].patch.is_some());
    assert!(
        r.summary.contains("measured while the benchmark ran"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("step 4 ran but compared no strategy"),
        "{}",
        r.summary
    );
    assert!(!r.diffs.is_empty(), "strategy patches become the diffs");
}

#[test]
fn html_says_step_4_skipped_every_variant() {
    use efficiency_audit::report::assemble::{assemble, read_outputs};
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report-recorded");
    let r = assemble(read_outputs(&dir), &dir, 0.7, Default::default(), vec![]);
    let html = final_html::render(&r);
    assert!(
        html.contains("step 4 skipped all 2 variant(s)"),
        "before/after note"
    );
    let first = &r.strategies[0].resolves;
    let mut unique = first.clone();
    unique.dedup();
    assert_eq!(first, &unique, "rule ids listed once");
}
