//! `efficiency-audit analyze [PATHS...]`: step 2 as a standalone command.
//!
//! ```text
//! paths ─► walk (files) ─► read + analysis::analyze_file (in parallel) ─► estimate_demand
//!       ─► verdict::decide ─► report renderers ─► analysis.{json,html,sarif} (+ annotations)
//! ```
//!
//! Bad input never stops the run: every file that cannot be analysed (missing, too big,
//! binary, unreadable) becomes a warning on stderr and in `analysis.json`, and the exit status
//! only depends on the verdict and `fail-on`.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use rayon::prelude::*;

use crate::analysis::{self, FileAnalysis};
use crate::ceilings::model::Ceilings;
use crate::cli::GlobalArgs;
use crate::config::{Config, FailOn};
use crate::exit::ExitStatus;
use crate::progress::Console;
use crate::report::analysis_json::{AnalysisReport, FileEntry, RuleMeta, SCHEMA, Sources, Tool};
use crate::report::{analysis_html, analysis_json, annotations, sarif};
use crate::verdict::{self, Basis, VerdictValue};
use crate::walk::{self, SourceFile};

/// Default size above which a file is skipped (MiB). Hand-written Python stays far below it
/// (the largest file of the CPython 3.11 standard library is under 1 MiB); a bigger `.py` is
/// almost always generated data. See docs/bench-analyze.md for the time a 50 MB file takes.
pub const DEFAULT_MAX_FILE_MIB: u64 = 10;

/// Warnings printed on stderr before the rest are only counted (all are in analysis.json).
const MAX_PRINTED_WARNINGS: usize = 50;

/// Flags of `efficiency-audit analyze`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeArgs {
    /// Files or folders to analyse; folders are walked for `paths` globs (default `**/*.py`),
    /// respecting .gitignore.
    #[arg(value_name = "PATHS", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// theoretical_limits.yaml written by `efficiency-audit ceilings` [default: this machine's
    /// logical CPU count only].
    #[arg(long, value_name = "FILE")]
    pub ceilings: Option<PathBuf>,
    /// Also print GitHub workflow-command annotations (`::warning file=...`) on stdout.
    #[arg(long)]
    pub annotations: bool,
    /// Saturation a resource must reach to count as the bottleneck, in (0, 1] [default: 0.70,
    /// or `threshold` from the config].
    #[arg(long, value_name = "FRACTION")]
    pub threshold: Option<f64>,
    /// Skip files larger than this (MiB), with a warning.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_MAX_FILE_MIB)]
    pub max_file_size: u64,
}

/// Runs `efficiency-audit analyze`.
pub fn command(global: &GlobalArgs, args: &AnalyzeArgs) -> anyhow::Result<ExitStatus> {
    let console = Console::new(global.quiet);
    let started = Instant::now();
    let folder = audited_folder(&args.paths);
    let config =
        Config::discover(global.config.as_deref(), &folder)?.with_threshold(args.threshold)?;
    let output_dir = match &global.output_dir {
        Some(dir) => dir.clone(),
        None if folder == Path::new(".") => config.output_dir.clone(),
        None => folder.join(&config.output_dir),
    };
    let ceilings = args.ceilings.as_deref().map(load_ceilings).transpose()?;

    let globs = walk::glob_set(&config.paths)?;
    let discovery = walk::discover(&args.paths, &globs);
    let mut warnings = discovery.warnings;
    if discovery.not_matching > 0 {
        console.status(&format!(
            "{} named file(s) skipped: no `paths` glob ({}) matches them",
            discovery.not_matching,
            config.paths.join(", ")
        ));
    }

    let max_bytes = args.max_file_size.saturating_mul(1024 * 1024);
    // largest files first, each worker taking the next one as it finishes: the last files
    // handed out are small, so the workers end together (over the standard library's 1,790
    // files, in path order, one of two workers idled for the last 0.2 s)
    let files = &discovery.files;
    let mut order: Vec<(u64, usize)> = files
        .par_iter()
        .enumerate()
        .map(|(i, f)| (std::fs::metadata(&f.fs_path).map_or(0, |m| m.len()), i))
        .collect();
    order.sort_unstable_by(|a, b| b.cmp(a));
    let mut numbered: Vec<(usize, Outcome)> = order
        .into_iter()
        .par_bridge()
        .filter_map(|(_, i)| Some((i, analyse_one(files.get(i)?, &config, max_bytes))))
        .collect();
    numbered.sort_unstable_by_key(|(i, _)| *i);
    let outcomes = numbered.into_iter().map(|(_, o)| o);

    let mut analyses = Vec::with_capacity(outcomes.len());
    let mut sources = Sources::default();
    for outcome in outcomes {
        warnings.extend(outcome.warnings);
        if let Some((analysis, text)) = outcome.analysis {
            if !analysis.findings.is_empty() {
                sources.insert(analysis.path.clone(), text);
            }
            analyses.push(analysis);
        }
    }

    let logical_cpus = ceilings.as_ref().map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        |c| c.host.logical_cpus,
    );
    // Without ceilings the demand model notes the core count it used (its `notes`).
    let demand = analysis::estimate_demand(&analyses, ceilings.as_ref(), logical_cpus);
    let verdict = verdict::decide(&demand.saturation, Basis::Estimated, config.threshold);

    let report = build_report(analyses, demand, verdict, ceilings, warnings, sources);
    let written = write_outputs(&report, &output_dir)?;

    let mut stdout = std::io::stdout().lock();
    if args.annotations {
        stdout.write_all(annotations::render(&report.findings).as_bytes())?;
    }
    for (i, warning) in report.warnings.iter().enumerate() {
        if i == MAX_PRINTED_WARNINGS {
            console.warn(&format!(
                "{} more warnings in analysis.json",
                report.warnings.len() - MAX_PRINTED_WARNINGS
            ));
            break;
        }
        console.warn(warning);
    }
    console.status(&format!(
        "analysed {} file(s): {} finding(s), {} hot loop(s) in {:.2} s",
        report.files.len(),
        report.findings.len(),
        report.demand.loops.len(),
        started.elapsed().as_secs_f64()
    ));
    for path in &written {
        console.status(&format!("wrote {}", path.display()));
    }
    writeln!(stdout, "{}", report.verdict.headline())?;
    stdout.flush()?;

    Ok(match (report.verdict.value, config.fail_on) {
        (VerdictValue::Red, FailOn::Red) => ExitStatus::Red,
        _ => ExitStatus::Success,
    })
}

/// The folder whose configuration and default output folder apply: the one folder named, else
/// the current folder.
fn audited_folder(paths: &[PathBuf]) -> PathBuf {
    match paths {
        [one] if one.is_dir() => one.clone(),
        _ => PathBuf::from("."),
    }
}

fn load_ceilings(path: &Path) -> anyhow::Result<Ceilings> {
    let text = fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read --ceilings {}: write it with `efficiency-audit ceilings`",
            path.display()
        )
    })?;
    Ceilings::from_yaml(&text).with_context(|| {
        format!(
            "{} is not a theoretical_limits.yaml (schema 1): write it again with \
             `efficiency-audit ceilings`",
            path.display()
        )
    })
}

/// One file's result: its analysis and source text, and its warnings.
struct Outcome {
    analysis: Option<(FileAnalysis, String)>,
    warnings: Vec<String>,
}

fn analyse_one(file: &SourceFile, config: &Config, max_bytes: u64) -> Outcome {
    let skipped = |why: String| Outcome {
        analysis: None,
        warnings: vec![format!("{}: {why}; skipped", file.path)],
    };
    let bytes = match read_source(&file.fs_path, max_bytes) {
        Ok(bytes) => bytes,
        Err(why) => return skipped(why),
    };
    // The engine promises not to panic; if it ever does, lose one file, not the run.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        analysis::analyze_file(&file.path, &bytes, &config.rules)
    }));
    let Ok(analysis) = result else {
        return skipped(
            "internal error in the analyzer (please report it with this file)".to_owned(),
        );
    };
    let mut warnings: Vec<String> = analysis
        .warnings
        .iter()
        .map(|w| {
            if w.starts_with(&file.path) {
                w.clone()
            } else {
                format!("{}: {w}", file.path)
            }
        })
        .collect();
    if bytes.is_empty() && warnings.is_empty() {
        warnings.push(format!("{}: empty file; nothing to analyse", file.path));
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            if warnings.is_empty() {
                warnings.push(format!(
                    "{}: not valid UTF-8 (first bad byte at offset {}); analysed with invalid \
                     bytes replaced",
                    file.path,
                    err.utf8_error().valid_up_to()
                ));
            }
            String::from_utf8_lossy(err.as_bytes()).into_owned()
        }
    };
    Outcome {
        analysis: Some((analysis, text)),
        warnings,
    }
}

/// Reads a file unless it is too big or binary; the error says why, without the path.
fn read_source(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    let meta = fs::metadata(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => "no longer exists".to_owned(),
        _ => format!("cannot read it ({err})"),
    })?;
    if meta.len() > max_bytes {
        return Err(format!(
            "{:.1} MB is over the {} MiB limit (analyse it with --max-file-size {})",
            meta.len() as f64 / 1e6,
            max_bytes / (1024 * 1024),
            meta.len().div_ceil(1024 * 1024)
        ));
    }
    let bytes = fs::read(path).map_err(|err| format!("cannot read it ({err})"))?;
    // Like git and ripgrep: a NUL byte in the first 8 KiB means binary, not Python source.
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err("binary file (NUL bytes), not Python source".to_owned());
    }
    Ok(bytes)
}

fn build_report(
    analyses: Vec<FileAnalysis>,
    demand: crate::analysis::model::Demand,
    verdict: crate::verdict::Verdict,
    ceilings: Option<Ceilings>,
    mut warnings: Vec<String>,
    sources: Sources,
) -> AnalysisReport {
    let mut files = Vec::with_capacity(analyses.len());
    let mut findings = Vec::new();
    for analysis in analyses {
        let facts = serde_json::to_value(&analysis.facts).unwrap_or_else(|err| {
            warnings.push(format!("{}: facts not serialisable ({err})", analysis.path));
            serde_json::Value::Null
        });
        files.push(FileEntry {
            path: analysis.path,
            kind: analysis.kind,
            facts,
            parsed: analysis.parsed,
        });
        findings.extend(analysis.findings);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    findings.sort_by(|a, b| {
        (&a.path, a.line, a.column, &a.rule).cmp(&(&b.path, b.line, b.column, &b.rule))
    });
    AnalysisReport {
        schema: SCHEMA,
        tool: Tool::this(),
        files,
        findings,
        demand,
        verdict,
        ceilings,
        warnings,
        rules: rule_metadata(),
        sources,
    }
}

/// The registry's rules as the renderers see them.
fn rule_metadata() -> Vec<RuleMeta> {
    analysis::RULES
        .iter()
        .map(|rule| {
            let meta = rule.meta();
            RuleMeta {
                id: meta.id.to_owned(),
                name: meta.name.to_owned(),
                category: meta.category,
                severity: meta.severity,
                summary: meta.summary(),
                docs: meta.docs(),
            }
        })
        .collect()
}

/// Writes the three files; an unwritable folder is a tool failure (exit 2) that says what to do.
fn write_outputs(report: &AnalysisReport, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the output folder {}: choose a writable one with --output-dir",
            dir.display()
        )
    })?;
    let outputs = [
        ("analysis.json", analysis_json::render(report)?),
        ("analysis.html", analysis_html::render(report)),
        ("analysis.sarif", sarif::render(report)?),
    ];
    let mut written = Vec::with_capacity(outputs.len());
    for (name, text) in outputs {
        let path = dir.join(name);
        fs::write(&path, text).with_context(|| {
            format!(
                "cannot write {}: choose a writable folder with --output-dir",
                path.display()
            )
        })?;
        written.push(path);
    }
    Ok(written)
}
