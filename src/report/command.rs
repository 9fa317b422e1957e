//! `efficiency-audit report`: read the output folder, write `report.json`,
//! `final_report.html` and `comment.md` from one [`Report`].

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cli::GlobalArgs;
use crate::config::Config;
use crate::event::GithubEnv;
use crate::exit::ExitStatus;
use crate::progress::Console;
use crate::report::assemble::{assemble, read_outputs};
use crate::report::model::{Context, Report};
use crate::report::{comment, final_html};

/// `report.json`.
pub const REPORT_JSON: &str = "report.json";
/// `final_report.html`.
pub const FINAL_HTML: &str = "final_report.html";
/// `comment.md`.
pub const COMMENT_MD: &str = "comment.md";

/// Flags of `efficiency-audit report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// Folder holding the earlier steps' files [default: the output folder].
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Folder the findings' paths are relative to, read for code excerpts and diffs.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub source_root: PathBuf,
    /// Saturation threshold when analysis.json carries no verdict [default: config, 0.70].
    #[arg(long, value_name = "FRACTION")]
    pub threshold: Option<f64>,
}

/// The files written.
#[derive(Debug, Clone)]
pub struct Written {
    /// `report.json`.
    pub json: PathBuf,
    /// `final_report.html`.
    pub html: PathBuf,
    /// `comment.md`.
    pub comment: PathBuf,
}

/// Renders and writes the three files into `dir`.
pub fn write_all(report: &Report, dir: &Path) -> anyhow::Result<Written> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let written = Written {
        json: dir.join(REPORT_JSON),
        html: dir.join(FINAL_HTML),
        comment: dir.join(COMMENT_MD),
    };
    let json = serde_json::to_string_pretty(report).context("serialising report.json")?;
    std::fs::write(&written.json, json + "\n")
        .with_context(|| format!("writing {}", written.json.display()))?;
    std::fs::write(&written.html, final_html::render(report))
        .with_context(|| format!("writing {}", written.html.display()))?;
    std::fs::write(&written.comment, comment::render(report))
        .with_context(|| format!("writing {}", written.comment.display()))?;
    Ok(written)
}

fn quote(p: &Path) -> String {
    let s = p.display().to_string();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The exact commands that rebuild this report on the same commit.
#[must_use]
pub fn reproduce_commands(commit: Option<&str>, source_root: &Path, out_dir: &Path) -> Vec<String> {
    let mut cmds = Vec::new();
    if let Some(sha) = commit {
        cmds.push(format!("git checkout {sha}"));
    }
    let (src, out) = (quote(source_root), quote(out_dir));
    cmds.push(format!(
        "efficiency-audit --output-dir {out} audit {src} --dry-run"
    ));
    cmds.push("# or step by step:".to_owned());
    cmds.push(format!(
        "efficiency-audit --output-dir {out} ceilings --workspace {src}"
    ));
    cmds.push(format!("efficiency-audit --output-dir {out} analyze {src}"));
    cmds.push(format!(
        "efficiency-audit --output-dir {out} report --from {out} --source-root {src}"
    ));
    cmds
}

/// The report context from the Actions environment (empty outside Actions).
#[must_use]
pub fn context_from_env(env: &GithubEnv, event: Option<&crate::event::Event>) -> Context {
    Context {
        repository: event
            .and_then(|e| e.repository.clone())
            .or_else(|| env.repository().map(str::to_owned)),
        commit: event
            .and_then(|e| e.head_sha.clone())
            .or_else(|| env.sha().map(str::to_owned)),
        pull_request: event.and_then(|e| e.pull_request.as_ref().map(|p| p.number)),
        event: event.map(|e| e.name.clone()),
        run_url: env.run_url(),
        changed_files: None,
    }
}

/// Runs `efficiency-audit report`.
pub fn command(global: &GlobalArgs, args: &ReportArgs) -> anyhow::Result<ExitStatus> {
    let console = Console::new(global.quiet);
    let config = Config::discover(global.config.as_deref(), &args.source_root)?
        .with_threshold(args.threshold)?;
    let out_dir = global
        .output_dir
        .clone()
        .unwrap_or_else(|| args.source_root.join(&config.output_dir));
    let from = args.from.clone().unwrap_or_else(|| out_dir.clone());
    let env = GithubEnv::from_process();
    let event = crate::event::read_event(&env).unwrap_or_else(|e| {
        console.warn(&e.to_string());
        None
    });
    let context = context_from_env(&env, event.as_ref());
    let reproduce = reproduce_commands(context.commit.as_deref(), &args.source_root, &out_dir);
    let report = assemble(
        read_outputs(&from),
        &args.source_root,
        config.threshold,
        context,
        reproduce,
    );
    let written = write_all(&report, &out_dir)?;
    for m in &report.missing {
        console.status(&format!("not in the report: {}: {}", m.step, m.reason));
    }
    console.status(&format!("wrote {}", written.html.display()));
    console.status(&format!("wrote {}", written.json.display()));
    console.status(&format!("wrote {}", written.comment.display()));
    Ok(ExitStatus::Success)
}
