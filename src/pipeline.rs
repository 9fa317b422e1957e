//! `efficiency-audit audit`: the whole run, top to bottom like the diagram in DESIGN §1:
//!
//! ```text
//! event ─► changed files ─► 1 ceilings ─► 2 analysis + verdict ─► 3 strategies ─► 4 experiments ─► 5 report ─► publish
//! ```
//!
//! A step that fails, or cannot run (no benchmark command, a fork PR), is reported as missing;
//! the run goes on and the report says what is absent. Only a broken configuration stops it
//! (exit 2).

use std::path::{Path, PathBuf};

use crate::changes::{self, PullFiles};
use crate::cli::GlobalArgs;
use crate::config::{CommentMode, Config, FailOn, ForkBench};
use crate::event::{self, Event, GithubEnv};
use crate::exit::ExitStatus;
use crate::progress::Console;
use crate::publish::RetryPolicy;
use crate::publish::action::{PublishInput, publish};
use crate::report::assemble::{assemble, read_outputs};
use crate::report::command::{context_from_env, reproduce_commands, write_all};
use crate::report::model::Missing;
use crate::verdict::VerdictValue;

/// The files the steps write into the output folder, removed before a run.
const STEP_FILES: [&str; 10] = [
    crate::report::assemble::CEILINGS_FILE,
    crate::report::assemble::ANALYSIS_FILE,
    "analysis.html",
    "analysis.sarif",
    "strategies.md",
    crate::report::assemble::STRATEGIES_FILE,
    crate::report::assemble::EXPERIMENTS_FILE,
    crate::report::command::REPORT_JSON,
    crate::report::command::FINAL_HTML,
    crate::report::command::COMMENT_MD,
];

/// Flags of `efficiency-audit audit`. In a GitHub Action the same settings come from the
/// action's inputs (`INPUT_*`); flags given here win.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AuditArgs {
    /// The repository folder to audit.
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Write comment.md and print it in a log group; send nothing to GitHub.
    #[arg(long)]
    pub dry_run: bool,
    /// Saturation at which a resource counts as the bottleneck [default: config, 0.70].
    #[arg(long, value_name = "FRACTION")]
    pub threshold: Option<f64>,
    /// Exit 1 on RED (`red`) or never (`never`).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// The pull request comment: `sticky` or `off`.
    #[arg(long, value_enum)]
    pub comment: Option<CommentMode>,
    /// Run the benchmark on pull requests from forks: `skip` or `allow`.
    #[arg(long, value_enum)]
    pub fork_bench: Option<ForkBench>,
    /// Shorten the ceilings probes to milliseconds (tests only: the figures mean nothing).
    #[arg(long, hide = true)]
    pub quick: bool,
}

/// The settings after config file < action inputs < flags.
#[derive(Debug, Clone)]
struct Settings {
    config: Config,
    dry_run: bool,
}

fn settings(global: &GlobalArgs, args: &AuditArgs, env: &GithubEnv) -> anyhow::Result<Settings> {
    let config_path = global
        .config
        .clone()
        .or_else(|| env.input("config").map(PathBuf::from));
    let mut config = Config::discover(config_path.as_deref(), &args.dir)?;
    if let Some(paths) = env.input("paths") {
        config.paths = paths
            .split(['\n', ','])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
    }
    if let Some(dir) = env.input("output-dir") {
        config.output_dir = PathBuf::from(dir);
    }
    if let Some(cmd) = env.input("bench-command") {
        config.bench.command = Some(cmd.to_owned());
    }
    let input_threshold = match env.input("threshold") {
        Some(t) => Some(t.parse::<f64>().map_err(|_| {
            anyhow::anyhow!("the threshold input must be a fraction such as 0.70, got {t:?}")
        })?),
        None => None,
    };
    config = config.with_threshold(args.threshold.or(input_threshold))?;
    let enum_input = |id: &str| env.input(id).map(str::to_ascii_lowercase);
    config.fail_on = args
        .fail_on
        .unwrap_or(match enum_input("fail-on").as_deref() {
            Some("red") => FailOn::Red,
            Some("never") => FailOn::Never,
            _ => config.fail_on,
        });
    config.comment = args
        .comment
        .unwrap_or(match enum_input("comment").as_deref() {
            Some("off") => CommentMode::Off,
            Some("sticky") => CommentMode::Sticky,
            _ => config.comment,
        });
    config.fork_bench = args
        .fork_bench
        .unwrap_or(match enum_input("fork-bench").as_deref() {
            Some("allow") => ForkBench::Allow,
            Some("skip") => ForkBench::Skip,
            _ => config.fork_bench,
        });
    Ok(Settings {
        config,
        dry_run: args.dry_run || env.input_bool("dry-run").unwrap_or(false),
    })
}

/// Runs `efficiency-audit audit`.
pub fn command(global: &GlobalArgs, args: &AuditArgs) -> anyhow::Result<ExitStatus> {
    let env = GithubEnv::from_process();
    run(global, args, &env, RetryPolicy::default())
}

/// The audit with its environment passed in.
pub fn run(
    global: &GlobalArgs,
    args: &AuditArgs,
    env: &GithubEnv,
    retry: RetryPolicy,
) -> anyhow::Result<ExitStatus> {
    let console = Console::new(global.quiet);
    let Settings { config, dry_run } = settings(global, args, env)?;
    let out_dir = global
        .output_dir
        .clone()
        .unwrap_or_else(|| args.dir.join(&config.output_dir));
    std::fs::create_dir_all(&out_dir)?;
    // A fresh run: a file left by an earlier run must never pass for this run's result.
    for stale in STEP_FILES {
        let path = out_dir.join(stale);
        if path.is_file() {
            std::fs::remove_file(&path)?;
        }
    }

    // event ─► changed files
    let event: Option<Event> = event::read_event(env).unwrap_or_else(|e| {
        console.warn(&e.to_string());
        None
    });
    let api = pull_files_api(env, event.as_ref(), dry_run);
    let changes = event.as_ref().map(|e| {
        changes::changed_files(
            e,
            &args.dir,
            api.as_ref().map(|a| a as &dyn PullFiles),
            &config.paths,
        )
    });
    if let Some(c) = &changes {
        let source = match &c.source {
            changes::ChangeSource::GitDiff => "git diff".to_owned(),
            changes::ChangeSource::PullFilesApi => "the pull request files API".to_owned(),
            changes::ChangeSource::Unknown(why) => {
                format!("unknown, auditing the whole folder: {why}")
            }
        };
        console.status(&format!(
            "changed files matching paths: {} ({source})",
            c.files.len()
        ));
    }

    let step_global = GlobalArgs {
        output_dir: Some(out_dir.clone()),
        config: global.config.clone(),
        quiet: global.quiet,
    };
    let mut missing = Vec::new();

    // 1 ceilings
    console.status("step 1: measuring this machine's ceilings");
    let targets = analysis_targets(&args.dir, changes.as_ref());
    let ceilings_args = crate::ceilings::CeilingsArgs {
        workspace: args.dir.clone(),
        code: targets.clone(),
        quick: args.quick,
    };
    if let Err(e) = crate::ceilings::command(&step_global, &ceilings_args) {
        console.warn(&format!("step 1 (ceilings) failed: {e:#}"));
    }

    // 2 analysis + verdict
    console.status("step 2: reading the code");
    let limits = out_dir.join(crate::report::assemble::CEILINGS_FILE);
    let analyze_args = crate::analyze_cmd::AnalyzeArgs {
        paths: targets.clone(),
        ceilings: limits.is_file().then(|| limits.clone()),
        annotations: env.is_actions(),
        threshold: Some(config.threshold),
        max_file_size: crate::analyze_cmd::DEFAULT_MAX_FILE_MIB,
    };
    let targets_for_steps = targets;
    // Its exit status (RED with fail-on: red) is decided again below from the report.
    if let Err(e) = crate::analyze_cmd::command(&step_global, &analyze_args) {
        console.warn(&format!("step 2 (analyze) failed: {e:#}"));
    }

    // 3 strategies, 4 experiments
    console.status("step 3: ranking strategies");
    let ceilings = read_ceilings(&limits);
    let plan = match strategies_step(
        &args.dir,
        &targets_for_steps,
        &out_dir,
        ceilings.as_ref(),
        &config,
    ) {
        Ok(plan) => Some(plan),
        Err(e) => {
            console.warn(&format!("step 3 (strategies) failed: {e:#}"));
            None
        }
    };
    let may_bench = event
        .as_ref()
        .is_none_or(|e| e.may_bench(config.fork_bench));
    match (&plan, &config.bench.command) {
        (_, Some(_)) if !may_bench => missing.push(Missing {
            step: "experiments".to_owned(),
            reason: "skipped: pull request from a fork (set fork-bench: allow to run its code on this runner)".to_owned(),
        }),
        (Some(plan), Some(_)) => {
            console.status("step 4: benchmarking the top strategies before and after");
            if let Err(e) = experiments_step(&step_global, &args.dir, &out_dir, plan, &limits, &config, env) {
                console.warn(&format!("step 4 (experiments) failed: {e:#}"));
            }
        }
        (None, Some(_)) => {}
        (_, None) => missing.push(Missing {
            step: "experiments".to_owned(),
            reason: "not run: no benchmark command (the bench-command input, or bench.command in the config)".to_owned(),
        }),
    }

    // 5 report
    let mut context = context_from_env(env, event.as_ref());
    context.changed_files = changes.as_ref().map(|c| c.files.clone());
    let reproduce = reproduce_commands(context.commit.as_deref(), &args.dir, &out_dir);
    let mut outputs = read_outputs(&out_dir);
    // The pipeline knows better why a step did not run than "file not found".
    outputs
        .missing
        .retain(|m| !missing.iter().any(|x: &Missing| x.step == m.step));
    outputs.missing.extend(missing);
    let mut report = assemble(outputs, &args.dir, config.threshold, context, reproduce);
    let written = write_all(&report, &out_dir)?;
    console.status(&format!("step 5: wrote {}", written.html.display()));

    // publish
    if env.is_actions() || dry_run {
        let sarif = out_dir.join("analysis.sarif");
        let input = PublishInput {
            env,
            event: event.as_ref(),
            out_dir: &out_dir,
            dry_run,
            comment: config.comment,
            sarif: sarif.is_file().then_some(sarif),
            retry,
        };
        publish(&mut report, &input);
    }

    if let Some(v) = &report.verdict {
        println!("{}", v.headline());
    }
    let red = report
        .verdict
        .as_ref()
        .is_none_or(|v| v.value == VerdictValue::Red);
    Ok(
        if red && config.fail_on == FailOn::Red && report.verdict.is_some() {
            ExitStatus::Red
        } else {
            ExitStatus::Success
        },
    )
}

/// The pull request files API, when the run may talk to GitHub.
fn pull_files_api(
    env: &GithubEnv,
    event: Option<&Event>,
    dry_run: bool,
) -> Option<crate::publish::github::GitHubPublisher> {
    if dry_run || env.is_act() || event?.pull_request.is_none() {
        return None;
    }
    let repo = env.repository().or_else(|| event?.repository.as_deref())?;
    crate::publish::github::GitHubPublisher::new(&env.api_url(), env.token()?, repo).ok()
}

fn read_ceilings(path: &Path) -> Option<crate::ceilings::model::Ceilings> {
    let text = std::fs::read_to_string(path).ok()?;
    crate::ceilings::model::Ceilings::from_yaml(&text).ok()
}

/// Step 3 on the analysed files with step 2's findings; writes `strategies.md` and the
/// report's `strategies.json`.
fn strategies_step(
    dir: &Path,
    targets: &[PathBuf],
    out_dir: &Path,
    ceilings: Option<&crate::ceilings::model::Ceilings>,
    config: &Config,
) -> anyhow::Result<crate::strategies::Plan> {
    use anyhow::Context as _;
    let analysis = read_outputs(out_dir).analysis;
    let findings = analysis.map(|a| a.findings).unwrap_or_default();
    let sources = crate::strategies::load_sources(dir, targets)?;
    let plan = crate::strategies::plan(&sources, &findings, ceilings, &config.strategies);
    let md = out_dir.join("strategies.md");
    std::fs::write(&md, crate::strategies::markdown(&plan))
        .with_context(|| format!("writing {}", md.display()))?;
    let rows = crate::report::assemble::strategy_rows(&plan);
    let json = out_dir.join(crate::report::assemble::STRATEGIES_FILE);
    std::fs::write(&json, serde_json::to_string_pretty(&rows)?)
        .with_context(|| format!("writing {}", json.display()))?;
    Ok(plan)
}

/// Step 4 on the plan's top candidates (`strategies.max` of them).
fn experiments_step(
    global: &GlobalArgs,
    dir: &Path,
    out_dir: &Path,
    plan: &crate::strategies::Plan,
    limits: &Path,
    config: &Config,
    env: &GithubEnv,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let max = usize::try_from(config.strategies.max).unwrap_or(usize::MAX);
    let candidates: Vec<&crate::strategies::Candidate> = plan
        .candidates(max)
        .into_iter()
        .flat_map(|r| r.candidates.iter())
        .collect();
    let folder = out_dir.join("experiments");
    std::fs::create_dir_all(&folder)?;
    let file = folder.join("candidates.json");
    std::fs::write(&file, serde_json::to_string_pretty(&candidates)?)
        .with_context(|| format!("writing {}", file.display()))?;
    let bench = &config.bench;
    let args = crate::experiments::ExperimentArgs {
        dir: dir.to_path_buf(),
        bench: bench.command.clone(),
        metric_regex: bench.metric_regex.clone(),
        check_regex: bench.check_regex.clone(),
        check_rtol: Some(bench.check_rtol),
        warmup: Some(bench.warmup),
        min_runs: Some(bench.min_runs),
        max_runs: Some(bench.max_runs),
        timeout: Some(format!("{}s", bench.timeout.as_secs())),
        budget: Some(format!("{}s", bench.budget.as_secs())),
        candidates: Some(file),
        ceilings: limits.is_file().then(|| limits.to_path_buf()),
        sample_ms: 250,
        github_actions: env.is_actions(),
    };
    crate::experiments::command(global, &args).map(|_| ())
}

/// What steps 1–2 read: the changed files that match `paths` when the event names any (only
/// those still present: a deleted file has nothing to audit), else the whole folder.
fn analysis_targets(dir: &Path, changes: Option<&changes::Changes>) -> Vec<PathBuf> {
    let changed: Vec<PathBuf> = changes
        .map(|c| {
            c.files
                .iter()
                .map(|f| dir.join(f))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    if changed.is_empty() {
        vec![dir.to_path_buf()]
    } else {
        changed
    }
}
