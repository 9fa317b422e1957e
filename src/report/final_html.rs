//! `final_report.html`: the step 5 deliverable, self-contained (inline CSS and SVG, no script,
//! no network), readable on a phone and a desktop, opened straight from the artifact zip.
//!
//! A pure function of [`Report`]. Every string that can come from the audited code or its
//! environment goes through [`esc`].

use std::fmt::Write as _;

use crate::analysis::model::{Applicability, Resource, Severity};
use crate::ceilings::model::{Ceilings, GpuFigure, Spread, TableValue};
use crate::report::model::{Experiment, Report, SaturationPair};
use crate::verdict::{Basis, VerdictValue};

/// Escapes text for HTML element content and double- or single-quoted attributes.
#[must_use]
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const CSS: &str = r#"
:root{--fg:#1f2328;--muted:#59636e;--bg:#fff;--card:#f6f8fa;--line:#d1d9e0;--red:#cf222e;--green:#1a7f37;--amber:#9a6700;--blue:#0969da;--add:#dafbe1;--del:#ffebe9;--hunk:#ddf4ff}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--card:#151b23;--line:#3d444d;--add:#12361f;--del:#3c1618;--hunk:#0c2d6b}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:64rem;margin:0 auto;padding:1rem}
h1{font-size:1.3rem;margin:0}
h2{font-size:1.1rem;margin:2rem 0 .5rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5rem .75rem;overflow-x:auto;margin:.5rem 0}
.banner{display:flex;gap:1rem;align-items:center;padding:1rem;border-radius:8px;color:#fff}
.banner.red{background:var(--red)}.banner.green{background:var(--green)}.banner.none{background:var(--muted)}
.banner .v{font-size:1.8rem;font-weight:700;letter-spacing:.05em}
.banner p{margin:.25rem 0 0;opacity:.9;font-size:.9rem}
.muted{color:var(--muted)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{border-bottom:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.finding{border:1px solid var(--line);border-left-width:4px;border-radius:6px;padding:.5rem .75rem;margin:.75rem 0}
.finding.high{border-left-color:var(--red)}.finding.medium{border-left-color:var(--amber)}.finding.low{border-left-color:var(--blue)}
.finding header{display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}
.tag{font-size:.75rem;padding:0 .4rem;border-radius:1rem;border:1px solid var(--line)}
.finding p{margin:.35rem 0}
.ln{color:var(--muted);user-select:none;display:inline-block;min-width:2.5em;text-align:right;margin-right:1em}
.hl{background:var(--del);display:block}
.diff .add{background:var(--add);display:block}.diff .del{background:var(--del);display:block}.diff .hunk{background:var(--hunk);display:block;color:var(--muted)}
details{margin:.5rem 0}summary{cursor:pointer}
svg{width:100%;height:auto;display:block}svg.gauges{max-width:42rem}svg.chart{max-width:52rem}
svg text{fill:var(--fg);font:12px system-ui,sans-serif}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
ul.missing li{margin:.2rem 0}
footer{margin:2rem 0 1rem;color:var(--muted);font-size:.8rem}
@media (max-width:40rem){main{padding:.5rem}.banner{flex-direction:column;align-items:flex-start}dl{grid-template-columns:1fr}dt{margin-top:.4rem}}
"#;

/// Renders the whole page.
#[must_use]
pub fn render(report: &Report) -> String {
    let mut out = String::with_capacity(16 * 1024);
    // `write!` into a String cannot fail.
    let _ = write_page(&mut out, report);
    out
}

fn write_page(o: &mut String, r: &Report) -> std::fmt::Result {
    let (class, word, headline) = match &r.verdict {
        Some(v) if v.value == VerdictValue::Red => ("red", "RED", v.headline()),
        Some(v) => ("green", "GREEN", v.headline()),
        None => (
            "none",
            "NO VERDICT",
            "The static analysis (step 2) produced no result.".to_owned(),
        ),
    };
    writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
    )?;
    writeln!(
        o,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    )?;
    writeln!(
        o,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    )?;
    writeln!(
        o,
        "<title>efficiency-audit — {word}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>"
    )?;

    let basis = match r.verdict.as_ref().map(|v| v.basis) {
        Some(Basis::Estimated) => "Estimated from the source (no benchmark yet).",
        Some(Basis::Measured) => "Measured while the benchmark ran.",
        None => "",
    };
    let mut ctx = Vec::new();
    if let Some(repo) = &r.context.repository {
        ctx.push(esc(repo));
    }
    if let Some(pr) = r.context.pull_request {
        ctx.push(format!("PR #{pr}"));
    }
    if let Some(c) = &r.context.commit {
        ctx.push(format!(
            "<code>{}</code>",
            esc(&c.chars().take(12).collect::<String>())
        ));
    }
    writeln!(
        o,
        "<header class=\"banner {class}\"><div class=\"v\">{word}</div><div><h1>{}</h1><p>{basis} {}</p></div></header>",
        esc(&headline),
        ctx.join(" · ")
    )?;

    writeln!(o, "<h2>Summary</h2>\n<p>{}</p>", esc(&r.summary))?;
    if !r.recommendations.is_empty() {
        writeln!(o, "<ol>")?;
        for rec in &r.recommendations {
            match &rec.location {
                Some(loc) => writeln!(
                    o,
                    "<li>{} <span class=\"muted\"><code>{}</code></span></li>",
                    esc(&rec.title),
                    esc(loc)
                )?,
                None => writeln!(o, "<li>{}</li>", esc(&rec.title))?,
            }
        }
        writeln!(o, "</ol>")?;
    }

    writeln!(o, "<h2>Saturation: estimated vs measured</h2>")?;
    write_gauges(o, r)?;

    writeln!(o, "<h2>Ceilings of this machine</h2>")?;
    match &r.ceilings {
        Some(c) => write_ceilings(o, c)?,
        None => writeln!(
            o,
            "<p class=\"muted\">Not measured: step 1 (ceilings) did not run.</p>"
        )?,
    }

    writeln!(o, "<h2>Findings ({})</h2>", r.findings.len())?;
    if r.findings.is_empty() {
        let why = if r.is_missing("analysis") {
            "Not analysed: step 2 did not run."
        } else {
            "None: the analysed code does nothing the rules flag."
        };
        writeln!(o, "<p class=\"muted\">{why}</p>")?;
    }
    for rf in &r.findings {
        let f = &rf.finding;
        let sev = severity_word(f.severity);
        writeln!(
            o,
            "<article class=\"finding {sev}\"><header><span class=\"tag\">{sev}</span><code>{}</code><span class=\"muted\">{} · wastes {}</span></header>",
            esc(&f.rule),
            f.category.as_str(),
            f.resource.as_str()
        )?;
        writeln!(
            o,
            "<p>{}</p><p class=\"muted\"><code>{}:{}</code></p>",
            esc(&f.message),
            esc(&f.path),
            f.line
        )?;
        if let Some(ex) = &rf.excerpt {
            write!(o, "<pre class=\"code\"><code>")?;
            for (i, line) in ex.lines.iter().enumerate() {
                let n = ex.first_line + i;
                let hl = n >= f.line && n <= f.end_line.max(f.line);
                let open = if hl { "<span class=\"hl\">" } else { "" };
                let close = if hl { "</span>" } else { "\n" };
                write!(o, "{open}<span class=\"ln\">{n}</span>{}{close}", esc(line))?;
                if hl {
                    // A block span ends the line itself; no newline so the highlight stays flush.
                }
            }
            writeln!(o, "</code></pre>")?;
        }
        writeln!(o, "</article>")?;
    }

    writeln!(o, "<h2>Strategies</h2>")?;
    if r.strategies.is_empty() {
        writeln!(
            o,
            "<p class=\"muted\">{}</p>",
            esc(&missing_reason(r, "strategies", "No strategy was ranked."))
        )?;
    } else {
        writeln!(
            o,
            "<div class=\"scroll\"><table><thead><tr><th>#</th><th>Strategy</th><th>Targets</th><th>Expected gain</th><th>Safety</th><th>Resolves</th></tr></thead><tbody>"
        )?;
        let mut ranked: Vec<_> = r.strategies.iter().collect();
        ranked.sort_by_key(|s| s.rank);
        for s in ranked {
            writeln!(
                o,
                "<tr><td class=\"n\">{}</td><td>{}<br><code class=\"muted\">{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                s.rank,
                esc(&s.title),
                esc(&s.id),
                s.bottleneck.map_or("—", Resource::as_str),
                esc(s.expected_gain.as_deref().unwrap_or("—")),
                applicability_word(s.safety),
                esc(&s.resolves.join(", "))
            )?;
        }
        writeln!(o, "</tbody></table></div>")?;
    }

    writeln!(o, "<h2>Before / after</h2>")?;
    if r.experiments.is_empty() {
        let skipped = r
            .missing
            .iter()
            .filter(|m| m.step.starts_with("experiment "))
            .count();
        let default = if skipped > 0 {
            format!(
                "No comparison was measured: step 4 skipped all {skipped} variant(s) (see below)."
            )
        } else {
            "No experiment ran.".to_owned()
        };
        writeln!(
            o,
            "<p class=\"muted\">{}</p>",
            esc(&missing_reason(r, "experiments", &default))
        )?;
    } else {
        write_chart(o, &r.experiments)?;
        writeln!(
            o,
            "<div class=\"scroll\"><table><thead><tr><th>Strategy</th><th>Before</th><th>After</th><th>Speed-up</th><th>95 % interval</th><th>Runs</th><th>Status</th></tr></thead><tbody>"
        )?;
        for e in &r.experiments {
            writeln!(
                o,
                "<tr><td>{}</td><td class=\"n\">{:.3} {}</td><td class=\"n\">{:.3} {}</td><td class=\"n\">{:.2}×</td><td class=\"n\">{:.2}–{:.2}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                esc(&experiment_name(e)),
                e.baseline,
                esc(&e.unit),
                e.candidate,
                esc(&e.unit),
                e.speedup,
                e.ci95[0],
                e.ci95[1],
                e.runs,
                e.status.label()
            )?;
        }
        writeln!(o, "</tbody></table></div>")?;
    }

    writeln!(o, "<h2>Suggested changes ({})</h2>", r.diffs.len())?;
    if r.diffs.is_empty() {
        let why = if r.strategies.is_empty() {
            "No finding carries an automatic fix."
        } else {
            "No strategy carries a patch."
        };
        writeln!(o, "<p class=\"muted\">{why}</p>")?;
    }
    for (i, d) in r.diffs.iter().enumerate() {
        let open = if i < 3 { " open" } else { "" };
        writeln!(
            o,
            "<details{open}><summary><code>{}</code> — <code>{}</code> <span class=\"tag\">{}</span></summary>",
            esc(&d.origin),
            esc(&d.path),
            applicability_word(d.applicability)
        )?;
        write!(o, "<pre class=\"diff\"><code>")?;
        for line in d.text.lines() {
            let class =
                if line.starts_with("+++") || line.starts_with("---") || line.starts_with("@@") {
                    "hunk"
                } else if line.starts_with('+') {
                    "add"
                } else if line.starts_with('-') {
                    "del"
                } else {
                    ""
                };
            if class.is_empty() {
                writeln!(o, "{}", esc(line))?;
            } else {
                write!(o, "<span class=\"{class}\">{}</span>", esc(line))?;
            }
        }
        writeln!(o, "</code></pre></details>")?;
    }

    writeln!(o, "<h2>How to reproduce</h2>")?;
    writeln!(
        o,
        "<pre><code>{}</code></pre>",
        esc(&r.reproduce.join("\n"))
    )?;

    writeln!(o, "<h2>Environment</h2>")?;
    write_environment(o, r)?;

    if !r.missing.is_empty() {
        writeln!(o, "<h2>Not in this report</h2>\n<ul class=\"missing\">")?;
        for m in &r.missing {
            writeln!(
                o,
                "<li><strong>{}</strong>: {}</li>",
                esc(&m.step),
                esc(&m.reason)
            )?;
        }
        writeln!(o, "</ul>")?;
    }
    writeln!(
        o,
        "<footer>efficiency-audit {} · report schema {}</footer>\n</main>\n</body>\n</html>",
        esc(&r.tool_version),
        r.schema
    )
}

fn missing_reason(r: &Report, step: &str, default: &str) -> String {
    r.missing.iter().find(|m| m.step == step).map_or_else(
        || default.to_owned(),
        |m| format!("Not available: {}.", m.reason),
    )
}

fn experiment_name(e: &Experiment) -> String {
    match &e.variant {
        Some(v) => format!("{} ({v})", e.strategy),
        None => e.strategy.clone(),
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::High => "high",
        Severity::Medium => "medium",
        Severity::Low => "low",
    }
}

fn applicability_word(a: Applicability) -> &'static str {
    match a {
        Applicability::Safe => "safe",
        Applicability::Numerics => "changes numerics",
        Applicability::Manual => "manual",
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".to_owned(), |v| format!("{:.0} %", v * 100.0))
}

/// One horizontal gauge per resource: estimated (hatched) and measured (solid) bars on a
/// 0–100 % track, the threshold as a dashed line.
fn write_gauges(o: &mut String, r: &Report) -> std::fmt::Result {
    let threshold = r
        .verdict
        .as_ref()
        .map_or(crate::config::DEFAULT_THRESHOLD, |v| v.threshold);
    let (x0, w) = (44.0, 330.0);
    let row_h = 46.0;
    let rows = r.saturation.rows();
    let h = 24.0 + row_h * rows.len() as f64;
    writeln!(
        o,
        "<svg class=\"gauges\" viewBox=\"0 0 440 {h:.0}\" role=\"img\" aria-label=\"Saturation per resource, estimated and measured, against the {:.0} % threshold\">",
        threshold * 100.0
    )?;
    writeln!(
        o,
        "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"3\" height=\"6\" fill=\"#0969da\" opacity=\".55\"/></pattern></defs>"
    )?;
    for (i, (res, pair)) in rows.iter().enumerate() {
        let y = 10.0 + row_h * i as f64;
        write_gauge_row(o, res.as_str(), pair, y, x0, w)?;
    }
    let tx = x0 + w * threshold.clamp(0.0, 1.0);
    writeln!(
        o,
        "<line x1=\"{tx:.1}\" y1=\"4\" x2=\"{tx:.1}\" y2=\"{:.0}\" stroke=\"#cf222e\" stroke-dasharray=\"4 3\"/>",
        h - 14.0
    )?;
    writeln!(
        o,
        "<text x=\"{tx:.1}\" y=\"{:.0}\" text-anchor=\"middle\">threshold {:.0} %</text>",
        h - 2.0,
        threshold * 100.0
    )?;
    writeln!(o, "</svg>")?;
    writeln!(
        o,
        "<div class=\"scroll\"><table><thead><tr><th>Resource</th><th>Estimated</th><th>Measured</th><th>Why</th></tr></thead><tbody>"
    )?;
    for (res, pair) in rows {
        writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            res.as_str(),
            pct(pair.estimated),
            if pair.measured.is_some() {
                pct(pair.measured)
            } else {
                "not measured".to_owned()
            },
            esc(&pair.reason)
        )?;
    }
    writeln!(o, "</tbody></table></div>")
}

fn write_gauge_row(
    o: &mut String,
    name: &str,
    p: &SaturationPair,
    y: f64,
    x0: f64,
    w: f64,
) -> std::fmt::Result {
    writeln!(
        o,
        "<text x=\"0\" y=\"{:.0}\">{}</text>",
        y + 20.0,
        name.to_uppercase()
    )?;
    writeln!(
        o,
        "<rect x=\"{x0}\" y=\"{y:.0}\" width=\"{w}\" height=\"30\" rx=\"4\" fill=\"none\" stroke=\"#8c959f\"/>"
    )?;
    let bar = |v: f64| (w * v.clamp(0.0, 1.0)).max(1.0);
    // Past 75 % the label goes inside the bar, right-aligned, so it never leaves the track.
    let label = |end: f64, ty: f64, text: &str| {
        if end > x0 + 0.75 * w {
            format!(
                "<text x=\"{:.1}\" y=\"{ty:.0}\" text-anchor=\"end\" style=\"fill:#fff\">{text}</text>",
                end - 4.0
            )
        } else {
            format!("<text x=\"{:.1}\" y=\"{ty:.0}\">{text}</text>", end + 4.0)
        }
    };
    match p.estimated {
        Some(v) => writeln!(
            o,
            "<rect x=\"{x0}\" y=\"{:.0}\" width=\"{:.1}\" height=\"13\" rx=\"2\" fill=\"url(#hatch)\"/>{}",
            y + 1.0,
            bar(v),
            label(x0 + bar(v), y + 12.0, &format!("est. {:.0} %", v * 100.0))
        )?,
        None => writeln!(
            o,
            "<text x=\"{:.0}\" y=\"{:.0}\" opacity=\".7\">est. unknown</text>",
            x0 + 4.0,
            y + 12.0
        )?,
    }
    match p.measured {
        Some(v) => writeln!(
            o,
            "<rect x=\"{x0}\" y=\"{:.0}\" width=\"{:.1}\" height=\"13\" rx=\"2\" fill=\"#1a7f37\"/>{}",
            y + 16.0,
            bar(v),
            label(
                x0 + bar(v),
                y + 27.0,
                &format!("measured {:.0} %", v * 100.0)
            )
        ),
        None => writeln!(
            o,
            "<text x=\"{:.0}\" y=\"{:.0}\" opacity=\".7\">measured: not measured</text>",
            x0 + 4.0,
            y + 27.0
        ),
    }
}

/// Before/after bars: the baseline is 1.0×, each candidate its speed-up with the 95 % interval
/// as a whisker.
fn write_chart(o: &mut String, experiments: &[Experiment]) -> std::fmt::Result {
    let top = experiments
        .iter()
        .map(|e| e.ci95[1].max(e.speedup))
        .fold(1.0_f64, f64::max)
        * 1.15;
    let (x0, w, row) = (170.0, 290.0, 44.0);
    let h = 30.0 + row * experiments.len() as f64;
    let x = |v: f64| x0 + w * (v / top).clamp(0.0, 1.0);
    writeln!(
        o,
        "<svg class=\"chart\" viewBox=\"0 0 640 {h:.0}\" role=\"img\" aria-label=\"Speed-up per strategy with 95 % confidence intervals; the PR head as is is 1.0\">"
    )?;
    for (i, e) in experiments.iter().enumerate() {
        let y = 8.0 + row * i as f64;
        let name: String = experiment_name(e).chars().take(26).collect();
        let colour = match e.status {
            crate::report::model::ExperimentStatus::Faster => "#1a7f37",
            crate::report::model::ExperimentStatus::Unverified => "#9a6700",
            _ => "#8c959f",
        };
        writeln!(
            o,
            "<text x=\"0\" y=\"{:.0}\">{}</text>",
            y + 22.0,
            esc(&name)
        )?;
        writeln!(
            o,
            "<rect x=\"{x0}\" y=\"{y:.0}\" width=\"{:.1}\" height=\"14\" fill=\"#8c959f\" opacity=\".6\"/><text x=\"{:.1}\" y=\"{:.0}\">before 1.00×</text>",
            x(1.0) - x0,
            x(1.0) + 4.0,
            y + 11.0
        )?;
        writeln!(
            o,
            "<rect x=\"{x0}\" y=\"{:.0}\" width=\"{:.1}\" height=\"14\" fill=\"{colour}\"/>",
            y + 17.0,
            (x(e.speedup) - x0).max(1.0)
        )?;
        let (lo, hi, cy) = (x(e.ci95[0]), x(e.ci95[1]), y + 24.0);
        writeln!(
            o,
            "<path d=\"M{lo:.1} {cy:.0}H{hi:.1}M{lo:.1} {:.0}V{:.0}M{hi:.1} {:.0}V{:.0}\" stroke=\"currentColor\" stroke-width=\"1.5\" fill=\"none\" style=\"color:var(--fg)\"/>",
            cy - 5.0,
            cy + 5.0,
            cy - 5.0,
            cy + 5.0
        )?;
        writeln!(
            o,
            "<text x=\"{:.1}\" y=\"{:.0}\">after {:.2}× [{:.2}, {:.2}]</text>",
            hi + 6.0,
            y + 29.0,
            e.speedup,
            e.ci95[0],
            e.ci95[1]
        )?;
    }
    let one = x(1.0);
    writeln!(
        o,
        "<line x1=\"{one:.1}\" y1=\"0\" x2=\"{one:.1}\" y2=\"{:.0}\" stroke=\"#59636e\" stroke-dasharray=\"3 3\"/>",
        h - 16.0
    )?;
    writeln!(
        o,
        "<text x=\"{one:.1}\" y=\"{:.0}\" text-anchor=\"middle\">1.0× = PR head as is</text>",
        h - 3.0
    )?;
    writeln!(o, "</svg>")
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v:.digits$}"))
}

fn spread(s: Option<&Spread>) -> String {
    s.map_or_else(
        || "—".to_owned(),
        |s| format!("{:.0} ({:.0}–{:.0}, n={})", s.median, s.min, s.max, s.runs),
    )
}

fn table_value(v: Option<&TableValue>) -> String {
    match v {
        Some(TableValue::Value(x)) => format!("{x:.1}"),
        Some(TableValue::Text(t)) => esc(t),
        None => "—".to_owned(),
    }
}

fn write_ceilings(o: &mut String, c: &Ceilings) -> std::fmt::Result {
    writeln!(
        o,
        "<div class=\"scroll\"><table><thead><tr><th>Resource</th><th>Figure</th><th>Theoretical</th><th>Measured</th><th>Method</th></tr></thead><tbody>"
    )?;
    let row = |o: &mut String, res: &str, fig: &str, th: String, me: String, method: &str| {
        writeln!(
            o,
            "<tr><td>{res}</td><td>{fig}</td><td class=\"n\">{th}</td><td class=\"n\">{me}</td><td>{}</td></tr>",
            esc(method)
        )
    };
    row(
        o,
        "CPU",
        "FP32 GFLOP/s",
        num(c.cpu.fp32_gflops.theoretical, 0),
        num(c.cpu.fp32_gflops.measured, 0),
        &c.cpu.fp32_gflops.method,
    )?;
    row(
        o,
        "Memory",
        "bandwidth GB/s",
        num(c.memory.bandwidth_gbs.theoretical, 1),
        num(c.memory.bandwidth_gbs.measured, 1),
        &c.memory.bandwidth_gbs.method,
    )?;
    let disk_method = format!("{} on {}", c.disk.method, c.disk.fs);
    for (figure, measured) in [
        ("read MB/s, QD1", &c.disk.read_mbs.qd1),
        ("read MB/s, QD4", &c.disk.read_mbs.qd4),
        ("write MB/s, QD1", &c.disk.write_mbs.qd1),
    ] {
        row(
            o,
            "Disk",
            figure,
            "—".into(),
            spread(measured.as_ref()),
            &disk_method,
        )?;
    }
    for g in &c.gpus {
        let label = format!("GPU {}", g.index);
        let fig = |o: &mut String, name: &str, f: &GpuFigure| {
            let theoretical = match (f.theoretical_nvml, f.datasheet.as_ref()) {
                (Some(t), _) => format!("{t:.1}"),
                (None, d) => table_value(d),
            };
            let method = f.measured_note.clone().unwrap_or_else(|| {
                if f.measured.is_some() {
                    "torch micro-benchmark".to_owned()
                } else {
                    String::new()
                }
            });
            row(o, &label, name, theoretical, num(f.measured, 1), &method)
        };
        fig(o, "FP32 TFLOP/s", &g.fp32_tflops)?;
        fig(o, "TF32 tensor TFLOP/s", &g.tf32_tflops)?;
        fig(o, "FP16/BF16 tensor TFLOP/s", &g.fp16_bf16_tflops)?;
        fig(o, "FP8 tensor TFLOP/s", &g.fp8_tflops)?;
        fig(o, "memory GB/s", &g.mem_bandwidth_gbs)?;
        row(
            o,
            &label,
            "host→device GB/s (pinned)",
            num(g.pcie.theoretical_gbs_per_dir, 1),
            num(g.h2d_gbs, 1),
            "",
        )?;
    }
    writeln!(o, "</tbody></table></div>")?;
    if !c.warnings.is_empty() {
        writeln!(o, "<ul class=\"missing\">")?;
        for w in &c.warnings {
            writeln!(o, "<li>{}</li>", esc(w))?;
        }
        writeln!(o, "</ul>")?;
    }
    Ok(())
}

fn write_environment(o: &mut String, r: &Report) -> std::fmt::Result {
    let Some(c) = &r.ceilings else {
        return writeln!(
            o,
            "<p class=\"muted\">Not recorded: step 1 (ceilings) did not run.</p>"
        );
    };
    writeln!(o, "<dl>")?;
    let item = |o: &mut String, k: &str, v: &str| writeln!(o, "<dt>{k}</dt><dd>{}</dd>", esc(v));
    item(o, "Measured at", &c.measured_at)?;
    item(
        o,
        "OS",
        &format!("{} (kernel {})", c.host.os, c.host.kernel),
    )?;
    item(
        o,
        "CPU",
        &format!(
            "{} — {} logical CPUs, {} physical cores, {} usable; {}",
            c.host.cpu_brand,
            c.host.logical_cpus,
            c.host
                .physical_cores
                .map_or_else(|| "?".to_owned(), |n| n.to_string()),
            c.host.available_parallelism,
            c.host.simd.join(" ")
        ),
    )?;
    item(o, "Memory", &format!("{:.1} GiB", c.memory.total_gib))?;
    item(o, "Disk", &format!("{} ({})", c.disk.path, c.disk.fs))?;
    if c.gpus.is_empty() {
        item(o, "GPU", "none visible to NVML")?;
    }
    for g in &c.gpus {
        let k = format!("GPU {}", g.index);
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_owned());
        item(
            o,
            &k,
            &format!(
                "{} ({}, {:.0} GiB, compute capability {})",
                g.name,
                g.pci_device_id,
                g.memory_gib,
                opt(&g.compute_capability)
            ),
        )?;
        item(
            o,
            "Driver / CUDA",
            &format!("{} / {}", opt(&g.driver), opt(&g.cuda)),
        )?;
        item(
            o,
            "Clocks (max)",
            &format!(
                "SM {} MHz, memory {} MHz",
                g.clocks_mhz
                    .sm_max
                    .map_or_else(|| "?".to_owned(), |v| v.to_string()),
                g.clocks_mhz
                    .mem_max
                    .map_or_else(|| "?".to_owned(), |v| v.to_string())
            ),
        )?;
        item(
            o,
            "Throttle reasons",
            &if g.throttle_reasons.is_empty() {
                "none active".to_owned()
            } else {
                g.throttle_reasons.join(", ")
            },
        )?;
        item(
            o,
            "Power limit",
            &g.power_limit_w
                .map_or_else(|| "?".to_owned(), |w| format!("{w:.0} W")),
        )?;
        item(
            o,
            "PCIe",
            &format!(
                "gen {} ×{}",
                g.pcie
                    .generation
                    .map_or_else(|| "?".to_owned(), |v| v.to_string()),
                g.pcie
                    .width
                    .map_or_else(|| "?".to_owned(), |v| v.to_string())
            ),
        )?;
        let flag = |b: Option<bool>| b.map_or("unknown", |b| if b { "on" } else { "off" });
        item(
            o,
            "MIG / ECC",
            &format!("{} / {}", flag(g.mig_enabled), flag(g.ecc_enabled)),
        )?;
    }
    item(o, "Other GPU processes", "not recorded by step 1")?;
    writeln!(o, "</dl>")
}
