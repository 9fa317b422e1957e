use crate::analysis::facts::NodeKind;
use crate::analysis::fix::{line_start_indent, torch_name};
use crate::analysis::model::{Applicability, CodeKind, Edit, Fix};
use crate::analysis::resolve::is_model_call;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags, in a file that runs on CUDA, an evaluation or inference loop (the model is in
    /// `eval()` mode, also through `model.train(False)`, or the function is
    /// an eval/test/predict one, also `val` as a word of its name, `do_val`, `val_model`, or one named for the
    /// accuracy it computes, `cal_accuracy(model, loader)`, or the file only infers) that calls the model with autograd
    /// enabled: no `torch.no_grad()` / `torch.inference_mode()` around it (nor a decorator named
    /// for it, `@make_nograd_func`). A loop in a function
    /// that also trains (calls backward) is one only when the function puts the model in
    /// `eval()` mode before it (`def train(...): ... model.eval(); for x, y in val_loader:`,
    /// flagged; also at the top of the loop's own body, `for x, y in val_loader: model.eval()`); otherwise it is part of training, unless it trains in one phase and evaluates
    /// in another with nothing switching autograd by phase (`for phase in ['train', 'val']:`,
    /// `model.eval()` for the second, `for x, y in dataloaders[phase]:` running its backward
    /// only under `if phase == 'train':`, no `torch.set_grad_enabled(phase == 'train')`):
    /// flagged, with no automatic fix; so is a helper that trains or evaluates by a flag it is
    /// handed (`def run_epoch(loader, model, criterion, optimizer=None, train=True):`,
    /// `model.eval()` when the flag is off, its backward only under `if train:`) and that a
    /// call outside `no_grad` runs with the flag off, `run_epoch(val_loader, model,
    /// criterion, train=False)`. The call may sit in a function of the file the loop calls, which runs the
    /// model once per call (`def test_net(net, image): y = net(x)`, `self._process_batch(x)`).
    /// The model may be an object imported from the repository's own module (`from
    /// faster_rcnn.faster_rcnn import model`, then `model.eval()`), not an imported function,
    /// or a whole model unpickled and called, `cnn = torch.load(path)` ... `cnn(images)`.
    /// A Hugging Face pipeline (`StableDiffusionPipeline`, `pipeline(...)`) or an Ultralytics
    /// model (`YOLO("yolov8n.pt")`, `torch.hub.load("ultralytics/yolov5", ...)`) is not
    /// counted: its `__call__` disables autograd itself; nor is a file that freezes every
    /// parameter (`for p in model.parameters(): p.requires_grad = False`; not when it then
    /// gives that model a new layer, `model.fc = nn.Linear(n, 2)`, whose weights require
    /// grad, or thaws a part of it again, `for p in model.fc.parameters(): p.requires_grad =
    /// True`), nor a loop that builds
    /// adversarial examples or saliency maps, which need autograd (a call named for an attack or
    /// gradients: `projected_gradient_descent(net, x, ...)`, `adversary.perturb(x, y)`).
    /// A loop whose body always breaks off after its first batch (a preview of one batch) is
    /// none. `Variable(x, volatile=True)` (PyTorch
    /// 0.3's no-grad mode) does not count as disabling autograd: it has done nothing since 0.4.
    ///
    /// Reported on the `for` line of the evaluation loop; loops nested in a reported one are
    /// not reported again (a sliding window's row and column loops inside the loop over images).
    ///
    /// ## Why is this slow?
    /// With autograd on, every forward records the graph and keeps the activations it would
    /// need for a backward pass that never comes: more memory traffic, more allocations and a
    /// smaller batch that fits.
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// model.cuda().eval()
    /// for x, y in val_loader:
    ///     out = model(x.cuda())
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// model.cuda().eval()
    /// with torch.no_grad():
    ///     for x, y in val_loader:
    ///         out = model(x.cuda())
    /// ```
    ///
    /// ## Fix safety
    /// `safe`: wraps the loop in `with torch.no_grad():`. Code that needs gradients during
    /// evaluation (saliency maps, adversarial examples, `torch.autograd.grad`) must not use it.
    pub(crate) struct NoGradMissing {
        id: "EA401",
        name: "eval-loop-without-no-grad",
        category: NoGradMissing,
        resource: Gpu,
        severity: Medium,
    }
}

const EVAL_NAMES: &[&str] = &[
    "eval", "valid", "test", "predict", "infer", "score", "embed", "accuracy",
];

impl Rule for NoGradMissing {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if !super::cuda(m) {
            return;
        }
        // (a model whose parameters are all frozen, `for p in model.parameters(): p.requires_grad
        // = False`, records no graph: nothing for `no_grad` to save)
        if m.src.contains("autograd.grad")
            || m.src.contains("requires_grad_(")
            || m.src.contains("set_grad_enabled(False)")
            || m.assigns.iter().any(|a| {
                grad_switch_loop(m, a, crate::analysis::facts::ValKind::False).is_some_and(|it| {
                    it.contains("parameters()")
                        && !new_head_after(m, it, a.span.end)
                        && !thawed_after(m, it, a.span.end)
                })
            })
        {
            return;
        }
        let no_grad_callees: std::collections::HashSet<&str> = m
            .calls
            .iter()
            .filter(|c| c.ctx.no_grad)
            .map(|c| m.last_name(c))
            .collect();
        // functions of this file that run the model once per call with autograd on (`def
        // test_net(net, image): ... y = net(x)`): a loop calling one runs the model
        let forward_fns: std::collections::HashSet<(bool, &str)> = m
            .calls
            .iter()
            .filter(|c| c.ctx.loop_.is_none() && !c.ctx.no_grad && direct_forward(m, c))
            .filter_map(|c| m.funcs.get(c.ctx.func? as usize))
            .filter(|f| !f.backward)
            .map(|f| (f.class.is_some(), m.text(f.name)))
            .collect();
        let module_backward = m
            .calls
            .iter()
            .any(|c| c.ctx.func.is_none() && m.last_name(c) == "backward");
        // loops already reported: a nest is reported once, on its outermost evaluation loop
        // (loops are numbered in source order, so an enclosing loop comes first)
        let mut reported: Vec<u32> = Vec::new();
        for (li, l) in m.loops.iter().enumerate() {
            // (nor a loop behind a switch that is off as shipped, `if args.task_name == "mnli":`)
            // (nor a loop whose body always breaks off: one batch shown, `for X, y in
            // test_loader: show(net(X)); break`)
            // (a loop that trains in one phase and evaluates in another, `for phase in ['train',
            // 'val']: ... for x, y in loaders[phase]:`, with no `set_grad_enabled` around it)
            let by_phase = l.info.train && evaluates_by_phase(m, l);
            // (or by a flag its function is handed: `def run_epoch(..., train=True)` called
            // with `train=False` for validation)
            let by_flag = if l.info.train && !by_phase {
                evaluates_by_flag(m, l)
            } else {
                None
            };
            let by_phase = by_phase || by_flag.is_some();
            if !l.info.step
                || (l.info.train && !by_phase)
                || l.ctx.no_grad
                || m.dead(&l.ctx)
                || super::always_breaks(m, l)
            {
                continue;
            }
            // an enclosing step loop (this is a loop inside training, unless the model is put in
            // `eval()` mode before it: a validation pass every few steps), or a backward in the
            // function
            let in_step = l.parent.is_some_and(|p| super::step_ctx_loop(m, p));
            let func = l.ctx.func.and_then(|f| m.funcs.get(f as usize));
            // `with torch.no_grad(): evaluate(model, loader)`: the caller disabled autograd
            if func.is_some_and(|f| no_grad_callees.contains(m.text(f.name))) {
                continue;
            }
            let trains_here =
                func.is_some_and(|f| f.backward) || (func.is_none() && module_backward);
            let first = m.calls.partition_point(|c| c.span.start < l.span.start);
            let bare_calls = m
                .calls
                .get(first..)
                .unwrap_or(&[])
                .iter()
                .take_while(|c| c.span.start < l.span.end)
                .filter(|c| c.ctx.loop_ == Some(li as u32) && !c.ctx.no_grad && !m.dead(&c.ctx))
                .filter(|c| {
                    direct_forward(m, c)
                        || match (c.method, c.recv) {
                            (None, _) => forward_fns.contains(&(false, m.text(c.func))),
                            // `self._process_one_batch(...)`: a method of the same class
                            (Some(meth), Some(r)) => {
                                m.text(r) == "self" && forward_fns.contains(&(true, m.text(meth)))
                            }
                            _ => false,
                        }
                })
                .count();
            if bare_calls == 0 {
                continue;
            }
            // (a loop that builds adversarial examples or saliency maps needs autograd:
            // `x_pgd = projected_gradient_descent(net, x, eps, ...)`, `adversary.perturb(x, y)`)
            let needs_grad = m
                .calls
                .get(first..)
                .unwrap_or(&[])
                .iter()
                .take_while(|c| c.span.start < l.span.end)
                .any(|c| {
                    let name = m.last_name(c).to_ascii_lowercase();
                    !c.ctx.no_grad
                        && (crate::analysis::resolve::names_attack(&name)
                            || GRADIENT_WORDS.iter().any(|w| name.contains(w)))
                });
            if needs_grad {
                continue;
            }
            // (`Variable(x, volatile=True)`, PyTorch 0.3's no-grad mode, has done nothing since
            // 0.4: on the PyTorch the runner installs, autograd is on)
            // the last `.eval()` / `.train()` before the loop in the same function decides the
            // mode; calls of the function precede the loop contiguously (nested defs have higher
            // indices), so the backward scan stops at the function's start
            let eval_called = m
                .calls
                .get(..first)
                .unwrap_or(&[])
                .iter()
                .rev()
                .take(4096)
                .take_while(|c| match (l.ctx.func, c.ctx.func) {
                    (Some(f), Some(g)) => g >= f,
                    (Some(_), None) => false,
                    (None, _) => true,
                })
                .find(|c| {
                    c.ctx.func == l.ctx.func
                        && c.method.is_some()
                        && matches!(m.last_name(c), "eval" | "train")
                        && (m.call_args(c).is_empty() || eval_by_train_false(m, c))
                })
                .is_some_and(|c| m.last_name(c) == "eval" || eval_by_train_false(m, c))
                // (or at the top of the loop's own body, each iteration: `for x, y in
                // val_loader: model.eval(); outputs = model(x)`)
                || m
                    .calls
                    .get(first..)
                    .unwrap_or(&[])
                    .iter()
                    .take_while(|c| c.span.start < l.span.end)
                    .filter(|c| c.ctx.loop_ == Some(li as u32) && !c.ctx.under_if)
                    .take_while(|c| !direct_forward(m, c))
                    .any(|c| {
                        c.method.is_some()
                            && m.last_name(c) == "eval"
                            && m.call_args(c).is_empty()
                            && !m.dead(&c.ctx)
                    });
            if (trains_here || in_step) && !eval_called {
                continue;
            }
            if inside_reported(m, l, &reported) {
                continue;
            }
            if by_phase {
                // wrapping the loop in `no_grad` would stop its training phase: the fix is
                // `torch.set_grad_enabled(phase == 'train')` around the forward, by hand
                let message = match by_flag {
                    Some(flag) => format!(
                        "evaluation pass (`{flag}=False`) runs the model with autograd on: wrap the forward in `with torch.set_grad_enabled({flag}):`"
                    ),
                    None => "evaluation phase runs the model with autograd on: wrap the forward in `with torch.set_grad_enabled(phase == 'train'):`".to_string(),
                };
                cx.at(&Self::META, l.line, l.col, l.end_line, message, None);
                reported.extend(u32::try_from(li).ok());
                continue;
            }
            // (also `val` as a word of the name: `do_val`, `val_model`, `run_val_epoch`)
            let eval_name = func.is_some_and(|f| {
                let n = m.text(f.name).to_ascii_lowercase();
                EVAL_NAMES.iter().any(|e| n.contains(e)) || n.split('_').any(|w| w == "val")
            });
            let infer_only = m.kind == CodeKind::Infer;
            if !(eval_called || eval_name || infer_only) {
                continue;
            }
            cx.at(
                &Self::META,
                l.line,
                l.col,
                l.end_line,
                "evaluation loop runs the model with autograd on: wrap it in `with torch.no_grad():` (or `torch.inference_mode()`)".to_string(),
                wrap_fix(m, l.span.start, l.span.end),
            );
            reported.extend(u32::try_from(li).ok());
        }
    }
}

/// Does loop `l` sit inside a loop this rule has already reported? Its `no_grad` (and the fix
/// that wraps the outer loop) covers the inner one: a sliding window's row and column loops
/// inside the loop over images are one finding.
// Ex) for file in files: ... for y in range(0, h, s): for x in range(0, w, s): model(crop)
fn inside_reported(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    reported: &[u32],
) -> bool {
    let mut cur = l.parent;
    for _ in 0..256 {
        let Some(p) = cur else { return false };
        if reported.contains(&p) {
            return true;
        }
        cur = m.loops.get(p as usize).and_then(|x| x.parent);
    }
    false
}

/// Does loop `l` train in one phase and evaluate in another: it iterates a loader chosen by
/// the target of a loop around it (`for x, y in dataloaders[phase]:`), which goes over phases
/// written out with one not named for training (`for phase in ['train', 'val']:`), puts the
/// model in `eval()` mode before it, runs its backward passes only under a test of the phase
/// (`if phase == 'train': loss.backward()`), and nothing in the phase loop switches autograd
/// (`torch.set_grad_enabled(phase == 'train')`, `no_grad`)?
// Ex) for phase in ['train', 'val']: ... model.eval() ... for inputs, labels in dataloaders[phase]:
fn evaluates_by_phase(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> bool {
    let Some(outer) = l.parent.and_then(|p| m.loops.get(p as usize)) else {
        return false;
    };
    let [target] = outer.targets.as_slice() else {
        return false;
    };
    let phase = m.text(*target);
    let Some(items) = outer.iter.and_then(|it| m.node(it)) else {
        return false;
    };
    let mut cursor = items.walk();
    let evaluates = matches!(items.node_kind(), "list" | "tuple")
        && items.named_children(&mut cursor).any(|x| {
            x.node_kind() == "string"
                && !m
                    .node_text(x)
                    .trim_matches(|ch| ch == '\'' || ch == '"')
                    .to_ascii_lowercase()
                    .starts_with("train")
        });
    let by_phase = l
        .iter
        .is_some_and(|it| m.text(it).contains(&format!("[{phase}]")));
    let switches_grad = m.calls.iter().any(|c| {
        outer.span.contains(c.span)
            && matches!(
                m.last_name(c),
                "set_grad_enabled" | "no_grad" | "inference_mode" | "enable_grad"
            )
    });
    // (also `model.train(False)`, the same switch)
    let eval_before = m.calls.iter().any(|c| {
        outer.span.contains(c.span)
            && c.span.end <= l.span.start
            && c.method.is_some()
            && (m.last_name(c) == "eval" || eval_by_train_false(m, c))
    });
    evaluates && by_phase && !switches_grad && eval_before && backward_under_test(m, l, phase)
}

/// Does every backward pass of loop `l` (one at least) sit under an `if` in the loop whose test
/// names `name` (`if phase == 'train': loss.backward()`, `if train: loss.backward()`)?
fn backward_under_test(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
    name: &str,
) -> bool {
    let backwards: Vec<&crate::analysis::facts::Call> = m
        .calls
        .iter()
        .filter(|c| l.span.contains(c.span) && m.last_name(c) == "backward" && c.method.is_some())
        .collect();
    !backwards.is_empty()
        && backwards.iter().all(|c| {
            let mut n = m.node(c.span);
            for _ in 0..64 {
                let Some(cur) = n else { return false };
                if cur.start_byte() <= l.span.start {
                    return false;
                }
                if cur.node_kind() == "if_statement"
                    && cur.child_by_field_name("condition").is_some_and(|k| {
                        crate::analysis::rules::words(m.node_text(k)).any(|w| w == name)
                    })
                {
                    return true;
                }
                n = cur.parent();
            }
            false
        })
}

/// Does loop `l` train or evaluate by a flag its function is handed: a parameter (`def
/// run_epoch(loader, model, criterion, optimizer=None, train=True):`) that every backward pass
/// of the loop is tested on (`if train: loss.backward()`), the function putting the model in
/// `eval()` mode before the loop and switching autograd nowhere, and a call of the function
/// that runs as shipped passing the flag `False` outside `no_grad` (`run_epoch(val_loader,
/// model, criterion, train=False)`)? Returns the flag's name.
// Ex) def run_epoch(loader, model, criterion, optimizer=None, train=True): ... if train: loss.backward()
fn evaluates_by_flag<'s>(
    m: &'s crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> Option<&'s str> {
    let fi = l.ctx.func?;
    let f = m.funcs.get(fi as usize)?;
    let name = m.text(f.name);
    let in_func = |c: &crate::analysis::facts::Call| c.ctx.func == Some(fi);
    let switches_grad = m.calls.iter().any(|c| {
        in_func(c)
            && matches!(
                m.last_name(c),
                "set_grad_enabled" | "no_grad" | "inference_mode" | "enable_grad"
            )
    });
    let eval_before = m.calls.iter().any(|c| {
        in_func(c) && c.span.end <= l.span.start && c.method.is_some() && m.last_name(c) == "eval"
    });
    if switches_grad || !eval_before {
        return None;
    }
    f.params.iter().enumerate().find_map(|(i, (p, _))| {
        let flag = m.text(*p);
        let off = |v: &str| matches!(v, "False" | "0");
        let passed_off = m.calls.iter().any(|c| {
            c.method.is_none()
                && m.text(c.func) == name
                && !c.ctx.no_grad
                && !m.dead(&c.ctx)
                && m.call_args(c)
                    .iter()
                    .enumerate()
                    .any(|(j, a)| match a.name {
                        Some(k) => m.text(k) == flag && off(m.text(a.value)),
                        None => j == i && i < f.positional && off(m.text(a.value)),
                    })
        });
        (passed_off && backward_under_test(m, l, flag)).then_some(flag)
    })
}

/// A forward pass written out: `model(x)` or `model.forward(x)` of a model (not a Hugging Face
/// pipeline, which disables autograd itself).
fn direct_forward(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    is_model_call(m, c)
        && c.method.is_none_or(|meth| m.text(meth) == "forward")
        && !pipeline(m, m.text(c.func))
}

/// Wraps the statement at `start..end` in `with torch.no_grad():`, re-indenting its lines.
fn wrap_fix(m: &crate::analysis::facts::Model<'_>, start: usize, end: usize) -> Option<Fix> {
    let torch = torch_name(m)?;
    let (ls, indent) = line_start_indent(m.src, start);
    if ls + indent.len() != start {
        return None;
    }
    let body = m.src.get(ls..end)?;
    if body.contains("\"\"\"") || body.contains("'''") || body.contains('\\') {
        return None;
    }
    // the body's own indentation step (a tab-indented file must stay tab-indented)
    let body_indent = body
        .split('\n')
        .skip(1)
        .find(|l| !l.trim().is_empty())
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .unwrap_or("");
    let unit = match body_indent.strip_prefix(indent) {
        Some(step) if !step.is_empty() && step.chars().all(|c| c == ' ' || c == '\t') => step,
        _ if indent.contains('\t') => "\t",
        _ => "    ",
    };
    let mut out = format!("{indent}with {torch}.no_grad():\n");
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !line.trim().is_empty() {
            out.push_str(unit);
        }
        out.push_str(line);
    }
    Some(Fix {
        applicability: Applicability::Safe,
        edits: vec![Edit {
            start: ls,
            end,
            content: out,
        }],
    })
}

/// Is `name` a Hugging Face pipeline (`StableDiffusionPipeline.from_pretrained(...)`,
/// `pipeline("text-generation")`) or an Ultralytics model (`YOLO("yolov8s.pt")`, also YOLOv5
/// through `torch.hub.load("ultralytics/yolov5", ...)`)? Its `__call__` runs under
/// `torch.no_grad()` / `torch.inference_mode()` itself.
fn pipeline(m: &crate::analysis::facts::Model<'_>, name: &str) -> bool {
    m.assigns.iter().any(|a| {
        a.targets.len() == 1 && m.text(a.left) == name && {
            let v = m.text(a.value);
            v.contains("Pipeline")
                || v.starts_with("pipeline(")
                || a.rhs_call
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|c| {
                        let q = m.qual(c);
                        q.starts_with("ultralytics.")
                            || (q == "torch.hub.load"
                                && m.text(c.args_span).contains("ultralytics/"))
                    })
        }
    })
}

/// Words of a function's name that say it differentiates through the model for a map of its
/// input (saliency, Grad-CAM), besides an adversarial attack's ([`names_attack`]): a loop
/// calling one needs autograd on.
///
/// [`names_attack`]: crate::analysis::resolve::names_attack
const GRADIENT_WORDS: [&str; 4] = ["gradient", "saliency", "gradcam", "grad_cam"];

/// Does the model whose parameters `iter` walks (`model.parameters()`) get a new layer after
/// byte `at` (`model.fc = nn.Linear(num_ftrs, 2)`, the transfer-learning tutorial's head)? Its
/// fresh weights require grad: the model is not frozen.
fn new_head_after(m: &crate::analysis::facts::Model<'_>, iter: &str, at: usize) -> bool {
    let Some(model) = iter.strip_suffix(".parameters()") else {
        return false;
    };
    let prefix = format!("{model}.");
    m.assigns.iter().any(|a| {
        a.span.start >= at
            && !a.augmented
            && m.text(a.left).starts_with(&prefix)
            && a.rhs_call
                .and_then(|c| m.calls.get(c as usize))
                .is_some_and(|c| super::torch_layer(m, c))
    })
}

/// Are some of the parameters that `iter` walks (`model.parameters()`) made trainable again
/// after byte `at` (`for p in model.fc.parameters(): p.requires_grad = True`, fine-tuning
/// the head)? Those record a graph: the model is not frozen.
fn thawed_after(m: &crate::analysis::facts::Model<'_>, iter: &str, at: usize) -> bool {
    let Some(model) = iter.strip_suffix(".parameters()") else {
        return false;
    };
    m.assigns.iter().any(|a| {
        a.span.start >= at
            && grad_switch_loop(m, a, crate::analysis::facts::ValKind::True).is_some_and(|it| {
                it.strip_prefix(model)
                    .is_some_and(|rest| rest.starts_with('.') && it.contains("parameters()"))
            })
    })
}

/// What the loop around assignment `a` iterates, when `a` sets `.requires_grad` to the
/// literal `value` (`for p in model.parameters(): p.requires_grad = False`).
fn grad_switch_loop<'s>(
    m: &crate::analysis::facts::Model<'s>,
    a: &crate::analysis::facts::Assign,
    value: crate::analysis::facts::ValKind,
) -> Option<&'s str> {
    if !m.text(a.left).ends_with(".requires_grad") || a.vkind != value {
        return None;
    }
    a.ctx
        .loop_
        .and_then(|l| m.loops.get(l as usize))
        .and_then(|l| l.iter)
        .map(|it| m.text(it))
}

/// Is `c` a module's `.train(False)`, the same switch as `.eval()`?
fn eval_by_train_false(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    c.method.is_some()
        && m.last_name(c) == "train"
        && matches!(m.call_args(c), [a] if a.name.is_none() && m.text(a.value) == "False")
}
