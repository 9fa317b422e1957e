use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a CUDA training loop that runs entirely in fp32: no `torch.autocast`, no
    /// `GradScaler` (one switched off as shipped, `autocast(enabled=args.amp)` with `--amp` a
    /// `store_true` flag, counts as none, and so does a scaler bound and never used), no `.half()` / `.bfloat16()` model (OpenAI CLIP's `clip.load` loads one on CUDA, unless it is a frozen encoder, called only under `no_grad`, feeding a model the file trains, or is cast back, `model.float()`) (nor one loaded in its checkpoint's
    /// dtype, `torch_dtype="auto"`), no quantized weights
    /// (`load_in_8bit=True`, `quantization_config=`), no framework mixed-precision flag
    /// (for a Hugging Face Trainer the file runs, `trainer.train()` / `.evaluate()` /
    /// `.predict()`: `TrainingArguments` (or TRL's subclasses of it, `SFTConfig`,
    /// `RewardConfig`, `DPOConfig`, ...) without `bf16` / `fp16`; for
    /// Accelerate: `Accelerator()` without `mixed_precision=`, whose default is `"no"`; for
    /// FSDP: no `MixedPrecision` / `MixedPrecisionPolicy` with a 16-bit `param_dtype`). A float64
    /// model (`.double()`, `torch.set_default_dtype(torch.float64)`) asks for precision that
    /// mixed precision would drop, and is not reported. A file whose every model is a module class of its own (or an inline `nn.Sequential`, or a single `torch.nn` layer,
    /// `model = nn.Linear(20, 1)`) with
    /// layer sizes the file states (literals, constants it binds, also at module level,
    /// `HIDDEN_SIZE = 64` or `IN, HIDDEN = 1, 64`, attributes `__init__` binds
    /// from them, `self.latent_size`, and their sums and products (a method `__init__` calls that
    /// builds no layer, `self.weight_init()`, adds none), or an environment's observation
    /// or action width, taken as at most 512; also through a helper of the file that builds
    /// layers from the sizes each call passes, `conv_block(3, 64)`; a graph dataset's node
    /// features (`dataset.num_features`, the first graph's `x.shape[1]`) taken as at most 4,096 for PyTorch Geometric's `GCNConv` / `SAGEConv` /
    /// `GraphConv` / `GATConv`; a feature matrix built from named columns of a table, `x = torch.tensor(df[cols].values)` with
    /// `cols = ['a', 'b']`, as wide as the columns named; a class built several times with other sizes counts its
    /// largest build) adding up to under 1,000,000
    /// parameters (a LeNet, an MNIST MLP, a policy network) is left alone: its step waits on
    /// kernel launches, not arithmetic, and mixed precision only adds casts (an 821,761-parameter
    /// MLP at batch 1024 ran 0.78x as fast under bf16 autocast on an H200, BENCHMARKS.md).
    ///
    /// Reported on the `for` line of the file's first training step loop (the loader's loop
    /// around a few passes over each batch with the settings a list writes out, `for rate in
    /// size_rates:` of multi-scale training, not a critic's `for k in range(n_critic):`; for a Hugging Face
    /// Trainer or Lightning, the `TrainingArguments(` / `Trainer(` call; of several Trainers, the
    /// one bound to the name whose `fit` runs; a Lightning Trainer that only validates or
    /// predicts trains nothing and is left alone; for an Ignite trainer the file runs,
    /// `trainer.run(loader)`, the `create_supervised_trainer(` call without `amp_mode=`, or
    /// the `Engine(step)` call).
    ///
    /// ## Why is this slow?
    /// Tensor Cores run bf16/fp16 matrix multiplies several times faster than fp32 (8x to 16x
    /// the fp32 rate on A100/H100), and half-precision activations halve memory traffic.
    /// Automatic mixed precision typically gives 2–3x on Volta and newer GPUs.
    ///
    /// ## Example
    /// ```python
    /// import torch
    ///
    /// model = Net().to("cuda")
    /// torch.set_float32_matmul_precision("high")
    /// model = torch.compile(model)
    /// for x, y in train_loader:
    ///     loss = criterion(model(x), y)
    ///     loss.backward()
    ///     optimizer.step()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    ///
    /// model = Net().to("cuda")
    /// torch.set_float32_matmul_precision("high")
    /// model = torch.compile(model)
    /// for x, y in train_loader:
    ///     with torch.autocast("cuda", dtype=torch.bfloat16):
    ///         loss = criterion(model(x), y)
    ///     loss.backward()
    ///     optimizer.step()
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: mixed precision changes numerics (fp16 needs a `GradScaler`; bf16 has
    /// 7 mantissa bits), and custom losses or ops may need fp32. Validate the loss curve.
    pub(crate) struct NoAmp {
        id: "EA201",
        name: "training-without-amp",
        category: NoAmp,
        resource: Gpu,
        severity: High,
    }
}

impl Rule for NoAmp {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // also outside hot loops: a TrainingArguments-like config or a Lightning Trainer
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        use crate::analysis::prefilter::{Context, Triggers, t};
        Triggers::EngineOr(
            const {
                &t::with_hf_configs::<2, 10>([
                    t::part("lightning", Context::Anywhere),
                    t::called("create_supervised_trainer"),
                ])
            },
        )
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        let p = &m.facts.precision;
        if !super::cuda(m)
            || p.autocast
            || p.half
            || p.grad_scaler
            || p.unresolved
            || p.fp64
            || super::small_compute_model(m)
        {
            return;
        }
        let Some(l) = super::first_train_loop(m) else {
            // Ignite: `create_supervised_trainer(model, optimizer, loss, device="cuda")`
            // without `amp_mode=` (or an `Engine(step)` whose step has no autocast)
            if let Some((_, Some(built))) = super::ignite_engine(m) {
                let mode = m.kw(built, "amp_mode").or_else(|| m.kw(built, "scaler"));
                if mode.is_none() {
                    let message = if m.last_name(built) == "Engine" {
                        "Ignite `Engine` step in full fp32: wrap its forward pass and loss in `torch.autocast(\"cuda\", dtype=torch.bfloat16)` to use Tensor Cores"
                    } else {
                        "Ignite trainer in full fp32: pass `amp_mode=\"amp\"` to `create_supervised_trainer` to use Tensor Cores"
                    };
                    cx.at_call(&Self::META, built, message.to_string(), None);
                }
                return;
            }
            // Hugging Face / Lightning: precision is a flag of the framework's configuration
            if let Some(c) = super::framework_config_call(m) {
                let message = if crate::analysis::resolve::HF_CONFIGS.contains(&m.last_name(c)) {
                    "`TrainingArguments` without `bf16=True` / `fp16=True`: the Trainer runs in full fp32"
                } else if super::lightning_fit(m).is_some() {
                    "Lightning `Trainer` without `precision=\"bf16-mixed\"`: training runs in full fp32"
                } else {
                    // (a Trainer that only validates or predicts trains nothing)
                    return;
                };
                cx.at_call(&Self::META, c, message.to_string(), None);
            }
            return;
        };
        cx.at(
            &Self::META,
            l.line,
            l.col,
            l.end_line,
            "CUDA training in full fp32: wrap the forward pass and loss in `torch.autocast(\"cuda\", dtype=torch.bfloat16)` to use Tensor Cores".to_string(),
            None,
        );
    }
}
