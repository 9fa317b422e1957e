//! Per-file latency of the analyzer alone (no process start, no file IO, no rendering):
//! `analysis::analyze_file` on tests/fixtures/bench/train_1000.py, a 1,000-line training
//! script, next to a bare tree-sitter-python parse of the same bytes (the floor any
//! tree-sitter-based analyzer pays) and the pre-parse scan alone (what every file pays, parsed
//! or not). A plain harness (no criterion):
//! `cargo bench --bench analyze_file`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark harness: failing loudly is the right outcome"
)]

use std::hint::black_box;
use std::time::Instant;

use efficiency_audit::analysis::{analyze_file, prefilter};
use efficiency_audit::config::Rules;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bench/train_1000.py"
    );
    let source = std::fs::read(path).expect("tests/fixtures/bench/train_1000.py");
    let lines = source.iter().filter(|&&b| b == b'\n').count();
    let rules = Rules::default();
    let analyse = median_us(|| {
        black_box(analyze_file("train_1000.py", black_box(&source), &rules));
    });
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("tree-sitter-python loads");
    let parse = median_us(|| {
        black_box(parser.parse(black_box(&source), None));
    });
    let text = std::str::from_utf8(&source).expect("UTF-8");
    let scan = median_us(|| {
        black_box(prefilter::may_matter(black_box(text)));
    });
    let analysis = analyze_file("train_1000.py", &source, &rules);
    println!(
        "analyze_file on {lines} lines ({} findings, {} hot loops), 300 runs: median {:.0} µs \
         (p10 {:.0}, p90 {:.0}); {:.0} lines/ms",
        analysis.findings.len(),
        analysis.hot_loops.len(),
        analyse.1,
        analyse.0,
        analyse.2,
        lines as f64 / (analyse.1 / 1000.0)
    );
    println!(
        "tree-sitter-python parse alone, same file: median {:.0} µs (p10 {:.0}, p90 {:.0}) = {:.0} % \
         of analyze_file",
        parse.1,
        parse.0,
        parse.2,
        parse.1 / analyse.1 * 100.0
    );
    println!(
        "pre-parse scan alone (prefilter::may_matter), same file: median {:.0} µs (p10 {:.0}, \
         p90 {:.0}) = {:.0} % of analyze_file",
        scan.1,
        scan.0,
        scan.2,
        scan.1 / analyse.1 * 100.0
    );
}

/// (p10, median, p90) in µs of 300 timed runs after 20 warm-ups.
fn median_us(mut f: impl FnMut()) -> (f64, f64, f64) {
    for _ in 0..20 {
        f();
    }
    let mut samples: Vec<f64> = (0..300)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (pick(0.1), pick(0.5), pick(0.9))
}
