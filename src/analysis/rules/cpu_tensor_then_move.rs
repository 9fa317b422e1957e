use crate::analysis::facts::NodeKind;
use crate::analysis::fix::add_kwarg;
use crate::analysis::model::{Applicability, Edit, Fix};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

const CTORS: &[&str] = &[
    "tensor",
    "as_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "arange",
    "eye",
    "linspace",
    "randperm",
    // window functions for `torch.stft`, all of which take `device=`
    "hann_window",
    "hamming_window",
    "blackman_window",
    "bartlett_window",
    "kaiser_window",
];
/// PyTorch's legacy typed constructors (`torch.LongTensor(b, n)`): they take no `device=`, so
/// there is no one-keyword fix.
const LEGACY: &[&str] = &[
    "Tensor",
    "FloatTensor",
    "LongTensor",
    "IntTensor",
    "ByteTensor",
    "BoolTensor",
    "DoubleTensor",
];
const RANDOM: &[&str] = &["rand", "randn", "randint", "randperm"];

declare_rule! {
    /// ## What it does
    /// Flags a tensor built on the CPU and then moved, `torch.zeros(...).to(device)`,
    /// `torch.tensor(...).cuda()`, `torch.hamming_window(n).to(device)`, where it runs every step: in a step loop, in a module's
    /// `forward`, or in a function called from either. A tensor built once (setup code, once
    /// per epoch, a branch for the loader's last short batch, `if x.size(0) != batch_size:`)
    /// or every N steps (`if step % 100 == 0:`) costs one small copy now and then and is not
    /// reported; nor is a move in a file whose work runs on the CPU (or MPS) as shipped (also a
    /// script that trains at module level and places nothing on a device, its moves following
    /// a tensor's own, `.to(input_seq.device)`). A move is `.to(device)`
    /// (also to a device ordinal, `.to(self.gpu_id)`, `.to(rank)`),
    /// `.cuda()` (also `.cuda(gpu)`), or `.type(dtype)` to a `torch.cuda` tensor type; the
    /// constructor may be scaled in parentheses first (`(torch.ones(n) * i).long().to(device)`).
    /// Also a name bound to such a
    /// constructor earlier in the same loop body and moved later (`y = torch.ones(n)` ...
    /// `y.cuda()`; also scaled on the way, `scale = torch.randn(n) * 0.05 + 1`), reported
    /// where it is built. A constructor counts when it builds a constant
    /// (`torch.LongTensor(b, n).fill_(0).to(device)`, `torch.IntTensor([n] * b).cuda()`,
    /// `torch.tensor([1.0, 2.0]).cuda()`), not when it wraps host data
    /// (`torch.FloatTensor(batch).to(device)`, `torch.tensor(batch.state).float().to(device)`,
    /// `torch.LongTensor([g.label for g in batch_graph]).to(device)`, host data combined with
    /// something, `torch.Tensor(batch['A'] + torch.randn(batch['A'].size()))`, a value read from
    /// host data `torch.tensor([value_dict["fps_id"]]).to(device)`):
    /// that copy is the data's own, and it is made whoever builds the tensor. So is a buffer
    /// written element-wise from host data before its move (`ids = torch.full((b, n), pad)`,
    /// `ids[i, :k] = torch.tensor(row)`, `ids.to(device)`).
    ///
    /// Reported on the line of the move (`torch.zeros(...).to(device)`), or of the constructor when
    /// a name bound to it is moved later.
    ///
    /// ## Why is this slow?
    /// The tensor is allocated and filled in host memory, then copied over PCIe, with a
    /// synchronising copy from pageable memory, every step. Passing `device=` builds it on the
    /// GPU directly (PyTorch tuning guide: "create tensors directly on the target device").
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// for x in loader:
    ///     mask = torch.zeros(64, 128).to(device)
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = model(x.to(device), mask).sum()
    ///     loss.backward()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// for x in loader:
    ///     mask = torch.zeros(64, 128, device=device)
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = model(x.to(device), mask).sum()
    ///     loss.backward()
    /// ```
    ///
    /// ## Fix safety
    /// `safe` for deterministic constructors; `numerics` for random ones (`rand`, `randn`,
    /// `randint`, `randperm`), whose values come from the CUDA generator instead of the CPU one.
    pub(crate) struct CpuTensorThenMove {
        id: "EA304",
        name: "cpu-tensor-then-move",
        category: CpuTensorThenMove,
        resource: Gpu,
        severity: Low,
    }
}

impl Rule for CpuTensorThenMove {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // also outside hot loops: torch.* constructors
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        use crate::analysis::prefilter::{Triggers, t};
        Triggers::EngineOr(const { &[t::code("torch")] })
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        // a file whose work runs on the CPU (or MPS) as shipped copies nothing to a GPU
        if matches!(
            m.facts.device,
            crate::analysis::facts::Device::Cpu | crate::analysis::facts::Device::Mps
        ) {
            return;
        }
        // nor a script that trains or infers at module level and places nothing anywhere: its
        // only moves follow a tensor's own device (`.to(input_seq.device)`), which is the CPU's
        if m.facts.device == crate::analysis::facts::Device::Unknown && places_nothing(m) {
            return;
        }
        let hot_funcs = super::per_step_funcs(m);
        for c in &m.calls {
            let last = m.last_name(c);
            // (a move in a branch that does not run as shipped copies nothing: `if
            // args.add_noise: x = x + torch.randn(*x.shape).cuda()` with the flag off)
            if c.method.is_none()
                || !(matches!(last, "to" | "cuda")
                    || (last == "type" && crate::analysis::resolve::to_cuda_type(m, c)))
                || m.dead(&c.ctx)
            {
                continue;
            }
            // `y = torch.ones(n)` ... `y.cuda()`: a name bound to a constructor just before, in the
            // same loop body, is moved as it was built (reported where it is built, no fix: the
            // name may be read on the CPU in between)
            let bound = c.recv_call.is_none().then(|| bound_ctor(m, c)).flatten();
            // `(torch.ones(n) * i).to(device)`: a constructor scaled in parentheses
            let scaled = c.recv_call.is_none().then(|| paren_ctor(m, c)).flatten();
            let Some(mut inner) = c
                .recv_call
                .and_then(|i| m.calls.get(i as usize))
                .or(bound)
                .or(scaled)
            else {
                continue;
            };
            // look through shape-only methods: `torch.tensor(x).view(1, 3).to(device)`
            let mut chained = scaled.is_some();
            // an in-place fill on the way makes the tensor a constant, whatever it wrapped
            let mut filled = false;
            for _ in 0..8 {
                if inner.method.is_some()
                    && matches!(
                        m.last_name(inner),
                        "view"
                            | "reshape"
                            | "unsqueeze"
                            | "float"
                            | "long"
                            | "half"
                            | "permute"
                            | "contiguous"
                            | "t"
                            | "expand"
                            | "repeat"
                            | "squeeze"
                            | "flatten"
                            | "int"
                            | "bool"
                            | "fill_"
                            | "zero_"
                            | "uniform_"
                            | "normal_"
                    )
                    && let Some(i) = inner.recv_call.and_then(|i| m.calls.get(i as usize))
                {
                    filled |= matches!(
                        m.last_name(inner),
                        "fill_" | "zero_" | "uniform_" | "normal_"
                    );
                    inner = i;
                    chained = true;
                } else if inner.method.is_some()
                    && inner.recv_call.is_none()
                    && let Some(k) = paren_ctor(m, inner)
                {
                    // `(torch.ones(n) * i).long().to(device)`
                    inner = k;
                    chained = true;
                } else {
                    break;
                }
            }
            // a tensor built once (setup, once per epoch, the last short batch) or every N
            // steps costs one small copy now and then: not waste
            if !super::runs_per_step(m, &hot_funcs, c) || super::rare_call(m, c) {
                continue;
            }
            let q = m.qual(inner);
            let ctor = q.strip_prefix("torch.").unwrap_or("");
            let legacy = LEGACY.contains(&ctor);
            // `torch.FloatTensor(batch)`, `torch.tensor(batch.state).float()`: host data
            // wrapped, whose copy is the input's own (sizes, a literal list, or an in-place fill
            // are a constant)
            let data = if legacy {
                match m.call_args(inner) {
                    [a] => Some(*a),
                    _ => None,
                }
            } else if matches!(ctor, "tensor" | "as_tensor") {
                m.pos(inner, 0)
            } else {
                None
            };
            if !filled
                && data.is_some_and(|a| {
                    matches!(
                        a.vkind,
                        crate::analysis::facts::ValKind::Ident
                            | crate::analysis::facts::ValKind::Attr
                            | crate::analysis::facts::ValKind::Call
                    ) || m.node(a.value).is_some_and(|n| {
                        // `torch.LongTensor([g.label for g in batch])`: rows of host data
                        matches!(
                            n.node_kind(),
                            "subscript" | "list_comprehension" | "generator_expression"
                        )
                        // `torch.Tensor(batch['A'] + torch.randn(batch['A'].size()))`: host
                        // data combined with something
                        // (not a list repeated a count of times, `[25] * batch_size`,
                        // nor a size: a constant)
                        || (n.node_kind() == "binary_operator"
                            && !["left", "right"].iter().any(|f| {
                                n.child_by_field_name(f)
                                    .is_some_and(|o| matches!(o.node_kind(), "list" | "tuple"))
                            })
                            && ["left", "right"].iter().any(|f| {
                                n.child_by_field_name(f).is_some_and(|o| {
                                    let t = m.node_text(o).to_ascii_lowercase();
                                    matches!(o.node_kind(), "subscript" | "identifier" | "attribute")
                                        && !["shape", "size", "len", "num"]
                                            .iter()
                                            .any(|w| t.contains(w))
                                })
                            }))
                        // `torch.tensor([value_dict["fps_id"]])`: a value read from host data
                        // (not a size: `torch.tensor([x.shape[0]])`)
                        || (n.node_kind() == "list"
                            && n.named_children(&mut n.walk()).any(|e| {
                                e.node_kind() == "subscript"
                                    && e.child_by_field_name("value").is_some_and(|v| {
                                        !m.node_text(v).ends_with("shape")
                                    })
                            }))
                    })
                })
            {
                continue;
            }
            if !(CTORS.contains(&ctor) || legacy)
                || m.kw(inner, "device").is_some()
                || inner.splat.is_some()
            {
                continue;
            }
            // a name bound to host data (`torch.tensor(row)`) holds the input: the copy is the
            // move of the data itself; so does a buffer filled from the host before its move
            // (`ids = torch.full((b, n), pad)`, `ids[i, :k] = torch.tensor(row)`); and a
            // constructor in a branch that never runs is none
            if bound.is_some()
                && (matches!(ctor, "tensor" | "as_tensor")
                    || m.dead(&inner.ctx)
                    || filled_before_move(m, inner, c))
            {
                continue;
            }
            let args = m.call_args(c);
            let device = if last == "type" {
                "\"cuda\"".to_string()
            } else if last == "cuda" {
                // `.cuda()`, `.cuda(gpu)`, `.cuda(device=0)`, `.cuda(non_blocking=True)`: an
                // ordinal is a device argument too (`torch.randn(..., device=gpu)`)
                let named = |a: &&crate::analysis::facts::Arg, k: &str| {
                    a.name.is_some_and(|n| m.text(n) == k)
                };
                let dev: Vec<_> = args.iter().filter(|a| !named(a, "non_blocking")).collect();
                match dev.as_slice() {
                    [] => "\"cuda\"".to_string(),
                    [a] if a.name.is_none() || named(a, "device") => m.text(a.value).to_string(),
                    _ => continue,
                }
            } else {
                let [a] = args else { continue };
                let t = m.text(a.value);
                let dev_kw = a.name.is_some_and(|n| m.text(n) == "device");
                // (also a device ordinal: `.to(self.gpu_id)`, `.to(args.gpu)`, `.to(rank)`;
                // in any case, a constant's name, `.to(DEVICE)`)
                let l = t.to_ascii_lowercase();
                let devish = l.contains("device")
                    || l.contains("cuda")
                    || l == "dev"
                    || l.ends_with(".dev")
                    || l.contains("gpu")
                    || l == "rank"
                    || l.ends_with("local_rank")
                    || l.ends_with(".rank");
                if !(dev_kw || (a.name.is_none() && devish)) || l.contains("cpu") {
                    continue;
                }
                t.to_string()
            };
            let message = if legacy {
                format!(
                    "`torch.{ctor}(...)` is built on the CPU and then copied; build it on the device (`torch.zeros(..., dtype=..., device={device})`)"
                )
            } else {
                format!(
                    "`torch.{ctor}(...)` is built on the CPU and then copied; pass `device={device}` to build it on the device"
                )
            };
            if bound.is_some() || legacy {
                cx.at_call(&Self::META, inner, message, None);
                continue;
            }
            let fix = (!chained)
                .then(|| add_kwarg(m, inner, &format!("device={device}")))
                .flatten()
                .map(|add| Fix {
                    applicability: if RANDOM.contains(&ctor) {
                        Applicability::Numerics
                    } else {
                        Applicability::Safe
                    },
                    edits: vec![
                        add,
                        Edit {
                            start: inner.span.end,
                            end: c.span.end,
                            content: String::new(),
                        },
                    ],
                });
            cx.at_call(&Self::META, c, message, fix);
        }
    }
}

/// Is the name moved by `c` written element-wise (`buf[i, :k] = ...`) between the
/// constructor `ctor` that built it and the move?
fn filled_before_move(
    m: &crate::analysis::facts::Model<'_>,
    ctor: &crate::analysis::facts::Call,
    c: &crate::analysis::facts::Call,
) -> bool {
    let Some(name) = c.recv.map(|r| m.text(r)) else {
        return false;
    };
    let prefix = format!("{name}[");
    m.assigns.iter().any(|a| {
        a.span.start > ctor.span.end
            && a.span.end <= c.span.start
            && m.text(a.left).starts_with(&prefix)
    })
}

/// The receiver of `c` is a parenthesised arithmetic on a `torch` constructor
/// (`(torch.ones(n) * i).long()`): that constructor's call.
fn paren_ctor<'a>(
    m: &'a crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> Option<&'a crate::analysis::facts::Call> {
    let mut n = m.node(c.recv?)?;
    if n.node_kind() != "parenthesized_expression" {
        return None;
    }
    for _ in 0..8 {
        if n.node_kind() != "parenthesized_expression" {
            break;
        }
        n = n.named_child(0)?;
    }
    arithmetic_ctor(m, n, 0)
}

/// The constructor among the operands of arithmetic `n`, nested a few deep
/// (`torch.randn(n) * 0.05 + 1`, `torch.ones(n) * i`).
fn arithmetic_ctor<'a>(
    m: &'a crate::analysis::facts::Model<'_>,
    n: tree_sitter::Node<'_>,
    depth: u8,
) -> Option<&'a crate::analysis::facts::Call> {
    if depth > 4 {
        return None;
    }
    match n.node_kind() {
        "parenthesized_expression" => arithmetic_ctor(m, n.named_child(0)?, depth + 1),
        "binary_operator" => [
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ]
        .into_iter()
        .flatten()
        .find_map(|o| arithmetic_ctor(m, o, depth + 1)),
        "call" if depth > 0 => m.calls.iter().find(|k| {
            k.span.start == n.start_byte()
                && k.span.end == n.end_byte()
                && m.qual(k)
                    .strip_prefix("torch.")
                    .is_some_and(|ctor| CTORS.contains(&ctor) || LEGACY.contains(&ctor))
        }),
        _ => None,
    }
}

/// The constructor call a plain name was last bound to, in the same function and loop body,
/// before `c` moves it (`mask = torch.zeros(b, n)` ... `mask = mask.to(device)`).
fn bound_ctor<'a>(
    m: &'a crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> Option<&'a crate::analysis::facts::Call> {
    let name = m.text(c.recv?);
    if !name
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    {
        return None;
    }
    let a = m.assigns.iter().rfind(|a| {
        a.span.end <= c.span.start
            && a.ctx.func == c.ctx.func
            && a.targets.iter().any(|t| m.text(*t) == name)
    })?;
    if a.ctx.loop_ != c.ctx.loop_ || a.augmented || a.targets.len() != 1 {
        return None;
    }
    // (also a constructor scaled on the way: `scale = torch.randn(n) * 0.05 + 1`)
    match m
        .node(a.value)
        .filter(|v| v.node_kind() == "binary_operator")
    {
        Some(v) => arithmetic_ctor(m, v, 0),
        None => m.calls.get(a.rhs_call? as usize),
    }
}

/// Does the script run its step loop at module level while no call places anything on a
/// device of its own choosing (every move is `.to(x.device)`, a tensor's own)?
// Ex) input_seq = torch.randn(3, 7, 5); for epoch in range(100): seq2seq_model(input_seq) ... .to(input_seq.device)
fn places_nothing(m: &crate::analysis::facts::Model<'_>) -> bool {
    let module_steps = m
        .loops
        .iter()
        .any(|l| l.info.step && l.ctx.func.is_none() && !m.dead(&l.ctx));
    module_steps
        && !m.calls.iter().any(|c| {
            c.method.is_some()
                && matches!(m.last_name(c), "to" | "cuda" | "type")
                && crate::analysis::resolve::placement_arg(m, c)
                && !m
                    .pos(c, 0)
                    .or_else(|| m.kw(c, "device"))
                    .is_some_and(|a| m.text(a.value).ends_with(".device"))
        })
}
