//! `strategies.md` and `docs/strategies.md`: pure renderers of a [`Plan`] and of the catalog.

use std::fmt::Write as _;

use super::{Plan, STRATEGIES};
use crate::analysis::model::Applicability;

fn safety(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "safe",
        Applicability::Numerics => "numerics",
        Applicability::Manual => "manual",
    }
}

/// Escapes a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Renders `strategies.md`: the ranked table, then each strategy's reasons, variants and diffs.
#[must_use]
pub fn markdown(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Strategies\n");
    let gpu = match &plan.machine.gpu {
        super::GpuState::Unknown => "GPU unknown (no ceilings given)".to_owned(),
        super::GpuState::Absent => "no GPU".to_owned(),
        super::GpuState::Present {
            name, capability, ..
        } => match capability {
            Some((a, b)) => format!("{name} (compute capability {a}.{b})"),
            None => name.clone(),
        },
    };
    let _ = writeln!(
        out,
        "Machine: {}; {}. Ranked by (expected speed-up − 1) × safety × applicability.\n",
        plan.machine.cores_source, gpu
    );
    if plan.ranked.is_empty() {
        let _ = writeln!(out, "No strategy applies to this code.\n");
    } else {
        let _ = writeln!(
            out,
            "| Rank | Strategy | Title | Kind | Targets | Expected gain | Safety | Applicability | Score |"
        );
        let _ = writeln!(out, "|---:|---|---|---|---|---|---|---:|---:|");
        for r in &plan.ranked {
            let targets: Vec<&str> = r.targets.iter().map(|c| c.as_str()).collect();
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {:.2}x (≤ {:.2}x) | {}{} | {:.2} | {:.3} |",
                r.rank,
                r.id,
                cell(&r.title),
                r.kind.as_str(),
                targets.join(", "),
                r.expected_gain.expected,
                r.expected_gain.upper,
                safety(r.safety),
                if r.held_back.is_some() {
                    " (held back)"
                } else {
                    ""
                },
                r.applicability,
                r.score
            );
        }
        out.push('\n');
    }
    for r in &plan.ranked {
        let _ = writeln!(out, "## {}. `{}` — {}\n", r.rank, r.id, r.title);
        let _ = writeln!(
            out,
            "- **Bottleneck:** {}; **kind:** {}; **safety:** {} (weight {:.1}); **applicability:** {:.2}; **score:** {:.3}",
            r.bottleneck.as_str(),
            r.kind.as_str(),
            safety(r.safety),
            r.safety_weight,
            r.applicability,
            r.score
        );
        let _ = writeln!(
            out,
            "- **Expected gain:** {:.2}x (up to {:.2}x); source: {}",
            r.expected_gain.expected, r.expected_gain.upper, r.expected_gain.source
        );
        if let Some(bound) = &r.expected_gain.bound {
            let _ = writeln!(out, "- **Bounded by:** {bound}");
        }
        if let Some(h) = &r.held_back {
            let _ = writeln!(out, "- **Not benchmarked:** {h}");
        }
        if !r.resolves.is_empty() {
            let list: Vec<String> = r
                .resolves
                .iter()
                .map(|f| {
                    format!(
                        "`{}` ({}) at {}:{}",
                        f.rule,
                        f.category.as_str(),
                        f.path,
                        f.line
                    )
                })
                .collect();
            let _ = writeln!(out, "- **Resolves:** {}", list.join(", "));
        }
        let _ = writeln!(out, "\nReasons:\n");
        for reason in &r.reasons {
            let _ = writeln!(out, "- {reason}");
        }
        out.push('\n');
        for c in &r.candidates {
            let name = c.variant.as_deref().unwrap_or("patch");
            let files: Vec<&str> = c.patch.iter().map(|p| p.path.as_str()).collect();
            let _ = writeln!(out, "### Variant `{name}` ({})\n", files.join(", "));
            let _ = writeln!(out, "```diff\n{}```\n", c.diff);
        }
    }
    if !plan.skipped.is_empty() {
        let _ = writeln!(out, "## Not applicable\n");
        let _ = writeln!(out, "| Strategy | Kind | Why not |");
        let _ = writeln!(out, "|---|---|---|");
        for s in &plan.skipped {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                s.id,
                s.kind.as_str(),
                cell(&s.reason)
            );
        }
        out.push('\n');
    }
    out
}

/// Renders the catalog of every strategy from its documentation (`docs/strategies.md`).
#[must_use]
pub fn catalog_markdown() -> String {
    let mut out = String::from(
        "# Strategy catalog\n\n<!-- Generated by `efficiency-audit strategies --catalog` from the doc comments in src/strategies/; do not edit. -->\n\n",
    );
    let _ = writeln!(out, "| Id | Title | Kind | Targets | Bottleneck |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for s in STRATEGIES {
        let m = s.meta();
        let targets: Vec<&str> = m.targets.iter().map(|c| c.as_str()).collect();
        let _ = writeln!(
            out,
            "| [`{}`](#{}) | {} | {} | {} | {} |",
            m.id,
            m.id,
            cell(m.title),
            m.kind.as_str(),
            targets.join(", "),
            m.resource.as_str()
        );
    }
    out.push('\n');
    for s in STRATEGIES {
        let m = s.meta();
        let _ = writeln!(out, "## {}\n", m.id);
        let _ = writeln!(out, "**{}** ({})\n", m.title, m.kind.as_str());
        for line in m.doc.lines() {
            let line = line.strip_prefix(' ').unwrap_or(line);
            // Sections one level below the strategy heading.
            if let Some(h) = line.strip_prefix("## ") {
                let _ = writeln!(out, "### {h}");
            } else {
                let _ = writeln!(out, "{line}");
            }
        }
        out.push('\n');
    }
    out
}
