//! Step 3: turn findings into ranked speed-up strategies, each a real patch of the user's code.
//!
//! ```text
//! findings + sources + ceilings ─► every Strategy proposes (sites, variants, edits)
//!   ─► edits applied and re-parsed per variant ─► Candidate { patch, diff }
//!   ─► ranked by gain × safety × applicability ─► strategies.md / experiments (step 4)
//! ```
//!
//! One strategy per file; its doc comment is the user documentation (`efficiency-audit
//! strategies` and `docs/strategies.md` print it). Strategies read the analysis findings where
//! they exist and otherwise detect their target shapes directly with tree-sitter
//! ([`patch`]).

pub mod patch;
mod render;

mod autocast;
mod channels_last;
mod create_on_device;
mod deferred_host_sync;
mod disable_autograd;
mod hoist_file_open;
mod larger_batch;
mod non_blocking_copies;
mod parallel_data_loading;
mod parallel_map;
mod tf32;
mod torch_compile;
mod vectorize_pandas;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::analysis::model::{Applicability, Category, Edit, Finding, Resource};
use crate::ceilings::model::{Ceilings, Gpu, GpuFigure, TableValue};
use crate::config;

pub use patch::{Parsed, PatchError};
pub use render::{catalog_markdown, markdown};

/// Basic strategies are low-risk; advanced ones bring bigger wins and usually change numerics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Low risk, mostly semantics-preserving.
    Basic,
    /// Bigger wins, gated by a benchmark and a correctness check.
    Advanced,
}

impl Kind {
    /// Lower-case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Basic => "basic",
            Kind::Advanced => "advanced",
        }
    }
}

/// What a strategy is, independent of the code it is applied to.
#[derive(Debug)]
pub struct Meta {
    /// Stable kebab-case id, used in config `include`/`exclude` and log names.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// Basic or advanced.
    pub kind: Kind,
    /// The bottleneck it relieves.
    pub resource: Resource,
    /// Finding categories it resolves.
    pub targets: &'static [Category],
    /// The user documentation (Markdown), from the doc comment.
    pub doc: &'static str,
}

/// Declares a strategy: its doc comment becomes [`Meta::doc`].
macro_rules! declare_strategy {
    (
        $(#[doc = $doc:literal])+
        $vis:vis struct $name:ident {
            id: $id:literal,
            title: $title:literal,
            kind: $kind:ident,
            resource: $res:ident,
            targets: [$($cat:ident),* $(,)?] $(,)?
        }
    ) => {
        $(#[doc = $doc])+
        #[derive(Debug, Clone, Copy)]
        $vis struct $name;

        impl $name {
            const META: $crate::strategies::Meta = $crate::strategies::Meta {
                id: $id,
                title: $title,
                kind: $crate::strategies::Kind::$kind,
                resource: $crate::analysis::model::Resource::$res,
                targets: &[$($crate::analysis::model::Category::$cat),*],
                doc: concat!($($doc, "\n"),+),
            };
        }
    };
}
pub(crate) use declare_strategy;

/// A strategy: given the code, the findings and the machine, propose patches.
pub trait Strategy: Sync {
    /// Its metadata and documentation.
    fn meta(&self) -> &'static Meta;
    /// What it would change in this code, or why it does not apply.
    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String>;
}

/// Every strategy, basic first.
pub static STRATEGIES: &[&dyn Strategy] = &[
    &parallel_data_loading::ParallelDataLoading,
    &parallel_map::ParallelMap,
    &hoist_file_open::HoistFileOpen,
    &vectorize_pandas::VectorizePandas,
    &deferred_host_sync::DeferredHostSync,
    &disable_autograd::DisableAutograd,
    &non_blocking_copies::NonBlockingCopies,
    &create_on_device::CreateOnDevice,
    &tf32::Tf32,
    &autocast::Autocast,
    &torch_compile::TorchCompile,
    &channels_last::ChannelsLast,
    &larger_batch::LargerBatch,
];

/// Looks a strategy up by id.
#[must_use]
pub fn by_id(id: &str) -> Option<&'static dyn Strategy> {
    STRATEGIES.iter().copied().find(|s| s.meta().id == id)
}

/// What is known about the machine's GPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum GpuState {
    /// No ceilings were given: presence unknown.
    Unknown,
    /// Ceilings say there is no GPU.
    Absent,
    /// The first GPU of the ceilings.
    Present {
        /// NVML name.
        name: String,
        /// Compute capability (major, minor), when known.
        capability: Option<(u32, u32)>,
        /// Best FP32 TFLOP/s figure and where it came from.
        fp32: Option<(f64, &'static str)>,
        /// Best TF32 tensor TFLOP/s figure.
        tf32: Option<(f64, &'static str)>,
        /// Best FP16/BF16 tensor TFLOP/s figure.
        bf16: Option<(f64, &'static str)>,
    },
}

/// The machine as strategies see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Machine {
    /// CPUs this process may use.
    pub cores: usize,
    /// Where the core count came from.
    pub cores_source: String,
    /// GPU.
    pub gpu: GpuState,
}

impl Machine {
    /// From the ceilings; without them, the CPUs this process may use and an unknown GPU.
    #[must_use]
    pub fn from_ceilings(ceilings: Option<&Ceilings>) -> Self {
        match ceilings {
            Some(c) => {
                let cores = c.host.available_parallelism.max(1);
                let gpu = c.gpus.first().map_or(GpuState::Absent, gpu_state);
                Self {
                    cores,
                    cores_source: format!("{cores} CPUs available (ceilings)"),
                    gpu,
                }
            }
            None => {
                let cores = std::thread::available_parallelism().map_or(1, usize::from);
                Self {
                    cores,
                    cores_source: format!("{cores} CPUs available (this process; no ceilings)"),
                    gpu: GpuState::Unknown,
                }
            }
        }
    }

    /// The ratio of a tensor-core figure to FP32 on this GPU, with where the figures come
    /// from; `None` without a GPU or figures.
    #[must_use]
    pub fn tensor_ratio(&self, precision: TensorPrecision) -> Option<(f64, String)> {
        let GpuState::Present {
            name,
            fp32,
            tf32,
            bf16,
            ..
        } = &self.gpu
        else {
            return None;
        };
        let (num, label) = match precision {
            TensorPrecision::Tf32 => (tf32.as_ref()?, "TF32"),
            TensorPrecision::Bf16 => (bf16.as_ref()?, "BF16"),
        };
        let den = fp32.as_ref()?;
        if den.0 <= 0.0 {
            return None;
        }
        Some((
            num.0 / den.0,
            format!(
                "{name}: {label} {:.1} TFLOP/s ({}) / FP32 {:.1} TFLOP/s ({}) = {:.1}x",
                num.0,
                num.1,
                den.0,
                den.1,
                num.0 / den.0
            ),
        ))
    }
}

/// A tensor-core precision whose rate is compared with FP32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorPrecision {
    /// TF32 tensor cores.
    Tf32,
    /// FP16/BF16 tensor cores.
    Bf16,
}

fn best_figure(f: &GpuFigure) -> Option<(f64, &'static str)> {
    if let Some(m) = f.measured {
        return Some((m, "measured"));
    }
    if let Some(TableValue::Value(v)) = f.datasheet {
        return Some((v, "datasheet"));
    }
    f.theoretical_nvml.map(|v| (v, "NVML formula"))
}

fn gpu_state(g: &Gpu) -> GpuState {
    let capability = g.compute_capability.as_deref().and_then(|cc| {
        let (a, b) = cc.split_once('.')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    });
    GpuState::Present {
        name: g.name.clone(),
        capability,
        fp32: best_figure(&g.fp32_tflops),
        tf32: best_figure(&g.tf32_tflops),
        bf16: best_figure(&g.fp16_bf16_tflops),
    }
}

/// Everything a strategy reads.
#[derive(Debug)]
pub struct Context<'a> {
    /// The parsed sources.
    pub files: &'a [Parsed],
    /// Findings of step 2 (may be empty: strategies then detect their shapes themselves).
    pub findings: &'a [Finding],
    /// The machine.
    pub machine: Machine,
}

impl Context<'_> {
    /// Findings of `categories` in `path` within lines `line..=end_line`.
    #[must_use]
    pub fn findings_at(
        &self,
        categories: &[Category],
        path: &str,
        line: usize,
        end_line: usize,
    ) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|f| {
                categories.contains(&f.category)
                    && f.path == path
                    && f.line <= end_line
                    && f.end_line >= line
            })
            .collect()
    }
}

/// A place in the code a strategy changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Site {
    /// File (relative).
    pub path: String,
    /// 1-based first line.
    pub line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// What is there and what changes, e.g. "DataLoader at train.py:71 has no num_workers".
    pub what: String,
}

/// Expected speed-up of a strategy on this code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gain {
    /// Expected end-to-end speed-up factor (1.0 = none).
    pub expected: f64,
    /// Upper bound of the factor, from the reference or from the measured ceilings.
    pub upper: f64,
    /// Where the figures come from (reference ml_rules.md sources, or `[est]`).
    pub source: String,
    /// What bounds it on this machine, when the ceilings do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
}

/// One variant's edits, per file index of [`Context::files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantEdits {
    /// Variant name (e.g. `workers-4`), `None` when the strategy has only one form.
    pub name: Option<String>,
    /// Edits per file.
    pub files: Vec<(usize, Vec<Edit>)>,
}

/// What a strategy proposes for this code.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// Where it changes the code.
    pub sites: Vec<Site>,
    /// How well it fits this code and machine, 0–1.
    pub applicability: f64,
    /// Why (one line each).
    pub reasons: Vec<String>,
    /// Expected gain.
    pub gain: Gain,
    /// How safe the patch is.
    pub safety: Applicability,
    /// Up to 3 variants, best guess first.
    pub variants: Vec<VariantEdits>,
}

/// One file of a candidate patch: the whole new text, and the text it expects to replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilePatch {
    /// Path relative to the audited folder.
    pub path: String,
    /// The file's text the patch was made from (the experiment refuses a file that changed).
    pub expected_original: String,
    /// The patched text.
    pub new_text: String,
}

/// One variant of one strategy, ready for step 4 (the JSON shape of `ExperimentCandidate`,
/// which `experiment --candidates FILE` reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// Strategy id.
    pub id: String,
    /// Variant name, when the strategy has several.
    pub variant: Option<String>,
    /// How safe it is.
    pub applicability: Applicability,
    /// The patched files.
    pub patch: Vec<FilePatch>,
    /// Unified diff of all files (`a/` `b/` headers, 3 lines of context).
    pub diff: String,
}

/// A finding a strategy resolves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// Rule id.
    pub rule: String,
    /// Category.
    pub category: Category,
    /// File.
    pub path: String,
    /// 1-based line.
    pub line: usize,
}

/// A strategy ranked for this code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    /// 1-based rank.
    pub rank: usize,
    /// Strategy id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Basic or advanced.
    pub kind: Kind,
    /// The bottleneck it targets.
    pub bottleneck: Resource,
    /// Finding categories it targets.
    pub targets: Vec<Category>,
    /// Findings of step 2 it resolves.
    pub resolves: Vec<Resolved>,
    /// Where it changes the code.
    pub sites: Vec<Site>,
    /// Expected gain.
    pub expected_gain: Gain,
    /// Safety of the patch.
    pub safety: Applicability,
    /// Safety as a factor: safe 1.0, numerics 0.6, manual 0.2.
    pub safety_weight: f64,
    /// Fit to this code and machine, 0–1.
    pub applicability: f64,
    /// (expected − 1) × safety weight × applicability.
    pub score: f64,
    /// Why it is ranked so.
    pub reasons: Vec<String>,
    /// The variants as patches, best guess first.
    pub candidates: Vec<Candidate>,
    /// Why it will not be benchmarked (numerics not allowed, excluded), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_back: Option<String>,
}

/// A strategy that does not apply to this code or machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Strategy id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Basic or advanced.
    pub kind: Kind,
    /// Why not.
    pub reason: String,
}

/// The outcome of step 3.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The machine as seen.
    pub machine: Machine,
    /// Applicable strategies, best first (held-back ones after the rest).
    pub ranked: Vec<Ranked>,
    /// Strategies that do not apply, with the reason.
    pub skipped: Vec<Skipped>,
}

impl Plan {
    /// Candidates to benchmark, in order: at most `cfg.max` strategies that are not held back,
    /// each with its variants.
    #[must_use]
    pub fn candidates(&self, max: usize) -> Vec<&Ranked> {
        self.ranked
            .iter()
            .filter(|r| r.held_back.is_none())
            .take(max)
            .collect()
    }

    /// The variants of [`Plan::candidates`], flattened in the order step 4 tries them.
    #[must_use]
    pub fn experiment_candidates(&self, max: usize) -> Vec<Candidate> {
        self.candidates(max)
            .into_iter()
            .flat_map(|r| r.candidates.iter().cloned())
            .collect()
    }
}

/// Safety as a ranking factor.
#[must_use]
pub fn safety_weight(a: Applicability) -> f64 {
    match a {
        Applicability::Safe => 1.0,
        Applicability::Numerics => 0.6,
        Applicability::Manual => 0.2,
    }
}

/// Step 3: proposes, patches and ranks every strategy for `files`.
///
/// `findings` are step 2's (empty is fine), `ceilings` step 1's (without them the core count is
/// this process's and the GPU is unknown). Include/exclude and `allow-numerics` from `cfg`
/// decide what is held back from benchmarking; everything applicable is still ranked.
#[must_use]
pub fn plan(
    files: &[Parsed],
    findings: &[Finding],
    ceilings: Option<&Ceilings>,
    cfg: &config::Strategies,
) -> Plan {
    plan_on(files, findings, Machine::from_ceilings(ceilings), cfg)
}

/// [`plan`] from step 2's per-file results: their findings, resolved against `sources`
/// (the same files, parsed; paths must match `FileAnalysis::path`).
#[must_use]
pub fn plan_analyses(
    analyses: &[crate::analysis::FileAnalysis],
    sources: &[Parsed],
    ceilings: Option<&Ceilings>,
    cfg: &config::Strategies,
) -> Plan {
    let findings: Vec<Finding> = analyses
        .iter()
        .flat_map(|a| a.findings.iter().cloned())
        .collect();
    plan(sources, &findings, ceilings, cfg)
}

/// [`plan`] for an explicit machine.
#[must_use]
pub fn plan_on(
    files: &[Parsed],
    findings: &[Finding],
    machine: Machine,
    cfg: &config::Strategies,
) -> Plan {
    let ctx = Context {
        files,
        findings,
        machine,
    };
    let mut ranked = Vec::new();
    let mut skipped = Vec::new();
    for strategy in STRATEGIES {
        let meta = strategy.meta();
        let skip = |reason: String| Skipped {
            id: meta.id.to_owned(),
            title: meta.title.to_owned(),
            kind: meta.kind,
            reason,
        };
        if !cfg.include.is_empty() && !cfg.include.iter().any(|i| i == meta.id) {
            skipped.push(skip("not in `strategies.include`".to_owned()));
            continue;
        }
        if cfg.exclude.iter().any(|i| i == meta.id) {
            skipped.push(skip("in `strategies.exclude`".to_owned()));
            continue;
        }
        match strategy.propose(&ctx).and_then(|p| finish(meta, &ctx, p)) {
            Ok(r) => ranked.push(r),
            Err(reason) => skipped.push(skip(reason)),
        }
    }
    for r in &mut ranked {
        if r.safety > Applicability::Safe && !cfg.allow_numerics {
            r.held_back = Some(
                "changes floating-point results: set `strategies.allow-numerics: true` (with a `bench.check-regex` gate) to benchmark it"
                    .to_owned(),
            );
        }
    }
    ranked.sort_by(|a, b| {
        a.held_back
            .is_some()
            .cmp(&b.held_back.is_some())
            .then(b.score.total_cmp(&a.score))
            .then(a.id.cmp(&b.id))
    });
    for (i, r) in ranked.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    Plan {
        machine: ctx.machine,
        ranked,
        skipped,
    }
}

/// Applies, re-parses and diffs every variant; resolves findings; scores.
fn finish(meta: &'static Meta, ctx: &Context<'_>, p: Proposal) -> Result<Ranked, String> {
    let mut candidates = Vec::new();
    let mut refused = Vec::new();
    for variant in p.variants.iter().take(3) {
        match build_candidate(meta.id, ctx, variant, p.safety) {
            Ok(c) => candidates.push(c),
            Err(e) => refused.push(format!(
                "variant {}: {e}",
                variant.name.as_deref().unwrap_or("default")
            )),
        }
    }
    if candidates.is_empty() {
        return Err(if refused.is_empty() {
            "nothing to change".to_owned()
        } else {
            format!("its patch was refused: {}", refused.join("; "))
        });
    }
    let mut resolves = Vec::new();
    for site in &p.sites {
        for f in ctx.findings_at(meta.targets, &site.path, site.line, site.end_line) {
            let r = Resolved {
                rule: f.rule.clone(),
                category: f.category,
                path: f.path.clone(),
                line: f.line,
            };
            if !resolves.contains(&r) {
                resolves.push(r);
            }
        }
    }
    let mut reasons = p.reasons;
    if !resolves.is_empty() {
        reasons.push(format!(
            "confirmed by {} step-2 finding(s) at the sites it changes",
            resolves.len()
        ));
    }
    reasons.extend(refused);
    // Step 2 found the waste at a site this strategy changes: the fit is confirmed.
    let mut applicability = p.applicability.clamp(0.0, 1.0);
    if !resolves.is_empty() {
        applicability = (applicability + 0.1).min(1.0);
    }
    let weight = safety_weight(p.safety);
    let score = (p.gain.expected - 1.0).max(0.0) * weight * applicability;
    Ok(Ranked {
        rank: 0,
        id: meta.id.to_owned(),
        title: meta.title.to_owned(),
        kind: meta.kind,
        bottleneck: meta.resource,
        targets: meta.targets.to_vec(),
        resolves,
        sites: p.sites,
        expected_gain: p.gain,
        safety: p.safety,
        safety_weight: weight,
        applicability,
        score,
        reasons,
        candidates,
        held_back: None,
    })
}

fn build_candidate(
    id: &str,
    ctx: &Context<'_>,
    variant: &VariantEdits,
    safety: Applicability,
) -> Result<Candidate, String> {
    let mut by_file: BTreeMap<usize, Vec<Edit>> = BTreeMap::new();
    for (i, edits) in &variant.files {
        by_file.entry(*i).or_default().extend(edits.iter().cloned());
    }
    let mut patch = Vec::new();
    let mut diff = String::new();
    for (i, mut edits) in by_file {
        let file = ctx.files.get(i).ok_or("internal: bad file index")?;
        // The same insertion proposed twice (an import per site) is made once; the stable sort
        // keeps the proposal order of different insertions at one point.
        edits.sort_by_key(|e| (e.start, e.end));
        edits.dedup();
        let new_text =
            patch::apply_checked(&file.text, &edits).map_err(|e| format!("{}: {e}", file.path))?;
        if new_text == file.text {
            continue;
        }
        diff.push_str(&patch::unified_diff(&file.path, &file.text, &new_text));
        patch.push(FilePatch {
            path: file.path.clone(),
            expected_original: file.text.clone(),
            new_text,
        });
    }
    if patch.is_empty() {
        return Err("the patch changes nothing".to_owned());
    }
    Ok(Candidate {
        id: id.to_owned(),
        variant: variant.name.clone(),
        applicability: safety,
        patch,
        diff,
    })
}

/// Reads and parses the Python files under `paths` (files or folders, `.gitignore` respected);
/// paths in the result are relative to `root`.
pub fn load_sources(root: &Path, paths: &[PathBuf]) -> anyhow::Result<Vec<Parsed>> {
    use anyhow::Context as _;
    let mut found: Vec<PathBuf> = Vec::new();
    for path in paths {
        if path.is_file() {
            found.push(path.clone());
            continue;
        }
        for entry in ignore::WalkBuilder::new(path).build() {
            let entry = entry.with_context(|| format!("walking {}", path.display()))?;
            let p = entry.path();
            if p.is_file() && p.extension().is_some_and(|e| e == "py") {
                found.push(p.to_path_buf());
            }
        }
    }
    found.sort();
    found.dedup();
    let mut out = Vec::new();
    for path in found {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let parsed = Parsed::new(&rel, &text)
            .ok_or_else(|| anyhow::anyhow!("tree-sitter-python could not be loaded"))?;
        out.push(parsed);
    }
    Ok(out)
}

/// Flags of `efficiency-audit strategies`.
#[derive(Debug, Clone, clap::Args)]
pub struct StrategiesArgs {
    /// Python files or folders to read [default: .].
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// `theoretical_limits.yaml` of step 1 (worker counts from its cores, GPU gains from its
    /// figures) [default: none: this process's CPUs, GPU unknown].
    #[arg(long, value_name = "FILE")]
    pub ceilings: Option<PathBuf>,
    /// Print the strategy catalog (Markdown, docs/strategies.md) instead of planning.
    #[arg(long)]
    pub catalog: bool,
}

/// Runs `efficiency-audit strategies`: writes `strategies.md` into the output folder.
pub fn command(
    global: &crate::cli::GlobalArgs,
    args: &StrategiesArgs,
) -> anyhow::Result<crate::exit::ExitStatus> {
    use anyhow::Context as _;
    if args.catalog {
        use std::io::Write as _;
        std::io::stdout()
            .lock()
            .write_all(catalog_markdown().as_bytes())
            .context("writing the catalog to stdout")?;
        return Ok(crate::exit::ExitStatus::Success);
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let root = match paths.as_slice() {
        [one] if one.is_dir() => one.clone(),
        [one] => one
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        _ => PathBuf::from("."),
    };
    let cfg = config::Config::discover(global.config.as_deref(), &root)?;
    let ceilings = match &args.ceilings {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(Ceilings::from_yaml(&text).with_context(|| {
                format!(
                    "{} is not a theoretical_limits.yaml (run `efficiency-audit ceilings` to write one)",
                    path.display()
                )
            })?)
        }
        None => None,
    };
    let sources = load_sources(&root, &paths)?;
    let analyses: Vec<crate::analysis::FileAnalysis> = sources
        .iter()
        .map(|s| crate::analysis::analyze_file(&s.path, s.text.as_bytes(), &cfg.rules))
        .collect();
    let plan = plan_analyses(&analyses, &sources, ceilings.as_ref(), &cfg.strategies);
    let out_dir = global.output_dir.clone().unwrap_or(cfg.output_dir);
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let out = out_dir.join("strategies.md");
    std::fs::write(&out, markdown(&plan)).with_context(|| format!("writing {}", out.display()))?;
    // Machine-readable twins: the whole plan, and the candidates `experiment --candidates` reads.
    let json = out_dir.join("strategies.json");
    std::fs::write(&json, serde_json::to_string_pretty(&plan)?)
        .with_context(|| format!("writing {}", json.display()))?;
    let max = usize::try_from(cfg.strategies.max).unwrap_or(usize::MAX);
    let candidates = out_dir.join("candidates.json");
    std::fs::write(
        &candidates,
        serde_json::to_string_pretty(&plan.experiment_candidates(max))?,
    )
    .with_context(|| format!("writing {}", candidates.display()))?;
    let console = crate::progress::Console::new(global.quiet);
    console.status(&format!(
        "{} strategies apply ({} skipped); wrote {}",
        plan.ranked.len(),
        plan.skipped.len(),
        out.display()
    ));
    Ok(crate::exit::ExitStatus::Success)
}

// --- Shapes several strategies share ------------------------------------------------------

/// Names that hold a model: receivers of `.parameters()`, `.eval()`, `.train()`,
/// `.state_dict()`, and names assigned from a `torch.nn` constructor or from a class of this
/// file that derives from `nn.Module`.
#[must_use]
pub fn model_names(file: &Parsed) -> Vec<String> {
    use patch::{find_all, method_call};
    let root = file.tree.root_node();
    let text = &file.text;
    let mut names: Vec<String> = Vec::new();
    let module_classes: Vec<String> = find_all(root, |n| n.kind() == "class_definition")
        .into_iter()
        .filter(|c| {
            c.child_by_field_name("superclasses").is_some_and(|s| {
                patch::children(s).into_iter().any(|b| {
                    file.qualified(b).as_deref() == Some("torch.nn.Module")
                        || file.text_of(b).ends_with("Module")
                })
            })
        })
        .filter_map(|c| {
            c.child_by_field_name("name")
                .map(|n| file.text_of(n).to_owned())
        })
        .collect();
    for call in find_all(root, |n| n.kind() == "call") {
        if let Some((recv, m)) = method_call(call, text)
            && matches!(m.as_str(), "parameters" | "eval" | "train" | "state_dict")
            && recv.kind() == "identifier"
        {
            names.push(file.text_of(recv).to_owned());
        }
    }
    for assign in find_all(root, |n| n.kind() == "assignment") {
        let (Some(left), Some(right)) = (
            assign.child_by_field_name("left"),
            assign.child_by_field_name("right"),
        ) else {
            continue;
        };
        if left.kind() != "identifier" {
            continue;
        }
        // Ex) model = SmallNet().to(device) / model = nn.Sequential(...)
        let mut ctor = right;
        while let Some((recv, _)) = method_call(ctor, text) {
            ctor = recv;
        }
        if ctor.kind() != "call" {
            continue;
        }
        let Some(func) = ctor.child_by_field_name("function") else {
            continue;
        };
        let is_module = file
            .qualified(func)
            .is_some_and(|q| q.starts_with("torch.nn.") && q[9..].starts_with(char::is_uppercase))
            || module_classes.iter().any(|c| file.text_of(func) == c);
        if is_module {
            names.push(file.text_of(left).to_owned());
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Whether a call calls one of `models` directly (`model(x)`).
#[must_use]
pub fn calls_model(node: tree_sitter::Node<'_>, file: &Parsed, models: &[String]) -> bool {
    patch::any_in_scope(node, &|n| {
        n.kind() == "call"
            && n.child_by_field_name("function").is_some_and(|f| {
                f.kind() == "identifier" && models.iter().any(|m| m == file.text_of(f))
            })
    })
}

/// Whether `node` (a device expression) looks like a device: `device`, `dev`, `"cuda"`,
/// `torch.device(...)`, `x.device`, `args.device`.
#[must_use]
pub fn is_device_expr(node: tree_sitter::Node<'_>, file: &Parsed) -> bool {
    let t = file.text_of(node);
    match node.kind() {
        "identifier" => t.contains("device") || t == "dev",
        "attribute" => t.ends_with(".device") || t.ends_with("_device"),
        "string" => {
            let s = t.trim_matches(|c| c == '"' || c == '\'');
            s == "cuda" || s.starts_with("cuda:") || s == "mps" || s == "xpu"
        }
        "call" => node
            .child_by_field_name("function")
            .and_then(|f| file.qualified(f))
            .is_some_and(|q| q == "torch.device"),
        _ => false,
    }
}

/// Whether the file mentions CUDA (`cuda` anywhere in code).
#[must_use]
pub fn mentions_cuda(file: &Parsed) -> bool {
    file.text.contains("cuda")
}

/// Whether a call has a `.backward()` or an optimizer `.step()` in scope: training code.
#[must_use]
pub fn has_backward(node: tree_sitter::Node<'_>, file: &Parsed) -> bool {
    patch::any_in_scope(node, &|n| {
        patch::method_call(n, &file.text).is_some_and(|(_, m)| m == "backward")
            || n.kind() == "call"
                && n.child_by_field_name("function")
                    .is_some_and(|f| file.text_of(f).ends_with("autograd.grad"))
    })
}

/// The worker/process counts to try: {2, cores/2, cores}, deduplicated, at least `min`.
#[must_use]
pub fn worker_counts(cores: usize, min: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for n in [2, cores / 2, cores] {
        if n >= min && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// A one-line reason for the GPU state, for strategies that need one.
pub fn gpu_gate(machine: &Machine) -> Result<f64, String> {
    match &machine.gpu {
        GpuState::Absent => {
            Err("no GPU on this machine (ceilings list none): not measurable here".to_owned())
        }
        GpuState::Unknown => Ok(0.5),
        GpuState::Present { .. } => Ok(1.0),
    }
}

/// The `(major, minor)` compute capability, when a GPU is present and reports it.
#[must_use]
pub fn capability(machine: &Machine) -> Option<(u32, u32)> {
    match &machine.gpu {
        GpuState::Present { capability, .. } => *capability,
        _ => None,
    }
}

/// `path:line` for reasons.
#[must_use]
pub fn at(file: &Parsed, node: tree_sitter::Node<'_>) -> String {
    format!("{}:{}", file.path, node.start_position().row + 1)
}

/// A site for `node` in `file`.
#[must_use]
pub fn site(file: &Parsed, node: tree_sitter::Node<'_>, what: String) -> Site {
    Site {
        path: file.path.clone(),
        line: node.start_position().row + 1,
        end_line: node.end_position().row + 1,
        what,
    }
}

/// The statement that last assigns each model called in a loop (`model = Net().to(device)`):
/// where a model-wide transformation (compile, memory format) goes.
#[must_use]
pub fn model_assignments<'t>(file: &'t Parsed) -> Vec<(tree_sitter::Node<'t>, String)> {
    let models = model_names(file);
    let root = file.tree.root_node();
    let loops = patch::find_all(root, |n| {
        matches!(n.kind(), "for_statement" | "while_statement")
    });
    let mut out = Vec::new();
    for m in models {
        let used_in_loop = loops
            .iter()
            .any(|l| calls_model(*l, file, std::slice::from_ref(&m)));
        if !used_in_loop {
            continue;
        }
        let last = patch::find_all(root, |n| {
            n.kind() == "expression_statement"
                && n.named_child(0).is_some_and(|a| {
                    a.kind() == "assignment"
                        && a.child_by_field_name("left")
                            .is_some_and(|l| l.kind() == "identifier" && file.text_of(l) == m)
                })
                && matches!(n.parent().map(|p| p.kind()), Some("block" | "module"))
        })
        .into_iter()
        .last();
        if let Some(stmt) = last {
            out.push((stmt, m));
        }
    }
    out
}
