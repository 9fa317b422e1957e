use crate::analysis::model::Applicability;

use super::patch;
use super::{
    Context, Gain, GpuState, Proposal, Strategy, VariantEdits, at, model_assignments, site,
};

super::declare_strategy! {
    /// ## What it does
    /// Compiles the model with `torch.compile`: inserts `model = torch.compile(model)` right
    /// after the last statement that builds or moves a model that a loop calls.
    ///
    /// ## Why is it faster?
    /// TorchInductor fuses chains of element-wise operations into single kernels (fewer
    /// round trips through memory) and cuts the Python overhead of launching each op.
    ///
    /// ## Example
    /// ```python
    /// model = SmallNet().to(device)
    /// for images, labels in loader:
    ///     loss = F.cross_entropy(model(images), labels)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// model = SmallNet().to(device)
    /// model = torch.compile(model)
    /// for images, labels in loader:
    ///     loss = F.cross_entropy(model(images), labels)
    /// ```
    ///
    /// Variants: default mode; `mode="max-autotune"` on a GPU (longer compile, faster kernels).
    ///
    /// ## Safety
    /// Small numeric differences (fused kernels round differently). Compile time is paid in
    /// the first steps, so short benchmarks can be slower; dynamic shapes recompile; the
    /// `state_dict` keys of the compiled wrapper gain an `_orig_mod.` prefix (save the
    /// original module). Needs a C++ compiler on the CPU, Volta or newer on the GPU.
    ///
    /// ## Expected gain
    /// +43 % average training speed on an A100 over 163 models (fp32 +21 %, AMP +51 %);
    /// lower on desktop GPUs (reference ml_rules.md COMP001, S12 PyTorch 2.0 announcement).
    /// On CPUs ~+10 % [est].
    pub struct TorchCompile {
        id: "torch-compile",
        title: "`torch.compile` the model",
        kind: Advanced,
        resource: Gpu,
        targets: [NoCompile],
    }
}

impl Strategy for TorchCompile {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites = Vec::new();
        let mut reasons = Vec::new();
        let mut targets = Vec::new();
        for (fi, file) in ctx.files.iter().enumerate() {
            if !file.imports_torch() || file.text.contains("compile(") {
                continue;
            }
            for (stmt, model) in model_assignments(file) {
                let what = format!("`{model}` built at {} runs eagerly", at(file, stmt));
                reasons.push(what.clone());
                sites.push(site(file, stmt, what));
                targets.push((fi, stmt, model));
            }
        }
        if targets.is_empty() {
            return Err("no model called in a loop is built without `torch.compile`".to_owned());
        }
        let gpu = !matches!(ctx.machine.gpu, GpuState::Absent);
        let modes: &[Option<&str>] = if gpu {
            &[None, Some("max-autotune")]
        } else {
            &[None]
        };
        let variants = modes
            .iter()
            .map(|mode| {
                let mut files: Vec<(usize, Vec<_>)> = Vec::new();
                for (fi, stmt, model) in &targets {
                    let file = &ctx.files[*fi];
                    let (torch, import) = file.torch_for_codegen();
                    let arg = mode.map_or(String::new(), |m| format!(", mode=\"{m}\""));
                    let mut edits: Vec<_> = import.into_iter().collect();
                    edits.push(patch::insert_after(
                        &file.text,
                        *stmt,
                        &[format!("{model} = {torch}.compile({model}{arg})")],
                    ));
                    files.push((*fi, edits));
                }
                VariantEdits {
                    name: Some(mode.unwrap_or("default").to_owned()),
                    files,
                }
            })
            .collect();
        let (expected, upper, applicability) = if gpu {
            (1.21, 1.51, 0.6)
        } else {
            reasons.push("no GPU: CPU Inductor only; compile time weighs on short runs".to_owned());
            (1.1, 1.3, 0.4)
        };
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected,
                upper,
                source: "ml_rules.md COMP001 (S12: fp32 +21 %, AMP +51 % on A100); CPU [est]"
                    .to_owned(),
                bound: None,
            },
            safety: Applicability::Numerics,
            variants,
        })
    }
}
