use tree_sitter::Node;

use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, Parsed, find_all};
use super::{Context, Gain, GpuState, Proposal, Site, Strategy, VariantEdits, at, site};

super::declare_strategy! {
    /// ## What it does
    /// Removes the per-step host synchronisation of `.item()` accumulations: inside a loop,
    /// `losses.append(loss.item())` becomes `losses.append(loss.detach())` and
    /// `total += x.item()` becomes `total += x.detach()`; after the loop, one statement turns
    /// the accumulated tensors back into Python numbers.
    ///
    /// ## Why is it faster?
    /// `.item()` copies a value from the GPU, so the CPU waits until every queued kernel has
    /// finished, then the GPU waits while the CPU queues the next step. Accumulating on the
    /// device keeps the queue full; the values are read once, after the loop.
    ///
    /// ## Example
    /// ```python
    /// for images, labels in loader:
    ///     loss = F.cross_entropy(model(images), labels)
    ///     losses.append(loss.item())
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// for images, labels in loader:
    ///     loss = F.cross_entropy(model(images), labels)
    ///     losses.append(loss.detach())
    /// losses[:] = [v.item() if torch.is_tensor(v) else v for v in losses]
    /// ```
    ///
    /// ## Safety
    /// Applied only when the accumulator is not read inside the loop and the loop cannot
    /// `return` or `yield` before the conversion. Appended values are exactly the same; a
    /// `+=` sum is computed in the tensor's dtype instead of Python's float64 (numerics),
    /// except for integer counts such as `(pred == y).sum()`, which stay exact. `.detach()`
    /// keeps the autograd graph from being retained.
    ///
    /// ## Expected gain
    /// 1.0–1.3x [est], most for small, fast models where the GPU idles at each sync (reference
    /// ml_rules.md SYNC001, S1 "avoid CPU-GPU sync", S14 sync-free checklist). None on a CPU:
    /// `.item()` does not wait for a device there.
    pub struct DeferredHostSync {
        id: "deferred-host-sync",
        title: "Accumulate on the device, read `.item()` once after the loop",
        kind: Basic,
        resource: Gpu,
        targets: [HostSync],
    }
}

impl Strategy for DeferredHostSync {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites: Vec<Site> = Vec::new();
        let mut files = Vec::new();
        let mut reasons = Vec::new();
        let mut exact = true;
        for (fi, file) in ctx.files.iter().enumerate() {
            let (torch, import) = file.torch_for_codegen();
            let mut edits: Vec<Edit> = Vec::new();
            // After-loop conversions, one per (loop, accumulator).
            let mut conversions: Vec<(usize, String)> = Vec::new();
            for item in find_all(file.tree.root_node(), |n| {
                patch::method_call(n, &file.text).is_some_and(|(_, m)| m == "item")
                    && patch::call_args(n, &file.text).positional.is_empty()
            }) {
                let Some(shape) = accumulation(file, item) else {
                    continue;
                };
                let Some(loop_) = patch::ancestor(item, &["for_statement", "while_statement"])
                else {
                    continue;
                };
                let Some(body) = loop_.child_by_field_name("body") else {
                    continue;
                };
                if patch::mentions(body, &file.text, &shape.acc, Some(shape.stmt)) {
                    continue;
                }
                if patch::any_in_scope(body, &|n| matches!(n.kind(), "return_statement" | "yield"))
                {
                    continue;
                }
                let Some((recv, _)) = patch::method_call(item, &file.text) else {
                    continue;
                };
                // `x.item()` → `x.detach()`: replace the method name and keep the receiver.
                edits.push(Edit {
                    start: recv.end_byte(),
                    end: item.end_byte(),
                    content: ".detach()".to_owned(),
                });
                let acc = &shape.acc;
                let line = if shape.append {
                    format!("{acc}[:] = [v.item() if {torch}.is_tensor(v) else v for v in {acc}]")
                } else {
                    if !shape.integer {
                        exact = false;
                    }
                    format!("{acc} = {acc}.item() if {torch}.is_tensor({acc}) else {acc}")
                };
                let key = (loop_.id(), line.clone());
                if !conversions.iter().any(|(id, l)| (*id, l.clone()) == key) {
                    conversions.push(key);
                    edits.push(patch::insert_after(&file.text, loop_, &[line]));
                }
                let what = format!(
                    "`{}` at {} syncs with the device every iteration",
                    file.text_of(shape.stmt).trim(),
                    at(file, item)
                );
                reasons.push(what.clone());
                sites.push(site(file, shape.stmt, what));
            }
            if !edits.is_empty() {
                edits.extend(import);
                files.push((fi, merge_after_loop(edits)));
            }
        }
        if files.is_empty() {
            return Err("no `.item()` accumulated in a loop (`xs.append(t.item())`, `s += t.item()`) whose value is only read after the loop".to_owned());
        }
        let applicability = match &ctx.machine.gpu {
            GpuState::Present { .. } => 0.8,
            GpuState::Unknown => 0.5,
            GpuState::Absent => {
                reasons.push("no GPU: `.item()` does not wait for a device here".to_owned());
                0.1
            }
        };
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected: 1.1,
                upper: 1.3,
                source: "ml_rules.md SYNC001 [est 1.0–1.3x]; S1 (avoid CPU-GPU sync)".to_owned(),
                bound: None,
            },
            safety: if exact {
                Applicability::Safe
            } else {
                Applicability::Numerics
            },
            variants: vec![VariantEdits { name: None, files }],
        })
    }
}

/// The accumulation statement around an `.item()` call.
struct Shape<'t> {
    stmt: Node<'t>,
    acc: String,
    append: bool,
    /// A `+=` of an integer count (a comparison summed): exact on the device too.
    integer: bool,
}

/// Ex) losses.append(loss.item())     Ex) running += loss.item()
fn accumulation<'t>(file: &Parsed, item: Node<'t>) -> Option<Shape<'t>> {
    let parent = item.parent()?;
    // losses.append(<item>)
    if parent.kind() == "argument_list" {
        let call = parent.parent()?;
        let (acc, m) = patch::method_call(call, &file.text)?;
        let stmt = call.parent()?;
        if m == "append"
            && acc.kind() == "identifier"
            && stmt.kind() == "expression_statement"
            && patch::children(parent).len() == 1
        {
            return Some(Shape {
                stmt,
                acc: file.text_of(acc).to_owned(),
                append: true,
                integer: false,
            });
        }
        return None;
    }
    // total += <item>
    if parent.kind() == "augmented_assignment"
        && parent
            .child_by_field_name("right")
            .is_some_and(|r| r.id() == item.id())
        && parent
            .child_by_field_name("operator")
            .is_some_and(|o| file.text_of(o) == "+=")
    {
        let left = parent.child_by_field_name("left")?;
        let stmt = parent.parent()?;
        if left.kind() != "identifier" || stmt.kind() != "expression_statement" {
            return None;
        }
        // Ex) (pred == y).sum().item() / pred.eq(y).sum().item(): a count of booleans.
        let integer = !find_all(item, |n| {
            n.kind() == "comparison_operator"
                || patch::method_call(n, &file.text).is_some_and(|(_, m)| {
                    matches!(m.as_str(), "eq" | "ne" | "lt" | "le" | "gt" | "ge")
                })
        })
        .is_empty();
        return Some(Shape {
            stmt,
            acc: file.text_of(left).to_owned(),
            append: false,
            integer,
        });
    }
    None
}

/// Insertions after the same loop keep their order in one edit.
fn merge_after_loop(mut edits: Vec<Edit>) -> Vec<Edit> {
    edits.sort_by_key(|e| (e.start, e.end));
    let mut out: Vec<Edit> = Vec::new();
    for e in edits {
        if let Some(last) = out.last_mut()
            && last.start == e.start
            && last.end == e.end
            && e.start == e.end
        {
            last.content.push_str(&e.content);
        } else {
            out.push(e);
        }
    }
    out
}
