use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `.item()`, `.cpu()`, `.numpy()` and `.tolist()` in a step loop (training or
    /// inference) on CUDA, when not under a `step % N == 0` guard.
    ///
    /// ## Why is this slow?
    /// Reading a GPU value on the host waits until every queued kernel has run: the CPU stops
    /// issuing work, the GPU drains its queue and then idles while the CPU catches up. Once per
    /// step this serialises host and device (HTA "host wait").
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// device = torch.device("cuda")
    /// model.eval()
    /// with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    ///     for x, y in val_loader:
    ///         correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// device = torch.device("cuda")
    /// model.eval()
    /// with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
    ///     for x, y in val_loader:
    ///         correct += (model(x.to(device)).argmax(1) == y.to(device)).sum()
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: accumulate on the device (`loss.detach()`) and read the value once
    /// every N steps or at the end of the epoch. Values used for control flow (early stopping,
    /// NaN checks) need the same cadence change.
    pub(crate) struct HostSync {
        id: "EA301",
        name: "host-sync-in-step-loop",
        category: HostSync,
        resource: Gpu,
        severity: Medium,
    }
}

impl Rule for HostSync {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if !super::cuda(m) {
            return;
        }
        for c in &m.calls {
            if c.method.is_none() || c.ctx.in_except || !m.call_args(c).is_empty() {
                continue;
            }
            let last = m.last_name(c);
            if !matches!(last, "item" | "cpu" | "numpy" | "tolist") {
                continue;
            }
            let Some(s) = super::step_ctx(m, c) else {
                continue;
            };
            if s.mod_guard {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                format!("`.{last}()` in the step loop waits for the GPU every step; keep values on the device and read them every N steps"),
                None,
            );
        }
    }
}
