use tree_sitter::Node;

use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, Parsed, find_all};
use super::{
    Context, Gain, Proposal, Site, Strategy, VariantEdits, at, calls_model, has_backward,
    model_names, site,
};

super::declare_strategy! {
    /// ## What it does
    /// Turns autograd off where nothing is trained: an evaluation function (`evaluate`,
    /// `validate`, `predict`, … or one that calls `model.eval()`) gets a `@torch.no_grad()`
    /// decorator; a loop that runs a model right after `model.eval()` is wrapped in
    /// `with torch.no_grad():` (indentation-aware).
    ///
    /// ## Why is it faster?
    /// With autograd on, every forward pass records a graph and keeps its activations alive
    /// for a backward pass that never comes: extra work per op and often twice the memory.
    ///
    /// ## Example
    /// ```python
    /// def evaluate(model, loader):
    ///     model.eval()
    ///     for images, labels in loader:
    ///         logits = model(images)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// @torch.no_grad()
    /// def evaluate(model, loader):
    ///     model.eval()
    ///     for images, labels in loader:
    ///         logits = model(images)
    /// ```
    ///
    /// Variants: `torch.no_grad()` and `torch.inference_mode()` (a little faster; its tensors
    /// cannot enter autograd later).
    ///
    /// ## Safety
    /// Safe where no gradient is needed: applied only to functions and loops without
    /// `.backward()` or `torch.autograd.grad`. Code that computes saliency maps or adversarial
    /// examples during evaluation needs autograd and is left alone by the same check.
    ///
    /// ## Expected gain
    /// 1.1–1.5x for the evaluation/inference part and often −50 % activation memory [est];
    /// reference ml_rules.md GRAD001 and S1 ("disable gradient calculation for validation or
    /// inference").
    pub struct DisableAutograd {
        id: "disable-autograd",
        title: "`no_grad` / `inference_mode` for evaluation and inference",
        kind: Basic,
        resource: Gpu,
        targets: [NoGradMissing],
    }
}

const EVAL_NAMES: &[&str] = &[
    "eval",
    "evaluate",
    "evaluation",
    "validate",
    "validation",
    "val",
    "test",
    "predict",
    "infer",
    "inference",
];

enum Target<'t> {
    Decorate(Node<'t>),
    Wrap(Node<'t>),
}

impl Strategy for DisableAutograd {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites: Vec<Site> = Vec::new();
        let mut reasons = Vec::new();
        let mut per_file: Vec<(usize, Vec<Target<'_>>)> = Vec::new();
        for (fi, file) in ctx.files.iter().enumerate() {
            if !file.imports_torch() {
                continue;
            }
            let models = model_names(file);
            let mut targets = Vec::new();
            for func in find_all(file.tree.root_node(), |n| n.kind() == "function_definition") {
                if already_disabled(file, func) || has_backward(func, file) {
                    continue;
                }
                let name = func
                    .child_by_field_name("name")
                    .map(|n| file.text_of(n).to_lowercase())
                    .unwrap_or_default();
                let eval_named = EVAL_NAMES.iter().any(|e| {
                    name == *e
                        || name.starts_with(&format!("{e}_"))
                        || name.ends_with(&format!("_{e}"))
                });
                let loops = find_all(func, |n| {
                    matches!(n.kind(), "for_statement" | "while_statement")
                });
                let runs_model = loops
                    .iter()
                    .any(|l| calls_model(*l, file, &models) || calls_any(*l, file));
                if eval_named && runs_model && patch::enclosing_function(func).is_none() {
                    let what = format!(
                        "`{}` at {} runs the model with autograd on",
                        file.text_of(func.child_by_field_name("name").unwrap_or(func)),
                        at(file, func)
                    );
                    reasons.push(what.clone());
                    sites.push(site(file, func, what));
                    targets.push(Target::Decorate(func));
                }
            }
            // Ex) model.eval()
            //     for x in rows: logits = model(x)
            for eval_call in find_all(file.tree.root_node(), |n| {
                patch::method_call(n, &file.text)
                    .is_some_and(|(r, m)| m == "eval" && r.kind() == "identifier")
            }) {
                let Some(stmt) = patch::statement_of(eval_call) else {
                    continue;
                };
                let model = patch::method_call(eval_call, &file.text)
                    .map(|(r, _)| file.text_of(r).to_owned())
                    .unwrap_or_default();
                if let Some(func) = patch::enclosing_function(stmt)
                    && targets
                        .iter()
                        .any(|t| matches!(t, Target::Decorate(f) if f.id() == func.id()))
                {
                    continue;
                }
                if inside_grad_context(file, stmt) {
                    continue;
                }
                let mut next = stmt.next_named_sibling();
                while let Some(s) = next {
                    if matches!(s.kind(), "for_statement" | "while_statement") {
                        if calls_model(s, file, std::slice::from_ref(&model))
                            && !has_backward(s, file)
                        {
                            let what = format!(
                                "loop at {} runs `{model}` after `{model}.eval()` with autograd on",
                                at(file, s)
                            );
                            reasons.push(what.clone());
                            sites.push(site(file, s, what));
                            targets.push(Target::Wrap(s));
                        }
                        break;
                    }
                    next = s.next_named_sibling();
                }
            }
            if !targets.is_empty() {
                per_file.push((fi, targets));
            }
        }
        if per_file.is_empty() {
            return Err(
                "no evaluation function or post-`eval()` loop runs a model with autograd on"
                    .to_owned(),
            );
        }
        let mut variants = Vec::new();
        for ctx_name in ["no_grad", "inference_mode"] {
            let mut files = Vec::new();
            for (fi, targets) in &per_file {
                let file = &ctx.files[*fi];
                let (torch, import) = file.torch_for_codegen();
                let mut edits: Vec<Edit> = import.into_iter().collect();
                for t in targets {
                    match t {
                        Target::Decorate(func) => {
                            let anchor = func
                                .parent()
                                .filter(|p| p.kind() == "decorated_definition")
                                .unwrap_or(*func);
                            edits.push(patch::insert_before(
                                &file.text,
                                anchor,
                                &[format!("@{torch}.{ctx_name}()")],
                            ));
                        }
                        Target::Wrap(loop_) => edits.push(patch::wrap(
                            &file.text,
                            file.tree.root_node(),
                            *loop_,
                            *loop_,
                            &format!("with {torch}.{ctx_name}():"),
                        )),
                    }
                }
                files.push((*fi, edits));
            }
            variants.push(VariantEdits {
                name: Some(ctx_name.replace('_', "-")),
                files,
            });
        }
        Ok(Proposal {
            sites,
            applicability: 0.8,
            reasons,
            gain: Gain {
                expected: 1.15,
                upper: 1.5,
                source: "ml_rules.md GRAD001 [est 1.1–1.5x], S1".to_owned(),
                bound: None,
            },
            safety: Applicability::Safe,
            variants,
        })
    }
}

/// A function already decorated with, or containing, `no_grad` / `inference_mode`.
fn already_disabled(file: &Parsed, func: Node<'_>) -> bool {
    let decorated = func.parent().is_some_and(|p| {
        p.kind() == "decorated_definition"
            && patch::children(p).into_iter().any(|d| {
                d.kind() == "decorator"
                    && (file.text_of(d).contains("no_grad")
                        || file.text_of(d).contains("inference_mode"))
            })
    });
    decorated
        || find_all(func, |n| n.kind() == "with_statement")
            .into_iter()
            .any(|w| grad_off(file, w))
}

fn grad_off(file: &Parsed, with: Node<'_>) -> bool {
    let head = with
        .child_by_field_name("body")
        .map_or(file.text_of(with), |b| {
            file.text
                .get(with.start_byte()..b.start_byte())
                .unwrap_or("")
        });
    head.contains("no_grad") || head.contains("inference_mode") || head.contains("set_grad_enabled")
}

fn inside_grad_context(file: &Parsed, node: Node<'_>) -> bool {
    let mut cur = node.parent();
    while let Some(p) = cur {
        if p.kind() == "with_statement" && grad_off(file, p) {
            return true;
        }
        if p.kind() == "function_definition" && already_disabled(file, p) {
            return true;
        }
        cur = p.parent();
    }
    false
}

/// A model passed in as a parameter: any call of an identifier named like a model.
fn calls_any(node: Node<'_>, file: &Parsed) -> bool {
    patch::any_in_scope(node, &|n| {
        n.kind() == "call"
            && n.child_by_field_name("function").is_some_and(|f| {
                f.kind() == "identifier" && {
                    let t = file.text_of(f);
                    t == "model" || t == "net" || t.ends_with("_model") || t == "module"
                }
            })
    })
}
