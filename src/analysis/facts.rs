//! The facts engine: one tree-sitter parse and one iterative walk per file.
//!
//! The walk records plain spans (calls, loops, assignments, functions, classes, comments) with
//! the context each one sits in (innermost loop and function, `no_grad`, a Dataset
//! `__getitem__`, an `if` guard inside the loop). A post-pass resolves qualified names through
//! the import table, gives variables a kind, classifies loops (step / epoch / record), functions
//! and the file (train / infer / data / other, reference ml_rules.md §2.3), and extracts
//! DataLoader, device and precision facts. Rules read these facts; they never walk the tree.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Serialize;
use tree_sitter::{Node, Tree};

use super::model::CodeKind;

/// A byte range of the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    /// The bytes a node of the tree covers.
    pub(crate) fn of(node: Node<'_>) -> Self {
        Span {
            start: node.start_byte(),
            end: node.end_byte(),
        }
    }
    pub fn contains(self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

/// The syntactic kind of an argument or assigned value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValKind {
    Int,
    Float,
    True,
    False,
    NoneLit,
    Str,
    Ident,
    Attr,
    Call,
    Dict,
    Other,
}

impl ValKind {
    /// A literal constant: an integer, a string, `True`, `False` or `None`.
    pub(crate) fn is_literal(self) -> bool {
        matches!(
            self,
            Self::Int | Self::Str | Self::True | Self::False | Self::NoneLit
        )
    }
}

/// One argument of a call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arg {
    pub name: Option<Span>,
    pub value: Span,
    pub vkind: ValKind,
}

/// The context a node sits in.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ctx {
    pub loop_: Option<u32>,
    pub func: Option<u32>,
    pub class: Option<u32>,
    pub no_grad: bool,
    pub getitem: bool,
    /// Inside an `if` nested in the innermost loop.
    pub under_if: bool,
    /// In a branch that runs at most once or every N iterations of the innermost loop: the body
    /// of `if step % N == 0:`, of `if i == 0:`, of a lazy init `if x is None: x = ...`, or a
    /// body that leaves the loop (`break`, `return`, `raise`, `sys.exit()`).
    pub mod_guard: bool,
    pub in_except: bool,
    /// The innermost switch around the node (an index into `Model::guards`): a branch taken
    /// only when a flag, constant or parameter has a given truth value.
    pub guard: Option<u32>,
}

/// A switch a branch depends on: `if args.flag:`, `if profile:`, `if not save_txt:`, or the
/// `else` of `if use_cuda:`. One per conjunct (`if a and b:` gives two, chained).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guard {
    /// The tested expression (`args.flag`, `profile`).
    pub cond: Span,
    /// The branch runs when `cond` is true (`false`: under `not`, or the `else`).
    pub when: bool,
    /// The enclosing guard.
    pub parent: Option<u32>,
    /// Where the test is (byte) and the function it sits in, to resolve `cond`.
    pub at: usize,
    pub func: Option<u32>,
    /// The branch never runs as shipped: `cond` resolves to the opposite of `when` (set after
    /// the walk, see `resolve::guards`); this guard's own test only, not its parents'.
    pub dead: bool,
    /// Not a switch: the rest of a block after a statement that always leaves it (`exit()`,
    /// `return`, `raise`), which never runs; `cond` is that statement.
    pub unreachable: bool,
}

/// One call expression.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub span: Span,
    pub func: Span,
    /// The function is a pure dotted chain (`a.b.c`).
    pub dotted: bool,
    /// `x.m(...)`: the span of `m`.
    pub method: Option<Span>,
    /// `x.m(...)`: the span of `x`.
    pub recv: Option<Span>,
    /// The root identifier of the receiver chain (`batch` in `batch["x"].to(d)`).
    pub recv_root: Option<Span>,
    /// The receiver is itself a call (`torch.zeros(3).to(d)`): its index.
    pub recv_call: Option<u32>,
    pub args_span: Span,
    pub args: (u32, u32),
    /// `**expr` in the arguments.
    pub splat: Option<Span>,
    pub star: bool,
    pub line: usize,
    pub end_line: usize,
    pub col: usize,
    pub ctx: Ctx,
}

/// One `for` or `while` loop.
#[derive(Debug, Clone)]
pub(crate) struct Loop {
    pub span: Span,
    pub line: usize,
    pub end_line: usize,
    pub col: usize,
    /// Identifiers bound by the loop target.
    pub targets: Vec<Span>,
    /// The iterated expression.
    pub iter: Option<Span>,
    pub parent: Option<u32>,
    pub ctx: Ctx,
    /// Computed after the walk.
    pub info: LoopInfo,
}

/// What a loop does, computed after the walk.
#[derive(Debug, Clone, Default)]
pub(crate) struct LoopInfo {
    pub iterates_loader: Option<String>,
    pub backward: bool,
    pub opt_step: bool,
    pub model_call: bool,
    pub step: bool,
    pub train: bool,
    pub epoch: bool,
    pub has_child_step: bool,
    /// Names bound from the loop target inside the body (the batch and what derives from it).
    pub batch_names: Vec<String>,
}

/// A function definition.
#[derive(Debug, Clone)]
pub(crate) struct Func {
    pub name: Span,
    /// Parameters in order: name, default value and its kind (`save_txt=False`).
    pub params: Vec<(Span, Option<(Span, ValKind)>)>,
    /// How many of `params` can be passed by position (those before `*` / `*args`).
    pub positional: usize,
    pub line: usize,
    pub class: Option<u32>,
    pub kind: CodeKind,
    pub backward: bool,
}

/// A class definition.
#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub name: Span,
    pub bases: Option<Span>,
}

/// An assignment `targets = value` (or augmented).
#[derive(Debug, Clone)]
pub(crate) struct Assign {
    pub span: Span,
    pub left: Span,
    /// Identifier or dotted targets (`x`, `self.x`); several for tuple targets.
    pub targets: Vec<Span>,
    pub value: Span,
    pub vkind: ValKind,
    pub rhs_call: Option<u32>,
    pub augmented: bool,
    pub line: usize,
    pub ctx: Ctx,
}

/// A subscript inside a loop (`a[i]`), for element-wise loop detection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sub {
    pub value: Span,
    pub index: Span,
    pub loop_: u32,
}

/// A resolved literal value, as far as the engine can tell.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Val {
    /// The argument is not given (the library default applies).
    Absent,
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// `None`.
    None,
    /// Given, but not resolvable to a constant: rules stay silent.
    Unknown,
}

impl Val {
    /// The integer, when known.
    #[must_use]
    pub fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }
}

/// The device the file runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Device {
    /// CUDA (or CUDA when available: the usual idiom).
    Cuda,
    /// Apple MPS.
    Mps,
    /// Explicitly the CPU.
    Cpu,
    /// No device signal.
    #[default]
    Unknown,
}

/// One `DataLoader(...)` call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoaderFacts {
    /// 1-based line.
    pub line: usize,
    /// The variable it is assigned to, when simple.
    pub var: Option<String>,
    /// `batch_size`.
    pub batch_size: Val,
    /// `num_workers`.
    pub num_workers: Val,
    /// `pin_memory`.
    pub pin_memory: Val,
    /// `persistent_workers`.
    pub persistent_workers: Val,
    /// `prefetch_factor`.
    pub prefetch_factor: Val,
}

/// Precision state of the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Precision {
    /// An autocast context or decorator, or a framework mixed-precision flag.
    pub autocast: bool,
    /// A `GradScaler`.
    pub grad_scaler: bool,
    /// `.half()` / `.bfloat16()` / a 16-bit dtype (also OpenAI CLIP's `clip.load`, which
    /// loads fp16 weights on CUDA).
    pub half: bool,
    /// TF32 enabled (`allow_tf32 = True`, `set_float32_matmul_precision("high"|"medium")`, HF `tf32=True`).
    pub tf32: bool,
    /// `torch.backends.cudnn.allow_tf32` when assigned a literal (PyTorch's default is `True`).
    pub cudnn_allow_tf32: Option<bool>,
    /// The model computes in float64 (`model.double()`, `.to(torch.float64)`,
    /// `torch.set_default_dtype(torch.float64)`): TF32 and mixed precision do not apply.
    pub fp64: bool,
    /// Precision (or compilation) is set from something the analysis cannot read: a launcher
    /// configuration (`Accelerator()` without `mixed_precision=`, or with a value that resolves
    /// to `None`) or a variable without a readable default (`precision=cfg.precision`). A
    /// variable with an argparse default is read as shipped (`default="no"` is fp32). A
    /// `from_pretrained(..., trust_remote_code=True)` without a dtype runs the hub's own model
    /// code, which may pick one (Qwen selects bf16).
    /// Precision rules stay silent.
    pub unresolved: bool,
}

/// A function and its classification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionFacts {
    /// Name.
    pub name: String,
    /// 1-based line.
    pub line: usize,
    /// What it does.
    pub kind: CodeKind,
}

/// A classified loop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopFacts {
    /// 1-based first line.
    pub line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// `step`, `epoch`, `record` or `other`.
    pub kind: &'static str,
    /// A training step loop (backward / optimizer step).
    pub train: bool,
}

/// Everything the engine knows about one file (serialised into `analysis.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FileFacts {
    /// Import table: local name → qualified name.
    pub imports: Vec<(String, String)>,
    /// Device.
    pub device: Device,
    /// DataLoader calls.
    pub loaders: Vec<LoaderFacts>,
    /// Precision state.
    pub precision: Precision,
    /// `torch.compile` (or a framework compile flag) present.
    pub compile: bool,
    /// `torch.backends.cudnn.benchmark` assigned: its value when literal.
    pub cudnn_benchmark: Option<bool>,
    /// `memory_format=torch.channels_last` used.
    pub channels_last: bool,
    /// Convolution layers or vision models present.
    pub conv: bool,
    /// Functions with their kind.
    pub functions: Vec<FunctionFacts>,
    /// Loops that matter (step, epoch, record).
    pub loops: Vec<LoopFacts>,
    /// What the demand model needs of each hot loop, parallel to `FileAnalysis::hot_loops`.
    pub hot: Vec<super::demand::LoopProfile>,
}

/// A variable kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarKind {
    Loader,
    Model,
    Optimizer,
    Scaler,
    Device,
    DataFrame,
    Tensor,
    Tokenizer,
}

/// The whole per-file model the rules read.
pub(crate) struct Model<'s> {
    pub src: &'s str,
    pub tree: Tree,
    pub calls: Vec<Call>,
    pub args: Vec<Arg>,
    pub loops: Vec<Loop>,
    pub funcs: Vec<Func>,
    pub classes: Vec<Class>,
    pub assigns: Vec<Assign>,
    pub subs: Vec<Sub>,
    /// Local name → qualified import target.
    pub imports: HashMap<&'s str, String>,
    /// `# efficiency-audit: ignore[...]` per 1-based line; empty list = all.
    pub suppress: HashMap<usize, Vec<String>>,
    pub kinds: HashMap<&'s str, VarKind>,
    /// Names of the functions and classes defined in the file.
    pub defined: std::collections::HashSet<&'s str>,
    /// Annotated function parameters: (name, annotation).
    pub param_types: Vec<(Span, Span)>,
    /// argparse destinations → default value span and kind.
    pub argparse: HashMap<String, Option<(Span, ValKind)>>,
    /// argparse options (`--gpu`) given no default, no `required=` and no action: `None`
    /// unless the command line sets them.
    pub argparse_unset: std::collections::HashSet<String>,
    /// The switches branches depend on (see [`Guard`]).
    pub guards: Vec<Guard>,
    pub facts: FileFacts,
    pub kind: CodeKind,
    /// Top-level import statements end (byte), for inserting one-liners after imports.
    pub last_import_end: Option<usize>,
    /// Uses multiprocessing / joblib / concurrent.futures / ray / dask.
    pub parallel_lib: bool,
    pub has_from_pretrained: bool,
    /// The file runs PyTorch: it imports torch, or a library that runs torch models
    /// (`sentence_transformers`, `diffusers`, a transformers PyTorch model class), or asks a
    /// tokenizer or processor for torch tensors (`return_tensors="pt"`), or moves a model with
    /// `.cuda()` (`net.cuda()`, torch imported only by the file's own modules).
    pub torch: bool,
    /// A loop hands the optimizer to a function this file does not show the loop of
    /// (`train_one_epoch(model, optimizer, loader)`): the file trains, its step loop is elsewhere.
    pub delegated_train: bool,
    /// Whether `torch.compile` runs is decided outside the file (an `Accelerator` without
    /// `dynamo_backend=` takes it from the `accelerate launch` configuration).
    pub compile_unknown: bool,
    /// Deterministic algorithms requested (cuDNN benchmark must stay off).
    pub deterministic: bool,
    /// A function parameter defaults to `"cuda"` / `"cuda:N"`.
    pub cuda_default_param: bool,
    /// A device parameter defaults to `"cpu"` or `"mps"` (`def train(..., device="cpu")`): the
    /// file says where a device it is handed points when nobody says otherwise.
    pub host_default_param: Option<&'static str>,
    /// The file star-imports a module named for a data loader (`from dataloader import *`, not
    /// torch's): a bare `DataLoader` is that module's class.
    pub loader_star_import: bool,
    /// The line ranges of the script's functions that nothing calls
    /// ([`super::as_shipped::uncalled_functions`]), worked out when first asked.
    pub uncalled: std::cell::OnceCell<Vec<(usize, usize)>>,
    /// The parameter count of the file's own models (`rules::local_model_params`), worked out
    /// when first asked: four rules ask.
    pub model_params: std::cell::OnceCell<Option<u64>>,
    /// What the file shows of its network's layers (`rules::no_tf32`'s architecture: conv,
    /// attention, linear, recurrent, embedding tables only), worked out once per file.
    pub architecture: std::cell::OnceCell<[bool; 5]>,
    /// The names every binding of which is an optimizer class
    /// (`resolve::optimizer_class_name`), worked out when first asked: every plain call asks.
    pub optimizer_classes: std::cell::OnceCell<std::collections::HashSet<&'s str>>,
    /// How many resolutions are under way on this file's stack: a resolution can ask a
    /// question of the as-shipped reading (a dict key's branch), which resolves again with a
    /// fresh depth of its own; this count bounds the whole chain.
    pub resolving: std::cell::Cell<u32>,
}

/// What one assignment binds a name to: its value, or the item of a tuple it unpacks.
struct Bound<'m> {
    assign: &'m Assign,
    value: Span,
    vkind: ValKind,
}

/// `x` of `((x))`: the expression inside any parentheses around it.
pub(crate) fn unparen(mut n: Node<'_>) -> Node<'_> {
    while n.node_kind() == "parenthesized_expression" {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

/// Is `node` (inside parentheses) a truth value by its shape: a comparison, `and` / `or` /
/// `not`, `True` / `False`, or a call (`torch.cuda.is_available()`)?
pub(crate) fn truth_valued(node: Node<'_>) -> bool {
    let mut n = node;
    for _ in 0..16 {
        if n.node_kind() != "parenthesized_expression" {
            break;
        }
        let Some(inner) = n.named_child(0) else {
            return false;
        };
        n = inner;
    }
    matches!(
        n.node_kind(),
        "comparison_operator" | "boolean_operator" | "not_operator" | "true" | "false" | "call"
    )
}

/// The two sides of a comparison of two operands and its operator's text (`i >= 10`, `x not in
/// ys`); `None` for anything else, a chained comparison included.
pub(crate) fn comparison_parts<'n, 't>(
    cond: Node<'n>,
    src: &'t str,
) -> Option<(Node<'n>, &'t str, Node<'n>)> {
    if cond.node_kind() != "comparison_operator" || cond.named_child_count() != 2 {
        return None;
    }
    let (a, b) = (cond.named_child(0)?, cond.named_child(1)?);
    let op = src.get(a.end_byte()..b.start_byte())?.trim();
    Some((a, op, b))
}

/// Is `node` a test of Apple's GPU backend, `torch.backends.mps.is_available()`? The Linux GPU
/// runner a file is audited for never has it.
pub(crate) fn mps_available_call(node: Node<'_>, src: &str) -> bool {
    backend_available_call(node, src, "mps.is_available")
}

/// Is `node` `torch.cuda.is_available()` (also `cuda.is_available()`): a test of the device,
/// true on the GPU runner a file that runs on CUDA is audited for (`resolve::device_guards`
/// settles it once the file's device is known)?
pub(crate) fn cuda_available_call(node: Node<'_>, src: &str) -> bool {
    backend_available_call(node, src, "cuda.is_available")
        // (`torch.accelerator.is_available()`, PyTorch 2.6's test of whichever accelerator
        // the machine has: CUDA on the GPU runner)
        || backend_available_call(node, src, "torch.accelerator.is_available")
}

/// A call without arguments of a function whose dotted name ends with `suffix`.
fn backend_available_call(node: Node<'_>, src: &str, suffix: &str) -> bool {
    node.node_kind() == "call"
        && field::get(node, field::FUNCTION).is_some_and(|f| {
            src.get(f.start_byte()..f.end_byte())
                .is_some_and(|t| t.ends_with(suffix))
        })
        && field::get(node, field::ARGUMENTS).is_some_and(|a| a.named_child_count() == 0)
}

/// Does `text` assign `name` anywhere (`name = ...`, `name += ...`, also as one target of
/// several, `a, name = ...`)? A textual check of a loop's source, made while the loop is
/// walked (before its assignments are recorded).
fn assigns_in_text(text: &str, name: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(name).any(|(i, _)| {
        let before = i.checked_sub(1).and_then(|j| bytes.get(j)).copied();
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
            return false;
        }
        let rest = text.get(i + name.len()..).unwrap_or("");
        if rest.starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_') {
            return false;
        }
        let rest = rest.trim_start_matches([' ', '\t', ',', ')']);
        let rest = rest.trim_start_matches(|ch: char| {
            ch.is_ascii_alphanumeric() || matches!(ch, '_' | ' ' | ',' | '(' | ')')
        });
        (rest.starts_with('=') && !rest.starts_with("=="))
            || ["+=", "-=", "*=", "/="]
                .iter()
                .any(|op| rest.starts_with(op))
    })
}

/// `isinstance(x, torch.nn.Module)` / `isinstance(x, nn.Module)` of a plain name: a test of
/// whether `x` is a network (true where `x` is the file's model, [`super::as_shipped::condition`]).
pub(crate) fn module_test(node: Node<'_>, src: &str) -> bool {
    let text = |n: Node<'_>| src.get(n.start_byte()..n.end_byte()).unwrap_or("");
    field::get(node, field::FUNCTION).is_some_and(|f| text(f) == "isinstance")
        && field::get(node, field::ARGUMENTS).is_some_and(|a| {
            a.named_child_count() == 2
                && a.named_child(0)
                    .is_some_and(|x| x.node_kind() == "identifier")
                && a.named_child(1)
                    .is_some_and(|c| matches!(text(c), "nn.Module" | "torch.nn.Module"))
        })
}

/// A test of a string's prefix or suffix with one argument, `opt.device.startswith("cuda")`:
/// the method (`"startswith"` / `"endswith"`), the string tested and the argument.
pub(crate) fn affix_test<'t>(
    node: Node<'t>,
    src: &str,
) -> Option<(&'static str, Node<'t>, Node<'t>)> {
    if node.node_kind() != "call" {
        return None;
    }
    let f = field::get(node, field::FUNCTION).filter(|f| f.node_kind() == "attribute")?;
    let attr = f.child_by_field_name("attribute")?;
    let method = match src.get(attr.start_byte()..attr.end_byte())? {
        "startswith" => "startswith",
        "endswith" => "endswith",
        _ => return None,
    };
    let args = field::get(node, field::ARGUMENTS).filter(|a| a.named_child_count() == 1)?;
    Some((method, field::get(f, field::OBJECT)?, args.named_child(0)?))
}

/// The elements of a tuple or expression list (`a, b = f(x), \\\n g(y)`): its named children
/// without the extras the grammar lets in between, a line continuation or a comment.
pub(crate) fn elements(list: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = list.walk();
    list.named_children(&mut cursor)
        .filter(|c| !c.is_extra())
        .collect()
}

/// The most resolutions one chain may nest (a resolution asks the as-shipped reading, which
/// resolves again): deep enough for any real script, shallow enough for the stack of a worker
/// thread.
const MAX_NESTED_RESOLUTIONS: u32 = 48;

/// How often `name` (a name or a dotted one) occurs in `src` as a whole word, not as the
/// attribute of something else (`x.name`): in code, strings and comments alike.
pub(crate) fn word_uses(src: &str, name: &str) -> usize {
    word_positions(src, name).count()
}

/// The byte offsets where `name` stands as a word in `src`, as [`word_uses`] counts them (not
/// inside a longer name, nor as an attribute, `x.name`; `name.attr` counts).
pub(crate) fn word_positions<'a>(src: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let word =
        |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.');
    let bytes = src.as_bytes();
    src.match_indices(name).map(|(i, _)| i).filter(move |&i| {
        !word(i.checked_sub(1).and_then(|j| bytes.get(j)))
            && !word(bytes.get(i + name.len()).filter(|b| **b != b'.'))
    })
}

/// A node's kind (`"identifier"`, `"call"`), read from a table of the Python grammar's kind
/// names built once: tree-sitter's own `Node::kind` measures and UTF-8-checks the grammar's C
/// string on every call, and the analysis asks it of nearly every node it visits. The same
/// name as `Node::kind` in every case (`ERROR` too).
pub(crate) trait NodeKind {
    fn node_kind(&self) -> &'static str;
}

impl NodeKind for Node<'_> {
    fn node_kind(&self) -> &'static str {
        static KINDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let kinds = KINDS.get_or_init(|| {
            let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
            (0..lang.node_kind_count())
                .map(|id| {
                    u16::try_from(id)
                        .ok()
                        .and_then(|id| lang.node_kind_for_id(id))
                        .unwrap_or("")
                        .to_owned()
                })
                .collect()
        });
        match kinds.get(usize::from(self.kind_id())) {
            Some(k) if !k.is_empty() => k,
            // (`ERROR` and any id past the table: ask tree-sitter)
            _ => match self.kind() {
                "ERROR" => "ERROR",
                _ => "",
            },
        }
    }
}

/// tree-sitter field ids of the Python grammar, looked up once (`child_by_field_name` searches
/// the grammar's field names on every call).
pub(crate) mod field {
    use std::sync::OnceLock;

    use tree_sitter::Node;

    const NAMES: [&str; 17] = [
        "alias",
        "arguments",
        "attribute",
        "condition",
        "definition",
        "function",
        "key",
        "left",
        "module_name",
        "name",
        "object",
        "operator",
        "parameters",
        "right",
        "subscript",
        "superclasses",
        "value",
    ];
    pub(crate) const ALIAS: usize = 0;
    pub(crate) const ARGUMENTS: usize = 1;
    pub(crate) const ATTRIBUTE: usize = 2;
    pub(crate) const CONDITION: usize = 3;
    pub(crate) const DEFINITION: usize = 4;
    pub(crate) const FUNCTION: usize = 5;
    pub(crate) const KEY: usize = 6;
    pub(crate) const LEFT: usize = 7;
    pub(crate) const MODULE_NAME: usize = 8;
    pub(crate) const NAME: usize = 9;
    pub(crate) const OBJECT: usize = 10;
    pub(crate) const OPERATOR: usize = 11;
    pub(crate) const PARAMETERS: usize = 12;
    pub(crate) const RIGHT: usize = 13;
    pub(crate) const SUBSCRIPT: usize = 14;
    pub(crate) const SUPERCLASSES: usize = 15;
    pub(crate) const VALUE: usize = 16;

    fn ids() -> &'static [u16; 17] {
        static IDS: OnceLock<[u16; 17]> = OnceLock::new();
        IDS.get_or_init(|| {
            let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
            NAMES.map(|n| lang.field_id_for_name(n).map_or(0, |id| id.get()))
        })
    }

    /// The child of `node` in field `f` (one of the constants above).
    pub(crate) fn get<'t>(node: Node<'t>, f: usize) -> Option<Node<'t>> {
        match ids().get(f) {
            Some(&id) if id != 0 => node.child_by_field_id(id),
            _ => None,
        }
    }
}

/// Depth cap for the few bounded sub-tree scans (the main walk is iterative and unbounded).
const SCAN_CAP: usize = 400;

/// How many calls of a function [`Model::param_value`] reads before it gives up: each call's
/// argument may be a parameter of its caller in turn, so the work multiplies with depth.
const MAX_CALLERS: usize = 16;

/// Runners that build a command line from a function's signature (`tyro.cli(main)`,
/// `fire.Fire(main)`): as shipped, each parameter of that function holds its default.
const SIGNATURE_CLIS: [&str; 6] = [
    "tyro.cli",
    "fire.Fire",
    "typer.run",
    "defopt.run",
    "jsonargparse.CLI",
    "clize.run",
];

enum Frame {
    Loop {
        id: usize,
        prev: Option<u32>,
    },
    /// The `else` of a `for` / `while`: it runs once, after the loop, in the loop around it.
    LoopElse {
        id: usize,
        prev: Option<u32>,
    },
    Func {
        id: usize,
        prev_func: Option<u32>,
        prev_loop: Option<u32>,
        prev_mod_base: u32,
        getitem: bool,
        no_grad: bool,
    },
    Class {
        id: usize,
        prev: Option<u32>,
    },
    With {
        id: usize,
    },
    If {
        id: usize,
        /// The `if` leaves the block (`if args.evaluate: validate(); return`): the statements
        /// after it run under this switch (the negation of its condition).
        after: Option<(Span, bool)>,
    },
    /// The block of an `if` branch: its cadence and the switches it depends on.
    Block {
        id: usize,
        modulo: bool,
        prev_guard: Option<u32>,
    },
    Except {
        id: usize,
    },
    Comp {
        id: usize,
    },
}

impl Frame {
    fn id(&self) -> usize {
        match self {
            Frame::Loop { id, .. }
            | Frame::LoopElse { id, .. }
            | Frame::Func { id, .. }
            | Frame::Class { id, .. }
            | Frame::With { id, .. }
            | Frame::If { id, .. }
            | Frame::Block { id, .. }
            | Frame::Except { id }
            | Frame::Comp { id } => *id,
        }
    }
}

/// How the block of an `if` branch runs, decided at the `if`.
struct BlockMark {
    /// At most once or every N iterations of the loop.
    modulo: bool,
    /// (tested expression, the branch runs when it is true), outermost first.
    switches: Vec<(Span, bool)>,
}

struct LoopEntry {
    ifs: u32,
    mod_ifs: u32,
}

struct Walker<'s> {
    src: &'s str,
    m: Model<'s>,
    frames: Vec<Frame>,
    cur_loop: Option<u32>,
    cur_func: Option<u32>,
    cur_class: Option<u32>,
    no_grad: u32,
    getitem: u32,
    ifs: u32,
    mod_ifs: u32,
    /// `mod_ifs` where the current function starts: a cadence guard inside the function, outside
    /// any loop of it, makes what it holds run every N calls.
    func_mod_base: u32,
    /// The innermost switch (`Model::guards`).
    guard_top: Option<u32>,
    /// Node id of an `if` branch's block → how it runs (entered later in the walk).
    block_watch: Vec<(usize, BlockMark)>,
    excepts: u32,
    comps: u32,
    loop_entry: Vec<LoopEntry>,
    /// Node id of an assignment's right-hand side → the assignment index.
    rhs_watch: Vec<(usize, u32)>,
    /// Node id of a decorated function → its decorators disable grad.
    decor_watch: Vec<(usize, bool)>,
    /// Node id of a call that is the receiver of another call → the outer call index.
    recv_watch: Vec<(usize, u32)>,
}

pub(crate) fn line_col(src: &str, node: Node<'_>) -> (usize, usize) {
    let p = node.start_position();
    let start = node.start_byte();
    let line_start = start.saturating_sub(p.column);
    let col = src
        .get(line_start..start)
        .map_or(p.column, |s| s.chars().count());
    (p.row + 1, col + 1)
}

fn val_kind(node: Node<'_>) -> ValKind {
    match node.node_kind() {
        "integer" => ValKind::Int,
        // a negative literal (`default=-1`)
        "unary_operator"
            if node.child(0).is_some_and(|o| o.node_kind() == "-")
                && node
                    .named_child(0)
                    .is_some_and(|a| a.node_kind() == "integer") =>
        {
            ValKind::Int
        }
        "float" => ValKind::Float,
        "true" => ValKind::True,
        "false" => ValKind::False,
        "none" => ValKind::NoneLit,
        "string" | "concatenated_string" => ValKind::Str,
        "identifier" => ValKind::Ident,
        "attribute" => ValKind::Attr,
        "call" => ValKind::Call,
        "dictionary" => ValKind::Dict,
        _ => ValKind::Other,
    }
}

/// Is `node` a pure dotted chain of identifiers?
fn is_dotted(mut node: Node<'_>) -> bool {
    for _ in 0..SCAN_CAP {
        match node.node_kind() {
            "identifier" => return true,
            "attribute" => match field::get(node, field::OBJECT) {
                Some(o) => node = o,
                None => return false,
            },
            _ => return false,
        }
    }
    false
}

/// The root identifier of an expression chain (`a` in `a.b[c].d(e).f`).
fn root_ident(mut node: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..SCAN_CAP {
        match node.node_kind() {
            "identifier" => return Some(node),
            "attribute" => node = field::get(node, field::OBJECT)?,
            "subscript" => node = field::get(node, field::VALUE)?,
            "call" => node = field::get(node, field::FUNCTION)?,
            "parenthesized_expression" => node = node.named_child(0)?,
            _ => return None,
        }
    }
    None
}

/// Does a node of the sub-tree (bounded scan, the node itself included) satisfy `hit`?
fn any_in_subtree(node: Node<'_>, mut hit: impl FnMut(Node<'_>) -> bool) -> bool {
    let mut stack = vec![node];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > SCAN_CAP {
            return false;
        }
        if hit(n) {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// Does one of the block's own statements leave the loop or the program (`break`, `return`,
/// `raise`, `sys.exit()`, `exit()`, `quit()`, `os._exit()`)? What follows it never runs, so the
/// block runs through at most once.
// Ex) if not math.isfinite(loss): print(...); sys.exit(1)
// Ex) for x, y in loader: ...; compute_metrics(y.cpu().numpy(), out.cpu().numpy()); exit()
pub(crate) fn leaves(src: &str, block: Node<'_>) -> bool {
    let mut c = block.walk();
    block
        .named_children(&mut c)
        .any(|st| st.node_kind() != "continue_statement" && always_leaves(src, st))
}

/// Does statement `st` always leave its block: `break`, `continue`, `return`, `raise`, or a
/// call that ends the program (`sys.exit()`, `exit()`, `quit()`, `os._exit(1)`)? The
/// statements after it in the block never run.
fn always_leaves(src: &str, st: Node<'_>) -> bool {
    match st.node_kind() {
        "break_statement" | "continue_statement" | "return_statement" | "raise_statement" => true,
        "expression_statement" => st
            .named_child(0)
            .filter(|n| n.node_kind() == "call")
            .and_then(|n| field::get(n, field::FUNCTION))
            .is_some_and(|f| {
                matches!(
                    src.get(f.start_byte()..f.end_byte()),
                    Some("sys.exit" | "exit" | "quit" | "os._exit")
                )
            }),
        _ => false,
    }
}

/// Does the sub-tree contain a `%` binary operator (bounded scan)?
fn contains_modulo(node: Node<'_>, src: &str) -> bool {
    any_in_subtree(node, |n| {
        n.node_kind() == "binary_operator"
            && field::get(n, field::OPERATOR)
                .is_some_and(|o| o.utf8_text(src.as_bytes()).ok() == Some("%"))
    })
}

/// The literal content of a plain string node (no interpolation), else `None`.
pub(crate) fn string_value<'a>(node: Node<'_>, src: &'a str) -> Option<Cow<'a, str>> {
    if node.node_kind() != "string" {
        return None;
    }
    let mut out: Option<Cow<'a, str>> = None;
    let mut c = node.walk();
    for ch in node.named_children(&mut c) {
        match ch.node_kind() {
            "string_start" | "string_end" => {}
            "string_content" => {
                let t = src.get(ch.start_byte()..ch.end_byte())?;
                out = Some(match out {
                    None => Cow::Borrowed(t),
                    Some(prev) => Cow::Owned(format!("{prev}{t}")),
                });
            }
            _ => return None,
        }
    }
    Some(out.unwrap_or(Cow::Borrowed("")))
}

impl<'s> Walker<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        self.src
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    fn ctx(&self) -> Ctx {
        let (under_if, mod_guard) =
            match self.cur_loop.and_then(|l| self.loop_entry.get(l as usize)) {
                Some(e) => (self.ifs > e.ifs, self.mod_ifs > e.mod_ifs),
                // (in a function outside its loops: a cadence guard of the function's own,
                // `if (self.global_step + 1) % every == 0: self.visualize(...)` in a
                // Lightning `training_step`)
                None => (
                    false,
                    self.cur_func.is_some() && self.mod_ifs > self.func_mod_base,
                ),
            };
        Ctx {
            loop_: self.cur_loop,
            func: self.cur_func,
            class: self.cur_class,
            no_grad: self.no_grad > 0,
            getitem: self.getitem > 0,
            under_if,
            mod_guard,
            in_except: self.excepts > 0,
            guard: self.guard_top,
        }
    }

    /// The conjuncts of a condition: `a and (b and c)` → `[a, b, c]`, also `(a == x) & b`
    /// (bounded).
    fn conjuncts<'t>(&self, cond: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let mut stack = vec![cond];
        while let Some(n) = stack.pop() {
            if out.len() > 16 {
                break;
            }
            match n.node_kind() {
                "boolean_operator"
                    if field::get(n, field::OPERATOR)
                        .is_some_and(|o| o.utf8_text(self.src.as_bytes()).ok() == Some("and")) =>
                {
                    if let Some(r) = field::get(n, field::RIGHT) {
                        stack.push(r);
                    }
                    if let Some(l) = field::get(n, field::LEFT) {
                        stack.push(l);
                    }
                }
                // (`(args.GPU == True) & torch.cuda.is_available()`: `&` of truth values)
                "binary_operator"
                    if field::get(n, field::OPERATOR)
                        .is_some_and(|o| o.utf8_text(self.src.as_bytes()).ok() == Some("&"))
                        && field::get(n, field::LEFT).is_some_and(truth_valued)
                        && field::get(n, field::RIGHT).is_some_and(truth_valued) =>
                {
                    if let Some(r) = field::get(n, field::RIGHT) {
                        stack.push(r);
                    }
                    if let Some(l) = field::get(n, field::LEFT) {
                        stack.push(l);
                    }
                }
                "parenthesized_expression" => {
                    if let Some(c) = n.named_child(0) {
                        stack.push(c);
                    }
                }
                _ => out.push(n),
            }
        }
        out
    }

    /// `x` or `args.x` (a name, or an attribute of a name): something a switch can be.
    fn switch_like(node: Node<'_>, src: &str) -> bool {
        match node.node_kind() {
            // `if False:` around code kept for later
            "identifier" | "true" | "false" => true,
            // `args.fp16`, and a namespace an object holds: `self.config.srl_alternate`
            "attribute" => field::get(node, field::OBJECT).is_some_and(|o| {
                o.node_kind() == "identifier"
                    || (o.node_kind() == "attribute"
                        && field::get(o, field::OBJECT)
                            .is_some_and(|s| s.node_kind() == "identifier"))
            }),
            // `torch.backends.mps.is_available()`: a backend the audited runner never has; and
            // `torch.cuda.is_available()`, whose `else` is the CPU fallback of a CUDA file
            "call" if mps_available_call(node, src) || cuda_available_call(node, src) => true,
            // `opt.device.startswith("cuda")`: a switch's string tested by its prefix or suffix
            "call"
                if affix_test(node, src).is_some_and(|(_, tested, arg)| {
                    arg.node_kind() == "string" && Self::switch_like(tested, src)
                }) =>
            {
                true
            }
            // `isinstance(net, torch.nn.Module)`: settled once the variables' kinds are known
            "call" if module_test(node, src) => true,
            // `args.dataset.lower()`: a switch case-folded or stripped
            "call" => field::get(node, field::FUNCTION).is_some_and(|f| {
                f.node_kind() == "attribute"
                    && f.child_by_field_name("attribute").is_some_and(|a| {
                        matches!(
                            src.get(a.start_byte()..a.end_byte()),
                            Some("lower" | "upper" | "strip")
                        )
                    })
                    && field::get(node, field::ARGUMENTS)
                        .is_some_and(|a| a.named_child_count() == 0)
                    && field::get(f, field::OBJECT).is_some_and(|o| Self::switch_like(o, src))
            }),
            // `config["enable_tensorboard"]`: a dict's entry under a literal key
            "subscript" => {
                field::get(node, field::VALUE).is_some_and(|v| v.node_kind() == "identifier")
                    && node.named_child_count() == 2
                    && node
                        .named_child(1)
                        .is_some_and(|k| k.node_kind() == "string")
            }
            _ => false,
        }
    }

    /// A conjunct as a switch: `flag` → (flag, true), `not flag` → (flag, false), and a
    /// comparison of a switch with a literal (`args.mode == "train"`, `"info" in args.data`,
    /// `args.mode in ["fsp", "ab"]`) → (the comparison, true).
    fn switch_of(node: Node<'_>, src: &str) -> Option<(Span, bool)> {
        if Self::switch_like(node, src) {
            return Some((Span::of(node), true));
        }
        if node.node_kind() == "comparison_operator" && node.named_child_count() == 2 {
            let scalar = |n: Node<'_>| {
                matches!(
                    n.node_kind(),
                    "string" | "integer" | "true" | "false" | "none"
                )
            };
            // (also a collection of them: `args.kd_mode in ['fsp', 'ab']`)
            let literal = |n: Node<'_>| {
                scalar(n)
                    || (matches!(n.node_kind(), "list" | "tuple" | "set")
                        && n.named_child_count() > 0
                        && n.named_children(&mut n.walk()).all(scalar))
            };
            let (l, r) = (node.named_child(0)?, node.named_child(1)?);
            if (Self::switch_like(l, src) && literal(r))
                || (literal(l) && Self::switch_like(r, src))
            {
                return Some((Span::of(node), true));
            }
        }
        if node.node_kind() == "not_operator"
            && let Some(inner) = node.named_child(0)
            && Self::switch_like(inner, src)
        {
            return Some((Span::of(inner), false));
        }
        // `args.inference or (args.render_validation and epoch % k == 0)`: a disjunction of
        // switches (each side a switch, or a conjunction holding one) is one, false when each
        // side is
        if Self::or_of_switches(node, src, 0) {
            return Some((Span::of(node), true));
        }
        None
    }

    /// Is `node` an `or` whose every side is a switch ([`Self::switch_of`]), another such `or`,
    /// or an `and` with a switch on one side (which makes it false when that switch is)?
    fn or_of_switches(node: Node<'_>, src: &str, depth: u8) -> bool {
        let op = |n: Node<'_>| {
            field::get(n, field::OPERATOR).and_then(|o| src.get(o.start_byte()..o.end_byte()))
        };
        let side = |n: Node<'_>| {
            let n = unparen(n);
            match (n.node_kind(), op(n)) {
                ("boolean_operator", Some("or")) => Self::or_of_switches(n, src, depth + 1),
                ("boolean_operator", Some("and")) => [field::LEFT, field::RIGHT].iter().any(|f| {
                    field::get(n, *f).is_some_and(|s| Self::switch_of(unparen(s), src).is_some())
                }),
                _ => Self::switch_of(n, src).is_some(),
            }
        };
        depth < 4
            && node.node_kind() == "boolean_operator"
            && op(node) == Some("or")
            && field::get(node, field::LEFT).is_some_and(side)
            && field::get(node, field::RIGHT).is_some_and(side)
    }

    /// The block of an `if` or `else` clause.
    fn block_of(node: Node<'_>) -> Option<Node<'_>> {
        let mut c = node.walk();
        node.named_children(&mut c)
            .find(|ch| ch.node_kind() == "block")
    }

    /// Does the block leave the loop or the program (see [`leaves`])? Then it runs at most once.
    fn leaves(&self, block: Node<'_>) -> bool {
        leaves(self.src, block)
    }

    /// Does `block` assign `name` a value other than `None` (not inside a nested function;
    /// bounded scan)?
    fn assigns_name(&self, block: Node<'_>, name: &str) -> bool {
        let mut stack = vec![block];
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > SCAN_CAP {
                return false;
            }
            match n.node_kind() {
                "function_definition" | "class_definition" | "lambda" => continue,
                "assignment"
                    if field::get(n, field::LEFT).is_some_and(|l| self.text(l) == name)
                        && field::get(n, field::RIGHT).is_some_and(|r| r.node_kind() != "none") =>
                {
                    return true;
                }
                _ => {}
            }
            let mut c = n.walk();
            for ch in n.named_children(&mut c) {
                stack.push(ch);
            }
        }
        false
    }

    /// Does the body of this `if` run at most once per loop: it tests a loop counter for one
    /// value (`if i == 0:`), it initialises what it tests (`if x is None: x = ...`), or it ends
    /// by leaving the loop or the program?
    fn runs_once(&self, node: Node<'_>, block: Node<'_>) -> bool {
        let Some(cond) = field::get(node, field::CONDITION) else {
            return false;
        };
        self.leaves(block)
            || self
                .conjuncts(cond)
                .into_iter()
                .any(|c| self.counter_is_literal(c) || self.lazy_init(c, block))
    }

    /// `x is None` (or `len(x) == 0`, `not x`) where the block assigns `x` a value (or appends
    /// to it): after the first pass the test fails. Also `len(x) < N` (N ≤ 16) where the block appends to `x`:
    /// it runs at most N times.
    fn lazy_init(&self, cond: Node<'_>, block: Node<'_>) -> bool {
        // Ex) if features is None: features = torch.zeros(n, d)
        // Ex) if len(y_true) == 0: y_true = y.cpu().numpy()
        if cond.node_kind() == "not_operator"
            && let Some(a) = cond.named_child(0)
            && Self::switch_like(a, self.src)
        {
            // (or the statement right after the `if` sets it: `if not warmup_completed:
            // print("Warm up Completed")` then `warmup_completed = True`)
            let set_after = block
                .parent()
                .filter(|p| p.node_kind() == "if_statement")
                .and_then(|p| p.next_named_sibling())
                .is_some_and(|next| {
                    next.node_kind() == "expression_statement"
                        && next.named_child(0).is_some_and(|asg| {
                            asg.node_kind() == "assignment"
                                && field::get(asg, field::LEFT)
                                    .is_some_and(|l| self.text(l) == self.text(a))
                        })
                });
            return set_after || self.assigns_name(block, self.text(a));
        }
        let Some((a, op, b)) = self.comparison_parts(cond) else {
            return false;
        };
        // Ex) if len(adv_examples) < 5: adv_examples.append(...)  (at most 5 times)
        if let Some((name, op, n)) = self.len_comparison(cond) {
            let appends = [".append(", ".extend("]
                .iter()
                .any(|m| self.text(block).contains(&format!("{name}{m}")));
            return match op {
                "<" | "<=" if n <= 16 => appends,
                // (or appends to it: `if len(all_preds) == 0: all_preds.append(...)`)
                "==" if n == 0 => self.assigns_name(block, name) || appends,
                _ => false,
            };
        }
        b.node_kind() == "none"
            && Self::switch_like(a, self.src)
            && op == "is"
            && self.assigns_name(block, self.text(a))
    }

    /// A binary comparison `a OP b` (`==`, `>=`, `is`, `not in`, ...): its two sides and the
    /// operator's text.
    fn comparison_parts<'n>(&self, cond: Node<'n>) -> Option<(Node<'n>, &'s str, Node<'n>)> {
        comparison_parts(cond, self.src)
    }

    /// Is `n` a call of the builtin `len`?
    fn is_len_call(&self, n: Node<'_>) -> bool {
        n.node_kind() == "call"
            && field::get(n, field::FUNCTION).is_some_and(|f| self.text(f) == "len")
    }

    /// `len(x) == N` / `len(x) >= N` / `len(x) > N` with N a literal of at least 2 or a name
    /// (`len(buffer) >= args.batch_size`): a buffer flushed when it fills, every N iterations.
    // Ex) if len(all_desc) == 100: all_desc = torch.vstack(all_desc).cpu().numpy(); print(...)
    fn flush_guard(&self, cond: Node<'_>) -> bool {
        let Some((a, op, b)) = self.comparison_parts(cond) else {
            return false;
        };
        self.is_len_call(a)
            && matches!(op, "==" | ">=" | ">")
            && match b.node_kind() {
                "integer" => self.text(b).parse::<u32>().is_ok_and(|n| n >= 2),
                "identifier" | "attribute" => true,
                _ => false,
            }
    }

    /// Is the test a membership of the loop's own variable in a collection (`if t in
    /// step_markers:`, `if epoch in milestones:`), or a bound on it that only the first few
    /// iterations pass (`if i < 4:`, `if i < len(writers):`)? Its body runs at the iterations
    /// selected, not at every one.
    // Ex) for t_val in reversed(range(T)): ... if t_val in step_markers: frames.append(x.cpu())
    fn selected_iterations(&self, cond: Node<'_>) -> bool {
        let Some((a, op, b)) = self.comparison_parts(cond) else {
            return false;
        };
        // or the first few: `if i < len(output_writers):` (not of the loop's own iterable),
        // `if i < 4:`
        // Ex) if i < len(output_writers): output_writers[i].add_image(..., input[0].cpu())
        let first_few = matches!(op, "<" | "<=")
            && match b.node_kind() {
                "integer" => self.text(b).parse::<u32>().is_ok_and(|n| n <= 16),
                "call" if self.is_len_call(b) => self
                    .cur_loop
                    .and_then(|l| self.m.loops.get(l as usize))
                    .and_then(|l| l.iter)
                    .is_none_or(|it| {
                        let counted = field::get(b, field::ARGUMENTS)
                            .map_or("", |args| self.text(args))
                            .trim_matches(['(', ')']);
                        !self
                            .src
                            .get(it.start..it.end)
                            .unwrap_or("")
                            .contains(counted)
                    }),
                _ => false,
            };
        if !(op == "in" || first_few) || a.node_kind() != "identifier" {
            return false;
        }
        let name = self.text(a);
        self.cur_loop
            .and_then(|l| self.m.loops.get(l as usize))
            .is_some_and(|l| {
                l.targets
                    .iter()
                    .any(|t| self.src.get(t.start..t.end) == Some(name))
            })
    }

    /// Is the test a check for a numerical failure (`if torch.isnan(loss):`, `if
    /// np.isnan(x).any():`, `if not torch.isfinite(loss):`)? Its body (a warning, a skipped
    /// batch) runs when training goes wrong, not every step.
    // Ex) if torch.isnan(loss): print(f"NaN at iter {it}, skipping..."); continue
    fn numeric_error_check(&self, cond: Node<'_>) -> bool {
        const CHECKS: &[&str] = &["isnan", "isinf", "isfinite", "isneginf", "isposinf"];
        any_in_subtree(cond, |n| {
            n.node_kind() == "call"
                && field::get(n, field::FUNCTION).is_some_and(|f| {
                    CHECKS.contains(&self.text(f).rsplit('.').next().unwrap_or(""))
                })
        })
    }

    /// The end of a reinforcement-learning episode: `if done:`, `if terminated or truncated:`,
    /// `if "episode" in info:`, `if info.get("episode"):`. Its body runs once per episode (tens
    /// to thousands of environment steps), not every step.
    fn episode_end(&self, cond: Node<'_>) -> bool {
        const DONE: &[&str] = &["done", "dones", "terminated", "truncated", "is_done"];
        let name_is_done = |n: Node<'_>| {
            matches!(n.node_kind(), "identifier" | "attribute")
                && DONE.contains(&self.text(n).rsplit('.').next().unwrap_or(""))
        };
        let quotes_episode = |n: Node<'_>| {
            matches!(
                self.text(n).trim_matches(['"', '\'']),
                "episode" | "final_info"
            )
        };
        match cond.node_kind() {
            "identifier" | "attribute" => name_is_done(cond),
            "parenthesized_expression" => cond.named_child(0).is_some_and(|c| self.episode_end(c)),
            // `terminated or truncated`
            "boolean_operator" => {
                let (Some(l), Some(r)) = (
                    field::get(cond, field::LEFT),
                    field::get(cond, field::RIGHT),
                ) else {
                    return false;
                };
                field::get(cond, field::OPERATOR).is_some_and(|o| self.text(o) == "or")
                    && self.episode_end(l)
                    && self.episode_end(r)
            }
            // `"episode" in info`, `"episode" in infos[0]`
            "comparison_operator" => self.comparison_parts(cond).is_some_and(|(l, op, _)| {
                op == "in" && l.node_kind() == "string" && quotes_episode(l)
            }),
            // `info.get("episode")`
            "call" => {
                self.text(cond).contains(".get(")
                    && field::get(cond, field::ARGUMENTS)
                        .and_then(|a| a.named_child(0))
                        .is_some_and(|a| a.node_kind() == "string" && quotes_episode(a))
            }
            _ => false,
        }
    }

    /// An ordering (or equality) test whose body reassigns a name it reads: `if step >=
    /// last_eval + period: ... last_eval = step`, `if val_loss < best: best = val_loss`, `if cnt
    /// == save_every: cnt = 0`. The body resets its own trigger: it runs every so often (or on
    /// each improvement), not every iteration.
    fn resets_own_test(&self, cond: Node<'_>, body: Node<'_>) -> bool {
        if !self
            .comparison_parts(cond)
            .is_some_and(|(_, op, _)| matches!(op, "<" | "<=" | ">" | ">=" | "=="))
        {
            return false;
        }
        let mut names = Vec::new();
        let mut stack = vec![cond];
        while let Some(n) = stack.pop() {
            if n.node_kind() == "identifier" {
                names.push(self.text(n));
            } else if n.node_kind() != "call" {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
        }
        names.iter().any(|n| self.assigns_name(body, n))
    }

    /// `len(x) OP N` with `x` a switch-like name and `N` a literal integer: (x, OP, N).
    fn len_comparison(&self, cond: Node<'_>) -> Option<(&'s str, &'s str, u32)> {
        let (a, op, b) = self.comparison_parts(cond)?;
        if b.node_kind() != "integer" || !self.is_len_call(a) {
            return None;
        }
        let arg = field::get(a, field::ARGUMENTS).and_then(|x| x.named_child(0))?;
        let n = self.text(b).parse::<u32>().ok()?;
        Self::switch_like(arg, self.src).then(|| (self.text(arg), op, n))
    }

    /// A name the loop body binds to a test with `%` (`log_losses = i > 0 and n_iter %
    /// args.print_freq == 0` ... `if log_losses:`): the cadence guard, named.
    fn cadence_flag(&self, cond: Node<'_>) -> bool {
        if cond.node_kind() != "identifier" || self.cur_loop.is_none() {
            return false;
        }
        let name = self.text(cond);
        let Some(a) = self.m.assigns.iter().rev().find(|a| {
            a.span.end <= cond.start_byte()
                && a.ctx.loop_ == self.cur_loop
                && a.targets.len() == 1
                && !a.augmented
                && self.src.get(a.left.start..a.left.end) == Some(name)
        }) else {
            return false;
        };
        let mut root = cond;
        while let Some(p) = root.parent() {
            root = p;
        }
        root.descendant_for_byte_range(a.value.start, a.value.end)
            .is_some_and(|v| contains_modulo(v, self.src))
    }

    /// `mini_batch != batch_size`, `x.size(0) < args.batch_size`: the loader's last, short
    /// batch, once per pass.
    fn partial_batch(&self, cond: Node<'_>) -> bool {
        // Ex) if mini_batch != batch_size: y_real_ = torch.ones(mini_batch).cuda()
        let Some((a, op, b)) = self.comparison_parts(cond) else {
            return false;
        };
        let batch_size = |n: Node<'_>| {
            matches!(n.node_kind(), "identifier" | "attribute")
                && self.text(n).to_ascii_lowercase().ends_with("batch_size")
        };
        let (size, other) = if batch_size(b) { (b, a) } else { (a, b) };
        matches!(op, "!=" | "<" | ">")
            && batch_size(size)
            && !batch_size(other)
            && matches!(other.node_kind(), "identifier" | "call" | "subscript")
            && (op == "!=" || (op == "<") == (size.id() == b.id()))
    }

    /// `i` of `(i + 1)` / `i - 1`: a name shifted by an integer written out; else `n` itself.
    fn shifted_counter<'n>(&self, n: Node<'n>) -> Node<'n> {
        let mut inner = n;
        while inner.node_kind() == "parenthesized_expression" {
            match inner.named_child(0) {
                Some(x) => inner = x,
                None => return n,
            }
        }
        if inner.node_kind() != "binary_operator" {
            return n;
        }
        let (Some(l), Some(op), Some(r)) = (
            field::get(inner, field::LEFT),
            field::get(inner, field::OPERATOR),
            field::get(inner, field::RIGHT),
        ) else {
            return n;
        };
        if matches!(self.text(op), "+" | "-")
            && l.node_kind() == "identifier"
            && r.node_kind() == "integer"
        {
            l
        } else {
            n
        }
    }

    /// `i == 0` where `i` (or `i + 1`) is bound by an enclosing loop's target.
    fn counter_is_literal(&self, cond: Node<'_>) -> bool {
        // Ex) if i == 0: ... (the loop variable against a literal, or the loop's last index)
        if let Some((a, "==", b)) = self.comparison_parts(cond) {
            // (the counter may be shifted by a literal, `(i + 1) == num_steps`)
            let shifted = self.shifted_counter(a);
            let (var, lit) = if shifted.node_kind() == "identifier" {
                (shifted, b)
            } else {
                (self.shifted_counter(b), a)
            };
            // (or the last iteration, `if batch == len(train_dl):`, `if i == len(loader) - 1:`,
            // or one a few before it, `if i == (n_iter - 2):`: a count the loop does not bind)
            if var.node_kind() != "identifier" {
                return false;
            }
            // the names the enclosing loops bind
            let mut targets: Vec<&str> = Vec::new();
            let mut cur = self.cur_loop;
            for _ in 0..64 {
                let Some(l) = cur.and_then(|i| self.m.loops.get(i as usize)) else {
                    break;
                };
                targets.extend(
                    l.targets
                        .iter()
                        .filter_map(|t| self.src.get(t.start..t.end)),
                );
                cur = l.parent;
            }
            let last = || {
                let t: String = self.text(lit).split_whitespace().collect();
                if t.starts_with("len(") && (t.ends_with(')') || t.ends_with(")-1")) {
                    return true;
                }
                let count = t.trim_start_matches('(').trim_end_matches(')');
                matches!(
                    lit.node_kind(),
                    "binary_operator" | "parenthesized_expression"
                ) && !count.is_empty()
                    && count
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '+'))
                    && count
                        .split(['-', '+'])
                        .all(|w| !w.is_empty() && !targets.contains(&w))
            };
            // (or a count the script fixed before the loop, `if i == sample_idx:`: a name the
            // loops neither bind nor change)
            let fixed = || {
                matches!(lit.node_kind(), "identifier" | "attribute")
                    && !targets.contains(&self.text(lit))
                    && self.text(lit) != self.text(var)
                    && self
                        .cur_loop
                        .and_then(|l| self.m.loops.get(l as usize))
                        .and_then(|l| self.src.get(l.span.start..l.span.end))
                        .is_some_and(|body| !assigns_in_text(body, self.text(lit)))
            };
            if targets.contains(&self.text(var)) {
                return lit.node_kind() == "integer" || last() || fixed();
            }
            // (a counter the loop steps by one, `iteration += 1`, against a count it does not
            // change, `if iteration == iterations_phase1:`: one iteration too)
            let name = self.text(var);
            return self.counted_in_loop(name)
                && (lit.node_kind() == "integer"
                    || last()
                    || (lit.node_kind() == "identifier"
                        && self.text(lit) != name
                        && !targets.contains(&self.text(lit))));
        }
        false
    }

    /// Is `name` stepped by one in the innermost loop being walked (`iteration += 1`, the
    /// only assignments to it there)?
    fn counted_in_loop(&self, name: &str) -> bool {
        self.cur_loop
            .and_then(|i| self.m.loops.get(i as usize))
            .is_some_and(|l| self.m.stepped_by_one(name, l.span))
    }

    /// Marks the blocks of an `if` statement: the body runs under the condition's switches
    /// (and is a cadence guard when the condition uses `%` or the body runs once); an `elif`
    /// runs under its own switches and the negation of each earlier single-switch test, the
    /// `else` under the negation of every single-switch test of the chain.
    ///
    /// Returns the switch under which the statements after the `if` run when it has no other
    /// branch and its body leaves the block (`return`, `raise`, `sys.exit()`, `break`), or
    /// when its only other branch, an `else`, leaves it and its body does not.
    fn mark_if(&mut self, node: Node<'_>) -> Option<(Span, bool)> {
        let cond = field::get(node, field::CONDITION)?;
        let conj = self.conjuncts(cond);
        if let Some(body) = Self::block_of(node) {
            let modulo = contains_modulo(cond, self.src)
                || self.runs_once(node, body)
                || conj.iter().any(|c| {
                    self.flush_guard(*c)
                        || self.resets_own_test(*c, body)
                        || self.episode_end(*c)
                        || self.numeric_error_check(*c)
                        || self.selected_iterations(*c)
                        || self.partial_batch(*c)
                        || self.cadence_flag(*c)
                });
            let switches = conj
                .iter()
                .filter_map(|c| Self::switch_of(*c, self.src))
                .collect();
            self.block_watch
                .push((body.id(), BlockMark { modulo, switches }));
        }
        let mut c = node.walk();
        let clauses: Vec<Node<'_>> = node
            .named_children(&mut c)
            .filter(|ch| matches!(ch.node_kind(), "elif_clause" | "else_clause"))
            .collect();
        // the negation of a test made of one switch (`args.model == 'moco'`): a later branch of
        // the chain runs only when it is false (a test of several conjuncts negates to a
        // disjunction, which no switch list says: it is left out, which only keeps a branch live)
        let negated = |this: &Self, conj: &[Node<'_>]| match conj {
            [only] => Self::switch_of(*only, this.src).map(|(s, when)| (s, !when)),
            _ => None,
        };
        let mut earlier: Vec<(Span, bool)> = negated(self, &conj).into_iter().collect();
        // Ex) elif source == 'vott': convert_vott_json(...)  (its own test is necessary too)
        for elif in clauses.iter().filter(|ch| ch.node_kind() == "elif_clause") {
            let (Some(cond), Some(body)) =
                (field::get(*elif, field::CONDITION), Self::block_of(*elif))
            else {
                continue;
            };
            let own = self.conjuncts(cond);
            let mut switches: Vec<(Span, bool)> = own
                .iter()
                .filter_map(|c| Self::switch_of(*c, self.src))
                .collect();
            switches.extend(earlier.iter().copied());
            earlier.extend(negated(self, &own));
            let modulo = contains_modulo(cond, self.src) || self.leaves(body);
            self.block_watch
                .push((body.id(), BlockMark { modulo, switches }));
        }
        if let Some(else_) = clauses.last()
            && else_.node_kind() == "else_clause"
            && let Some(body) = Self::block_of(*else_)
        {
            // Ex) if use_cuda: ... else: x.cpu()  (the else of a switch that is on by default)
            // Ex) if args.model == 'moco': ... elif args.model == 'simclr': ... else: train_ins()
            //     (every test of the chain is false there)
            let switches = earlier;
            // the `else` of `if step % N != 0:` (also `and i != last`) runs every N steps: a
            // cadence, where gradient accumulation steps the optimizer
            let cadence_else = conj.iter().any(|c| {
                self.comparison_parts(*c)
                    .is_some_and(|(a, op, _)| op == "!=" && contains_modulo(a, self.src))
            }) && conj.iter().all(|c| {
                self.comparison_parts(*c)
                    .is_some_and(|(_, op, _)| op == "!=")
            });
            let modulo = self.leaves(body) || cadence_else;
            self.block_watch
                .push((body.id(), BlockMark { modulo, switches }));
        }
        let body_leaves = Self::block_of(node).is_some_and(|b| self.leaves(b));
        // (an `else` that leaves, `else: raise Exception('cannot find dataset')`: what follows
        // runs only where the test holds)
        let else_leaves = match clauses.as_slice() {
            [e] if e.node_kind() == "else_clause" => {
                Self::block_of(*e).is_some_and(|b| self.leaves(b))
            }
            _ => false,
        };
        match conj.as_slice() {
            [only] if clauses.is_empty() && body_leaves => {
                Self::switch_of(*only, self.src).map(|(s, when)| (s, !when))
            }
            [only] if else_leaves && !body_leaves => Self::switch_of(*only, self.src),
            _ => None,
        }
    }

    /// Makes the code from here on run under switch `cond` (true when `when`), inside the
    /// current guard, until the frame that saved the guard is left.
    fn push_guard(&mut self, cond: Span, when: bool, at: usize) {
        let idx = self.m.guards.len() as u32;
        self.m.guards.push(Guard {
            cond,
            when,
            parent: self.guard_top,
            at,
            func: self.cur_func,
            dead: false,
            unreachable: false,
        });
        self.guard_top = Some(idx);
    }

    /// After a statement that always leaves its block, the rest of the block never runs: it
    /// sits under a guard that is dead, until the frame that saved the guard is left (the
    /// block's; at module level, the end of the file).
    // Ex) exit()  (a debugging stop in `main()`, before the `trainer.train()` it then calls)
    fn push_unreachable(&mut self, st: Node<'_>) {
        let idx = self.m.guards.len() as u32;
        self.m.guards.push(Guard {
            cond: Span::of(st),
            when: true,
            parent: self.guard_top,
            at: st.start_byte(),
            func: self.cur_func,
            dead: true,
            unreachable: true,
        });
        self.guard_top = Some(idx);
    }

    /// Entering a block marked by [`Self::mark_if`]: push its cadence and switches.
    fn enter_block(&mut self, node: Node<'_>) {
        let id = node.id();
        let prev_guard = self.guard_top;
        let Some(pos) = self.block_watch.iter().rposition(|(nid, _)| *nid == id) else {
            // an unmarked block still restores the guard on leaving: an early exit inside it
            // (`if done: return`) guards only the rest of this block
            self.frames.push(Frame::Block {
                id,
                modulo: false,
                prev_guard,
            });
            return;
        };
        let (_, mark) = self.block_watch.swap_remove(pos);
        for (cond, when) in mark.switches {
            self.push_guard(cond, when, node.start_byte());
        }
        if mark.modulo {
            self.mod_ifs += 1;
        }
        self.frames.push(Frame::Block {
            id,
            modulo: mark.modulo,
            prev_guard,
        });
    }

    fn enter(&mut self, node: Node<'_>) {
        let id = node.id();
        match node.node_kind() {
            "call" => self.on_call(node),
            "for_statement" | "while_statement" => self.on_loop(node),
            "assignment" | "augmented_assignment" => self.on_assign(node),
            "import_statement" | "import_from_statement" => self.on_import(node),
            "function_definition" => self.on_func(node),
            "class_definition" => {
                let name = field::get(node, field::NAME)
                    .map(Span::of)
                    .unwrap_or_default();
                let bases = field::get(node, field::SUPERCLASSES).map(Span::of);
                let idx = self.m.classes.len() as u32;
                self.m.classes.push(Class { name, bases });
                self.frames.push(Frame::Class {
                    id,
                    prev: self.cur_class,
                });
                self.cur_class = Some(idx);
            }
            "decorated_definition" => {
                let mut no_grad = false;
                let mut c = node.walk();
                for d in node.named_children(&mut c) {
                    if d.node_kind() == "decorator" {
                        let t = self.text(d);
                        // (also a project's own wrapper, `@make_nograd_func`)
                        if t.contains("no_grad")
                            || t.contains("nograd")
                            || t.contains("inference_mode")
                        {
                            no_grad = true;
                        }
                    }
                }
                if let Some(def) = field::get(node, field::DEFINITION) {
                    self.decor_watch.push((def.id(), no_grad));
                }
            }
            "with_statement" => self.on_with(node),
            "if_statement" => {
                self.ifs += 1;
                let after = self.mark_if(node);
                self.frames.push(Frame::If { id, after });
            }
            "block" => self.enter_block(node),
            // `for ...: ... else: print(...)`: the `else` runs once, when the loop is done
            "else_clause"
                if node.parent().is_some_and(|p| {
                    matches!(p.node_kind(), "for_statement" | "while_statement")
                }) =>
            {
                self.frames.push(Frame::LoopElse {
                    id,
                    prev: self.cur_loop,
                });
                self.cur_loop = self
                    .cur_loop
                    .and_then(|l| self.m.loops.get(l as usize))
                    .and_then(|l| l.parent);
            }
            "except_clause" => {
                self.excepts += 1;
                self.frames.push(Frame::Except { id });
            }
            "list_comprehension"
            | "generator_expression"
            | "dictionary_comprehension"
            | "set_comprehension" => {
                self.comps += 1;
                self.frames.push(Frame::Comp { id });
            }
            "subscript" => {
                if let (Some(l), Some(v), Some(i)) = (
                    self.cur_loop,
                    field::get(node, field::VALUE),
                    field::get(node, field::SUBSCRIPT),
                ) {
                    self.m.subs.push(Sub {
                        value: Span::of(v),
                        index: Span::of(i),
                        loop_: l,
                    });
                }
            }
            "comment" => self.on_comment(node),
            _ => {}
        }
    }

    fn leave(&mut self, node: Node<'_>) {
        if always_leaves(self.src, node) {
            self.push_unreachable(node);
        }
        let id = node.id();
        if self.frames.last().is_none_or(|f| f.id() != id) {
            return;
        }
        let Some(frame) = self.frames.pop() else {
            return;
        };
        match frame {
            Frame::Loop { prev, .. } | Frame::LoopElse { prev, .. } => self.cur_loop = prev,
            Frame::Func {
                prev_func,
                prev_loop,
                prev_mod_base,
                getitem,
                no_grad,
                ..
            } => {
                self.cur_func = prev_func;
                self.cur_loop = prev_loop;
                self.func_mod_base = prev_mod_base;
                if getitem {
                    self.getitem -= 1;
                }
                if no_grad {
                    self.no_grad -= 1;
                }
            }
            Frame::Class { prev, .. } => self.cur_class = prev,
            Frame::With { .. } => self.no_grad -= 1,
            Frame::If { after, .. } => {
                self.ifs -= 1;
                // Ex) if args.evaluate: validate(...); return  ... train(...)  (the rest of the
                // block runs only when the test fails; the block's frame restores the guard)
                if let Some((cond, when)) = after {
                    self.push_guard(cond, when, node.start_byte());
                }
            }
            Frame::Block {
                modulo, prev_guard, ..
            } => {
                if modulo {
                    self.mod_ifs -= 1;
                }
                self.guard_top = prev_guard;
            }
            Frame::Except { .. } => self.excepts -= 1,
            Frame::Comp { .. } => self.comps -= 1,
        }
    }

    fn on_comment(&mut self, node: Node<'_>) {
        let t = self.text(node);
        let Some(pos) = t.find("efficiency-audit:") else {
            return;
        };
        let rest = t[pos + "efficiency-audit:".len()..].trim_start();
        let Some(rest) = rest.strip_prefix("ignore") else {
            return;
        };
        let list: Vec<String> = match rest.strip_prefix('[') {
            Some(r) => r
                .split(']')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            None => Vec::new(),
        };
        let line = node.start_position().row + 1;
        self.m
            .suppress
            .entry(line)
            .or_default()
            .extend(list.clone());
        if list.is_empty() {
            self.m.suppress.insert(line, Vec::new());
        }
    }

    fn on_import(&mut self, node: Node<'_>) {
        // only module-level imports at column 0 (not inside `try:` / `if`): a line inserted
        // after them stays at module level
        if self.cur_func.is_none() && self.cur_class.is_none() && node.start_position().column == 0
        {
            self.m.last_import_end = Some(node.end_byte());
        }
        let from = node.node_kind() == "import_from_statement";
        let module = if from {
            field::get(node, field::MODULE_NAME).map(|n| self.text(n))
        } else {
            None
        };
        if let Some(m) = module
            && [
                "multiprocessing",
                "concurrent.futures",
                "joblib",
                "ray",
                "dask",
                "torch.multiprocessing",
            ]
            .iter()
            .any(|p| m == *p || m.starts_with(&format!("{p}.")))
        {
            self.m.parallel_lib = true;
        }
        // `from dataloader import *`, `from utils.data_loader import *`: the repository's own
        // loader module (ImageCaptioning.pytorch's `DataLoader(opt)`)
        if let Some(module) = module
            && !module.starts_with("torch")
            && matches!(
                module
                    .rsplit('.')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase()
                    .as_str(),
                "dataloader" | "data_loader" | "dataloaders" | "loader"
            )
        {
            let mut c = node.walk();
            if node
                .named_children(&mut c)
                .any(|ch| ch.node_kind() == "wildcard_import")
            {
                self.m.loader_star_import = true;
            }
        }
        let mut c = node.walk();
        for ch in node.children_by_field_name("name", &mut c) {
            let (name, alias) = match ch.node_kind() {
                "aliased_import" => (
                    field::get(ch, field::NAME).map(|n| self.text(n)),
                    field::get(ch, field::ALIAS).map(|n| self.text(n)),
                ),
                _ => (Some(self.text(ch)), None),
            };
            let Some(name) = name else { continue };
            if !from
                && ["multiprocessing", "joblib", "ray", "dask", "concurrent"]
                    .iter()
                    .any(|p| name == *p || name.starts_with(&format!("{p}.")))
            {
                self.m.parallel_lib = true;
            }
            match (module, alias) {
                (Some(m), Some(a)) => {
                    self.m.imports.insert(a, format!("{m}.{name}"));
                }
                (Some(m), None) => {
                    self.m.imports.insert(name, format!("{m}.{name}"));
                }
                (None, Some(a)) => {
                    self.m.imports.insert(a, name.to_string());
                }
                (None, None) => {
                    // `import a.b` binds `a`.
                    let head = name.split('.').next().unwrap_or(name);
                    self.m.imports.insert(head, head.to_string());
                }
            }
        }
    }

    fn on_func(&mut self, node: Node<'_>) {
        let id = node.id();
        let name = field::get(node, field::NAME)
            .map(Span::of)
            .unwrap_or_default();
        let name_text = self.src.get(name.start..name.end).unwrap_or("");
        let mut params = Vec::new();
        let mut positional = None;
        if let Some(ps) = field::get(node, field::PARAMETERS) {
            let mut c = ps.walk();
            for p in ps.named_children(&mut c) {
                match p.node_kind() {
                    "identifier" => params.push((Span::of(p), None)),
                    "typed_parameter" => {
                        if let Some(n) = p.named_child(0).filter(|n| n.node_kind() == "identifier")
                        {
                            params.push((Span::of(n), None));
                            if let Some(t) = p.child_by_field_name("type") {
                                self.m.param_types.push((Span::of(n), Span::of(t)));
                            }
                        }
                    }
                    "default_parameter" | "typed_default_parameter" => {
                        if let (Some(n), Some(v)) =
                            (field::get(p, field::NAME), field::get(p, field::VALUE))
                        {
                            params.push((Span::of(n), Some((Span::of(v), val_kind(v)))));
                            if let Some(t) = p.child_by_field_name("type") {
                                self.m.param_types.push((Span::of(n), Span::of(t)));
                            }
                        }
                    }
                    "list_splat_pattern" | "keyword_separator" | "dictionary_splat_pattern" => {
                        positional.get_or_insert(params.len());
                    }
                    _ => {}
                }
                if matches!(
                    p.node_kind(),
                    "default_parameter" | "typed_default_parameter"
                ) && let Some(v) = field::get(p, field::VALUE)
                    && let Some(t) = string_value(v, self.src)
                {
                    if t == "cuda" || t.starts_with("cuda:") {
                        self.m.cuda_default_param = true;
                    } else if let Some(d) = ["cpu", "mps"].into_iter().find(|d| *d == t)
                        && field::get(p, field::NAME).is_some_and(|n| {
                            n.utf8_text(self.src.as_bytes())
                                .is_ok_and(|n| n.to_ascii_lowercase().ends_with("device"))
                        })
                    {
                        self.m.host_default_param = Some(d);
                    }
                }
            }
        }
        let mut no_grad = false;
        if let Some(pos) = self.decor_watch.iter().rposition(|(nid, _)| *nid == id) {
            no_grad = self.decor_watch[pos].1;
            self.decor_watch.swap_remove(pos);
        }
        // directly in the class body (the body's block frame aside)
        let in_class = self.cur_class.is_some()
            && self
                .frames
                .iter()
                .rev()
                .find(|f| !matches!(f, Frame::Block { .. }))
                .is_some_and(|f| matches!(f, Frame::Class { .. }));
        if in_class && matches!(name_text, "validation_step" | "test_step" | "predict_step") {
            no_grad = true;
        }
        let getitem = in_class && matches!(name_text, "__getitem__" | "__getitems__" | "__iter__");
        let (line, _) = line_col(self.src, node);
        let idx = self.m.funcs.len() as u32;
        let positional = positional.unwrap_or(params.len());
        self.m.funcs.push(Func {
            name,
            params,
            positional,
            line,
            class: if in_class { self.cur_class } else { None },
            kind: CodeKind::Other,
            backward: false,
        });
        self.frames.push(Frame::Func {
            id,
            prev_func: self.cur_func,
            prev_loop: self.cur_loop,
            prev_mod_base: self.func_mod_base,
            getitem,
            no_grad,
        });
        if getitem {
            self.getitem += 1;
        }
        if no_grad {
            self.no_grad += 1;
        }
        self.cur_func = Some(idx);
        self.cur_loop = None;
        self.func_mod_base = self.mod_ifs;
    }

    fn on_with(&mut self, node: Node<'_>) {
        let mut no_grad = false;
        let mut stack = vec![node];
        // with_statement → with_clause → with_item → value (call | as_pattern)
        let mut seen = 0;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > 64 {
                break;
            }
            match n.node_kind() {
                "with_statement"
                | "with_clause"
                | "with_item"
                | "as_pattern"
                | "parenthesized_expression"
                | "tuple" => {
                    let mut c = n.walk();
                    for ch in n.named_children(&mut c) {
                        if ch.node_kind() != "block" {
                            stack.push(ch);
                        }
                    }
                }
                "call" => {
                    let f = field::get(n, field::FUNCTION).map_or("", |f| self.text(f));
                    let last = f.rsplit('.').next().unwrap_or(f);
                    match last {
                        "no_grad" | "inference_mode" => no_grad = true,
                        "set_grad_enabled" => {
                            let a = field::get(n, field::ARGUMENTS).map_or("", |a| self.text(a));
                            if a.contains("False") {
                                no_grad = true;
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        if no_grad {
            self.no_grad += 1;
            self.frames.push(Frame::With { id: node.id() });
        }
    }

    fn on_loop(&mut self, node: Node<'_>) {
        let is_for = node.node_kind() == "for_statement";
        let mut targets = Vec::new();
        if is_for && let Some(left) = field::get(node, field::LEFT) {
            {
                let mut stack = vec![left];
                while let Some(n) = stack.pop() {
                    if targets.len() > 32 {
                        break;
                    }
                    if n.node_kind() == "identifier" {
                        targets.push(Span::of(n));
                    } else if matches!(
                        n.node_kind(),
                        "pattern_list"
                            | "tuple_pattern"
                            | "list_pattern"
                            | "tuple"
                            | "list"
                            | "parenthesized_expression"
                    ) {
                        let mut c = n.walk();
                        for ch in n.named_children(&mut c) {
                            stack.push(ch);
                        }
                    }
                }
            }
        }
        let iter = if is_for {
            field::get(node, field::RIGHT).map(Span::of)
        } else {
            None
        };
        let (line, col) = line_col(self.src, node);
        let idx = self.m.loops.len() as u32;
        // (up to its body's end: an `else` clause runs once, after the loop)
        let end = node
            .child_by_field_name("alternative")
            .and_then(|_| node.child_by_field_name("body"))
            .unwrap_or(node);
        self.m.loops.push(Loop {
            span: Span {
                start: node.start_byte(),
                end: end.end_byte(),
            },
            line,
            end_line: end.end_position().row + 1,
            col,
            targets,
            iter,
            parent: self.cur_loop,
            ctx: self.ctx(),
            info: LoopInfo::default(),
        });
        self.loop_entry.push(LoopEntry {
            ifs: self.ifs,
            mod_ifs: self.mod_ifs,
        });
        self.frames.push(Frame::Loop {
            id: node.id(),
            prev: self.cur_loop,
        });
        self.cur_loop = Some(idx);
    }

    fn on_assign(&mut self, node: Node<'_>) {
        let (Some(left), Some(mut right)) = (
            field::get(node, field::LEFT),
            field::get(node, field::RIGHT),
        ) else {
            return;
        };
        // `loader = test_loader = DataLoader(...)`: every name of a chain is bound to the value
        // at its end
        for _ in 0..8 {
            match field::get(right, field::RIGHT).filter(|_| right.node_kind() == "assignment") {
                Some(inner) => right = inner,
                None => break,
            }
        }
        let mut targets = Vec::new();
        match left.node_kind() {
            "identifier" | "attribute" if is_dotted(left) => targets.push(Span::of(left)),
            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                let mut c = left.walk();
                for ch in left.named_children(&mut c) {
                    if is_dotted(ch) {
                        targets.push(Span::of(ch));
                    }
                }
            }
            _ => {}
        }
        let idx = self.m.assigns.len() as u32;
        self.m.assigns.push(Assign {
            span: Span::of(node),
            left: Span::of(left),
            targets,
            value: Span::of(right),
            vkind: val_kind(right),
            rhs_call: None,
            augmented: node.node_kind() == "augmented_assignment",
            line: node.start_position().row + 1,
            ctx: self.ctx(),
        });
        if right.node_kind() == "call" {
            self.rhs_watch.push((right.id(), idx));
        }
    }

    fn on_call(&mut self, node: Node<'_>) {
        let Some(func) = field::get(node, field::FUNCTION) else {
            return;
        };
        let idx = self.m.calls.len() as u32;
        let (method, recv, recv_root, recv_call) = if func.node_kind() == "attribute" {
            let obj = field::get(func, field::OBJECT);
            let root = obj.and_then(root_ident);
            if let Some(o) = obj.filter(|o| o.node_kind() == "call") {
                self.recv_watch.push((o.id(), idx));
            }
            (
                field::get(func, field::ATTRIBUTE).map(Span::of),
                obj.map(Span::of),
                root.map(Span::of),
                None,
            )
        } else {
            (None, None, None, None)
        };
        let args_node = field::get(node, field::ARGUMENTS);
        let a0 = self.m.args.len() as u32;
        let mut splat = None;
        let mut star = false;
        if let Some(al) = args_node.filter(|a| a.node_kind() == "argument_list") {
            let mut c = al.walk();
            for ch in al.children(&mut c) {
                match ch.node_kind() {
                    "keyword_argument" => {
                        if let (Some(n), Some(v)) =
                            (field::get(ch, field::NAME), field::get(ch, field::VALUE))
                        {
                            self.m.args.push(Arg {
                                name: Some(Span::of(n)),
                                value: Span::of(v),
                                vkind: val_kind(v),
                            });
                        }
                    }
                    "dictionary_splat" => {
                        splat = ch.named_child(0).map(Span::of);
                    }
                    "list_splat" => star = true,
                    "(" | ")" | "," | "comment" => {}
                    _ if ch.is_named() => self.m.args.push(Arg {
                        name: None,
                        value: Span::of(ch),
                        vkind: val_kind(ch),
                    }),
                    _ => {}
                }
            }
        } else if let Some(g) = args_node {
            // f(x for x in y)
            self.m.args.push(Arg {
                name: None,
                value: Span::of(g),
                vkind: ValKind::Other,
            });
        }
        let a1 = self.m.args.len() as u32;
        let (line, col) = line_col(self.src, node);
        self.m.calls.push(Call {
            span: Span::of(node),
            func: Span::of(func),
            dotted: is_dotted(func),
            method,
            recv,
            recv_root,
            recv_call,
            args_span: args_node.map(Span::of).unwrap_or_default(),
            args: (a0, a1),
            splat,
            star,
            line,
            end_line: node.end_position().row + 1,
            col,
            ctx: self.ctx(),
        });
        let id = node.id();
        // (every assignment of a chain binding this call: `a = b = DataLoader(...)`)
        while let Some(pos) = self.rhs_watch.iter().rposition(|(nid, _)| *nid == id) {
            let a = self.rhs_watch[pos].1;
            self.rhs_watch.swap_remove(pos);
            if let Some(asg) = self.m.assigns.get_mut(a as usize) {
                asg.rhs_call = Some(idx);
            }
        }
        if let Some(pos) = self.recv_watch.iter().rposition(|(nid, _)| *nid == id) {
            let outer = self.recv_watch[pos].1;
            self.recv_watch.swap_remove(pos);
            if let Some(c) = self.m.calls.get_mut(outer as usize) {
                c.recv_call = Some(idx);
            }
        }
    }
}

thread_local! {
    /// One parser per thread, reused across files.
    static PARSER: std::cell::RefCell<Option<tree_sitter::Parser>> = const { std::cell::RefCell::new(None) };
}

/// Parses `src` and builds the model. `None` when tree-sitter gives up.
pub(crate) fn build(src: &str) -> Option<Model<'_>> {
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
            *slot = Some(p);
        }
        slot.as_mut()?.parse(src, None)
    })?;
    let m = Model {
        src,
        tree,
        calls: Vec::new(),
        args: Vec::new(),
        loops: Vec::new(),
        funcs: Vec::new(),
        classes: Vec::new(),
        assigns: Vec::new(),
        subs: Vec::new(),
        imports: HashMap::new(),
        suppress: HashMap::new(),
        kinds: HashMap::new(),
        defined: std::collections::HashSet::new(),
        param_types: Vec::new(),
        argparse: HashMap::new(),
        argparse_unset: std::collections::HashSet::new(),
        guards: Vec::new(),
        facts: FileFacts::default(),
        kind: CodeKind::Other,
        last_import_end: None,
        parallel_lib: false,
        has_from_pretrained: false,
        torch: false,
        delegated_train: false,
        compile_unknown: false,
        deterministic: false,
        cuda_default_param: false,
        host_default_param: None,
        loader_star_import: false,
        uncalled: std::cell::OnceCell::new(),
        model_params: std::cell::OnceCell::new(),
        architecture: std::cell::OnceCell::new(),
        optimizer_classes: std::cell::OnceCell::new(),
        resolving: std::cell::Cell::new(0),
    };
    let mut w = Walker {
        src,
        m,
        frames: Vec::new(),
        cur_loop: None,
        cur_func: None,
        cur_class: None,
        no_grad: 0,
        getitem: 0,
        ifs: 0,
        mod_ifs: 0,
        func_mod_base: 0,
        guard_top: None,
        block_watch: Vec::new(),
        excepts: 0,
        comps: 0,
        loop_entry: Vec::new(),
        rhs_watch: Vec::new(),
        decor_watch: Vec::new(),
        recv_watch: Vec::new(),
    };
    {
        let tree = w.m.tree.clone();
        let mut cursor = tree.walk();
        'walk: loop {
            let node = cursor.node();
            w.enter(node);
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                w.leave(cursor.node());
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }
    let mut m = w.m;
    // joblib imported for `dump` / `load` only runs nothing in parallel: it counts when the file
    // calls `Parallel` / `delayed` (the other libraries are imported to run work in parallel)
    if m.parallel_lib {
        let other = m.imports.values().any(|q| {
            [
                "multiprocessing",
                "concurrent",
                "ray",
                "dask",
                "torch.multiprocessing",
            ]
            .iter()
            .any(|p| q == p || q.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
        });
        if !other {
            m.parallel_lib = m
                .calls
                .iter()
                .any(|c| matches!(m.last_name(c), "Parallel" | "delayed" | "parallel_backend"));
        }
    }
    // threads started on a function of the file (`threading.Thread(target=process, args=(chunk,
    // ...))`) already spread its files over workers: file work releases the GIL while it waits
    // Ex) t = threading.Thread(target=process, args=(args, images)); t.start()
    if !m.parallel_lib {
        m.parallel_lib = m
            .calls
            .iter()
            .any(|c| m.qual(c) == "threading.Thread" && m.kw(c, "target").is_some());
    }
    super::resolve::post_pass(&mut m);
    Some(m)
}

/// The first syntax error as `line:col`, when the tree has one (iterative search).
pub(crate) fn first_error(tree: &Tree) -> Option<(usize, usize)> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            let p = n.start_position();
            return Some((p.row + 1, p.column + 1));
        }
        // descend only into sub-trees that hold the error
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                let p = root.start_position();
                return Some((p.row + 1, p.column + 1));
            }
        }
    }
}

impl<'s> Model<'s> {
    /// The text of a span.
    pub fn text(&self, s: Span) -> &'s str {
        self.src.get(s.start..s.end).unwrap_or("")
    }

    /// The source text of a node of this file's tree.
    pub(crate) fn node_text(&self, n: Node<'_>) -> &'s str {
        self.text(Span::of(n))
    }

    /// The call's function qualified through the import table (`DL` → `torch.utils.data.DataLoader`).
    pub fn qual(&self, c: &Call) -> Cow<'s, str> {
        let text = self.text(c.func);
        if !c.dotted {
            return Cow::Borrowed(text);
        }
        let (head, rest) = match text.find('.') {
            Some(i) => (&text[..i], &text[i..]),
            None => (text, ""),
        };
        match self.imports.get(head) {
            Some(q) if q == head => Cow::Borrowed(text),
            Some(q) => Cow::Owned(format!("{q}{rest}")),
            None => Cow::Borrowed(text),
        }
    }

    /// The last name of the callee (`step` in `opt.step()`, `DataLoader` in `DataLoader(...)`).
    pub fn last_name(&self, c: &Call) -> &'s str {
        match c.method {
            Some(m) => self.text(m),
            None => self.text(c.func),
        }
    }

    /// The call's arguments.
    pub fn call_args(&self, c: &Call) -> &[Arg] {
        self.args
            .get(c.args.0 as usize..c.args.1 as usize)
            .unwrap_or(&[])
    }

    /// A keyword argument by name.
    pub fn kw(&self, c: &Call, name: &str) -> Option<Arg> {
        self.call_args(c)
            .iter()
            .find(|a| a.name.is_some_and(|n| self.text(n) == name))
            .copied()
    }

    /// The `n`-th positional argument.
    pub fn pos(&self, c: &Call, n: usize) -> Option<Arg> {
        self.call_args(c)
            .iter()
            .filter(|a| a.name.is_none())
            .nth(n)
            .copied()
    }

    /// What call `c` passes for parameter `p` of plain function `func`: by the parameter's name,
    /// else by position where the parameter takes one (before `*` / `*args`).
    pub(crate) fn passed_arg(&self, c: &Call, func: &Func, p: usize) -> Option<Arg> {
        let name = func.params.get(p).map(|(n, _)| self.text(*n))?;
        self.kw(c, name)
            .or_else(|| (p < func.positional).then(|| self.pos(c, p)).flatten())
    }

    /// The index of the first plain function (not a method) the file defines under `name`.
    pub(crate) fn plain_fn(&self, name: &str) -> Option<usize> {
        self.funcs
            .iter()
            .position(|f| f.class.is_none() && self.text(f.name) == name)
    }

    /// The call whose syntax node spans exactly `s`. Calls are recorded as the walk enters
    /// them, so they stand in source order, an outer call before the calls its text starts
    /// with (`a.b().c()` before `a.b()`): a binary search finds the first that starts at `s`.
    pub(crate) fn call_at(&self, s: Span) -> Option<&Call> {
        let first = self.calls.partition_point(|c| c.span.start < s.start);
        self.calls
            .get(first..)?
            .iter()
            .take_while(|c| c.span.start == s.start)
            .find(|c| c.span == s)
    }

    /// The node of a span, when it still matches one.
    pub fn node(&self, s: Span) -> Option<Node<'_>> {
        let n = self
            .tree
            .root_node()
            .descendant_for_byte_range(s.start, s.end)?;
        (n.start_byte() == s.start && n.end_byte() == s.end).then_some(n)
    }

    /// The kind of a variable (`x`, `self.x`), by assignment or, failing that, by its name.
    pub fn var_kind(&self, name: &str) -> Option<VarKind> {
        if let Some(k) = self.kinds.get(name) {
            return Some(*k);
        }
        kind_by_name(name)
    }

    /// Is `line` in a function of the script that nothing calls (so it does not run)?
    pub(crate) fn uncalled_line(&self, line: usize) -> bool {
        self.uncalled
            .get_or_init(|| super::as_shipped::uncalled_functions(self))
            .iter()
            .any(|&(a, b)| a <= line && line <= b)
    }

    /// Does the analysis read the file as a script (run, not imported) with a function or
    /// method that nothing calls as shipped?
    pub(crate) fn has_uncalled(&self) -> bool {
        !self
            .uncalled
            .get_or_init(|| super::as_shipped::uncalled_functions(self))
            .is_empty()
    }

    /// Does code in this context never run as shipped: it sits in a branch of a switch that
    /// is off by default (or the `else` of one that is on), at any depth?
    /// Does a decorator of function `func` hold `needle` (`@hydra.main(...)`,
    /// `@trainer.on(Events.EPOCH_COMPLETED)`)?
    pub(crate) fn decorated_with(&self, func: Option<u32>, needle: &str) -> bool {
        let Some(def) = func
            .and_then(|f| self.funcs.get(f as usize))
            .and_then(|f| self.node(f.name))
            .and_then(|n| n.parent())
        else {
            return false;
        };
        let Some(decorated) = def
            .parent()
            .filter(|d| d.node_kind() == "decorated_definition")
        else {
            return false;
        };
        let mut cursor = decorated.walk();
        decorated
            .named_children(&mut cursor)
            .any(|d| d.node_kind() == "decorator" && self.node_text(d).contains(needle))
    }

    pub(crate) fn dead(&self, ctx: &Ctx) -> bool {
        let mut cur = ctx.guard;
        for _ in 0..256 {
            let Some(g) = cur.and_then(|i| self.guards.get(i as usize)) else {
                return false;
            };
            if g.dead {
                return true;
            }
            cur = g.parent;
        }
        false
    }

    /// Resolves an expression (by its span) to a constant where the engine can.
    pub(crate) fn resolve_expr(&self, s: Span, at: usize, func: Option<u32>) -> Val {
        match self.node(s) {
            Some(n) => self.resolve_span(s, val_kind(n), at, func, 0),
            None => Val::Unknown,
        }
    }

    /// Resolves an argument value to a constant where the engine can.
    pub fn resolve(&self, a: &Arg, at: usize, func: Option<u32>) -> Val {
        self.resolve_span(a.value, a.vkind, at, func, 0)
    }

    /// The value parameter `name` of plain function `f` (not a method, but a class's `__init__`,
    /// called where the file builds the class) holds as shipped: the same constant passed (or
    /// defaulted) at every call of the function in the file (`def build_loaders(root,
    /// workers=4)` called as `build_loaders(args.root)`: 4).
    /// `None` when `name` is not such a parameter; [`Val::Unknown`] when the calls disagree,
    /// pass it through `*args` / `**kwargs`, or there is no call in the file.
    fn param_value(&self, f: u32, name: &str, depth: u8) -> Option<Val> {
        let func = self.funcs.get(f as usize)?;
        // (also a parameter of a class's `__init__`, passed where the file builds the class:
        // `Trainer(cuda=args.cuda)`)
        let built = match func.class {
            None => None,
            Some(k) if self.text(func.name) == "__init__" => Some(self.classes.get(k as usize)?),
            Some(_) => return None,
        };
        let p = func
            .params
            .iter()
            .position(|(n, _)| self.text(*n) == name)?;
        let default = func.params.get(p).and_then(|(_, d)| *d);
        let fname = built.map_or(self.text(func.name), |k| self.text(k.name));
        let passed = |c: &Call| match built {
            None => self.passed_arg(c, func, p),
            // (`self` is not passed: the call's positions start at the second parameter)
            Some(_) => self.kw(c, name).or_else(|| {
                (p >= 1 && p < func.positional)
                    .then(|| self.pos(c, p - 1))
                    .flatten()
            }),
        };
        // `@click.option("--cuda", type=bool, default=False)` on the function: click fills the
        // parameter from the command line, its default as shipped
        if let Some(v) = self.click_default(func, name, depth) {
            return Some(v);
        }
        let mut value: Option<Val> = None;
        // (a few callers at most: each resolves its argument, which may be a parameter in turn)
        for (n, c) in self
            .calls
            .iter()
            .filter(|c| c.method.is_none() && self.text(c.func) == fname)
            .enumerate()
        {
            if n >= MAX_CALLERS {
                return Some(Val::Unknown);
            }
            let v = match (passed(c), default) {
                (Some(a), _) => {
                    self.resolve_span(a.value, a.vkind, c.span.start, c.ctx.func, depth + 1)
                }
                _ if c.star || c.splat.is_some() => Val::Unknown,
                (None, Some((d, k))) => self.resolve_span(d, k, d.start, None, depth + 1),
                (None, None) => Val::Unknown,
            };
            match &value {
                None => value = Some(v),
                Some(prev) if *prev == v => {}
                Some(_) => return Some(Val::Unknown),
            }
        }
        if value.is_none() && built.is_none() && self.signature_cli_entry(fname) {
            value = Some(match default {
                Some((d, k)) => self.resolve_span(d, k, d.start, None, depth + 1),
                None => Val::Unknown,
            });
        }
        Some(match value {
            Some(Val::Absent) | None => Val::Unknown,
            Some(v) => v,
        })
    }

    /// The default a `@click.option(...)` decorator of `func` gives its parameter `name` (the
    /// option's long name with `-` as `_`, or the parameter name written among its names):
    /// `default=`, else `False` for a flag (`is_flag=True`), else `None`.
    // Ex) @click.option("--cuda", help="...", type=bool, default=False) def main(cuda, ...)
    pub(crate) fn click_default(&self, func: &Func, name: &str, depth: u8) -> Option<Val> {
        let def = self.node(func.name)?.parent()?;
        let decorated = def
            .parent()
            .filter(|d| d.node_kind() == "decorated_definition")?;
        let mut cursor = decorated.walk();
        let decorators: Vec<Node<'_>> = decorated
            .named_children(&mut cursor)
            .filter(|d| d.node_kind() == "decorator")
            .collect();
        for d in decorators {
            let Some(call) = d
                .named_child(0)
                .filter(|n| n.node_kind() == "call")
                .and_then(|n| self.call_at(Span::of(n)))
            else {
                continue;
            };
            let q = self.qual(call);
            if !(q == "click.option" || q.ends_with(".click.option")) {
                continue;
            }
            let names: Vec<Cow<'_, str>> = self
                .call_args(call)
                .iter()
                .filter(|a| a.name.is_none())
                .filter_map(|a| self.node(a.value).and_then(|n| string_value(n, self.src)))
                .collect();
            let explicit = names.iter().find(|n| !n.starts_with('-'));
            let long = names
                .iter()
                .find_map(|n| n.strip_prefix("--"))
                .map(|l| l.replace('-', "_"));
            let param = match (explicit, long) {
                (Some(e), _) => e.to_string(),
                (None, Some(l)) => l,
                (None, None) => continue,
            };
            if param != name {
                continue;
            }
            return Some(match self.kw(call, "default") {
                Some(a) => self.resolve_span(a.value, a.vkind, a.value.start, None, depth + 1),
                None if self.kw(call, "is_flag").is_some() => Val::Bool(false),
                None => Val::None,
            });
        }
        None
    }

    /// The function named `fname` is handed, as the first argument, to a runner that builds the
    /// command line from its signature (`tyro.cli(main)`, `from fire import Fire; Fire(main)`).
    fn signature_cli_entry(&self, fname: &str) -> bool {
        self.calls.iter().any(|c| {
            let q = self.qual(c);
            let q = if c.dotted || q.contains('.') {
                q
            } else {
                self.imports
                    .get(&*q)
                    .map_or(q, |full| Cow::Owned(full.clone()))
            };
            SIGNATURE_CLIS.contains(&&*q)
                && self
                    .call_args(c)
                    .first()
                    .is_some_and(|a| a.name.is_none() && self.text(a.value) == fname)
        })
    }

    /// Does the code at `span` run whenever its function (or the module) does: no `if`,
    /// `try`, `with`, `match` or loop around it inside its function? (Not known: no.)
    pub(crate) fn unconditional(&self, span: Span) -> bool {
        let mut n = self.node(span);
        for _ in 0..64 {
            let Some(cur) = n else { return false };
            match cur.node_kind() {
                "function_definition" | "module" => return true,
                "if_statement" | "try_statement" | "with_statement" | "match_statement"
                | "for_statement" | "while_statement" => return false,
                _ => n = cur.parent(),
            }
        }
        false
    }

    /// Does the statement at `span` run whenever the code at byte `at` of the same function
    /// does: every block around it (an `if` branch, a loop or `try` body, an `except`) also
    /// holds `at`? `with` blocks always run.
    fn unconditional_at(&self, span: Span, at: usize) -> bool {
        let mut n = self.node(span);
        for _ in 0..64 {
            let Some(cur) = n else { return false };
            match cur.node_kind() {
                "function_definition" | "module" => return true,
                "block"
                    if cur
                        .parent()
                        .is_some_and(|p| p.node_kind() != "with_statement")
                        && !(cur.start_byte() <= at && at <= cur.end_byte()) =>
                {
                    return false;
                }
                "except_clause" | "case_clause" | "finally_clause"
                    if !(cur.start_byte() <= at && at <= cur.end_byte()) =>
                {
                    return false;
                }
                _ => n = cur.parent(),
            }
        }
        false
    }

    /// Is `name` assigned within `span` (a loop) and only ever stepped by one there
    /// (`iteration += 1`)?
    pub(crate) fn stepped_by_one(&self, name: &str, span: Span) -> bool {
        let mut inside = self
            .assigns
            .iter()
            .filter(|a| span.contains(a.span) && self.text(a.left) == name)
            .peekable();
        inside.peek().is_some()
            && inside.all(|a| {
                a.augmented
                    && self.text(a.value) == "1"
                    && self
                        .src
                        .get(a.left.end..a.value.start)
                        .is_some_and(|op| op.trim() == "+=")
            })
    }

    /// Does a loop hold both assignment `a` and byte `at`?
    fn loop_around_both(&self, a: &Assign, at: usize) -> bool {
        let mut cur = a.ctx.loop_;
        for _ in 0..256 {
            let Some(l) = cur.and_then(|i| self.loops.get(i as usize)) else {
                return false;
            };
            if l.span.start <= at && at < l.span.end {
                return true;
            }
            cur = l.parent;
        }
        false
    }

    /// What assignment `a` binds `name` to: its whole value for `name = v`, the matching item
    /// for `a, name = x, v` (plain names on the left, as many items on the right); `None`
    /// when it does not bind `name` so.
    fn bound_value<'m>(&self, a: &'m Assign, name: &str) -> Option<Bound<'m>> {
        if a.targets.len() == 1 {
            return (self.text(a.left) == name).then_some(Bound {
                assign: a,
                value: a.value,
                vkind: a.vkind,
            });
        }
        if !a.targets.iter().any(|t| self.text(*t) == name) {
            return None;
        }
        let left = self
            .node(a.left)
            .filter(|n| matches!(n.node_kind(), "pattern_list" | "tuple_pattern"))?;
        let right = self
            .node(a.value)
            .filter(|n| matches!(n.node_kind(), "expression_list" | "tuple"))?;
        let (names, items) = (elements(left), elements(right));
        if names.len() != items.len() || names.iter().any(|n| n.node_kind() != "identifier") {
            return None;
        }
        let i = names.iter().position(|n| self.node_text(*n) == name)?;
        let item = *items.get(i)?;
        Some(Bound {
            assign: a,
            value: Span::of(item),
            vkind: val_kind(item),
        })
    }

    /// The value of the expression at `s` (of kind `k`) as the code at byte `at` sees it, up to
    /// `depth` steps of names and calls deep; [`Val::Unknown`] beyond that, or when the chain of
    /// resolutions this one sits in (through the as-shipped reading) is already
    /// [`MAX_NESTED_RESOLUTIONS`] deep.
    pub(crate) fn resolve_span(
        &self,
        s: Span,
        k: ValKind,
        at: usize,
        func_ctx: Option<u32>,
        depth: u8,
    ) -> Val {
        let nested = self.resolving.get();
        if depth > 4 || nested >= MAX_NESTED_RESOLUTIONS {
            return Val::Unknown;
        }
        self.resolving.set(nested + 1);
        let v = self.resolve_span_at(s, k, at, func_ctx, depth);
        self.resolving.set(nested);
        v
    }

    fn resolve_span_at(
        &self,
        s: Span,
        k: ValKind,
        at: usize,
        func_ctx: Option<u32>,
        depth: u8,
    ) -> Val {
        let func = func_ctx;
        let t = self.text(s);
        match k {
            // (also a string an option's `type=int` converts: `default='10'`)
            ValKind::Int => parse_int(t.trim_matches(['"', '\''])).map_or(Val::Unknown, Val::Int),
            ValKind::True => Val::Bool(true),
            ValKind::False => Val::Bool(false),
            ValKind::NoneLit => Val::None,
            ValKind::Str => self
                .node(s)
                .and_then(|n| string_value(n, self.src))
                .map_or(Val::Unknown, |v| Val::Str(v.into_owned())),
            ValKind::Ident => {
                // a name the code changes in place before `at`, or in a loop around both
                // (`d_steps_left -= 1` in the step loop that tests `if d_steps_left > 0:`), has
                // no one value there
                // nearest preceding assignment in the same function, else a module-level one
                // (each with the value it gives the name: one item of a tuple unpacked, `run,
                // num_loops = args.run_type, args.num_loops`)
                let mut prior: Vec<Bound<'_>> = Vec::new();
                let mut module: Vec<Bound<'_>> = Vec::new();
                for a in &self.assigns {
                    if a.augmented {
                        if a.ctx.func == func
                            && self.text(a.left) == t
                            && (a.span.end <= at || self.loop_around_both(a, at))
                        {
                            return Val::Unknown;
                        }
                        continue;
                    }
                    let Some(b) = self.bound_value(a, t) else {
                        continue;
                    };
                    if a.ctx.func == func && func.is_some() && a.span.end <= at {
                        prior.push(b);
                    } else if a.ctx.func.is_none() && a.ctx.class.is_none() {
                        module.push(b);
                    }
                }
                // what a binding gives: its value resolved (bound inside a loop, only a literal:
                // the same value every iteration, `log_interval = 1` written in the step loop)
                let binding_value = |b: &Bound<'_>| {
                    let a = b.assign;
                    if a.ctx.loop_.is_none()
                        || b.vkind.is_literal()
                        || matches!(b.vkind, ValKind::Float)
                    {
                        self.resolve_span(b.value, b.vkind, a.span.start, a.ctx.func, depth + 1)
                    } else {
                        Val::Unknown
                    }
                };
                // several bindings before `at`, the nearest in a branch that `at` is not in
                // (`m = method` then `if eps < tiny: m = "natural"`): the value is known only
                // when every binding that may reach `at` agrees, back to one that always runs;
                // a binding in a branch off as shipped does not run
                if prior.len() > 1
                    && prior.last().is_some_and(|b| {
                        self.dead(&b.assign.ctx) || !self.unconditional_at(b.assign.span, at)
                    })
                {
                    let mut vals: Vec<Val> = Vec::new();
                    let mut decided = false;
                    for b in prior.iter().rev() {
                        if self.dead(&b.assign.ctx) {
                            continue;
                        }
                        vals.push(binding_value(b));
                        if self.unconditional_at(b.assign.span, at) {
                            decided = true;
                            break;
                        }
                    }
                    // (no binding that always runs: a parameter's value may reach `at` too)
                    if !decided
                        && let Some(f) = func
                        && let Some(v) = self.param_value(f, t, depth)
                    {
                        vals.push(v);
                    }
                    return match vals.first() {
                        Some(v) if vals.iter().all(|x| x == v) => v.clone(),
                        _ => Val::Unknown,
                    };
                }
                let best = prior.last();
                // a parameter of the function, not rebound before `at`: what its callers pass
                if best.is_none()
                    && let Some(f) = func
                    && let Some(v) = self.param_value(f, t, depth)
                {
                    return v;
                }
                let pick = match best {
                    Some(a) => Some(a),
                    None if module.len() == 1 => module.first(),
                    None => {
                        // several module-level assignments: known only when those that run as
                        // shipped agree (`if device == "cuda": n = 1 else: n = 0`)
                        let vals: Vec<Val> = module
                            .iter()
                            .filter(|b| !self.dead(&b.assign.ctx))
                            .map(|b| {
                                self.resolve_span(
                                    b.value,
                                    b.vkind,
                                    b.assign.span.start,
                                    None,
                                    depth + 1,
                                )
                            })
                            .collect();
                        return match vals.first() {
                            Some(v) if vals.iter().all(|x| x == v) => v.clone(),
                            _ => Val::Unknown,
                        };
                    }
                };
                pick.map_or(Val::Unknown, binding_value)
            }
            ValKind::Attr => {
                // args.x / cfg.x → argparse default, else a class-level (dataclass) field default
                let Some(field) = t.rsplit('.').next() else {
                    return Val::Unknown;
                };
                if let Some(d) = self.argparse.get(field) {
                    return match d {
                        Some((vs, vk)) => self.resolve_span(*vs, *vk, vs.start, None, depth + 1),
                        None => Val::Unknown,
                    };
                }
                let fields: Vec<&Assign> = self
                    .assigns
                    .iter()
                    .filter(|a| {
                        // (in a class body, also of a class defined in a function: `def
                        // main(): class Args: train_batch_size = 8`; not in a method)
                        a.ctx.class.is_some()
                            && a.ctx.func.is_none_or(|f| {
                                self.funcs
                                    .get(f as usize)
                                    .is_some_and(|f| f.class != a.ctx.class)
                            })
                            && a.targets.len() == 1
                            && self.text(a.left) == field
                    })
                    .collect();
                if let [a] = fields.as_slice() {
                    return self.resolve_span(a.value, a.vkind, a.span.start, None, depth + 1);
                }
                // `args.distributed = args.world_size > 1 or args.multiprocessing_distributed`:
                // a value the script derives once from its options (the one binding of that
                // attribute in the file, outside any loop)
                let mut bound = self
                    .assigns
                    .iter()
                    .filter(|a| a.targets.len() == 1 && self.text(a.left) == t);
                match (bound.next(), bound.next()) {
                    (Some(a), None)
                        if !a.augmented
                            && a.ctx.loop_.is_none()
                            && t.contains('.')
                            && self.unconditional(a.span) =>
                    {
                        self.resolve_span(a.value, a.vkind, a.span.start, a.ctx.func, depth + 1)
                    }
                    _ => Val::Unknown,
                }
            }
            // `int(args.workers)`: the conversion of a value the engine can read
            ValKind::Call => {
                let Some(n) = self.node(s) else {
                    return Val::Unknown;
                };
                // `args.dataset.lower()`: a string option, case-folded or stripped
                if let Some(f) =
                    field::get(n, field::FUNCTION).filter(|f| f.node_kind() == "attribute")
                    && let (Some(recv), Some(meth)) = (
                        field::get(f, field::OBJECT),
                        f.child_by_field_name("attribute")
                            .map(|a| self.text(Span::of(a))),
                    )
                    && matches!(meth, "lower" | "upper" | "strip")
                    && field::get(n, field::ARGUMENTS).is_some_and(|a| a.named_child_count() == 0)
                {
                    return match self.resolve_span(
                        Span::of(recv),
                        val_kind(recv),
                        at,
                        func_ctx,
                        depth + 1,
                    ) {
                        Val::Str(t) => Val::Str(match meth {
                            "lower" => t.to_lowercase(),
                            "upper" => t.to_uppercase(),
                            _ => t.trim().to_string(),
                        }),
                        _ => Val::Unknown,
                    };
                }
                let func = field::get(n, field::FUNCTION).map(|f| self.text(Span::of(f)));
                let args = field::get(n, field::ARGUMENTS);
                match (func, args) {
                    // (`int(...)` of an integer; `model_name = str(args.model)`: a string option
                    // stays itself)
                    (Some(conv @ ("int" | "str")), Some(args)) if args.named_child_count() == 1 => {
                        let Some(inner) = args.named_child(0) else {
                            return Val::Unknown;
                        };
                        let v = self.resolve_span(
                            Span::of(inner),
                            val_kind(inner),
                            at,
                            func_ctx,
                            depth + 1,
                        );
                        match (conv, v) {
                            ("int", v @ Val::Int(_)) | ("str", v @ Val::Str(_)) => v,
                            ("str", Val::Int(n)) => Val::Str(n.to_string()),
                            _ => Val::Unknown,
                        }
                    }
                    _ => Val::Unknown,
                }
            }
            // `opt.save_txt | opt.save_hybrid`, `a or b`: two switches combined
            ValKind::Other => {
                // (one look-up of the node serves every shape below)
                let Some(node) = self.node(s) else {
                    return Val::Unknown;
                };
                // `config['num_workers']` of a dict the file writes out (`config = {...,
                // 'num_workers': 4}`), as it stands here (later writes to the key counted)
                if let Some(n) = Some(node).filter(|n| n.node_kind() == "subscript")
                    && let Some(d) =
                        field::get(n, field::VALUE).filter(|v| v.node_kind() == "identifier")
                    && n.named_child_count() == 2
                    && let Some(key) = n.named_child(1).and_then(|k| string_value(k, self.src))
                {
                    // (`args["device"]` of `args = vars(parser.parse_args())`: the option's
                    // default, unless the file writes that entry)
                    let of_options = || {
                        super::as_shipped::binding(self, self.node_text(d), at, func_ctx)
                            .and_then(|a| a.rhs_call)
                            .and_then(|i| self.calls.get(i as usize))
                            .is_some_and(|c| c.method.is_none() && self.text(c.func) == "vars")
                            && !self.assigns.iter().any(|a| {
                                a.targets.iter().any(|t| self.text(*t) == self.node_text(n))
                            })
                    };
                    return match super::as_shipped::dict_key(
                        self,
                        Span::of(d),
                        &key,
                        at,
                        func_ctx,
                        depth + 1,
                    ) {
                        Val::Absent | Val::Unknown if of_options() => {
                            match self.argparse.get(key.as_ref()) {
                                Some(Some((vs, vk))) => {
                                    self.resolve_span(*vs, *vk, vs.start, None, depth + 1)
                                }
                                _ => Val::Unknown,
                            }
                        }
                        Val::Absent => Val::Unknown,
                        v => v,
                    };
                }
                // `False if int(args.half) == 0 else True`: the branch the test takes as shipped
                // (either, when both agree)
                if let Some(n) = Some(node).filter(|n| n.node_kind() == "conditional_expression")
                    && let (Some(yes), Some(cond), Some(no)) =
                        (n.named_child(0), n.named_child(1), n.named_child(2))
                {
                    let branch = |b: Node<'_>| {
                        self.resolve_span(Span::of(b), val_kind(b), at, func_ctx, depth + 1)
                    };
                    return match super::as_shipped::condition(self, cond, at, func_ctx, depth + 1) {
                        Some(true) => branch(yes),
                        Some(false) => branch(no),
                        None => match (branch(yes), branch(no)) {
                            (a, b) if a == b => a,
                            _ => Val::Unknown,
                        },
                    };
                }
                let Some(n) = Some(node).filter(|n| {
                    matches!(
                        n.node_kind(),
                        "binary_operator" | "boolean_operator" | "comparison_operator"
                    )
                }) else {
                    return Val::Unknown;
                };
                // `args.world_size > 1`, `args.gpu is not None`: a test of values known as
                // shipped
                if n.node_kind() == "comparison_operator" {
                    return super::as_shipped::condition(self, n, at, func_ctx, depth + 1)
                        .map_or(Val::Unknown, Val::Bool);
                }
                let side = |f: &str| {
                    n.child_by_field_name(f).map_or(Val::Unknown, |x| {
                        self.resolve_span(Span::of(x), val_kind(x), at, func_ctx, depth + 1)
                    })
                };
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.text(Span::of(o)));
                match (side("left"), op, side("right")) {
                    (Val::Bool(a), Some("|" | "or"), Val::Bool(b)) => Val::Bool(a || b),
                    (Val::Bool(a), Some("&" | "and"), Val::Bool(b)) => Val::Bool(a && b),
                    _ => Val::Unknown,
                }
            }
            _ => Val::Unknown,
        }
    }
}

fn parse_int(t: &str) -> Option<i64> {
    let t = t.replace(['_', ' ', '\t'], "");
    if let Some(rest) = t.strip_prefix('-') {
        return parse_int(rest).map(|n| -n);
    }
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    t.parse().ok()
}

/// Variable kinds by conventional names, for parameters and values the engine cannot trace.
pub(crate) fn kind_by_name(name: &str) -> Option<VarKind> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let l = last.to_ascii_lowercase();
    if matches!(
        l.as_str(),
        "model" | "net" | "network" | "module" | "ddp_model" | "teacher" | "student"
    ) || l.ends_with("_model")
        || l.ends_with("_net")
    {
        return Some(VarKind::Model);
    }
    if l.contains("loader") || l.ends_with("_dl") || l == "dl" {
        return Some(VarKind::Loader);
    }
    if matches!(l.as_str(), "optimizer" | "opt" | "optim" | "optimiser")
        || l.ends_with("_optimizer")
    {
        return Some(VarKind::Optimizer);
    }
    if l == "scaler" || l.ends_with("_scaler") && l.contains("grad") {
        return Some(VarKind::Scaler);
    }
    if l == "df" || l.starts_with("df_") || l.ends_with("_df") {
        return Some(VarKind::DataFrame);
    }
    if l == "tokenizer" || l.ends_with("_tokenizer") {
        return Some(VarKind::Tokenizer);
    }
    None
}
