//! The data step 2 produces: findings with their fixes, the demand model and the verdict.
//!
//! These types are the contract between the facts engine and rules (producers) and the
//! renderers, strategies and report (consumers). They are plain, serialisable data.

use serde::{Deserialize, Serialize};

/// The fixed category vocabulary of DESIGN §1 Step 2, used in JSON output and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// DataLoader loads in the main process or with too few workers.
    DataloaderWorkers,
    /// DataLoader without pinned memory while copying to a GPU.
    DataloaderPinMemory,
    /// Workers re-spawned every epoch.
    DataloaderPersistent,
    /// fp32 training/inference on tensor-core hardware without autocast.
    NoAmp,
    /// No `torch.compile`.
    NoCompile,
    /// Convolutions without `cudnn.benchmark`.
    NoCudnnBenchmark,
    /// fp32 matmuls without TF32.
    NoTf32,
    /// A host-device synchronisation per step (`.item()`, `.cpu()`, printing a tensor).
    HostSync,
    /// `torch.cuda.synchronize()` in the loop.
    ExplicitSync,
    /// Blocking host→device copies.
    H2dBlocking,
    /// A tensor created on the CPU and then moved.
    CpuTensorThenMove,
    /// Evaluation or inference that records autograd graphs.
    NoGradMissing,
    /// File IO inside the hot loop.
    IoInLoop,
    /// Image decoding inside the hot loop.
    ImageDecodeInLoop,
    /// `iterrows`/`apply(axis=1)` row loops in pandas.
    PandasRowLoop,
    /// Serial per-file/per-record work that could use all cores.
    SerialProcessing,
    /// Element-wise numeric Python loops.
    PythonLoopNumeric,
    /// Logging every step.
    LoggingInLoop,
    /// Checkpointing every step.
    CheckpointInLoop,
    /// Work repeated each iteration whose result does not change.
    RedundantWorkInLoop,
    /// A batch too small to fill the device.
    SmallBatch,
    /// Anything else.
    Other,
}

impl Category {
    /// Every category, in vocabulary order.
    pub const ALL: [Category; 22] = [
        Category::DataloaderWorkers,
        Category::DataloaderPinMemory,
        Category::DataloaderPersistent,
        Category::NoAmp,
        Category::NoCompile,
        Category::NoCudnnBenchmark,
        Category::NoTf32,
        Category::HostSync,
        Category::ExplicitSync,
        Category::H2dBlocking,
        Category::CpuTensorThenMove,
        Category::NoGradMissing,
        Category::IoInLoop,
        Category::ImageDecodeInLoop,
        Category::PandasRowLoop,
        Category::SerialProcessing,
        Category::PythonLoopNumeric,
        Category::LoggingInLoop,
        Category::CheckpointInLoop,
        Category::RedundantWorkInLoop,
        Category::SmallBatch,
        Category::Other,
    ];

    /// The snake_case name used in JSON, config and docs.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Category::DataloaderWorkers => "dataloader_workers",
            Category::DataloaderPinMemory => "dataloader_pin_memory",
            Category::DataloaderPersistent => "dataloader_persistent",
            Category::NoAmp => "no_amp",
            Category::NoCompile => "no_compile",
            Category::NoCudnnBenchmark => "no_cudnn_benchmark",
            Category::NoTf32 => "no_tf32",
            Category::HostSync => "host_sync",
            Category::ExplicitSync => "explicit_sync",
            Category::H2dBlocking => "h2d_blocking",
            Category::CpuTensorThenMove => "cpu_tensor_then_move",
            Category::NoGradMissing => "no_grad_missing",
            Category::IoInLoop => "io_in_loop",
            Category::ImageDecodeInLoop => "image_decode_in_loop",
            Category::PandasRowLoop => "pandas_row_loop",
            Category::SerialProcessing => "serial_processing",
            Category::PythonLoopNumeric => "python_loop_numeric",
            Category::LoggingInLoop => "logging_in_loop",
            Category::CheckpointInLoop => "checkpoint_in_loop",
            Category::RedundantWorkInLoop => "redundant_work_in_loop",
            Category::SmallBatch => "small_batch",
            Category::Other => "other",
        }
    }
}

/// The resource a waste leaves idle, or the one a verdict names as the bottleneck.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// GPU compute.
    Gpu,
    /// CPU compute.
    Cpu,
    /// Disk / IO bandwidth.
    Io,
}

impl Resource {
    /// Lower-case name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Gpu => "gpu",
            Resource::Cpu => "cpu",
            Resource::Io => "io",
        }
    }
}

/// How much a finding is expected to cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A few percent.
    Low,
    /// Tens of percent.
    Medium,
    /// Multiples.
    High,
}

/// How safe it is to apply a fix, ordered: `Safe` < `Numerics` < `Manual`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Applicability {
    /// Preserves the program's semantics.
    Safe,
    /// Changes floating-point results; needs a correctness gate.
    Numerics,
    /// Shown only; a human applies it.
    Manual,
}

/// Replace the bytes `start..end` of a file with `content`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// First byte replaced (0-based, inclusive).
    pub start: usize,
    /// End byte (exclusive); equal to `start` for an insertion.
    pub end: usize,
    /// Replacement text.
    pub content: String,
}

/// A fix: edits applied together, and how safe they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fix {
    /// How safe applying it is.
    pub applicability: Applicability,
    /// Non-overlapping edits of one file.
    pub edits: Vec<Edit>,
}

/// One finding of one rule in one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Rule id, e.g. `EA101`... as the registry names it.
    pub rule: String,
    /// Category from the fixed vocabulary.
    pub category: Category,
    /// File path as given on the command line (relative to the audited folder when walked).
    pub path: String,
    /// 1-based first line.
    pub line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// 1-based column (in characters) of the start.
    pub column: usize,
    /// Expected cost.
    pub severity: Severity,
    /// Resource left idle.
    pub resource: Resource,
    /// What is wrong and what to do, one or two sentences.
    pub message: String,
    /// The fix, when one can be expressed.
    pub fix: Option<Fix>,
}

/// What a file or function does, by the signals of reference ml_rules.md §2.3.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum CodeKind {
    /// Training: backward / optimizer.step / fit.
    Train,
    /// Inference: model calls without training.
    Infer,
    /// Data processing: pandas, file loops, Dataset classes.
    Data,
    /// None of the above.
    #[default]
    Other,
}

/// An estimate of how saturated a resource can be, with its one-line reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Upper bound on saturation in [0, 1]; `None` when unknown (never guessed).
    pub value: Option<f64>,
    /// Why, in one line, e.g. "main-process loader: 1 of 16 CPUs → ≤ 6 %".
    pub reason: String,
}

/// Estimated saturation of each resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// GPU compute.
    pub gpu: Estimate,
    /// CPU compute.
    pub cpu: Estimate,
    /// IO bandwidth.
    pub io: Estimate,
}

/// One stage of a hot loop's pipeline, as drawn in `analysis.html`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageKind {
    /// Where data comes from (files, a dataset, a DataFrame).
    DataSource,
    /// How it is batched and loaded (DataLoader, a Python loop).
    Loader,
    /// Host→device copies.
    HostToDevice,
    /// The model / the per-item work.
    Compute,
    /// Points where the host waits for the device.
    SyncPoint,
}

/// A stage with what the code does there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// Which stage.
    pub kind: StageKind,
    /// Short description, e.g. "DataLoader(num_workers=0, pin_memory unknown)".
    pub detail: String,
    /// 1-based line where the stage is set up or happens, when known.
    pub line: Option<usize>,
}

/// A loop that dominates run time: a step loop, an epoch loop, a per-record loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HotLoop {
    /// File.
    pub path: String,
    /// 1-based first line of the loop.
    pub line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// Enclosing function, if any.
    pub function: Option<String>,
    /// What it does.
    pub kind: CodeKind,
    /// Its pipeline, in order.
    pub stages: Vec<Stage>,
    /// Estimated saturation of each resource while this loop runs.
    pub saturation: Saturation,
}

/// The demand model of all analysed code against the machine's ceilings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Demand {
    /// Every hot loop found.
    pub loops: Vec<HotLoop>,
    /// Combined estimate: for each resource, the best any hot loop can reach.
    pub saturation: Saturation,
    /// Where the ceilings came from, and what was assumed.
    pub notes: Vec<String>,
}
