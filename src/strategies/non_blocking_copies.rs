use tree_sitter::Node;

use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, Parsed, find_all};
use super::{
    Context, Gain, GpuState, Proposal, Site, Strategy, VariantEdits, at, gpu_gate, is_device_expr,
    site,
};

super::declare_strategy! {
    /// ## What it does
    /// Makes the host→device copies of each batch asynchronous: in a loop over a
    /// `DataLoader`, `x.to(device)` of the loop's batch variables becomes
    /// `x.to(device, non_blocking=True)` (and `x.cuda()` becomes `x.cuda(non_blocking=True)`);
    /// the loader gets `pin_memory=True` when it lacks it, since only pinned memory copies
    /// asynchronously.
    ///
    /// ## Why is it faster?
    /// A blocking copy from pageable memory makes the CPU wait for the transfer, so it cannot
    /// queue the next kernels meanwhile. From pinned memory with `non_blocking=True` the copy
    /// overlaps with the CPU's work and with compute already queued.
    ///
    /// ## Example
    /// ```python
    /// for images, labels in train_loader:
    ///     images, labels = images.to(device), labels.to(device)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// for images, labels in train_loader:
    ///     images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    /// ```
    ///
    /// ## Safety
    /// Safe for host→device copies: later kernels on the same stream see the data. Never
    /// applied to device→host copies (`.cpu()`, `.to("cpu")`), whose values could be read
    /// before they arrive. Pinned memory is page-locked host RAM (batch × prefetch × workers).
    ///
    /// ## Expected gain
    /// 1.0–1.15x [est], more when many tensors are copied per step; reference ml_rules.md
    /// XFER001 and S9 (the PyTorch `non_blocking` and `pin_memory` tutorial).
    pub struct NonBlockingCopies {
        id: "non-blocking-copies",
        title: "Pinned, non-blocking host→device copies",
        kind: Basic,
        resource: Gpu,
        targets: [H2dBlocking, DataloaderPinMemory],
    }
}

impl Strategy for NonBlockingCopies {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let gate = gpu_gate(&ctx.machine)?;
        let mut sites: Vec<Site> = Vec::new();
        let mut reasons = Vec::new();
        let mut files = Vec::new();
        for (fi, file) in ctx.files.iter().enumerate() {
            let mut edits: Vec<Edit> = Vec::new();
            let mut pinned_loaders: Vec<usize> = Vec::new();
            for loop_ in find_all(file.tree.root_node(), |n| n.kind() == "for_statement") {
                let (Some(left), Some(right), Some(body)) = (
                    loop_.child_by_field_name("left"),
                    loop_.child_by_field_name("right"),
                    loop_.child_by_field_name("body"),
                ) else {
                    continue;
                };
                let Some(loader) = loader_of(file, right) else {
                    continue;
                };
                let batch_vars: Vec<String> = find_all(left, |n| n.kind() == "identifier")
                    .into_iter()
                    .map(|n| file.text_of(n).to_owned())
                    .collect();
                let mut copies = 0;
                for call in find_all(body, |n| n.kind() == "call") {
                    let Some((recv, method)) = patch::method_call(call, &file.text) else {
                        continue;
                    };
                    if recv.kind() != "identifier"
                        || !batch_vars.iter().any(|v| v == file.text_of(recv))
                    {
                        continue;
                    }
                    let args = patch::call_args(call, &file.text);
                    if args.keyword("non_blocking").is_some() || args.splat {
                        continue;
                    }
                    let h2d = match method.as_str() {
                        "to" => {
                            args.positional.len() == 1
                                && args.keywords.is_empty()
                                && is_device_expr(args.positional[0], file)
                                && !file.text_of(args.positional[0]).contains("cpu")
                        }
                        "cuda" => args.positional.is_empty() && args.keywords.is_empty(),
                        _ => false,
                    };
                    if !h2d {
                        continue;
                    }
                    if let Some(e) = patch::set_keyword(call, &file.text, "non_blocking", "True") {
                        edits.push(e);
                        copies += 1;
                    }
                }
                if copies == 0 {
                    continue;
                }
                let what = format!(
                    "loop at {} copies {copies} batch tensor(s) to the device synchronously",
                    at(file, loop_)
                );
                reasons.push(what.clone());
                sites.push(site(file, loop_, what));
                // Pin the loader that feeds the loop, once.
                if let Some(call) = loader
                    && !pinned_loaders.contains(&call.start_byte())
                {
                    let args = patch::call_args(call, &file.text);
                    if args.keyword("pin_memory").is_none()
                        && args.positional.len() <= 7
                        && !args.splat
                    {
                        let value = match &ctx.machine.gpu {
                            GpuState::Present { .. } => Some("True".to_owned()),
                            _ => file
                                .torch_name()
                                .map(|t| format!("{t}.cuda.is_available()")),
                        };
                        if let Some(v) = value
                            && let Some(e) = patch::set_keyword(call, &file.text, "pin_memory", &v)
                        {
                            pinned_loaders.push(call.start_byte());
                            sites.push(site(
                                file,
                                call,
                                format!("DataLoader at {} is not pinned", at(file, call)),
                            ));
                            edits.push(e);
                        }
                    }
                }
            }
            if !edits.is_empty() {
                files.push((fi, edits));
            }
        }
        if files.is_empty() {
            return Err("no blocking `.to(device)` of a DataLoader batch in a loop".to_owned());
        }
        if gate < 1.0 {
            reasons.push(
                "GPU presence unknown (no ceilings): the copies may be CPU no-ops".to_owned(),
            );
        }
        Ok(Proposal {
            sites,
            applicability: 0.7 * gate,
            reasons,
            gain: Gain {
                expected: 1.05,
                upper: 1.15,
                source: "ml_rules.md XFER001 [est 1.0–1.15x], S9".to_owned(),
                bound: None,
            },
            safety: Applicability::Safe,
            variants: vec![VariantEdits { name: None, files }],
        })
    }
}

/// The loop iterates a DataLoader: `loader`, `enumerate(loader)`, `tqdm(loader)`. Returns
/// `Some(Some(call))` when the DataLoader call is found in this file, `Some(None)` for a
/// loader passed in as a parameter named like one, `None` otherwise.
fn loader_of<'t>(file: &'t Parsed, iter: Node<'t>) -> Option<Option<Node<'t>>> {
    let mut name = iter;
    if iter.kind() == "call" {
        let args = patch::call_args(iter, &file.text);
        name = *args.positional.first()?;
    }
    if name.kind() != "identifier" {
        return None;
    }
    let var = file.text_of(name);
    for assign in find_all(file.tree.root_node(), |n| n.kind() == "assignment") {
        if assign
            .child_by_field_name("left")
            .is_some_and(|l| file.text_of(l) == var)
            && let Some(right) = assign.child_by_field_name("right")
            && right.kind() == "call"
            && right
                .child_by_field_name("function")
                .and_then(|f| file.qualified(f))
                .is_some_and(|q| q.ends_with("DataLoader"))
        {
            return Some(Some(right));
        }
    }
    (var.contains("loader")).then_some(None)
}
