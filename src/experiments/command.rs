//! `efficiency-audit experiment`: step 4 standalone, with its inputs on the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;

use super::sampler::GpuSampling;
use super::{ExperimentCandidate, ExperimentsOutcome, Settings, result_line, run_experiments};
use crate::ceilings::model::Ceilings;
use crate::cli::GlobalArgs;
use crate::config::{Config, parse_duration_secs};
use crate::exit::ExitStatus;
use crate::progress::Console;
use crate::verdict::{Basis, decide};

/// Flags of `efficiency-audit experiment`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExperimentArgs {
    /// The audited folder (never modified: every run happens in a scratch copy).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Benchmark command, run as `sh -c CMD` in the copy [default: bench.command].
    #[arg(long, value_name = "CMD")]
    pub bench: Option<String>,
    /// Regex whose first group is a throughput (higher is better) [default: wall time].
    #[arg(long, value_name = "REGEX")]
    pub metric_regex: Option<String>,
    /// Regex whose first group must match the baseline's value (correctness gate).
    #[arg(long, value_name = "REGEX")]
    pub check_regex: Option<String>,
    /// Relative tolerance of the correctness gate.
    #[arg(long, value_name = "RTOL")]
    pub check_rtol: Option<f64>,
    /// Warm-up runs per side.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// Fewest measured runs per side.
    #[arg(long, value_name = "N")]
    pub min_runs: Option<u32>,
    /// Most measured runs per side.
    #[arg(long, value_name = "N")]
    pub max_runs: Option<u32>,
    /// Per-run timeout (600, 90s, 10m, 1h).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Total time budget.
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// Candidates to benchmark: a JSON list of ExperimentCandidate (step 3's output). Without
    /// it, only the baseline runs: its noise and measured saturation.
    #[arg(long, value_name = "FILE")]
    pub candidates: Option<PathBuf>,
    /// theoretical_limits.yaml for the CPU count and disk ceiling [default: the one in the
    /// output folder, when present].
    #[arg(long, value_name = "FILE")]
    pub ceilings: Option<PathBuf>,
    /// Sampler interval in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 250, value_parser = clap::value_parser!(u64).range(100..=5000))]
    pub sample_ms: u64,
    /// GitHub Actions log mode (`::group::` folding, no live line); set from GITHUB_ACTIONS.
    #[arg(long, env = "GITHUB_ACTIONS", hide = true, default_value = "false", value_parser = clap::builder::BoolishValueParser::new())]
    pub github_actions: bool,
}

fn duration(flag: &str, text: &Option<String>) -> anyhow::Result<Option<Duration>> {
    text.as_deref()
        .map(|t| {
            parse_duration_secs(t)
                .filter(|s| s.is_finite() && *s > 0.0)
                .map(Duration::from_secs_f64)
                .with_context(|| format!("{flag} {t:?}: write seconds (600) or a number with s, m or h (90s, 10m, 1h)"))
        })
        .transpose()
}

/// Resolves the configuration: file, then flags.
fn config(global: &GlobalArgs, args: &ExperimentArgs) -> anyhow::Result<Config> {
    let mut cfg = Config::discover(global.config.as_deref(), &args.dir)?;
    let b = &mut cfg.bench;
    if args.bench.is_some() {
        b.command.clone_from(&args.bench);
    }
    if args.metric_regex.is_some() {
        b.metric_regex.clone_from(&args.metric_regex);
    }
    if args.check_regex.is_some() {
        b.check_regex.clone_from(&args.check_regex);
    }
    b.check_rtol = args.check_rtol.unwrap_or(b.check_rtol);
    b.warmup = args.warmup.unwrap_or(b.warmup);
    b.min_runs = args.min_runs.unwrap_or(b.min_runs);
    b.max_runs = args.max_runs.unwrap_or(b.max_runs);
    b.timeout = duration("--timeout", &args.timeout)?.unwrap_or(b.timeout);
    b.budget = duration("--budget", &args.budget)?.unwrap_or(b.budget);
    cfg.validate(Path::new("command line"))?;
    Ok(cfg)
}

/// Runs `efficiency-audit experiment`.
pub fn command(global: &GlobalArgs, args: &ExperimentArgs) -> anyhow::Result<ExitStatus> {
    let _ = crate::cleanup::install();
    let console = Console::detect(global.quiet, args.github_actions);
    let cfg = config(global, args)?;
    let output_dir = global
        .output_dir
        .clone()
        .unwrap_or_else(|| args.dir.join(&cfg.output_dir));
    let ceilings_path = args
        .ceilings
        .clone()
        .or_else(|| Some(output_dir.join("theoretical_limits.yaml")).filter(|p| p.is_file()));
    let ceilings = match &ceilings_path {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(
                Ceilings::from_yaml(&text)
                    .with_context(|| format!("parsing {}", path.display()))?,
            )
        }
        None => None,
    };
    let candidates: Vec<ExperimentCandidate> = match &args.candidates {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not a JSON list of experiment candidates",
                    path.display()
                )
            })?
        }
        None => Vec::new(),
    };
    let settings = Settings {
        dir: &args.dir,
        output_dir: &output_dir,
        bench: &cfg.bench,
        strategies: &cfg.strategies,
        ceilings: ceilings.as_ref(),
        sample_interval: Duration::from_millis(args.sample_ms),
    };
    if candidates.is_empty() {
        console.status("no candidates given (--candidates): measuring the baseline only — its noise and what it saturates");
    }
    let outcome = run_experiments(&settings, &candidates, &console)?;
    let json_path = output_dir.join("experiments").join("outcome.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&outcome)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    print_summary(&console, &outcome, cfg.threshold);
    console.status(&format!(
        "wrote {} and the logs beside it",
        json_path.display()
    ));
    Ok(ExitStatus::Success)
}

fn print_summary(console: &Console, outcome: &ExperimentsOutcome, threshold: f64) {
    let b = &outcome.baseline;
    let n = &b.noise;
    console.status(&format!(
        "noise: cv {:.1} % over {} runs{}{}",
        n.cv * 100.0,
        b.summary.n,
        n.pairs_for_10pct.map_or(String::new(), |p| format!(
            "; a 10 % speed-up needs ≈ {p} interleaved pairs (80 % power)"
        )),
        n.simulated_10pct
            .as_ref()
            .map_or(String::new(), |s| format!(
                "; simulated: detected in {:.0} % of trials, median {} pairs",
                s.detected * 100.0,
                s.median_pairs
            ))
    ));
    if let Some(m) = &outcome.measured_saturation {
        let pct = |v: Option<f64>| {
            v.map_or_else(|| "unknown".to_owned(), |v| format!("{:.0} %", v * 100.0))
        };
        let s = &m.saturation;
        console.status(&format!(
            "measured cpu: {} — {}",
            pct(s.cpu.value),
            s.cpu.reason
        ));
        console.status(&format!(
            "measured io:  {} — {}",
            pct(s.io.value),
            s.io.reason
        ));
        console.status(&format!(
            "measured gpu: {} — {}",
            pct(s.gpu.value),
            s.gpu.reason
        ));
        if let GpuSampling::Sampled { devices } = &m.gpus {
            for d in devices.iter().filter(|d| !d.throttle_reasons.is_empty()) {
                console.status(&format!(
                    "GPU{} throttled: {}",
                    d.index,
                    d.throttle_reasons.join(", ")
                ));
            }
        }
        console.status(&format!(
            "sampler cost: {:.2} % of one core ({} samples)",
            m.sampler_core_fraction * 100.0,
            m.samples
        ));
        console.status(&decide(s, Basis::Measured, threshold).headline());
    }
    for r in outcome.results.iter().chain(outcome.stacked.iter()) {
        console.status(&result_line(r));
    }
    for note in &outcome.notes {
        console.status(&format!("note: {note}"));
    }
}
