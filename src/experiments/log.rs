//! `experiments/<strategy>[-<variant>].log`: one plain-text log per variant tried — the patch,
//! every run's raw figures, the statistics, the gate, the sampled saturation and the status.
//! A pure renderer: data in, text out.

use std::fmt::Write as _;

use super::sampler::{GpuSampling, MeasuredSaturation};
use super::stats::{Direction, Summary};
use super::{ExperimentResult, Gate, RunRecord};

/// Everything one log shows.
#[derive(Debug)]
pub struct LogContent<'a> {
    /// The result (status, statistics, gate, reason).
    pub result: &'a ExperimentResult,
    /// The benchmark command.
    pub command: &'a str,
    /// The unified diff of the patch (empty for the baseline).
    pub diff: &'a str,
    /// Every run, warm-ups included.
    pub runs: &'a [RunRecord],
    /// What the figure is.
    pub direction: Direction,
    /// Saturation sampled during the baseline runs.
    pub saturation: Option<&'a MeasuredSaturation>,
    /// Output tail of a failing run, when one failed.
    pub failure_output: Option<&'a str>,
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

fn summary_line(name: &str, s: Option<&Summary>) -> String {
    match s {
        Some(s) => format!(
            "{name:<10} n={:<3} median={:.4} min={:.4} max={:.4} IQR={:.4} cv={:.1} %",
            s.n,
            s.median,
            s.min,
            s.max,
            s.iqr(),
            s.cv * 100.0
        ),
        None => format!("{name:<10} no successful runs"),
    }
}

/// Renders the log text.
#[must_use]
pub fn render(c: &LogContent<'_>) -> String {
    let r = c.result;
    let mut out = String::new();
    let _ = writeln!(out, "# efficiency-audit experiment");
    let _ = writeln!(out, "strategy:      {}", r.strategy);
    let _ = writeln!(
        out,
        "variant:       {}",
        r.variant.as_deref().unwrap_or("-")
    );
    let _ = writeln!(out, "applicability: {}", r.applicability_label());
    let _ = writeln!(out, "command:       {}", c.command);
    let figure = match c.direction {
        Direction::HigherIsBetter => "metric-regex throughput (higher is better)",
        Direction::LowerIsBetter => "wall time in seconds (lower is better)",
    };
    let _ = writeln!(out, "figure:        {figure}");
    let _ = writeln!(out, "status:        {}", r.status.label());
    let _ = writeln!(out, "reason:        {}", r.reason);
    let _ = writeln!(out, "\n## Patch");
    if c.diff.trim().is_empty() {
        let _ = writeln!(out, "(none: the code as it is)");
    } else {
        let _ = writeln!(out, "{}", c.diff.trim_end());
    }
    let _ = writeln!(out, "\n## Runs");
    let _ = writeln!(
        out,
        "{:<10} {:>4} {:>10} {:>14} {:>14}  exit",
        "side", "run", "wall_s", "metric", "check"
    );
    for run in c.runs {
        let _ = writeln!(
            out,
            "{:<10} {:>4} {:>10.4} {:>14} {:>14}  {}",
            run.side.label(),
            run.index,
            run.wall_s,
            opt(run.metric, 4),
            opt(run.check, 6),
            run.exit.describe()
        );
    }
    let _ = writeln!(out, "\n## Statistics");
    let _ = writeln!(out, "{}", summary_line("baseline", r.baseline.as_ref()));
    if r.strategy != "baseline" {
        let _ = writeln!(out, "{}", summary_line("candidate", r.candidate.as_ref()));
        let _ = writeln!(
            out,
            "speed-up (geometric mean of the pairs): {}×; 95 % CI [{}, {}] (paired log-ratio t-interval over {} interleaved pairs); decision: {}",
            opt(r.speedup, 3),
            opt(r.ci_low, 3),
            opt(r.ci_high, 3),
            r.pairs,
            r.decision
                .map_or("-".to_owned(), |d| format!("{d:?}").to_lowercase())
        );
        let _ = writeln!(
            out,
            "a speed-up counts only when the interval's low end is above 1.0"
        );
    }
    let _ = writeln!(out, "\n## Correctness gate");
    let _ = writeln!(out, "{}", r.gate.describe());
    let _ = writeln!(
        out,
        "\n## Measured saturation (sampled during the baseline runs)"
    );
    match c.saturation {
        Some(m) => {
            let pct = |v: Option<f64>| {
                v.map_or_else(|| "unknown".to_owned(), |v| format!("{:.0} %", v * 100.0))
            };
            let s = &m.saturation;
            let _ = writeln!(out, "cpu: {} — {}", pct(s.cpu.value), s.cpu.reason);
            let _ = writeln!(out, "io:  {} — {}", pct(s.io.value), s.io.reason);
            let _ = writeln!(out, "gpu: {} — {}", pct(s.gpu.value), s.gpu.reason);
            if let GpuSampling::Sampled { devices } = &m.gpus {
                for d in devices {
                    let _ = writeln!(
                        out,
                        "  GPU{} {}: util {}/{} % (mean/max), memory util {} %, PCIe tx/rx {}/{} MB/s, power {} W (max {}), SM clock {} MHz, memory clock {} MHz, throttle: {}; GPM SM {} %, tensor {} %, DRAM {} %{}",
                        d.index,
                        d.name,
                        opt(d.util_gpu.value(), 0),
                        opt(d.util_gpu.value().map(|_| d.util_gpu.max), 0),
                        opt(d.util_memory.value(), 0),
                        opt(d.pcie_tx_mbs.value(), 0),
                        opt(d.pcie_rx_mbs.value(), 0),
                        opt(d.power_w.value(), 0),
                        opt(d.power_w.value().map(|_| d.power_w.max), 0),
                        opt(d.sm_clock_mhz.value(), 0),
                        opt(d.mem_clock_mhz.value(), 0),
                        if d.throttle_reasons.is_empty() {
                            "none".to_owned()
                        } else {
                            d.throttle_reasons.join(", ")
                        },
                        opt(d.gpm_sm_util.value(), 0),
                        opt(d.gpm_tensor_util.value(), 0),
                        opt(d.gpm_dram_bw_util.value(), 0),
                        d.gpm_note
                            .as_ref()
                            .map_or(String::new(), |n| format!(" ({n})")),
                    );
                }
            }
            let _ = writeln!(
                out,
                "sampler: {} samples over {:.1} s; its own CPU {:.4} s = {:.2} % of one core",
                m.samples,
                m.sampled_s,
                m.sampler_cpu_s,
                m.sampler_core_fraction * 100.0
            );
        }
        None => {
            let _ = writeln!(out, "not sampled");
        }
    }
    if let Some(tail) = c.failure_output {
        let _ = writeln!(out, "\n## Output of the failing run (last lines)");
        let _ = writeln!(out, "{}", tail.trim_end());
    }
    out
}

impl Gate {
    /// One paragraph for the log.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Gate::NotConfigured => "not configured (no bench.check-regex); the candidate must exit 0".to_owned(),
            Gate::Passed { baseline, worst_rel_dev, rtol } => format!(
                "passed: every candidate check value within rtol {rtol} of the baseline's {baseline} (worst relative deviation {worst_rel_dev:.3e})"
            ),
            Gate::Failed { reason } => format!("FAILED: {reason}"),
            Gate::Unverified => {
                "speed-up measured, correctness unverified: this strategy changes floating-point results and no bench.check-regex is configured".to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::analysis::model::{Applicability, Estimate, Saturation};
    use crate::experiments::runner::ExitKind;
    use crate::experiments::sampler::{GpuStats, Stat};
    use crate::experiments::stats::Decision;
    use crate::experiments::{Side, Status};

    fn stat(mean: f64, max: f64) -> Stat {
        Stat { n: 4, mean, max }
    }

    #[test]
    fn log_snapshot() {
        let base = Summary::of(&[2.0, 2.1, 1.9]).unwrap();
        let cand = Summary::of(&[1.0, 1.05, 0.98]).unwrap();
        let result = ExperimentResult {
            strategy: "parallel-data-loading".into(),
            variant: Some("workers-2".into()),
            applicability: Some(Applicability::Safe),
            status: Status::Passed,
            speedup: Some(2.0),
            ci_low: Some(1.83),
            ci_high: Some(2.17),
            pairs: 3,
            decision: Some(Decision::Faster),
            baseline: Some(base),
            candidate: Some(cand),
            gate: Gate::Passed {
                baseline: 0.4321,
                worst_rel_dev: 0.0,
                rtol: 0.01,
            },
            log: PathBuf::from("experiments/parallel-data-loading-workers-2.log"),
            reason: "measured speed-up 2.00×, 95 % CI [1.83, 2.17]".into(),
        };
        let run = |side, index, wall_s| RunRecord {
            side,
            index,
            wall_s,
            metric: None,
            check: Some(0.4321),
            exit: ExitKind::Code(0),
        };
        let runs = [
            run(Side::CandidateWarmup, 1, 1.2),
            run(Side::Baseline, 1, 2.0),
            run(Side::Candidate, 1, 1.0),
            run(Side::Baseline, 2, 2.1),
            run(Side::Candidate, 2, 1.05),
            run(Side::Baseline, 3, 1.9),
            run(Side::Candidate, 3, 0.98),
        ];
        let gpu = GpuStats {
            index: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            util_gpu: stat(35.0, 60.0),
            util_memory: stat(12.0, 20.0),
            pcie_tx_mbs: stat(150.0, 400.0),
            pcie_rx_mbs: stat(2400.0, 5000.0),
            power_w: stat(210.0, 280.0),
            sm_clock_mhz: stat(1980.0, 1980.0),
            mem_clock_mhz: stat(2619.0, 2619.0),
            throttle_reasons: vec!["SW_POWER_CAP".into()],
            gpm_sm_util: stat(30.0, 55.0),
            gpm_tensor_util: stat(4.0, 9.0),
            gpm_dram_bw_util: stat(8.0, 15.0),
            gpm_note: None,
        };
        let sat = MeasuredSaturation {
            saturation: Saturation {
                gpu: Estimate {
                    value: Some(0.30),
                    reason: "GPU0: SM busy 30 %".into(),
                },
                cpu: Estimate {
                    value: Some(0.51),
                    reason: "process tree used 1.02 of 2 CPUs".into(),
                },
                io: Estimate {
                    value: None,
                    reason: "no measured disk ceiling".into(),
                },
            },
            sampled_s: 6.0,
            cpu_mean_cores: 1.02,
            cpu_peak_cores: 1.1,
            logical_cpus: 2,
            max_processes: 2,
            machine_cpu_cores: 1.1,
            read_mbs: 0.0,
            write_mbs: 1.0,
            gpus: GpuSampling::Sampled { devices: vec![gpu] },
            sampler_cpu_s: 0.012,
            sampler_core_fraction: 0.002,
            samples: 24,
        };
        let text = render(&LogContent {
            result: &result,
            command: "python train.py --max-steps 50",
            diff: "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-DataLoader(ds)\n+DataLoader(ds, num_workers=2)\n",
            runs: &runs,
            direction: Direction::LowerIsBetter,
            saturation: Some(&sat),
            failure_output: None,
        });
        insta::assert_snapshot!(text);
    }
}
