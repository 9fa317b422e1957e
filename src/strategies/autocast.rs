use tree_sitter::Node;

use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, Parsed, find_all, statements};
use super::{
    Context, Gain, GpuState, Proposal, Site, Strategy, TensorPrecision, VariantEdits, at,
    calls_model, capability, has_backward, is_device_expr, model_names, site,
};

super::declare_strategy! {
    /// ## What it does
    /// Runs the forward pass and the loss in mixed precision: the statements from the first
    /// model call to the loss assignment of a training step are wrapped in
    /// `with torch.autocast(device_type=..., dtype=torch.bfloat16):`; in inference loops the
    /// model call is wrapped. The fp16 variant also adds a `torch.amp.GradScaler`, scaling
    /// the loss for `backward()` and stepping the optimizer through the scaler.
    ///
    /// ## Why is it faster?
    /// Tensor cores run bf16/fp16 matmuls and convolutions several times faster than fp32,
    /// and half-width activations halve the memory traffic.
    ///
    /// ## Example
    /// ```python
    /// for images, labels in loader:
    ///     loss = F.cross_entropy(model(images), labels)
    ///     loss.backward()
    ///     optimizer.step()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// for images, labels in loader:
    ///     with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
    ///         loss = F.cross_entropy(model(images), labels)
    ///     loss.backward()
    ///     optimizer.step()
    /// ```
    ///
    /// Variants: bf16 (compute capability ≥ 8.0), fp16 + GradScaler (≥ 7.0).
    ///
    /// ## Safety
    /// Changes numerics: bf16 keeps 8 bits of mantissa, fp16 can overflow without the
    /// scaler. Custom losses or `softmax`/`log` written by hand may lose precision; gradient
    /// clipping under fp16 needs `scaler.unscale_` first (the fp16 variant is not offered
    /// then). Needs a correctness gate on the loss or the outputs.
    ///
    /// ## Expected gain
    /// 2–3x on tensor-core GPUs (reference ml_rules.md PREC001, S10 AMP recipe, S1 "up to
    /// 3x"); bounded here by this GPU's BF16/FP32 tensor ratio from the ceilings, half the
    /// bound expected. Slower on pre-Volta GPUs; small models that are CPU-bound gain nothing.
    pub struct Autocast {
        id: "autocast",
        title: "bf16/fp16 autocast (GradScaler for fp16)",
        kind: Advanced,
        resource: Gpu,
        targets: [NoAmp],
    }
}

/// A training step: wrap `first..=last`, scale `backward`, step through the scaler.
struct Train<'t> {
    file: usize,
    outer: Node<'t>,
    first: Node<'t>,
    last: Node<'t>,
    backward: Node<'t>,
    loss: String,
    step: Option<(Node<'t>, String)>,
    device_type: String,
}

/// An inference model call to wrap.
struct Infer<'t> {
    file: usize,
    stmt: Node<'t>,
    device_type: String,
}

impl Strategy for Autocast {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut reasons = Vec::new();
        let (mut bf16, mut fp16, mut applicability) = (true, true, 0.5);
        match &ctx.machine.gpu {
            GpuState::Absent => {
                return Err("no GPU on this machine: bf16/fp16 autocast pays on tensor cores (not measurable here)".to_owned());
            }
            GpuState::Unknown => reasons.push("GPU unknown (no ceilings)".to_owned()),
            GpuState::Present { name, .. } => {
                applicability = 0.8;
                if let Some(cc) = capability(&ctx.machine) {
                    if cc < (7, 0) {
                        return Err(format!(
                            "{name} (compute capability {}.{}) has no tensor cores; AMP is slower there",
                            cc.0, cc.1
                        ));
                    }
                    if cc < (8, 0) {
                        bf16 = false;
                        reasons.push(format!(
                            "{name}: no bf16 below compute capability 8.0; fp16 + GradScaler only"
                        ));
                    }
                }
            }
        }
        let mut trains: Vec<Train<'_>> = Vec::new();
        let mut infers: Vec<Infer<'_>> = Vec::new();
        let mut sites: Vec<Site> = Vec::new();
        for (fi, file) in ctx.files.iter().enumerate() {
            if !file.imports_torch() || file.text.contains("autocast") {
                continue;
            }
            let models = model_names(file);
            if models.is_empty() {
                continue;
            }
            for loop_ in find_all(file.tree.root_node(), |n| {
                matches!(n.kind(), "for_statement" | "while_statement")
            }) {
                let Some(body) = loop_.child_by_field_name("body") else {
                    continue;
                };
                let stmts = statements(body);
                if let Some(t) = train_step(fi, file, loop_, &stmts, &models) {
                    let what = format!(
                        "training step at {} runs forward and loss in fp32",
                        at(file, t.first)
                    );
                    reasons.push(what.clone());
                    sites.push(site(file, loop_, what));
                    if file.text.contains("clip_grad") {
                        fp16 = false;
                        reasons.push(format!("{}: gradient clipping needs `scaler.unscale_`; fp16 variant not offered", file.path));
                    }
                    trains.push(t);
                    continue;
                }
                if has_backward(body, file) {
                    continue;
                }
                for s in &stmts {
                    let is_assign = s.kind() == "expression_statement"
                        && s.named_child(0).is_some_and(|a| a.kind() == "assignment");
                    if is_assign && calls_model(*s, file, &models) {
                        let what = format!("inference call at {} runs in fp32", at(file, *s));
                        reasons.push(what.clone());
                        sites.push(site(file, *s, what));
                        infers.push(Infer {
                            file: fi,
                            stmt: *s,
                            device_type: device_type(file, loop_),
                        });
                    }
                }
            }
        }
        if trains.is_empty() && infers.is_empty() {
            return Err(
                "no training step or inference loop calls a model outside autocast".to_owned(),
            );
        }
        let mut variants = Vec::new();
        for (name, dtype, scaled) in [("bf16", "bfloat16", false), ("fp16", "float16", true)] {
            if (name == "bf16" && !bf16) || (name == "fp16" && !fp16) {
                continue;
            }
            let mut per_file: std::collections::BTreeMap<usize, Vec<Edit>> = Default::default();
            for t in &trains {
                let file = &ctx.files[t.file];
                let (torch, import) = file.torch_for_codegen();
                let edits = per_file.entry(t.file).or_default();
                edits.extend(import);
                edits.push(patch::wrap(
                    &file.text,
                    file.tree.root_node(),
                    t.first,
                    t.last,
                    &format!(
                        "with {torch}.autocast(device_type={}, dtype={torch}.{dtype}):",
                        t.device_type
                    ),
                ));
                if scaled {
                    let Some((step, opt)) = &t.step else {
                        continue;
                    };
                    let scaler = if file.text.contains("scaler") {
                        "_ea_scaler"
                    } else {
                        "scaler"
                    };
                    edits.push(patch::insert_before(
                        &file.text,
                        t.outer,
                        &[format!(
                            "{scaler} = {torch}.amp.GradScaler({})",
                            t.device_type
                        )],
                    ));
                    edits.push(Edit {
                        start: t.backward.start_byte(),
                        end: t.backward.end_byte(),
                        content: format!("{scaler}.scale({}).backward()", t.loss),
                    });
                    let indent = patch::line_indent(&file.text, step.start_byte());
                    edits.push(Edit {
                        start: step.start_byte(),
                        end: step.end_byte(),
                        content: format!("{scaler}.step({opt})\n{indent}{scaler}.update()"),
                    });
                }
            }
            for i in &infers {
                let file = &ctx.files[i.file];
                let (torch, import) = file.torch_for_codegen();
                let edits = per_file.entry(i.file).or_default();
                edits.extend(import);
                edits.push(patch::wrap(
                    &file.text,
                    file.tree.root_node(),
                    i.stmt,
                    i.stmt,
                    &format!(
                        "with {torch}.autocast(device_type={}, dtype={torch}.{dtype}):",
                        i.device_type
                    ),
                ));
            }
            if scaled && trains.iter().any(|t| t.step.is_none()) {
                continue;
            }
            variants.push(VariantEdits {
                name: Some(name.to_owned()),
                files: per_file.into_iter().collect(),
            });
        }
        if variants.is_empty() {
            return Err("no variant fits: fp16 needs an `optimizer.step()` to scale and no gradient clipping".to_owned());
        }
        let (upper, bound) = match ctx.machine.tensor_ratio(TensorPrecision::Bf16) {
            Some((ratio, why)) => (ratio.clamp(1.0, 3.0), Some(why)),
            None => (3.0, None),
        };
        Ok(Proposal {
            sites,
            applicability,
            reasons,
            gain: Gain {
                expected: 1.0 + (upper - 1.0) * 0.5,
                upper,
                source:
                    "ml_rules.md PREC001 (S10: 2–3x; S1: up to 3x), half the bound expected [est]"
                        .to_owned(),
                bound,
            },
            safety: Applicability::Numerics,
            variants,
        })
    }
}

/// Ex) loss = F.cross_entropy(model(images), labels)    ← wrapped (from the first model call)
///     loss.backward()
///     optimizer.step()
fn train_step<'t>(
    fi: usize,
    file: &Parsed,
    loop_: Node<'t>,
    stmts: &[Node<'t>],
    models: &[String],
) -> Option<Train<'t>> {
    let text = &file.text;
    let b = stmts.iter().position(|s| {
        s.kind() == "expression_statement"
            && s.named_child(0)
                .and_then(|c| patch::method_call(c, text))
                .is_some_and(|(r, m)| m == "backward" && r.kind() == "identifier")
    })?;
    let backward = stmts[b].named_child(0)?;
    let (loss_node, _) = patch::method_call(backward, text)?;
    let loss = file.text_of(loss_node).to_owned();
    let assigns = |s: &Node<'_>| {
        s.kind() == "expression_statement"
            && s.named_child(0).is_some_and(|a| a.kind() == "assignment")
    };
    let i_loss = (0..b).rev().find(|&i| {
        assigns(&stmts[i])
            && stmts[i]
                .named_child(0)
                .and_then(|a| a.child_by_field_name("left"))
                .is_some_and(|l| file.text_of(l) == loss)
    })?;
    let mut j = i_loss;
    let mut k = i_loss;
    while k > 0 && assigns(&stmts[k - 1]) {
        k -= 1;
        if calls_model(stmts[k], file, models) {
            j = k;
        }
    }
    if !(j..=i_loss).any(|i| calls_model(stmts[i], file, models)) {
        return None;
    }
    let step = stmts[b + 1..].iter().find_map(|s| {
        let call = s
            .named_child(0)
            .filter(|_| s.kind() == "expression_statement")?;
        let (opt, m) = patch::method_call(call, text)?;
        (m == "step"
            && opt.kind() == "identifier"
            && patch::call_args(call, text).positional.is_empty())
        .then(|| (call, file.text_of(opt).to_owned()))
    });
    // The scaler is created once, before the outermost loop of the function.
    let mut outer = loop_;
    let mut cur = loop_.parent();
    while let Some(p) = cur {
        if matches!(p.kind(), "function_definition" | "class_definition") {
            break;
        }
        if matches!(p.kind(), "for_statement" | "while_statement") {
            outer = p;
        }
        cur = p.parent();
    }
    Some(Train {
        file: fi,
        outer,
        first: stmts[j],
        last: stmts[i_loss],
        backward,
        loss,
        step,
        device_type: device_type(file, loop_),
    })
}

/// The autocast `device_type` of the device a loop copies to: `device.type` for a
/// `torch.device` variable, `torch.device(expr).type` for another name or attribute (a string
/// or a device), the literal's type for a string; copies to the CPU are not the compute
/// device. `"cuda"` when the loop copies nowhere.
fn device_type(file: &Parsed, loop_: Node<'_>) -> String {
    let torch = file.torch_name().unwrap_or("torch");
    for call in find_all(loop_, |n| n.kind() == "call") {
        let Some((_, m)) = patch::method_call(call, &file.text) else {
            continue;
        };
        if m != "to" {
            continue;
        }
        let args = patch::call_args(call, &file.text);
        let Some(dev) = args
            .positional
            .first()
            .copied()
            .or_else(|| args.keyword("device"))
        else {
            continue;
        };
        if !is_device_expr(dev, file) || file.text_of(dev).contains("cpu") {
            continue;
        }
        let name = file.text_of(dev);
        match dev.kind() {
            "identifier" => {
                let is_device_var = find_all(file.tree.root_node(), |n| n.kind() == "assignment")
                    .into_iter()
                    .any(|a| {
                        a.child_by_field_name("left")
                            .is_some_and(|l| file.text_of(l) == name)
                            && a.child_by_field_name("right").is_some_and(|r| {
                                r.kind() == "call"
                                    && r.child_by_field_name("function")
                                        .and_then(|f| file.qualified(f))
                                        .is_some_and(|q| q == "torch.device")
                            })
                    });
                return if is_device_var {
                    format!("{name}.type")
                } else {
                    format!("{torch}.device({name}).type")
                };
            }
            "attribute" => return format!("{torch}.device({name}).type"),
            "string" => {
                let s = name.trim_matches(|c| c == '"' || c == '\'');
                let kind = s.split(':').next().unwrap_or("cuda");
                return format!("\"{kind}\"");
            }
            _ => {}
        }
    }
    "\"cuda\"".to_owned()
}
