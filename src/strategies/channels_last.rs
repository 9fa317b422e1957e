use crate::analysis::model::Applicability;

use super::patch::{self, find_all};
use super::{
    Context, Gain, GpuState, Proposal, Strategy, VariantEdits, at, model_assignments, site,
};

super::declare_strategy! {
    /// ## What it does
    /// Stores a convolutional model's weights in the channels-last (NHWC) memory format:
    /// inserts `model = model.to(memory_format=torch.channels_last)` after the model is
    /// built, in files that use `nn.Conv2d`.
    ///
    /// ## Why is it faster?
    /// Tensor-core and oneDNN convolution kernels work in NHWC; with NCHW weights every
    /// convolution transposes its operands first. With channels-last weights the convolution
    /// picks the NHWC kernels directly.
    ///
    /// ## Example
    /// ```python
    /// model = SmallNet().to(device)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// model = SmallNet().to(device)
    /// model = model.to(memory_format=torch.channels_last)
    /// ```
    ///
    /// ## Safety
    /// Results change within rounding (other convolution algorithms). Best combined with
    /// autocast on GPUs; custom ops that assume contiguous NCHW tensors may copy back.
    ///
    /// ## Expected gain
    /// 22 % on ResNet-50 with AMP (Volta), 8–35 % across torchvision models on GPU, 26–76 %
    /// on an Ice Lake CPU (reference ml_rules.md CNN003, S11 channels-last tutorial).
    pub struct ChannelsLast {
        id: "channels-last",
        title: "Channels-last memory format for CNNs",
        kind: Advanced,
        resource: Gpu,
        targets: [Other],
    }
}

impl Strategy for ChannelsLast {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites = Vec::new();
        let mut reasons = Vec::new();
        let mut files = Vec::new();
        for (fi, file) in ctx.files.iter().enumerate() {
            if file.text.contains("channels_last") {
                continue;
            }
            let convs = find_all(file.tree.root_node(), |n| {
                n.kind() == "call"
                    && n.child_by_field_name("function")
                        .and_then(|f| file.qualified(f))
                        .is_some_and(|q| q == "torch.nn.Conv2d")
            });
            let Some(conv) = convs.first() else {
                continue;
            };
            let (torch, import) = file.torch_for_codegen();
            let mut edits: Vec<_> = import.into_iter().collect();
            for (stmt, model) in model_assignments(file) {
                edits.push(patch::insert_after(
                    &file.text,
                    stmt,
                    &[format!(
                        "{model} = {model}.to(memory_format={torch}.channels_last)"
                    )],
                ));
                let what = format!(
                    "`{model}` at {} has {} Conv2d layer(s) (first at {}) in NCHW",
                    at(file, stmt),
                    convs.len(),
                    at(file, *conv)
                );
                reasons.push(what.clone());
                sites.push(site(file, stmt, what));
            }
            if edits.iter().any(|e| e.content.contains("channels_last")) {
                files.push((fi, edits));
            }
        }
        if files.is_empty() {
            return Err("no model with `nn.Conv2d` layers is built in NCHW".to_owned());
        }
        let (expected, applicability) = match ctx.machine.gpu {
            GpuState::Absent => {
                reasons.push("CPU: oneDNN NHWC kernels (S11: 26–76 % on Ice Lake)".to_owned());
                (1.15, 0.5)
            }
            _ => (1.15, 0.5),
        };
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected,
                upper: 1.35,
                source: "ml_rules.md CNN003 (S11: 8–35 % GPU, 26–76 % CPU)".to_owned(),
                bound: None,
            },
            safety: Applicability::Numerics,
            variants: vec![VariantEdits { name: None, files }],
        })
    }
}
