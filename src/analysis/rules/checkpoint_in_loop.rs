use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a checkpoint written every step: `torch.save`, `save_pretrained`,
    /// `save_checkpoint`, `save_state` or `save_model` directly in a step loop, not under any
    /// `if`.
    ///
    /// Reported on the line of the save call.
    ///
    /// ## Why is this slow?
    /// Serialising the model (and often the optimizer state, twice the model's size for Adam)
    /// copies every parameter to the host and writes it to disk: seconds per call for large
    /// models, every step, while the GPU idles.
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// for step, (x, y) in enumerate(train_loader):
    ///     loss = criterion(model(x), y)
    ///     loss.backward()
    ///     torch.save(model.state_dict(), "ckpt.pt")
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// for step, (x, y) in enumerate(train_loader):
    ///     loss = criterion(model(x), y)
    ///     loss.backward()
    ///     if step % 1000 == 0:
    ///         torch.save(model.state_dict(), "ckpt.pt")
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: the checkpoint interval is a choice (how much work a crash may lose).
    pub(crate) struct CheckpointInLoop {
        id: "EA503",
        name: "checkpoint-every-step",
        category: CheckpointInLoop,
        resource: Io,
        severity: High,
    }
}

impl Rule for CheckpointInLoop {
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
            let save = m.qual(c) == "torch.save"
                || (c.method.is_some()
                    && matches!(
                        last,
                        "save_pretrained" | "save_checkpoint" | "save_state" | "save_model"
                    ));
            if !save || c.ctx.in_except {
                continue;
            }
            let Some(s) = super::step_ctx(m, c) else {
                continue;
            };
            if s.under_if || s.mod_guard || !s.train {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                "checkpoint written every step: save every N steps or once per epoch".to_string(),
                None,
            );
        }
    }
}
