//! Step 4: benchmark candidate patches before and after, and measure the saturation.
//!
//! ```text
//! candidates (step 3) ─► scratch copy + patch ─► warm-ups ─► A B A B … (baseline, candidate)
//!     ─► stats (median, 95 % CI, sequential stop) ─► gate ─► PASSED / FAILED / SKIPPED ─► stacked
//! ```
//!
//! The baseline runs first, alone, with the sampler watching it: that gives the benchmark's
//! noise, the reference value of the correctness check and the **measured saturation** (the
//! verdict's `measured` basis). A broken baseline stops everything with a message saying the
//! benchmark itself is broken — never a fake result. Without candidates this is a useful mode
//! of its own: how noisy is my benchmark, and what does it saturate.
//!
//! Failure rule (seed): a variant without a measurable speed-up, with a broken gate or a
//! non-zero exit is FAILED in its log; the next variant of the strategy is tried (at most
//! [`MAX_VARIANTS`]), then the next-ranked strategy, until `strategies.max` winners; then all
//! winners are stacked and measured together.

pub mod log;
pub mod runner;
pub mod sampler;
pub mod scratch;
pub mod stats;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::analysis::model::Applicability;
use crate::ceilings::model::Ceilings;
use crate::config::{Bench, Strategies};
use crate::progress::{Console, Progress, clock};
use runner::{CommandRunner, ExitKind, RunOutput, RunRequest, SystemRunner};
use sampler::{MeasuredSaturation, ProcessSampling, SamplerConfig};
use scratch::Scratch;
use stats::{Decision, Direction, Interval, Simulation, Summary};

/// At most this many variants of one strategy are tried (seed failure rule).
pub const MAX_VARIANTS: usize = 3;

/// The speed-up whose cost in runs the baseline's noise figure reports (10 %).
pub const REFERENCE_EFFECT: f64 = 1.10;

/// One file of a candidate's patch: the whole new text, and the text it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilePatch {
    /// Path relative to the audited folder (no `..`, not absolute).
    pub path: PathBuf,
    /// The file's content the patch was made from; the variant is skipped with "patch target
    /// changed" when the file differs. Empty for a file the patch creates.
    pub expected_original: String,
    /// The file's content after the patch.
    pub new_text: String,
}

/// One candidate to benchmark: a strategy's variant as a patch. Step 3 produces these, in
/// rank order (best first); variants of one strategy share its `id` and are tried in the order
/// given. As JSON (`experiment --candidates FILE` takes a list of these):
///
/// ```json
/// {"id": "parallel-processing", "variant": "workers-2", "applicability": "safe",
///  "patch": [{"path": "pipeline.py", "expected_original": "<whole file>", "new_text": "<whole file>"}],
///  "diff": "--- a/pipeline.py\n+++ b/pipeline.py\n@@ ..."}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentCandidate {
    /// Strategy id, e.g. `parallel-data-loading`; names the log file.
    pub id: String,
    /// Variant name, e.g. `workers-4`; `None` when the strategy has one form.
    pub variant: Option<String>,
    /// `safe` runs; `numerics` runs only with `strategies.allow-numerics` and needs
    /// `bench.check-regex` to be verified; `manual` is never run.
    pub applicability: Applicability,
    /// Whole-file replacements.
    pub patch: Vec<FilePatch>,
    /// Unified diff of the patch, shown in the log and the report.
    pub diff: String,
}

impl ExperimentCandidate {
    /// `id` or `id-variant`, the log's file stem (characters outside `[A-Za-z0-9._-]` → `_`).
    #[must_use]
    pub fn label(&self) -> String {
        label(&self.id, self.variant.as_deref())
    }
}

fn label(id: &str, variant: Option<&str>) -> String {
    let raw = match variant {
        Some(v) => format!("{id}-{v}"),
        None => id.to_owned(),
    };
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What happened to a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A measured speed-up: the 95 % interval is above 1.0, and the gate held.
    Passed,
    /// No measurable speed-up, a broken gate or a failing run.
    Failed,
    /// Not run (patch target changed, numerics not allowed, budget spent, ...).
    Skipped,
}

impl Status {
    /// `PASSED`, `FAILED`, `SKIPPED`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Status::Passed => "PASSED",
            Status::Failed => "FAILED",
            Status::Skipped => "SKIPPED",
        }
    }
}

/// Which side a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// A baseline warm-up (not measured).
    BaselineWarmup,
    /// A candidate warm-up (not measured).
    CandidateWarmup,
    /// The unpatched code.
    Baseline,
    /// The patched code.
    Candidate,
}

impl Side {
    /// Short name for logs.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Side::BaselineWarmup => "warmup-A",
            Side::CandidateWarmup => "warmup-B",
            Side::Baseline => "baseline",
            Side::Candidate => "candidate",
        }
    }
}

/// One run's raw figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Which side.
    pub side: Side,
    /// 1-based index within its side.
    pub index: usize,
    /// Wall time (s).
    pub wall_s: f64,
    /// The `metric-regex` figure, if configured and matched.
    pub metric: Option<f64>,
    /// The `check-regex` figure, if configured and matched.
    pub check: Option<f64>,
    /// How it ended.
    pub exit: ExitKind,
}

/// The correctness gate's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Gate {
    /// No `check-regex`: exit status 0 is the only check.
    NotConfigured,
    /// Every candidate value matched the baseline's within `rtol`.
    Passed {
        /// The baseline's value.
        baseline: f64,
        /// Largest |cand − base| / |base| seen.
        worst_rel_dev: f64,
        /// The tolerance.
        rtol: f64,
    },
    /// A value missing or outside the tolerance.
    Failed {
        /// What differed.
        reason: String,
    },
    /// A `numerics` strategy measured without a `check-regex`.
    Unverified,
}

/// The result of one variant (or of the stacked winners).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentResult {
    /// Strategy id (`baseline` for the baseline's own log, `stacked` for the winners together).
    pub strategy: String,
    /// Variant, if any.
    pub variant: Option<String>,
    /// How safe the patch is (`None` for the baseline).
    pub applicability: Option<Applicability>,
    /// Passed, failed or skipped.
    pub status: Status,
    /// Geometric mean of the paired speed-ups, the centre of `ci_low..ci_high` (> 1 is
    /// faster); the ratio of the medians when there is only one pair.
    pub speedup: Option<f64>,
    /// Low end of the 95 % interval.
    pub ci_low: Option<f64>,
    /// High end of the 95 % interval.
    pub ci_high: Option<f64>,
    /// Interleaved pairs measured.
    pub pairs: usize,
    /// What the sequential rule decided.
    pub decision: Option<Decision>,
    /// Baseline runs of this comparison.
    pub baseline: Option<Summary>,
    /// Candidate runs.
    pub candidate: Option<Summary>,
    /// Correctness gate.
    pub gate: Gate,
    /// The log, relative to the output folder (`experiments/<label>.log`).
    pub log: PathBuf,
    /// One line: why this status.
    pub reason: String,
}

impl ExperimentResult {
    fn new(
        strategy: &str,
        variant: Option<&str>,
        applicability: Option<Applicability>,
        log: PathBuf,
    ) -> Self {
        Self {
            strategy: strategy.to_owned(),
            variant: variant.map(str::to_owned),
            applicability,
            status: Status::Skipped,
            speedup: None,
            ci_low: None,
            ci_high: None,
            pairs: 0,
            decision: None,
            baseline: None,
            candidate: None,
            gate: Gate::NotConfigured,
            log,
            reason: String::new(),
        }
    }

    /// `safe`, `numerics`, `manual` or `-`.
    #[must_use]
    pub fn applicability_label(&self) -> &'static str {
        match self.applicability {
            Some(Applicability::Safe) => "safe",
            Some(Applicability::Numerics) => "numerics",
            Some(Applicability::Manual) => "manual",
            None => "-",
        }
    }
}

/// How noisy the benchmark is on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Coefficient of variation of the baseline runs.
    pub cv: f64,
    /// Estimated standard deviation of one pair's log speed-up (√2 × sd of the log runs).
    pub pair_log_sd: Option<f64>,
    /// Pairs needed to detect a 10 % speed-up with 80 % probability (normal approximation).
    pub pairs_for_10pct: Option<usize>,
    /// The sequential rule simulated on resampled baseline runs with a true 10 % speed-up.
    pub simulated_10pct: Option<Simulation>,
}

/// The baseline: the benchmark as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineResult {
    /// What the figure is.
    pub direction: Direction,
    /// Median and spread of the measured runs.
    pub summary: Summary,
    /// Every run, warm-ups included.
    pub runs: Vec<RunRecord>,
    /// The reference value of the correctness check.
    pub check_value: Option<f64>,
    /// Noise figures.
    pub noise: Noise,
    /// `experiments/baseline.log`.
    pub log: PathBuf,
}

/// Everything step 4 produces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentsOutcome {
    /// The benchmark as it is.
    pub baseline: BaselineResult,
    /// One per variant considered, in the order tried.
    pub results: Vec<ExperimentResult>,
    /// All winners together, when there were two or more (or why they were not stacked).
    pub stacked: Option<ExperimentResult>,
    /// Saturation sampled during the baseline runs (verdict basis `measured`).
    pub measured_saturation: Option<MeasuredSaturation>,
    /// Things the user should know (budget ran out, candidates filtered, ...).
    pub notes: Vec<String>,
}

impl ExperimentsOutcome {
    /// The best passed result (stacked included), by speed-up.
    #[must_use]
    pub fn best(&self) -> Option<&ExperimentResult> {
        self.results
            .iter()
            .chain(self.stacked.iter())
            .filter(|r| r.status == Status::Passed)
            .max_by(|a, b| {
                a.speedup
                    .unwrap_or(0.0)
                    .total_cmp(&b.speedup.unwrap_or(0.0))
            })
    }
}

/// Why step 4 could not produce results.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// No benchmark command configured.
    #[error(
        "no benchmark command: pass --bench 'python train.py --max-steps 50' or set bench.command in efficiency-audit.yml"
    )]
    NoCommand,
    /// A regex does not compile.
    #[error("{key} is not a valid regex: {message}")]
    BadRegex {
        /// `bench.metric-regex` or `bench.check-regex`.
        key: &'static str,
        /// The regex error.
        message: String,
    },
    /// The baseline run failed: the benchmark itself is broken.
    #[error(
        "the benchmark itself is broken — {reason}\n  the command runs as `sh -c` in a copy of the audited folder; run it there by hand to see why\n  log: {log}"
    )]
    BaselineBroken {
        /// What failed.
        reason: String,
        /// The baseline log.
        log: String,
    },
    /// The scratch copy could not be made.
    #[error("cannot make a scratch copy of {dir}: {source}")]
    Scratch {
        /// The audited folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A log could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Where and how to run the experiments.
#[derive(Debug, Clone)]
pub struct Settings<'a> {
    /// The audited folder (never modified).
    pub dir: &'a Path,
    /// Where `experiments/` goes (left out of scratch copies when inside `dir`).
    pub output_dir: &'a Path,
    /// The benchmark.
    pub bench: &'a Bench,
    /// Which strategies, how many winners, numerics allowed.
    pub strategies: &'a Strategies,
    /// Measured ceilings (CPU count and disk ceiling for the saturation), if step 1 ran.
    pub ceilings: Option<&'a Ceilings>,
    /// Sampler interval (default [`sampler::DEFAULT_INTERVAL`]).
    pub sample_interval: Duration,
}

/// Runs step 4 with the real process runner. See [`run_experiments_with`].
pub fn run_experiments(
    settings: &Settings<'_>,
    candidates: &[ExperimentCandidate],
    console: &Console,
) -> Result<ExperimentsOutcome, ExperimentError> {
    run_experiments_with(&SystemRunner, settings, candidates, console)
}

/// Runs step 4: the baseline (with sampling), then the candidates in rank order under the
/// failure rule, then the winners stacked. Without candidates the baseline runs up to
/// `max-runs` times to measure the benchmark's noise. Writes one log per variant under
/// `output_dir/experiments/`.
pub fn run_experiments_with(
    runner: &dyn CommandRunner,
    settings: &Settings<'_>,
    candidates: &[ExperimentCandidate],
    console: &Console,
) -> Result<ExperimentsOutcome, ExperimentError> {
    let command = settings
        .bench
        .command
        .as_deref()
        .ok_or(ExperimentError::NoCommand)?;
    let compile = |key: &'static str, re: &Option<String>| {
        re.as_deref()
            .map(regex::Regex::new)
            .transpose()
            .map_err(|e| ExperimentError::BadRegex {
                key,
                message: e.to_string(),
            })
    };
    let exp_dir = settings.output_dir.join("experiments");
    std::fs::create_dir_all(&exp_dir).map_err(|source| ExperimentError::Write {
        path: exp_dir.clone(),
        source,
    })?;
    let mut engine = Engine {
        runner,
        settings,
        command,
        metric: compile("bench.metric-regex", &settings.bench.metric_regex)?,
        check: compile("bench.check-regex", &settings.bench.check_regex)?,
        direction: if settings.bench.metric_regex.is_some() {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        },
        deadline: Instant::now() + settings.bench.budget,
        console,
        progress: Progress::new(*console),
        sampler: sampler_config(settings),
        typical_run: Duration::ZERO,
        saturation: None,
    };
    let exclude = vec![settings.output_dir.to_path_buf()];
    let base_copy =
        Scratch::create(settings.dir, &exclude).map_err(|source| ExperimentError::Scratch {
            dir: settings.dir.to_path_buf(),
            source,
        })?;
    console.group("Baseline: the benchmark as it is");
    let baseline = engine.baseline(base_copy.path(), candidates.is_empty());
    console.end_group();
    let (baseline, saturation) = baseline?;
    engine.saturation.clone_from(&saturation);
    let mut outcome = ExperimentsOutcome {
        baseline,
        results: Vec::new(),
        stacked: None,
        measured_saturation: saturation,
        notes: Vec::new(),
    };
    engine.candidates(base_copy.path(), candidates, &mut outcome)?;
    engine.progress.clear();
    drop(base_copy);
    Ok(outcome)
}

fn sampler_config(settings: &Settings<'_>) -> SamplerConfig {
    let mut cfg = SamplerConfig::for_this_machine();
    cfg.interval = settings.sample_interval;
    if let Some(c) = settings.ceilings {
        cfg.logical_cpus = c.host.logical_cpus.max(1);
        cfg.disk_read_mbs = c.disk.read_mbs.qd4.as_ref().map(|s| s.median);
        cfg.disk_write_mbs = c.disk.write_mbs.qd4.as_ref().map(|s| s.median);
    }
    cfg
}

struct Engine<'a> {
    runner: &'a dyn CommandRunner,
    settings: &'a Settings<'a>,
    command: &'a str,
    metric: Option<regex::Regex>,
    check: Option<regex::Regex>,
    direction: Direction,
    deadline: Instant,
    console: &'a Console,
    progress: Progress,
    sampler: SamplerConfig,
    /// Median wall time of a baseline run: a run is only started when this much budget is left.
    typical_run: Duration,
    /// What the sampler measured during the baseline, repeated in every log.
    saturation: Option<MeasuredSaturation>,
}

/// A run's figures, or why it cannot count.
struct Measured {
    record: RunRecord,
    output: RunOutput,
    failure: Option<String>,
}

impl Measured {
    fn value(&self, direction: Direction) -> Option<f64> {
        match direction {
            Direction::HigherIsBetter => self.record.metric,
            Direction::LowerIsBetter => Some(self.record.wall_s),
        }
    }
}

/// The last `n` lines of a run's output, stderr first.
fn output_tail(out: &RunOutput, n: usize) -> String {
    let tail = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    };
    format!(
        "--- stderr ---\n{}\n--- stdout ---\n{}",
        tail(&out.stderr),
        tail(&out.stdout)
    )
}

impl Engine<'_> {
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    fn budget_allows(&self, runs: u32) -> bool {
        self.left() >= self.typical_run * runs
    }

    /// Runs the command once in `cwd` and extracts its figures.
    fn run(&self, side: Side, index: usize, cwd: &Path, sample: bool, what: &str) -> Measured {
        let left_at_start = self.left();
        let of = match side {
            Side::BaselineWarmup | Side::CandidateWarmup => self.settings.bench.warmup,
            Side::Baseline | Side::Candidate => self.settings.bench.max_runs,
        };
        let line = |elapsed: Duration| {
            format!(
                "{what} · {} run {index}/{of} · {} · budget {} left",
                side.label(),
                clock(elapsed),
                clock(left_at_start.saturating_sub(elapsed))
            )
        };
        self.progress.update(&line(Duration::ZERO));
        let tick = |elapsed: Duration| self.progress.update(&line(elapsed));
        let output = self.runner.run(&RunRequest {
            command: self.command,
            cwd,
            timeout: self.settings.bench.timeout,
            capture_limit: runner::DEFAULT_CAPTURE_LIMIT,
            sample: sample.then_some(&self.sampler),
            on_tick: Some(&tick),
        });
        let metric = self
            .metric
            .as_ref()
            .and_then(|re| runner::extract_number(re, &output));
        let check = self
            .check
            .as_ref()
            .and_then(|re| runner::extract_number(re, &output));
        let failure = match &output.exit {
            ExitKind::Code(0) => None,
            ExitKind::Code(127) => Some("command not found (exit 127)".to_owned()),
            ExitKind::Code(c) => Some(format!("exited with status {c}")),
            ExitKind::Signal(s) => Some(format!("killed by signal {s}")),
            ExitKind::TimedOut => Some(format!(
                "timed out after {} (bench.timeout); the whole process group was killed",
                clock(self.settings.bench.timeout)
            )),
            ExitKind::SpawnFailed(e) => Some(format!("could not start: {e}")),
        }
        .or_else(|| match (&self.metric, metric) {
            (Some(re), None) => Some(format!(
                "metric-regex `{}` matched nothing in the output",
                re.as_str()
            )),
            (Some(_), Some(m)) if !(m > 0.0 && m.is_finite()) => Some(format!(
                "metric-regex matched {m}, which is not a positive throughput"
            )),
            _ => None,
        })
        .or_else(|| match (&self.check, check, side) {
            (Some(re), None, Side::Baseline | Side::Candidate) => Some(format!(
                "check-regex `{}` matched nothing in the output",
                re.as_str()
            )),
            _ => None,
        });
        Measured {
            record: RunRecord {
                side,
                index,
                wall_s: output.wall_s,
                metric,
                check,
                exit: output.exit.clone(),
            },
            output,
            failure,
        }
    }

    fn write_log(&self, content: &log::LogContent<'_>) -> Result<(), ExperimentError> {
        let path = self.settings.output_dir.join(&content.result.log);
        std::fs::write(&path, log::render(content))
            .map_err(|source| ExperimentError::Write { path, source })
    }

    fn baseline(
        &mut self,
        cwd: &Path,
        noise_mode: bool,
    ) -> Result<(BaselineResult, Option<MeasuredSaturation>), ExperimentError> {
        let bench = self.settings.bench;
        let log_rel = PathBuf::from("experiments/baseline.log");
        let mut runs = Vec::new();
        let mut samplings: Vec<ProcessSampling> = Vec::new();
        let mut values = Vec::new();
        let mut failure: Option<(String, String)> = None;
        let measured_runs = if noise_mode {
            bench.max_runs
        } else {
            bench.min_runs
        } as usize;
        let plan = (0..bench.warmup as usize)
            .map(|i| (Side::BaselineWarmup, i + 1))
            .chain((0..measured_runs).map(|i| (Side::Baseline, i + 1)));
        for (side, index) in plan {
            let enough = side == Side::Baseline && values.len() >= bench.min_runs as usize;
            if enough && !self.budget_allows(1) {
                break;
            }
            let m = self.run(side, index, cwd, side == Side::Baseline, "baseline");
            if let Some(s) = m.output.sampling.clone() {
                samplings.push(s);
            }
            if let Some(why) = m.failure.clone() {
                let what = if side == Side::Baseline {
                    "baseline run"
                } else {
                    "baseline warm-up"
                };
                failure = Some((format!("{what} {index} {why}"), output_tail(&m.output, 40)));
                runs.push(m.record);
                break;
            }
            if side == Side::Baseline
                && let Some(v) = m.value(self.direction)
            {
                values.push(v);
                self.typical_run = Duration::from_secs_f64(
                    stats::median(&runs_wall(&runs, &m.record)).unwrap_or(0.0),
                );
            }
            if side == Side::BaselineWarmup {
                self.typical_run = Duration::from_secs_f64(m.record.wall_s);
            }
            runs.push(m.record);
        }
        let saturation = sampler::measured_saturation(&samplings, &self.sampler);
        let checks: Vec<f64> = runs
            .iter()
            .filter(|r| r.side == Side::Baseline)
            .filter_map(|r| r.check)
            .collect();
        let summary = Summary::of(&values);
        let mut result = ExperimentResult::new("baseline", None, None, log_rel.clone());
        result.baseline.clone_from(&summary);
        let reason = match (&failure, &summary) {
            (Some((why, _)), _) => why.clone(),
            (None, None) => "no baseline run completed within the budget (bench.budget)".to_owned(),
            (None, Some(_)) => String::new(),
        };
        if !reason.is_empty() {
            result.status = Status::Failed;
            result.reason = format!("the benchmark itself is broken: {reason}");
            self.write_log(&log::LogContent {
                result: &result,
                command: self.command,
                diff: "",
                runs: &runs,
                direction: self.direction,
                saturation: saturation.as_ref(),
                failure_output: failure.as_ref().map(|(_, tail)| tail.as_str()),
            })?;
            return Err(ExperimentError::BaselineBroken {
                reason,
                log: self
                    .settings
                    .output_dir
                    .join(&log_rel)
                    .display()
                    .to_string(),
            });
        }
        let Some(summary) = summary else {
            return Err(ExperimentError::BaselineBroken {
                reason: "no baseline run completed".to_owned(),
                log: log_rel.display().to_string(),
            });
        };
        let check_value = checks.first().copied();
        if let (Some(first), Some(re)) = (check_value, &self.check) {
            let spread = checks
                .iter()
                .map(|c| rel_dev(first, *c))
                .fold(0.0, f64::max);
            if spread > bench.check_rtol {
                self.console.warn(&format!(
                    "check-regex `{}` varies between baseline runs by {:.2e} (more than check-rtol {}): the gate compares candidates against the first run's {first}",
                    re.as_str(),
                    spread,
                    bench.check_rtol
                ));
            }
        }
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let pair_log_sd = stats::std_dev(&logs).map(|sd| sd * std::f64::consts::SQRT_2);
        let noise = Noise {
            cv: summary.cv,
            pair_log_sd,
            pairs_for_10pct: pair_log_sd.and_then(|sd| stats::pairs_needed(sd, REFERENCE_EFFECT)),
            simulated_10pct: stats::simulate(
                &values,
                self.direction,
                REFERENCE_EFFECT,
                bench.min_runs as usize,
                bench.max_runs as usize,
                1000,
                0x5eed,
            ),
        };
        result.status = Status::Passed;
        result.reason = format!(
            "{} measured runs; noise {:.1} % (cv){}",
            summary.n,
            summary.cv * 100.0,
            noise.pairs_for_10pct.map_or(String::new(), |n| format!(
                "; ≈ {n} interleaved pairs to detect a 10 % speed-up"
            ))
        );
        result.gate = match check_value {
            Some(v) => Gate::Passed {
                baseline: v,
                worst_rel_dev: 0.0,
                rtol: bench.check_rtol,
            },
            None => Gate::NotConfigured,
        };
        self.write_log(&log::LogContent {
            result: &result,
            command: self.command,
            diff: "",
            runs: &runs,
            direction: self.direction,
            saturation: saturation.as_ref(),
            failure_output: None,
        })?;
        self.progress.clear();
        self.console.status(&format!(
            "baseline: median {:.4} {} (min {:.4}, max {:.4}, cv {:.1} %, {} runs)",
            summary.median,
            self.unit(),
            summary.min,
            summary.max,
            summary.cv * 100.0,
            summary.n
        ));
        Ok((
            BaselineResult {
                direction: self.direction,
                summary,
                runs,
                check_value,
                noise,
                log: log_rel,
            },
            saturation,
        ))
    }

    fn unit(&self) -> &'static str {
        match self.direction {
            Direction::HigherIsBetter => "(metric)",
            Direction::LowerIsBetter => "s",
        }
    }

    fn candidates(
        &mut self,
        base_cwd: &Path,
        candidates: &[ExperimentCandidate],
        outcome: &mut ExperimentsOutcome,
    ) -> Result<(), ExperimentError> {
        let strategies = self.settings.strategies;
        let max_winners = strategies.max as usize;
        let mut tried: HashMap<&str, usize> = HashMap::new();
        let mut winners: Vec<(&ExperimentCandidate, ExperimentResult)> = Vec::new();
        let mut filtered = 0usize;
        let eligible: Vec<&ExperimentCandidate> = candidates
            .iter()
            .filter(|c| {
                let keep = (strategies.include.is_empty() || strategies.include.contains(&c.id))
                    && !strategies.exclude.contains(&c.id);
                filtered += usize::from(!keep);
                keep
            })
            .collect();
        if filtered > 0 {
            outcome.notes.push(format!(
                "{filtered} candidate(s) left out by strategies.include / strategies.exclude"
            ));
        }
        let total = eligible.len();
        for (i, cand) in eligible.into_iter().enumerate() {
            if winners.len() >= max_winners {
                outcome.notes.push(format!(
                    "stopped after {max_winners} validated strategies (strategies.max); {} candidate(s) not tried",
                    total - i
                ));
                break;
            }
            if winners.iter().any(|(w, _)| w.id == cand.id) {
                continue;
            }
            let count = tried.entry(cand.id.as_str()).or_default();
            if *count >= MAX_VARIANTS {
                continue;
            }
            *count += 1;
            let what = format!("[{}/{total}] {}", i + 1, cand.label());
            self.console.group(&format!("Experiment {what}"));
            let result = self.experiment(base_cwd, cand, &what, &outcome.baseline);
            self.console.end_group();
            let result = result?;
            self.progress.clear();
            self.console.status(&result_line(&result));
            if result.status == Status::Passed {
                winners.push((cand, result.clone()));
            }
            outcome.results.push(result);
        }
        let stackable: Vec<&(&ExperimentCandidate, ExperimentResult)> = winners
            .iter()
            .filter(|(_, r)| r.gate != Gate::Unverified)
            .collect();
        if winners.len() > stackable.len() {
            outcome.notes.push(
                "numerics winners without a correctness check (bench.check-regex) are not stacked"
                    .to_owned(),
            );
        }
        if stackable.len() >= 2 {
            let parts: Vec<(&str, &[FilePatch])> = stackable
                .iter()
                .map(|(c, _)| (c.id.as_str(), c.patch.as_slice()))
                .collect();
            let applicability = stackable
                .iter()
                .map(|(c, _)| c.applicability)
                .max()
                .unwrap_or(Applicability::Safe);
            let log = PathBuf::from("experiments/stacked.log");
            match scratch::stack(&parts) {
                Ok(patch) => {
                    let stacked = ExperimentCandidate {
                        id: "stacked".to_owned(),
                        variant: None,
                        applicability,
                        patch,
                        diff: stackable
                            .iter()
                            .map(|(c, _)| format!("# {}\n{}", c.label(), c.diff.trim_end()))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    };
                    self.console.group("Experiment: all winners stacked");
                    let result = self.experiment(base_cwd, &stacked, "stacked", &outcome.baseline);
                    self.console.end_group();
                    let result = result?;
                    self.progress.clear();
                    self.console.status(&result_line(&result));
                    outcome.stacked = Some(result);
                }
                Err(why) => {
                    let mut r = ExperimentResult::new("stacked", None, Some(applicability), log);
                    r.reason = why;
                    self.write_log(&log::LogContent {
                        result: &r,
                        command: self.command,
                        diff: "",
                        runs: &[],
                        direction: self.direction,
                        saturation: self.saturation.as_ref(),
                        failure_output: None,
                    })?;
                    self.console.status(&result_line(&r));
                    outcome.stacked = Some(r);
                }
            }
        }
        if self.left().is_zero() {
            outcome.notes.push(
                "the time budget (bench.budget) ran out; later candidates were skipped".to_owned(),
            );
        }
        Ok(())
    }

    /// Benchmarks one candidate against the baseline and writes its log.
    fn experiment(
        &mut self,
        base_cwd: &Path,
        cand: &ExperimentCandidate,
        what: &str,
        baseline: &BaselineResult,
    ) -> Result<ExperimentResult, ExperimentError> {
        let bench = self.settings.bench;
        let log_rel = PathBuf::from(format!("experiments/{}.log", cand.label()));
        let mut result = ExperimentResult::new(
            &cand.id,
            cand.variant.as_deref(),
            Some(cand.applicability),
            log_rel,
        );
        let mut runs: Vec<RunRecord> = Vec::new();
        let mut failure_output: Option<String> = None;
        let numerics = cand.applicability == Applicability::Numerics;
        let skip = if cand.applicability == Applicability::Manual {
            Some("manual fix: shown in the report, never applied automatically".to_owned())
        } else if numerics && !self.settings.strategies.allow_numerics {
            Some("changes floating-point results; set strategies.allow-numerics: true (with bench.check-regex) to try it".to_owned())
        } else if !self.budget_allows(2 * (bench.warmup + bench.min_runs.max(2))) {
            Some(format!(
                "budget exhausted: {} left, a comparison needs about {}",
                clock(self.left()),
                clock(self.typical_run * 2 * (bench.warmup + bench.min_runs.max(2)))
            ))
        } else {
            None
        };
        let copy = match skip {
            Some(reason) => {
                result.reason = reason;
                None
            }
            None => {
                let copy =
                    Scratch::create(self.settings.dir, &[self.settings.output_dir.to_path_buf()])
                        .map_err(|source| ExperimentError::Scratch {
                        dir: self.settings.dir.to_path_buf(),
                        source,
                    })?;
                match copy.apply(&cand.patch) {
                    Ok(()) => Some(copy),
                    Err(e) => {
                        result.reason = e.to_string();
                        None
                    }
                }
            }
        };
        if let Some(copy) = copy {
            self.compare(
                base_cwd,
                copy.path(),
                cand,
                what,
                baseline,
                &mut result,
                &mut runs,
                &mut failure_output,
            );
        }
        self.write_log(&log::LogContent {
            result: &result,
            command: self.command,
            diff: &cand.diff,
            runs: &runs,
            direction: self.direction,
            saturation: self.saturation.as_ref(),
            failure_output: failure_output.as_deref(),
        })?;
        Ok(result)
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one call site; the pieces are the experiment's state"
    )]
    fn compare(
        &mut self,
        base_cwd: &Path,
        cand_cwd: &Path,
        cand: &ExperimentCandidate,
        what: &str,
        baseline: &BaselineResult,
        result: &mut ExperimentResult,
        runs: &mut Vec<RunRecord>,
        failure_output: &mut Option<String>,
    ) {
        let bench = self.settings.bench;
        let numerics = cand.applicability == Applicability::Numerics;
        result.status = Status::Failed;
        for i in 0..bench.warmup as usize {
            let m = self.run(Side::CandidateWarmup, i + 1, cand_cwd, false, what);
            runs.push(m.record.clone());
            if let Some(why) = m.failure {
                result.reason = format!("candidate warm-up {} {why}", i + 1);
                *failure_output = Some(output_tail(&m.output, 40));
                return;
            }
        }
        let (mut base, mut candv) = (Vec::new(), Vec::new());
        let mut worst = 0.0f64;
        let mut decision = Decision::Continue;
        let mut budget_out = false;
        while decision == Decision::Continue {
            if !self.budget_allows(2) {
                budget_out = true;
                break;
            }
            let pair = base.len() + 1;
            let b = self.run(Side::Baseline, pair, base_cwd, false, what);
            runs.push(b.record.clone());
            if let Some(why) = b.failure {
                result.reason =
                    format!("baseline run {pair} {why} mid-comparison (a flaky benchmark?)");
                *failure_output = Some(output_tail(&b.output, 40));
                return;
            }
            let c = self.run(Side::Candidate, pair, cand_cwd, false, what);
            runs.push(c.record.clone());
            if let Some(why) = c.failure {
                result.reason = format!("candidate run {pair} {why}");
                *failure_output = Some(output_tail(&c.output, 40));
                if why.starts_with("check-regex") {
                    result.gate = Gate::Failed { reason: why };
                }
                return;
            }
            if let (Some(reference), Some(value)) = (baseline.check_value, c.record.check) {
                let dev = rel_dev(reference, value);
                worst = worst.max(dev);
                if dev.is_nan() || dev > bench.check_rtol {
                    result.gate = Gate::Failed {
                        reason: format!(
                            "candidate run {pair} check value {value} differs from the baseline's {reference} by {dev:.3e} (check-rtol {})",
                            bench.check_rtol
                        ),
                    };
                    result.reason = "correctness gate failed".to_owned();
                    *failure_output = Some(output_tail(&c.output, 40));
                    return;
                }
            }
            if let (Some(x), Some(y)) = (b.value(self.direction), c.value(self.direction)) {
                base.push(x);
                candv.push(y);
            }
            decision = stats::decide(
                &base,
                &candv,
                self.direction,
                bench.min_runs as usize,
                bench.max_runs as usize,
            );
        }
        result.gate = match (baseline.check_value, numerics) {
            (Some(b), _) => Gate::Passed {
                baseline: b,
                worst_rel_dev: worst,
                rtol: bench.check_rtol,
            },
            (None, true) => Gate::Unverified,
            (None, false) => Gate::NotConfigured,
        };
        result.pairs = base.len();
        result.baseline = Summary::of(&base);
        result.candidate = Summary::of(&candv);
        let ci: Option<Interval> = stats::paired_interval(&base, &candv, self.direction);
        // The point estimate is the interval's own centre, so it always lies inside it; the
        // ratio of medians only where there is no interval (a single pair).
        result.speedup = ci
            .map(|c| c.centre)
            .or_else(|| stats::speedup(&base, &candv, self.direction));
        result.ci_low = ci.map(|c| c.low);
        result.ci_high = ci.map(|c| c.high);
        if budget_out {
            decision = match ci {
                Some(c) if c.is_speedup() => Decision::Faster,
                Some(c) if c.is_slowdown() => Decision::Slower,
                _ => Decision::Inconclusive,
            };
        }
        result.decision = Some(decision);
        let speed = result
            .speedup
            .map_or_else(|| "-".to_owned(), |s| format!("{s:.2}×"));
        let interval = ci.map_or_else(
            || "no interval".to_owned(),
            |c| format!("95 % CI [{:.2}, {:.2}]", c.low, c.high),
        );
        let (status, reason) = match decision {
            Decision::Faster if result.gate == Gate::Unverified => (
                Status::Passed,
                format!(
                    "speed-up measured, correctness unverified: {speed}, {interval} (no bench.check-regex)"
                ),
            ),
            Decision::Faster => (
                Status::Passed,
                format!("measured speed-up {speed}, {interval}"),
            ),
            Decision::Slower => (Status::Failed, format!("slower: {speed}, {interval}")),
            Decision::Futile | Decision::Inconclusive | Decision::Continue => (
                Status::Failed,
                format!(
                    "no measurable speed-up: {speed}, {interval} contains 1.0{}",
                    if budget_out {
                        " (budget ran out before a decision)"
                    } else {
                        ""
                    }
                ),
            ),
        };
        result.status = status;
        result.reason = reason;
    }
}

fn runs_wall(runs: &[RunRecord], last: &RunRecord) -> Vec<f64> {
    runs.iter()
        .chain(std::iter::once(last))
        .filter(|r| r.side == Side::Baseline)
        .map(|r| r.wall_s)
        .collect()
}

/// |candidate − reference| / |reference| (absolute difference when the reference is 0).
fn rel_dev(reference: f64, value: f64) -> f64 {
    let diff = (value - reference).abs();
    if reference == 0.0 {
        diff
    } else {
        diff / reference.abs()
    }
}

/// `PASSED parallel-workers-2: measured speed-up 1.8×, 95 % CI [1.6, 2.0]`.
#[must_use]
pub fn result_line(r: &ExperimentResult) -> String {
    format!(
        "{} {}: {}",
        r.status.label(),
        label(&r.strategy, r.variant.as_deref()),
        r.reason
    )
}

mod command;
pub use command::{ExperimentArgs, command};
