//! `analysis.html`: one self-contained page (inline CSS and SVG, no scripts, no network) that
//! shows the verdict, each hot loop as a pipeline (data source → loader → host→device →
//! compute → sync points) with its estimated demand beside the machine's ceilings, and every
//! finding with its code excerpt.
//!
//! Audited code and paths are untrusted: the page is written through [`Html`], whose only way
//! to emit a runtime string is [`Html::text`], which escapes it. Markup is `&'static str`.

use crate::analysis::model::{Category, Estimate, Finding, HotLoop, Resource, StageKind};
use crate::ceilings::model::{Ceilings, GpuFigure, TableValue};
use crate::report::analysis_json::AnalysisReport;
use crate::report::escape;
use crate::verdict::VerdictValue;

/// Most lines of code shown per finding.
const EXCERPT_MAX_LINES: usize = 12;

/// Renders the page.
#[must_use]
pub fn render(report: &AnalysisReport) -> String {
    let mut h = Html::default();
    h.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"color-scheme\" content=\"light dark\">\n");
    h.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.raw("<title>efficiency-audit · analysis</title>\n<style>");
    h.raw(CSS);
    h.raw("</style>\n</head>\n<body>\n<main>\n");
    header(&mut h, report);
    demand_section(&mut h, report);
    loops_section(&mut h, report);
    findings_section(&mut h, report);
    warnings_section(&mut h, report);
    h.raw("<footer>");
    h.text(&report.tool.name);
    h.raw(" ");
    h.text(&report.tool.version);
    h.raw(" · static estimate from source, no code was run</footer>\n</main>\n</body>\n</html>\n");
    h.out
}

/// An HTML writer that cannot emit an unescaped runtime string.
#[derive(Default)]
struct Html {
    out: String,
}

impl Html {
    /// Markup known at compile time.
    fn raw(&mut self, markup: &'static str) {
        self.out.push_str(markup);
    }

    /// Text or attribute value from anywhere: escaped.
    fn text(&mut self, text: &str) {
        self.out.push_str(&escape::html(text));
    }

    /// A number, formatted then escaped like any text.
    fn num(&mut self, value: impl std::fmt::Display) {
        self.text(&value.to_string());
    }
}

fn header(h: &mut Html, report: &AnalysisReport) {
    let verdict = &report.verdict;
    match verdict.value {
        VerdictValue::Red => h.raw("<header class=\"verdict red\">"),
        VerdictValue::Green => h.raw("<header class=\"verdict green\">"),
    }
    h.raw("<h1>");
    h.text(&verdict.headline());
    h.raw("</h1>\n<p>Basis: ");
    h.text(match verdict.basis {
        crate::verdict::Basis::Estimated => "estimated from the source (step 2)",
        crate::verdict::Basis::Measured => "measured while the benchmark ran",
    });
    h.raw(" · threshold ");
    h.text(&pct(verdict.threshold));
    h.raw("</p>\n<p class=\"counts\">");
    h.num(report.files.len());
    h.raw(" files · ");
    h.num(report.findings.len());
    h.raw(" findings · ");
    h.num(report.demand.loops.len());
    h.raw(" hot loops · ");
    h.num(report.warnings.len());
    h.raw(" warnings</p>\n</header>\n");
}

fn demand_section(h: &mut Html, report: &AnalysisReport) {
    h.raw("<section>\n<h2>Demand against the ceilings</h2>\n<div class=\"split\">\n");
    h.raw("<div>\n<h3>Best saturation any hot loop can reach</h3>\n");
    gauges(h, report, &report.demand.saturation);
    h.raw("</div>\n<div>\n<h3>This machine's ceilings</h3>\n");
    match &report.ceilings {
        Some(c) => ceilings_table(h, c),
        None => h.raw(
            "<p class=\"muted\">No ceilings file given (<code>--ceilings \
             theoretical_limits.yaml</code>): CPU demand is set against this machine's core \
             count; GPU and disk ceilings are unknown. Run <code>efficiency-audit \
             ceilings</code> to measure them.</p>\n",
        ),
    }
    if !report.demand.notes.is_empty() {
        h.raw("<ul class=\"notes\">\n");
        for note in &report.demand.notes {
            h.raw("<li>");
            h.text(note);
            h.raw("</li>\n");
        }
        h.raw("</ul>\n");
    }
    h.raw("</div>\n</div>\n</section>\n");
}

/// One SVG bar per resource, the threshold marked, the ceiling it is measured against beside
/// it, and the one-line reason under it.
fn gauges(h: &mut Html, report: &AnalysisReport, saturation: &crate::analysis::model::Saturation) {
    h.raw("<dl class=\"gauges\">\n");
    for (resource, name, estimate) in [
        (Resource::Gpu, "GPU compute", &saturation.gpu),
        (Resource::Cpu, "CPU compute", &saturation.cpu),
        (Resource::Io, "IO bandwidth", &saturation.io),
    ] {
        gauge(h, report, resource, name, estimate);
    }
    h.raw("</dl>\n");
}

fn gauge(
    h: &mut Html,
    report: &AnalysisReport,
    resource: Resource,
    name: &'static str,
    estimate: &Estimate,
) {
    let threshold = report.verdict.threshold;
    h.raw("<dt>");
    h.raw(name);
    h.raw(" <b>");
    match estimate.value {
        Some(v) => {
            h.raw("≤ ");
            h.text(&pct(v));
        }
        None => h.raw("unknown"),
    }
    h.raw("</b>");
    if let Some(ceiling) = report
        .ceilings
        .as_ref()
        .and_then(|c| ceiling_of(resource, c))
    {
        h.raw(" <span class=\"ceiling\">of ");
        h.text(&ceiling);
        h.raw("</span>");
    }
    h.raw("</dt>\n<dd>");
    h.raw("<svg class=\"gauge\" viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"");
    h.raw(name);
    h.raw("\"><rect class=\"track\" x=\"0\" y=\"0\" width=\"100\" height=\"10\"/>");
    if let Some(v) = estimate.value {
        let width = (v.clamp(0.0, 1.0) * 100.0).max(0.5);
        if v >= threshold {
            h.raw("<rect class=\"fill ok\" x=\"0\" y=\"0\" height=\"10\" width=\"");
        } else {
            h.raw("<rect class=\"fill low\" x=\"0\" y=\"0\" height=\"10\" width=\"");
        }
        h.num(format!("{width:.1}"));
        h.raw("\"/>");
    }
    let mark = format!("{:.1}", threshold.clamp(0.0, 1.0) * 100.0);
    h.raw("<line class=\"threshold\" y1=\"0\" y2=\"10\" x1=\"");
    h.text(&mark);
    h.raw("\" x2=\"");
    h.text(&mark);
    h.raw("\"/></svg>\n<span class=\"reason\">");
    h.text(&estimate.reason);
    h.raw("</span></dd>\n");
}

/// The ceiling a resource's saturation is set against: the best GPU tensor rate, the CPU's
/// FP32 rate over its logical CPUs, the disk's best sequential read.
fn ceiling_of(resource: Resource, c: &Ceilings) -> Option<String> {
    match resource {
        Resource::Gpu => c
            .gpus
            .iter()
            .filter_map(|g| tensor_rate(&g.fp16_bf16_tflops).map(|r| (r, g)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(rate, g)| format!("{} TFLOP/s FP16/BF16 tensor ({})", sig(rate), g.name)),
        Resource::Cpu => Some(match c.cpu.fp32_gflops.best() {
            Some(rate) => format!(
                "{} logical CPUs, {} GFLOP/s FP32",
                c.host.logical_cpus,
                sig(rate)
            ),
            None => format!("{} logical CPUs", c.host.logical_cpus),
        }),
        Resource::Io => {
            let read = &c.disk.read_mbs;
            let best = read.qd4.as_ref().or(read.qd1.as_ref())?;
            Some(format!("{} MB/s sequential read", sig(best.median)))
        }
    }
}

fn tensor_rate(figure: &GpuFigure) -> Option<f64> {
    figure.measured.or(match figure.datasheet {
        Some(TableValue::Value(v)) => Some(v),
        _ => None,
    })
}

fn ceilings_table(h: &mut Html, c: &Ceilings) {
    h.raw("<table class=\"ceilings\">\n<tbody>\n");
    row(h, "Logical CPUs", &c.host.logical_cpus.to_string());
    row(h, "CPU FP32", &opt(c.cpu.fp32_gflops.best(), "GFLOP/s"));
    row(
        h,
        "Memory bandwidth",
        &opt(c.memory.bandwidth_gbs.best(), "GB/s"),
    );
    row(
        h,
        "Disk read, QD1",
        &opt(c.disk.read_mbs.qd1.as_ref().map(|s| s.median), "MB/s"),
    );
    row(
        h,
        "Disk read, QD4",
        &opt(c.disk.read_mbs.qd4.as_ref().map(|s| s.median), "MB/s"),
    );
    if c.gpus.is_empty() {
        row(h, "GPU", "none detected");
    }
    for gpu in &c.gpus {
        h.raw("<tr><th>GPU ");
        h.num(gpu.index);
        h.raw("</th><td>");
        h.text(&gpu.name);
        h.raw("</td></tr>\n");
        row(h, "  FP16/BF16 tensor", &gpu_figure(&gpu.fp16_bf16_tflops));
        row(h, "  TF32 tensor", &gpu_figure(&gpu.tf32_tflops));
        row(h, "  FP32", &gpu_figure(&gpu.fp32_tflops));
    }
    h.raw("</tbody>\n</table>\n");
}

fn row(h: &mut Html, label: &str, value: &str) {
    h.raw("<tr><th>");
    h.text(label);
    h.raw("</th><td>");
    h.text(value);
    h.raw("</td></tr>\n");
}

fn opt(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(|| "unknown".to_owned(), |v| format!("{} {unit}", sig(v)))
}

fn gpu_figure(figure: &GpuFigure) -> String {
    if let Some(m) = figure.measured {
        return format!("{} TFLOP/s (measured)", sig(m));
    }
    match &figure.datasheet {
        Some(TableValue::Value(v)) => format!("{} TFLOP/s (datasheet)", sig(*v)),
        Some(TableValue::Text(t)) => t.clone(),
        None => "unknown".to_owned(),
    }
}

/// Three significant figures at most, no trailing zeros: 989.4 → "989", 6.25 → "6.25".
fn sig(v: f64) -> String {
    let decimals = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

fn pct(v: f64) -> String {
    format!("{:.0} %", v * 100.0)
}

fn loops_section(h: &mut Html, report: &AnalysisReport) {
    h.raw("<section>\n<h2>Hot loops</h2>\n");
    if report.demand.loops.is_empty() {
        h.raw("<p class=\"muted\">No hot loop found: no step loop over a loader, no loop that calls a model or steps an optimizer, no per-record loop.</p>\n");
    }
    for (i, hot) in report.demand.loops.iter().enumerate() {
        hot_loop(h, report, i, hot);
    }
    h.raw("</section>\n");
}

/// The stages in pipeline order, with their labels.
const STAGES: [(StageKind, &str); 5] = [
    (StageKind::DataSource, "Data source"),
    (StageKind::Loader, "Loader"),
    (StageKind::HostToDevice, "Host → device"),
    (StageKind::Compute, "Compute"),
    (StageKind::SyncPoint, "Sync points"),
];

/// Which pipeline stage a category's waste sits in.
fn stage_of(category: Category) -> Option<StageKind> {
    use Category as C;
    Some(match category {
        C::IoInLoop | C::ImageDecodeInLoop | C::PandasRowLoop | C::SerialProcessing => {
            StageKind::DataSource
        }
        C::DataloaderWorkers | C::DataloaderPersistent | C::SmallBatch => StageKind::Loader,
        C::DataloaderPinMemory | C::H2dBlocking | C::CpuTensorThenMove => StageKind::HostToDevice,
        C::NoAmp
        | C::NoCompile
        | C::NoCudnnBenchmark
        | C::NoTf32
        | C::NoGradMissing
        | C::PythonLoopNumeric
        | C::RedundantWorkInLoop => StageKind::Compute,
        C::HostSync | C::ExplicitSync | C::LoggingInLoop | C::CheckpointInLoop => {
            StageKind::SyncPoint
        }
        C::Other => return None,
    })
}

/// Findings (with their index in the report) that belong to a loop: inside its lines, or on
/// the line where one of its stages is set up (a DataLoader built before the loop).
fn loop_findings<'r>(report: &'r AnalysisReport, hot: &HotLoop) -> Vec<(usize, &'r Finding)> {
    report
        .findings
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.path == hot.path
                && ((hot.line..=hot.end_line).contains(&f.line)
                    || hot.stages.iter().any(|s| s.line == Some(f.line)))
        })
        .collect()
}

fn hot_loop(h: &mut Html, report: &AnalysisReport, i: usize, hot: &HotLoop) {
    let findings = loop_findings(report, hot);
    h.raw("<article class=\"loop\">\n<h3>");
    h.num(i + 1);
    h.raw(". <code>");
    h.text(&format!("{}:{}–{}", hot.path, hot.line, hot.end_line));
    h.raw("</code>");
    if let Some(function) = &hot.function {
        h.raw(" in <code>");
        h.text(function);
        h.raw("()</code>");
    }
    h.raw(" <span class=\"kind\">");
    h.text(kind_name(hot.kind));
    h.raw("</span></h3>\n<ol class=\"pipeline\">\n");
    for (kind, label) in STAGES {
        let stages: Vec<_> = hot.stages.iter().filter(|s| s.kind == kind).collect();
        let hits: Vec<_> = findings
            .iter()
            .filter(|(_, f)| stage_of(f.category) == Some(kind))
            .collect();
        match (stages.is_empty(), hits.is_empty()) {
            (true, true) => h.raw("<li class=\"stage absent\">"),
            (_, false) => h.raw("<li class=\"stage waste\">"),
            (false, true) => h.raw("<li class=\"stage\">"),
        }
        h.raw("<b>");
        h.raw(label);
        h.raw("</b>");
        if stages.is_empty() {
            h.raw("<span class=\"detail muted\">not seen</span>");
        }
        for stage in stages {
            h.raw("<span class=\"detail\">");
            h.text(&stage.detail);
            if let Some(line) = stage.line {
                h.raw(" <small>line ");
                h.num(line);
                h.raw("</small>");
            }
            h.raw("</span>");
        }
        for (index, finding) in hits {
            h.raw("<a class=\"badge ");
            h.raw(severity_class(finding.severity));
            h.raw("\" href=\"#f");
            h.num(index + 1);
            h.raw("\">");
            h.text(&finding.rule);
            h.raw(" ");
            h.text(finding.category.as_str());
            h.raw("</a>");
        }
        h.raw("</li>\n");
    }
    h.raw("</ol>\n<h4>Estimated demand of this loop</h4>\n");
    gauges(h, report, &hot.saturation);
    h.raw("</article>\n");
}

fn kind_name(kind: crate::analysis::model::CodeKind) -> &'static str {
    use crate::analysis::model::CodeKind as K;
    match kind {
        K::Train => "training",
        K::Infer => "inference",
        K::Data => "data processing",
        K::Other => "other",
    }
}

fn severity_class(severity: crate::analysis::model::Severity) -> &'static str {
    use crate::analysis::model::Severity as S;
    match severity {
        S::High => "high",
        S::Medium => "medium",
        S::Low => "low",
    }
}

fn resource_name(resource: Resource) -> &'static str {
    match resource {
        Resource::Gpu => "GPU",
        Resource::Cpu => "CPU",
        Resource::Io => "IO",
    }
}

fn findings_section(h: &mut Html, report: &AnalysisReport) {
    h.raw("<section>\n<h2>Findings</h2>\n");
    if report.findings.is_empty() {
        h.raw("<p class=\"muted\">No findings.</p>\n</section>\n");
        return;
    }
    h.raw("<table class=\"findings\">\n<thead><tr><th>Severity</th><th>Rule</th><th>Where</th><th>Idle</th><th>What to do</th></tr></thead>\n<tbody>\n");
    for (i, f) in report.findings.iter().enumerate() {
        h.raw("<tr id=\"f");
        h.num(i + 1);
        h.raw("\"><td data-label=\"Severity\"><span class=\"sev ");
        h.raw(severity_class(f.severity));
        h.raw("\">");
        h.raw(severity_class(f.severity));
        h.raw("</span></td><td data-label=\"Rule\"><code>");
        h.text(&f.rule);
        h.raw("</code> ");
        h.text(f.category.as_str());
        h.raw("</td><td data-label=\"Where\"><code>");
        h.text(&format!("{}:{}:{}", f.path, f.line, f.column));
        h.raw("</code></td><td data-label=\"Idle\">");
        h.raw(resource_name(f.resource));
        h.raw("</td><td data-label=\"What to do\">");
        h.text(&f.message);
        if let Some(fix) = &f.fix {
            h.raw(" <span class=\"fix\">fix: ");
            h.raw(match fix.applicability {
                crate::analysis::model::Applicability::Safe => "safe",
                crate::analysis::model::Applicability::Numerics => "changes numerics",
                crate::analysis::model::Applicability::Manual => "manual",
            });
            h.raw("</span>");
        }
        h.raw("</td></tr>\n");
        excerpt(h, report, f);
    }
    h.raw("</tbody>\n</table>\n</section>\n");
}

/// The finding's lines with one line of context either side, line numbers, hits marked.
fn excerpt(h: &mut Html, report: &AnalysisReport, f: &Finding) {
    let Some((text, index)) = report.sources.get(&f.path) else {
        return;
    };
    let end_line = f.end_line.max(f.line);
    let first = f.line.saturating_sub(1).max(1);
    let last = (end_line + 1)
        .min(index.line_count())
        .min(first + EXCERPT_MAX_LINES - 1);
    if first > last {
        return;
    }
    h.raw("<tr class=\"code\"><td colspan=\"5\"><pre>");
    for n in first..=last {
        let Some(line) = index.line_text(text, n) else {
            break;
        };
        if (f.line..=end_line).contains(&n) {
            h.raw("<span class=\"hit\">");
        } else {
            h.raw("<span>");
        }
        h.raw("<i>");
        h.num(n);
        h.raw("</i>");
        h.text(line);
        h.raw("</span>\n");
    }
    h.raw("</pre></td></tr>\n");
}

fn warnings_section(h: &mut Html, report: &AnalysisReport) {
    if report.warnings.is_empty() {
        return;
    }
    h.raw("<section>\n<h2>Warnings</h2>\n<ul class=\"warnings\">\n");
    for w in &report.warnings {
        h.raw("<li>");
        h.text(w);
        h.raw("</li>\n");
    }
    h.raw("</ul>\n</section>\n");
}

const CSS: &str = r#"
:root{--fg:#1b1f24;--muted:#5c6670;--bg:#fff;--card:#f6f8fa;--line:#d0d7de;--red:#cf222e;--green:#1a7f37;--amber:#9a6700;--blue:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#8d96a0;--bg:#0d1117;--card:#161b22;--line:#30363d;--red:#f85149;--green:#3fb950;--amber:#d29922;--blue:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.35rem;margin:0 0 4px}h2{font-size:1.15rem;border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:28px}h3{font-size:1rem}h4{font-size:.9rem;margin:12px 0 4px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.muted{color:var(--muted)}
.verdict{border-left:6px solid;padding:12px 16px;background:var(--card);border-radius:6px}
.verdict.red{border-color:var(--red)}.verdict.green{border-color:var(--green)}
.verdict p{margin:2px 0}.counts{color:var(--muted)}
.split{display:grid;grid-template-columns:1fr 1fr;gap:24px}
.gauges{margin:0}.gauges dt{margin-top:8px}.gauges dd{margin:2px 0 0}
.gauge{display:block;width:100%;height:14px;border-radius:3px}
.track{fill:var(--line)}.fill.low{fill:var(--red)}.fill.ok{fill:var(--green)}
.threshold{stroke:var(--fg);stroke-width:.6;stroke-dasharray:1.5 1}
.reason{color:var(--muted);font-size:.88rem}
.ceiling{color:var(--muted);font-weight:400;font-size:.85rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid var(--line)}
.ceilings th{font-weight:500;white-space:pre;color:var(--muted)}
.loop{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 14px 14px;margin:14px 0}
.kind{font-size:.8rem;font-weight:500;color:var(--muted);border:1px solid var(--line);border-radius:10px;padding:0 8px}
.pipeline{list-style:none;display:flex;gap:22px;padding:0;margin:10px 0}
.stage{flex:1 1 0;min-width:0;position:relative;border:2px solid var(--line);border-radius:6px;padding:8px;background:var(--bg);overflow-wrap:anywhere}
.stage+.stage::before{content:"→";position:absolute;left:-19px;top:40%;color:var(--muted);font-weight:700}
.stage.waste{border-color:var(--red)}.stage.absent{border-style:dashed;opacity:.7}
.stage b{display:block}.detail{display:block;font-size:.85rem}.detail small{color:var(--muted)}
.badge{display:inline-block;margin:4px 4px 0 0;font-size:.75rem;padding:0 6px;border-radius:10px;color:#fff;text-decoration:none}
.badge.high,.sev.high{background:var(--red)}.badge.medium,.sev.medium{background:var(--amber)}.badge.low,.sev.low{background:var(--blue)}
.sev{color:#fff;border-radius:10px;padding:0 8px;font-size:.8rem}
.fix{color:var(--muted);font-size:.85rem}
tr.code td{padding-top:0}
pre{margin:0;padding:8px;background:var(--card);border-radius:6px;overflow-x:auto}
pre span{display:block}pre i{display:inline-block;width:4.5ch;color:var(--muted);font-style:normal;user-select:none}
pre .hit{background:rgba(207,34,46,.12)}
.warnings li{overflow-wrap:anywhere}
footer{margin:32px 0 8px;color:var(--muted);font-size:.8rem}
@media (max-width:720px){
.split{grid-template-columns:1fr}
.pipeline{flex-direction:column;gap:20px}
.stage+.stage::before{content:"↓";left:50%;top:-20px}
.findings thead{display:none}
.findings tr,.findings td{display:block;border:0}
.findings tr{border-top:1px solid var(--line);padding:6px 0}
.findings td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.8rem}
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::analysis_json::tests::sample;

    #[test]
    fn page_is_self_contained_and_shows_everything() {
        let page = render(&sample());
        assert!(page.starts_with("<!DOCTYPE html>"));
        for forbidden in ["<script", "http://", "https://", "<link", "@import", "url("] {
            assert!(!page.contains(forbidden), "page contains {forbidden}");
        }
        assert!(page.contains("name=\"viewport\""));
        assert!(page.contains("@media (max-width:720px)"));
        // Verdict, the pipeline's five stages, gauges, findings with excerpts.
        assert!(page.contains("RED: no resource reaches 70 %"));
        for label in [
            "Data source",
            "Loader",
            "Host → device",
            "Compute",
            "Sync points",
        ] {
            assert!(page.contains(label), "{label}");
        }
        assert!(page.contains("DataLoader(batch_size=32, num_workers=0)"));
        assert_eq!(page.matches("<svg class=\"gauge\"").count(), 6);
        assert!(page.contains("main-process loader: 1 of 16 CPUs → ≤ 6 %"));
        assert!(page.contains("<i>4</i>loader = DataLoader(ds, batch_size=32)"));
        assert!(page.contains("print(loss.item())  # café"));
        assert!(page.contains("src/broken.py:3:1: syntax error"));
        // The loader finding is drawn on the loader stage, the `.item()` one on the sync stage.
        assert!(page.contains("href=\"#f1\">EA001 dataloader_workers</a>"));
        assert!(page.contains("href=\"#f2\">EA010 host_sync</a>"));
        assert!(page.contains("<tr id=\"f1\">") && page.contains("<tr id=\"f2\">"));
    }

    #[test]
    fn hostile_code_and_paths_are_escaped() {
        let mut report = sample();
        let hostile = "x = '</script><script>alert(1)</script>'  # <!-- <img src=x onerror=\"alert(2)\"> & 'q'\n";
        let path = "evil\"><img src=x onerror=alert(3)>.py";
        report.sources.insert(path.into(), hostile.into());
        let mut finding = report.findings[0].clone();
        finding.path = path.into();
        finding.line = 1;
        finding.end_line = 1;
        finding.rule = "<b>EA001</b>".into();
        finding.message = "</td></tr></table><script>alert(4)</script>".into();
        report.findings.push(finding);
        report.demand.loops[0].path = path.into();
        report.demand.loops[0].function = Some("<svg onload=alert(5)>".into());
        report.demand.loops[0].stages[0].detail = "<!-- -->\"'<style>".into();
        report.demand.saturation.cpu.reason = "<iframe src=javascript:alert(6)>".into();
        report.warnings.push("<marquee>".into());
        report.tool.version = "<blink>".into();
        let page = render(&report);
        for raw in [
            "<script",
            "</script>",
            "<!--",
            "<img",
            "<svg onload",
            "<iframe",
            "<marquee",
            "<blink",
            "<b>EA001",
            "<style>\"",
        ] {
            assert!(!page.contains(raw), "unescaped {raw:?} in page");
        }
        assert!(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(
            page.contains(
                "&lt;!-- &lt;img src=x onerror=&quot;alert(2)&quot;&gt; &amp; &#39;q&#39;"
            )
        );
        assert!(page.contains("evil&quot;&gt;&lt;img src=x onerror=alert(3)&gt;.py:1:10"));
        // Exactly one <style> element and no element the page did not write itself.
        assert_eq!(page.matches("<style>").count(), 1);
    }

    #[test]
    fn ceilings_are_shown_when_given() {
        let mut report = sample();
        report.ceilings = Some(crate::report::analysis_html::tests::ceilings());
        let page = render(&report);
        assert!(
            page.contains("<th>CPU FP32</th><td>1230 GFLOP/s</td>"),
            "{page}"
        );
        assert!(page.contains("<th>Disk read, QD1</th><td>812 MB/s</td>"));
        assert!(page.contains("<th>Disk read, QD4</th><td>2950 MB/s</td>"));
        assert!(page.contains("NVIDIA H100 80GB HBM3"));
        assert!(page.contains("989 TFLOP/s (datasheet)"));
        // Each gauge names the ceiling it is set against.
        assert!(page.contains(
            "<span class=\"ceiling\">of 989 TFLOP/s FP16/BF16 tensor (NVIDIA H100 80GB HBM3)</span>"
        ));
        assert!(
            page.contains("<span class=\"ceiling\">of 16 logical CPUs, 1230 GFLOP/s FP32</span>")
        );
        assert!(page.contains("<span class=\"ceiling\">of 2950 MB/s sequential read</span>"));
        assert!(!page.contains("No ceilings file given"));
    }

    pub(crate) fn ceilings() -> Ceilings {
        let yaml = r#"
schema: 1
measured_at: "2026-12-02T17:00:00Z"
host: {cpu_brand: "AMD EPYC 9654", logical_cpus: 16, physical_cores: 8, available_parallelism: 16, simd: [avx512f], os: Linux, kernel: "6.8"}
cpu: {clock_ghz_measured: 3.6, fp32_gflops: {theoretical: 1843.2, measured: 1230.4, method: "8 threads FMA"}}
memory: {total_gib: 128.0, bandwidth_gbs: {theoretical: null, measured: 61.2, method: "stream triad"}}
disk: {path: "/w", fs: ext4, method: "o_direct 1 MiB", read_mbs: {qd1: {median: 812.0, min: 800.0, max: 830.0, runs: 3}, qd4: {median: 2950.0, min: 2900.0, max: 3000.0, runs: 3}}, write_mbs: {qd1: null, qd4: null}}
gpus:
  - index: 0
    name: "NVIDIA H100 80GB HBM3"
    pci_device_id: "0x2330"
    memory_gib: 79.6
    driver: "550.54"
    cuda: "12.4"
    compute_capability: "9.0"
    sm_count: 132
    clocks_mhz: {sm_max: 1980, mem_max: 2619}
    pcie: {gen: 5, width: 16, theoretical_gbs_per_dir: 63.0}
    power_limit_w: 700.0
    throttle_reasons: []
    fp32_tflops: {datasheet: 66.9, measured: null}
    tf32_tflops: {datasheet: 494.7, measured: null}
    fp16_bf16_tflops: {datasheet: 989.4, measured: null}
    fp8_tflops: {datasheet: 1978.9, measured: null}
    mem_bandwidth_gbs: {datasheet: 3350.0, measured: null}
    h2d_gbs: null
    d2h_gbs: null
    table_match: "H100 SXM5"
    mig_enabled: false
    ecc_enabled: true
warnings: []
"#;
        Ceilings::from_yaml(yaml).unwrap()
    }

    #[test]
    fn sig_figures() {
        assert_eq!(sig(989.4), "989");
        assert_eq!(sig(61.26), "61.3");
        assert_eq!(sig(6.0), "6");
        assert_eq!(sig(0.126), "0.13");
    }

    #[test]
    fn snapshot() {
        let mut report = sample();
        report.ceilings = Some(ceilings());
        insta::assert_snapshot!(render(&report));
    }
}
