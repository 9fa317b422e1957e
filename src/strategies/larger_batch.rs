use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, find_all};
use super::{Context, Gain, GpuState, Proposal, Strategy, VariantEdits, at, site};

super::declare_strategy! {
    /// ## What it does
    /// Raises the batch size: the integer default of a `--batch-size` / `--batch_size`
    /// command-line option, or a literal `batch_size=` of a `DataLoader` when there is no
    /// such option, is doubled or quadrupled.
    ///
    /// ## Why is it faster?
    /// Small batches leave the device's cores idle and pay the per-step Python, launch and
    /// synchronisation overhead more often per sample; larger batches amortise it.
    ///
    /// ## Example
    /// ```python
    /// parser.add_argument("--batch-size", type=int, default=64)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// parser.add_argument("--batch-size", type=int, default=128)
    /// ```
    ///
    /// Variants: ×2 and ×4.
    ///
    /// ## Safety
    /// For inference the outputs are the same within rounding. For training it changes the
    /// optimisation dynamics (fewer, larger steps: retune the learning rate) and the memory
    /// use; a correctness gate on the final loss is required, and an out-of-memory failure
    /// fails the variant.
    ///
    /// ## Expected gain
    /// 1.1–2x when the device is under-used (reference ml_rules.md A9 and the SageMaker
    /// BatchSize rule: GPU, CPU and memory all below 70 %) [est 1.15x expected].
    pub struct LargerBatch {
        id: "larger-batch",
        title: "Larger batches",
        kind: Advanced,
        resource: Gpu,
        targets: [SmallBatch],
    }
}

impl Strategy for LargerBatch {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites = Vec::new();
        let mut reasons = Vec::new();
        // (file, value node, current value)
        let mut targets = Vec::new();
        let mut training = false;
        for (fi, file) in ctx.files.iter().enumerate() {
            if !file.imports_torch() {
                continue;
            }
            let root = file.tree.root_node();
            let mut found = Vec::new();
            // Ex) parser.add_argument("--batch-size", type=int, default=64)
            for call in find_all(root, |n| {
                patch::method_call(n, &file.text).is_some_and(|(_, m)| m == "add_argument")
            }) {
                let args = patch::call_args(call, &file.text);
                let named = args.positional.iter().any(|a| {
                    let t = file.text_of(*a).trim_matches(|c| c == '"' || c == '\'');
                    t == "--batch-size" || t == "--batch_size" || t == "--bs"
                });
                if let Some(v) = args.keyword("default").filter(|_| named)
                    && let Ok(n) = file.text_of(v).parse::<u64>()
                {
                    found.push((v, n, format!("option default at {}", at(file, call))));
                }
            }
            // Ex) DataLoader(ds, batch_size=64)
            if found.is_empty() {
                for call in find_all(root, |n| {
                    n.kind() == "call"
                        && n.child_by_field_name("function")
                            .and_then(|f| file.qualified(f))
                            .is_some_and(|q| q.ends_with("DataLoader"))
                }) {
                    let args = patch::call_args(call, &file.text);
                    if let Some(v) = args.keyword("batch_size")
                        && let Ok(n) = file.text_of(v).parse::<u64>()
                    {
                        found.push((v, n, format!("DataLoader at {}", at(file, call))));
                    }
                }
            }
            if found.is_empty() {
                continue;
            }
            training |= !find_all(root, |n| {
                patch::method_call(n, &file.text).is_some_and(|(_, m)| m == "backward")
            })
            .is_empty();
            for (v, n, where_) in found {
                let what = format!("batch size {n} ({where_})");
                reasons.push(what.clone());
                sites.push(site(file, v, what));
                targets.push((fi, v.start_byte(), v.end_byte(), n));
            }
        }
        if targets.is_empty() {
            return Err(
                "no literal batch size (option default or DataLoader `batch_size=`)".to_owned(),
            );
        }
        let variants = [2_u64, 4]
            .iter()
            .map(|factor| {
                let files = targets
                    .iter()
                    .map(|(fi, start, end, n)| {
                        (
                            *fi,
                            vec![Edit {
                                start: *start,
                                end: *end,
                                content: (n * factor).to_string(),
                            }],
                        )
                    })
                    .collect();
                VariantEdits {
                    name: Some(format!("x{factor}")),
                    files,
                }
            })
            .collect();
        let mut applicability: f64 = if training {
            reasons.push("training: fewer, larger optimiser steps change the loss curve; retune the learning rate".to_owned());
            0.4
        } else {
            0.7
        };
        if matches!(ctx.machine.gpu, GpuState::Absent) {
            applicability *= 0.6;
            reasons.push("no GPU: only per-step Python overhead is amortised".to_owned());
        }
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected: 1.15,
                upper: 2.0,
                source: "ml_rules.md A9 / SageMaker BatchSize rule [est 1.1–2x]".to_owned(),
                bound: None,
            },
            safety: Applicability::Numerics,
            variants,
        })
    }
}
