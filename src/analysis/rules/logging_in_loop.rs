use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `print(...)` and `logging` / `logger` calls in a training step loop that are not
    /// under a `step % N == 0` guard. Inference and evaluation loops are left alone: a line per
    /// image or batch is their report, and it costs microseconds beside the forward pass
    /// (a tensor formatted into it is a host sync, EA301's matter).
    ///
    /// ## Why is this slow?
    /// Formatting a tensor for a log line copies it to the host and synchronises with the GPU;
    /// writing to the terminal or a file every step adds system calls on the critical path.
    /// Logging every N steps keeps the information at a fraction of the cost.
    ///
    /// ## Example
    /// ```python
    /// for step, (x, y) in enumerate(train_loader):
    ///     loss = criterion(model(x), y)
    ///     loss.backward()
    ///     print(f"step {step}: loss {loss}")
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// for step, (x, y) in enumerate(train_loader):
    ///     loss = criterion(model(x), y)
    ///     loss.backward()
    ///     if step % 100 == 0:
    ///         print(f"step {step}: loss {loss}")
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: the logging interval is a choice.
    pub(crate) struct LoggingInLoop {
        id: "EA504",
        name: "logging-every-step",
        category: LoggingInLoop,
        resource: Cpu,
        severity: Low,
    }
}

impl Rule for LoggingInLoop {
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
            if c.ctx.in_except {
                continue;
            }
            let is_log = match c.method {
                None => m.text(c.func) == "print",
                Some(meth) => {
                    let meth = m.text(meth);
                    let recv = c.recv.map_or("", |r| m.text(r)).to_ascii_lowercase();
                    (recv == "logging" && matches!(meth, "info" | "debug" | "warning" | "log"))
                        || ((recv.ends_with("logger") || recv == "log")
                            && matches!(meth, "info" | "debug" | "warning"))
                        || (recv == "tqdm" && meth == "write")
                }
            };
            if !is_log {
                continue;
            }
            let Some(s) = super::step_ctx(m, c) else {
                continue;
            };
            // an inference loop's line per image or batch is its report (what was read, what
            // came out) and costs microseconds beside the forward pass it follows
            if s.mod_guard || !s.train {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                "logging every step: guard it with `if step % N == 0:`".to_string(),
                None,
            );
        }
    }
}
