use crate::analysis::fix::enable_switch;
use crate::analysis::model::{Applicability, Fix};
use crate::analysis::resolve::switch_off_as_written;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a `DataLoader` (torch's, or PyTorch Geometric's `DataLoader` / `DenseDataLoader`)
    /// without `pin_memory`, or with `pin_memory=False` written in the
    /// call (or in the dict it unpacks, `loader_args = dict(..., pin_memory=False)` ...
    /// `DataLoader(ds, **loader_args)`), in a file that trains or infers on CUDA. A value from a variable or an option
    /// (`pin_memory=args.pin`) is left alone. A loader over text tokenised ahead of time (`ds.map(tokenize)`) whose collate only pads
    /// is not flagged: its batches are a few KB of token ids; nor is a loader over indices
    /// (`DataLoader(range(n), batch_size)`), nor one over a dataset of prompts
    /// (`PromptDataset(args.class_prompt, n)`: batches of text); nor is one over a `Dataset` class
    /// of the same file whose cheap `__getitem__` returns integer ids or tensors already on the
    /// device, nor one whose batch is its whole dataset (`batch_size=len(data)`, or the length `random_split` gave its part, `batch_size=val_length`), nor a loader read for a single batch (`next(iter(DataLoader(...)))`, `next(enumerate(loader))`, `loader.__iter__().__next__()`, `it = iter(loader)` (or `enumerate(loader)`) then one `next(it)`, a loop over it whose body always `break`s) or never
    /// read (only counted, `len(loader)`, `len(DataLoader(...))`), nor one over a dataset built with the device (`MelDataset(path, device)`), one whose `__getitem__` moves each item there, or with a
    /// collate of the file that puts each batch there (`torch.tensor(ids, device=device)`), or one
    /// built after `torch.set_default_device(device)` makes new tensors there: there
    /// is no stream of copies to overlap. A file whose every model is a module class of its own (or an inline `nn.Sequential`, or a single `torch.nn` layer,
    /// `model = nn.Linear(20, 1)`) with
    /// layer sizes the file states (literals, constants it binds, also at module level,
    /// `HIDDEN_SIZE = 64` or `IN, HIDDEN = 1, 64`, attributes `__init__` binds
    /// from them, `self.latent_size`, and their sums and products, or an environment's observation
    /// or action width, taken as at most 512; also through a helper of the file that builds
    /// layers from the sizes each call passes, `conv_block(3, 64)`; a graph dataset's node
    /// features (`dataset.num_features`, the first graph's `x.shape[1]`) taken as at most 4,096 for PyTorch Geometric's `GCNConv` / `SAGEConv` /
    /// `GraphConv` / `GATConv`; a feature matrix built from named columns of a table, as wide as
    /// the columns named) adding up to under 100,000
    /// parameters (a LeNet, a policy MLP) is left
    /// alone: its step is kernel-launch bound, and pinning changes nothing measurable. Nor is
    /// a file that feeds a text model token ids only (it tokenizes, or Keras made the ids,
    /// `sequence.pad_sequences(...)`, `imdb.load_data(...)`, or its model is sized by a
    /// vocabulary, `vocab_size=...`, `BiLSTM_CRF(len(words_vocab), ...)`, or its word index,
    /// `PoetryModel(len(word2ix), 128, 256)`, also through a name, `INPUT_DIM = len(vocab)`, and handles no image, audio or
    /// video, nor names them: `for images, texts in loader:`, `CLIP_DistilBert_ResNet`; a
    /// settings constant for a folder of plots, `DIR_IMAGES_HISTORY`, or a project's text
    /// cleaner, `PreProcessor`, names none), nor one whose every layer is an embedding table (word2vec, node2vec,
    /// TransE): a batch of ids is a few kilobytes.
    ///
    /// Reported on the line where the `DataLoader(` call starts.
    ///
    /// ## Why is this slow?
    /// Batches in pageable host memory are first copied by the driver into a pinned staging
    /// buffer, then to the GPU, and the copy cannot overlap compute. With `pin_memory=True` the
    /// loader's pin thread places batches in page-locked memory, so host→device copies run at
    /// full PCIe bandwidth and can be asynchronous (`non_blocking=True`).
    ///
    /// ## Example
    /// ```python
    /// import torch
    /// from torch.utils.data import DataLoader
    ///
    /// device = torch.device("cuda")
    /// loader = DataLoader(dataset, batch_size=64, num_workers=4)
    /// model.eval()
    /// with torch.no_grad():
    ///     for x, y in loader:
    ///         out = model(x.to(device))
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// from torch.utils.data import DataLoader
    ///
    /// device = torch.device("cuda")
    /// loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True)
    /// model.eval()
    /// with torch.no_grad():
    ///     for x, y in loader:
    ///         out = model(x.to(device, non_blocking=True))
    /// ```
    ///
    /// ## Fix safety
    /// `safe`: adds `pin_memory=True` (or turns a literal `False` into `True`). Pinned memory is locked host RAM: very large batches
    /// times `prefetch_factor` times workers can exhaust it.
    pub(crate) struct DataloaderPinMemory {
        id: "EA102",
        name: "dataloader-without-pin-memory",
        category: DataloaderPinMemory,
        resource: Gpu,
        severity: Low,
    }
}

impl Rule for DataloaderPinMemory {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        if !super::cuda(m)
            || !super::trains_or_infers(m)
            || super::tiny_model(m)
            || super::token_batches(m)
            || super::no_tf32::embedding_tables_only(m)
        {
            return;
        }
        for c in &m.calls {
            if !super::live_loader(m, c)
                || super::index_loader(m, c)
                || super::whole_dataset_batch(m, c)
                || super::device_resident_dataset(m, c)
                || super::loader_read_once(m, c)
                || super::pretokenized_text_loader(m, c)
                || super::cheap_local_dataset(m, c).is_some_and(|d| d.device_or_ids)
                || super::prompt_dataset(m, c)
                || !switch_off_as_written(m, c, "pin_memory", 7)
            {
                continue;
            }
            let fix = enable_switch(m, c, "pin_memory", 7).map(|e| Fix {
                applicability: Applicability::Safe,
                edits: vec![e],
            });
            cx.at_call(
                &Self::META,
                c,
                "DataLoader without `pin_memory=True` on CUDA: host→device copies go through pageable memory and cannot overlap compute".to_string(),
                fix,
            );
        }
    }
}
