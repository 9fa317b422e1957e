//! `comment.md`: the sticky pull-request comment (and, with the marker, the job summary).
//!
//! Verdict first, then the summary paragraph, the strategies with measured speed-ups and their
//! 95 % intervals (or the note that they were not measured), a Mermaid chart (GitHub renders
//! Mermaid in comments; it does not render data-URI images), the findings, the top diffs in
//! `<details>`, the artifact link, and the hidden [`MARKER`] rendered last so the publisher can
//! find the comment again. Everything that comes from the audited code is escaped by
//! [`md_text`] or fenced by [`fence`].

use std::fmt::Write as _;

use crate::analysis::model::Applicability;
use crate::report::model::{MARKER, Report};
use crate::verdict::VerdictValue;

/// GitHub rejects issue-comment bodies longer than 65 536 characters ("Body is too long
/// (maximum is 65536 characters)", HTTP 422); bencher caps at `1 << 16` for the same reason
/// (bencherdev/bencher issues #534 and #644). Lengths are counted in UTF-16 code units, which
/// is never less than the character count, so an emoji-heavy body still fits.
pub const MAX_CHARS: usize = 65_536;

/// Diffs shown in `<details>` blocks before truncation.
const TOP_DIFFS: usize = 5;
/// Finding rows shown before truncation.
const TOP_FINDINGS: usize = 20;

const TRUNCATED_NOTE: &str = "_This comment was shortened to fit GitHub's 65 536-character limit; \
the full report (final_report.html, report.json) is in the workflow artifact._";

/// What to include; shrunk step by step until the body fits.
#[derive(Debug, Clone, Copy)]
struct Layout {
    diffs: usize,
    findings: usize,
    strategies: usize,
    truncated: bool,
}

/// Renders `comment.md`, at most [`MAX_CHARS`] characters, the marker always last.
#[must_use]
pub fn render(report: &Report) -> String {
    render_limited(report, MAX_CHARS)
}

/// Renders within `max_chars` characters: drops diffs first, then table rows, keeping the
/// verdict, the summary, a note and the marker; as a last resort cuts the text itself.
#[must_use]
pub fn render_limited(report: &Report, max_chars: usize) -> String {
    let mut layout = Layout {
        diffs: report.diffs.len().min(TOP_DIFFS),
        findings: report.findings.len().min(TOP_FINDINGS),
        strategies: report.experiments.len(),
        truncated: false,
    };
    loop {
        let body = render_with(report, layout);
        if length(&body) <= max_chars {
            return body;
        }
        layout.truncated = true;
        if layout.diffs > 0 {
            layout.diffs -= 1;
        } else if layout.findings > 0 {
            layout.findings -= 1;
        } else if layout.strategies > 0 {
            layout.strategies -= 1;
        } else {
            return hard_cut(&body, max_chars);
        }
    }
}

/// The length GitHub's limit is checked against (see [`MAX_CHARS`]).
#[must_use]
pub fn length(text: &str) -> usize {
    text.encode_utf16().count()
}

/// Keeps the head of `body` and the note and marker, within `max_chars`.
fn hard_cut(body: &str, max_chars: usize) -> String {
    let tail = format!("\n\n{TRUNCATED_NOTE}\n\n{MARKER}\n");
    let keep = max_chars.saturating_sub(length(&tail));
    let mut used = 0;
    let head: String = body
        .chars()
        .take_while(|c| {
            used += c.len_utf16();
            used <= keep
        })
        .collect();
    // Cut at a line end so no HTML tag or table row is left half open.
    let head = match head.rfind('\n') {
        Some(i) => &head[..i],
        None => head.as_str(),
    };
    format!("{head}{tail}")
}

fn render_with(report: &Report, layout: Layout) -> String {
    let mut out = String::new();
    // `write!` into a String cannot fail; the results are ignored on purpose.
    let _ = write_body(&mut out, report, layout);
    out
}

fn write_body(out: &mut String, r: &Report, layout: Layout) -> std::fmt::Result {
    match &r.verdict {
        Some(v) => {
            let icon = match v.value {
                VerdictValue::Red => "🔴",
                VerdictValue::Green => "🟢",
            };
            writeln!(
                out,
                "## {icon} efficiency-audit — {}",
                md_text(&v.headline())
            )?;
            let basis = match v.basis {
                crate::verdict::Basis::Estimated => "estimated from the source (no benchmark)",
                crate::verdict::Basis::Measured => "measured while the benchmark ran",
            };
            writeln!(out, "\n<sub>Basis: {basis}.{}</sub>", context_line(r))?;
        }
        None => {
            writeln!(out, "## ⚪ efficiency-audit — no verdict")?;
            writeln!(
                out,
                "\n<sub>The static analysis (step 2) produced no result.{}</sub>",
                context_line(r)
            )?;
        }
    }
    writeln!(out, "\n{}", md_text(&r.summary))?;

    writeln!(out, "\n### Strategies")?;
    if r.experiments.is_empty() {
        let why = r
            .missing
            .iter()
            .filter(|m| m.step == "strategies" || m.step == "experiments")
            .map(|m| format!("- {}: {}", md_text(&m.step), md_text(&m.reason)))
            .collect::<Vec<_>>();
        writeln!(out, "\nSpeed-ups were not measured.")?;
        if !why.is_empty() {
            writeln!(out, "\n{}", why.join("\n"))?;
        }
    } else {
        writeln!(
            out,
            "\n| # | Strategy | Speed-up | 95 % interval | Status |"
        )?;
        writeln!(out, "|---:|---|---:|---|---|")?;
        for (i, e) in r.experiments.iter().take(layout.strategies).enumerate() {
            let name = match &e.variant {
                Some(v) => format!("{} ({})", e.strategy, v),
                None => e.strategy.clone(),
            };
            writeln!(
                out,
                "| {} | {} | {:.2}× | {:.2}–{:.2} | {} |",
                i + 1,
                md_text(&name),
                e.speedup,
                e.ci95[0],
                e.ci95[1],
                e.status.label()
            )?;
        }
        if layout.strategies < r.experiments.len() {
            writeln!(
                out,
                "\n_{} more in the full report._",
                r.experiments.len() - layout.strategies
            )?;
        }
        write_mermaid(out, r, layout.strategies)?;
    }

    if !r.findings.is_empty() {
        writeln!(out, "\n### Findings ({})", r.findings.len())?;
        if layout.findings > 0 {
            writeln!(out, "\n| Severity | Rule | Where | What |")?;
            writeln!(out, "|---|---|---|---|")?;
            for f in r.findings.iter().take(layout.findings) {
                let f = &f.finding;
                writeln!(
                    out,
                    "| {:?} | {} | {}:{} | {} |",
                    f.severity,
                    md_text(&f.rule),
                    md_text(&f.path),
                    f.line,
                    md_text(&f.message)
                )?;
            }
        }
        if layout.findings < r.findings.len() {
            writeln!(
                out,
                "\n_{} more in the full report._",
                r.findings.len() - layout.findings
            )?;
        }
    }

    if layout.diffs > 0 {
        writeln!(out, "\n### Suggested changes")?;
        for d in r.diffs.iter().take(layout.diffs) {
            writeln!(
                out,
                "\n<details><summary>{} — {} ({})</summary>\n",
                md_text(&d.origin),
                md_text(&d.path),
                applicability_label(d.applicability)
            )?;
            let f = fence(&d.text);
            writeln!(
                out,
                "{f}diff\n{}\n{f}\n\n</details>",
                d.text.trim_end_matches('\n')
            )?;
        }
    }

    let not_here: Vec<_> = r
        .missing
        .iter()
        .filter(|m| m.step != "strategies" && m.step != "experiments")
        .collect();
    if !not_here.is_empty() {
        writeln!(
            out,
            "\n<details><summary>Not in this report ({})</summary>\n",
            not_here.len()
        )?;
        for m in not_here {
            writeln!(out, "- **{}**: {}", md_text(&m.step), md_text(&m.reason))?;
        }
        writeln!(out, "\n</details>")?;
    }

    match (&r.artifact_url, &r.context.run_url) {
        (Some(url), _) => writeln!(
            out,
            "\n📦 Full report (`final_report.html`, `report.json`): [workflow artifact]({url})"
        )?,
        (None, Some(run)) => writeln!(
            out,
            "\n📦 Full report: artifact `efficiency-audit-report` of [this workflow run]({run})"
        )?,
        (None, None) => writeln!(
            out,
            "\n📦 Full report: `final_report.html` next to this file"
        )?,
    }
    if layout.truncated {
        writeln!(out, "\n{TRUNCATED_NOTE}")?;
    }
    writeln!(out, "\n{MARKER}")
}

fn context_line(r: &Report) -> String {
    let mut parts = Vec::new();
    if let Some(c) = &r.context.commit {
        parts.push(format!(
            "commit `{}`",
            c.chars().take(12).collect::<String>()
        ));
    }
    parts.push(format!("efficiency-audit {}", r.tool_version));
    format!(" {}", md_text(&parts.join(" · ")).replace("\\`", "`"))
}

fn write_mermaid(out: &mut String, r: &Report, n: usize) -> std::fmt::Result {
    let shown: Vec<_> = r.experiments.iter().take(n).collect();
    if shown.is_empty() {
        return Ok(());
    }
    let labels: Vec<String> = shown
        .iter()
        .map(|e| format!("\"{}\"", mermaid_label(&e.strategy)))
        .collect();
    let values: Vec<String> = shown.iter().map(|e| format!("{:.2}", e.speedup)).collect();
    let top = shown
        .iter()
        .map(|e| e.ci95[1].max(e.speedup))
        .fold(1.0_f64, f64::max);
    writeln!(out, "\n```mermaid\nxychart-beta")?;
    writeln!(out, "    title \"Measured speed-up (1.0 = PR head as is)\"")?;
    writeln!(out, "    x-axis [{}]", labels.join(", "))?;
    writeln!(
        out,
        "    y-axis \"speed-up (×)\" 0 --> {:.1}",
        (top * 1.1).ceil()
    )?;
    writeln!(out, "    bar [{}]", values.join(", "))?;
    writeln!(out, "```")
}

/// Mermaid labels are double-quoted strings without escapes: keep a safe character set.
fn mermaid_label(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ' | '=' | '(' | ')'))
        .take(40)
        .collect()
}

fn applicability_label(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "safe",
        Applicability::Numerics => "changes numerics",
        Applicability::Manual => "manual",
    }
}

/// Escapes audited text for inline Markdown: no code spans, emphasis, links, table breaks,
/// raw HTML, @-mentions, or workflow commands (`::error::`) survive; newlines become spaces.
#[must_use]
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = '\0';
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // A zero-width space after `@` stops GitHub from notifying whoever is named.
            '@' => out.push_str("@&#8203;"),
            // `::` starts a workflow command when a line is echoed to a runner's log.
            ':' if prev == ':' => out.push_str("&#58;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\r' | '\n' | '\t' => out.push(' '),
            _ => out.push(c),
        }
        prev = c;
    }
    out
}

/// A backtick fence longer than any backtick run inside `code`, so the code cannot close it.
#[must_use]
pub fn fence(code: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_text_neutralises_hostile_text() {
        let s = md_text("`x` | <script> @octocat ::error::boom *b* [l](u)\nnext");
        assert!(!s.contains("<script>"), "{s}");
        assert!(!s.contains("::"), "{s}");
        assert!(!s.contains("@octocat"), "{s}");
        assert!(!s.contains('\n'), "{s}");
        assert!(s.contains("\\`x\\`"), "{s}");
        assert!(s.contains("\\|"), "{s}");
    }

    #[test]
    fn fence_outgrows_backticks() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
