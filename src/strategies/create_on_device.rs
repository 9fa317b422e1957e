use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, find_all};
use super::{
    Context, Gain, GpuState, Proposal, Site, Strategy, VariantEdits, at, is_device_expr, site,
};

super::declare_strategy! {
    /// ## What it does
    /// Creates tensors directly on their device: `torch.tensor(x).to(device)` becomes
    /// `torch.tensor(x, device=device)` and `torch.zeros(n).cuda()` becomes
    /// `torch.zeros(n, device="cuda")`, for the deterministic constructors (`tensor`,
    /// `as_tensor`, `zeros`, `ones`, `empty`, `full`, `arange`, `eye`, `linspace`).
    ///
    /// ## Why is it faster?
    /// Creating on the CPU and moving allocates and fills a host buffer, then runs a blocking
    /// copy from pageable memory; creating on the device skips the intermediate tensor and
    /// the separate copy call.
    ///
    /// ## Example
    /// ```python
    /// x = torch.tensor(batch).to(device)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// x = torch.tensor(batch, device=device)
    /// ```
    ///
    /// ## Safety
    /// Safe: the values and dtype are the same. Random constructors (`rand`, `randn`, …) are
    /// left alone because the device's random stream differs from the CPU's.
    ///
    /// ## Expected gain
    /// 1.5–10x for the creation itself, small end to end unless it runs every step [est];
    /// reference ml_rules.md XFER002 (S1 "create tensors directly on the target device";
    /// TorchTidy ExtraCUDACopyPattern).
    pub struct CreateOnDevice {
        id: "create-on-device",
        title: "Create tensors on their device",
        kind: Basic,
        resource: Gpu,
        targets: [CpuTensorThenMove],
    }
}

const CONSTRUCTORS: &[&str] = &[
    "tensor",
    "as_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "arange",
    "eye",
    "linspace",
];

impl Strategy for CreateOnDevice {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites: Vec<Site> = Vec::new();
        let mut reasons = Vec::new();
        let mut files = Vec::new();
        let mut in_loop = false;
        for (fi, file) in ctx.files.iter().enumerate() {
            let mut edits: Vec<Edit> = Vec::new();
            for mv in find_all(file.tree.root_node(), |n| n.kind() == "call") {
                let Some((ctor, method)) = patch::method_call(mv, &file.text) else {
                    continue;
                };
                if ctor.kind() != "call" {
                    continue;
                }
                let Some(q) = ctor
                    .child_by_field_name("function")
                    .and_then(|f| file.qualified(f))
                else {
                    continue;
                };
                let Some(name) = q.strip_prefix("torch.") else {
                    continue;
                };
                if !CONSTRUCTORS.contains(&name) {
                    continue;
                }
                let ctor_args = patch::call_args(ctor, &file.text);
                if ctor_args.keyword("device").is_some() || ctor_args.splat {
                    continue;
                }
                let move_args = patch::call_args(mv, &file.text);
                let device = match method.as_str() {
                    // Ex) torch.tensor(x).to(device)
                    "to" if move_args.positional.len() == 1
                        && move_args.keywords.is_empty()
                        && is_device_expr(move_args.positional[0], file) =>
                    {
                        file.text_of(move_args.positional[0]).to_owned()
                    }
                    // Ex) torch.zeros(n).cuda()
                    "cuda" if move_args.positional.is_empty() && move_args.keywords.is_empty() => {
                        "\"cuda\"".to_owned()
                    }
                    _ => continue,
                };
                let Some(set) = patch::set_keyword(ctor, &file.text, "device", &device) else {
                    continue;
                };
                // New text of the whole expression: the constructor with `device=` and no move.
                let ctor_text = file.text_of(ctor);
                let local = Edit {
                    start: set.start - ctor.start_byte(),
                    end: set.end - ctor.start_byte(),
                    content: set.content,
                };
                let Ok(new_ctor) = patch::apply(ctor_text, &[local]) else {
                    continue;
                };
                edits.push(Edit {
                    start: mv.start_byte(),
                    end: mv.end_byte(),
                    content: new_ctor,
                });
                let looped = patch::ancestor(mv, &["for_statement", "while_statement"]).is_some();
                in_loop |= looped;
                let what = format!(
                    "`{}` at {} builds on the CPU, then copies{}",
                    file.text_of(mv),
                    at(file, mv),
                    if looped { " (every iteration)" } else { "" }
                );
                reasons.push(what.clone());
                sites.push(site(file, mv, what));
            }
            if !edits.is_empty() {
                files.push((fi, edits));
            }
        }
        if files.is_empty() {
            return Err(
                "no tensor is created on the CPU and then moved with `.to(device)` / `.cuda()`"
                    .to_owned(),
            );
        }
        let applicability = match (&ctx.machine.gpu, in_loop) {
            (GpuState::Absent, _) => {
                reasons.push(
                    "no GPU: `.to(device)` is a no-op on the CPU, nothing to gain here".to_owned(),
                );
                0.1
            }
            (_, true) => 0.8,
            (_, false) => 0.4,
        };
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected: if in_loop { 1.05 } else { 1.01 },
                upper: 1.2,
                source: "ml_rules.md XFER002 [est 1.5–10x per op, small end to end], S1".to_owned(),
                bound: None,
            },
            safety: Applicability::Safe,
            variants: vec![VariantEdits { name: None, files }],
        })
    }
}
