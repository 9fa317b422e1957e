use crate::analysis::model::Applicability;

use super::patch::Parsed;
use super::{
    Context, Gain, GpuState, Proposal, Strategy, TensorPrecision, VariantEdits, capability,
    mentions_cuda,
};

super::declare_strategy! {
    /// ## What it does
    /// Lets fp32 matrix multiplications and convolutions use TF32 tensor cores: inserts
    /// `torch.backends.cuda.matmul.allow_tf32 = True` and
    /// `torch.backends.cudnn.allow_tf32 = True` after the imports of each entry script.
    ///
    /// ## Why is it faster?
    /// Since PyTorch 1.12, fp32 matmuls run on the CUDA cores by default. On Ampere and newer
    /// GPUs the tensor cores run them in TF32 (10-bit mantissa, fp32 range) several times
    /// faster.
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// model = Net().cuda()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// torch.backends.cuda.matmul.allow_tf32 = True
    /// torch.backends.cudnn.allow_tf32 = True
    ///
    /// model = Net().cuda()
    /// ```
    ///
    /// ## Safety
    /// Changes numerics: products are rounded to TF32. NVIDIA reports the same convergence for
    /// most training; precise linear algebra (solvers, fp32 accuracy tests) should not use it.
    /// Needs a correctness gate (`bench.check-regex`).
    ///
    /// ## Expected gain
    /// "Up to 3x" for fp32 GEMM-bound models (reference ml_rules.md PREC002, S6 HF
    /// single-GPU guide); bounded here by this GPU's TF32/FP32 ratio from the ceilings. Half
    /// the bound is expected, since only matmul/conv time speeds up. Needs compute capability
    /// ≥ 8.0.
    pub struct Tf32 {
        id: "tf32",
        title: "TF32 tensor cores for fp32 matmuls",
        kind: Advanced,
        resource: Gpu,
        targets: [NoTf32],
    }
}

impl Strategy for Tf32 {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut reasons = Vec::new();
        let mut applicability = match &ctx.machine.gpu {
            GpuState::Absent => {
                return Err(
                    "no GPU on this machine: TF32 is a CUDA tensor-core mode (not measurable here)"
                        .to_owned(),
                );
            }
            GpuState::Unknown => {
                reasons
                    .push("GPU unknown (no ceilings): needs compute capability ≥ 8.0".to_owned());
                0.5
            }
            GpuState::Present { name, .. } => match capability(&ctx.machine) {
                Some(cc) if cc < (8, 0) => {
                    return Err(format!(
                        "{name} has compute capability {}.{}; TF32 needs ≥ 8.0 (Ampere)",
                        cc.0, cc.1
                    ));
                }
                Some(_) => 0.9,
                None => 0.6,
            },
        };
        let entries: Vec<(usize, &Parsed)> = entry_files(ctx);
        if entries.is_empty() {
            return Err("no script imports torch and uses CUDA".to_owned());
        }
        let mut files = Vec::new();
        let mut sites = Vec::new();
        for (fi, file) in &entries {
            let (torch, import) = file.torch_for_codegen();
            let at = file.after_imports();
            let mut edits: Vec<_> = import.into_iter().collect();
            edits.push(crate::analysis::model::Edit {
                start: at,
                end: at,
                content: format!(
                    "{torch}.backends.cuda.matmul.allow_tf32 = True\n{torch}.backends.cudnn.allow_tf32 = True\n"
                ),
            });
            let line = file.line_of(at);
            let what = format!("{} runs fp32 matmuls without TF32", file.path);
            reasons.push(what.clone());
            sites.push(super::Site {
                path: file.path.clone(),
                line: 1,
                end_line: file.line_of(file.text.len()).max(line),
                what,
            });
            files.push((*fi, edits));
        }
        let (upper, bound) = match ctx.machine.tensor_ratio(TensorPrecision::Tf32) {
            Some((ratio, why)) => (ratio.clamp(1.0, 3.0), Some(why)),
            None => (3.0, None),
        };
        if upper <= 1.05 {
            applicability *= 0.2;
            reasons.push("the ceilings show no TF32 advantage over FP32 on this GPU".to_owned());
        }
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected: 1.0 + (upper - 1.0) * 0.5,
                upper,
                source: "ml_rules.md PREC002 (S6: up to 3x), half the bound expected [est]"
                    .to_owned(),
                bound,
            },
            safety: Applicability::Numerics,
            variants: vec![VariantEdits { name: None, files }],
        })
    }
}

/// Scripts to configure: torch files that use CUDA and have a main guard, else every torch
/// file that mentions CUDA; files already setting TF32 or matmul precision excluded.
pub(super) fn entry_files<'a>(ctx: &'a Context<'_>) -> Vec<(usize, &'a Parsed)> {
    let torch: Vec<(usize, &Parsed)> = ctx
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.imports_torch() && mentions_cuda(f))
        .filter(|(_, f)| {
            !f.text.contains("allow_tf32") && !f.text.contains("set_float32_matmul_precision")
        })
        .collect();
    let guarded: Vec<(usize, &Parsed)> = torch
        .iter()
        .copied()
        .filter(|(_, f)| f.has_main_guard())
        .collect();
    if guarded.is_empty() { torch } else { guarded }
}
