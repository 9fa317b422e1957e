use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `print(...)` and `logging` / `logger` calls in a training step loop, or an
    /// inference loop over a `DataLoader`, that are not under a `step % N == 0` guard. In an
    /// inference loop, a line of only text and shapes (`print("done:", emb.shape)`) is not
    /// flagged: it formats no tensor and waits for nothing.
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
            // printing each result of a per-item inference loop is its output, not logging
            let batched = m.kind != crate::analysis::model::CodeKind::Data
                && m.loops
                    .get(s.loop_ as usize)
                    .is_some_and(|l| l.info.iterates_loader.is_some());
            if s.mod_guard || !(s.train || batched) {
                continue;
            }
            // one line of text and shapes per batch of an inference loop: no tensor is
            // formatted, nothing waits for the device, and the line costs microseconds
            if !s.train && metadata_only(m, c) {
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

/// Does the call log only text and shapes: string literals (f-string fields included),
/// `x.shape` / `x.shape[i]` / `x.ndim` / `x.dtype` / `x.device`, `len(x)`, `x.size()`?
// Ex) print("Embeddings computed for 1 batch. Shape:", emb.shape)
fn metadata_only(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    let Some(args) = m.node(c.args_span) else {
        return false;
    };
    let text = |n: tree_sitter::Node<'_>| m.src.get(n.start_byte()..n.end_byte()).unwrap_or("");
    let mut stack: Vec<tree_sitter::Node<'_>> = {
        let mut cur = args.walk();
        args.named_children(&mut cur).collect()
    };
    if stack.is_empty() {
        return false;
    }
    while let Some(n) = stack.pop() {
        match n.kind() {
            "string" | "concatenated_string" | "interpolation" | "format_specifier" => {
                let mut cur = n.walk();
                stack.extend(n.named_children(&mut cur).filter(|k| {
                    !matches!(
                        k.kind(),
                        "string_start" | "string_content" | "string_end" | "escape_sequence"
                    )
                }));
            }
            "keyword_argument" => {
                if let Some(v) = n.child_by_field_name("value") {
                    stack.push(v);
                }
            }
            "integer" | "true" | "false" | "none" => {}
            "attribute" => {
                let attr = n.child_by_field_name("attribute").map_or("", text);
                if !matches!(attr, "shape" | "ndim" | "dtype" | "device") {
                    return false;
                }
            }
            "subscript" => {
                let value = n.child_by_field_name("value");
                let index_ok = n
                    .child_by_field_name("subscript")
                    .is_some_and(|i| matches!(i.kind(), "integer" | "unary_operator"));
                match value {
                    Some(v) if index_ok && v.kind() == "attribute" => stack.push(v),
                    _ => return false,
                }
            }
            "call" => {
                let f = n.child_by_field_name("function");
                let ok = f.is_some_and(|f| {
                    let t = text(f);
                    t == "len"
                        || (f.kind() == "attribute"
                            && f.child_by_field_name("attribute").map_or("", text) == "size")
                });
                if !ok {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}
