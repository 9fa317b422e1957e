use crate::analysis::facts::NodeKind;
use crate::analysis::resolve::loader_arg;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a training `DataLoader` on CUDA whose batch size is a known constant ≤ 8, or not
    /// given at all (DataLoader's default of 1; not with a `batch_sampler`) (and the
    /// script does not fine-tune a large pretrained model, where memory dictates it:
    /// `from_pretrained(...)`, Segment Anything's `sam_model_registry[...](...)`; nor a file
    /// that trains on 3D volumes: MONAI, `nn.Conv3d`, a `UNet3D`-like model). A training loader
    /// is one a training loop iterates, or in a training script one bound to a name with
    /// `train` in it, also wrapped on the way (`train_loader = cycle(DataLoader(...))`); not
    /// the evaluation entry of a dict of loaders a phase loop reads, `{'train': ..., 'val':
    /// DataLoader(val_set, batch_size=8)}`.
    ///
    /// Reported on the line where the `DataLoader(` call starts.
    ///
    /// ## Why is this slow?
    /// A tiny batch launches the same number of kernels per step as a large one but gives each
    /// too little work to fill the GPU's SMs: the step is bound by launch overhead and the
    /// Python loop, not by compute.
    ///
    /// ## Example
    /// ```python
    /// import torch
    /// from torch.utils.data import DataLoader
    ///
    /// torch.set_float32_matmul_precision("high")
    /// train_loader = DataLoader(dataset, batch_size=4, num_workers=4, pin_memory=True, persistent_workers=True)
    /// model = torch.compile(model)
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = model(x.cuda(non_blocking=True)).sum()
    ///     loss.backward()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// from torch.utils.data import DataLoader
    ///
    /// torch.set_float32_matmul_precision("high")
    /// train_loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    /// model = torch.compile(model)
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = model(x.cuda(non_blocking=True)).sum()
    ///     loss.backward()
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: the batch size is a hyperparameter (scale the learning rate with it)
    /// and bounded by memory.
    pub(crate) struct SmallBatch {
        id: "EA702",
        name: "small-training-batch",
        category: SmallBatch,
        resource: Gpu,
        severity: Medium,
    }
}

impl Rule for SmallBatch {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if !super::cuda(m) || m.has_from_pretrained || volumes(m) {
            return;
        }
        for (ci, c) in m.calls.iter().enumerate() {
            if !super::live_loader(m, c) {
                continue;
            }
            // (no `batch_size` at all: DataLoader's default of 1, unless a batch sampler or
            // unpacked options decide it)
            let (bs, default) = match loader_arg(m, c, "batch_size", 1) {
                crate::analysis::facts::Val::Absent
                    if m.kw(c, "batch_sampler").is_none() && c.splat.is_none() =>
                {
                    (1, true)
                }
                v => match v.int() {
                    Some(bs) => (bs, false),
                    None => continue,
                },
            };
            if !(1..=8).contains(&bs) || evaluation_entry(m, c) {
                continue;
            }
            let var = m
                .assigns
                .iter()
                .find(|a| a.rhs_call == Some(ci as u32) && a.targets.len() == 1)
                .map(|a| m.text(a.left));
            let training = match var {
                Some(v) => {
                    m.loops
                        .iter()
                        .any(|l| l.info.train && l.info.iterates_loader.as_deref() == Some(v))
                        || (m.kind == crate::analysis::model::CodeKind::Train
                            && v.to_ascii_lowercase().contains("train"))
                }
                // (also a training loader wrapped on the way, `train_loader =
                // cycle(DataLoader(...))`, read by `next(train_loader)`)
                None => super::loader_container(m, ci, c).is_some_and(|v| {
                    super::container_loops(m, v).any(|l| l.info.train)
                        || (m.kind == crate::analysis::model::CodeKind::Train
                            && v.to_ascii_lowercase().contains("train"))
                }),
            };
            if !training {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                if default {
                    "batch_size defaults to 1, too small to fill a GPU: set it (and the learning rate) as memory allows".to_string()
                } else {
                    format!("batch_size={bs} is too small to fill a GPU: raise it (and the learning rate) as memory allows")
                },
                None,
            );
        }
    }
}

/// Is loader call `c` the value of an evaluation entry of a dict of loaders (`{'train':
/// DataLoader(...), 'val': DataLoader(...)}`)? The phase loop that trains on the `'train'` entry
/// only evaluates on this one.
// Ex) dataloaders = {'train': DataLoader(train_set, batch_size=8), 'val': DataLoader(val_set, batch_size=8)}
fn evaluation_entry(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    m.node(c.span)
        .and_then(|n| n.parent())
        .filter(|p| p.node_kind() == "pair")
        .and_then(|p| p.child_by_field_name("key"))
        .is_some_and(|k| {
            let key = m
                .node_text(k)
                .trim_matches(['"', '\''])
                .to_ascii_lowercase();
            k.node_kind() == "string"
                && ["val", "valid", "validation", "test", "eval", "dev"].contains(&key.as_str())
        })
}

/// Does the file train on 3D volumes (MONAI, `nn.Conv3d`, a `UNet3D`-like model)? A batch of two
/// volumes already fills the memory a batch of hundreds of images would (MONAI's loaders also
/// crop several patches per item, `num_samples`): the batch size is a memory decision, not
/// waste.
// Ex) model = UNet3D(in_channels=4, out_channels=3); DataLoader(volumes, batch_size=2)
fn volumes(m: &crate::analysis::facts::Model<'_>) -> bool {
    m.imports.values().any(|q| q.starts_with("monai"))
        || m.calls.iter().any(|c| {
            let last = m.last_name(c);
            last.contains("Conv3d") || last.contains("3D") || last.contains("3d")
        })
}
