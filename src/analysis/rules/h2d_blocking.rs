use crate::analysis::facts::NodeKind;
use crate::analysis::facts::{Call, Val};
use crate::analysis::fix::add_kwarg;
use crate::analysis::model::{Applicability, Fix};
use crate::analysis::resolve::{is_dataloader, loader_arg};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `.to(device)` (also `.to(device=...)`) / `.cuda()` of a batch in a step loop without `non_blocking=True`
    /// (not under a `step % N == 0` guard nor in a branch that runs once, `if i == 0:`),
    /// when the loop iterates a `DataLoader` with `pin_memory=True` (also a test of the device
    /// that holds on the GPU runner, `pin_memory=torch.cuda.is_available()`, or a name bound to
    /// one, `pin_memory=use_cuda`, or a parameter of the loader's function that its one call
    /// fills with one, `make_dataloaders(pin_memory)` with `pin_memory = (device.type ==
    /// "cuda")`, or an integer, `{'num_workers': 1, 'pin_memory': 1}`) (or
    /// draws its batch with
    /// `next(it)` from `it = iter(loader)`, or a loader the function
    /// is handed, in a file whose every DataLoader that runs pins memory, or an entry of a dict
    /// of loaders written out, `for x, y in dataloaders['test']:`, whose every loader the loop may
    /// read pins memory) — also of the batch's
    /// parts in a comprehension (`[b.to(device) for b in boxes]`) or in a loop over them (`for k, v
    /// in targets.items(): targets[k] = v.to(device)`), also wrapped in PyTorch 0.3's `Variable`
    /// (`data, label = Variable(batch[0]), Variable(batch[1])`, the same tensors since 0.4). A
    /// batch rebuilt in the loop
    /// before the copy (`data = torch.stack(data)`, `torch.cat`, any `torch.` function, arithmetic `x = (x - m) / s`,
    /// a function of the file that builds a tensor, `lab = to_one_hot(lab)`; not `data =
    /// Variable(data)`, the same tensor since PyTorch 0.4), in any branch, is a new tensor outside the
    /// pinned buffers: `non_blocking=True` would not make its copy asynchronous. A batch
    /// already copied earlier in the iteration (`targets = targets.to(device)` again) copies
    /// nothing. A loader
    /// handed to Accelerate's `prepare` (or Fabric's `setup_dataloaders`) delivers its batches
    /// on the device already: the loop's `.to(device)` copies nothing.
    ///
    /// Reported on the line of the `.to(...)` / `.cuda()` call.
    ///
    /// ## Why is this slow?
    /// A blocking copy makes the host wait for the transfer before it can queue the forward
    /// pass. From pinned memory the copy can run asynchronously and overlap with the work the
    /// host queues next.
    ///
    /// ## Example
    /// ```python
    /// import torch
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
    /// for x, y in loader:
    ///     x = x.to(device)
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = model(x).sum()
    ///     loss.backward()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
    /// for x, y in loader:
    ///     x = x.to(device, non_blocking=True)
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = model(x).sum()
    ///     loss.backward()
    /// ```
    ///
    /// ## Fix safety
    /// `safe`: adds `non_blocking=True` to host→device copies of the loader's batches only
    /// (never to device→host copies, whose result could be read before it arrives).
    pub(crate) struct H2dBlocking {
        id: "EA303",
        name: "blocking-host-to-device-copy",
        category: H2dBlocking,
        resource: Gpu,
        severity: Low,
    }
}

impl Rule for H2dBlocking {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        // pinned memory and asynchronous copies are CUDA's: nothing to do on a file that runs
        // on the CPU or Apple's MPS
        if matches!(
            m.facts.device,
            crate::analysis::facts::Device::Cpu | crate::analysis::facts::Device::Mps
        ) {
            return;
        }
        // (a loader built in a branch that does not run as shipped pins nothing: `elif
        // dataset == "MNIST": loader = DataLoader(..., pin_memory=True)` with another default)
        let (live, dead): (Vec<&Call>, Vec<&Call>) = m
            .calls
            .iter()
            .filter(|c| is_dataloader(m, c))
            .partition(|c| !m.dead(&c.ctx));
        let all_live_loaders_pinned = !live.is_empty()
            && live
                .iter()
                .all(|c| loader_arg(m, c, "pin_memory", 7) == Val::Bool(true));
        let dead_lines: Vec<usize> = dead.iter().map(|c| c.line).collect();
        // the names a function of the file returns its pinned loaders to (`tr_l, te_l =
        // get_data_loaders(...)`), looked up once for every copy below
        let returned_pinned: Vec<&str> = live
            .iter()
            .filter(|k| loader_arg(m, k, "pin_memory", 7) == Val::Bool(true))
            .flat_map(|k| super::call_returned_to(m, k))
            .collect();
        for c in &m.calls {
            let last = m.last_name(c);
            if c.method.is_none()
                || !matches!(last, "to" | "cuda")
                || m.kw(c, "non_blocking").is_some()
                // `.cuda(async=True)`: PyTorch 0.3's spelling of `non_blocking=True`
                || m.kw(c, "async").is_some()
            {
                continue;
            }
            if last == "to" {
                let moves = match m.pos(c, 0) {
                    Some(a) => {
                        let t = m.text(a.value);
                        !(t.contains("cpu")
                            || t.contains("dtype")
                            || t.contains("float")
                            || t.contains("long")
                            || t.contains("int")
                            || t.contains("bool")
                            || t.contains("half")
                            || m.pos(c, 1).is_some())
                    }
                    // `.to(device=device, dtype=torch.float32)`: a move to the device by keyword
                    None => m.kw(c, "device").is_some(),
                };
                if !moves {
                    continue;
                }
            }
            // (a copy in a branch that runs once or every N steps, `if batch_idx == 0:`, is
            // not per step)
            let Some(s) = super::step_ctx(m, c).filter(|s| !s.mod_guard) else {
                continue;
            };
            let Some(l) = m.loops.get(s.loop_ as usize) else {
                continue;
            };
            // the loop iterates a loader, or a parameter of its function that is handed one
            // (`def train(trainingData): for x, y in enumerate(trainingData):`)
            let handed = || {
                let f = l.ctx.func.and_then(|f| m.funcs.get(f as usize))?;
                let it = m.text(l.iter?);
                super::words(it).find(|w| f.params.iter().any(|(p, _)| m.text(*p) == *w))
            };
            // (or draws its batch with `next(it)` from `it = iter(loader)`)
            let drawn = next_drawn(m, l);
            // (an entry of a dict of loaders: `for x, y in dataloaders['test']:`; looked up
            // only for a loop that iterates no loader by name)
            let dict_cell = std::cell::OnceCell::new();
            let in_dict = || *dict_cell.get_or_init(|| container_pinned(m, l));
            let pinned = match l
                .info
                .iterates_loader
                .as_deref()
                .or_else(|| in_dict().is_none().then(handed).flatten())
                .or(drawn.as_ref().map(|(v, _)| *v))
            {
                Some(var) => {
                    let var = wrapped_loader(m, var);
                    if placed_by_framework(m, var) {
                        continue;
                    }
                    let known = m
                        .facts
                        .loaders
                        .iter()
                        .any(|f| f.var.as_deref() == Some(var));
                    m.facts.loaders.iter().any(|f| {
                        f.var.as_deref() == Some(var)
                            && f.pin_memory == Val::Bool(true)
                            && !dead_lines.contains(&f.line)
                    })
                    // (or one a function of the file builds pinned and returns)
                    || returned_pinned.contains(&var)
                    // a loader handed in (`def evaluate(model, eval_dataloader)`) from a file
                    // whose every loader that runs pins memory
                    || (!known && all_live_loaders_pinned)
                }
                None => in_dict().unwrap_or(false),
            };
            if !pinned {
                continue;
            }
            let Some(root) = c.recv_root.map(|r| m.text(r)) else {
                continue;
            };
            // `[b.to(device) for b in boxes]`: a comprehension over a part of the batch, also
            // nested (`[{k: v.to(device) for k, v in t.items()} for t in targets]`)
            let mut root = root;
            for _ in 0..3 {
                match super::comprehension_source(m, c, root) {
                    Some(r) if r != root => root = r,
                    _ => break,
                }
            }
            // `for k, v in targets.items(): targets[k] = v.to(device)`: a loop over a part of
            // the batch, nested in the step loop
            let mut inner = c.ctx.loop_;
            for _ in 0..4 {
                let Some(il) = inner
                    .filter(|&i| i != s.loop_)
                    .and_then(|i| m.loops.get(i as usize))
                else {
                    break;
                };
                if il.targets.iter().any(|t| m.text(*t) == root)
                    && let Some(b) = il.iter.and_then(|it| {
                        super::words(m.text(it)).find(|w| l.info.batch_names.iter().any(|b| b == w))
                    })
                {
                    root = b;
                }
                inner = il.parent;
            }
            let batch = l.info.batch_names.iter().any(|b| b == root)
                || drawn
                    .as_ref()
                    .is_some_and(|(_, names)| names.contains(&root));
            if !batch || rebuilt(m, l, c, root) || already_moved(m, l, c, root) {
                continue;
            }
            let fix = add_kwarg(m, c, "non_blocking=True").map(|e| Fix {
                applicability: Applicability::Safe,
                edits: vec![e],
            });
            cx.at_call(
                &Self::META,
                c,
                format!("blocking `.{last}()` of a pinned batch: add `non_blocking=True` so the copy overlaps host work"),
                fix,
            );
        }
    }
}

/// Is loader `var` handed to Accelerate's `prepare` or Fabric's `setup_dataloaders` (`model,
/// opt, loader = accelerator.prepare(model, opt, loader)`)? Both wrap it in a loader that
/// moves each batch to the device itself (their default): the loop's `.to(device)` is a no-op.
fn placed_by_framework(m: &crate::analysis::facts::Model<'_>, var: &str) -> bool {
    m.assigns.iter().any(|a| {
        a.targets.iter().any(|t| m.text(*t) == var)
            && a.rhs_call
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|c| {
                    c.method.is_some()
                        && matches!(
                            m.last_name(c),
                            "prepare" | "prepare_data_loader" | "setup_dataloaders"
                        )
                        && m.call_args(c).iter().any(|x| m.text(x.value) == var)
                })
    })
}

/// Was `name` rebound in the loop body before `c` to a tensor built from the batch
/// (`data = torch.stack(data)`, `x = torch.cat(parts)`, `lb = torch.max(data - eps, lo)`,
/// `x = (x - mean) / std`), in any branch? The new tensor is not in the pinned
/// memory the loader filled: `non_blocking=True` would copy as slowly.
fn rebuilt(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    const BUILDERS: &[&str] = &[
        "stack",
        "cat",
        "concat",
        "concatenate",
        "tensor",
        "as_tensor",
        "from_numpy",
        "Tensor",
        "FloatTensor",
        "LongTensor",
        "pad_sequence",
    ];
    m.assigns.iter().any(|a| {
        l.span.contains(a.span)
            && a.span.end <= c.span.start
            && a.targets.iter().any(|t| m.text(*t) == name)
            && (a.rhs_call
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|b| {
                    BUILDERS.contains(&m.last_name(b))
                        // `lb = torch.max(data - eps, lo)`: any function of torch's namespace
                        // (not PyTorch 0.3's `Variable(data)`, which hands back the same tensor)
                        || (m.qual(b).starts_with("torch.") && m.last_name(b) != "Variable")
                        // `lab = to_one_hot(lab)`: a function of the file that builds a tensor
                        || builds_tensor(m, b)
                })
                // `x = (x - mean) / std`: arithmetic makes a new tensor
                || m.node(a.value).is_some_and(|v| v.node_kind() == "binary_operator"))
    })
}

/// Was `name` rebound in the loop body before `c` (and after the loop's start) to a copy on
/// the device, `targets = targets.long().to(device)` ... `targets = targets.to(device)`? The
/// second `.to()` copies nothing.
// Ex) targets = targets.to(device=DEVICE) ... with autocast(...): targets = targets.to(device=DEVICE).squeeze(1)
fn already_moved(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    c: &crate::analysis::facts::Call,
    name: &str,
) -> bool {
    // the last binding of `name` before the copy decides
    let Some(last) = m
        .assigns
        .iter()
        .filter(|a| {
            l.span.contains(a.span)
                && a.span.end <= c.span.start
                && a.targets.iter().any(|t| m.text(*t) == name)
        })
        .last()
    else {
        return false;
    };
    // (on every path to the copy: a binding in the `if` branch says nothing of the `else`'s
    // copy, `if device == 'cuda': x = x.to(device, non_blocking=True) else: x = x.to(device)`)
    let mut block = m.node(last.span).and_then(|n| n.parent());
    for _ in 0..64 {
        match block {
            Some(b) if b.node_kind() != "block" => block = b.parent(),
            _ => break,
        }
    }
    let encloses =
        block.is_some_and(|b| b.start_byte() <= c.span.start && c.span.end <= b.end_byte());
    last.targets.len() == 1
        && encloses
        && m.calls.iter().any(|k| {
            last.span.contains(k.span)
                && k.span != c.span
                && k.method.is_some()
                && matches!(m.last_name(k), "to" | "cuda")
                && crate::analysis::resolve::placement_arg(m, k)
        })
}

/// Is `c` a call of a plain function of the file whose body builds a tensor with a torch
/// function (`def to_one_hot(y): y_one_hot = torch.zeros(y.numel(), k); ...; return
/// y_one_hot.float()`)? What it returns is new memory, not the loader's pinned batch.
fn builds_tensor(m: &crate::analysis::facts::Model<'_>, c: &Call) -> bool {
    const NEW: &[&str] = &[
        "zeros",
        "ones",
        "empty",
        "full",
        "eye",
        "arange",
        "tensor",
        "as_tensor",
        "from_numpy",
        "stack",
        "cat",
        "Tensor",
        "FloatTensor",
        "LongTensor",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
    ];
    if c.method.is_some() {
        return false;
    }
    let Some(fi) = m.plain_fn(m.text(c.func)) else {
        return false;
    };
    m.calls.iter().any(|k| {
        k.ctx.func == Some(fi as u32)
            && m.qual(k).starts_with("torch.")
            && NEW.contains(&m.last_name(k))
    })
}

/// `pbar = tqdm(train_loader)`: the loader a progress-bar (or `enumerate` / `iter`) variable
/// wraps, also one a `with` statement names (`with tqdm(train_loader) as tepoch:`).
fn wrapped_loader<'a>(m: &'a crate::analysis::facts::Model<'_>, var: &'a str) -> &'a str {
    let wrapper = |c: &Call| matches!(m.last_name(c), "tqdm" | "enumerate" | "iter" | "track");
    let assigned = m
        .assigns
        .iter()
        .filter(|a| a.targets.len() == 1 && m.text(a.left) == var)
        .find_map(|a| {
            let c = m.calls.get(a.rhs_call? as usize)?;
            wrapper(c).then(|| m.pos(c, 0)).flatten()
        });
    let with_alias = || {
        m.calls.iter().filter(|c| wrapper(c)).find_map(|c| {
            let p = m.node(c.span)?.parent()?;
            let alias = p.child_by_field_name("alias")?;
            (p.node_kind() == "as_pattern" && m.node_text(alias) == var)
                .then(|| m.pos(c, 0))
                .flatten()
        })
    };
    assigned
        .or_else(with_alias)
        .map(|a| m.text(a.value))
        .unwrap_or(var)
}

/// A loop that draws its batch from an iterator of a loader (`it = iter(train_loader)` ... `for
/// step in range(n): batch = next(it)`): the loader, and the names the drawn batch is bound to
/// and unpacked into in the loop body (`batch`, `frames = batch['frames']`).
// Ex) loader = iter(train_loader) ... for step in range(1, len(train_loader) + 1): batch = next(loader)
fn next_drawn<'s>(
    m: &crate::analysis::facts::Model<'s>,
    l: &crate::analysis::facts::Loop,
) -> Option<(&'s str, Vec<&'s str>)> {
    let mut loader = None;
    let mut names: Vec<&str> = Vec::new();
    for a in m
        .assigns
        .iter()
        .filter(|a| l.span.contains(a.span) && !a.augmented)
    {
        let drawn = a
            .rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .filter(|c| c.method.is_none() && m.text(c.func) == "next")
            .and_then(|c| m.pos(c, 0))
            .and_then(|it| {
                let binding = m.assigns.iter().rfind(|b| {
                    b.span.end <= l.span.start
                        && b.targets.len() == 1
                        && m.text(b.left) == m.text(it.value)
                })?;
                let iter = m.calls.get(binding.rhs_call? as usize)?;
                (iter.method.is_none() && m.text(iter.func) == "iter")
                    .then(|| m.pos(iter, 0))
                    .flatten()
                    .map(|x| m.text(x.value))
                    .filter(|v| m.var_kind(v) == Some(crate::analysis::facts::VarKind::Loader))
            });
        if let Some(v) = drawn {
            loader = Some(v);
            names.extend(a.targets.iter().map(|t| m.text(*t)));
        } else if loader.is_some() {
            // (a part of the drawn batch: `frames = batch['frames']`, `x, y = batch`)
            let v = m.text(a.value);
            if names.iter().any(|n| {
                v == *n
                    || v.strip_prefix(n)
                        .is_some_and(|r| r.starts_with('[') || r.starts_with('.'))
            }) && !v.contains('(')
            {
                names.extend(a.targets.iter().map(|t| m.text(*t)));
            }
        }
    }
    loader.map(|v| (v, names))
}

/// Loop `l` iterates an entry of a dict of loaders written out (`dataloaders = {'train':
/// DataLoader(...), ...}` then `for x, y in dataloaders['test']:`): does every loader it may
/// read (by [`super::reads_key`]) run as shipped with `pin_memory=True`? `None` when `l`
/// iterates no such dict.
fn container_pinned(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> Option<bool> {
    let mut held = m
        .calls
        .iter()
        .enumerate()
        .filter(|(ci, c)| {
            is_dataloader(m, c)
                && super::loader_container(m, *ci, c)
                    .is_some_and(|v| super::container_loops(m, v).any(|o| o.span == l.span))
                && super::entry_key(m, c).is_none_or(|k| super::reads_key(m, l, k))
        })
        .peekable();
    held.peek()?;
    Some(held.all(|(_, c)| !m.dead(&c.ctx) && loader_arg(m, c, "pin_memory", 7) == Val::Bool(true)))
}
