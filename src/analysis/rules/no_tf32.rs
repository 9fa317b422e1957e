use crate::analysis::facts::NodeKind;
use crate::analysis::fix::{insert_after_imports, torch_name};
use crate::analysis::model::{Applicability, Fix};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags CUDA training or inference in fp32 (no autocast, no half-precision or quantized
    /// model (OpenAI CLIP's `clip.load` on CUDA, unless a frozen encoder feeding a model the
    /// file trains, or one cast back, `model.float()`), nor one loaded in its checkpoint's dtype, `torch_dtype="auto"`, nor one cast to a
    /// dtype the file does not show, `model.to(dtype)` with `dtype = parse_dtype(args.dtype)`,
    /// nor one built after `torch.set_default_tensor_type(torch.cuda.HalfTensor)`; inference also through a sentence-transformers encoder's `model.encode(...)`)
    /// that does not enable TF32 for matrix multiplies
    /// (`torch.set_float32_matmul_precision("high")` or
    /// `torch.backends.cuda.matmul.allow_tf32 = True`). Reported where the model an optimizer
    /// trains is placed on the device (not a frozen teacher placed before it). A file whose every model is a module class of its own (or an inline `nn.Sequential`, or a single `torch.nn` layer,
    /// `model = nn.Linear(20, 1)`) with
    /// layer sizes the file states (literals, constants it binds, also at module level,
    /// `HIDDEN_SIZE = 64` or `IN, HIDDEN = 1, 64`, attributes `__init__` binds
    /// from them, `self.latent_size`, and their sums and products (a method `__init__` calls that
    /// builds no layer, `self.weight_init()`, adds none, nor does a buffer, `self.register_buffer(...)`,
    /// the module placing itself, `self.cuda()`, or building its optimizer), or an environment's observation
    /// or action width, taken as at most 512; also through a helper of the file that builds
    /// layers from the sizes each call passes, `conv_block(3, 64)`; a graph dataset's node
    /// features (`dataset.num_features`, the first graph's `x.shape[1]`) taken as at most 4,096 for PyTorch Geometric's `GCNConv` / `SAGEConv` /
    /// `GraphConv` / `GATConv`; a feature matrix built from named columns of a table, `x = torch.tensor(df[cols].values)` with
    /// `cols = ['a', 'b']`, as wide as the columns named; a class built several times with other sizes counts its
    /// largest build) adding up to under 1,000,000
    /// parameters (a LeNet, an MNIST MLP, a policy network) is left alone: its step waits on
    /// kernel launches, not arithmetic, and TF32 changes nothing measurable (on an H200 at
    /// batch 1024, BENCHMARKS.md).
    ///
    /// Reported only where the file shows matmul work: attention or transformer layers (by
    /// call, or by a name the file calls, defines, imports or quotes (not in a message it
    /// prints or logs): `GPT(config)`,
    /// `vit_b_16()`, `"microsoft/deberta-v3-small"`, `import transformers`, MiDaS's
    /// `"DPT_Hybrid"`, a class named for a Hugging Face language-model head, `VibyForCausalLM`
    /// (`*ForCausalLM`, `*ForMaskedLM`, `*ForSeq2SeqLM`, `*ForConditionalGeneration`); not a variable,
    /// constant or keyword such as `attention_mask` or `ATTENTION_SIZE`, nor the name of a
    /// command-line option off as shipped, `'--decoder_attention_type', default=None`, nor a
    /// model built only
    /// in a branch that is off as shipped and the import of it, nor a string compared with an
    /// option or listed in its `choices=` (`elif args.model == "ViT": model =
    /// VisionTransformer(...)` with `default="ResNet"`), nor a data
    /// transformation such as `DataTransformer` or `ColumnTransformer`, nor a variable bound to
    /// a transform pipeline, `transformer = T.Compose([...])` or one of a table of them,
    /// `transformer = data_transforms["valid"]`, nor a Python file's path,
    /// `shutil.copy("nn_module/attention_module.py", d)`, nor the folders of a path, whose
    /// own file name alone counts: `"/home/u/dinov2/datasets/derma.npz"`), recurrent cells
    /// (`nn.LSTMCell`), batched products (`torch.bmm`, `torch.einsum`; not in a network of
    /// embedding tables only, a word2vec or TransE model, whose products are gathered dot
    /// products), or `nn.Linear` layers in a network without convolutions or cuDNN
    /// recurrent layers. Not reported for a convolutional or recurrent network without
    /// attention (its layers, or its name: `resnet50()`, `MobileNet()`, `nn.LSTM`, `DecoderRNN`,
    /// `BiLSTM_CRF`; a U-Net by any name, `AttentionUNet`, whose attention gates are 1x1
    /// convolutions; fast neural style's `TransformerNet` (or a variant, `CompoundTransformerNet`)
    /// in a style-transfer script, training or stylizing, residual
    /// convolutions): cuDNN runs convolutions and LSTM / GRU / RNN layers in TF32 already
    /// (`torch.backends.cudnn.allow_tf32` defaults to `True`; on an H200 a 2×1024 LSTM ran
    /// 2.43x faster with it and no faster with the matmul switch, BENCHMARKS.md), and the
    /// matmul setting only reaches its few Linear layers. Nor for a model whose layers the
    /// file does not show (`from models import Net`), also one handed in or fetched and given a
    /// new head, `model.classifier[6] = nn.Linear(num_ftrs, num_classes)`, `self.model.fc =
    /// nn.Linear(self.model.fc.in_features, n)` after `torch.hub.load(...)`, or a module of the file
    /// around a timm backbone its configuration names, `timm.create_model(config.model_name)`
    /// beside `nn.Linear(d, n)`: it may be either. Nor for a script whose
    /// every step loop sits behind a switch that is off by default (`if args.train:`, `if
    /// args.test:`): it builds its model and stops. Nor for a float64
    /// model (`.double()`): TF32 does not touch fp64 matmuls. Nor for a file whose training
    /// runs in another module: a function handed the optimizer (`train_one_epoch(model,
    /// optimizer, loader)`, also a method of an object of an imported class, `runner =
    /// Runner(...)` ... `runner.train(model=model, optimizer=optimizer)`), or a trainer class of the repository's own code built with the
    /// model (by its kind, or as `model=`) in a file that builds no optimizer (`trainer = Trainer(model=model, config=cfg)`
    /// from `src.trainer_ddp`, then `trainer.train()`): its precision settings are that
    /// module's.
    ///
    /// Reported where the model that is trained (or, for inference, run: the one its step loop
    /// calls, not a featurizer placed before it) is placed on the device
    /// (`model = Net().to(device)`, `model.cuda()`), else, for a Hugging Face Trainer, at the
    /// `TrainingArguments(` call (a Lightning `Trainer(`, the one that fits), else where the model is built. A file
    /// that configures a Hugging Face trainer it never runs (`#trainer.train()`), with no loop
    /// of its own that runs the model, computes nothing and is left alone.
    ///
    /// ## Why is this slow?
    /// PyTorch computes fp32 matmuls on CUDA cores by default. On Ampere and newer GPUs, TF32
    /// runs them on Tensor Cores at up to 8x the fp32 rate (an H100 SXM: 67 fp32 vs 495 dense
    /// TF32 TFLOP/s); fp32 alone caps the GPU at a small fraction of its peak.
    ///
    /// ## Example
    /// ```python
    /// import torch
    /// from transformers import AutoModel
    ///
    /// model = AutoModel.from_pretrained("bert-base-uncased").to("cuda")
    /// model.eval()
    /// with torch.no_grad():
    ///     out = model(**batch)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import torch
    /// from transformers import AutoModel
    /// torch.set_float32_matmul_precision("high")
    ///
    /// model = AutoModel.from_pretrained("bert-base-uncased").to("cuda")
    /// model.eval()
    /// with torch.no_grad():
    ///     out = model(**batch)
    /// ```
    ///
    /// ## Fix safety
    /// `numerics`: TF32 keeps 10 mantissa bits for the multiply. Most training converges the
    /// same (NVIDIA), but precise linear algebra and fp32 accuracy tests can differ.
    pub(crate) struct NoTf32 {
        id: "EA202",
        name: "fp32-without-tf32",
        category: NoTf32,
        resource: Gpu,
        severity: High,
    }
}

impl Rule for NoTf32 {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        let p = &m.facts.precision;
        if !super::cuda(m)
            || !(super::trains_or_infers(m) || encodes_sentences(m))
            || p.autocast
            || p.half
            || p.tf32
            || p.fp64
            || p.unresolved
            || super::small_compute_model(m)
            || m.delegated_train
            || super::own_trainer_runs(m)
        {
            // (a training loop in another module may well run under autocast)
            return;
        }
        // a Hugging Face configuration whose trainer never runs, and no loop of its own that
        // runs the model: nothing computes
        if super::hf_args_call(m).is_none()
            && m.calls
                .iter()
                .any(|c| crate::analysis::resolve::hf_config(m, c))
            && !m.loops.iter().any(|l| {
                (l.info.step || l.info.train) && !m.dead(&l.ctx) && !m.uncalled_line(l.line)
            })
        {
            return;
        }
        if !super::steps_run_as_shipped(m) && !encodes_sentences(m) {
            return;
        }
        let arch = architecture(m);
        // (cuDNN runs convolutions and LSTM/GRU/RNN layers under its own TF32 switch, on by
        // default: an LSTM measured 2.43x faster with it and no faster with the matmul switch)
        let exempt_cudnn =
            (arch.conv || arch.recurrent) && !arch.attention && p.cudnn_allow_tf32 != Some(false);
        if !(arch.attention || arch.linear || arch.recurrent) || exempt_cudnn {
            // a model whose layers the file does not show (`from models import Net`) may be a
            // convolutional network, which cuDNN already runs in TF32: unknown stays silent
            return;
        }
        // where the file places the model; else a Hugging Face or Lightning script is
        // configured in its `TrainingArguments` / `Trainer`
        let hf = super::framework_config_call(m).map(|c| (c.line, c.col));
        let anchor = super::model_placement(m)
            .map(|(l, c, _)| (l, c))
            .or(hf)
            .or_else(|| super::model_anchor(m).map(|(l, c, _)| (l, c)))
            .or_else(|| super::first_train_loop(m).map(|l| (l.line, l.col)));
        let Some((line, col)) = anchor else { return };
        let fix = torch_name(m).map(|t| Fix {
            applicability: Applicability::Numerics,
            edits: vec![insert_after_imports(
                m,
                &format!("{t}.set_float32_matmul_precision(\"high\")"),
            )],
        });
        cx.at(
            &Self::META,
            line,
            col,
            line,
            "fp32 on CUDA without TF32: matmuls run on CUDA cores at a fraction of the Tensor Core rate; call `torch.set_float32_matmul_precision(\"high\")`".to_string(),
            fix,
        );
    }
}

/// Layers and ops whose work is matmuls that the matmul TF32 switch governs.
const MATMUL_LAYERS: &[&str] = &[
    "MultiheadAttention",
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "scaled_dot_product_attention",
    "LSTMCell",
    "GRUCell",
    "RNNCell",
];

/// Batched matrix products written as ops: attention by hand (`torch.bmm(q, k.transpose(1,
/// 2))`), unless every layer the file builds is an embedding table (a word2vec or TransE
/// score, `torch.bmm(neg_embed, center.unsqueeze(2))`, is a gathered dot product that reads
/// memory, not a matmul Tensor Cores would speed up).
const MATMUL_OPS: &[&str] = &["bmm", "einsum"];

/// Words of a function's name that say it scores a model's outputs (`test`, `evaluate`): a
/// product there (`torch.matmul(p1.unsqueeze(2), p2.unsqueeze(1))` over an answer span's
/// ends) is not the model's arithmetic.
const EVAL_WORDS: &[&str] = &["test", "eval", "valid", "score", "metric", "decode"];

/// Words that make a name a data transformation rather than a model, whatever transformer word
/// it also holds (`DataTransformer`, `ColumnTransformer`, `feature_transformer`; also
/// `bert_data`): such a name is not read as naming an attention model.
const DATA_TRANSFORMS: &[&str] = &[
    "data", "column", "feature", "label", "power", "quantile", "function", "target",
];

/// cuDNN's recurrent layers: their TF32 switch is `torch.backends.cudnn.allow_tf32`, on by
/// default (their `*Cell` versions run on matmuls, under the matmul switch).
const RECURRENT_LAYERS: &[&str] = &["LSTM", "GRU", "RNN"];

/// Words that name a transformer or attention model (`vit_b_16`, `"vit" in args.arch`,
/// `import vision_transformer as vits`): where a script names one, the network it builds may
/// be one, whatever convolutional alternative it also offers.
const TRANSFORMER_WORDS: &[&str] = &[
    "vit",
    "vits",
    "swin",
    "deit",
    "beit",
    "xcit",
    "cait",
    "transformer",
    "transformers",
    "attention",
    "attn",
    "bert",
    "gpt",
    "llama",
    "t5",
    "bart",
    "roberta",
    "deberta",
    "distilbert",
    "albert",
    "electra",
    "xlnet",
    "mistral",
    "mixtral",
    "qwen",
    "gemma",
    "whisper",
    "siglip",
    // a detection transformer (`DETR(...)`, `DetrForObjectDetection`), sentence encoders
    // (`"all-MiniLM-L6-v2"`, `"all-mpnet-base-v2"`), a self-supervised ViT (`"dinov2_vits14"`)
    "detr",
    // MiDaS's Dense Prediction Transformers (`torch.hub.load("intel-isl/MiDaS", "DPT_Hybrid")`)
    "dpt",
    "minilm",
    "mpnet",
    "dinov2",
    // the pyramid, multiscale and hybrid vision transformers (`PolypPVT`, `pvt_v2_b2`, `MViT`,
    // `MaxViT`, `LeViT`)
    "pvt",
    "mvit",
    "maxvit",
    "levit",
    // self-attentive sequential recommenders (`SASRec(usernum, itemnum, args)`, `BERT4Rec`)
    "sasrec",
];

/// Class-name endings of Hugging Face's language-model heads: a class so named (also the
/// repository's own, `VibyForCausalLM`) is a transformer.
const LM_HEADS: &[&str] = &[
    "ForCausalLM",
    "ForMaskedLM",
    "ForSeq2SeqLM",
    "ForConditionalGeneration",
];

/// Does the file run a sentence-transformers encoder: a `.encode(...)` that runs as shipped on
/// a name bound to `SentenceTransformer(...)`? The library batches and disables autograd
/// itself, so the file may read as data processing, but every batch is a transformer's
/// forward pass in fp32.
// Ex) model = SentenceTransformer(args.model_name).to(device) ... model.encode(batch)
fn encodes_sentences(m: &crate::analysis::facts::Model<'_>) -> bool {
    m.calls.iter().any(|c| {
        c.method.is_some()
            && m.last_name(c).starts_with("encode")
            && !m.dead(&c.ctx)
            && !m.uncalled_line(c.line)
            && c.recv.is_some_and(|r| {
                m.assigns.iter().any(|a| {
                    m.text(a.left) == m.text(r)
                        && a.rhs_call
                            .and_then(|i| m.calls.get(i as usize))
                            .is_some_and(|k| {
                                m.last_name(k) == "SentenceTransformer"
                                    || m.qual(k).starts_with("sentence_transformers")
                            })
                })
            })
    })
}

/// Is identifier `n`, whose parent is `p` and grandparent `g`, the function of a call, a
/// class's name or base, or part of an import?
fn names_a_model(
    n: tree_sitter::Node<'_>,
    p: Option<tree_sitter::Node<'_>>,
    g: Option<tree_sitter::Node<'_>>,
) -> bool {
    let Some(p) = p else { return false };
    let called = |call: Option<tree_sitter::Node<'_>>, f: tree_sitter::Node<'_>| {
        call.filter(|c| c.node_kind() == "call")
            .and_then(|c| c.child_by_field_name("function"))
            .is_some_and(|func| func.id() == f.id())
    };
    match p.node_kind() {
        "call" => called(Some(p), n),
        "attribute" => {
            p.child_by_field_name("attribute")
                .is_some_and(|a| a.id() == n.id())
                && called(g, p)
        }
        "class_definition" => p
            .child_by_field_name("name")
            .is_some_and(|a| a.id() == n.id()),
        "argument_list" => g.is_some_and(|g| g.node_kind() == "class_definition"),
        "dotted_name" | "aliased_import" => true,
        _ => false,
    }
}

/// What the file shows of its network's layers.
struct Architecture {
    /// Convolution layers, or a convolutional model by name (`resnet50()`, `MobileNet()`).
    conv: bool,
    /// Attention, transformer or recurrent layers (by call or by name, `vit_b_16`,
    /// `import transformers`): matmul work the TF32 switch governs.
    attention: bool,
    /// `nn.Linear` layers or matrix products (`torch.matmul`).
    linear: bool,
    /// cuDNN recurrent layers (`nn.LSTM`, `nn.GRU`, `nn.RNN`; or named: `DecoderRNN`,
    /// `BiLSTM_CRF`), which cuDNN runs in TF32 already.
    recurrent: bool,
    /// Embedding tables and nothing else (a word2vec, node2vec or TransE model): its batches
    /// are integer ids, its products gathered dot products.
    tables_only: bool,
}

/// Is every layer the file shows an embedding table (`nn.Embedding`; no Linear, convolution,
/// recurrent or attention layer by call or by name)?
pub(super) fn embedding_tables_only(m: &crate::analysis::facts::Model<'_>) -> bool {
    // (the whole-file scan only where a module class of the file builds a table at all)
    m.calls
        .iter()
        .any(|c| c.ctx.class.is_some() && matches!(m.last_name(c), "Embedding" | "EmbeddingBag"))
        && architecture(m).tables_only
}

/// Reads [`Architecture`] from the calls and the names and strings of the code (not its
/// comments or docstrings).
fn architecture(m: &crate::analysis::facts::Model<'_>) -> Architecture {
    let [conv, attention, linear, recurrent, tables_only] = *m.architecture.get_or_init(|| {
        let a = read_architecture(m);
        [a.conv, a.attention, a.linear, a.recurrent, a.tables_only]
    });
    Architecture {
        conv,
        attention,
        linear,
        recurrent,
        tables_only,
    }
}

/// [`architecture`], read from the file.
fn read_architecture(m: &crate::analysis::facts::Model<'_>) -> Architecture {
    let mut arch = Architecture {
        conv: super::convolutional(m),
        attention: false,
        linear: false,
        recurrent: false,
        tables_only: false,
    };
    // matrix products written as ops, and embedding tables (see [`MATMUL_OPS`])
    let (mut ops_attention, mut ops_linear) = (false, false);
    let mut embedding: Option<bool> = None;
    for c in &m.calls {
        // (a layer built in a branch that never runs as shipped, `if pretrained: model.fc =
        // nn.Linear(...)` with the flag off, builds nothing)
        if m.dead(&c.ctx) || m.uncalled_line(c.line) {
            continue;
        }
        let last = m.last_name(c);
        // a Hugging Face transformers model class (`AutoModelForCausalLM.from_pretrained`) or
        // Trainer; its tokenizers, processors and configs are not models
        let q = m.qual(c);
        let hf_model = (q.starts_with("transformers.")
            && (last == "pipeline" || matches!(last, "from_pretrained" | "from_config"))
            && !["Tokenizer", "Processor", "Config", "FeatureExtractor"]
                .iter()
                .any(|w| m.text(c.func).contains(w)))
            // its Trainer trains (nearly always) one of its models
            || ((q.starts_with("transformers.") || q.starts_with("trl."))
                && (last.ends_with("Trainer")
                    || last.ends_with("TrainingArguments")
                    || crate::analysis::resolve::HF_CONFIGS.contains(&last)));
        arch.attention |= MATMUL_LAYERS.contains(&last) || hf_model;
        arch.recurrent |= RECURRENT_LAYERS.contains(&last);
        // (a library's `MLP`, `torchvision.ops.MLP`; not a project's class of another module,
        // `from mlp_pytorch import MLP`, whose layers the file does not show)
        let library_mlp = last == "MLP" && (q.starts_with("torch") || q.starts_with("timm."));
        arch.linear |= (matches!(last, "Linear" | "LazyLinear") || library_mlp) && !new_head(m, c);
        // (a product in the model's code, not in the scoring of its outputs: QANet's
        // `outer = torch.matmul(p1.unsqueeze(2), p2.unsqueeze(1))` over the answer span's ends)
        let in_model = c.ctx.class.is_some()
            || c.ctx.func.is_some_and(|f| {
                m.funcs
                    .get(f as usize)
                    .is_some_and(|f| !EVAL_WORDS.iter().any(|w| m.text(f.name).contains(w)))
            })
            || c.ctx
                .loop_
                .and_then(|l| m.loops.get(l as usize))
                .is_some_and(|l| l.info.train);
        ops_attention |= in_model && MATMUL_OPS.contains(&last);
        ops_linear |= in_model && matches!(last, "matmul" | "mm");
        // (tables a module class of the file holds: a latent code table beside a decoder
        // imported from elsewhere, DeepSDF's `lat_vecs = nn.Embedding(n, 256)`, says nothing
        // of that decoder)
        if matches!(last, "Embedding" | "EmbeddingBag") {
            embedding = Some(embedding.unwrap_or(true) && c.ctx.class.is_some());
        }
    }
    // `class Layer(nn.Linear):` builds Linear layers by subclassing
    for k in &m.classes {
        for base in k
            .bases
            .map(|b| m.text(b))
            .unwrap_or("")
            .split([',', '(', ')'])
        {
            let last = base.trim().rsplit('.').next().unwrap_or("");
            arch.attention |= MATMUL_LAYERS.contains(&last);
            arch.recurrent |= RECURRENT_LAYERS.contains(&last);
            arch.linear |= matches!(last, "Linear" | "LazyLinear");
        }
    }
    let mut cursor = m.tree.walk();
    // (each node with its parent and grandparent: asking a node for its parent walks down from
    // the root)
    let mut stack = vec![(m.tree.root_node(), None, None)];
    while let Some((n, parent, grandparent)) = stack.pop() {
        if arch.attention {
            break;
        }
        let word = match n.node_kind() {
            // importing from Hugging Face transformers is not building a transformer (`from
            // transformers import get_cosine_schedule_with_warmup`): its models are known by
            // their `from_pretrained` (and `pipeline`) calls above
            "import_statement" | "import_from_statement"
                if m.src.get(n.start_byte()..n.end_byte()).is_some_and(|t| {
                    let mut w = t.split_whitespace();
                    w.nth(1)
                        .is_some_and(|module| module.split('.').next() == Some("transformers"))
                }) =>
            {
                continue;
            }
            // a name that builds, defines or imports something: the function of a call
            // (`GPT(config)`, `models.vit_b_16()`), a class or its base, an import; not a
            // variable, a constant or a keyword (`attention_mask`, `ATTENTION_SIZE = 64`,
            // `use_attention=True`), which name no layers the file shows
            // (not a variable bound to a transform: `transformer = T.Compose([...])`)
            "identifier" => {
                names_a_model(n, parent, grandparent) && {
                    // (the binding is looked up only for a name that could name a transformer)
                    let t = m.node_text(n).to_ascii_lowercase();
                    !(t.contains("former") && bound_to_transform(m, n))
                }
            }
            // (not a docstring, nor the help text of a command-line option: `help="Number of
            // encoding layers in the transformer"` names no model the file builds)
            // (nor a source file's path)
            "string" if source_path(m.node_text(n)) => false,
            // (nor the name of a command-line option that is off as shipped,
            // `add_argument('--decoder_attention_type', default=None)`: the feature it names is
            // not built; one with a value, `'--attn_pdrop', default=0.1`, still hints at it)
            "string" if option_off(m, m.node_text(n)) => false,
            "string" => parent.is_none_or(|p| {
                p.node_kind() != "expression_statement"
                    // (`argparse.ArgumentParser('Set transformer detector')`: a program's title;
                    // `print(f"Fine-tuning AST Audio Transformer on {device}")`: a message)
                    && !(p.node_kind() == "argument_list"
                        && grandparent
                            .and_then(|call: tree_sitter::Node<'_>| call.child_by_field_name("function"))
                            .is_some_and(|f| {
                                m.src.get(f.start_byte()..f.end_byte()).is_some_and(|t| {
                                    t.ends_with("ArgumentParser")
                                        || t == "print"
                                        || [".info", ".debug", ".warning", ".write", ".log"]
                                            .iter()
                                            .any(|w| t.ends_with(w))
                                })
                            }))
                    && !(p.node_kind() == "keyword_argument"
                        && p.child_by_field_name("name").is_some_and(|k| {
                            matches!(
                                m.src.get(k.start_byte()..k.end_byte()),
                                Some("help" | "description" | "epilog" | "metavar")
                            )
                        }))
            }),
            _ => false,
        };
        if n.node_kind() != "string" {
            stack.extend(n.named_children(&mut cursor).map(|c| (c, Some(n), parent)));
        }
        if !word {
            continue;
        }
        let text = m.src.get(n.start_byte()..n.end_byte()).unwrap_or("");
        // (of a file-system path, only the file's own name: the folders it lies in name a
        // project, `"/home/u/Pruning/dinov2/datasets/derma.npz"`)
        let text = if n.node_kind() == "string" {
            path_tail(text)
        } else {
            text
        };
        // an Attention U-Net gates its skip connections with 1x1 convolutions: a U-Net by any
        // name stays convolutional
        // Ex) model = AttentionUNet(in_channels=3, num_classes=10).to(device)
        if n.node_kind() == "identifier" && text.to_ascii_lowercase().contains("unet") {
            continue;
        }
        // fast neural style's image transformation network, `TransformerNet` (PyTorch's
        // example, copied widely), is residual convolutions: in a style-transfer script the
        // name says nothing of attention
        // Ex) from models import TransformerNet, VGG16 ... transformer = TransformerNet().to(device)
        // (also a variant, `CompoundTransformerNet`, and the module it is imported from,
        // `from models.video_transformer import CompoundTransformerNet`)
        let imports_style_net = || {
            [parent, grandparent].into_iter().flatten().any(|p| {
                p.node_kind() == "import_from_statement"
                    && m.node_text(p).contains("TransformerNet")
            })
        };
        if n.node_kind() == "identifier"
            && (text.ends_with("TransformerNet")
                || imports_style_net()
                || bound_to(m, n, "TransformerNet"))
            && style_transfer(m.src)
        {
            continue;
        }
        // the parts of a name: `BiLSTM_CRF` → `BiLSTM`, `CRF`; `DecoderRNN` → `Decoder`, `RNN`
        let parts = || {
            text.split(|ch: char| !ch.is_ascii_alphanumeric())
                .flat_map(|part| std::iter::once(part).chain(super::camel_parts(part)))
        };
        // (`CodeFormer`, `segformer`, `Informer`: the -former family too; not a data
        // transformer of the scikit-learn kind: `DataTransformer`, `ColumnTransformer`)
        // (nor a data class named for the model it feeds: `REMIFullSongTransformerDataset`)
        let data_transform = parts()
            .any(|p| DATA_TRANSFORMS.iter().any(|w| p.eq_ignore_ascii_case(w)))
            || (n.node_kind() == "identifier"
                && super::camel_parts(text).last().is_some_and(|last| {
                    matches!(
                        last,
                        "Dataset" | "Loader" | "Sampler" | "Collator" | "DataModule" | "Tokenizer"
                    )
                }));
        // (a string that is only a two-letter word, `"T5"` among a plot's task labels, names
        // no model: `"t5-small"`, `"google/t5-v1_1-base"` do)
        let bare_short =
            n.node_kind() == "string" && text.trim_matches(|ch| ch == '"' || ch == '\'').len() <= 2;
        // (a language-model head in Hugging Face's naming, `VibyForCausalLM`,
        // `MyT5ForConditionalGeneration`: a transformer whatever its own name)
        let lm_head = n.node_kind() == "identifier"
            && LM_HEADS
                .iter()
                .any(|h| text.ends_with(h) && text.len() > h.len());
        if !data_transform
            && !bare_short
            && (lm_head
                || parts().any(|p| {
                    TRANSFORMER_WORDS.iter().any(|w| p.eq_ignore_ascii_case(w))
                        || p.to_ascii_lowercase().ends_with("former")
                }))
            && !off_as_shipped(m, n, parent)
        {
            arch.attention = true;
        }
        // `lstm_crf`, `BiLSTM`, `DecoderRNN`, `gru_model`: a recurrent network by name
        if parts().any(|p| {
            let p = p.to_ascii_lowercase();
            ["lstm", "gru", "rnn"]
                .iter()
                .any(|w| p == *w || (p.len() <= 6 && p.ends_with(w)))
        }) {
            arch.recurrent = true;
        }
    }
    // (a network of embedding tables only: its products are gathered dot products)
    arch.tables_only =
        embedding == Some(true) && !(arch.attention || arch.linear || arch.conv || arch.recurrent);
    if !arch.tables_only {
        arch.attention |= ops_attention;
        arch.linear |= ops_linear;
    }
    arch
}

/// Is call `c` (an `nn.Linear`) part of a new head given to a model the file does not build
/// itself: the value of an assignment to an attribute or item of another object than `self`
/// (`model.classifier[6] = nn.Linear(num_ftrs, num_classes)`, `model.fc = nn.Sequential(...)`,
/// also of a model `self` holds, `self.model.fc = nn.Linear(...)`)?
/// The rest of that network is not shown: it may be convolutional.
// Ex) if isinstance(model, VGG): model.classifier[6] = nn.Linear(num_ftrs, num_classes)
fn new_head(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    m.assigns.iter().any(|a| {
        let target = m.text(a.left);
        !a.augmented
            && a.value.contains(c.span)
            && (target.contains('.') || target.contains('['))
            // (a layer of the module itself, `self.fc = nn.Linear(...)`, is no new head; one
            // given to a model it holds is, `self.model.fc = nn.Linear(self.model.fc.in_features,
            // n)`)
            && target
                .strip_prefix("self.")
                .is_none_or(|rest| rest.contains(['.', '[']))
            && !target.starts_with("self[")
    }) || beside_opaque_backbone(m, c)
}

/// Is call `c` (an `nn.Linear`) built in the `__init__` of a module class that also builds a
/// backbone by a name the file does not settle (`self.backbone =
/// timm.create_model(config.model_name, ...)`)? Then it is that backbone's head, and the
/// backbone may be convolutional.
// Ex) self.backbone = timm.create_model(config.model_name, pretrained=False) ... self.classifier = nn.Linear(d, n)
fn beside_opaque_backbone(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    let Some(f) = c.ctx.func else { return false };
    if c.ctx.class.is_none()
        || m.funcs
            .get(f as usize)
            .is_none_or(|x| m.text(x.name) != "__init__")
    {
        return false;
    }
    m.calls.iter().any(|k| {
        k.ctx.func == Some(f)
            && k.span != c.span
            && matches!(
                m.qual(k).as_ref(),
                "timm.create_model" | "timm.models.create_model"
            )
            && m.pos(k, 0)
                .or_else(|| m.kw(k, "model_name"))
                .is_some_and(|a| {
                    !matches!(
                        m.resolve(&a, k.span.start, k.ctx.func),
                        crate::analysis::facts::Val::Str(_)
                    )
                })
    })
}

/// Does name or string `n` stand for a model the file does not run as shipped: a string
/// compared with an option or listed among its `choices=` (`args.model == "ViT"`), a name
/// whose every use builds the model in a branch that is off (`elif args.model == "ViT": model
/// = VisionTransformer(...)` with `default="ResNet"`), or an import of such names only?
// Ex) from models.vision_transformer import VisionTransformer ... elif args.model == "ViT": ...
fn off_as_shipped(
    m: &crate::analysis::facts::Model<'_>,
    n: tree_sitter::Node<'_>,
    parent: Option<tree_sitter::Node<'_>>,
) -> bool {
    if n.node_kind() == "string" {
        return parent.is_some_and(|p| {
            p.node_kind() == "comparison_operator"
                || (matches!(p.node_kind(), "list" | "tuple")
                    && p.parent().is_some_and(|k| {
                        k.node_kind() == "keyword_argument"
                            && k.child_by_field_name("name")
                                .is_some_and(|w| m.node_text(w) == "choices")
                    }))
        });
    }
    if n.node_kind() != "identifier" {
        return false;
    }
    // a name whose every use builds the model in a branch that is off, also where the import
    // that names it imports others the file runs (`from models import resnet50, vit` ...
    // `elif model_arch == 'vit': model = vit(...)`)
    let (all, dead) = uses_of(m, m.node_text(n));
    if dead > 0 && all == dead {
        return true;
    }
    // in `from models.vision_transformer import VisionTransformer, VisionTransformerBlock`:
    // every name it imports is used only in code that does not run (or not at all), one at least
    let mut up = Some(n);
    for _ in 0..4 {
        up = up.and_then(|x| x.parent());
        if let Some(stmt) = up.filter(|x| x.node_kind() == "import_from_statement") {
            let module = stmt.child_by_field_name("module_name");
            let mut cursor = stmt.walk();
            let names: Vec<&str> = stmt
                .named_children(&mut cursor)
                .filter(|x| Some(*x) != module)
                .filter_map(|x| match x.node_kind() {
                    "dotted_name" => Some(m.node_text(x)),
                    "aliased_import" => x.child_by_field_name("alias").map(|a| m.node_text(a)),
                    _ => None,
                })
                .collect();
            let counts: Vec<(usize, usize)> = names.iter().map(|w| uses_of(m, w)).collect();
            return !counts.is_empty()
                && counts.iter().all(|(all, dead)| all == dead)
                && counts.iter().any(|(_, dead)| *dead > 0);
        }
    }
    false
}

/// The uses of `name` outside imports and comments, and how many of them are calls of it
/// that do not run as shipped (in a branch that is off, in a function nothing calls).
fn uses_of(m: &crate::analysis::facts::Model<'_>, name: &str) -> (usize, usize) {
    let dead = m
        .calls
        .iter()
        .filter(|c| c.method.is_none() && m.text(c.func) == name)
        .filter(|c| m.dead(&c.ctx) || m.uncalled_line(c.line))
        .count();
    let mut uses = 0usize;
    let mut cursor = m.tree.walk();
    let mut stack = vec![m.tree.root_node()];
    while let Some(x) = stack.pop() {
        if matches!(
            x.node_kind(),
            "import_statement" | "import_from_statement" | "comment" | "string"
        ) {
            continue;
        }
        if x.node_kind() == "identifier" && m.node_text(x) == name {
            uses += 1;
        }
        stack.extend(x.named_children(&mut cursor));
    }
    (uses, dead)
}

/// Is identifier `n` a variable the file binds only to a transform pipeline (`transformer =
/// T.Compose([...])` ... `transformer(graph)`)? Its name says nothing of a model.
fn bound_to_transform(m: &crate::analysis::facts::Model<'_>, n: tree_sitter::Node<'_>) -> bool {
    bound_only(m, n, |a| {
        a.rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|c| m.last_name(c) == "Compose" || m.qual(c).contains("transforms."))
            // (or one of a table of transforms, `transformer = data_transforms['valid']`)
            || (a.rhs_call.is_none()
                && super::words(m.text(a.value)).next().is_some_and(|w| {
                    let w = w.to_ascii_lowercase();
                    w.contains("transform") && !w.contains("former")
                }))
    })
}

/// Is identifier `n` a variable the file binds (once at least) only with assignments `each`
/// accepts?
fn bound_only(
    m: &crate::analysis::facts::Model<'_>,
    n: tree_sitter::Node<'_>,
    each: impl Fn(&crate::analysis::facts::Assign) -> bool,
) -> bool {
    let name = m.node_text(n);
    let mut bindings = m
        .assigns
        .iter()
        .filter(|a| a.targets.len() == 1 && m.text(a.left) == name)
        .peekable();
    bindings.peek().is_some() && bindings.all(each)
}

/// Is string literal `text` (quotes included) a long option's name, `'--decoder_attention_type'`,
/// whose value is None or False as shipped: by the file's own argparse reading, a default of
/// `None` / `False`, a `store_true` flag, or an option nothing sets?
fn option_off(m: &crate::analysis::facts::Model<'_>, text: &str) -> bool {
    use crate::analysis::facts::ValKind;
    let Some(long) = text.trim_matches(['"', '\'']).strip_prefix("--") else {
        return false;
    };
    let dest = long.replace('-', "_");
    match m.argparse.get(&dest) {
        Some(Some((_, kind))) => matches!(kind, ValKind::NoneLit | ValKind::False),
        Some(None) => m.argparse_unset.contains(&dest),
        None => false,
    }
}

/// Is string literal `text` (quotes included) the path of a Python source file
/// (`'../nn_module/attention_module.py'`, copied for the record)? It names no model the file
/// builds.
fn source_path(text: &str) -> bool {
    text.trim_end_matches(['"', '\'']).ends_with(".py")
}

/// The last part of string literal `text` when it is a file-system path (it starts at the root,
/// the home folder or the current folder, or has two or more folders:
/// `"/data/dinov2/ckpt.pth"` → `ckpt.pth"`), else the whole literal. A hub id, one slash between
/// an owner and a model (`"facebook/dinov2-base"`), is no path.
fn path_tail(text: &str) -> &str {
    let body = text
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_matches(['"', '\'']);
    let path = body.starts_with('/')
        || body.starts_with("./")
        || body.starts_with("../")
        || body.starts_with("~/")
        || body.matches('/').count() >= 2;
    match text.rfind('/') {
        Some(i) if path => &text[i + 1..],
        _ => text,
    }
}

/// Is identifier `n` a variable the file binds only to instances of class `class`
/// (`transformer = TransformerNet().to(device)`)?
fn bound_to(m: &crate::analysis::facts::Model<'_>, n: tree_sitter::Node<'_>, class: &str) -> bool {
    bound_only(m, n, |a| {
        m.text(a.value)
            .strip_prefix(class)
            .is_some_and(|rest| rest.starts_with('('))
    })
}

/// Is this a neural style-transfer script: it names styles (`style_image`, `--style-weight`)
/// and Gram matrices, the loss fast neural style trains with, or stylizes with a trained
/// network (`stylized_frame = model(frame, style)`, `style_model = TransformerNet()`)?
fn style_transfer(src: &str) -> bool {
    src.contains("style")
        && (src.contains("gram") || src.contains("styliz") || src.contains("style_model"))
}
