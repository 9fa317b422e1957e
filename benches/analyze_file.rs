//! Per-file latency of the analyzer alone (no process start, no file IO, no rendering):
//! `analysis::analyze_file` on tests/fixtures/bench/train_1000.py, a 1,000-line training
//! script. A plain harness (no criterion): `cargo bench --bench analyze_file`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark harness: failing loudly is the right outcome"
)]

use std::hint::black_box;
use std::time::Instant;

use efficiency_audit::analysis::analyze_file;
use efficiency_audit::config::Rules;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/bench/train_1000.py"
    );
    let source = std::fs::read(path).expect("tests/fixtures/bench/train_1000.py");
    let lines = source.iter().filter(|&&b| b == b'\n').count();
    let rules = Rules::default();
    for _ in 0..20 {
        black_box(analyze_file("train_1000.py", black_box(&source), &rules));
    }
    let mut samples: Vec<f64> = (0..300)
        .map(|_| {
            let start = Instant::now();
            black_box(analyze_file("train_1000.py", black_box(&source), &rules));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let analysis = analyze_file("train_1000.py", &source, &rules);
    println!(
        "analyze_file on {lines} lines ({} findings, {} hot loops), {} runs: median {:.0} µs, \
         p10 {:.0} µs, p90 {:.0} µs ({:.0} lines/ms)",
        analysis.findings.len(),
        analysis.hot_loops.len(),
        samples.len(),
        pick(0.5),
        pick(0.1),
        pick(0.9),
        lines as f64 / (pick(0.5) / 1000.0)
    );
}
