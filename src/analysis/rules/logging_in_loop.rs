use crate::analysis::facts::NodeKind;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags `print(...)` and `logging` / `logger` calls (`logging.info(...)`, `logger.info` /
    /// `.debug` / `.warning`, `tqdm.write`; not a metrics writer's `logger.add_scalar(...)`, whose
    /// cost is the `.item()` it is handed, EA301) in a training step loop that are not
    /// under a `step % N == 0` guard (nor in a branch that runs once, `if not
    /// warmup_completed:` with the flag set right after it), nor under a test of a reinforcement-learning episode's
    /// end (`if done:`, `if "episode" in info:`), which runs once per episode, nor in the loop's
    /// `else:` clause, which runs once after it. In an inference
    /// or evaluation loop only a line that formats what the model returned, or what the loop
    /// computes from it on the device, is flagged (`print("emb", emb)`, `_, predicted =
    /// torch.max(out, 1)` then `print(predicted)`: formatting the tensor waits for the GPU; not a
    /// running total, `correct += ...`): a line of names, counters, text and shapes per image or
    /// batch is the loop's report and costs microseconds, and so is a result already on the host
    /// (`pred = logits.argmax().item()` then `print("Predicted class:", pred)`, a label string
    /// or a confidence a helper returns, a sentence decoded from `generate`, a Keras or
    /// scikit-learn `model.predict(x)` in a file without PyTorch, a NumPy array).
    ///
    /// Reported on the line of the logging call.
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
            if s.mod_guard {
                continue;
            }
            // an inference loop's line per image or batch is its report (what was read, what
            // came out) and costs microseconds beside the forward pass — unless it formats what
            // the model returned: a tensor printed is copied to the host and waited for
            if !s.train && (metadata_only(m, c) || !formats_model_output(m, c, s.loop_)) {
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

/// Does the call format a value the model returned in this loop (`emb = model(x)` ...
/// `print('emb', emb)`, `print(f'{out.mean()}')`), or one computed from it there
/// (`_, predicted = torch.max(outputs, 1)` ... `print(predicted)`)?
fn formats_model_output(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
    loop_: u32,
) -> bool {
    let before: Vec<&crate::analysis::facts::Assign> = m
        .assigns
        .iter()
        .filter(|a| a.ctx.loop_ == Some(loop_) && a.span.end <= c.span.start)
        .collect();
    // `generate()` waits for every token it makes: printing its ids adds no wait; nor does a
    // Keras or scikit-learn `predict()` in a file without PyTorch, whose result is a NumPy
    // array on the host already
    let runs = |a: &&crate::analysis::facts::Assign| {
        a.rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|r| {
                crate::analysis::resolve::runs_model(m, r)
                    && m.last_name(r) != "generate"
                    && (m.last_name(r) != "predict" || imports_torch(m))
            })
    };
    // a value read back to the host on the way (`probs = torch.softmax(out,
    // dim=1).numpy()[0]`, `pred = pred.cpu().numpy()`): printing it waits for nothing more
    let on_host = |v: &str| {
        v.split('.').skip(1).any(|part| {
            super::host_sync::READS.iter().any(|r| {
                part.strip_prefix(r)
                    .is_some_and(|rest| rest.starts_with("()"))
            })
        })
    };
    // what the model returned and what the step computes from it (`_, predicted =
    // torch.max(outputs, 1)`, `score = softmax(pred)`), in order; not a running total
    // (`correct += ...`), the loop's report; a name rebound to a host copy no longer holds it
    let mut outputs: Vec<&str> = Vec::new();
    for a in before.iter().filter(|a| !a.augmented) {
        let v = m.text(a.value);
        let targets = a.targets.iter().map(|t| m.text(*t));
        if runs(a) {
            outputs.extend(targets);
        } else if on_host(v) {
            let targets: Vec<&str> = targets.collect();
            outputs.retain(|o| !targets.contains(o));
        } else if super::words(v).any(|w| outputs.contains(&w)) {
            outputs.extend(targets);
        }
    }
    super::words(m.text(c.args_span)).any(|w| outputs.contains(&w))
}

/// Does the file import PyTorch (`import torch`, `from torch import nn`)?
fn imports_torch(m: &crate::analysis::facts::Model<'_>) -> bool {
    m.imports
        .values()
        .any(|q| q == "torch" || q.starts_with("torch."))
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
        match n.node_kind() {
            "string" | "concatenated_string" | "interpolation" | "format_specifier" => {
                let mut cur = n.walk();
                stack.extend(n.named_children(&mut cur).filter(|k| {
                    !matches!(
                        k.node_kind(),
                        "string_start" | "string_content" | "string_end" | "escape_sequence"
                    )
                }));
            }
            "keyword_argument" => {
                // `file=sys.stderr`, `flush=True`: where and how the line goes, not what it says
                let name = n.child_by_field_name("name").map_or("", text);
                if let Some(v) = n.child_by_field_name("value")
                    && !matches!(name, "file" | "flush" | "sep" | "end")
                {
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
                    .is_some_and(|i| matches!(i.node_kind(), "integer" | "unary_operator"));
                match value {
                    Some(v) if index_ok && v.node_kind() == "attribute" => stack.push(v),
                    _ => return false,
                }
            }
            "call" => {
                let f = n.child_by_field_name("function");
                let ok = f.is_some_and(|f| {
                    let t = text(f);
                    t == "len"
                        || (f.node_kind() == "attribute"
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
