//! The rule registry: one rule per file, one static slice.

use super::facts::{Arg, Call, Device, Loop, Model, Val, ValKind};
use super::model::CodeKind;
use super::rule::Rule;
use crate::analysis::facts::NodeKind;

mod checkpoint_in_loop;
mod cpu_tensor_then_move;
mod dataloader_persistent;
mod dataloader_pin_memory;
mod dataloader_workers;
mod explicit_sync;
mod h2d_blocking;
mod host_sync;
mod image_decode_in_loop;
mod io_in_loop;
mod logging_in_loop;
mod no_amp;
mod no_compile;
mod no_cudnn_benchmark;
mod no_grad_missing;
mod no_tf32;
mod pandas_row_loop;
mod python_loop_numeric;
mod redundant_work_in_loop;
mod serial_processing;
mod small_batch;

/// Every rule, in id order.
pub static RULES: &[&dyn Rule] = &[
    &dataloader_workers::DataloaderWorkers,
    &dataloader_pin_memory::DataloaderPinMemory,
    &dataloader_persistent::DataloaderPersistent,
    &no_amp::NoAmp,
    &no_tf32::NoTf32,
    &no_compile::NoCompile,
    &no_cudnn_benchmark::NoCudnnBenchmark,
    &host_sync::HostSync,
    &explicit_sync::ExplicitSync,
    &h2d_blocking::H2dBlocking,
    &cpu_tensor_then_move::CpuTensorThenMove,
    &no_grad_missing::NoGradMissing,
    &io_in_loop::IoInLoop,
    &image_decode_in_loop::ImageDecodeInLoop,
    &checkpoint_in_loop::CheckpointInLoop,
    &logging_in_loop::LoggingInLoop,
    &pandas_row_loop::PandasRowLoop,
    &serial_processing::SerialProcessing,
    &python_loop_numeric::PythonLoopNumeric,
    &redundant_work_in_loop::RedundantWorkInLoop,
    &small_batch::SmallBatch,
];

/// Is loop `li` a step loop or nested in one (not across an epoch loop)?
pub(crate) fn step_ctx_loop(m: &Model<'_>, li: u32) -> bool {
    let mut cur = Some(li);
    for _ in 0..256 {
        let Some(i) = cur else { return false };
        let Some(l) = m.loops.get(i as usize) else {
            return false;
        };
        if l.info.step {
            return true;
        }
        if l.info.epoch {
            return false;
        }
        cur = l.parent;
    }
    false
}

/// Is the only cadence guard between call `c` and step loop `l` a `% N` whose `N` resolves to 1
/// (`if iter_num % log_interval == 0:` with `log_interval = 1`, nanoGPT's default)? Such a
/// branch runs every step. Any other guard on the way (a `% N` with another or unknown `N`, a
/// test of another kind, an `else`, a body that leaves the loop) keeps the call guarded.
// Ex) log_interval = 1 ... if it % log_interval == 0: lossf = loss.item()
fn modulo_by_one(m: &Model<'_>, c: &Call, l: &super::facts::Loop) -> bool {
    use super::facts::{Span, Val, field};
    let Some(mut node) = m.node(c.span) else {
        return false;
    };
    let mut found = false;
    for _ in 0..64 {
        let Some(parent) = node.parent() else {
            return false;
        };
        if parent.start_byte() <= l.span.start {
            return found;
        }
        if matches!(node.node_kind(), "else_clause" | "elif_clause") {
            return false;
        }
        if parent.node_kind() == "if_statement" {
            let Some(cond) = field::get(parent, field::CONDITION) else {
                return false;
            };
            if cond.id() == node.id() {
                node = parent;
                continue;
            }
            // the divisors of every `%` in the test
            let mut divisors = Vec::new();
            let mut stack = vec![cond];
            while let Some(n) = stack.pop() {
                if n.node_kind() == "binary_operator"
                    && field::get(n, field::OPERATOR).is_some_and(|o| m.node_text(o) == "%")
                    && let Some(r) = field::get(n, field::RIGHT)
                {
                    divisors.push(Span::of(r));
                }
                let mut w = n.walk();
                stack.extend(n.named_children(&mut w));
            }
            let leaves = node.node_kind() == "block"
                && node
                    .named_child(
                        u32::try_from(node.named_child_count().saturating_sub(1)).unwrap_or(0),
                    )
                    .is_some_and(|last| {
                        matches!(
                            last.node_kind(),
                            "break_statement" | "return_statement" | "raise_statement"
                        )
                    });
            if divisors.is_empty()
                || leaves
                || !divisors
                    .iter()
                    .all(|d| m.resolve_expr(*d, c.span.start, c.ctx.func) == Val::Int(1))
            {
                return false;
            }
            found = true;
        }
        node = parent;
    }
    false
}

/// The identifier-like words of a piece of source text (`a[i, j + 1]` → `a`, `i`, `j`, `1`).
pub(crate) fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .filter(|w| !w.is_empty())
}

/// Where a call sits relative to the step loop that encloses it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepCtx {
    /// The step loop.
    pub loop_: u32,
    /// Under an `if` inside the step loop.
    pub under_if: bool,
    /// Under a `% N` guard inside the step loop.
    pub mod_guard: bool,
    /// The step loop trains.
    pub train: bool,
}

/// The step loop enclosing a call (through inner non-step loops, never across an epoch loop).
pub(crate) fn step_ctx(m: &Model<'_>, c: &Call) -> Option<StepCtx> {
    // a branch of a switch that is off by default (`if args.sync_every_step:` with a
    // `store_true` flag, `if profile:` with `profile = False`) does not run in the
    // configuration the script ships with: it has no step context
    if m.dead(&c.ctx) {
        return None;
    }
    let mut under_if = c.ctx.under_if;
    let mut mod_guard = c.ctx.mod_guard;
    let mut cur = c.ctx.loop_;
    for _ in 0..256 {
        let i = cur?;
        let l = m.loops.get(i as usize)?;
        if l.info.step {
            // a step loop of a few known iterations (`for i in range(opt.steps)`, default 15)
            // is not hot: what it does per iteration happens a handful of times (unless a
            // longer step loop holds it: a WGAN's five critic iterations per batch)
            let few = few_iterations(m, l) && !held_by_step_loop(m, l);
            // `if it % log_interval == 0:` with `log_interval = 1` runs every step
            if mod_guard && modulo_by_one(m, c, l) {
                mod_guard = false;
            }
            // an evaluation loop run every N steps of an enclosing step loop
            // (`if step % 500 == 0: for x in test_loader: ...`): its steps are rare too
            let rare = l.ctx.mod_guard
                && l.parent
                    .and_then(|p| m.loops.get(p as usize))
                    .is_some_and(|p| p.info.step);
            return Some(StepCtx {
                loop_: i,
                under_if: under_if || few || rare,
                mod_guard: mod_guard || few || rare,
                train: l.info.train,
            });
        }
        if l.info.epoch {
            return None;
        }
        under_if |= l.ctx.under_if;
        mod_guard |= l.ctx.mod_guard;
        cur = l.parent;
    }
    None
}

/// The calls of function `f` by its name: `name(...)` for a plain function, `self.name(...)`
/// for a method.
pub(crate) fn calls_of<'a>(m: &'a Model<'_>, f: Option<u32>) -> impl Iterator<Item = &'a Call> {
    let func = f.and_then(|f| m.funcs.get(f as usize));
    m.calls.iter().filter(move |c| {
        func.is_some_and(|func| {
            let name = m.text(func.name);
            match (c.method, func.class) {
                (None, None) => m.text(c.func) == name,
                (Some(meth), Some(_)) => {
                    m.text(meth) == name && c.recv.is_some_and(|r| m.text(r) == "self")
                }
                _ => false,
            }
        })
    })
}

/// Is loop `l` nested in a step loop of more than a few iterations (not across an epoch loop)?
fn held_by_step_loop(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    long_step_loop_from(m, l.parent) == Some(true)
}

/// Walking out from loop `start`: `Some(true)` at a step loop of more than a few iterations,
/// `Some(false)` at an epoch loop met first, `None` when the loops run out.
fn long_step_loop_from(m: &Model<'_>, start: Option<u32>) -> Option<bool> {
    let mut cur = start;
    for _ in 0..256 {
        let l = cur.and_then(|i| m.loops.get(i as usize))?;
        if l.info.step && !few_iterations(m, l) {
            return Some(true);
        }
        if l.info.epoch {
            return Some(false);
        }
        cur = l.parent;
    }
    None
}

/// The step loop that runs call `c` through a helper: `c` sits in a module-level function, in
/// no loop of its own and under no `if` there, and every call of that function in the file is
/// itself in a step loop, under no cadence guard (`correct += number_of_correct(pred, target)`
/// in the evaluation loop; `train(epoch)` once per full-batch step of a graph network), nor
/// any other `if` unless the helper runs the backward pass itself (a GAN's
/// `discriminator_step(...)` on the steps it is chosen for). A call in a function the script
/// never calls does not run and does not count.
// Ex) def number_of_correct(pred, target): return pred.eq(target).sum().item()
pub(crate) fn helper_step_ctx(m: &Model<'_>, c: &Call) -> Option<StepCtx> {
    helper_step_ctx_at(m, c, 0)
}

/// [`helper_step_ctx`] through at most three helpers (`train()` calling `accuracy()`).
fn helper_step_ctx_at(m: &Model<'_>, c: &Call, depth: u8) -> Option<StepCtx> {
    if depth > 2 {
        return None;
    }
    let fi = c.ctx.func?;
    let f = m.funcs.get(fi as usize)?;
    if f.class.is_some()
        || c.ctx.loop_.is_some()
        || c.ctx.under_if
        || c.ctx.mod_guard
        || m.dead(&c.ctx)
        || under_if_in_function(m, c)
    {
        return None;
    }
    let name = m.text(f.name);
    if m.funcs.iter().filter(|g| m.text(g.name) == name).count() != 1 {
        return None;
    }
    let mut first: Option<StepCtx> = None;
    for k in m
        .calls
        .iter()
        .filter(|k| k.method.is_none() && m.text(k.func) == name)
        // (not a call in a function the script never calls: `accuracy()` left unused)
        .filter(|k| !m.uncalled_line(k.line))
    {
        // a call that is not per step (setup code, a recursive call): the helper is not
        let s = step_ctx(m, k).or_else(|| helper_step_ctx_at(m, k, depth + 1))?;
        // (a helper that does the training step itself runs on every step it is chosen for:
        // a GAN's `if d_steps_left > 0: discriminator_step(...)`, `else: generator_step(...)`)
        if s.mod_guard || (s.under_if && !f.backward) {
            return None;
        }
        first.get_or_insert(s);
    }
    first
}

/// Does call `c` sit under an `if` (or its `elif` / `else`) of the function it is in
/// (`if tb_writer: tb_writer.add_scalar("loss", loss.item(), it)`)?
pub(crate) fn under_if_in_function(m: &Model<'_>, c: &Call) -> bool {
    let Some(mut n) = m.node(c.span) else {
        return false;
    };
    while let Some(p) = n.parent() {
        match p.node_kind() {
            "function_definition" => return false,
            "if_statement" | "elif_clause" | "else_clause" => {
                // (the condition itself is evaluated every call)
                return p.child_by_field_name("condition").is_none_or(|cond| {
                    !(cond.start_byte() <= n.start_byte() && n.end_byte() <= cond.end_byte())
                });
            }
            _ => n = p,
        }
    }
    false
}

/// The functions whose bodies run once per training or inference step: a module's `forward`
/// (and a framework's per-batch hooks), and every local function called from a step loop or
/// from another such function, by a call that is not under a cadence guard or switched off.
pub(crate) fn per_step_funcs(m: &Model<'_>) -> Vec<bool> {
    let mut hot: Vec<bool> = m
        .funcs
        .iter()
        .map(|f| {
            f.class.is_some()
                && matches!(
                    m.text(f.name),
                    "forward" | "training_step" | "validation_step" | "test_step" | "predict_step"
                )
        })
        .collect();
    let mut by_name: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (fi, f) in m.funcs.iter().enumerate() {
        by_name.entry(m.text(f.name)).or_default().push(fi);
    }
    // a fixed point over the call graph: each round marks at least one more function or stops
    for _ in 0..m.funcs.len().min(64) {
        let mut changed = false;
        for c in &m.calls {
            let Some(callees) = by_name.get(m.last_name(c)) else {
                continue;
            };
            // (a call every N steps, once, or in a branch that does not run as shipped makes
            // no function hot: `if it % 100 == 99: generate_image(...)`)
            if !runs_per_step(m, &hot, c) || rare_call(m, c) {
                continue;
            }
            for &fi in callees {
                let Some(f) = m.funcs.get(fi) else { continue };
                // `helper(x)` calls a module-level function; `self.helper(x)` a method
                let same_kind = match c.method {
                    None => f.class.is_none() && c.dotted && !m.text(c.func).contains('.'),
                    Some(_) => {
                        f.class.is_some()
                            && c.recv_root
                                .is_none_or(|r| !m.imports.contains_key(m.text(r)))
                    }
                };
                if same_kind && !hot[fi] {
                    hot[fi] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    hot
}

/// Does call `c` run only every N steps, once, or not at all as shipped: under a cadence
/// guard on its way to the step loop, or in a dead branch?
pub(crate) fn rare_call(m: &Model<'_>, c: &Call) -> bool {
    m.dead(&c.ctx)
        || match step_ctx(m, c) {
            Some(s) => s.mod_guard,
            None => c.ctx.mod_guard,
        }
}

/// Does call `c` run once per step (or more often): in a step loop of more than a few
/// iterations (or a loop nested in one, a few-iteration one too, never across an epoch loop),
/// or, outside any such
/// loop, in a function that [`per_step_funcs`] marks? Setup code, once per run or per epoch,
/// does not.
pub(crate) fn runs_per_step(m: &Model<'_>, hot_funcs: &[bool], c: &Call) -> bool {
    // (a loop of a few iterations runs per step when a step loop holds it: a WGAN's five
    // critic iterations per batch)
    long_step_loop_from(m, c.ctx.loop_).unwrap_or_else(|| {
        c.ctx
            .func
            .is_some_and(|f| hot_funcs.get(f as usize) == Some(&true))
    })
}

pub(crate) fn cuda(m: &Model<'_>) -> bool {
    m.facts.device == Device::Cuda
}

pub(crate) fn trains_or_infers(m: &Model<'_>) -> bool {
    matches!(m.kind, CodeKind::Train | CodeKind::Infer)
}

/// Does the file's computation run as shipped: it has no step loop, or one that runs, or a
/// framework runs its loop (a Hugging Face `TrainingArguments`, a Lightning `trainer.fit`)? A
/// script whose every step loop sits behind a switch that is off (`if args.train:` and `if
/// args.test:`, both `store_true`) only builds its model: nothing computes.
pub(crate) fn steps_run_as_shipped(m: &Model<'_>) -> bool {
    !m.loops.iter().any(|l| l.info.step)
        || m.loops
            .iter()
            .any(|l| l.info.step && !m.dead(&l.ctx) && !m.uncalled_line(l.line))
        || hf_args_call(m).is_some()
        || lightning_fit(m).is_some()
        || m.delegated_train
}

/// Where the model is placed on the device (`model = Net().to(device)`, `model.cuda()`), else
/// where it is built (for Lightning, the model `trainer.fit` is handed): the anchor of the
/// file-level GPU rules. Returns (call or assignment line,
/// column, the assignment index when the anchor is one).
pub(crate) fn model_anchor(m: &Model<'_>) -> Option<(usize, usize, Option<usize>)> {
    // a Lightning script without a loop of its own: the model `trainer.fit` trains, before
    // a placement for inference elsewhere in the file
    let lightning = first_train_loop(m)
        .is_none()
        .then(|| lightning_model(m))
        .flatten();
    lightning
        .or_else(|| model_placement(m))
        .or_else(|| lightning_model(m))
        .or_else(|| {
            // `self.relu = nn.ReLU()` in a module's `__init__` is a part, not the model
            m.assigns.iter().enumerate().find_map(|(i, a)| {
                (a.targets.len() == 1
                    && !a.augmented
                    && a.rhs_call.is_some()
                    && a.ctx.class.is_none()
                    && !m.dead(&a.ctx)
                    && m.kinds.get(m.text(a.left)) == Some(&super::facts::VarKind::Model))
                .then(|| {
                    let col = m.node(a.span).map_or(1, |n| n.start_position().column + 1);
                    (a.line, col, Some(i))
                })
            })
        })
}

/// Where the model is placed on the device (`model = Net().to(device)`, `model.cuda()`), if
/// the file shows it; a model `accelerator.prepare(model)`, `fabric.setup(model)` or `deepspeed.initialize(model=net)` places is
/// anchored where the file builds it, and counts only when it is the model trained (or no
/// placement is written). Returns what [`model_anchor`] does.
pub(crate) fn model_placement(m: &Model<'_>) -> Option<(usize, usize, Option<usize>)> {
    use super::facts::VarKind;
    // ((trained, live, own, trained here, explicit), byte, line, col, assign): the model an
    // optimizer trains wins over a frozen one placed earlier (a distillation teacher), then a
    // placement that runs as shipped over one under a switch that is off by default (`if
    // args.fp16: model.cuda().half()`), then the placement of a model the function builds over one it is
    // handed (`def validate(model, ...): model = model.to(device)`), then a placement in the
    // function that builds the optimizer over one of the same name elsewhere (a script's
    // `inference()` placing its own `model` ahead of `train()`), then an explicit move over
    // a constructor handed the device (`model = Seq2Seq(..., device=device)` then `model =
    // model.to(device)`), then the earliest
    type Best = Option<(
        (bool, bool, bool, bool, bool),
        usize,
        usize,
        usize,
        Option<usize>,
    )>;
    let mut best: Best = None;
    // is `name` a parameter of function `f` (a model the function is handed)? Not where `f`
    // runs the training loop itself (`def run_training(D, G, ...): D.cuda(); G.cuda(); for
    // epoch in ...`): what it places there is the model trained, ahead of a sampling helper's
    // own copy
    let trains_in: std::collections::HashSet<Option<u32>> = m
        .loops
        .iter()
        .filter(|l| live_train_loop(m, l))
        .map(|l| l.ctx.func)
        .collect();
    let handed = |f: Option<u32>, name: &str| {
        !trains_in.contains(&f)
            && f.and_then(|f| m.funcs.get(f as usize))
                .is_some_and(|f| f.params.iter().any(|(p, _)| m.text(*p) == name))
    };
    fn consider(
        best: &mut Best,
        trained: (bool, bool, bool, bool, bool),
        byte: usize,
        line: usize,
        col: usize,
        a: Option<usize>,
    ) {
        if best.is_none_or(|b| trained > b.0 || (trained == b.0 && byte < b.1)) {
            *best = Some((trained, byte, line, col, a));
        }
    }
    // runs as shipped: no switch off by default around it (the engine's guards, and conditions
    // like `args.arch.startswith("vgg")` read here)
    // (nor in a function the script never calls: a sampling helper that builds its own copy)
    let live = |ctx: &super::facts::Ctx, span: super::facts::Span, line: usize| {
        !m.dead(ctx) && !behind_default_off_flag(m, span) && !m.uncalled_line(line)
    };
    let trained_in = crate::analysis::resolve::trained_models_in(m);
    let trained: std::collections::HashSet<&str> = trained_in.iter().map(|(n, _)| *n).collect();
    let here = |name: &str, f: Option<u32>| trained_in.contains(&(name, f));
    // (a file that trains nothing: the models its step loops call, `preds.append(model(b[0],
    // b[1]))`, ahead of a featurizer placed before them and run once per row)
    let run_in_steps: std::collections::HashSet<&str> = if trained.is_empty() {
        m.calls
            .iter()
            .filter(|c| {
                c.method.is_none()
                    && c.ctx
                        .loop_
                        .and_then(|l| m.loops.get(l as usize))
                        .is_some_and(|l| l.info.step)
            })
            .map(|c| m.text(c.func))
            .filter(|name| m.var_kind(name) == Some(VarKind::Model))
            .collect()
    } else {
        std::collections::HashSet::new()
    };
    let trained = |name: &str| trained.contains(name) || run_in_steps.contains(name);
    for (i, a) in m.assigns.iter().enumerate() {
        // (`model, preprocess = clip.load(name, device=device)`, `model, optimizer =
        // get_model(args, device)`: a loader that returns the model and its companion, placed
        // on the device it is handed, below)
        let name = match a.targets.as_slice() {
            [_] => m.text(a.left),
            [first, _] => m.text(*first),
            _ => continue,
        };
        if a.augmented || m.var_kind(name) != Some(VarKind::Model) {
            continue;
        }
        let v = m.text(a.value);
        // `model = whisper.load_model(args.model, args.device)`, `clip.load(name, device=d)`: a
        // library's loader that places what it builds (not a function of this file, which
        // shows its own placement)
        // (also `from_pretrained(name, device_map="auto")`, through a mode switch after it:
        // `.eval()`)
        // (not a training function handed the model and its optimizer, `infer_model =
        // train(model, optimizer, loader, device=device)`: what it hands back was built before)
        let places_itself = |c: &Call| {
            !m.defined.contains(m.last_name(c))
                && !m.call_args(c).iter().any(|arg| {
                    matches!(
                        m.var_kind(m.text(arg.value)),
                        Some(VarKind::Model | VarKind::Optimizer)
                    )
                })
                && m.call_args(c)
                    .iter()
                    .any(|arg| match arg.name.map(|n| m.text(n)) {
                        // (`define_tsnet(name, num_class, cuda=args.cuda)`)
                        Some(kw) => matches!(kw, "device" | "device_map" | "cuda" | "use_cuda"),
                        None => {
                            matches!(arg.vkind, ValKind::Ident | ValKind::Attr)
                                && m.text(arg.value).to_ascii_lowercase().ends_with("device")
                        }
                    })
        };
        // `model_s = set_gpu(args, model_s)`: a helper named for the placement, handed the model
        let placing_helper = |c: &Call| {
            let l = m.last_name(c).to_ascii_lowercase();
            c.method.is_none()
                && (l.contains("gpu") || l.contains("cuda") || l == "to_device")
                && m.call_args(c).iter().any(|arg| m.text(arg.value) == name)
        };
        let loads_onto_device = a
            .rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|c| {
                places_itself(c)
                    || placing_helper(c)
                    || (matches!(m.last_name(c), "eval" | "train" | "requires_grad_")
                        && c.recv_call
                            .and_then(|i| m.calls.get(i as usize))
                            .is_some_and(places_itself))
            });
        // `model = model.to(memory_format=torch.channels_last)`: a layout change, not a placement
        let only_relayout = a
            .rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|c| {
                let mut moves = false;
                let mut places = false;
                let mut cur = Some(c);
                for _ in 0..8 {
                    let Some(k) = cur else { break };
                    if k.method.is_some() && matches!(m.last_name(k), "to" | "cuda") {
                        moves = true;
                        places |= crate::analysis::resolve::placement_arg(m, k);
                    }
                    cur = k.recv_call.and_then(|i| m.calls.get(i as usize));
                }
                moves && !places
            });
        // (also `model = UNet(2).cuda() if device == "cuda" else UNet(2)`: a placement in a
        // conditional expression)
        let conditional = m
            .node(a.value)
            .is_some_and(|n| n.node_kind() == "conditional_expression");
        if (v.contains(".to(") || v.contains(".cuda(") || loads_onto_device)
            && (a.targets.len() == 1 || loads_onto_device)
            && (a.rhs_call.is_some() || conditional)
            && !only_relayout
        {
            let col = m.node(a.span).map_or(1, |n| n.start_position().column + 1);
            consider(
                &mut best,
                (
                    trained(name),
                    live(&a.ctx, a.span, a.line),
                    !handed(a.ctx.func, name),
                    here(name, a.ctx.func),
                    v.contains(".to(") || v.contains(".cuda("),
                ),
                a.span.start,
                a.line,
                col,
                Some(i),
            );
        }
    }
    for c in &m.calls {
        // `model, optimizer = fabric.setup(model, optimizer)`, `accelerator.prepare(model, ...)`
        // hand the model to a framework that places it: no placement the file writes, so the
        // anchor falls back to where the model is built
        // call `c` places the model `name`
        let placed = |best: &mut Best, name: &str| {
            consider(
                best,
                (
                    trained(name),
                    live(&c.ctx, c.span, c.line),
                    !handed(c.ctx.func, name),
                    here(name, c.ctx.func),
                    true,
                ),
                c.span.start,
                c.line,
                c.col,
                None,
            );
        };
        if let Some(recv) = c.recv.map(|r| m.text(r).to_ascii_lowercase()) {
            let framework = match m.last_name(c) {
                "prepare" | "prepare_model" => recv.contains("accelerator"),
                "setup" | "setup_module" => recv.contains("fabric"),
                // `model_engine, optimizer, _, _ = deepspeed.initialize(args=args, model=net,
                // ...)`: the DeepSpeed engine places the model it wraps
                "initialize" => recv == "deepspeed",
                _ => false,
            };
            if framework {
                // `unet, optimizer = accelerator.prepare(unet, optimizer)`: the framework
                // places the model; its anchor is where the file builds it, and a trained
                // model handed over this way wins over a frozen one the file moves itself
                // (the diffusers DreamBooth script's `text_encoder.to(accelerator.device)`)
                for arg in m
                    .call_args(c)
                    .iter()
                    .filter(|a| a.name.is_none_or(|n| m.text(n) == "model"))
                {
                    let name = m.text(arg.value);
                    if arg.vkind != ValKind::Ident || m.var_kind(name) != Some(VarKind::Model) {
                        continue;
                    }
                    // (one model of several a switch chooses among, `if args.model ==
                    // "Autoformer": model = Autoformer.Model(args) elif ...`, is no build site
                    // the file shows)
                    let builds = m
                        .assigns
                        .iter()
                        .filter(|a| {
                            a.targets.len() == 1
                                && !a.augmented
                                && a.span.end <= c.span.start
                                && a.ctx.func == c.ctx.func
                                && m.text(a.left) == name
                                && !rebuilds(m, a, name)
                                // (a build in a branch off as shipped builds nothing: `if
                                // args.timm: model = timm.create_model(...)` with the flag off)
                                && !m.dead(&a.ctx)
                        })
                        .count();
                    // (or the last of several, built unconditionally: the DeepSpeed tutorial's
                    // second `net = Net()` replaces its first)
                    let Some(a) = build_site(m, name, c).filter(|a| {
                        (builds == 1 || (a.ctx.guard.is_none() && a.ctx.loop_.is_none()))
                            && a.targets.len() == 1
                            && a.rhs_call.is_some()
                            && !m.dead(&a.ctx)
                    }) else {
                        continue;
                    };
                    let Some(i) = m.assigns.iter().position(|x| std::ptr::eq(x, a)) else {
                        continue;
                    };
                    let col = m.node(a.span).map_or(1, |n| n.start_position().column + 1);
                    consider(
                        &mut best,
                        (
                            trained(name),
                            live(&c.ctx, c.span, c.line) && live(&a.ctx, a.span, a.line),
                            !handed(c.ctx.func, name),
                            here(name, c.ctx.func),
                            false,
                        ),
                        a.span.start,
                        a.line,
                        col,
                        Some(i),
                    );
                }
                continue;
            }
        }
        // (`model.to_empty(device="cuda")`: FSDP2's materialization of a meta-device model)
        if c.method.is_none()
            || !matches!(m.last_name(c), "to" | "cuda" | "type" | "to_empty")
            || !crate::analysis::resolve::placement_arg(m, c)
        {
            continue;
        }
        if let Some(name) = placed_model(m, c) {
            placed(&mut best, name);
        } else if c
            .recv_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|inner| {
                inner.method.is_none() && local_module_class(m, m.text(inner.func))
            })
        {
            // `Layer(d_in, d_out).to(device)`, also inside a list: a module of a class defined
            // here, built and placed in one expression
            consider(
                &mut best,
                (false, live(&c.ctx, c.span, c.line), true, false, true),
                c.span.start,
                c.line,
                c.col,
                None,
            );
        }
    }
    // (a placement only under a switch that is off as shipped, `if n_gpu > 1: model =
    // model.to(device)` with `n_gpu = 1`, places nothing: the anchor falls back to the build)
    best.filter(|b| b.0.1).map(|(_, _, l, c, a)| (l, c, a))
}

/// Is `name` a class defined in this file that is a torch module: its bases name `Module`, an
/// `nn.` layer, or another such local class?
fn local_module_class(m: &Model<'_>, name: &str) -> bool {
    let mut cur = name.to_string();
    for _ in 0..8 {
        let Some(k) = m.classes.iter().find(|k| m.text(k.name) == cur) else {
            return false;
        };
        let Some(bases) = k.bases.map(|b| m.text(b)) else {
            return false;
        };
        if bases.contains("Module") || bases.contains("nn.") {
            return true;
        }
        let first = bases
            .trim_matches(|ch| ch == '(' || ch == ')')
            .split(',')
            .next()
            .unwrap_or("")
            .trim();
        if first.is_empty() || first == cur {
            return false;
        }
        cur = first.to_string();
    }
    false
}

/// Does the code at `span` not run as shipped: it sits in the body of an `if` whose condition
/// is false with the flags' defaults (`if args.fp16:`, `if args.arch.startswith("vgg"):` with
/// `--arch` defaulting to `resnet18`), or in the `else` of one that is true?
fn behind_default_off_flag(m: &Model<'_>, span: super::facts::Span) -> bool {
    let Some(mut node) = m
        .tree
        .root_node()
        .descendant_for_byte_range(span.start, span.end)
    else {
        return false;
    };
    for _ in 0..64 {
        let Some(parent) = node.parent() else {
            return false;
        };
        let (if_stmt, want) = match (parent.node_kind(), node.node_kind()) {
            ("if_statement", "block") => (Some(parent), false),
            ("else_clause", _) => (
                parent.parent().filter(|p| p.node_kind() == "if_statement"),
                true,
            ),
            _ => (None, false),
        };
        if let Some(cond) =
            if_stmt.and_then(|i| super::facts::field::get(i, super::facts::field::CONDITION))
            && default_truth(m, cond) == Some(want)
        {
            return true;
        }
        node = parent;
    }
    false
}

/// The truth of a condition with every flag at its default, where the engine can read it:
/// `args.x`, `not c`, `a and b`, `a or b`, `args.x.startswith("lit")`.
fn default_truth(m: &Model<'_>, cond: tree_sitter::Node<'_>) -> Option<bool> {
    use super::facts::field;
    let span = super::facts::Span::of;
    let value = |n: tree_sitter::Node<'_>| {
        let arg = super::facts::Arg {
            name: None,
            value: span(n),
            vkind: ValKind::Attr,
        };
        m.resolve(&arg, n.start_byte(), None)
    };
    match cond.node_kind() {
        "attribute" => match value(cond) {
            Val::Bool(b) => Some(b),
            Val::None => Some(false),
            Val::Str(s) => Some(!s.is_empty()),
            Val::Int(i) => Some(i != 0),
            _ => None,
        },
        "parenthesized_expression" => default_truth(m, cond.named_child(0)?),
        "not_operator" => default_truth(m, cond.named_child(0)?).map(|b| !b),
        "boolean_operator" => {
            let op = field::get(cond, field::OPERATOR)?;
            let l = default_truth(m, field::get(cond, field::LEFT)?);
            let r = default_truth(m, field::get(cond, field::RIGHT)?);
            match (m.text(span(op)), l, r) {
                ("and", Some(false), _) | ("and", _, Some(false)) => Some(false),
                ("and", Some(true), Some(true)) => Some(true),
                ("or", Some(true), _) | ("or", _, Some(true)) => Some(true),
                ("or", Some(false), Some(false)) => Some(false),
                _ => None,
            }
        }
        "call" => {
            let f = field::get(cond, field::FUNCTION)?;
            let recv = field::get(f, field::OBJECT)?;
            let meth = m.text(span(field::get(f, field::ATTRIBUTE)?));
            let args = field::get(cond, field::ARGUMENTS)?;
            let (Some(lit), 1) = (args.named_child(0), args.named_child_count()) else {
                return None;
            };
            let lit = super::facts::string_value(lit, m.src)?;
            let Val::Str(s) = (recv.node_kind() == "attribute").then(|| value(recv))? else {
                return None;
            };
            match meth {
                "startswith" => Some(s.starts_with(lit.as_ref())),
                "endswith" => Some(s.ends_with(lit.as_ref())),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The model a `.to(...)` / `.cuda()` call places: `model.to(d)`, or through mode switches
/// that hand the module back (`model.eval().to(d)`).
fn placed_model<'s>(m: &Model<'s>, c: &Call) -> Option<&'s str> {
    use super::facts::VarKind;
    let mut cur = c;
    for _ in 0..8 {
        let r = cur.recv?;
        if m.var_kind(m.text(r)) == Some(VarKind::Model) {
            return Some(m.text(r));
        }
        let inner = m.calls.get(cur.recv_call? as usize)?;
        if inner.method.is_none() || !matches!(m.last_name(inner), "eval" | "train" | "float") {
            return None;
        }
        cur = inner;
    }
    None
}

/// A `DataLoader(...)` call that runs as shipped: not in a branch that is off by default
/// (`elif dataset == "MNIST": loader = DataLoader(...)` with another default loads nothing).
pub(crate) fn live_loader(m: &Model<'_>, c: &Call) -> bool {
    // (a loader built in an `except` handler is a fallback: `except RuntimeError:
    // DataLoader(dataset, num_workers=0)` runs only when the first one fails)
    crate::analysis::resolve::is_dataloader(m, c)
        && !m.dead(&c.ctx)
        && !c.ctx.in_except
        && !unused_lightning_hook(m, c)
}

/// Does the loader batch indices rather than samples (`DataLoader(range(n), batch_size)`,
/// `torch.arange(n)`)? Each batch is a tensor of integers the step uses to slice tensors it
/// already holds: no sample is read, decoded or copied, so workers, pinning and persistence
/// have nothing to do, and building one is free.
// Ex) for perm in DataLoader(range(pos_train_edge.size(0)), batch_size, shuffle=True):
pub(crate) fn index_loader(m: &Model<'_>, c: &Call) -> bool {
    // (also a dataset of indices by its class's name, `train_index_loader =
    // DataLoader(dataset=IndexSet(num_indices=n))`, directly or through a variable)
    let index_set = |call: &Call| {
        let parts: Vec<&str> = camel_parts(m.last_name(call)).collect();
        matches!(
            parts.as_slice(),
            [.., "Index" | "Indices", "Set" | "Dataset"]
        )
    };
    m.pos(c, 0)
        .or_else(|| m.kw(c, "dataset"))
        .is_some_and(|ds| {
            let t = m.text(ds.value);
            ["range(", "torch.arange(", "np.arange(", "list(range("]
                .iter()
                .any(|p| t.starts_with(p))
                || m.call_at(ds.value).is_some_and(index_set)
                || crate::analysis::as_shipped::binding(m, t, c.span.start, c.ctx.func)
                    .and_then(|a| a.rhs_call)
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(index_set)
        })
}

/// The parts of a CamelCase name: `DecoderRNN` → `Decoder`, `RNN`; `TransformerModel` →
/// `Transformer`, `Model`. A part starts at an upper-case letter after a lower-case one or a
/// digit, or at the last upper-case letter of a run followed by a lower-case one.
pub(crate) fn camel_parts(word: &str) -> impl Iterator<Item = &str> {
    let b = word.as_bytes();
    let mut start = 0;
    let mut i = 1;
    std::iter::from_fn(move || {
        if start >= b.len() {
            return None;
        }
        while i < b.len() {
            let (prev, cur) = (b[i - 1], b[i]);
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = cur.is_ascii_uppercase()
                && (prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_lower));
            i += 1;
            if boundary {
                let part = &word[start..i - 1];
                start = i - 1;
                return Some(part);
            }
        }
        let part = &word[start..];
        start = b.len();
        Some(part)
    })
}

/// Does the loader take its whole dataset as one batch (`batch_size=len(valid_data)` over
/// `valid_data`)? Its one batch per pass leaves workers nothing to prepare ahead.
// Ex) val_loader = DataLoader(dataset=valid_data, batch_size=len(valid_data), shuffle=False)
pub(crate) fn whole_dataset_batch(m: &Model<'_>, c: &Call) -> bool {
    let (Some(ds), Some(bs)) = (
        m.pos(c, 0).or_else(|| m.kw(c, "dataset")),
        m.kw(c, "batch_size").or_else(|| m.pos(c, 1)),
    ) else {
        return false;
    };
    let bs = m.text(bs.value).replace(' ', "");
    bs == format!("len({})", m.text(ds.value)) || split_length(m, m.text(ds.value)) == Some(bs)
}

/// The length `random_split` gives the part bound to `name` (`train_set, val_set =
/// random_split(ds, [train_length, val_length])`: `val_length` for `val_set`), as written.
fn split_length(m: &Model<'_>, name: &str) -> Option<String> {
    m.assigns.iter().find_map(|a| {
        // (the call first: only a `random_split` binding is worth sorting the targets of)
        let split = a
            .rhs_call
            .and_then(|k| m.calls.get(k as usize))
            .filter(|k| m.last_name(k) == "random_split")?;
        let mut targets: Vec<&super::facts::Span> = a.targets.iter().collect();
        targets.sort_by_key(|t| t.start);
        let i = targets.iter().position(|t| m.text(**t) == name)?;
        let lengths = m
            .pos(split, 1)
            .or_else(|| m.kw(split, "lengths"))
            .and_then(|x| m.node(x.value))
            .filter(|n| matches!(n.node_kind(), "list" | "tuple"))?;
        let mut cur = lengths.walk();
        let part = lengths
            .named_children(&mut cur)
            .filter(|n| n.node_kind() != "comment")
            .nth(i)?;
        Some(m.node_text(part).replace(' ', ""))
    })
}

/// The first training step loop.
/// Of several, not one in a function another training loop calls each step: that loop (an
/// adversarial attack's `for _ in range(attack_iters): loss.backward()`, called as
/// `delta = attack_pgd(model, X, y)`) serves the training loop that calls it.
pub(crate) fn first_train_loop<'a>(m: &'a Model<'_>) -> Option<&'a super::facts::Loop> {
    let live: Vec<&Loop> = m.loops.iter().filter(|l| live_train_loop(m, l)).collect();
    let serves = |l: &Loop| {
        let Some(f) = l.ctx.func.and_then(|f| m.funcs.get(f as usize)) else {
            return false;
        };
        let name = m.text(f.name);
        m.calls.iter().any(|c| {
            c.method.is_none()
                && m.text(c.func) == name
                && live.iter().any(|o| {
                    o.span != l.span && o.ctx.func != l.ctx.func && o.span.contains(c.span)
                })
        })
    };
    let first = live
        .iter()
        .copied()
        .find(|l| live.len() == 1 || !serves(l))
        .or_else(|| live.first().copied())?;
    // (a few passes over each batch with the settings a list writes out, `for rate in
    // size_rates:` with `size_rates = [0.75, 1, 1.25]` inside `for i, pack in
    // enumerate(train_loader):`, multi-scale training: the loader's loop is the step loop; not
    // `for k in range(n_critic):`, a critic's steps of their own)
    let settings = |l: &Loop| {
        l.iter.is_some_and(|it| {
            let node = m.node(it).and_then(|n| match n.node_kind() {
                "identifier" => {
                    let name = m.node_text(n);
                    let b = latest_binding(m, name, l.span.start)?;
                    m.node(b.value)
                }
                _ => Some(n),
            });
            node.is_some_and(|n| matches!(n.node_kind(), "list" | "tuple"))
        })
    };
    let loader_parent = first
        .parent
        .and_then(|p| m.loops.get(p as usize))
        .filter(|p| {
            p.info.iterates_loader.is_some()
                && first.info.iterates_loader.is_none()
                && settings(first)
                && known_iterations(m, first).is_some_and(|n| (1..=16).contains(&n))
        });
    Some(loader_parent.unwrap_or(first))
}

/// A training step loop that runs as shipped: not in a branch that is off (`if not
/// args.evaluate:` with the flag on by default), not after an early `return`, not in a function
/// nothing calls; nor one that breaks off after a few batches (`if i > 1: break`), a smoke
/// test of the step.
pub(crate) fn live_train_loop(m: &Model<'_>, l: &Loop) -> bool {
    l.info.train
        && !m.dead(&l.ctx)
        && !m.uncalled_line(l.line)
        && !crate::analysis::resolve::capped_loop(m, l)
}

/// A call to an HF `TrainingArguments`-like config.
/// Only a call whose keywords are all visible: `TrainingArguments(**cfg)` is unknown.
/// `None` when the file never runs a trainer (`trainer.train()` commented out): the
/// configuration configures nothing that runs.
/// Of several, the one a trainer is handed (`training_args = TrainingArguments(...)` rebound
/// before `Trainer(args=training_args)`: the first binding configures nothing).
pub(crate) fn hf_args_call<'a>(m: &'a Model<'_>) -> Option<&'a Call> {
    let mut configs = m
        .calls
        .iter()
        .filter(|c| crate::analysis::resolve::hf_config(m, c) && c.splat.is_none() && !c.star);
    let first = configs.next()?;
    std::iter::once(first)
        .chain(configs)
        .find(|c| handed_to_trainer(m, c))
        .or(Some(first))
        .filter(|_| runs_a_trainer(m))
}

/// Is configuration call `c` bound to a name that a `...Trainer(...)` call after it is handed
/// (`args=` or its second argument), with no other binding of the name in between (but a
/// fallback in an `except` handler, which does not run as shipped: `try: training_args =
/// TrainingArguments(..., eval_steps=500) except TypeError: training_args =
/// TrainingArguments(...)`)?
fn handed_to_trainer(m: &Model<'_>, c: &Call) -> bool {
    let Some(a) = assign_of_call(m, c).filter(|a| a.targets.len() == 1) else {
        return false;
    };
    let name = m.text(a.left);
    m.calls.iter().any(|t| {
        t.span.start > a.span.end
            && m.last_name(t).ends_with("Trainer")
            && m.kw(t, "args")
                .or_else(|| m.pos(t, 1))
                .is_some_and(|x| m.text(x.value) == name)
            && super::as_shipped::binding(m, name, t.span.start, t.ctx.func).is_some_and(|b| {
                b.span == a.span
                    || (b.ctx.in_except
                        && !a.ctx.in_except
                        && m.assigns
                            .iter()
                            .filter(|x| {
                                x.span.end <= t.span.start
                                    && x.ctx.func == t.ctx.func
                                    && !x.ctx.in_except
                                    && x.targets.iter().any(|y| m.text(*y) == name)
                            })
                            .last()
                            .is_some_and(|x| x.span == a.span))
            })
    })
}

/// The assignment whose value is call `c` (`training_args = TrainingArguments(...)`).
fn assign_of_call<'a>(m: &'a Model<'_>, c: &Call) -> Option<&'a super::facts::Assign> {
    m.assigns.iter().find(|a| {
        a.rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|x| x.span == c.span)
    })
}

/// Does the file run a trainer as shipped: a `.train()` / `.evaluate()` / `.predict()` of an
/// object named or built as a trainer (`trainer.train()`, `SFTTrainer(...).train()`), not in a
/// branch that is off nor in a function the script never calls?
fn runs_a_trainer(m: &Model<'_>) -> bool {
    m.calls.iter().any(|c| {
        c.method.is_some()
            && matches!(m.last_name(c), "train" | "evaluate" | "predict")
            && !m.dead(&c.ctx)
            && !m.uncalled_line(c.line)
            && on_a_trainer(m, c)
    })
}

/// Is method call `c` made on a trainer: a receiver named like one (`trainer.train()`), built
/// by a `...Trainer(...)` call in the expression or in its binding?
fn on_a_trainer(m: &Model<'_>, c: &Call) -> bool {
    c.recv
        .is_some_and(|r| m.text(r).to_ascii_lowercase().contains("trainer"))
        || c.recv_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|k| m.last_name(k).ends_with("Trainer"))
        || c.recv.is_some_and(|r| {
            super::as_shipped::binding(m, m.text(r), c.span.start, c.ctx.func)
                .and_then(|a| a.rhs_call)
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|k| m.last_name(k).ends_with("Trainer"))
        })
}

/// The `trainer.fit(model, ...)` that runs as shipped in a file building a Lightning
/// `Trainer`: the framework owns the training loop of the model it is handed.
pub(crate) fn lightning_fit<'a>(m: &'a Model<'_>) -> Option<&'a Call> {
    let lightning = m.calls.iter().any(|c| {
        let q = m.qual(c);
        m.last_name(c) == "Trainer"
            && (q.starts_with("lightning") || q.starts_with("pytorch_lightning"))
    });
    if !lightning {
        return None;
    }
    m.calls.iter().find(|c| {
        c.method.is_some()
            && m.last_name(c) == "fit"
            && !m.dead(&c.ctx)
            && !m.uncalled_line(c.line)
            && on_a_trainer(m, c)
    })
}

/// The Lightning loader hook loader call `c` is built in (`def train_dataloader(self):`), when
/// it is one: `train_dataloader` / `val_dataloader` serve `trainer.fit`, once per epoch;
/// `test_dataloader` / `predict_dataloader` serve `trainer.test` / `trainer.predict` only.
pub(crate) fn lightning_loader_hook<'s>(m: &Model<'s>, c: &Call) -> Option<&'s str> {
    let f = c.ctx.func.and_then(|f| m.funcs.get(f as usize))?;
    f.class?;
    let name = m.text(f.name);
    matches!(
        name,
        "train_dataloader" | "val_dataloader" | "test_dataloader" | "predict_dataloader"
    )
    .then_some(name)
}

/// Does loader call `c` sit in a Lightning hook that no run of the file asks for: a
/// `test_dataloader` / `predict_dataloader` of a file whose trainer only fits (no
/// `trainer.test(...)` / `trainer.predict(...)`)?
pub(crate) fn unused_lightning_hook(m: &Model<'_>, c: &Call) -> bool {
    let verb = match lightning_loader_hook(m, c) {
        Some("test_dataloader") => "test",
        Some("predict_dataloader") => "predict",
        _ => return false,
    };
    lightning_fit(m).is_some()
        && !m.calls.iter().any(|k| {
            k.method.is_some() && m.last_name(k) == verb && !m.dead(&k.ctx) && on_a_trainer(m, k)
        })
}

/// Does a trainer class of the repository's own code run the training: a class imported from
/// a module that is not a framework the file configures (Hugging Face, Lightning, Ignite, ...),
/// built with the model, whose `train` / `fit` the file calls, in a file that builds no
/// optimizer (`trainer = Trainer(model=model, config=cfg)` from `src.trainer_ddp`, then
/// `trainer.train()`)? Its loop, precision and optimizer are the other module's.
pub(crate) fn own_trainer_runs(m: &Model<'_>) -> bool {
    const FRAMEWORKS: &[&str] = &[
        "transformers",
        "trl",
        "setfit",
        "sentence_transformers",
        "pytorch_lightning",
        "lightning",
        "ignite",
        "accelerate",
        "fastai",
        "keras",
        "tensorflow",
        "sklearn",
        "ultralytics",
        "torch",
    ];
    if m.calls
        .iter()
        .any(|c| crate::analysis::resolve::optimizer_ctor(m, c))
    {
        return false;
    }
    m.calls.iter().enumerate().any(|(ci, c)| {
        c.method.is_none()
            && !m.dead(&c.ctx)
            && m.imports
                .get(m.text(c.func))
                .is_some_and(|q| !FRAMEWORKS.contains(&q.split('.').next().unwrap_or(q)))
            // (the model by its kind, or handed as `model=`: `LlmTrainer(model=model)` with
            // `model = get_model(args.model, args.device)`, a factory of the file)
            && m.call_args(c).iter().any(|a| {
                m.kinds.get(m.text(a.value)) == Some(&super::facts::VarKind::Model)
                    || a.name.is_some_and(|n| m.text(n) == "model")
            })
            && crate::analysis::resolve::object_trained(m, ci)
    })
}

/// The `trainer.run(loader, max_epochs=...)` of an Ignite engine that trains, running as
/// shipped: an `Engine(step)` or `create_supervised_trainer(model, ...)` of `ignite.engine`
/// (or, in a file that imports it, a receiver named like a trainer). The framework owns the
/// training loop.
pub(crate) fn ignite_run<'a>(m: &'a Model<'_>) -> Option<&'a Call> {
    ignite_engine(m).map(|(run, _)| run)
}

/// The Ignite engine that trains, as [`ignite_run`] finds it: its `trainer.run(...)` call and,
/// where the file shows it, the `create_supervised_trainer(...)` / `Engine(step)` call that
/// built it (where its precision is set: `amp_mode="amp"`, or autocast in the step).
pub(crate) fn ignite_engine<'a>(m: &'a Model<'_>) -> Option<(&'a Call, Option<&'a Call>)> {
    let imports_ignite = m.imports.values().any(|q| q.starts_with("ignite"));
    if !imports_ignite {
        return None;
    }
    m.calls.iter().find_map(|c| {
        let r = c
            .recv
            .filter(|_| c.method.is_some() && m.last_name(c) == "run")?;
        if m.dead(&c.ctx) || m.uncalled_line(c.line) {
            return None;
        }
        let name = m.text(r);
        let built = super::as_shipped::binding(m, name, c.span.start, c.ctx.func)
            .or_else(|| latest_binding(m, name, c.span.start))
            .and_then(|a| a.rhs_call)
            .and_then(|i| m.calls.get(i as usize))
            .filter(|k| {
                matches!(m.last_name(k), "Engine" | "create_supervised_trainer")
                    && m.qual(k).starts_with("ignite")
            });
        // (not an evaluator, `Engine(test_step)`, run each epoch: an `Engine(step)` trains when
        // the step function of the file runs the backward pass)
        let evaluates = built.is_some_and(|k| {
            m.last_name(k) == "Engine"
                && m.pos(k, 0).is_some_and(|step| {
                    let step = m.text(step.value);
                    let mut fs = m.funcs.iter().filter(|f| m.text(f.name) == step).peekable();
                    fs.peek().is_some() && fs.all(|f| !f.backward)
                })
        });
        (!evaluates && (built.is_some() || name.to_ascii_lowercase().contains("trainer")))
            .then_some((c, built))
    })
}

/// Where the model a Lightning `trainer.fit(model, ...)` trains is built (`model =
/// LitClassifier(cfg)`), as [`model_anchor`] returns it.
fn lightning_model(m: &Model<'_>) -> Option<(usize, usize, Option<usize>)> {
    let fit = lightning_fit(m)?;
    let arg = m.pos(fit, 0).or_else(|| m.kw(fit, "model"))?;
    match arg.vkind {
        ValKind::Ident => {
            let a = build_site(m, m.text(arg.value), fit)?;
            // (`trainer, model = load_model(args)`: where the function of the file builds what
            // it returns there, `u2net = U2NetPL(...)` ... `return trainer, u2net`)
            let a = returned_build(m, a, m.text(arg.value)).unwrap_or(a);
            let i = m.assigns.iter().position(|x| std::ptr::eq(x, a))?;
            let col = m.node(a.span).map_or(1, |n| n.start_position().column + 1);
            Some((a.line, col, Some(i)))
        }
        // `trainer.fit(LitModel(cfg), dm)`
        ValKind::Call => {
            let built = m.call_at(arg.value)?;
            Some((built.line, built.col, None))
        }
        _ => None,
    }
}

/// Where the function of the file that assignment `a` calls builds the value `a` binds to
/// `name`: `trainer, model = load_model(args)` with `def load_model(args): u2net =
/// U2NetPL(...); ...; return trainer, u2net` is the binding of `u2net`.
fn returned_build<'a>(
    m: &'a Model<'_>,
    a: &super::facts::Assign,
    name: &str,
) -> Option<&'a super::facts::Assign> {
    let call = m.calls.get(a.rhs_call? as usize)?;
    if call.method.is_some() {
        return None;
    }
    let fi = m.plain_fn(m.text(call.func))?;
    let value = returned_value(m, fi)?;
    let returned = bound_part(m, &a.targets, name, value)?;
    if returned.node_kind() != "identifier" {
        return None;
    }
    let inner = m.node_text(returned);
    m.assigns
        .iter()
        .filter(|b| {
            b.ctx.func == u32::try_from(fi).ok()
                && b.targets.len() == 1
                && m.text(b.left) == inner
                && b.rhs_call.is_some()
                && b.span.end <= value.start_byte()
        })
        .last()
}

/// A Lightning `Trainer(...)` / Fabric call whose keywords are all visible: the one bound to
/// the name whose `.fit(...)` runs (`trainer = Trainer(logger=logger)` then `trainer =
/// Trainer(max_epochs=..., ...)` and `trainer.fit(module)`: the second), else the first.
pub(crate) fn lightning_trainer_call<'a>(m: &'a Model<'_>) -> Option<&'a Call> {
    let trainer = |c: &&Call| {
        let q = m.qual(c);
        matches!(m.last_name(c), "Trainer" | "Fabric")
            && (q.starts_with("lightning") || q.starts_with("pytorch_lightning"))
            && c.splat.is_none()
            && !c.star
    };
    let fitted = lightning_fit(m).and_then(|fit| {
        let name = m.text(fit.recv?);
        let a = latest_binding(m, name, fit.span.start)?;
        m.calls.get(a.rhs_call? as usize).filter(trainer)
    });
    fitted.or_else(|| m.calls.iter().find(trainer))
}

/// Where a framework owns the training loop, its configuration call is the anchor of the
/// file-level precision rules: HF `TrainingArguments`, else a Lightning `Trainer`.
pub(crate) fn framework_config_call<'a>(m: &'a Model<'_>) -> Option<&'a Call> {
    if first_train_loop(m).is_some() {
        return None;
    }
    hf_args_call(m).or_else(|| lightning_trainer_call(m))
}

/// The call that built DataLoader `c`'s dataset: the argument itself (`DataLoader(Items(x))`)
/// or the latest assignment of the name it passes (`ds = Items(x)` ... `DataLoader(ds)`).
/// Does the loader read a dataset of prompts (`PromptDataset(args.class_prompt, n)`, the
/// DreamBooth scripts' class-image sampler): batches of text, which pinning cannot speed up?
// Ex) sample_dataloader = DataLoader(PromptDataset(args.class_prompt, num_new_images), batch_size=4)
pub(crate) fn prompt_dataset(m: &Model<'_>, c: &Call) -> bool {
    dataset_ctor(m, c).is_some_and(|ctor| {
        let parts: Vec<&str> = camel_parts(m.last_name(ctor)).collect();
        matches!(parts.as_slice(), [.., "Prompt" | "Prompts", "Dataset"])
    })
}

fn dataset_ctor<'a>(m: &'a Model<'_>, c: &Call) -> Option<&'a Call> {
    let ds = m.pos(c, 0).or_else(|| m.kw(c, "dataset"))?;
    built_by(m, ds, c, 0)
}

/// The call that built the value of argument `a` of call `at`: the call itself, the nearest
/// assignment before it, or — for a parameter of the enclosing function that nothing there
/// rebinds — what the file's one plain call of that function passes for it
/// (`def make_loader(ds): return DataLoader(ds)` … `make_loader(AudioSet(files))`).
fn built_by<'a>(m: &'a Model<'_>, a: Arg, at: &Call, depth: u8) -> Option<&'a Call> {
    match a.vkind {
        ValKind::Call => {
            let built = m.call_at(a.value)?;
            // `DataLoader(Subset(ds, train_idx))`: a part of the dataset holds what it holds
            if m.last_name(built) == "Subset"
                && depth < 3
                && let Some(whole) = m.pos(built, 0)
            {
                return built_by(m, whole, built, depth + 1);
            }
            Some(built)
        }
        ValKind::Ident => {
            let name = m.text(a.value);
            if let Some(x) = latest_binding(m, name, at.span.start) {
                let built = x.rhs_call.and_then(|ci| m.calls.get(ci as usize))?;
                // `train_ds, val_ds = process_data()`: what the file's own function returns
                if depth < 3
                    && let Some(returned) = returned_call(m, built, x, name)
                {
                    return Some(returned);
                }
                // `train, val = random_split(dataset, [n, m])`, `Subset(dataset, idx)`: parts of
                // the dataset split hold what it holds
                if matches!(m.last_name(built), "random_split" | "Subset")
                    && depth < 3
                    && let Some(whole) = m.pos(built, 0)
                {
                    return built_by(m, whole, built, depth + 1);
                }
                return (x.targets.len() == 1).then_some(built);
            }
            if depth > 0 {
                return None; // one helper deep
            }
            let fi = at.ctx.func?;
            let f = m.funcs.get(fi as usize)?;
            let p = f.params.iter().position(|(n, _)| m.text(*n) == name)?;
            if f.class.is_some() || p >= f.positional {
                return None;
            }
            let fname = m.text(f.name);
            let mut callers = m
                .calls
                .iter()
                .filter(|x| x.method.is_none() && m.text(x.func) == fname);
            let caller = callers.next()?;
            if callers.next().is_some() {
                return None;
            }
            let arg = m.kw(caller, name).or_else(|| m.pos(caller, p))?;
            built_by(m, arg, caller, depth + 1)
        }
        _ => None,
    }
}

/// The call a plain call of a function of this file returns for `name`, bound by assignment
/// `x` (`a, b = make()` with `def make(): ... return A(...), B(...)`): the element at
/// `name`'s position of the function's first `return` (the whole value for one target).
fn returned_call<'a>(
    m: &'a Model<'_>,
    built: &Call,
    x: &super::facts::Assign,
    name: &str,
) -> Option<&'a Call> {
    if built.method.is_some() {
        return None;
    }
    let fname = m.text(built.func);
    let value = returned_value(m, m.plain_fn(fname)?)?;
    let element = if x.targets.len() > 1 {
        let k = x.targets.iter().position(|t| m.text(*t) == name)?;
        if !matches!(value.node_kind(), "expression_list" | "tuple") {
            return None;
        }
        *super::facts::elements(value).get(k)?
    } else {
        value
    };
    // (a name the function bound to a call before returning it: `dataset = RamanDataset(...)`
    // ... `return dataset, sample_names`)
    if element.node_kind() == "identifier" {
        let fi = m.plain_fn(fname)?;
        let local = m.node_text(element);
        return m
            .assigns
            .iter()
            .filter(|a| {
                a.ctx.func == Some(fi as u32)
                    && a.targets.len() == 1
                    && !a.augmented
                    && m.text(a.left) == local
                    && a.span.end <= element.start_byte()
            })
            .last()
            .and_then(|a| a.rhs_call)
            .and_then(|i| m.calls.get(i as usize));
    }
    m.calls
        .iter()
        .find(|c| c.span.start == element.start_byte() && c.span.end == element.end_byte())
}

/// The names the callers of a function of this file bind its local `var` to, when the function
/// returns it (`def build_loaders(): tr = DataLoader(...); ...; return tr, va` and
/// `tr_loader, va_loader = build_loaders(...)`: `tr` is `tr_loader` there).
pub(crate) fn returned_to<'s>(m: &Model<'s>, var: &str, func: Option<u32>) -> Vec<&'s str> {
    returned_where(m, func, |n| m.node_text(n) == var)
}

/// The names the callers of the function holding call `c` bind its value to, when the function
/// returns the call itself (`return DataLoader(ds_tr, ...), DataLoader(ds_te, ...), classes`
/// and `tr_l, te_l, classes = get_data_loaders(...)`: the first call is `tr_l` there).
pub(crate) fn call_returned_to<'s>(m: &Model<'s>, c: &Call) -> Vec<&'s str> {
    returned_where(m, c.ctx.func, |n| {
        n.start_byte() == c.span.start && n.end_byte() == c.span.end
    })
}

/// [`returned_to`] for the returned value (or element of a returned tuple) `is_it` accepts.
fn returned_where<'s>(
    m: &Model<'s>,
    func: Option<u32>,
    is_it: impl Fn(tree_sitter::Node<'_>) -> bool,
) -> Vec<&'s str> {
    let Some((f, value)) = func.and_then(|fi| {
        let f = m.funcs.get(fi as usize)?;
        Some((f, returned_value(m, fi as usize)?))
    }) else {
        return Vec::new();
    };
    // (position in the returned tuple and its length; `None` for the whole value)
    let at: Option<(usize, usize)> = match value.node_kind() {
        "expression_list" | "tuple" => {
            let elements = super::facts::elements(value);
            match elements.iter().position(|e| is_it(*e)) {
                Some(k) => Some((k, elements.len())),
                None => return Vec::new(),
            }
        }
        _ if is_it(value) => None,
        _ => return Vec::new(),
    };
    let fname = m.text(f.name);
    m.assigns
        .iter()
        .filter(|a| {
            !a.augmented
                && a.rhs_call
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|c| {
                        c.method.is_none() == f.class.is_none() && m.last_name(c) == fname
                    })
        })
        .filter_map(|a| match at {
            Some((k, n)) if a.targets.len() == n => a.targets.get(k),
            None if a.targets.len() == 1 => a.targets.first(),
            _ => None,
        })
        .map(|t| m.text(*t))
        .collect()
}

/// The value of the first `return` of function `fi` of the file ([`first_return`] of its
/// definition).
fn returned_value<'t>(m: &'t Model<'_>, fi: usize) -> Option<tree_sitter::Node<'t>> {
    let f = m.funcs.get(fi)?;
    m.node(f.name)?.parent().and_then(first_return)
}

/// The value of the first `return` of a function definition, outside nested definitions.
fn first_return(def: tree_sitter::Node<'_>) -> Option<tree_sitter::Node<'_>> {
    let body = def.child_by_field_name("body")?;
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.node_kind() == "return_statement" {
            return n.named_child(0);
        }
        if matches!(
            n.node_kind(),
            "function_definition" | "class_definition" | "lambda"
        ) {
            continue;
        }
        let mut cursor = n.walk();
        let mut children: Vec<_> = n.named_children(&mut cursor).collect();
        children.reverse();
        stack.extend(children);
    }
    None
}

/// A DataLoader over a dataset whose items are already on the GPU: a `TensorDataset` of CUDA
/// tensors (`TensorDataset(x.to(device), y.to(device))`), or a dataset built with the device
/// (`MelDataset(path, device)`, `AudioSet(files, device=device)`: it moves its samples there
/// itself), or one whose collate, a function of the file, builds or moves its batch there
/// (`torch.tensor(ids, device=device)`, `labels.to(device)`), or a `Dataset` class of the file
/// whose `__getitem__` moves each item there itself (`return seq.to(device), label`). There is
/// nothing for workers to load (CUDA cannot run in forked workers), and pinning a CUDA tensor
/// is an error.
pub(crate) fn device_resident_dataset(m: &Model<'_>, c: &Call) -> bool {
    collate_on_device(m, c)
        || split_with_device(m, c)
        || default_device_before(m, c)
        || getitem_on_device(m, c)
        || dataset_ctor(m, c).is_some_and(|t| {
            let args = m.text(t.args_span).to_ascii_lowercase();
            (m.last_name(t) == "TensorDataset"
                && (args.contains(".cuda(")
                    || args.contains(".to(device")
                    || args.contains(".to(\"cuda")
                    || tensors_on_device(m, t)))
                || m.call_args(t).iter().any(|a| device_arg(m, a))
        })
}

/// Does the code that builds loader `c` first make the GPU the default device for new tensors
/// (`torch.set_default_device(my_device)` earlier in the same function, or at module level,
/// with a device that is not the CPU)? The tensors its dataset holds are then created there
/// (the loader's `generator=torch.Generator(device=my_device)` says as much).
// Ex) torch.set_default_device(my_device) ... DataLoader(train_dataset, batch_size=3, generator=torch.Generator(device=my_device))
fn default_device_before(m: &Model<'_>, c: &Call) -> bool {
    cuda(m)
        && m.calls.iter().any(|d| {
            d.span.end <= c.span.start
                && (d.ctx.func == c.ctx.func || d.ctx.func.is_none())
                && !m.dead(&d.ctx)
                && m.qual(d) == "torch.set_default_device"
                && m.pos(d, 0).is_some_and(|a| {
                    !m.text(a.value).to_ascii_lowercase().contains("cpu")
                        && !m.text(a.value).contains("mps")
                })
        })
}

/// Are all the tensors a `TensorDataset(...)` call holds names (or slices of names) whose
/// latest binding puts them on the device: `x = x.to(device)`, `feats = get_token(..., device)`?
// Ex) labels = labels.to(device) ... TensorDataset(features[idx_train], labels[idx_train])
fn tensors_on_device(m: &Model<'_>, t: &Call) -> bool {
    let args = m.call_args(t);
    !args.is_empty()
        && args.iter().all(|a| {
            let text = m.text(a.value);
            let root = text.split('[').next().unwrap_or(text).trim();
            root.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
                && latest_binding(m, root, t.span.start).is_some_and(|b| {
                    let v = m.text(b.value);
                    v.contains(".cuda(")
                        || v.contains(".to(device")
                        || b.rhs_call
                            .and_then(|i| m.calls.get(i as usize))
                            .is_some_and(|k| m.call_args(k).iter().any(|x| device_arg(m, x)))
                })
        })
}

/// Does loader `c` read a `Dataset` class of the file whose `__getitem__` moves to the device
/// (`.to(device)`, `.cuda()`)?
// Ex) def __getitem__(self, i): seq = torch.cat((seq, torch.tensor([0]))).to(device); return seq, y
fn getitem_on_device(m: &Model<'_>, c: &Call) -> bool {
    let Some(ctor) = dataset_ctor(m, c).filter(|t| t.method.is_none()) else {
        return false;
    };
    let Some(getitem) = method_of(m, m.text(ctor.func), "__getitem__") else {
        return false;
    };
    m.calls.iter().any(|k| {
        k.ctx.func == Some(getitem)
            && k.method.is_some()
            && matches!(m.last_name(k), "to" | "cuda")
            && crate::analysis::resolve::placement_arg(m, k)
            && !m.dead(&k.ctx)
    })
}

/// The index (in `m.funcs`) of method `name` of the file's class `class` (`__getitem__` of a
/// `Dataset`, `__init__` of a trainer).
pub(crate) fn method_of(m: &Model<'_>, class: &str, name: &str) -> Option<u32> {
    let ci = u32::try_from(m.classes.iter().position(|k| m.text(k.name) == class)?).ok()?;
    let fi = m
        .funcs
        .iter()
        .position(|f| f.class == Some(ci) && m.text(f.name) == name)?;
    u32::try_from(fi).ok()
}

/// A loader over one of several datasets a call builds together with the device
/// (`train_ds, val_ds, test_ds = DataSplit(root).get_datasets(device)`): they all sit there.
fn split_with_device(m: &Model<'_>, c: &Call) -> bool {
    let Some(ds) = m.pos(c, 0).or_else(|| m.kw(c, "dataset")) else {
        return false;
    };
    if ds.vkind != ValKind::Ident {
        return false;
    }
    latest_binding(m, m.text(ds.value), c.span.start)
        .filter(|x| x.targets.len() > 1)
        .and_then(|x| x.rhs_call)
        .and_then(|i| m.calls.get(i as usize))
        .is_some_and(|built| m.call_args(built).iter().any(|a| device_arg(m, a)))
}

/// Where model `name`, handed to call `c` (`trainer.fit(model)`, `accelerator.prepare(model)`),
/// is built: its binding before the call, walking back over rebuilds from itself (`model =
/// model.load_from_checkpoint(path)`, `model = torch.compile(model)`) and over bindings behind
/// a switch (`if cfg.ckpt: model = Net.load_from_checkpoint(cfg.ckpt)`, the `else` of `if
/// args.model_name:`), which only replace what was built before.
fn build_site<'a>(m: &'a Model<'_>, name: &str, c: &Call) -> Option<&'a super::facts::Assign> {
    let mut a = super::as_shipped::binding(m, name, c.span.start, c.ctx.func)
        .or_else(|| latest_binding(m, name, c.span.start))?;
    for _ in 0..4 {
        // (not back to a binding in a branch that does not run as shipped: `if
        // args.load_model_from: module = Module.load_from_checkpoint(...)` `else: module =
        // Module(model, args)`)
        match latest_binding(m, name, a.span.start) {
            // (nor into another function: a checkpoint hook's `model = models.pop()`)
            Some(earlier)
                if (rebuilds(m, a, name) || a.ctx.guard.is_some())
                    && !m.dead(&earlier.ctx)
                    && earlier.ctx.func == a.ctx.func =>
            {
                a = earlier;
            }
            _ => break,
        }
    }
    Some(a)
}

/// Does assignment `a` of `name` rebuild it from itself (`model = model.load_from_checkpoint(p)`,
/// `model = torch.compile(model)`)?
fn rebuilds(m: &Model<'_>, a: &super::facts::Assign, name: &str) -> bool {
    a.rhs_call
        .and_then(|i| m.calls.get(i as usize))
        .is_some_and(|k| {
            k.recv.is_some_and(|r| m.text(r) == name)
                || m.call_args(k).iter().any(|x| m.text(x.value) == name)
        })
}

/// The last assignment before byte `before` that binds `name`, alone or as one of a tuple's
/// targets (`train_ds, val_ds = ...`).
fn latest_binding<'a>(
    m: &'a Model<'_>,
    name: &str,
    before: usize,
) -> Option<&'a super::facts::Assign> {
    m.assigns.iter().rev().find(|x| {
        x.span.end <= before
            && (m.text(x.left) == name
                || (x.targets.len() > 1 && x.targets.iter().any(|t| m.text(*t) == name)))
    })
}

/// An argument that hands a call the device: `device=...`, or the script's device variable.
fn device_arg(m: &Model<'_>, a: &super::facts::Arg) -> bool {
    a.name.is_some_and(|n| m.text(n) == "device")
        || (a.vkind == ValKind::Ident && names_device(m, m.text(a.value)))
}

/// Is `v` the script's device variable (`device`, `train_device`, or a name bound to a
/// `torch.device`)?
fn names_device(m: &Model<'_>, v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    l == "device" || l.ends_with("_device") || m.var_kind(v) == Some(super::facts::VarKind::Device)
}

/// Does the loader's collate, a function of this file, put its batch on the GPU? A call in it
/// that builds a tensor with `device=<the device>` or moves one with `.to(<the device>)` /
/// `.cuda()`.
// Ex) def collate(batch): ...; return torch.tensor(src, device=device); DataLoader(ds, collate_fn=collate)
fn collate_on_device(m: &Model<'_>, c: &Call) -> bool {
    let Some(collate) = m.kw(c, "collate_fn").or_else(|| m.pos(c, 6)) else {
        return false;
    };
    let Some(fi) = m.plain_fn(m.text(collate.value)) else {
        return false;
    };
    // (also a name bound to a CUDA choice: `dev = "cuda" if torch.cuda.is_available() else
    // "cpu"` ... `images.to(dev)`)
    let names_gpu = |a: &super::facts::Arg| {
        let v = m.text(a.value);
        names_device(m, v)
            || v.starts_with("\"cuda")
            || v.starts_with("'cuda")
            || (a.vkind == ValKind::Ident
                && m.assigns.iter().any(|b| {
                    b.targets.len() == 1
                        && m.text(b.left) == v
                        && crate::analysis::resolve::quotes_cuda(m.text(b.value))
                }))
    };
    m.calls
        .iter()
        .filter(|x| x.ctx.func == Some(fi as u32))
        .any(|x| match m.last_name(x) {
            "cuda" => true,
            "to" => m
                .pos(x, 0)
                .or_else(|| m.kw(x, "device"))
                .is_some_and(|a| names_gpu(&a)),
            _ => m.kw(x, "device").is_some_and(|a| names_gpu(&a)),
        })
}

/// A DataLoader over a `TensorDataset` (of tensors in memory) with the default collate: an
/// item is one index into each tensor, a batch one stack: nothing for worker processes to
/// overlap.
// Ex) DataLoader(TensorDataset(x_train, y_train), batch_size=20, shuffle=True)
pub(crate) fn tensor_dataset(m: &Model<'_>, c: &Call) -> bool {
    m.kw(c, "collate_fn").or_else(|| m.pos(c, 6)).is_none()
        && dataset_ctor(m, c).is_some_and(|t| {
            let last = m.last_name(t);
            last == "TensorDataset"
                // (or a tensor itself, its rows the items: `DataLoader(torch.unsqueeze(img, 0))`)
                || (m.qual(t).starts_with("torch.")
                    && matches!(
                        last,
                        "unsqueeze" | "tensor" | "from_numpy" | "stack" | "cat" | "Tensor"
                            | "FloatTensor" | "LongTensor"
                    ))
        })
}

/// A DataLoader over a plain Python list held in memory (`DataLoader(samples, ...)` after
/// `samples = []` and `samples.append(tensor)`, or a list comprehension, also one a function of
/// the file builds and returns, `train_data = preprocess_data(...)` with `processed = []` ...
/// `return processed`) with the default collate or one that only pads (`pad_sequence`): an
/// item is one list index, a batch one stack: nothing for worker processes to overlap.
// Ex) train_dataset = []; for p in paths: train_dataset.append(load(p)); DataLoader(train_dataset, batch_size=32)
pub(crate) fn in_memory_list(m: &Model<'_>, c: &Call) -> bool {
    if m.kw(c, "collate_fn")
        .or_else(|| m.pos(c, 6))
        .is_some_and(|k| !padding_collate(m, k.value, c))
    {
        return false;
    }
    let Some(ds) = m.pos(c, 0).or_else(|| m.kw(c, "dataset")) else {
        return false;
    };
    let literal = |s: super::facts::Span| {
        m.node(s)
            .is_some_and(|n| matches!(n.node_kind(), "list" | "list_comprehension"))
    };
    // (or a call of a plain function of the file that returns a name it bound only to a list)
    let is_list = |s: super::facts::Span| {
        literal(s)
            || m.call_at(s).is_some_and(|k| {
                k.method.is_none()
                    && m.plain_fn(m.text(k.func)).is_some_and(|fi| {
                        let returned = returned_value(m, fi)
                            .filter(|r| r.node_kind() == "identifier")
                            .map(|r| m.node_text(r));
                        returned.is_some_and(|name| {
                            let mut binds = m
                                .assigns
                                .iter()
                                .filter(|x| {
                                    x.ctx.func == u32::try_from(fi).ok()
                                        && x.targets.len() == 1
                                        && m.text(x.left) == name
                                })
                                .peekable();
                            binds.peek().is_some()
                                && binds.all(|x| !x.augmented && literal(x.value))
                        })
                    })
            })
    };
    match ds.vkind {
        super::facts::ValKind::Ident => {
            let name = m.text(ds.value);
            let mut bindings = m.assigns.iter().filter(|x| {
                x.targets.len() == 1
                    && !x.augmented
                    && m.text(x.left) == name
                    && (x.ctx.func == c.ctx.func || x.ctx.func.is_none())
            });
            let mut any = false;
            bindings.all(|x| {
                any = true;
                is_list(x.value)
            }) && any
        }
        _ => is_list(ds.value),
    }
}

/// A loader over text tokenised ahead of time whose collate only pads: a Hugging Face
/// `datasets` split built by `.map(tokenize)` (no `set_transform` / `with_transform`), batched by
/// a `DataCollator*`, `default_data_collator`, a function that only pads (`tokenizer.pad`,
/// `pad_sequence`), or PyTorch's default collate (no `collate_fn`: it stacks the ids). A batch is a few row lookups and a pad of integer ids (about a millisecond,
/// a few KB): nothing for worker processes to overlap, nothing for pinning to speed up.
// Ex) DataLoader(tokenized["train"], collate_fn=DataCollatorWithPadding(tokenizer), batch_size=32)
pub(crate) fn pretokenized_text_loader(m: &Model<'_>, c: &Call) -> bool {
    let Some(ds) = m.pos(c, 0).or_else(|| m.kw(c, "dataset")) else {
        return false;
    };
    // without a collate, PyTorch's default one stacks the rows `.map` already padded
    let collate = m.kw(c, "collate_fn").or_else(|| m.pos(c, 6));
    collate.is_none_or(|k| padding_collate(m, k.value, c)) && tokenized_dataset(m, ds.value, c)
}

/// Packages whose data are images, audio or video: their batches are large.
const MEDIA: &[&str] = &[
    "torchvision",
    "PIL",
    "cv2",
    "skimage",
    "imageio",
    "timm",
    "albumentations",
    "torchaudio",
    "librosa",
    "soundfile",
    "decord",
    "av",
    // diffusion models: images or their latents
    "diffusers",
];

/// Is `text` the length of a vocabulary, `len(src_vocab)`, `len(word2ix)`?
fn vocabulary_len(text: &str) -> bool {
    text.strip_prefix("len(")
        .and_then(|t| t.strip_suffix(')'))
        .is_some_and(vocabulary_name)
}

/// Does a name hold a vocabulary: `vocab`, `src_vocab`, or a word, character or token index
/// (`word2ix`, `char_to_idx`, `token2id`, `stoi`)? Not a class index, `class_to_idx`, whose
/// length counts labels.
fn vocabulary_name(v: &str) -> bool {
    let v = v.to_ascii_lowercase();
    let v = v.rsplit('.').next().unwrap_or("");
    v.contains("vocab")
        || v == "stoi"
        || v.ends_with("_stoi")
        || (["word", "char", "tok"].iter().any(|w| v.contains(w))
            && ["2i", "_to_i"].iter().any(|w| v.contains(w)))
}

/// Does the file feed a text model token ids only: it tokenizes (or reads its batches by
/// `input_ids` / `attention_mask`: another module tokenized them; or Keras made the ids,
/// `pad_sequences`, `imdb.load_data`; or sizes a model by its vocabulary, `vocab_size=`), and nothing in it handles
/// images, audio or video (no such package, no convolution, no image or audio processor)? A
/// batch of ids is a few kilobytes, whose copy pinning cannot shorten measurably.
// Ex) tokenizer = BertTokenizer.from_pretrained(...); DataLoader(TextDataset(tokenizer), ...)
pub(crate) fn token_batches(m: &Model<'_>) -> bool {
    use super::facts::VarKind;
    // (the names bound to a vocabulary's length, `INPUT_DIM = len(diag_vocab)`: looked up once,
    // not once per argument of the file)
    let vocab_dims: Vec<&str> = m
        .assigns
        .iter()
        .filter(|b| b.targets.len() == 1 && !b.augmented && vocabulary_len(m.text(b.value)))
        .map(|b| m.text(b.left))
        .collect();
    // (also one of several names bound at once: `model, tokenizer = load_model(...)`)
    let tokenizes = m.assigns.iter().any(|a| {
        m.var_kind(m.text(a.left)) == Some(VarKind::Tokenizer)
            || a.targets
                .iter()
                .any(|t| m.var_kind(m.text(*t)) == Some(VarKind::Tokenizer))
    })
        || m.imports
            .values()
            .any(|q| q.ends_with("Tokenizer") || q.ends_with("TokenizerFast"))
        // batches keyed by token ids (`batch["input_ids"]`, `input_ids=...`), or a tokenizer
        // handed over by name (`PhraseDataset(..., tokenizer=config.deberta_tokenizer)`): the
        // dataset of another module tokenizes
        // (also by its path or name: `PretrainDataset(..., tokenizer_path="./tokenizer.model")`)
        // (or a model sized by the vocabulary its ids index, `LSTMClassifier(...,
        // vocab_size=len(corpus.dictionary))`: its inputs are word ids)
        || m.args.iter().any(|a| {
            a.name.is_some_and(|n| {
                let n = m.text(n);
                matches!(n, "input_ids" | "attention_mask" | "tokenizer" | "vocab_size")
                    || n.starts_with("tokenizer_")
            })
            // (or a dataset named for its tokens, `train_dataset=tokenized_datasets["train"]`)
            || m.text(a.value).starts_with("tokenized_")
            // (or sized by a vocabulary's length, by position too: `BiLSTM_CRF(len(words_vocab),
            // tags_vocab, EMBEDDING_DIM, HIDDEN_DIM)`)
            // (or a word index, `PoetryModel(len(word2ix), 128, 256)`; also through a name
            // bound to it, `INPUT_DIM = len(diag_vocab)` ... `Encoder(INPUT_DIM, 256)`)
            || vocabulary_len(m.text(a.value))
            || (a.vkind == super::facts::ValKind::Ident
                && vocab_dims.contains(&m.text(a.value)))
        })
        // (also token keys of a reader's batches, `sample['context_tokens']`)
        || ["[\"input_ids\"]", "['input_ids']", "_tokens\"]", "_tokens']"]
            .iter()
            .any(|k| m.src.contains(k))
        // (or Keras made the ids: `sequence.pad_sequences(x_train, maxlen)`,
        // `tokenizer.texts_to_sequences(texts)`, the IMDB / Reuters word-id datasets)
        || m.calls.iter().any(|c| {
            let last = m.last_name(c);
            matches!(last, "pad_sequences" | "texts_to_sequences")
                || (last == "load_data" && {
                    let q = m.qual(c);
                    q.contains("datasets.imdb.") || q.contains("datasets.reuters.")
                })
        })
        // a text model or a text dataset by its class (`BERTBaseUncased(...)`,
        // `TranslationDataset(...)`, `RobertaForSequenceClassification.from_pretrained`)
        || m.calls.iter().any(|c| {
            let name = match (c.method, c.recv) {
                (Some(_), Some(r)) if m.last_name(c) == "from_pretrained" => m.text(r),
                _ => m.last_name(c),
            };
            word_starts(name).any(|w| TEXT_MODELS.iter().any(|t| w.starts_with(t)))
        });
    // (also an image model's batches keyed by pixels, `example["pixel_values"]`)
    // (or images by name: a batch, a function or a class the file names for them, `for images,
    // texts in train_loader:`, `get_image_embeddings`, `CLIP_DistilBert_ResNet`)
    let media_name = |name: &str| {
        name.contains("CLIP")
            || name.contains("ViT")
            || word_starts(name).any(|w| MEDIA_WORDS.iter().any(|p| w.starts_with(p)))
    };
    let media = m.facts.conv
        || m.src.contains("pixel_values")
        // (not a constant of a settings module, `from settings import DIR_IMAGES_HISTORY`:
        // where the plots go)
        || m.imports
            .keys()
            .any(|local| media_name(local) && !is_constant_name(local))
        || m.calls.iter().any(|c| media_name(m.last_name(c)))
        || m.loops
            .iter()
            .any(|l| l.targets.iter().any(|t| media_name(m.text(*t))))
        // (or a keyword naming them, `PretrainDataset(path, image_dir='./images')`)
        || m.args
            .iter()
            .any(|a| a.name.is_some_and(|n| media_name(m.text(n))))
        || m.imports.values().any(|q| {
            let top = q.split('.').next().unwrap_or(q);
            // (a text cleaner of the project, `from preprocessing import PreProcessor`, is no
            // image or audio processor)
            MEDIA.contains(&top)
                || (["ImageProcessor", "FeatureExtractor", "Processor", "Image"]
                    .iter()
                    .any(|s| q.ends_with(s))
                    && !q.to_ascii_lowercase().ends_with("preprocessor"))
        });
    tokenizes && !media
}

/// Is `name` written as a constant, in capitals (`DIR_IMAGES_HISTORY`, `MAX_LEN`)?
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|ch| ch.is_ascii_uppercase())
        && !name.chars().any(|ch| ch.is_ascii_lowercase())
}

/// A loader in a [`token_batches`] file that adds no work per item: no `set_transform` /
/// `with_transform`, and PyTorch's default collate or one that only pads. Its dataset (of
/// another module, often) hands out token ids; a batch is a few row lookups.
// Ex) DataLoader(GSMDataset(tokenizer, examples), batch_size=16)  # in a GPT-2 fine-tuning file
pub(crate) fn token_id_loader(m: &Model<'_>, c: &Call) -> bool {
    let collate = m.kw(c, "collate_fn").or_else(|| m.pos(c, 6));
    token_batches(m)
        && !m.src.contains("set_transform(")
        && !m.src.contains("with_transform(")
        && collate.is_none_or(|k| padding_collate(m, k.value, c))
        && !tokenizes_per_item(m, c)
}

/// Is loader `c`'s dataset a class of the file whose `__getitem__` runs a tokenizer on each
/// item (`encoding = self.tokenizer.encode_plus(text, ...)`)? Tokenizing is per-item work that
/// worker processes would take off the training loop.
// Ex) class BertDataset(Dataset): def __getitem__(self, idx): return self.tokenizer(self.texts[idx], ...)
fn tokenizes_per_item(m: &Model<'_>, c: &Call) -> bool {
    dataset_ctor(m, c).is_some_and(|ctor| class_tokenizes_per_item(m, ctor))
}

/// Does a Hugging Face `Trainer` of the file train on a dataset whose class tokenizes each item
/// in `__getitem__` ([`tokenizes_per_item`]): `Seq2SeqTrainer(..., train_dataset=TranslationDataset(...))`?
pub(crate) fn trainer_tokenizes_per_item(m: &Model<'_>) -> bool {
    m.calls.iter().any(|t| {
        m.last_name(t).ends_with("Trainer")
            && m.kw(t, "train_dataset")
                .and_then(|a| built_by(m, a, t, 0))
                .is_some_and(|ctor| class_tokenizes_per_item(m, ctor))
    })
}

/// Is dataset constructor `ctor` a class of the file whose `__getitem__` runs a tokenizer?
fn class_tokenizes_per_item(m: &Model<'_>, ctor: &Call) -> bool {
    let Some(getitem) = method_of(m, m.last_name(ctor), "__getitem__") else {
        return false;
    };
    m.calls.iter().any(|k| {
        k.ctx.func == Some(getitem)
            && (matches!(
                m.last_name(k),
                "encode_plus" | "batch_encode_plus" | "encode" | "tokenize"
            ) || m.text(k.func).to_ascii_lowercase().ends_with("tokenizer"))
    })
}

/// Word starts that name images, audio or video in a [`token_batches`] check.
const MEDIA_WORDS: &[&str] = &[
    "image",
    "img",
    "vision",
    "resnet",
    "pixel",
    "video",
    "audio",
    "spectrogram",
];

/// Words that start the class name of a text model or a text dataset.
const TEXT_MODELS: &[&str] = &[
    "bert",
    "roberta",
    "gpt",
    "bart",
    "electra",
    "xlnet",
    "deberta",
    "llama",
    "mistral",
    "textdataset",
    "translationdataset",
    "sentimentdataset",
    // reading-comprehension sets (`SQuAD(record_file)`, `KorquadDataset()`)
    "squad",
    "korquad",
];

/// How many assignments and calls are followed back from a loader's dataset or collate.
const CHAIN_STEPS: usize = 12;

/// Is the collate at `s` a Hugging Face data collator or a function that only pads?
fn padding_collate(m: &Model<'_>, s: super::facts::Span, at: &Call) -> bool {
    let text = m.text(s);
    if let Some(ctor) = m.call_at(s) {
        return is_padding_collator(m, ctor);
    }
    if !text
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    {
        return false;
    }
    if m.imports.get(text).is_some_and(|q| {
        (q.starts_with("transformers.") || q.starts_with("trl."))
            && q.ends_with("default_data_collator")
    }) {
        return true;
    }
    if let Some(a) = super::as_shipped::binding(m, text, at.span.start, at.ctx.func) {
        // `data_collator = default_data_collator`: another name for one
        if a.rhs_call.is_none() && a.vkind == ValKind::Ident && m.text(a.value) != text {
            return padding_collate(m, a.value, at);
        }
        return a
            .rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|ctor| is_padding_collator(m, ctor));
    }
    // a local function whose every call pads, stacks or counts
    let Some(fi) = m.funcs.iter().position(|f| m.text(f.name) == text) else {
        return false;
    };
    let mut calls = m
        .calls
        .iter()
        .filter(|x| x.ctx.func == Some(fi as u32))
        .peekable();
    // (or joins ids the dataset padded: `input_ids.append(d["input_ids"])` ...
    // `torch.cat(input_ids)`)
    calls.peek().is_some()
        && m.calls
            .iter()
            .filter(|x| x.ctx.func == Some(fi as u32))
            .any(|x| matches!(m.last_name(x), "pad" | "pad_sequence" | "stack" | "cat"))
        && calls.all(|x| {
            matches!(
                m.last_name(x),
                "pad"
                    | "pad_sequence"
                    | "stack"
                    | "cat"
                    | "append"
                    | "tensor"
                    | "as_tensor"
                    | "LongTensor"
                    | "len"
                    | "max"
                    | "min"
                    | "list"
                    | "dict"
                    | "zip"
                    | "range"
            )
        })
}

/// `DataCollatorWithPadding(tokenizer)`, `DataCollatorForSeq2Seq(...)`, ...: Hugging Face
/// collators that pad (and, for language modelling, mask) integer ids. Whole-word and
/// permutation masking run Python per token and are not counted.
fn is_padding_collator(m: &Model<'_>, ctor: &Call) -> bool {
    let q = m.qual(ctor);
    let last = m.last_name(ctor);
    // (`DefaultDataCollator` only stacks what `.map` already padded)
    (q.starts_with("transformers.") || q.starts_with("trl."))
        && (last.starts_with("DataCollator") || last == "DefaultDataCollator")
        && !last.contains("WholeWord")
        && !last.contains("Permutation")
}

/// Is the dataset at `s` a Hugging Face `datasets` object that a `.map(...)` has tokenised, with
/// no per-item transform on the way?
fn tokenized_dataset(m: &Model<'_>, s: super::facts::Span, at: &Call) -> bool {
    let mut names: Vec<&str> = Vec::new();
    let mut tokenized = false;
    let mut cur = m.node(s);
    let (mut pos, mut func) = (at.span.start, at.ctx.func);
    for _ in 0..CHAIN_STEPS {
        let Some(n) = cur else { break };
        let sp = super::facts::Span::of(n);
        match n.node_kind() {
            "subscript" => cur = super::facts::field::get(n, super::facts::field::VALUE),
            "parenthesized_expression" => cur = n.named_child(0),
            "identifier" => {
                let name = m.text(sp);
                names.push(name);
                let Some(a) = super::as_shipped::binding(m, name, pos, func) else {
                    break;
                };
                (pos, func) = (a.span.start, a.ctx.func);
                cur = m.node(a.value);
            }
            "call" => {
                let Some(call) = m.call_at(sp) else {
                    break;
                };
                match m.last_name(call) {
                    "with_transform" | "set_transform" => return false,
                    "map" if call.method.is_some() => {
                        tokenized |= m
                            .pos(call, 0)
                            .or_else(|| m.kw(call, "function"))
                            .is_some_and(|f| tokenizes(m, f.value));
                    }
                    _ => {}
                }
                let Some(recv) = call.recv else { break };
                cur = m.node(recv);
            }
            _ => break,
        }
    }
    // `ds.set_transform(decode)` on any name of the chain decodes per item
    tokenized
        && !m.calls.iter().any(|x| {
            matches!(m.last_name(x), "set_transform" | "with_transform")
                && x.recv_root.is_some_and(|r| names.contains(&m.text(r)))
        })
}

/// Does the function (a local `def` by name, or a lambda) at `s` call a tokenizer?
fn tokenizes(m: &Model<'_>, s: super::facts::Span) -> bool {
    let tok = |t: &str| m.var_kind(t) == Some(super::facts::VarKind::Tokenizer);
    // `tokenizer(...)`, `self.tokenizer(...)`, `tokenizer.encode(...)`
    let is_tok = |x: &Call| tok(m.text(x.func)) || x.recv_root.is_some_and(|r| tok(m.text(r)));
    let text = m.text(s);
    if let Some(fi) = m.funcs.iter().position(|f| m.text(f.name) == text) {
        return m
            .calls
            .iter()
            .any(|x| x.ctx.func == Some(fi as u32) && is_tok(x));
    }
    m.node(s).is_some_and(|n| n.node_kind() == "lambda")
        && m.calls.iter().any(|x| s.contains(x.span) && is_tok(x))
}

/// `loaders = {x: DataLoader(...) for x in ["train", "val"]}`: the dict or list a DataLoader
/// call (index `ci`) is built into, iterated later as `loaders[x]`.
pub(crate) fn loader_container<'a>(m: &'a Model<'_>, ci: usize, c: &Call) -> Option<&'a str> {
    m.assigns
        .iter()
        .find(|a| {
            a.targets.len() == 1
                && !a.augmented
                && a.rhs_call != Some(ci as u32)
                && a.value.contains(c.span)
        })
        .map(|a| m.text(a.left))
}

/// The key of the dict entry loader call `c` is written as (`{'test': DataLoader(...)}`).
pub(crate) fn entry_key<'s>(m: &Model<'s>, c: &Call) -> Option<&'s str> {
    let n = m.node(c.span)?;
    let pair = n.parent().filter(|p| p.node_kind() == "pair")?;
    (pair.child_by_field_name("value")? == n)
        .then(|| pair.child_by_field_name("key"))
        .flatten()
        .filter(|k| k.node_kind() == "string")
        .map(|k| m.node_text(k))
}

fn unquote(t: &str) -> &str {
    t.trim_matches(['"', '\''])
}

/// May loop `l` over `dict[phase]` read the entry under `key`: unless the index is a string
/// written out, another key, or `phase` is the target of
/// an enclosing loop over phases written out that leaves it out (`for phase in ['train']:`
/// never reads `'val'`), or a parameter of the loop's function that every call passes as a
/// string written out, none of them `key` (`run_epoch('train')`, `run_epoch('val')`).
pub(crate) fn reads_key(m: &Model<'_>, l: &super::facts::Loop, key: &str) -> bool {
    let Some(index) = l
        .iter
        .and_then(|it| m.text(it).split_once('['))
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(index, _)| index.trim())
    else {
        return true;
    };
    // (`dataloaders['test']` reads the one entry)
    if index.len() > 1 && index.starts_with(['"', '\'']) && index.ends_with(['"', '\'']) {
        return unquote(index) == unquote(key);
    }
    let mut cur = l.parent;
    for _ in 0..64 {
        let Some(p) = cur.and_then(|i| m.loops.get(i as usize)) else {
            return passed_as(m, l.ctx.func, index, key);
        };
        if p.targets.iter().any(|t| m.text(*t) == index) {
            let Some(list) = p
                .iter
                .and_then(|it| m.node(it))
                .filter(|n| matches!(n.node_kind(), "list" | "tuple"))
            else {
                return true;
            };
            let mut c = list.walk();
            return list
                .named_children(&mut c)
                .any(|x| x.node_kind() != "string" || unquote(m.node_text(x)) == unquote(key));
        }
        cur = p.parent;
    }
    true
}

/// May a call of plain function `f` pass string `key` for its parameter `param`: unless every
/// call of it in the file passes a different string written out (a call passing anything else,
/// or nothing for a parameter without a string default, may). Also true when `f` has no such
/// parameter or nothing in the file calls it.
fn passed_as(m: &Model<'_>, f: Option<u32>, param: &str, key: &str) -> bool {
    let Some(func) = f
        .and_then(|f| m.funcs.get(f as usize))
        .filter(|func| func.class.is_none())
    else {
        return true;
    };
    let Some(p) = func.params.iter().position(|(n, _)| m.text(*n) == param) else {
        return true;
    };
    let may_be_key = |t: &str| {
        !(t.starts_with(['"', '\'']) && t.ends_with(['"', '\''])) || unquote(t) == unquote(key)
    };
    let mut calls = calls_of(m, f).peekable();
    calls.peek().is_none()
        || calls.any(|c| {
            c.star
                || c.splat.is_some()
                || match m.passed_arg(c, func, p) {
                    Some(a) => may_be_key(m.text(a.value)),
                    None => func
                        .params
                        .get(p)
                        .and_then(|(_, d)| *d)
                        .is_none_or(|(d, _)| may_be_key(m.text(d))),
                }
        })
}

/// The loops that iterate `container[...]`, also through a wrapper (`enumerate(loaders[phase])`,
/// `tqdm(loaders["train"])`).
pub(crate) fn container_loops<'a>(
    m: &'a Model<'_>,
    container: &str,
) -> impl Iterator<Item = &'a super::facts::Loop> {
    let prefix = format!("{container}[");
    m.loops.iter().filter(move |l| {
        l.iter.is_some_and(|it| {
            let t = m.text(it);
            let inner = crate::analysis::prefilter::ITER_WRAPPERS
                .iter()
                .find_map(|w| t.strip_prefix(w).and_then(|r| r.strip_prefix('(')))
                .unwrap_or(t);
            inner.trim_start().starts_with(&prefix)
        })
    })
}

/// The most iterations a loop may run and still count as "a few": below this a per-iteration
/// cost (a print, an element write) is noise next to the work around the loop.
pub(crate) const FEW_ITERATIONS: i64 = 16;

/// `len(name)` where `name` is bound, as shipped at `at`, to a list or tuple written out: its
/// number of items.
fn literal_len(m: &Model<'_>, s: super::facts::Span, at: &Call) -> Option<i64> {
    if !m.text(s).starts_with("len(") {
        return None;
    }
    let len = m
        .call_at(s)
        .filter(|c| c.method.is_none() && m.text(c.func) == "len")?;
    let [arg] = m.call_args(len) else { return None };
    let a = super::as_shipped::binding(m, m.text(arg.value), at.span.start, at.ctx.func)?;
    literal_items(
        m.node(a.value)
            .filter(|v| matches!(v.node_kind(), "list" | "tuple"))?,
    )
}

/// How many items list or tuple `items` writes out; `None` when one is unpacked or generated
/// (`*rest`, a comprehension), so the count is not the text's.
fn literal_items(items: tree_sitter::Node<'_>) -> Option<i64> {
    let mut cursor = items.walk();
    let mut n = 0i64;
    for c in items.named_children(&mut cursor) {
        match c.node_kind() {
            "comment" => {}
            "list_splat" | "list_comprehension" | "parenthesized_list_splat" => return None,
            _ => n += 1,
        }
    }
    Some(n)
}

/// Does loop `l` iterate `range(...)` with a known upper bound of at most [`FEW_ITERATIONS`],
/// or a list or tuple of at most that many items written out in the file, or end its body with
/// an unconditional `break`?
pub(crate) fn few_iterations(m: &Model<'_>, l: &Loop) -> bool {
    known_iterations(m, l).is_some_and(|n| n <= FEW_ITERATIONS)
}

/// How many times loop `l` runs at most, when the file says: `range(...)` with a known upper
/// bound, a list or tuple written out in the file (or a slice of known bounds of one), a
/// counter the body breaks off on (`if step == 50: break`), or 1 for a body that ends in an
/// unconditional `break` and for a loader whose one batch is its whole dataset, or the `k` of
/// `random.sample(paths, k=3)`.
pub(crate) fn known_iterations(m: &Model<'_>, l: &Loop) -> Option<i64> {
    // `for x, y in test_loader: ...; break`: the body always leaves after one pass
    if ends_in_break(m, l) {
        return Some(1);
    }
    // `if step == 50: break` on the loop's own counter: at most 51, whatever it iterates
    let cap = crate::analysis::resolve::break_cap(m, l);
    let count = iterated_count(m, l);
    match (count, cap) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Is call `c` a `DataLoader` whose one batch is its whole dataset ([`whole_dataset_batch`])?
fn one_batch_loader(m: &Model<'_>, c: &Call) -> bool {
    m.last_name(c).ends_with("DataLoader") && whole_dataset_batch(m, c)
}

/// Is `it`, the iterable of loop `l`, a parameter of the plain function holding the loop that
/// every call of the function (one at least) hands a name bound to a loader whose one batch is
/// its whole dataset ([`whole_dataset_batch`])?
// Ex) def eval(generator, dataloader, ...): for i, (audio, mags) in enumerate(dataloader): ...
//     test_dataloader = DataLoader(test_dataset, batch_size=len(test_dataset)); eval(g, test_dataloader)
fn whole_batch_param(m: &Model<'_>, l: &Loop, it: super::facts::Span) -> bool {
    let Some(f) = l.ctx.func.and_then(|i| m.funcs.get(i as usize)) else {
        return false;
    };
    let name = m.text(it);
    let Some(j) = f.params.iter().position(|(p, _)| m.text(*p) == name) else {
        return false;
    };
    // (not rebound in the function before the loop)
    if f.class.is_some() || super::as_shipped::binding(m, name, it.start, l.ctx.func).is_some() {
        return false;
    }
    let callee = m.text(f.name);
    let mut calls = m
        .calls
        .iter()
        .filter(|c| c.method.is_none() && m.text(c.func) == callee)
        .peekable();
    calls.peek().is_some()
        && calls.all(|c| {
            m.passed_arg(c, f, j).is_some_and(|a| {
                super::as_shipped::binding(m, m.text(a.value), c.span.start, c.ctx.func)
                    .and_then(|b| b.rhs_call)
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|k| one_batch_loader(m, k))
            })
        })
}

/// How many items loop `l`'s iterable holds, when the file says (see [`known_iterations`]).
fn iterated_count(m: &Model<'_>, l: &Loop) -> Option<i64> {
    let mut it = l.iter?;
    // `enumerate(ws_test)`, `tqdm(range(num_loops))`, `reversed(range(3))`: the items are the
    // argument's
    for _ in 0..4 {
        let Some(inner) = m
            .call_at(it)
            .filter(|c| matches!(m.last_name(c), "enumerate" | "tqdm" | "reversed"))
            .and_then(|c| m.pos(c, 0))
        else {
            break;
        };
        it = inner.value;
    }
    // a parameter every call of the loop's function hands such a loader (`eval(model_g,
    // model_d, test_dataloader, ...)` with `batch_size=len(test_dataset)`)
    if whole_batch_param(m, l, it) {
        return Some(1);
    }
    // what the loop iterates, directly or through the name bound to it
    let items = m.node(it).and_then(|n| match n.node_kind() {
        "identifier" => super::as_shipped::binding(m, m.text(it), it.start, l.ctx.func)
            .and_then(|a| m.node(a.value)),
        _ => Some(n),
    });
    let items_call = items.and_then(|v| m.call_at(super::facts::Span::of(v)));
    // a loader whose one batch is its whole dataset (`batch_size=len(cifar10_test)`)
    if items_call.is_some_and(|c| one_batch_loader(m, c)) {
        return Some(1);
    }
    // a random sample of known size (`random.sample(population=paths, k=num_images_to_plot)`)
    if let Some(pick) =
        items_call.filter(|c| m.last_name(c) == "sample" && m.qual(c) == "random.sample")
        && let Some(k) = m.kw(pick, "k").or_else(|| m.pos(pick, 1))
        && let Val::Int(n) = m.resolve(&k, pick.span.start, pick.ctx.func)
        && n >= 0
    {
        return Some(n);
    }
    // a list or tuple written out, of a few items
    // Ex) configurations = [{"name": "base", ...}, ...]  (13 items) ... for config in configurations:
    if let Some(items) = items.filter(|v| matches!(v.node_kind(), "list" | "tuple")) {
        return literal_items(items).filter(|n| *n > 0);
    }
    // a slice of a few items
    // Ex) sample_files = list(cond_dir.glob("*.png"))[:4] ... for sample_file in sample_files:
    let sliced = items.filter(|v| v.node_kind() == "subscript");
    if let Some(index) = sliced.and_then(|n| n.child_by_field_name("subscript"))
        && index.node_kind() == "slice"
        && let Some((start, stop)) = m.node_text(index).split_once(':')
        && !stop.contains(':')
    {
        let start = if start.trim().is_empty() {
            Some(0)
        } else {
            start.trim().parse::<i64>().ok()
        };
        if let (Some(a), Ok(b)) = (start, stop.trim().parse::<i64>())
            && a >= 0
            && b > a
        {
            return Some(b - a);
        }
    }
    let call = m.call_at(it)?;
    // (`trange(n)` is tqdm's `range(n)`)
    if !(m.text(call.func) == "range" || m.last_name(call) == "trange")
        || call.splat.is_some()
        || call.star
    {
        return None;
    }
    // (also `len(thresholds)` of a list the file writes out: `eval_seg_iou_list = [.5, .6, .7]`)
    let resolve = |s: super::facts::Span| match m.resolve_expr(s, call.span.start, call.ctx.func) {
        Val::Int(n) => Some(n),
        _ => literal_len(m, s, call),
    };
    // also a sum or difference of such (`range(args.num_iterations + 1)`)
    let int = |i: usize| {
        m.pos(call, i).map(|a| {
            resolve(a.value).or_else(|| {
                let n = m
                    .node(a.value)
                    .filter(|n| n.node_kind() == "binary_operator")?;
                let (l, op, r) = (
                    n.child_by_field_name("left")?,
                    n.child_by_field_name("operator")?,
                    n.child_by_field_name("right")?,
                );
                let span = super::facts::Span::of;
                let (l, r) = (resolve(span(l))?, resolve(span(r))?);
                match m.node_text(op) {
                    "+" => l.checked_add(r),
                    "-" => l.checked_sub(r),
                    _ => None,
                }
            })
        })
    };
    // how many values `range(...)` yields, when the file says (a start it does not say is
    // taken as 0, so the count is at most the stop)
    // Ex) for i in range(T, 0, -1)  with T = 1000: a thousand, not none
    match (int(0), int(1), int(2)) {
        (Some(Some(hi)), None, None) => Some(hi),
        (Some(lo), Some(Some(hi)), None) => Some(hi - lo.unwrap_or(0)),
        (Some(lo), Some(Some(hi)), Some(Some(step))) if step > 0 => {
            Some((hi - lo.unwrap_or(0) + step - 1) / step)
        }
        (Some(Some(lo)), Some(Some(hi)), Some(Some(step))) if step < 0 => {
            Some((lo - hi - step - 1) / -step)
        }
        _ => None,
    }
}

/// Does loop `l`'s body always `break` (a statement of its own body, not a nested block's)?
/// Unlike [`ends_in_break`], a `return` does not count: the function may run again.
pub(crate) fn always_breaks(m: &Model<'_>, l: &Loop) -> bool {
    m.node(l.span)
        .and_then(|n| n.child_by_field_name("body"))
        .is_some_and(|body| {
            let mut c = body.walk();
            body.named_children(&mut c)
                .any(|st| st.node_kind() == "break_statement")
        })
}

/// Does the loop's body leave unconditionally, by `break`, `return`, `raise` or `exit()` (so
/// it runs once)?
fn ends_in_break(m: &Model<'_>, l: &Loop) -> bool {
    m.node(l.span)
        .and_then(|n| n.child_by_field_name("body"))
        .is_some_and(|body| super::facts::leaves(m.src, body))
}

/// What a loader's `Dataset` costs per item, when the file defines it: `Some` when it is a class
/// of this file whose `__getitem__` only indexes what `__init__` prepared and wraps it in tensors
/// (`torch.tensor(self.ids[i])`, slices, `.long()`, `.to(device)`): no decoding, no transform,
/// no tokenizer, no file. Worker processes have nothing to overlap there. `None` for a dataset
/// from a library or another module, or one whose items cost work (a call outside
/// [`CHEAP_ITEM_CALLS`]): those keep their findings.
// Ex) class Ids(Dataset): def __getitem__(self, i): return torch.tensor(self.enc[i])
pub(crate) fn cheap_local_dataset(m: &Model<'_>, c: &Call) -> Option<CheapItems> {
    let ctor = dataset_ctor(m, c)?;
    if ctor.method.is_some() {
        return None;
    }
    let getitem = method_of(m, m.text(ctor.func), "__getitem__")? as usize;
    let mut device_or_ids = false;
    for call in m
        .calls
        .iter()
        .filter(|x| x.ctx.func == Some(getitem as u32))
    {
        let last = m.last_name(call);
        if !CHEAP_ITEM_CALLS.contains(&last) {
            return None;
        }
        let args = m.text(call.args_span).to_ascii_lowercase();
        device_or_ids |= matches!(last, "cuda" | "long" | "LongTensor")
            || (last == "to" && (args.contains("cuda") || args.contains("device")))
            || args.contains("torch.long")
            || args.contains("int64");
    }
    Some(CheapItems { device_or_ids })
}

/// A dataset whose items are cheap ([`cheap_local_dataset`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheapItems {
    /// Its items are integer ids or already on the device: pinning saves nothing either.
    pub device_or_ids: bool,
}

/// Calls that make no per-item work: building or reshaping a tensor from what is in memory,
/// moving it, and plain Python conversions.
const CHEAP_ITEM_CALLS: &[&str] = &[
    "tensor",
    "as_tensor",
    "from_numpy",
    "LongTensor",
    "FloatTensor",
    "IntTensor",
    "BoolTensor",
    "len",
    "int",
    "float",
    "bool",
    "min",
    "max",
    "range",
    "tuple",
    "list",
    "long",
    "cuda",
    "to",
    "clone",
    // (`self.audio[idx].copy()`: an item copied out of an array in memory)
    "copy",
    "unsqueeze",
    "squeeze",
    "view",
    "reshape",
    "permute",
    "transpose",
    "contiguous",
    "size",
    "numel",
    "dim",
    "half",
    "detach",
    "randint",
    "asarray",
    "array",
    "astype",
    "get",
    // `if torch.is_tensor(idx): idx = idx.tolist()`, the tutorial's boilerplate
    "is_tensor",
    "tolist",
];
/// A loader read for one batch and dropped: `next(iter(DataLoader(...)))`, or a name bound to
/// a loader whose every use is `next(iter(name))`, an iterator read once (`it = iter(name)`
/// then one `next(it)`) or a loop whose body always breaks off (never looped over otherwise,
/// returned, or handed to a trainer) — or that nothing reads at all, or only functions the
/// script never calls. Worker processes would start, fill their prefetch queues and be torn
/// down for a single batch: they cost more than they save, and pinning one batch saves
/// nothing; a loader nobody iterates costs nothing.
// Ex) images, _ = next(iter(DataLoader(val_set, batch_size=8)))
// Ex) val_loader = DataLoader(val_set, batch_size=1)  # and `val_loader` appears nowhere else
pub(crate) fn loader_read_once(m: &Model<'_>, c: &Call) -> bool {
    let Some(node) = m.node(c.span) else {
        return false;
    };
    // (or only counted: `len(DataLoader(client_data, batch_size=b))`)
    if in_next_iter(m, node) || only_arg_of(m, node, "len").is_some() {
        return true;
    }
    let Some(ci) = m.calls.iter().position(|x| x.span == c.span) else {
        return false;
    };
    // (also the value of a dict of loaders, `dataloaders = {x: DataLoader(dset[x], ...) for x
    // in splits}`: the dict's reads are the loaders' reads)
    let in_dict = node
        .parent()
        .filter(|p| p.node_kind() == "pair")
        .and_then(|p| p.parent())
        .filter(|d| d.node_kind() == "dictionary_comprehension");
    let Some(a) = m.assigns.iter().find(|a| {
        a.targets.len() == 1
            && !a.augmented
            && (a.rhs_call == Some(ci as u32)
                || in_dict.is_some_and(|d| super::facts::Span::of(d) == a.value))
    }) else {
        return false;
    };
    let name = m.text(a.left);
    if !name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
        return attribute_never_read(m, a);
    }
    // the function the binding lives in, else the whole module (functions may read a global)
    let scope = match a.ctx.func {
        Some(fi) => m
            .funcs
            .get(fi as usize)
            .and_then(|f| m.node(f.name))
            .and_then(|n| n.parent()),
        None => Some(m.tree.root_node()),
    };
    let Some(scope) = scope else {
        return false;
    };
    // a later binding of the name in the same block, outside any loop (`train_loader =
    // DataLoader(test_data, ...)` two lines on): what the code reads after it is that loader
    let statement_block = |s: super::facts::Span| {
        m.node(s)
            .and_then(|n| n.parent())
            .filter(|p| p.node_kind() == "expression_statement")
            .and_then(|p| p.parent())
    };
    let rebound = (a.ctx.loop_.is_none())
        .then(|| statement_block(a.span))
        .flatten()
        .and_then(|block| {
            m.assigns
                .iter()
                .find(|b| {
                    b.span.start > a.span.end
                        && b.targets.len() == 1
                        && !b.augmented
                        && m.text(b.left) == name
                        && b.ctx.loop_.is_none()
                        && statement_block(b.span) == Some(block)
                })
                .map(|b| b.span.end)
        });
    // (a binding is no read: this one, or the other branch's `if/else` twin; nor is a read in
    // a function the script never calls)
    let Some(uses) = single_batch_reads(
        m,
        scope,
        name,
        |n| {
            n.start_byte() == a.left.start
                || is_assignment_target(n)
                || rebound.is_some_and(|end| n.start_byte() >= end && same_code(scope, n))
                // (an earlier value of the name, read by the same code before this binding:
                // `training_data = DataLoader(training_data, batch_size)`)
                || (a.ctx.loop_.is_none()
                    && n.end_byte() <= a.span.end
                    && same_code(scope, n))
                || m.uncalled_line(n.start_position().row + 1)
                // (handed to a call behind a switch that is off as shipped, `if train_flag:
                // train(net, data_loader, ...)`)
                || m.calls.iter().any(|c| {
                    c.args_span.start <= n.start_byte()
                        && n.end_byte() <= c.args_span.end
                        && m.dead(&c.ctx)
                })
        },
        // (`len(loader)` counts batches without starting a worker; a loop over it whose body
        // always breaks off, `for batch in tqdm(val_loader): ...; break`, reads one batch)
        |n| {
            passed_to_once_reader(m, n)
                || returned_unused(m, n)
                || iterator_read_once(m, n)
                || only_arg_of(m, n, "len").is_some()
                || m.loops.iter().any(|l| {
                    l.iter
                        .is_some_and(|it| it.start <= n.start_byte() && n.end_byte() <= it.end)
                        && always_breaks(m, l)
                })
        },
    ) else {
        return false;
    };
    // no use at all: only for a function's local (a module-level loader may be imported), one
    // bound under `if __name__ == "__main__":` (nothing can import it), or in a script that
    // runs its steps at module level (importing it would run them)
    uses > 0
        || a.ctx.func.is_some()
        || m.node(a.left).is_some_and(|n| under_main_guard(m, n))
        // (a script whose only readers of it are functions it never calls: `if run == True:
        // trainer.train(...)` with `run = False`)
        || m.has_uncalled()
        // (or an epoch loop there that calls the file's training function, `for epoch in
        // range(n): loss = train(data)`)
        || m.loops.iter().any(|l| {
            (l.info.step || l.info.epoch) && l.ctx.func.is_none() && !m.dead(&l.ctx)
        })
        // (a script whose `__main__` block runs its training, `if __name__ == "__main__":
        // train(1)`: it is run, not imported for its loaders)
        || (has_main_block(m)
            && m.loops.iter().any(|l| {
                l.info.step && !m.dead(&l.ctx) && !m.uncalled_line(l.line)
            }))
        // (also one that trains at module level through a function it hands the optimizer,
        // `for epoch in range(n): train_one_epoch(model, optimizer, loader, ...)`)
        || m.calls.iter().any(|c| {
            c.ctx.func.is_none()
                && c.ctx.loop_.is_some()
                && !m.dead(&c.ctx)
                && crate::analysis::resolve::hands_optimizer(m, c)
        })
        // (or one whose module-level code calls a function of its own, `train(resume=False)`:
        // a script, whose loader nothing imports)
        || m.calls.iter().any(|c| {
            c.ctx.func.is_none()
                && c.ctx.class.is_none()
                && c.method.is_none()
                && !m.dead(&c.ctx)
                && m.plain_fn(m.text(c.func)).is_some()
        })
        // (or one that builds a network of its own at module level, `model_gen =
        // Generator(params).to(device)`, its training loop commented out: a script, whose
        // loader nothing imports)
        || m.calls.iter().any(|c| {
            c.ctx.func.is_none()
                && c.ctx.class.is_none()
                && c.method.is_none()
                && !m.dead(&c.ctx)
                && local_module_class(m, m.text(c.func))
        })
        // (or one that downloads a library's network at module level, `model =
        // models.vgg16(pretrained=True)`, its training not yet written: a module imported for
        // its loaders would not fetch weights)
        || m.calls.iter().any(|c| {
            c.ctx.func.is_none()
                && c.ctx.class.is_none()
                && !m.dead(&c.ctx)
                && crate::analysis::resolve::model_factory(&m.qual(c))
        })
        // (or one whose module-level code prints, `print(f"Vocab size {len(vocab)}")`: a
        // script run to show its steps; a module imported for its loaders prints nothing)
        || m.calls.iter().any(|c| {
            c.ctx.func.is_none()
                && c.ctx.class.is_none()
                && c.method.is_none()
                && !m.dead(&c.ctx)
                && m.text(c.func) == "print"
        })
}

/// Does node `n` run as code of `scope` itself (not in a function or class defined inside
/// it, which may run later)?
fn same_code(scope: tree_sitter::Node<'_>, n: tree_sitter::Node<'_>) -> bool {
    let mut cur = n.parent();
    for _ in 0..256 {
        match cur {
            Some(p) if p == scope => return true,
            Some(p)
                if matches!(
                    p.node_kind(),
                    "function_definition" | "class_definition" | "lambda"
                ) =>
            {
                return false;
            }
            Some(p) => cur = p.parent(),
            None => return false,
        }
    }
    false
}

/// Is node `n` an `if __name__ == "__main__":` statement?
fn is_main_guard(m: &Model<'_>, n: tree_sitter::Node<'_>) -> bool {
    n.node_kind() == "if_statement"
        && n.child_by_field_name("condition").is_some_and(|c| {
            let t = m.node_text(c);
            t.contains("__name__") && t.contains("__main__")
        })
}

/// The module has an `if __name__ == "__main__":` block at its top level.
fn has_main_block(m: &Model<'_>) -> bool {
    let root = m.tree.root_node();
    let mut c = root.walk();
    root.named_children(&mut c).any(|n| is_main_guard(m, n))
}

/// `node` sits in the body of an `if __name__ == "__main__":` block.
fn under_main_guard(m: &Model<'_>, node: tree_sitter::Node<'_>) -> bool {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if is_main_guard(m, n) {
            return true;
        }
        cur = n.parent();
    }
    false
}

/// `node` is the left side of a plain assignment (`loader = ...`).
fn is_assignment_target(node: tree_sitter::Node<'_>) -> bool {
    node.parent().is_some_and(|p| {
        p.node_kind() == "assignment"
            && p.child_by_field_name("left")
                .is_some_and(|l| l.start_byte() == node.start_byte())
    })
}

/// `node` is returned by its function (alone or as one item of a returned tuple), and every
/// call of that function in the file unpacks it into a name the file never reads: a test loader
/// a setup function builds and its caller drops.
// Ex) def load_dataset(): ...; return class_to_idx, train_loader, valid_loader, test_loader
// Ex) class_to_idx, train_loader, valid_loader, test_loader = load_dataset(...)  # test_loader unread
fn returned_unused(m: &Model<'_>, node: tree_sitter::Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    // (its position in the returned tuple, `None` when returned alone)
    let (ret, pos) = match parent.node_kind() {
        "return_statement" => (parent, None),
        "expression_list" | "tuple" => {
            let Some(r) = parent
                .parent()
                .filter(|r| r.node_kind() == "return_statement")
            else {
                return false;
            };
            let Some(i) = super::facts::elements(parent)
                .into_iter()
                .position(|x| x == node)
            else {
                return false;
            };
            (r, Some(i))
        }
        _ => return false,
    };
    // the function that returns it
    let mut cur = ret.parent();
    let mut def = None;
    for _ in 0..64 {
        match cur {
            Some(p) if p.node_kind() == "function_definition" => {
                def = Some(p);
                break;
            }
            Some(p) => cur = p.parent(),
            None => break,
        }
    }
    let Some(def) = def else { return false };
    let Some(fname) = def.child_by_field_name("name").map(|n| m.node_text(n)) else {
        return false;
    };
    let calls: Vec<&Call> = m
        .calls
        .iter()
        .filter(|c| c.method.is_none() && m.text(c.func) == fname)
        .collect();
    if calls.is_empty() {
        return false;
    }
    calls.iter().all(|c| {
        let Some(target) = assign_of_call(m, c).and_then(|a| match (pos, a.targets.as_slice()) {
            (None, [t]) => Some(*t),
            (Some(i), ts) if ts.len() > 1 => ts.get(i).copied(),
            _ => None,
        }) else {
            return false;
        };
        let name = m.text(target);
        if !name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
            return false;
        }
        // read nowhere: no other occurrence of the name outside the returning function
        let (ds, de) = (def.start_byte(), def.end_byte());
        super::facts::word_positions(m.src, name).all(|i| (ds <= i && i < de) || i == target.start)
    })
}

/// `node` is an argument of a call to a function of this file whose matching parameter is
/// only ever read as `next(iter(param))` (a helper that draws one batch for a sample image).
// Ex) save_samples(gen, sample_loader, epoch)  with  def save_samples(gen, loader, epoch): data = next(iter(loader))
fn passed_to_once_reader(m: &Model<'_>, node: tree_sitter::Node<'_>) -> bool {
    let (arg, keyword) = match node.parent() {
        Some(p) if p.node_kind() == "keyword_argument" => (p, p.child_by_field_name("name")),
        Some(_) => (node, None),
        None => return false,
    };
    let Some(args) = arg.parent().filter(|p| p.node_kind() == "argument_list") else {
        return false;
    };
    let Some(callee) = args
        .parent()
        .filter(|c| c.node_kind() == "call")
        .and_then(|c| c.child_by_field_name("function"))
        .filter(|f| f.node_kind() == "identifier")
    else {
        return false;
    };
    let callee = m.src.get(callee.start_byte()..callee.end_byte());
    let funcs: Vec<&super::facts::Func> = m
        .funcs
        .iter()
        .filter(|f| f.class.is_none() && Some(m.text(f.name)) == callee)
        .collect();
    let [func] = funcs.as_slice() else {
        return false;
    };
    let param = match keyword {
        Some(k) => m.src.get(k.start_byte()..k.end_byte()),
        None => {
            let mut cur = args.walk();
            let before = args
                .named_children(&mut cur)
                .take_while(|a| a.start_byte() < node.start_byte())
                .collect::<Vec<_>>();
            if before
                .iter()
                .any(|a| a.node_kind() != "keyword_argument" && a.node_kind().contains("splat"))
            {
                return false;
            }
            let p = before.len();
            (p < func.positional)
                .then(|| func.params.get(p).map(|(n, _)| m.text(*n)))
                .flatten()
        }
    };
    let Some(param) = param else {
        return false;
    };
    let Some(body) = m
        .node(func.name)
        .and_then(|n| n.parent())
        .and_then(|d| d.child_by_field_name("body"))
    else {
        return false;
    };
    single_batch_reads(m, body, param, |_| false, |_| false).is_some_and(|uses| uses > 0)
}

/// Is binding `a` of a script's object attribute (`self.testloader = DataLoader(...)` in a
/// method) the only place the file names that attribute (`.testloader`)? A script, run rather
/// than imported (a `__main__` block, or its command line parsed at module level), has no other
/// reader.
fn attribute_never_read(m: &Model<'_>, a: &super::facts::Assign) -> bool {
    let name = m.text(a.left);
    let Some(attr) = name
        .strip_prefix("self.")
        .filter(|x| x.chars().all(|ch| ch.is_alphanumeric() || ch == '_'))
    else {
        return false;
    };
    let script = has_main_block(m)
        || m.calls
            .iter()
            .any(|c| c.ctx.func.is_none() && m.last_name(c) == "parse_args");
    if a.ctx.func.is_none() || !script {
        return false;
    }
    let needle = format!(".{attr}");
    let mut found = 0;
    for (i, _) in m.src.match_indices(&needle) {
        let end = i + needle.len();
        let whole = !m
            .src
            .get(end..)
            .and_then(|r| r.chars().next())
            .is_some_and(|ch| ch.is_alphanumeric() || ch == '_');
        if whole {
            found += 1;
        }
        if found > 1 {
            return false;
        }
    }
    // (and not looked up by its name as a string, `getattr(self, "testloader")`)
    found == 1 && !m.src.contains(&format!("\"{attr}\"")) && !m.src.contains(&format!("'{attr}'"))
}

/// How many times `name` is read under `scope` when every read draws a single batch
/// (`next(iter(name))`, or a read `also` accepts); `None` as soon as one read is anything else.
/// Identifiers `skip` accepts (bindings) are not reads.
fn single_batch_reads(
    m: &Model<'_>,
    scope: tree_sitter::Node<'_>,
    name: &str,
    skip: impl Fn(tree_sitter::Node<'_>) -> bool,
    also: impl Fn(tree_sitter::Node<'_>) -> bool,
) -> Option<usize> {
    let mut uses = 0usize;
    // (each node with its parent: asking a node for its parent walks down from the root)
    let mut stack = vec![(scope, scope.parent())];
    let mut cur = scope.walk();
    while let Some((n, parent)) = stack.pop() {
        // (not a keyword's name, `test(data_loader=data_test_loader)`, nor an attribute,
        // `self.data_loader`: other variables)
        let other_name = || {
            parent.is_some_and(|p| {
                (p.node_kind() == "keyword_argument" && p.child_by_field_name("name") == Some(n))
                    || (p.node_kind() == "attribute"
                        && p.child_by_field_name("attribute") == Some(n))
            })
        };
        if n.node_kind() == "identifier"
            && m.src.get(n.start_byte()..n.end_byte()) == Some(name)
            && !other_name()
            && !skip(n)
        {
            if !in_next_iter(m, n) && !also(n) {
                return None;
            }
            uses += 1;
        }
        stack.extend(n.named_children(&mut cur).map(|c| (c, Some(n))));
    }
    Some(uses)
}

/// Is `node` the only argument of `iter(...)` (or `enumerate(...)`) bound to a name whose one
/// use is a `next(...)` outside any loop the binding is not in (`dataiter = iter(test_loader)`
/// then `images, _ = next(dataiter)`; `examples = enumerate(test_loader)` then `_, (x, y) =
/// next(examples)`: one batch)?
fn iterator_read_once(m: &Model<'_>, node: tree_sitter::Node<'_>) -> bool {
    let Some(left) = only_arg_of(m, node, "iter")
        .or_else(|| only_arg_of(m, node, "enumerate"))
        .and_then(|call| call.parent())
        .filter(|p| p.node_kind() == "assignment")
        .and_then(|a| a.child_by_field_name("left"))
        .filter(|l| l.node_kind() == "identifier")
    else {
        return false;
    };
    let name = m.node_text(left);
    let enclosing_loop = |n: tree_sitter::Node<'_>| {
        let mut up = n.parent();
        while let Some(p) = up {
            if matches!(p.node_kind(), "for_statement" | "while_statement") {
                return Some(p.id());
            }
            up = p.parent();
        }
        None
    };
    let mut nexts = 0usize;
    let mut stack = vec![m.tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.node_kind() == "identifier" && n.id() != left.id() && m.node_text(n) == name {
            // (also the old iterator method, `img, label = dataiter.next()`)
            if (only_arg_of(m, n, "next").is_none() && !next_method_of(m, n))
                || enclosing_loop(n) != enclosing_loop(left)
            {
                return false;
            }
            nexts += 1;
        }
        let mut cur = n.walk();
        stack.extend(n.named_children(&mut cur));
    }
    nexts == 1
}

/// Is `node` the only argument of `iter(...)`, itself the only argument of `next(...)`?
/// Also the dunder spelling, `node.__iter__().__next__()`.
fn in_next_iter(m: &Model<'_>, node: tree_sitter::Node<'_>) -> bool {
    // (also one loader of a dict of them, `next(iter(dataloaders["train"]))`)
    let node = match node.parent() {
        Some(p) if p.node_kind() == "subscript" && p.child_by_field_name("value") == Some(node) => {
            p
        }
        _ => node,
    };
    // (also `i, batch = next(enumerate(loader))`, and the old iterator method,
    // `iter(loader).next()`)
    if ["iter", "enumerate"].iter().any(|f| {
        only_arg_of(m, node, f)
            .is_some_and(|it| only_arg_of(m, it, "next").is_some() || next_method_of(m, it))
    }) {
        return true;
    }
    let name = m.node_text(node);
    let mut up = Some(node);
    for _ in 0..4 {
        up = up.and_then(|n| n.parent());
    }
    up.is_some_and(|call| {
        call.node_kind() == "call"
            && m.node_text(call).replace(char::is_whitespace, "")
                == format!("{name}.__iter__().__next__()")
    })
}

/// Is `node` the object of a call of its `.next()` method, the old iterator spelling
/// (`dataiter.next()`, `iter(loader).next()`)?
fn next_method_of(m: &Model<'_>, node: tree_sitter::Node<'_>) -> bool {
    // (also parenthesised, `(iter(loader)).next()`)
    let mut node = node;
    while let Some(p) = node
        .parent()
        .filter(|p| p.node_kind() == "parenthesized_expression")
    {
        node = p;
    }
    node.parent().is_some_and(|a| {
        a.node_kind() == "attribute"
            && a.child_by_field_name("object") == Some(node)
            && a.child_by_field_name("attribute")
                .is_some_and(|f| m.node_text(f) == "next")
            && a.parent().is_some_and(|c| c.node_kind() == "call")
    })
}

/// The call `f(node)` when `node` is its only argument.
fn only_arg_of<'t>(
    m: &Model<'_>,
    n: tree_sitter::Node<'t>,
    f: &str,
) -> Option<tree_sitter::Node<'t>> {
    let args = n.parent().filter(|p| p.node_kind() == "argument_list")?;
    let call = args.parent().filter(|p| p.node_kind() == "call")?;
    let func = call.child_by_field_name("function")?;
    (args.named_child_count() == 1 && m.src.get(func.start_byte()..func.end_byte()) == Some(f))
        .then_some(call)
}

/// The parameter count of the file's models, when every model is built from a module class of
/// this file, or is an `nn.Sequential(...)` of layers written inline, whose layers have literal
/// sizes (`nn.Linear(16 * 5 * 5, 120)`, `nn.Conv2d(3, 6, 5)`, `nn.Embedding(1000, 64)`): the
/// sum over the layers those classes and sequences build. `None` when a model comes from
/// elsewhere (torchvision, timm, `from_pretrained`, an imported class), or a layer's size is not
/// a literal, or a layer is of a kind this count does not know.
// Ex) class Net(nn.Module): conv1 = nn.Conv2d(3, 6, 5); fc1 = nn.Linear(400, 120) → 56,574
// Ex) model = nn.Sequential(nn.Linear(93, 64), nn.ReLU(), nn.Linear(64, 1)) → 6,081
pub(crate) fn local_model_params(m: &Model<'_>) -> Option<u64> {
    *m.model_params.get_or_init(|| count_model_params(m))
}

/// [`local_model_params`], counted.
fn count_model_params(m: &Model<'_>) -> Option<u64> {
    use super::facts::VarKind;
    let classes: Vec<usize> = (0..m.classes.len())
        .filter(|&i| {
            m.classes
                .get(i)
                .is_some_and(|k| local_module_class(m, m.text(k.name)))
        })
        .collect();
    let mut total: u64 = 0;
    // every model variable is an instance of one of these classes (`Net().to(device)` too),
    // or a sequence of layers built on the spot
    let mut any = false;
    // the constructions of each local class, each distinct set of arguments once: their
    // arguments size the layers its `__init__` builds from its parameters (`Net(hidden_dim=32)`)
    let mut ctors: Vec<(&str, Vec<&Call>)> = Vec::new();
    for a in &m.assigns {
        // (a module's own layers, `self.fc = nn.Linear(...)`, are what is counted below; the
        // networks an agent class of the file builds, `self._behavior_net = Net().to(dev)` in
        // `class DQN:`, are models like any other)
        if a.targets.len() != 1
            || a.ctx.class.is_some_and(|k| {
                m.classes
                    .get(k as usize)
                    .is_none_or(|k| local_module_class(m, m.text(k.name)))
            })
            || m.kinds.get(m.text(a.left)) != Some(&VarKind::Model)
        {
            continue;
        }
        // `actor = trainer.actor`, `net = model`: another name for a model bound elsewhere in
        // the file (the root another model, or an object of a class of this file)
        // Ex) trainer = BC(**kwargs) ... actor = trainer.actor
        if a.rhs_call.is_none() && matches!(a.vkind, ValKind::Ident | ValKind::Attr) {
            let text = m.text(a.value);
            let root = text.split('.').next().unwrap_or(text);
            let local_object = m.assigns.iter().any(|b| {
                b.targets.len() == 1
                    && m.text(b.left) == root
                    && b.rhs_call
                        .and_then(|i| m.calls.get(i as usize))
                        .is_some_and(|k| {
                            k.method.is_none()
                                && m.classes.iter().any(|cl| m.text(cl.name) == m.text(k.func))
                        })
            });
            if m.kinds.get(root) == Some(&VarKind::Model) || local_object {
                continue;
            }
            return None;
        }
        let mut call = a.rhs_call.and_then(|i| m.calls.get(i as usize))?;
        for _ in 0..8 {
            match call.recv_call.and_then(|i| m.calls.get(i as usize)) {
                Some(inner) if call.method.is_some() => call = inner,
                _ => break,
            }
        }
        // `model = model.cuda()`: the model built before, moved (what it is was counted where
        // it was built)
        if call.method.is_some()
            && call
                .recv
                .is_some_and(|r| m.kinds.get(m.text(r)) == Some(&VarKind::Model))
        {
            continue;
        }
        // `model = DDP(model, device_ids=[rank])`, `nn.DataParallel(model)`: the model counted
        // where it was built, wrapped for several devices
        if matches!(
            m.last_name(call),
            "DistributedDataParallel"
                | "DataParallel"
                | "DDP"
                | "FullyShardedDataParallel"
                | "FSDP"
        ) && m
            .pos(call, 0)
            .or_else(|| m.kw(call, "module"))
            .is_some_and(|x| m.kinds.get(m.text(x.value)) == Some(&VarKind::Model))
        {
            continue;
        }
        // `model = train_model(model, optimizer)`: a function of the file handed the model
        // hands it back (trained)
        if call.method.is_none()
            && m.plain_fn(m.text(call.func)).is_some()
            && m.call_args(call)
                .iter()
                .any(|x| m.kinds.get(m.text(x.value)) == Some(&VarKind::Model))
        {
            continue;
        }
        if m.qual(call) == "torch.nn.Sequential" {
            for c in &m.calls {
                if call.args_span.contains(c.span) {
                    total = total.checked_add(layer_params(m, c, &|_| None)?)?;
                }
            }
        } else if torch_layer(m, call) && !m.text(a.left).contains('.') {
            // a single layer as the model (`model = torch.nn.Linear(20, 1)`, PyTorch's DDP
            // tutorial; not a layer replacing one of a model's, `net._fc = nn.Linear(...)`)
            total = total.checked_add(layer_params(m, call, &|_| None)?)?;
        } else if call.method.is_some() || !local_module_class(m, m.text(call.func)) {
            return None;
        } else {
            let class = m.text(call.func);
            let args = |k: &Call| m.text(k.args_span).split_whitespace().collect::<String>();
            match ctors.iter_mut().find(|(k, _)| *k == class) {
                // built twice with the same arguments (on the CPU, then again for the GPU)
                Some((_, seen)) if seen.iter().any(|prev| args(prev) == args(call)) => {}
                // built again with other sizes (a notebook's second experiment): the largest
                // counts
                Some((_, seen)) => seen.push(call),
                None => ctors.push((class, vec![call])),
            }
        }
        any = true;
    }
    if !any {
        return None;
    }
    // the parameters of local class `class` built by `ctor` (`None`: sized by the defaults)
    let class_params = |class: usize, ctor: Option<&Call>| -> Option<u64> {
        let mut total: u64 = 0;
        for c in &m.calls {
            // the layers a module builds in its `__init__`
            let init = c.ctx.class.filter(|k| *k as usize == class).and_then(|k| {
                let f = m.funcs.get(c.ctx.func? as usize)?;
                (m.text(f.name) == "__init__").then_some((k, f))
            });
            if let Some((_, f)) = init {
                // a size named by a parameter of `__init__`: the argument of the construction,
                // else the parameter's default
                let param = |name: &str| -> Option<u64> {
                    // `self.latent_size`, bound in `__init__` from a parameter or a literal
                    let name = match name.strip_prefix("self.") {
                        Some(_) => {
                            let bound = m.assigns.iter().find(|b| {
                                b.ctx.func == c.ctx.func
                                    && b.targets.len() == 1
                                    && !b.augmented
                                    && m.text(b.left) == name
                                    && b.span.end <= c.span.start
                            })?;
                            let v = m.text(bound.value);
                            if let Some(n) = literal_int(v) {
                                return Some(n);
                            }
                            v
                        }
                        None => name,
                    };
                    // (or a constant the module binds once, `HIDDEN_SIZE = 64`)
                    let Some(j) = f.params.iter().position(|(p, _)| m.text(*p) == name) else {
                        return module_int(m, name);
                    };
                    let given = ctor.and_then(|call| {
                        m.kw(call, name).or_else(|| {
                            // `self` is not passed
                            (j >= 1 && j < f.positional)
                                .then(|| m.pos(call, j - 1))
                                .flatten()
                        })
                    });
                    match (given, ctor) {
                        // a literal, or a constant of the file (`DemandModel(WINDOW_SIZE)`)
                        (Some(a), Some(call)) => literal_int(m.text(a.value))
                            .or_else(|| match m.resolve(&a, call.span.start, call.ctx.func) {
                                Val::Int(n) => u64::try_from(n).ok(),
                                _ => None,
                            })
                            .or_else(|| graph_width_in(m, m.text(a.value)))
                            // (through the name it is bound to, `input_dim =
                            // train_dataset[0].x.shape[1]`)
                            .or_else(|| {
                                let b = super::as_shipped::binding(
                                    m,
                                    m.text(a.value),
                                    call.span.start,
                                    call.ctx.func,
                                )?;
                                graph_width_in(m, m.text(b.value)).or_else(|| {
                                    // (`input_dim = env.observation_space.shape[0]`)
                                    env_width(m.text(b.value)).then_some(ENV_WIDTH)
                                })
                            }),
                        (Some(a), None) => literal_int(m.text(a.value)),
                        (None, Some(_)) => f
                            .params
                            .get(j)
                            .and_then(|(_, d)| *d)
                            .and_then(|(d, _)| literal_int(m.text(d))),
                        (None, None) => None,
                    }
                };
                // (a call inside a layer's arguments sizes it, `nn.Linear(np.prod(shape), 64)`,
                // or is the layer a wrapper of this file initialises, `layer_init(nn.Linear(...))`:
                // the layer counts, the calls around and inside it do not)
                let nested = m
                    .calls
                    .iter()
                    .any(|k| k.ctx.func == c.ctx.func && k.args_span.contains(c.span));
                let wraps_layer = c.method.is_none()
                    && m.funcs
                        .iter()
                        .any(|g| g.class.is_none() && m.text(g.name) == m.text(c.func))
                    && m.calls
                        .iter()
                        .any(|k| c.args_span.contains(k.span) && torch_layer(m, k));
                if wraps_layer {
                    continue;
                }
                // `conv_block(3, 64)`: a function of the file that builds layers from its
                // arguments; what it builds counts, sized by this call
                if let Some(fi) = layer_helper(m, c) {
                    total = total.checked_add(helper_params(m, c, fi, &param)?)?;
                    continue;
                }
                if nested && !torch_layer(m, c) {
                    continue;
                }
                total = total.checked_add(layer_params(m, c, &param)?)?;
            }
        }
        Some(total)
    };
    for &class in &classes {
        let name = m.classes.get(class).map(|k| m.text(k.name));
        let built: Vec<Option<&Call>> = match ctors.iter().find(|(n, _)| Some(*n) == name) {
            Some((_, calls)) if !calls.is_empty() => calls.iter().map(|c| Some(*c)).collect(),
            _ => vec![None],
        };
        let mut largest: u64 = 0;
        for ctor in built {
            largest = largest.max(class_params(class, ctor)?);
        }
        total = total.checked_add(largest)?;
    }
    Some(total)
}

/// Is call `k` a `torch.nn` layer (`nn.Linear(...)`, `torch.nn.Conv2d(...)`)?
fn torch_layer(m: &Model<'_>, k: &Call) -> bool {
    m.text(k.func).starts_with("nn.") || m.qual(k).starts_with("torch.nn.")
}

/// Is `c` a call in a module's method to `self.apply(...)` or to another method of the same
/// class that builds no layer (no `nn.` constructor other than `nn.init`, no module class of
/// the file): weight initialisation, `self.weight_init()`?
// Ex) def __init__(self): ...; self.weight_init()
fn own_method_without_layers(m: &Model<'_>, c: &Call) -> bool {
    let (Some(class), Some(recv)) = (c.ctx.class, c.recv) else {
        return false;
    };
    if m.text(recv) != "self" {
        return false;
    }
    if m.last_name(c) == "apply" {
        return true;
    }
    let name = m.last_name(c);
    let Some(fi) = m
        .funcs
        .iter()
        .position(|f| f.class == Some(class) && m.text(f.name) == name)
    else {
        return false;
    };
    !m.calls.iter().any(|k| {
        k.ctx.func == Some(fi as u32)
            && ((torch_layer(m, k)
                && !m.qual(k).contains(".init.")
                && !m.text(k.func).contains("init."))
                || local_module_class(m, m.text(k.func)))
    })
}

/// The function of this file that call `c` calls, when it builds torch layers (`def
/// conv_block(c_in, c_out): return nn.Sequential(nn.Conv2d(c_in, c_out, 3), ...)`).
fn layer_helper(m: &Model<'_>, c: &Call) -> Option<usize> {
    if c.method.is_some() {
        return None;
    }
    let name = m.text(c.func);
    let fi = m
        .funcs
        .iter()
        .position(|f| m.text(f.name) == name && m.text(f.name) != "__init__")?;
    m.calls
        .iter()
        .any(|k| k.ctx.func == Some(fi as u32) && torch_layer(m, k))
        .then_some(fi)
}

/// The parameters of the layers helper `fi` builds when call `c` passes it its sizes: each
/// parameter of the helper is the call's argument (keyword, else position), else its
/// default, else, when the call passes a name of the caller, `outer` sizes it.
fn helper_params(
    m: &Model<'_>,
    c: &Call,
    fi: usize,
    outer: &dyn Fn(&str) -> Option<u64>,
) -> Option<u64> {
    let f = m.funcs.get(fi)?;
    let param = |name: &str| -> Option<u64> {
        let j = f.params.iter().position(|(p, _)| m.text(*p) == name)?;
        match m.passed_arg(c, f, j) {
            Some(a) => {
                let text = m.text(a.value);
                literal_int(text).or_else(|| outer(text))
            }
            None => f
                .params
                .get(j)
                .and_then(|(_, d)| *d)
                .and_then(|(d, _)| literal_int(m.text(d))),
        }
    };
    let mut total: u64 = 0;
    for k in m.calls.iter().filter(|k| k.ctx.func == Some(fi as u32)) {
        // (the calls inside a layer's arguments size it)
        let nested = m
            .calls
            .iter()
            .any(|o| o.ctx.func == k.ctx.func && o.args_span.contains(k.span));
        if nested && !torch_layer(m, k) {
            continue;
        }
        total = total.checked_add(layer_params(m, k, &param)?)?;
    }
    Some(total)
}

/// A graph dataset's width, where a layer is sized by one (`GCNConv(dataset.num_features,
/// 64)`, DGL's `GraphConv(g.ndata['feat'].shape[1], 16)`): node features taken as at most 4,096 (Cora 1,433, CiteSeer 3,703, QM9 11), classes
/// as at most 1,000.
fn graph_width(text: &str) -> Option<u64> {
    // DGL's node features by their shape (`g.ndata['feat'].shape[1]`)
    if text.contains("ndata[") && text.ends_with(".shape[1]") {
        return Some(4096);
    }
    match text.rsplit('.').next().unwrap_or(text) {
        "num_features" | "num_node_features" | "num_edge_features" => Some(4096),
        "num_classes" if text.contains('.') => Some(1000),
        _ => None,
    }
}

/// [`graph_width`], and in a file of PyTorch Geometric also a graph's node-feature matrix
/// width, `train_dataset[0].x.shape[1]`.
fn graph_width_in(m: &Model<'_>, text: &str) -> Option<u64> {
    let pyg = || m.imports.values().any(|q| q.starts_with("torch_geometric"));
    let text = text.replace(' ', "");
    graph_width(&text)
        .or_else(|| {
            ([".x.shape[1]", ".x.shape[-1]", ".x.size(1)", ".x.size(-1)"]
                .iter()
                .any(|s| text.ends_with(s))
                && pyg())
            .then_some(4096)
        })
        .or_else(|| column_width(m, &text))
}

/// The width of a feature matrix the file builds from named columns of a table: `x.shape[1]`
/// with `x = torch.tensor(df[feature_cols].values)` and `feature_cols = ['a', 'b', 'c']` (or the
/// list written in the subscript, `df[['a', 'b']]`) is the number of columns named.
fn column_width(m: &Model<'_>, text: &str) -> Option<u64> {
    let root = [".shape[1]", ".shape[-1]", ".size(1)", ".size(-1)"]
        .iter()
        .find_map(|s| text.strip_suffix(s))?;
    if !root
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    {
        return None;
    }
    // (bound once at module level: a method's own `x = self.conv1(x)` is another name)
    let sole_module_value = |name: &str| {
        let bound: Vec<_> = m
            .assigns
            .iter()
            .filter(|a| a.ctx.func.is_none() && a.targets.len() == 1 && m.text(a.left) == name)
            .collect();
        match bound.as_slice() {
            [a] if !a.augmented => m.node(a.value),
            _ => None,
        }
    };
    // the strings of a list literal (directly, or through the one name bound to it)
    let strings = |n: tree_sitter::Node<'_>| -> Option<u64> {
        let list = if n.node_kind() == "identifier" {
            sole_module_value(m.node_text(n))?
        } else {
            n
        };
        if list.node_kind() != "list" {
            return None;
        }
        let mut w = list.walk();
        let items: Vec<_> = list.named_children(&mut w).collect();
        (!items.is_empty() && items.iter().all(|i| i.node_kind() == "string"))
            .then(|| u64::try_from(items.len()).ok())
            .flatten()
    };
    let mut stack = vec![sole_module_value(root)?];
    while let Some(n) = stack.pop() {
        if n.node_kind() == "subscript"
            && n.named_child_count() == 2
            && let Some(k) = n.named_child(1).and_then(strings)
        {
            return Some(k);
        }
        let mut w = n.walk();
        stack.extend(n.named_children(&mut w));
    }
    None
}

/// What an environment's observation or action width is taken to be at most, where a policy
/// network's layer is sized by one (`nn.Linear(obs_dim, 64)`): vector observations of the
/// usual control and robotics suites run to a few hundred numbers (Humanoid: 376), and
/// networks over pixels reach their Linear layers through literal convolutions.
const ENV_WIDTH: u64 = 512;

/// Is a layer size an environment's observation or action width (`obs_dim`,
/// `np.array(envs.single_observation_space.shape).prod()`, `env.action_space.n`)?
// Ex) layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64))
fn env_width(text: &str) -> bool {
    const NAMES: &[&str] = &[
        "obs_dim",
        "act_dim",
        "action_dim",
        "state_dim",
        "n_actions",
        "num_actions",
        "obs_size",
        "action_size",
        "state_size",
        "n_obs",
        "n_states",
        "observation_dim",
        "observation_length",
        "state_length",
        "action_length",
    ];
    text.contains("observation_space")
        || text.contains("action_space")
        || NAMES.contains(&text.rsplit('.').next().unwrap_or(text))
}

/// The part of `value` that targets `targets` bind to `name`: the whole value for one target,
/// else the element at `name`'s place in a tuple of as many (`INPUT_SIZE, HIDDEN_SIZE = 1, 64`,
/// `return trainer, u2net`).
fn bound_part<'t>(
    m: &Model<'_>,
    targets: &[super::facts::Span],
    name: &str,
    value: tree_sitter::Node<'t>,
) -> Option<tree_sitter::Node<'t>> {
    match targets {
        [_] => Some(value),
        targets => {
            let i = targets.iter().position(|t| m.text(*t) == name)?;
            let elements = super::facts::elements(value);
            if !matches!(value.node_kind(), "expression_list" | "tuple")
                || elements.len() != targets.len()
            {
                return None;
            }
            elements.get(i).copied()
        }
    }
}

/// The integer a module-level constant holds: bound once in the whole file, at module level,
/// to an integer written out (also as one of several names bound at once, `INPUT_SIZE,
/// HIDDEN_SIZE = 1, 64`).
fn module_int(m: &Model<'_>, name: &str) -> Option<u64> {
    let mut found = None;
    for a in m
        .assigns
        .iter()
        .filter(|a| a.targets.iter().any(|t| m.text(*t) == name))
    {
        if found.is_some() || a.ctx.func.is_some() || a.ctx.class.is_some() || a.augmented {
            return None;
        }
        let v = bound_part(m, &a.targets, name, m.node(a.value)?)?;
        found = Some(literal_int(m.node_text(v))?);
    }
    found
}

/// The parameters a call in a module's construction adds: a layer of literal size, `0` for a
/// layer without parameters (or a class of this file, counted with its own layers), `None`
/// for a layer this count does not size. `param` sizes a name (a parameter of the enclosing
/// `__init__`).
fn layer_params(m: &Model<'_>, c: &Call, param: &dyn Fn(&str) -> Option<u64>) -> Option<u64> {
    let last = m.last_name(c);
    // by position or by keyword (`nn.Conv2d(1, 10, kernel_size=5)`)
    let size = |a: Option<super::facts::Arg>| {
        let text = m.text(a?.value);
        int_expr(text, param)
            .or_else(|| param(text))
            .or_else(|| env_width(text).then_some(ENV_WIDTH))
            .or_else(|| graph_width_in(m, text))
    };
    let int = |i: usize, name: &str| size(m.pos(c, i).or_else(|| m.kw(c, name)));
    Some(match last {
        "Linear" => int(0, "in_features")?
            .checked_mul(int(1, "out_features")?)?
            .checked_add(int(1, "out_features")?)?,
        "Conv1d" | "Conv2d" | "Conv3d" | "ConvTranspose2d" => {
            let dims = match last {
                "Conv1d" => 1,
                "Conv3d" => 3,
                _ => 2,
            };
            // (a square kernel, `kernel_size=3`, or one written per dimension, `(5, 5)`)
            let kernel = match int(2, "kernel_size") {
                Some(k) => k.checked_pow(dims)?,
                None => {
                    let a = m.pos(c, 2).or_else(|| m.kw(c, "kernel_size"))?;
                    let t = m.text(a.value);
                    let inner = t.strip_prefix('(')?.strip_suffix(')')?;
                    let mut n: u64 = 1;
                    let mut count = 0;
                    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                        n = n.checked_mul(int_expr(part, param)?)?;
                        count += 1;
                    }
                    if count != dims {
                        return None;
                    }
                    n
                }
            };
            int(0, "in_channels")?
                .checked_mul(int(1, "out_channels")?)?
                .checked_mul(kernel)?
        }
        "Embedding" => int(0, "num_embeddings")?.checked_mul(int(1, "embedding_dim")?)?,
        // PyTorch Geometric's message-passing layers: one weight matrix (GCN), or one for the
        // node and one for its neighbours (GraphSAGE, GraphConv), plus a bias; GAT's per head
        "GCNConv" => int(0, "in_channels")?
            .checked_mul(int(1, "out_channels")?)?
            .checked_add(int(1, "out_channels")?)?,
        "SAGEConv" | "GraphConv" => int(0, "in_channels")?
            .checked_mul(int(1, "out_channels")?)?
            .checked_mul(2)?
            .checked_add(int(1, "out_channels")?)?,
        "GATConv" => {
            let heads = match m.kw(c, "heads").or_else(|| m.pos(c, 2)) {
                Some(a) => size(Some(a))?,
                None => 1,
            };
            int(0, "in_channels")?
                .checked_add(3)?
                .checked_mul(int(1, "out_channels")?)?
                .checked_mul(heads)?
        }
        // `nn.Parameter(torch.zeros(1, act_dim))`: the tensor's size
        "Parameter" => {
            let inner = m.pos(c, 0)?;
            let k = m.call_at(inner.value)?;
            if !matches!(
                m.last_name(k),
                "zeros" | "ones" | "randn" | "rand" | "empty"
            ) {
                return None;
            }
            let mut n: u64 = 1;
            for a in m.call_args(k).iter().filter(|a| a.name.is_none()) {
                n = n.checked_mul(size(Some(*a))?)?;
            }
            n
        }
        "LSTM" | "GRU" | "RNN" => {
            let gates = match last {
                "LSTM" => 4,
                "GRU" => 3,
                _ => 1,
            };
            let (i, h) = (int(0, "input_size")?, int(1, "hidden_size")?);
            // every layer after the first reads the hidden state; both directions when asked
            let layers = match m.pos(c, 2).or_else(|| m.kw(c, "num_layers")) {
                Some(a) => size(Some(a))?,
                None => 1,
            };
            let directions = match m.kw(c, "bidirectional").map(|a| a.vkind) {
                None | Some(ValKind::False) => 1,
                Some(ValKind::True) => 2,
                Some(_) => return None,
            };
            // (checked: sizes come from the audited file)
            let hh = h.checked_mul(h)?;
            let biases = h.checked_mul(2)?;
            let layer = |input: u64| {
                input
                    .checked_mul(h)?
                    .checked_add(hh)?
                    .checked_add(biases)?
                    .checked_mul(gates)
            };
            let first = layer(i)?;
            let rest = layer(h.checked_mul(directions)?)?;
            first
                .checked_add(layers.checked_sub(1)?.checked_mul(rest)?)?
                .checked_mul(directions)?
        }
        // no parameters, or a handful per channel
        "ReLU" | "GELU" | "SiLU" | "Tanh" | "Sigmoid" | "Softmax" | "LogSoftmax" | "LeakyReLU"
        | "MaxPool1d" | "MaxPool2d" | "MaxPool3d" | "AvgPool2d" | "AdaptiveAvgPool2d"
        | "Dropout" | "Dropout2d" | "Flatten" | "Identity" | "BatchNorm1d" | "BatchNorm2d"
        | "LayerNorm" | "Sequential" | "ModuleList" | "super" | "__init__" | "view" | "flatten"
        | "size" | "relu" | "max_pool2d" | "log_softmax" | "softmax" | "dropout" | "sigmoid"
        | "tanh" | "gelu" | "reshape" | "permute" | "mean" | "sum" | "cat" | "stack" | "zeros"
        | "ones" | "to" | "print" | "GINConv" | "global_mean_pool" | "global_add_pool"
        | "global_max_pool"
        // (padding, resampling, more pools, activations and norms: none, or two per channel)
        | "ZeroPad1d" | "ZeroPad2d" | "ZeroPad3d" | "ConstantPad1d" | "ConstantPad2d"
        | "ConstantPad3d" | "ReflectionPad1d" | "ReflectionPad2d" | "ReplicationPad1d"
        | "ReplicationPad2d" | "ReplicationPad3d" | "Upsample" | "UpsamplingNearest2d"
        | "UpsamplingBilinear2d" | "PixelShuffle" | "PixelUnshuffle"
        | "AvgPool1d" | "AvgPool3d" | "AdaptiveAvgPool1d" | "AdaptiveAvgPool3d"
        | "AdaptiveMaxPool1d" | "AdaptiveMaxPool2d" | "AdaptiveMaxPool3d" | "Dropout1d"
        | "Dropout3d" | "AlphaDropout" | "ELU" | "SELU" | "CELU" | "Mish" | "Hardswish"
        | "Hardsigmoid" | "Hardtanh" | "Softplus" | "Softsign" | "ReLU6" | "Unflatten"
        | "BatchNorm3d" | "InstanceNorm1d" | "InstanceNorm2d" | "InstanceNorm3d"
        // (a buffer is state, not a parameter: CleanRL's `self.register_buffer("action_scale",
        // torch.tensor(...))`)
        | "register_buffer"
        // (a module that places itself or builds its own optimizer, `self.cuda()`,
        // `self.optimizer = optim.Adam(self.parameters())`: no layer)
        | "cuda" | "cpu" => 0,
        _ if m.qual(c).starts_with("torch.optim.") => 0,
        _ if m.text(c.func).starts_with("nn.") || m.text(c.func).starts_with("torch.") => {
            return None; // a layer this count does not size
        }
        // `self.weight_init()`, `self.apply(init_weights)`: a method of the module that
        // builds no layer (it initialises the weights) adds no parameters
        _ if own_method_without_layers(m, c) => 0,
        _ if local_module_class(m, m.text(c.func)) => 0, // counted with its own class
        _ => return None,
    })
}

/// Families of convolutional networks, as their constructors are named (`ResNet18`,
/// `CAResNet18`, `mobilenet_v2`, `EfficientNet.from_name`, `UNet`, `EncoderCNN`).
const CONV_FAMILIES: &[&str] = &[
    "resnet",
    "u2net",
    "resnext",
    "mobilenet",
    "efficientnet",
    "densenet",
    "vgg",
    "alexnet",
    "inception",
    "googlenet",
    "squeezenet",
    "shufflenet",
    "mnasnet",
    "nasnet",
    "pnasnet",
    "regnet",
    "convnext",
    // (a project's own `KWSConvNet`, `SimpleConvNet`; a convolutional autoencoder,
    // `ConvAutoencoder`, `ConvVAE`)
    "convnet",
    "convautoencoder",
    "convae",
    "convvae",
    "unet",
    "lenet",
    "xception",
    "darknet",
    "deeplab",
    "hrnet",
    "cnn",
    // detectors and dense-prediction, restoration and counting networks built of convolutions
    // (`FasterRCNN`, `MaskRCNN`, `PSPNet`, `DLinkNet34`, `NAFNet`, `DnCNN`, `SRCNN`, `EDSR`,
    // `CSRNet`)
    "rcnn",
    "retinanet",
    // (the single-shot detector, `SSD(num_classes)`, `SSD300`)
    "ssd",
    "pspnet",
    "segnet",
    "linknet",
    "dlinknet",
    "nafnet",
    "dncnn",
    "srcnn",
    "espcn",
    "vdsr",
    "edsr",
    "rcan",
    "csrnet",
    // temporal convolutional networks over sequences (`TCN(...)`, `TemporalConvNet`, WaveNet)
    "tcn",
    "temporalconv",
    "wavenet",
    // text recognition and detection (`CRNN`, `PSENet`, `DBNet`), the anchor-free detector
    // `FCOS`, and the voxel classifier `VoxNet`
    "crnn",
    "psenet",
    "dbnet",
    "fcos",
    "voxnet",
    // video networks of 3D convolutions
    "c3d",
    "r2plus1d",
    "i3d",
    "x3d",
    "slowfast",
];

/// Does a constructor's name name a convolutional network family, at the start of one of its
/// words (`ResNet18`, `CAResNet18`, `EncoderCNN`, `build_vgg16`; not `Exception` ⊃ "xception",
/// not `SimpleNet` ⊃ "lenet"), or a YOLO detector by version (`Yolo_V1`, `YOLOv3`: darknet
/// and CSP backbones; not `YoloLoss`, nor the ViT-based YOLOS)? Not a graph network
/// (`GraphCNN`).
fn conv_family(name: &str) -> bool {
    // `GraphCNN`, `GraphConvNet`: graph networks, whose convolutions are sparse matmuls
    if name.to_ascii_lowercase().contains("graph") {
        return false;
    }
    // (`U_Net`, `Res_Net`: a family name split by an underscore)
    word_starts(&name.replace('_', ""))
        .any(|rest| rest.starts_with("unet") || rest.starts_with("resnet"))
        || word_starts(name).any(|rest| match rest.strip_prefix("yolo") {
            // `Yolo_V1`, `YOLOv3`, `Yolo`: not `YoloLoss`, `yolo_utils`, nor the ViT-based YOLOS
            Some(version) => {
                let v = version
                    .strip_prefix("_v")
                    .or_else(|| version.strip_prefix('v'))
                    .unwrap_or(version);
                version.is_empty() || v.starts_with(|ch: char| ch.is_ascii_digit())
            }
            None => CONV_FAMILIES.iter().any(|f| rest.starts_with(f)),
        })
}

/// The lowercased tails of `name` from each place a word starts: the beginning, after a
/// character that is not a letter or digit, a capital after a lowercase letter or digit
/// (`Encoder|CNN`), and the capital that begins a word after an acronym (`CA|ResNet`).
fn word_starts(name: &str) -> impl Iterator<Item = String> + '_ {
    let b = name.as_bytes();
    (0..b.len()).filter_map(move |i| {
        let ch = b[i];
        if !ch.is_ascii_alphanumeric() {
            return None;
        }
        let prev = i.checked_sub(1).and_then(|p| b.get(p)).copied();
        let next = b.get(i + 1).copied();
        let start = match prev {
            None => true,
            Some(p) if !p.is_ascii_alphanumeric() => true,
            Some(p) => {
                ch.is_ascii_uppercase()
                    && (p.is_ascii_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase())))
            }
        };
        start.then(|| name.get(i..).unwrap_or("").to_ascii_lowercase())
    })
}

/// Does the file build a convolutional network: convolution layers, a torchvision / timm /
/// MONAI model (`FileFacts::conv`), a convolutional constructor imported from torchvision and
/// used, a call named for a convolutional family (`resnet18()`,
/// `EfficientNet.from_pretrained(...)`), or a model builder given one by name
/// (`timm.create_model("resnet50")`, `build_model(model_name=args.arch)` with
/// `default="efficientnet_b0"`).
pub(crate) fn convolutional(m: &Model<'_>) -> bool {
    m.facts.conv
        // `from torchvision.models import resnet50` ... `{resnet50: ResNet50_Weights.DEFAULT}`:
        // constructors of the zoo used as values (the import is one occurrence)
        || m.imports.iter().any(|(local, q)| {
            q.starts_with("torchvision.models.")
                && conv_family(local)
                && super::facts::word_uses(m.src, local) > 1
        })
        // (not a call in a branch that never runs as shipped: `elif args.arch_type ==
        // "lenet5": model = LeNet5.LeNet5()` with `default="fc1"` builds no LeNet)
        || m.calls.iter().any(|c| {
            let last = m.last_name(c);
            if m.dead(&c.ctx) {
                return false;
            }
            // (an expression whose value as shipped names a convolutional family; also an
            // entry of a dict built from `vars(args)`, `config["model"]` with `"vgg19"`)
            let names_family = |n: tree_sitter::Node<'_>| {
                matches!(
                    super::resolve::resolve_with_options(m, n, c.span.start, c.ctx.func),
                    Val::Str(v) if names_conv(&v)
                )
            };
            conv_ctor(m, c)
                // (`getattr(models, args.arch)(num_classes=10)` with `default="WideResNet34"`,
                // `prepare_model(config["model"])`)
                // (also a network factory, `get_network(args.network)` with
                // `default='vgg16_bn'`, `build_net(cfg.arch)`)
                || ((last.to_ascii_lowercase().contains("model")
                    || last.to_ascii_lowercase().contains("network")
                    || matches!(
                        last.trim_start_matches('_'),
                        "get_net" | "build_net" | "create_net" | "make_net"
                    )
                    || matches!(last, "from_pretrained" | "from_name" | "load" | "getattr"))
                    && m.call_args(c)
                        .iter()
                        .any(|a| m.node(a.value).is_some_and(names_family)))
                // (a backbone chosen by name, `FlowMatching(..., encoder="resnet")`, or a
                // torchvision ResNet block handed in, `Hopenet(torchvision.models.resnet.Bottleneck,
                // [3, 4, 6, 3], 66)`)
                || m.call_args(c).iter().any(|a| {
                    let backbone_kw = a.name.is_some_and(|k| {
                        matches!(
                            m.text(k),
                            "encoder" | "encoder_name" | "backbone" | "backbone_name" | "arch"
                        )
                    });
                    (backbone_kw && m.node(a.value).is_some_and(names_family))
                        || (a.name.is_none() && resnet_block(m, m.text(a.value)))
                })
                // (`models.__dict__[args.arch](depth=args.depth)` with `default="vgg"`: the
                // ImageNet example's lookup of a constructor by name)
                || m.node(c.func).is_some_and(|f| {
                    f.node_kind() == "subscript"
                        && f.child_by_field_name("value")
                            .is_some_and(|v| m.node_text(v).ends_with(".__dict__"))
                        && f.child_by_field_name("subscript").is_some_and(names_family)
                })
        })
}

/// Does `text` name a block of torchvision's ResNet (`torchvision.models.resnet.Bottleneck`,
/// `models.resnet.BasicBlock` with `from torchvision import models`, or the name imported)?
fn resnet_block(m: &Model<'_>, text: &str) -> bool {
    let (head, rest) = text.split_once('.').unwrap_or((text, ""));
    let qualified = match m.imports.get(head) {
        Some(q) if rest.is_empty() => q.clone(),
        Some(q) => format!("{q}.{rest}"),
        None => text.to_string(),
    };
    qualified
        .strip_prefix("torchvision.models.resnet.")
        .is_some_and(|block| matches!(block, "Bottleneck" | "BasicBlock"))
}

/// The placements of a model the file builds from a convolutional family, in source order:
/// (line, column) of each live assignment that moves a model to the device (`.cuda(`, `.to(`)
/// and whose value, or the latest build of the name it moves, calls such a constructor
/// (`model = torchvision.models.resnet50(pretrained=True).cuda()`; `self.s_net = DeepLab(...)`
/// ... `self.s_net = torch.nn.DataParallel(self.s_net).cuda()`).
fn conv_placements(m: &Model<'_>) -> Vec<(usize, usize, Option<u32>)> {
    let builds_conv = |span: super::facts::Span| {
        let first = m.calls.partition_point(|c| c.span.start < span.start);
        m.calls
            .get(first..)
            .unwrap_or(&[])
            .iter()
            .take_while(|c| c.span.start < span.end)
            .any(|c| span.contains(c.span) && conv_ctor(m, c))
    };
    m.assigns
        .iter()
        .filter(|a| {
            let v = m.text(a.value);
            a.targets.len() == 1
                && !a.augmented
                && (v.contains(".cuda(") || v.contains(".to("))
                && !m.dead(&a.ctx)
                && !m.uncalled_line(a.line)
                && m.var_kind(m.text(a.left)) == Some(super::facts::VarKind::Model)
        })
        .filter(|a| {
            let name = m.text(a.left);
            builds_conv(a.value)
                || m.assigns
                    .iter()
                    .rfind(|b| {
                        b.span.end <= a.span.start
                            && b.ctx.func == a.ctx.func
                            && b.targets.len() == 1
                            && m.text(b.left) == name
                            && !m.text(b.value).contains(".cuda(")
                            && !m.text(b.value).contains(".to(")
                    })
                    .is_some_and(|b| builds_conv(b.value))
        })
        .map(|a| {
            let col = m.node(a.span).map_or(1, |n| n.start_position().column + 1);
            (a.line, col, a.ctx.func)
        })
        .collect()
}

/// Where a convolutional network is placed ([`conv_placements`]) instead of the anchor at
/// `line` in function `func` (`None`: module level): the first such placement in `func`, when
/// the file places one and `line` places none. Otherwise the anchor stands (`None`).
pub(crate) fn conv_placement_instead(
    m: &Model<'_>,
    line: usize,
    func: Option<u32>,
) -> Option<(usize, usize)> {
    let all = conv_placements(m);
    if all.iter().any(|(l, _, _)| *l == line) {
        return None;
    }
    all.into_iter()
        .find(|(_, _, f)| *f == func)
        .map(|(l, c, _)| (l, c))
}

/// A constructor of a convolutional family (`resnet50(...)`, `UNet(...)`), also through
/// `from_pretrained` / `from_name` on one (`UNet2DConditionModel.from_pretrained(...)`).
fn conv_ctor(m: &Model<'_>, c: &Call) -> bool {
    let last = m.last_name(c);
    // (not a call of a model the file holds: `cnn = torch.load(path)` ... `cnn(images)` runs a
    // network whose layers the file does not show)
    if c.method.is_none() && super::resolve::is_model_call(m, c) {
        return false;
    }
    conv_family(last)
        || (matches!(last, "from_pretrained" | "from_name")
            && c.recv.is_some_and(|r| conv_family(m.text(r))))
}

/// Does a model name given as a string start one of its words with a convolutional family
/// (`"resnet50"`, `"microsoft/resnet-50"`, `"deeplabv2_resnet101"`, not `"SimpleNet"`)? "cnn"
/// is left out: it also names a text corpus (`cnn_dailymail`).
fn names_conv(v: &str) -> bool {
    word_starts(v).any(|rest| {
        CONV_FAMILIES
            .iter()
            .any(|f| *f != "cnn" && rest.starts_with(f))
    })
}

/// Below this many parameters a model's step is kernel-launch bound: pinned copies change
/// nothing a user would measure.
pub(crate) const TINY_MODEL_PARAMS: u64 = 100_000;

/// Below this many parameters the GPU's arithmetic is not what a step waits for, so a faster
/// arithmetic mode cannot pay: on an H200 at batch 1024, TF32 changed nothing for MLPs of 12,545
/// to 9.5 M parameters, bf16 autocast made MLPs of 91,009 and 821,761 parameters 0.78x as fast
/// (the casts cost more than the multiplies save), and cuDNN autotuning changed nothing for a
/// LeNet-5 (BENCHMARKS.md, "Where the size exemptions stand").
pub(crate) const SMALL_COMPUTE_PARAMS: u64 = 1_000_000;

/// Is every model of the file a small one ([`local_model_params`] < [`TINY_MODEL_PARAMS`])?
pub(crate) fn tiny_model(m: &Model<'_>) -> bool {
    local_model_params(m).is_some_and(|p| p < TINY_MODEL_PARAMS)
}

/// Is every model of the file too small for its arithmetic mode to matter
/// ([`local_model_params`] < [`SMALL_COMPUTE_PARAMS`])? (EA201, EA202, EA204)
pub(crate) fn small_compute_model(m: &Model<'_>) -> bool {
    local_model_params(m).is_some_and(|p| p < SMALL_COMPUTE_PARAMS)
}

/// A literal integer, or a product / sum of them (`16 * 5 * 5`, `64 + 10`).
fn literal_int(text: &str) -> Option<u64> {
    int_expr(text, &|_| None)
}

/// A sum of products whose factors are literal integers or names `name` sizes
/// (`self.latent_size + self.num_classes`, `4 * 4 * 32`).
fn int_expr(text: &str, name: &dyn Fn(&str) -> Option<u64>) -> Option<u64> {
    let mut sum: u64 = 0;
    for term in text.split('+') {
        let mut product: u64 = 1;
        for factor in term.split('*') {
            let f = factor.trim();
            let v = match f.replace('_', "").parse::<u64>() {
                Ok(v) => v,
                Err(_) => name(f)?,
            };
            product = product.checked_mul(v)?;
        }
        sum = sum.checked_add(product)?;
    }
    Some(sum)
}

/// The `for … in …` clause of a comprehension around call `c` that binds `name` (anywhere in
/// its target: `b`, `k, v`, `i, (x, y)`), as (target, iterable); `None` when no comprehension
/// between `c` and its statement binds it. Shared by the rules that follow a comprehension
/// variable back to what it iterates ([`comprehension_source`], EA301's CPU-side batch check).
pub(crate) fn comprehension_clause<'t>(
    m: &'t Model<'_>,
    c: &Call,
    name: &str,
) -> Option<(tree_sitter::Node<'t>, tree_sitter::Node<'t>)> {
    let mut cur = m.node(c.span)?.parent();
    for _ in 0..32 {
        let n = cur?;
        if matches!(
            n.node_kind(),
            "list_comprehension"
                | "set_comprehension"
                | "dictionary_comprehension"
                | "generator_expression"
        ) {
            let mut w = n.walk();
            for clause in n
                .named_children(&mut w)
                .filter(|k| k.node_kind() == "for_in_clause")
            {
                let (Some(left), Some(right)) = (
                    clause.child_by_field_name("left"),
                    clause.child_by_field_name("right"),
                ) else {
                    continue;
                };
                let mut stack = vec![left];
                while let Some(x) = stack.pop() {
                    if x.node_kind() == "identifier"
                        && m.src.get(x.start_byte()..x.end_byte()) == Some(name)
                    {
                        return Some((left, right));
                    }
                    let mut xw = x.walk();
                    stack.extend(x.named_children(&mut xw));
                }
            }
        }
        if matches!(n.node_kind(), "for_statement" | "function_definition") {
            return None;
        }
        cur = n.parent();
    }
    None
}

/// What a comprehension variable runs over, by the root name of the iterable: `boxes` for `b`
/// in `[b.to(device) for b in boxes]`, `batch` for `v` in
/// `{k: v.to(device) for k, v in batch.items()}`. `None` when `name` is not bound by a
/// comprehension around the call.
pub(crate) fn comprehension_source<'a>(m: &Model<'a>, c: &Call, name: &str) -> Option<&'a str> {
    let (_, mut root) = comprehension_clause(m, c, name)?;
    for _ in 0..64 {
        let next = match root.node_kind() {
            "call" => root.child_by_field_name("function"),
            "attribute" => root.child_by_field_name("object"),
            "subscript" => root.child_by_field_name("value"),
            _ => None,
        };
        match next {
            Some(x) => root = x,
            None => break,
        }
    }
    (root.node_kind() == "identifier")
        .then(|| m.src.get(root.start_byte()..root.end_byte()))
        .flatten()
}
