use crate::analysis::facts::Val;
use crate::analysis::fix::add_kwarg;
use crate::analysis::model::{Applicability, Edit, Fix};
use crate::analysis::resolve::loader_arg;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a `torch.utils.data.DataLoader` that loads in the main process: `num_workers` is
    /// missing or `0` (and Hugging Face `TrainingArguments` without `dataloader_num_workers`;
    /// not a bare `DataLoader(opt)` in a file that star-imports its repository's own loader
    /// module, `from dataloader import *`: that module's class).
    /// A value the analysis cannot resolve (`num_workers=args.workers` without a default it can
    /// read) is not flagged, nor is a loader over a `TensorDataset` with the default collate
    /// (its tensors in memory, on the CPU or already on the GPU: an item is one index into
    /// each, `DataLoader(TensorDataset(x, y), batch_size=64)`, or over a tensor itself, its rows the
    /// items, `DataLoader(torch.unsqueeze(img, 0), batch_size=8)`), one in
    /// a data-pipeline file that runs no model, or one over text tokenised ahead of time
    /// (`ds.map(tokenize)`) whose collate only pads (`DataCollatorWithPadding`,
    /// `default_data_collator`, `tokenizer.pad`): its batches cost about a millisecond to build.
    /// Nor is a loader over a `Dataset` class of the same file whose `__getitem__` only indexes
    /// what `__init__` prepared and wraps it in tensors, a copy of the item included
    /// (`self.audio[idx].copy()`; no decoding, transform, tokenizer or file), also when a function of the file returns the datasets (`train_ds, val_ds =
    /// make_datasets()`, or a name it bound, `dataset = Spectra(...)` ... `return dataset,
    /// names`), or a plain Python list of samples already in memory (also one a function of the
    /// file builds and returns, `train_data = preprocess_data(...)`) with the
    /// default collate or one that only pads (`pad_sequence`): workers have nothing to overlap. Nor is a loader over indices
    /// (`DataLoader(range(n), batch_size)`, `torch.arange(n)`, a dataset class named for them,
    /// `IndexSet(n)`), whose batches slice tensors the
    /// step already holds.
    /// Nor is a loader read for a single batch (`next(iter(DataLoader(...)))`, `loader.__iter__().__next__()`, `it = iter(loader)` (or `enumerate(loader)`) then one `next(it)`, a loop over it whose body always `break`s, or a name only
    /// ever used that way or counted, `len(loader)`, `len(DataLoader(...))`, or one whose batch is its whole dataset, `batch_size=len(data)` or the length `random_split` gave its part, `batch_size=val_length`):
    /// starting workers for one batch costs more than it saves (also `i, batch =
    /// next(enumerate(loader))`, or one loader of a dict of them,
    /// `next(iter(dataloaders["train"]))`, or the old iterator method, `iter(loader).next()`, also parenthesised);
    /// nor a fallback built in an
    /// `except` handler; nor a
    /// function's loader that nothing reads (also a script's object attribute the file never
    /// names again, `self.testloader = DataLoader(...)`), or that it returns to callers that never read
    /// it, `..., test_loader = load_dataset(...)` (nor one at module level in a script whose steps
    /// run at module level, itself or through a function it hands the optimizer,
    /// `train_one_epoch(model, optimizer, loader)`, or calls from an epoch loop there, `for
    /// epoch in range(n): loss = train(data)`, or whose `if __name__ == "__main__":`
    /// block runs its training, `train(1)`: a script is run, not imported for its loaders). Nor is a loader over a dataset built with the
    /// device (`MelDataset(path, device)`, also through a helper that builds the loader), or a
    /// `Dataset` class of the file whose `__getitem__` moves each item there, or
    /// with a collate of the file that puts each batch there (`torch.tensor(ids,
    /// device=device)`), or one of several datasets a call builds with the device (`train_ds,
    /// val_ds = split.get_datasets(device)`), or one built after `torch.set_default_device(device)`
    /// makes new tensors there: its samples are already on the GPU, where forked workers cannot reach. Nor is a
    /// loader in a file that feeds a text model token ids only (it tokenizes, hands over a
    /// dataset named for its tokens, `tokenized_datasets["train"]`, or reads batches
    /// by `input_ids`, and handles no image, audio or video, nor
    /// names them: `for images, texts in loader:`) when it adds no per-item transform (a
    /// dataset class of the file that tokenizes each item in `__getitem__`,
    /// `self.tokenizer.encode_plus(text, ...)`, is one) and its collate, if any, only pads: a
    /// batch of ids is a few row lookups; nor a Hugging Face `TrainingArguments` there that
    /// sets no per-item transform (nor trains on such a tokenizing dataset class).
    ///
    /// Reported on the line where the `DataLoader(` call starts (for a Hugging Face Trainer, the
    /// `TrainingArguments(` call).
    ///
    /// ## Why is this slow?
    /// With no workers, every batch is read, decoded, transformed and collated by the training
    /// process itself, one sample at a time, while the GPU waits. One CPU of the machine works;
    /// the others idle. Worker processes prepare the next batches in parallel with the step
    /// (PyTorch tuning guide: ~2.7x in a data-bound case).
    ///
    /// ## Example
    /// ```python
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(dataset, batch_size=64, shuffle=True)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, persistent_workers=True)
    /// ```
    ///
    /// ## Fix safety
    /// `numerics`: the fix adds `num_workers=4` and `persistent_workers=True` (and
    /// `pin_memory=True` on CUDA). Random augmentations are then drawn per worker, so the
    /// sample stream differs. Datasets holding unpicklable state (open files, lambdas, database
    /// connections) fail under the `spawn` start method, and scripts need an
    /// `if __name__ == "__main__":` guard there.
    pub(crate) struct DataloaderWorkers {
        id: "EA101",
        name: "dataloader-without-workers",
        category: DataloaderWorkers,
        resource: Cpu,
        severity: High,
    }
}

impl Rule for DataloaderWorkers {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // also outside hot loops: a DataLoader call or a TrainingArguments-like config
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        use crate::analysis::prefilter::{Context, Triggers, t};
        Triggers::EngineOr(
            const {
                &t::with_hf_configs::<2, 10>([
                    t::contains("dataloader", Context::Called),
                    t::code("torch"),
                ])
            },
        )
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        for c in &m.calls {
            // a loader in a data-pipeline file that runs no model (a data tutorial, a
            // preprocessing pass) has no accelerator waiting on it
            if m.kind == crate::analysis::model::CodeKind::Data
                || !super::live_loader(m, c)
                || super::index_loader(m, c)
                || super::device_resident_dataset(m, c)
                || super::loader_read_once(m, c)
                || super::pretokenized_text_loader(m, c)
                || super::token_id_loader(m, c)
                || super::tensor_dataset(m, c)
                || super::in_memory_list(m, c)
                || super::cheap_local_dataset(m, c).is_some()
                || super::whole_dataset_batch(m, c)
            {
                continue;
            }
            let nw = loader_arg(m, c, "num_workers", 5);
            let fix = match &nw {
                Val::Absent => {
                    let mut add = vec!["num_workers=4"];
                    if loader_arg(m, c, "persistent_workers", usize::MAX) == Val::Absent {
                        add.push("persistent_workers=True");
                    }
                    if super::cuda(m) && loader_arg(m, c, "pin_memory", 7) == Val::Absent {
                        add.push("pin_memory=True");
                    }
                    add_kwarg(m, c, &add.join(", ")).map(|e| vec![e])
                }
                Val::Int(0) => m.kw(c, "num_workers").map(|a| {
                    vec![Edit {
                        start: a.value.start,
                        end: a.value.end,
                        content: "4".to_string(),
                    }]
                }),
                _ => continue,
            };
            let message = if nw == Val::Absent {
                "DataLoader without `num_workers`: batches are loaded in the main process while the GPU waits; add `num_workers` (e.g. 4) and `persistent_workers=True`"
            } else {
                "DataLoader with `num_workers=0`: batches are loaded in the main process while the GPU waits; use worker processes (e.g. `num_workers=4`)"
            };
            cx.at_call(
                &Self::META,
                c,
                message.to_string(),
                fix.map(|edits| Fix {
                    applicability: Applicability::Numerics,
                    edits,
                }),
            );
        }
        // HF `TrainingArguments` loads in the main process unless `dataloader_num_workers` is set.
        // (a Trainer over text only collates token ids: padding them costs about a
        // millisecond; a per-item transform is work again)
        let text_only = super::token_batches(m)
            && !m
                .calls
                .iter()
                .any(|x| matches!(m.last_name(x), "set_transform" | "with_transform"))
            && !super::trainer_tokenizes_per_item(m);
        if let Some(c) = super::hf_args_call(m)
            && c.splat.is_none()
            && !c.star
            && !text_only
        {
            let v = m
                .kw(c, "dataloader_num_workers")
                .map(|a| m.resolve(&a, c.span.start, c.ctx.func));
            if matches!(v, None | Some(Val::Int(0))) {
                let fix = if v.is_none() {
                    add_kwarg(
                        m,
                        c,
                        "dataloader_num_workers=4, dataloader_persistent_workers=True",
                    )
                    .map(|e| Fix {
                        applicability: Applicability::Numerics,
                        edits: vec![e],
                    })
                } else {
                    None
                };
                cx.at_call(
                    &Self::META,
                    c,
                    "`TrainingArguments` without `dataloader_num_workers`: the Trainer loads batches in the main process; set `dataloader_num_workers` (e.g. 4)".to_string(),
                    fix,
                );
            }
        }
    }
}
