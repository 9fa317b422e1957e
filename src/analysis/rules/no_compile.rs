use crate::analysis::fix::{line_start_indent, torch_name};
use crate::analysis::model::{Applicability, Edit, Fix};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

/// The most optimizer steps a training may be capped at (a Trainer's `max_steps`, the known
/// iterations of a training loop) for compiling not to pay.
const FEW_TRAINER_STEPS: i64 = 100;

declare_rule! {
    /// ## What it does
    /// Flags a CUDA training script that never calls `torch.compile` (nor sets HF
    /// `torch_compile=True`). Reported where the model is placed on the device. Not reported
    /// when every training loop runs at most 100 known iterations in all (`for i in range(50)`,
    /// a timed demo, or a loader loop that breaks off at `if step == 50: break`; the counts of
    /// loops around it multiply, and one around it that runs no pass, `range(args.epoch)` with
    /// `default=-1`, leaves none), nor for a Hugging Face Trainer capped likewise (`TrainingArguments(max_steps=50)`):
    /// the compilation would take longer than it could save (18.8 s to compile
    /// against a 1.33x faster step on an H200, BENCHMARKS.md). Nor for int8/4-bit weights
    /// (`load_in_8bit=True`, `quantization_config=`), where `torch.compile` support is patchy.
    /// An `Accelerator()` without `dynamo_backend=` runs eagerly as shipped (flagged); one whose
    /// backend comes from elsewhere (`dynamo_backend=args.backend`) may compile (silent).
    ///
    /// Reported where the trained model is placed on the device (`model = Net().to(device)`,
    /// `model.cuda()`; also where the function that runs the training loop places a model it is
    /// handed, `def run_training(D, G, ...): D.cuda()`, ahead of a sampling helper's own copy),
    /// else (a placement only under a switch that is off as shipped, `if n_gpu > 1:` with
    /// `n_gpu = 1`, being none) where it is built (not at `accelerator.prepare(model)` /
    /// `fabric.setup(model)` / `deepspeed.initialize(model=net)`: a trained model handed to them is anchored where it is built (the last build before, when it is unconditional),
    /// ahead of a frozen one the file moves itself, as DreamBooth's U-Net ahead of
    /// `text_encoder.to(accelerator.device)`; for a Lightning script, where the module `trainer.fit(model)`
    /// trains is built: `model = LitClassifier(cfg)`); the fix compiles it on the next line (for
    /// a Hugging Face Trainer, the `TrainingArguments(` call, unless the script moves the model
    /// itself before it, `model.to(device)`, also in a function of the file called first,
    /// `self.setup_model()`: there). An Ignite script whose trainer
    /// runs (`create_supervised_trainer(model, ...)` or `Engine(step)`, then `trainer.run(...)`)
    /// is judged like one with its own loop.
    ///
    /// ## Why is this slow?
    /// Eager PyTorch launches one kernel per operation and writes every intermediate to GPU
    /// memory. `torch.compile` fuses pointwise chains and cuts launch overhead: 43 % faster
    /// training on average over 163 models on an A100 (PyTorch 2.0 benchmark).
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// model = Net().to("cuda")
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = criterion(model(x), y)
    ///     loss.backward()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// model = Net().to("cuda")
    /// model = torch.compile(model)
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = criterion(model(x), y)
    ///     loss.backward()
    /// ```
    ///
    /// ## Fix safety
    /// `numerics`: fused kernels round differently; compile takes time up front, dynamic shapes
    /// can recompile, and checkpoint keys gain an `_orig_mod.` prefix (save
    /// `model._orig_mod.state_dict()`).
    pub(crate) struct NoCompile {
        id: "EA203",
        name: "training-without-compile",
        category: NoCompile,
        resource: Gpu,
        severity: Medium,
    }
}

impl Rule for NoCompile {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if !super::cuda(m)
            || (m.kind != crate::analysis::model::CodeKind::Train && super::ignite_run(m).is_none())
            || m.facts.compile
            || m.compile_unknown
        {
            return;
        }
        // Scripts with their own training loop, HF `TrainingArguments`, a Lightning
        // `trainer.fit(model)` or an Ignite `trainer.run(loader)` are judged (other frameworks
        // own a loop the file does not show).
        // A loop handing the optimizer to the user's own `train_one_epoch` (in another module)
        // is judged too: the model is built and placed here, so `torch.compile` belongs here.
        let framework_loop = super::first_train_loop(m).is_none()
            && (super::lightning_fit(m).is_some() || super::ignite_run(m).is_some());
        if super::first_train_loop(m).is_none()
            && super::hf_args_call(m).is_none()
            && !m.delegated_train
            && !framework_loop
        {
            return;
        }
        // int8/4-bit weights (bitsandbytes): where `torch.compile` support is patchy
        if quantized(m) {
            return;
        }
        // `for i in range(opt.steps)` with `--steps` defaulting to 15, or a timed demo of fifty
        // steps (`for i in range(50)`): compiling costs seconds to minutes up front, more than
        // a hundred steps at most can win back (as for a Trainer capped at `max_steps`)
        let mut train_loops = m
            .loops
            .iter()
            .filter(|l| super::live_train_loop(m, l))
            .peekable();
        if !m.delegated_train
            && train_loops.peek().is_some()
            && train_loops.all(|l| total_iterations(m, l).is_some_and(|n| n <= FEW_TRAINER_STEPS))
        {
            return;
        }
        // Ex) TrainingArguments(..., max_steps=50): a demo run over before compiling pays off
        if super::first_train_loop(m).is_none()
            && !m.delegated_train
            && let Some(args) = super::hf_args_call(m)
            && let Some(steps) = m.kw(args, "max_steps")
            && matches!(
                m.resolve(&steps, args.span.start, args.ctx.func),
                crate::analysis::facts::Val::Int(n) if (1..=FEW_TRAINER_STEPS).contains(&n)
            )
        {
            return;
        }
        let anchor =
            if super::first_train_loop(m).is_none() && !m.delegated_train && !framework_loop {
                // a Hugging Face Trainer script: reported where it moves the model itself
                // (`model.to(device)` before `TrainingArguments(...)`, in the same scope or in a
                // function of the file that scope calls first, `self.setup_model()`; not a
                // `device_map` load, nor an evaluation copy in a method), else at
                // `TrainingArguments`
                super::model_placement(m).filter(|(line, _, _)| {
                    super::hf_args_call(m).is_some_and(|args| {
                        m.calls.iter().any(|c| {
                            c.line == *line
                                && c.method.is_some()
                                && matches!(m.last_name(c), "to" | "cuda")
                                && ((c.ctx.func == args.ctx.func && c.span.start < args.span.start)
                                    || (c.ctx.func.is_some()
                                        && c.ctx.func != args.ctx.func
                                        && super::calls_of(m, c.ctx.func).any(|k| {
                                            k.ctx.func == args.ctx.func
                                                && k.span.start < args.span.start
                                        })))
                        })
                    })
                })
            } else {
                super::model_anchor(m)
            };
        let (line, col, fix) = match anchor {
            Some((line, col, a)) => {
                let fix = a.and_then(|ai| m.assigns.get(ai)).and_then(|a| {
                    let target = m.text(a.left);
                    let t = torch_name(m)?;
                    if !target
                        .chars()
                        .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.')
                    {
                        return None;
                    }
                    let (ls, indent) = line_start_indent(m.src, a.span.start);
                    if ls + indent.len() != a.span.start {
                        return None;
                    }
                    let eol = m
                        .src
                        .get(a.span.end..)?
                        .find('\n')
                        .map(|i| a.span.end + i + 1)?;
                    Some(Fix {
                        applicability: Applicability::Numerics,
                        edits: vec![Edit {
                            start: eol,
                            end: eol,
                            content: format!("{indent}{target} = {t}.compile({target})\n"),
                        }],
                    })
                });
                (line, col, fix)
            }
            None => match super::hf_args_call(m) {
                Some(c) => (c.line, c.col, None),
                None => return,
            },
        };
        cx.at(
            &Self::META,
            line,
            col,
            line,
            "CUDA training without `torch.compile`: eager mode launches one kernel per op; compile the model after moving it to the device".to_string(),
            fix,
        );
    }
}

/// Does the file load int8/4-bit weights anywhere (`load_in_8bit=True`, `load_in_4bit=True`,
/// a `quantization_config=`), even behind a switch?
fn quantized(m: &crate::analysis::facts::Model<'_>) -> bool {
    m.calls.iter().any(|c| {
        m.call_args(c)
            .iter()
            .any(|a| crate::analysis::resolve::quantized_weights(m, a))
    })
}

/// How many times the body of loop `l` runs in all, when the file says: its own known
/// iterations times those of each loop around it (`for epoch in range(200): for step in
/// range(50):` is 10,000), and unknown in a function the file calls from a loop.
fn total_iterations(
    m: &crate::analysis::facts::Model<'_>,
    l: &crate::analysis::facts::Loop,
) -> Option<i64> {
    // the loop's own count times those of the loops around it; one around it that runs no
    // pass as shipped (`for epoch in range(args.epoch)` with `default=-1`) runs it never,
    // whatever the others iterate
    let mut total = Some(1_i64);
    let mut cur = Some(l);
    for _ in 0..65 {
        let Some(x) = cur else { break };
        match super::known_iterations(m, x) {
            Some(n) if n <= 0 => return Some(0),
            n => total = total.zip(n).and_then(|(t, n)| t.checked_mul(n)),
        }
        cur = x.parent.and_then(|p| m.loops.get(p as usize));
    }
    let total = total?;
    let called_in_loop = l
        .ctx
        .func
        .and_then(|f| m.funcs.get(f as usize))
        .is_some_and(|f| {
            let name = m.text(f.name);
            m.calls
                .iter()
                .any(|k| k.ctx.loop_.is_some() && m.last_name(k) == name)
        });
    (!called_in_loop).then_some(total)
}
