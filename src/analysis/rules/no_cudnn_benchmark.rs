use crate::analysis::fix::{insert_after_imports, torch_name};
use crate::analysis::model::{Applicability, Fix};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a CUDA file that trains or runs a convolutional network (`nn.Conv*d`, torchvision
    /// or timm models, or a model built by a constructor named for a convolutional family:
    /// `UNet`, `ResNet18`, `EfficientNet.from_pretrained`, `FasterRCNN`, `NAFNet`, `SSD`, `CRNN`,
    /// `VoxNet`, `FCOS`, a `...ConvNet` of the project (`KWSConvNet`; not a `GraphConvNet`), or
    /// built from torchvision's ResNet blocks, `Hopenet(torchvision.models.resnet.Bottleneck,
    /// [3, 4, 6, 3], 66)`, or given a convolutional backbone, `encoder="resnet"`, or initialised as
    /// one, `isinstance(m, nn.Conv2d)` (or the DCGAN tutorial's `classname.find('Conv')`) in a function the file applies to the model,
    /// `net.apply(weights_init)`, or in a loop over `model.modules()`, or given one by name:
    /// `timm.create_model("resnet50")`, also the default of the parameter it is handed, `def
    /// __init__(self, model_name="resnet34")`; not a name the command line must give, which may
    /// be a vision transformer; `build_model(args.arch)`, `get_network(args.network)`, `getattr(models, args.arch)()` or `models.__dict__[args.arch]()` with `default="vgg16"`) and never sets `torch.backends.cudnn.benchmark`. Files that ask for
    /// deterministic algorithms (`torch.backends.cudnn.deterministic = True`, or set from a
    /// flag whose default is true) are left alone, as is a script whose every step loop sits
    /// behind a switch that is off by default (`if args.train:`, `if args.test:`): it builds its
    /// model and stops. Nor is an inference file that only hands its model to an exporter (an
    /// export script's one pass, `torch.onnx.export(model, dummy, path)`, `torch.jit.trace`,
    /// with no forward pass of its own and no loop running one): the autotuner times every
    /// candidate algorithm on the first pass of each shape, more than one pass can win back. A file whose every model is a module class of its own (or an inline `nn.Sequential`, or a single `torch.nn` layer,
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
    /// kernel launches, not arithmetic, and autotuning changes nothing measurable (on an H200 at
    /// batch 1024, BENCHMARKS.md).
    ///
    /// Reported where the model is placed on the device (`model = Net().to(device)`,
    /// `model.cuda()`), else (a placement only under a switch that is off as shipped, `if n_gpu > 1:` with
    /// `n_gpu = 1`, being none) where it is built (not at `accelerator.prepare(model)` /
    /// `fabric.setup(model)` / `deepspeed.initialize(model=net)`: a trained model handed to them is anchored where it is built (the last build before, when it is unconditional),
    /// ahead of a frozen one the file moves itself; for a Lightning script, where the module `trainer.fit(model)`
    /// trains is built). Where the same code places a network of a convolutional family and a
    /// model that is not one heads the anchor, on the convolutional network's placement (a
    /// ResNet placed before the BYOL wrapper that trains it; a DeepLab student before its
    /// distiller).
    ///
    /// ## Why is this slow?
    /// Without the autotuner cuDNN picks a convolution algorithm by heuristics. With
    /// `benchmark = True` it times the candidates once per input shape and keeps the fastest,
    /// which for fixed-size inputs is often 10–20 % faster per step on older cuDNN releases and
    /// unusual layer shapes. Recent heuristics often pick the same algorithm: on an H200 with
    /// torch 2.11 (cuDNN 9) a ResNet-50 training step in bf16 measured the same either way
    /// (BENCHMARKS.md, "The rules' costs"), hence the low severity.
    ///
    /// ## Example
    /// ```python
    /// import torch
    /// import torchvision
    ///
    /// model = torchvision.models.resnet50().to("cuda")
    /// model.eval()
    /// with torch.autocast("cuda", dtype=torch.bfloat16), torch.no_grad():
    ///     out = model(images)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// import torchvision
    /// torch.backends.cudnn.benchmark = True
    ///
    /// model = torchvision.models.resnet50().to("cuda")
    /// model.eval()
    /// with torch.autocast("cuda", dtype=torch.bfloat16), torch.no_grad():
    ///     out = model(images)
    /// ```
    ///
    /// ## Fix safety
    /// `numerics`: the chosen algorithms may differ run to run (not bitwise reproducible), and
    /// inputs whose size changes every step pay the tuning cost repeatedly.
    pub(crate) struct NoCudnnBenchmark {
        id: "EA204",
        name: "conv-without-cudnn-benchmark",
        category: NoCudnnBenchmark,
        resource: Gpu,
        severity: Low,
    }
}

impl Rule for NoCudnnBenchmark {
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
            || !super::convolutional(m)
            || m.facts.cudnn_benchmark.is_some()
            || m.deterministic
            || super::small_compute_model(m)
            || !super::steps_run_as_shipped(m)
            || runs_once(m)
        {
            return;
        }
        let Some((line, col, assign)) = super::model_anchor(m) else {
            return;
        };
        // (the convolutional network the same code places, where another model heads it: the
        // ResNet a BYOL wrapper trains, placed before the wrapper)
        let (line, col) = assign
            .and_then(|i| m.assigns.get(i))
            .and_then(|a| super::conv_placement_instead(m, line, a.ctx.func))
            .unwrap_or((line, col));
        let fix = torch_name(m).map(|t| Fix {
            applicability: Applicability::Numerics,
            edits: vec![insert_after_imports(
                m,
                &format!("{t}.backends.cudnn.benchmark = True"),
            )],
        });
        cx.at(
            &Self::META,
            line,
            col,
            line,
            "convolutional network on CUDA without `torch.backends.cudnn.benchmark = True`: cuDNN does not autotune its convolution algorithms".to_string(),
            fix,
        );
    }
}

/// Does an inference file only hand its model to an exporter or tracer
/// (`torch.onnx.export(model, dummy, path)`, `torch.jit.trace(model, dummy)`): no step loop,
/// no framework or other module running one for it, and no forward pass of its own (a
/// server's handler, `self.model(x)`, runs once per request)?
fn runs_once(m: &crate::analysis::facts::Model<'_>) -> bool {
    m.kind == crate::analysis::model::CodeKind::Infer
        && !m.loops.iter().any(|l| l.info.step)
        && super::hf_args_call(m).is_none()
        && super::lightning_fit(m).is_none()
        && !m.delegated_train
        && !m
            .calls
            .iter()
            .any(|c| crate::analysis::resolve::runs_model(m, c))
        && m.calls.iter().any(|c| {
            matches!(
                m.qual(c).as_ref(),
                "torch.onnx.export"
                    | "torch.jit.trace"
                    | "torch.jit.script"
                    | "torch.export.export"
            )
        })
}
