use crate::analysis::facts::VarKind;
use crate::analysis::resolve::is_dataloader;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags work in a step loop whose result does not change between iterations: loading a
    /// model or tokenizer (`from_pretrained`), building an optimizer or a `DataLoader`,
    /// `torch.compile`, or moving the model to the device (`model.to(device)`), in the loop's
    /// body (not its own iterable, `for x, y in DataLoader(ds, ...)`, built once per pass), when
    /// not under an `if`, and when its arguments do not derive from the loop's item (a loader over each
    /// subject's patches is rebuilt per subject because its data change) nor name something
    /// the loop rebinds (`opt = optim.SGD([x_adv])` ... `x_adv = x_adv + eta`, a PGD attack's
    /// optimizer over the new adversarial input). A loader over indices (`DataLoader(range(n),
    /// batch_size)`) costs nothing to build.
    ///
    /// Reported on the line of the call repeated every step.
    ///
    /// ## Why is this slow?
    /// These calls read files, allocate and copy every parameter, or spawn processes: seconds
    /// per call, repeated every step. A new optimizer also loses its state (momentum, Adam
    /// moments) each step.
    ///
    /// ## Example
    /// ```python
    /// import torch
    /// from transformers import AutoTokenizer
    ///
    /// with torch.no_grad():
    ///     for texts in batches:
    ///         tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
    ///         out = model(**tokenizer(texts, return_tensors="pt"))
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// from transformers import AutoTokenizer
    ///
    /// tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
    /// with torch.no_grad():
    ///     for texts in batches:
    ///         out = model(**tokenizer(texts, return_tensors="pt"))
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: hoisting changes when the object is created; an optimizer rebuilt on
    /// purpose (a schedule) must be kept.
    pub(crate) struct RedundantWorkInLoop {
        id: "EA701",
        name: "loop-invariant-setup-in-step-loop",
        category: RedundantWorkInLoop,
        resource: Gpu,
        severity: High,
    }
}

impl Rule for RedundantWorkInLoop {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        for c in &m.calls {
            let last = m.last_name(c);
            let q = m.qual(c);
            let what = if last == "from_pretrained" {
                "loading pretrained weights"
            } else if q.starts_with("torch.optim.")
                && !q.contains("lr_scheduler")
                // a constructor (`optim.Adam(...)`), not a method of an optimizer that took the
                // module's name (`optim = optim.Adam(...)` ... `optim.step()`)
                && last.starts_with(|ch: char| ch.is_ascii_uppercase())
            {
                "building an optimizer"
            } else if is_dataloader(m, c) && !super::index_loader(m, c) {
                "building a DataLoader"
            } else if q == "torch.compile" {
                "compiling the model"
            } else if matches!(last, "to" | "cuda")
                && c.recv
                    .is_some_and(|r| m.var_kind(m.text(r)) == Some(VarKind::Model))
                && c.recv_call.is_none()
            {
                "moving the model to the device"
            } else {
                continue;
            };
            let Some(s) = super::step_ctx(m, c) else {
                continue;
            };
            if s.under_if {
                continue;
            }
            // `for ckpt in checkpoints: model = load(ckpt)` / `for model in models: model.to(d)`
            // changes every iteration: not loop-invariant
            let Some(l) = m.loops.get(s.loop_ as usize) else {
                continue;
            };
            // (not the loop's own iterable, `for data, target in DataLoader(ds, ...)`: built
            // once per pass, before its first step)
            if l.iter.is_some_and(|it| it.contains(c.span)) {
                continue;
            }
            // the loop's targets, its batch, and every name the body derives from them before
            // the call (`patched = patch(data["image"])`, `ds = TensorDataset(patched)`)
            let mut derived: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
            derived.extend(l.info.batch_names.iter().map(String::as_str));
            for a in m
                .assigns
                .iter()
                .filter(|a| l.span.contains(a.span) && a.span.end <= c.span.start && !a.augmented)
            {
                if super::words(m.text(a.value)).any(|w| derived.contains(&w)) {
                    derived.extend(a.targets.iter().map(|t| m.text(*t)));
                }
            }
            // and every name the body rebinds after the call: the next iteration's call sees
            // the new value (`opt = optim.SGD([x_adv])` ... `x_adv = Variable(x_adv + eta)`)
            derived.extend(
                m.assigns
                    .iter()
                    .filter(|a| l.span.contains(a.span) && a.span.start >= c.span.end)
                    .flat_map(|a| a.targets.iter().map(|t| m.text(*t))),
            );
            let mentions_target = |text: &str| super::words(text).any(|w| derived.contains(&w));
            if mentions_target(m.text(c.args_span))
                || c.recv.is_some_and(|r| mentions_target(m.text(r)))
            {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                format!("{what} inside the step loop repeats loop-invariant work every step: do it once before the loop"),
                None,
            );
        }
    }
}
