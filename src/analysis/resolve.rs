//! The post-pass of the facts engine: resolves what the walk recorded into facts.
//!
//! Runs once per file after the walk, in linear passes over the recorded calls, assignments and
//! loops: argparse defaults, variable kinds, device, precision, loop kinds (step / epoch /
//! record), function and file classification (reference ml_rules.md §2.3), DataLoader facts.

use super::facts::{
    Arg, Device, FunctionFacts, Guard, LoaderFacts, LoopFacts, Model, Span, Val, ValKind, VarKind,
    kind_by_name, string_value,
};
use super::model::CodeKind;
use crate::analysis::facts::NodeKind;
use tree_sitter::Node;

/// Tensor constructors of torch and numpy.
pub(crate) const TENSOR_CTORS: &[&str] = &[
    "tensor",
    "as_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "arange",
    "eye",
    "linspace",
    "zeros_like",
    "ones_like",
    "empty_like",
    "randn_like",
    "rand_like",
    "array",
    "asarray",
    "from_numpy",
    "stack",
    "cat",
    "concatenate",
];

pub(crate) fn post_pass(m: &mut Model<'_>) {
    let src = m.src;
    m.defined = m
        .funcs
        .iter()
        .map(|f| f.name)
        .chain(m.classes.iter().map(|c| c.name))
        .filter_map(|s| src.get(s.start..s.end))
        .collect();
    argparse(m);
    m.torch = torch_backed(m);
    guards(m);
    kinds(m);
    module_guards(m);
    // `net = Darknet19()` ... `net.cuda()` in a file that imports torch only through its own
    // modules: a model moved with `.cuda()` is a PyTorch module
    if !m.torch {
        m.torch = m.calls.iter().any(|c| {
            c.method.is_some()
                && m.last_name(c) == "cuda"
                && c.recv
                    .is_some_and(|r| m.var_kind(m.text(r)) == Some(VarKind::Model))
        });
    }
    device(m);
    device_guards(m);
    precision(m);
    loops(m);
    classify(m);
    loaders(m);
}

/// Does call `c` declare a command-line option: argparse's `parser.add_argument(...)`,
/// optparse's `parser.add_option(...)`, or configargparse's `parser.add(...)` /
/// `parser.add_arg(...)` (also on a group of options, yaap's `group = parser.add_group(...)`
/// then `group.add("--gpu", type=int, action="append")`: a first argument naming a flag)?
fn adds_option(m: &Model<'_>, c: &super::facts::Call) -> bool {
    match m.last_name(c) {
        "add_argument" => true,
        "add" | "add_arg" | "add_option" => {
            c.recv
                .is_some_and(|r| m.text(r).to_ascii_lowercase().contains("parser"))
                || m.pos(c, 0).is_some_and(|a| {
                    let t = m.text(a.value);
                    (t.starts_with("\"--") || t.starts_with("'--")) && t.len() > 4
                })
        }
        _ => false,
    }
}

fn argparse(m: &mut Model<'_>) {
    for c in &m.calls {
        // absl / TF flags: `flags.DEFINE_bool("train", False, "help")` read as `FLAGS.train`
        if m.last_name(c).starts_with("DEFINE_")
            && c.recv.is_some_and(|r| m.text(r).ends_with("flags"))
        {
            let name = m
                .pos(c, 0)
                .or_else(|| m.kw(c, "name"))
                .and_then(|a| m.node(a.value))
                .and_then(|n| string_value(n, m.src))
                .map(std::borrow::Cow::into_owned);
            let default = m.pos(c, 1).or_else(|| m.kw(c, "default"));
            if let Some(name) = name {
                m.argparse.insert(name, default.map(|a| (a.value, a.vkind)));
            }
            continue;
        }
        if !adds_option(m, c) {
            continue;
        }
        let mut dest: Option<String> = None;
        // (with no `--` option, argparse takes the first short one without its dash:
        // `-data_root` is `args.data_root`)
        let mut short: Option<String> = None;
        for a in m.call_args(c).iter().filter(|a| a.name.is_none()) {
            let Some(n) = m.node(a.value) else { continue };
            let Some(s) = string_value(n, m.src) else {
                continue;
            };
            if let Some(long) = s.strip_prefix("--") {
                if dest.is_none() {
                    dest = Some(long.replace('-', "_"));
                }
            } else if let Some(one) = s.strip_prefix('-') {
                if short.is_none() {
                    short = Some(one.replace('-', "_"));
                }
            } else if dest.is_none() {
                dest = Some(s.replace('-', "_"));
            }
        }
        let mut dest = dest.or(short);
        if let Some(d) = m.kw(c, "dest")
            && let Some(n) = m.node(d.value)
            && let Some(s) = string_value(n, m.src)
        {
            dest = Some(s.into_owned());
        }
        let Some(dest) = dest else { continue };
        let mut default = m.kw(c, "default").map(|a| (a.value, a.vkind));
        // (`default='10', type=int`: argparse converts a string default with the option's type,
        // so the value is the integer 10; optparse names the type, `type='int'`)
        if let Some((v, ValKind::Str)) = default
            && m.kw(c, "type")
                .is_some_and(|t| m.text(t.value).trim_matches(['"', '\'']) == "int")
            && m.text(v).trim_matches(['"', '\'']).parse::<i64>().is_ok()
        {
            default = Some((v, ValKind::Int));
        }
        // `parser.add_argument('--gpu', type=int)` (or `default=None`): an option nothing sets
        // is None
        let optional = m
            .pos(c, 0)
            .and_then(|a| m.node(a.value))
            .and_then(|n| string_value(n, m.src))
            .is_some_and(|s| s.starts_with('-'));
        // (`action=argparse.BooleanOptionalAction`, `--compile` / `--no-compile`: None too
        // when neither is given)
        // (also `action="append"` / `"extend"` / `"count"`: None until the flag is given)
        let boolean_optional = m.kw(c, "action").is_some_and(|a| {
            let t = m.text(a.value);
            t.ends_with("BooleanOptionalAction")
                || matches!(t.trim_matches(['"', '\'']), "append" | "extend" | "count")
        });
        if optional
            && default.is_none_or(|(_, k)| k == ValKind::NoneLit)
            && ["required", "nargs", "const"]
                .iter()
                .all(|k| m.kw(c, k).is_none())
            && (m.kw(c, "action").is_none() || boolean_optional)
            && c.splat.is_none()
        {
            m.argparse_unset.insert(dest.clone());
        }
        // `action="store_true"` without `default=` defaults to False, `"store_false"` to True
        if default.is_none()
            && let Some(a) = m.kw(c, "action")
        {
            match m.text(a.value).trim_matches(['"', '\'']) {
                "store_true" => default = Some((a.value, ValKind::False)),
                "store_false" => default = Some((a.value, ValKind::True)),
                _ => {}
            }
        }
        // (two options with one destination, `--flip` / `--no-flip`: the first one's default
        // is the value, as argparse fills the namespace in order)
        m.argparse.entry(dest).or_insert(default);
    }
    // `parser.set_defaults(flip=False)` overrides the defaults of the options, wherever it is
    let overrides: Vec<(String, Option<(Span, ValKind)>)> = m
        .calls
        .iter()
        .filter(|c| {
            m.last_name(c) == "set_defaults"
                && c.recv
                    .is_some_and(|r| m.text(r).to_ascii_lowercase().contains("parser"))
        })
        .flat_map(|c| m.call_args(c))
        .filter_map(|a| Some((m.text(a.name?).to_string(), Some((a.value, a.vkind)))))
        .collect();
    m.argparse.extend(overrides);
}

/// Libraries whose models are PyTorch modules.
const TORCH_LIBRARIES: &[&str] = &["torch", "sentence_transformers", "diffusers"];

/// Is there evidence the file runs PyTorch (see [`Model::torch`](super::facts::Model))?
fn torch_backed(m: &Model<'_>) -> bool {
    let torch_import = m.imports.values().any(|q| {
        let root = q.split('.').next().unwrap_or("");
        if TORCH_LIBRARIES.contains(&root) {
            return true;
        }
        // `transformers.ResNetForImageClassification`, `transformers.AutoModel`: PyTorch
        // classes (the TensorFlow and Flax ones are named `TF*` / `Flax*`)
        q.strip_prefix("transformers.").is_some_and(|class| {
            !class.starts_with("TF")
                && !class.starts_with("Flax")
                && (class.starts_with("AutoModel")
                    || class.contains("For")
                    || class.ends_with("Model"))
        })
    });
    torch_import
        || m.args.iter().any(|a| {
            a.name.is_some_and(|n| m.text(n) == "return_tensors")
                && matches!(m.text(a.value), "\"pt\"" | "'pt'")
        })
}

/// `SentenceTransformer(...)` / `CrossEncoder(...)`: an nn.Module wrapping a transformer.
fn is_sentence_model(q: &str) -> bool {
    q.starts_with("sentence_transformers.")
        && (q.ends_with("SentenceTransformer") || q.ends_with("CrossEncoder"))
}

fn module_classes<'s>(m: &Model<'s>) -> Vec<&'s str> {
    m.classes
        .iter()
        .filter(|c| {
            c.bases.is_some_and(|b| {
                let t = m.text(b);
                t.contains("Module") || t.contains("PreTrainedModel")
            })
        })
        .map(|c| m.text(c.name))
        .collect()
}

/// `torch.compile(...)` (also imported by name), or `.compile()` on something that is not an
/// imported module (`model.compile()`, `self.net.compile()`); not the builtin `compile(src, ...)`
/// nor `re.compile` / `py_compile.compile`.
fn is_torch_compile(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if m.qual(c) == "torch.compile" {
        return true;
    }
    match c.method {
        None => m
            .imports
            .get(m.text(c.func))
            .is_some_and(|q| q == "torch.compile"),
        Some(_) => {
            let root = c.recv_root.map_or("", |r| m.text(r));
            m.imports
                .get(root)
                .is_none_or(|q| q == "torch" || q.starts_with("torch."))
        }
    }
}

fn kinds(m: &mut Model<'_>) {
    let local_modules = module_classes(m);
    let mut known: std::collections::HashMap<&str, VarKind> = std::collections::HashMap::new();
    for a in &m.assigns {
        if a.augmented || a.targets.len() != 1 {
            continue;
        }
        let target = m.text(a.left);
        let Some(ci) = a.rhs_call else { continue };
        let Some(c) = m.calls.get(ci as usize) else {
            continue;
        };
        let q = m.qual(c);
        let last = m.last_name(c);
        let recv = c.recv.map_or("", |r| m.text(r));
        let recv_kind = match c.recv_call.and_then(|i| m.calls.get(i as usize)) {
            // `Net().to(device)`, `AutoModel.from_pretrained(...).cuda().eval()`
            Some(inner) => ctor_kind(m, inner, &local_modules),
            None => c.recv_root.and_then(|r| {
                let t = m.text(r);
                known.get(t).copied().or_else(|| kind_by_name(t))
            }),
        };
        let first_arg_kind = m.pos(c, 0).and_then(|a| {
            let t = m.text(a.value);
            known.get(t).copied().or_else(|| kind_by_name(t))
        });
        let k = if last.ends_with("DataLoader")
            || (matches!(last, "tqdm" | "enumerate" | "iter" | "track")
                && first_arg_kind == Some(VarKind::Loader))
        {
            Some(VarKind::Loader)
        } else if last == "GradScaler" {
            Some(VarKind::Scaler)
        } else if optimizer_ctor(m, c) {
            Some(VarKind::Optimizer)
        } else if last == "device" && (q.starts_with("torch") || recv == "torch") {
            Some(VarKind::Device)
        } else if (q.starts_with("pandas.") || recv == "pd")
            && (last.starts_with("read_") || matches!(last, "DataFrame" | "concat" | "merge"))
        {
            Some(VarKind::DataFrame)
        } else if last == "from_pretrained" {
            if recv.contains("Tokenizer") || recv.contains("Processor") {
                Some(VarKind::Tokenizer)
            } else if recv.contains("Model") || recv.contains("For") {
                Some(VarKind::Model)
            } else {
                None
            }
        } else if model_factory(&q)
            // (a TorchScript module: `unet = torch.jit.load(path, map_location=DEVICE)`)
            || q == "torch.jit.load"
            // (Segment Anything's `sam_model_registry["vit_b"](checkpoint=path)`)
            || (c.method.is_none() && m.text(c.func).starts_with("sam_model_registry["))
            || is_sentence_model(&q)
            || local_modules.contains(&m.text(c.func))
            || torch_nn_module(&q, last)
        {
            Some(VarKind::Model)
        } else if matches!(
            last,
            "compile"
                | "DistributedDataParallel"
                | "DDP"
                | "DataParallel"
                | "FullyShardedDataParallel"
                | "FSDP"
        ) && (c.method.is_none() || recv == "torch")
            && (last != "compile" || is_torch_compile(m, c))
        {
            first_arg_kind
                .filter(|k| *k == VarKind::Model)
                .or(Some(VarKind::Model))
        } else if matches!(
            last,
            "to" | "cuda" | "half" | "float" | "bfloat16" | "eval" | "train" | "cpu"
        ) && c.method.is_some()
        {
            // (the whole chain: what `.to(device)` places is a module)
            recv_kind.or_else(|| ctor_kind(m, c, &local_modules))
        } else if (q.starts_with("torch.") || q.starts_with("numpy.") || recv == "np")
            && TENSOR_CTORS.contains(&last)
        {
            Some(VarKind::Tensor)
        } else if model_wrapper(m, c, first_arg_kind) {
            // `mask_generator = SamAutomaticMaskGenerator(sam)`: a library's object that runs
            // the model it is handed
            Some(VarKind::Model)
        } else {
            None
        };
        let passes_itself = m.pos(c, 0).is_some_and(|a| m.text(a.value) == target);
        if let Some(k) = k {
            known.insert(target, k);
        } else if known.contains_key(target) && !passes_itself {
            // reassigned to something else: forget the kind (`model = train_model(model, ...)`
            // hands the same object back)
            known.remove(target);
        }
    }
    // `net = DepthAnythingV2(**cfg)` … `net.to(DEVICE)` (or `net = net.to(DEVICE).eval()`): an
    // object built from a class and later placed on a device is a module, as when both happen
    // in one expression
    for c in &m.calls {
        let (Some(recv), "to" | "cuda") = (c.recv, m.last_name(c)) else {
            continue;
        };
        let name = m.text(recv);
        if known.contains_key(name) || !placement_arg(m, c) {
            continue;
        }
        if bound_call_before(m, name, c).is_some_and(|b| class_of_module(m, b)) {
            known.insert(name, VarKind::Model);
        }
    }
    // `lnnet = model(num_resblocks=[6, 6]).to(device)` … `lnnet.load_state_dict(...)`: what a
    // project's factory builds, places on the device and loads weights into (or switches to
    // evaluation) is a module, whatever the factory is called
    for c in &m.calls {
        let (Some(recv), "load_state_dict" | "eval") = (c.recv, m.last_name(c)) else {
            continue;
        };
        let name = m.text(recv);
        if known.contains_key(name) {
            continue;
        }
        let placed = bound_call_before(m, name, c).is_some_and(|p| {
            matches!(m.last_name(p), "to" | "cuda")
                && placement_arg(m, p)
                && p.recv_call
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|b| b.method.is_none() && b.recv_call.is_none())
        });
        if placed {
            known.insert(name, VarKind::Model);
        }
    }
    // `cnn = torch.load("model/mnist_model.pkl")` … `outputs = cnn(images)`: a whole module
    // unpickled and then called (a state dict or a tensor `torch.load` returns is never called)
    for a in &m.assigns {
        if a.augmented || a.targets.len() != 1 {
            continue;
        }
        let name = m.text(a.left);
        let Some(mut load) = a.rhs_call.and_then(|i| m.calls.get(i as usize)) else {
            continue;
        };
        // (the innermost call of a chain: `torch.load(path).to(device)`)
        while let Some(inner) = load.recv_call.and_then(|i| m.calls.get(i as usize)) {
            load = inner;
        }
        if known.contains_key(name) || m.qual(load) != "torch.load" {
            continue;
        }
        let called = m.calls.iter().any(|c| {
            c.method.is_none()
                && c.span.start >= a.span.end
                && c.ctx.func == a.ctx.func
                && m.text(c.func) == name
        });
        if called {
            known.insert(name, VarKind::Model);
        }
    }
    // `with tqdm(train_loader, unit="batch") as tepoch:`: a progress bar a `with` statement
    // names over a loader is the loader
    for c in &m.calls {
        if !matches!(m.last_name(c), "tqdm" | "enumerate" | "iter" | "track") {
            continue;
        }
        let Some(p) = m.node(c.span).and_then(|n| n.parent()) else {
            continue;
        };
        let Some(alias) = p
            .child_by_field_name("alias")
            .filter(|_| p.node_kind() == "as_pattern")
        else {
            continue;
        };
        let arg_kind = m.pos(c, 0).and_then(|a| {
            let t = m.text(a.value);
            known.get(t).copied().or_else(|| kind_by_name(t))
        });
        if arg_kind == Some(VarKind::Loader) {
            known.insert(m.node_text(alias), VarKind::Loader);
        }
    }
    // `model: torch.nn.Module`, `optimizer: torch.optim.Optimizer`: a parameter's annotation
    // says its kind
    for (name, ty) in &m.param_types {
        if let Some(k) = annotation_kind(m.text(*ty)) {
            known.entry(m.text(*name)).or_insert(k);
        }
    }
    // `Adam(transformer.parameters(), ...)`: what an optimizer trains is a model
    for name in trained_models(m) {
        known.entry(name).or_insert(VarKind::Model);
    }
    // `return DataLoader(ds_tr, ...), DataLoader(ds_te, ...), classes` (or the names bound to
    // them) in a function of the file: `tr_l, te_l, classes = get_data_loaders(...)` binds
    // loaders
    for (i, c) in m.calls.iter().enumerate() {
        if c.ctx.func.is_none() || !m.last_name(c).ends_with("DataLoader") {
            continue;
        }
        let bound = m
            .assigns
            .iter()
            .find(|a| a.rhs_call == Some(i as u32) && a.targets.len() == 1);
        let mut names = super::rules::call_returned_to(m, c);
        if let Some(a) = bound {
            names.extend(super::rules::returned_to(m, m.text(a.left), c.ctx.func));
        }
        for name in names {
            known.entry(name).or_insert(VarKind::Loader);
        }
    }
    m.kinds = known;
}

/// The call whose value `name` was last bound to, plainly and alone, before call `c` in the
/// same function (`net = DepthAnythingV2(**cfg)` before `net.to(DEVICE)`).
fn bound_call_before<'a>(
    m: &'a Model<'_>,
    name: &str,
    c: &super::facts::Call,
) -> Option<&'a super::facts::Call> {
    m.assigns
        .iter()
        .rfind(|a| {
            !a.augmented
                && a.targets.len() == 1
                && a.span.end <= c.span.start
                && a.ctx.func == c.ctx.func
                && m.text(a.left) == name
        })
        .and_then(|a| m.calls.get(a.rhs_call? as usize))
}

/// Does `.to(...)` / `.cuda(...)` / `.type(...)` move to a device (`.to(device)`, `.to(device=d)`), rather than
/// cast (`.to(torch.float16)`, `.to(x.dtype)`)?
pub(crate) fn placement_arg(m: &Model<'_>, c: &super::facts::Call) -> bool {
    match m.last_name(c) {
        "cuda" => return true,
        // `.type(torch.cuda.FloatTensor)` moves; `.type(torch.FloatTensor)` casts
        "type" => return to_cuda_type(m, c),
        _ => {}
    }
    // `.to("cpu")`, `.to(device="cpu")`, `.to(cpu_device)`, `.to("cpu:0")`: a move back to the
    // host is no placement on the GPU
    let host = |a: &super::facts::Arg| m.text(a.value).to_ascii_lowercase().contains("cpu");
    match m.pos(c, 0) {
        Some(a) => {
            let t = m.text(a.value).to_ascii_lowercase();
            !host(&a)
                && ![
                    "dtype", "float", "half", "int", "long", "bool", "bf16", "fp16",
                ]
                .iter()
                .any(|w| t.contains(w))
        }
        None => m.kw(c, "device").is_some_and(|a| !host(&a)),
    }
}

/// `torch.nn` modules without weights: a similarity, an activation or a pooling computes a
/// function of its inputs, keeps no autograd graph of its own and is no model to run.
// Ex) similarity = torch.nn.CosineSimilarity(dim=-1, eps=1e-6) ... score = similarity(a, b)
const PARAMETERLESS: &[&str] = &[
    "CosineSimilarity",
    "PairwiseDistance",
    "Softmax",
    "LogSoftmax",
    "Sigmoid",
    "Tanh",
    "ReLU",
    "Identity",
    "Flatten",
    "Unflatten",
    "Dropout",
    "Upsample",
    "PixelShuffle",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool2d",
];

/// A `torch.nn` module class with weights (`torch.nn.Linear`, `nn.LSTM`): capitalised, not a
/// loss, not one of [`PARAMETERLESS`].
fn torch_nn_module(q: &str, last: &str) -> bool {
    q.starts_with("torch.nn.")
        && last
            .chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_uppercase())
        && !last.ends_with("Loss")
        && !PARAMETERLESS.contains(&last)
}

/// The name the model `clip.load` call `c` returns is bound to (the first target of
/// `model, preprocess = clip.load(...)`).
fn loaded_name<'s>(m: &Model<'s>, c: &super::facts::Call) -> Option<&'s str> {
    m.assigns
        .iter()
        .find(|a| {
            a.rhs_call
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|r| r.span == c.span)
        })
        .and_then(|a| a.targets.first())
        .map(|t| m.text(*t))
}

/// Does the file keep the model `clip.load` call `c` loads in fp32: it casts it back, `model,
/// preprocess = clip.load(name, device=device)` then `model.float()` (the fine-tuning recipe),
/// or keeps only the preprocessing, `_, preprocess = clip.load(...)`?
fn clip_in_fp32(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let Some(name) = loaded_name(m, c) else {
        return false;
    };
    // (`_, preprocess = clip.load(...)`: only the preprocessing is kept)
    name == "_"
        || m.calls.iter().any(|o| {
            o.method.is_some()
                && m.last_name(o) == "float"
                && o.span.start > c.span.end
                && o.recv.is_some_and(|r| m.text(r) == name)
                && m.call_args(o).is_empty()
        })
}

/// Is the model call `c` loads (`clip_model, preprocess = clip.load(...)`) a frozen encoder
/// beside a model the file trains (it calls `backward()`): its parameters handed to nothing,
/// and every other call on it (`clip_model.encode_text(t)`) under `no_grad`, beside its
/// switch to evaluation mode? (Where it is the file's only model, its fp16 is the work.)
// Ex) with torch.no_grad(): feature_text = clip_model.encode_text(tokens)  (DeCap's decoder trains)
fn frozen_encoder(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let Some(name) = loaded_name(m, c) else {
        return false;
    };
    let mut uses = m
        .calls
        .iter()
        .filter(|o| o.recv.is_some_and(|r| m.text(r) == name))
        .peekable();
    let trains = m
        .calls
        .iter()
        .any(|o| o.method.is_some() && m.last_name(o) == "backward");
    trains
        && uses.peek().is_some()
        && uses.all(|o| match m.last_name(o) {
            "eval" | "requires_grad_" => true,
            "parameters" | "train" => false,
            _ => o.ctx.no_grad,
        })
}

/// Attributes that name a submodule of a model (`vgg16().features`, `clip_model.visual`).
const SUBMODULES: &[&str] = &[
    "features",
    "classifier",
    "encoder",
    "decoder",
    "backbone",
    "body",
    "head",
    "module",
    "model",
    "visual",
    "vision_model",
    "text_model",
    "base_model",
    "transformer",
];

/// The call whose submodule method call `c` is made on (`models.vgg16(...)` of
/// `models.vgg16(...).features.to(device)`), when its receiver is such an attribute.
fn submodule_of_call<'a>(
    m: &'a Model<'_>,
    c: &super::facts::Call,
) -> Option<&'a super::facts::Call> {
    let r = m.node(c.recv?).filter(|r| r.node_kind() == "attribute")?;
    let attr = super::facts::field::get(r, super::facts::field::ATTRIBUTE)?;
    if !SUBMODULES.contains(&m.node_text(attr)) {
        return None;
    }
    let o = super::facts::field::get(r, super::facts::field::OBJECT)
        .filter(|o| o.node_kind() == "call")?;
    m.call_at(Span::of(o))
}

/// The kind a constructor call (or a chain of `.to()` / `.cuda()` / `.eval()` on one) produces.
fn ctor_kind(m: &Model<'_>, c: &super::facts::Call, local_modules: &[&str]) -> Option<VarKind> {
    let mut cur = c;
    let mut placed = false;
    for _ in 0..16 {
        let last = m.last_name(cur);
        // (also on a submodule of a model built on the spot:
        // `models.vgg16(pretrained=True).features.to(device)` is a module)
        if matches!(
            last,
            "to" | "cuda" | "half" | "float" | "bfloat16" | "eval" | "train"
        ) && let Some(inner) = cur
            .recv_call
            .and_then(|i| m.calls.get(i as usize))
            .or_else(|| submodule_of_call(m, cur))
        {
            placed |= matches!(last, "to" | "cuda");
            cur = inner;
            continue;
        }
        // `EncoderCNN(embed_size).to(device)` of a class imported or defined here: an object
        // built from a class and placed on a device is a module (not a loss, metric or
        // transform, which are placed too)
        // (not `Variable(images).cuda()`: torch's data types are no modules)
        if placed && cur.method.is_none() && class_of_module(m, cur) {
            return Some(VarKind::Model);
        }
        let q = m.qual(cur);
        let recv = cur.recv.map_or("", |r| m.text(r));
        // `DepthAnything.from_pretrained(...).to(DEVICE)`: loaded weights placed on a device
        if last == "from_pretrained"
            && !recv.contains("Tokenizer")
            && !recv.contains("Processor")
            && (recv.contains("Model") || recv.contains("For") || placed)
        {
            return Some(VarKind::Model);
        }
        if model_factory(&q)
            || local_modules.contains(&m.text(cur.func))
            || torch_nn_module(&q, last)
        {
            return Some(VarKind::Model);
        }
        return None;
    }
    None
}

/// A library function that builds a network by its qualified name: torchvision's model
/// builders, `timm.create_model`, and a hub repository's entry point (`zoe =
/// torch.hub.load(repo, "ZoeD_N")`).
pub(crate) fn model_factory(q: &str) -> bool {
    q.starts_with("torchvision.models.") || q == "timm.create_model" || q == "torch.hub.load"
}

/// The kind a parameter annotation names (`torch.nn.Module`, `Optional[DataLoader]`).
fn annotation_kind(ty: &str) -> Option<VarKind> {
    let ty = ty.trim();
    let inner = ty
        .strip_prefix("Optional[")
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(ty)
        .trim_matches(['"', '\'']);
    let last = inner.rsplit('.').next().unwrap_or(inner);
    match last {
        "Module" | "DistributedDataParallel" | "DataParallel" | "PreTrainedModel" => {
            Some(VarKind::Model)
        }
        "Optimizer" => Some(VarKind::Optimizer),
        "device" if inner.starts_with("torch") => Some(VarKind::Device),
        "DataLoader" => Some(VarKind::Loader),
        "GradScaler" => Some(VarKind::Scaler),
        _ => None,
    }
}

/// Is call `c` an imported class built around the model it is handed first (`SamPredictor(sam)`,
/// `SamAutomaticMaskGenerator(sam)`): an object that runs that model when called? Not one that
/// trains, logs, saves or schedules it (`Trainer(model)`, `ModelCheckpoint(model)`), nor a
/// loss or metric over it.
fn model_wrapper(m: &Model<'_>, c: &super::facts::Call, first_arg: Option<VarKind>) -> bool {
    const NOT_RUNNERS: &[&str] = &[
        "train",
        "runner",
        "logger",
        "saver",
        "checkpoint",
        "schedul",
        "profil",
        "summary",
        "writer",
        "callback",
        "hook",
        "optim",
        "ema",
        "averag",
        "pruner",
        "quantiz",
    ];
    let name = m.text(c.func);
    let lower = name.to_ascii_lowercase();
    first_arg == Some(VarKind::Model)
        && c.method.is_none()
        && module_class_name(name)
        && m.imports.contains_key(name)
        && !m.qual(c).starts_with("torch")
        && !NOT_RUNNERS.iter().any(|w| lower.contains(w))
}

/// A class instantiated by name ([`is_module_ctor`]) or through an imported module
/// (`networks.ResnetEncoder(18, False)`, `models.Generator()`): CamelCase, not a loss, metric,
/// transform or tensor.
fn class_of_module(m: &Model<'_>, c: &super::facts::Call) -> bool {
    match (c.method, c.recv) {
        // (`Variable(x)`, `torch.Tensor(...)`: torch's data types, not modules)
        (None, _) => {
            let q = m.qual(c);
            is_module_ctor(m, c) && (!q.starts_with("torch") || q.starts_with("torch.nn."))
        }
        (Some(meth), Some(recv)) => {
            let name = m.text(meth);
            m.imports
                .get(m.text(recv))
                .is_some_and(|q| !q.starts_with("torch"))
                && module_class_name(name)
        }
        _ => false,
    }
}

/// Words in a class name that say it is not a network (placed on a device all the same).
const NOT_MODULES: &[&str] = &[
    "loss",
    "criterion",
    "metric",
    "transform",
    "augment",
    "tensor",
];

/// Is `Cls(...)` a constructor of a class imported or defined here that is not a loss, metric,
/// criterion or transform (the non-model objects code also places on a device)?
fn is_module_ctor(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let name = m.text(c.func);
    let q = m.qual(c);
    module_class_name(name)
        && name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && (m.defined.contains(name) || m.imports.contains_key(name))
        && !q.starts_with("torchmetrics")
        // `torch.Generator()`, `np.random.Generator`: random number generators
        && !(name == "Generator" && (q.starts_with("torch") || q.starts_with("numpy")))
}

/// A CamelCase class name (`ResnetEncoder`, `Net`), or an acronym one (`VGG16`, `CNN`, not a
/// constant's `MAX_LEN`), with none of [`NOT_MODULES`]' words.
fn module_class_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let acronym = name.len() >= 2 && name.chars().all(|ch| ch.is_ascii_alphanumeric());
    name.starts_with(|ch: char| ch.is_ascii_uppercase())
        && (name.chars().any(|ch| ch.is_ascii_lowercase()) || acronym)
        && !NOT_MODULES.iter().any(|w| lower.contains(w))
}

/// Is call `c` the branch of a conditional expression that its condition, known as shipped,
/// does not take (`torch.device('cuda') if args.cuda and torch.cuda.is_available() else
/// torch.device('cpu')` with `--cuda` off by default: the first)?
fn branch_not_taken(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let Some(n) = m.node(c.span) else {
        return false;
    };
    let Some(p) = n.parent() else {
        return false;
    };
    // (a branch, not the condition itself)
    let is_branch = [p.named_child(0), p.named_child(2)]
        .into_iter()
        .flatten()
        .any(|b| b.id() == n.id());
    is_branch
        && taken_branch(m, p, c.span.start, c.ctx.func).is_some_and(|taken| taken.id() != n.id())
}

/// The branch conditional expression `n` takes as shipped (`'cuda' if args.device == 'cuda'
/// else 'cpu'` with `default="cpu"`: `'cpu'`), when its condition is known there; `None` for
/// any other node.
pub(crate) fn taken_branch<'t>(
    m: &Model<'_>,
    n: Node<'t>,
    at: usize,
    func: Option<u32>,
) -> Option<Node<'t>> {
    if n.node_kind() != "conditional_expression" {
        return None;
    }
    let pick = super::as_shipped::condition(m, n.named_child(1)?, at, func, 0)?;
    n.named_child(if pick { 0 } else { 2 })
}

fn device(m: &mut Model<'_>) {
    // conditions read below (`"cuda" if use_cuda else "cpu"`) see `torch.cuda.is_available()`
    // as true: the file is judged as it runs on the GPU runner it is audited for (the verdict
    // at the end of this pass replaces the assumption)
    m.facts.device = Device::Cuda;
    let mut cuda = false;
    let mut weak_cuda = false;
    let mut handed = false;
    let mut placed_cpu = false;
    // any move to a device that runs as shipped: `torch.cuda.is_available()` puts work on the
    // GPU only through one (not when every move is behind a flag that is off, nor in a file
    // that only seeds CUDA's generator: `if args.cuda: torch.cuda.manual_seed(s)`)
    let mut live_move = false;
    let mut housekeeping = false;
    let mut mps = false;
    let mut cpu = false;
    let mut see = |s: &str| {
        let s = s.to_ascii_lowercase();
        if gpu_text(&s) {
            cuda = true;
        } else if s.contains("mps") {
            mps = true;
        } else if s.contains("cpu") {
            cpu = true;
        }
    };
    // a process group on Gloo, the CPU backend, distributes CPU work: neither it nor the DDP
    // around its model says CUDA (NCCL, or no backend named, still does)
    // Ex) dist.init_process_group(backend=args.backend, ...) with `default="gloo"`
    let gloo = m.calls.iter().any(|c| {
        m.last_name(c) == "init_process_group"
            && m.kw(c, "backend")
                .or_else(|| m.pos(c, 0))
                .is_some_and(|a| {
                    matches!(m.resolve(&a, c.span.start, c.ctx.func), Val::Str(ref b) if b.eq_ignore_ascii_case("gloo"))
                })
    });
    // (code that never runs as shipped says nothing of where the file runs: `if args.device
    // == 'cuda': torch.cuda.synchronize()` with `default='cpu'`)
    for c in m.calls.iter().filter(|c| {
        // (only a call that could name a device is looked up in the tree: `torch.device`,
        // or one with a string argument)
        !m.dead(&c.ctx)
            && !((m.last_name(c) == "device"
                || m.call_args(c)
                    .iter()
                    .any(|a| a.vkind == ValKind::Str && gpu_text(m.text(a.value))))
                && branch_not_taken(m, c))
    }) {
        let last = m.last_name(c);
        let q = m.qual(c);
        match last {
            // (`y.to(torch.device('cpu'))` copies a result back: not where the work runs)
            "device" if q.starts_with("torch") && !handed_to_to(m, c) => {
                // a choice nobody reads places nothing on the GPU (a `cpu` one still says where
                // the file means to run)
                let unread = m
                    .assigns
                    .iter()
                    .any(|a| a.value == c.span && unread_binding(m, a));
                if let Some(a) = m.pos(c, 0) {
                    // `torch.device(args.device)` with `default="cpu"`: the default decides
                    // `torch.device('cuda' if args.device == 'cuda' else 'cpu')`: the branch the
                    // condition takes as shipped, when it is known
                    let taken = m
                        .node(a.value)
                        .and_then(|n| taken_branch(m, n, c.span.start, c.ctx.func));
                    let chosen = match (m.resolve(&a, c.span.start, c.ctx.func), taken) {
                        (Val::Str(v), _) => v,
                        (_, Some(branch)) => m
                            .src
                            .get(branch.start_byte()..branch.end_byte())
                            .unwrap_or("")
                            .to_string(),
                        _ => m.text(a.value).to_string(),
                    };
                    if !(unread && gpu_text(&chosen)) {
                        see(&chosen);
                    }
                }
            }
            // (not a move that follows a tensor already on the GPU, `if raw_w.is_cuda: mask =
            // mask.cuda()`: it says where the tensor is, not that the file puts work there)
            "cuda" if c.method.is_some() && !follows_tensor_device(m, c) => {
                live_move = true;
                see("cuda");
            }
            // `model.type(torch.cuda.FloatTensor)`, also through a name bound to the type
            // Ex) gpu_dtype = torch.cuda.FloatTensor ... model = model.type(gpu_dtype)
            "type" if c.method.is_some() && to_cuda_type(m, c) => {
                live_move = true;
                see("cuda");
            }
            // `model = Net2d(...).cpu()`, `model.cpu()`: the model is placed on the CPU (a
            // `.cpu()` of a tensor copies a result back and says nothing of where work runs)
            "cpu" if c.method.is_some() && m.call_args(c).is_empty() => {
                let on_model = match c.recv_call.and_then(|i| m.calls.get(i as usize)) {
                    Some(inner) => inner.method.is_none() && is_module_ctor(m, inner),
                    None => c
                        .recv
                        .is_some_and(|r| m.kinds.get(m.text(r)) == Some(&VarKind::Model)),
                };
                if on_model && c.ctx.loop_.is_none() {
                    placed_cpu = true;
                }
            }
            // `torch.set_default_tensor_type('torch.cuda.FloatTensor')`,
            // `torch.set_default_device('cuda')`: every tensor the file builds is on the GPU
            "set_default_tensor_type" | "set_default_device"
                if q.starts_with("torch")
                    && m.pos(c, 0)
                        .is_some_and(|a| gpu_text(&m.text(a.value).to_ascii_lowercase())) =>
            {
                live_move = true;
                see("cuda");
            }
            // `torch.cuda.is_available()` alone (a print, an assert) does not put work on the GPU
            "is_available" if q.contains("cuda") => weak_cuda = true,
            "to" if c.method.is_some() => {
                live_move |= placement_arg(m, c);
                // `.to(rank)`, `.to(args.local_rank)`, `.to(self.gpu_id)`: a device ordinal is a
                // CUDA device, whatever backend the process group uses
                let ordinal = m
                    .pos(c, 0)
                    .or_else(|| m.kw(c, "device"))
                    .filter(|a| matches!(a.vkind, ValKind::Ident | ValKind::Attr))
                    .is_some_and(|a| {
                        let t = m.text(a.value);
                        matches!(
                            t.rsplit('.').next().unwrap_or(t),
                            "rank" | "local_rank" | "gpu" | "gpu_id"
                        )
                    });
                if ordinal {
                    live_move = true;
                    see("cuda");
                } else if let Some(a) = m.pos(c, 0).filter(|a| a.vkind == ValKind::Str) {
                    // (`embeddings.to('cpu')` of a result copies it back, as
                    // `.to(torch.device('cpu'))` does: only a model moved there places work)
                    let copy_back = m.text(a.value).trim_matches(['"', '\'']) == "cpu"
                        && c.recv_call.is_none()
                        && c.recv_root.is_some_and(|r| {
                            let t = m.text(r);
                            t != "self" && m.kinds.get(t) != Some(&VarKind::Model)
                        });
                    if !copy_back {
                        see(m.text(a.value));
                    }
                } else if let Some(a) = m
                    .pos(c, 0)
                    .or_else(|| m.kw(c, "device"))
                    .filter(|a| matches!(a.vkind, ValKind::Ident | ValKind::Attr))
                    .filter(|a| m.text(a.value).to_ascii_lowercase().ends_with("device"))
                    // (not the device of a model or a tensor, `.to(self.model.device)`: it
                    // follows where that one is, and says nothing new)
                    .filter(|a| {
                        !m.text(a.value)
                            .strip_suffix(".device")
                            .is_some_and(|owner| {
                                let last = owner.rsplit('.').next().unwrap_or(owner);
                                [owner, last].iter().any(|o| {
                                    matches!(m.var_kind(o), Some(VarKind::Model | VarKind::Tensor))
                                })
                            })
                    })
                {
                    // `.to(device)` with a device the file is handed (a parameter, a config
                    // module's constant): code written to move work onto an accelerator
                    match m.resolve(&a, c.span.start, c.ctx.func) {
                        Val::Str(v) => see(&v),
                        // `device = get_device(args.device)` with `default="cpu"`
                        _ => match super::as_shipped::binding(
                            m,
                            m.text(a.value),
                            c.span.start,
                            c.ctx.func,
                        )
                        .and_then(|b| m.calls.get(b.rhs_call? as usize))
                        .and_then(|b| m.pos(b, 0))
                        .map(|x| m.resolve(&x, c.span.start, c.ctx.func))
                        {
                            Some(Val::Str(v)) => see(&v),
                            _ => handed = true,
                        },
                    }
                }
            }
            "DistributedDataParallel" | "DDP" | "init_process_group" if gloo => {}
            "Accelerator" | "DistributedDataParallel" | "init_process_group" => see("cuda"),
            _ if hf_config(m, c) => {
                // (`no_cuda=True` / `use_cpu=True` as shipped keeps the Trainer on the CPU)
                let cpu_only = ["no_cuda", "use_cpu"].iter().any(|k| {
                    m.kw(c, k).is_some_and(|a| {
                        matches!(m.resolve(&a, c.span.start, c.ctx.func), Val::Bool(true))
                    })
                });
                see(if cpu_only { "cpu" } else { "cuda" });
            }
            "Trainer" | "Fabric" => {
                // (Lightning 1.x named the distributed strategy there, `accelerator="ddp"`:
                // no device, the `gpus=` beside it decides)
                let strategy = |t: &str| {
                    let t = t.to_ascii_lowercase();
                    ["ddp", "dp", "horovod", "none"]
                        .iter()
                        .any(|s| t.contains(s))
                        && !["gpu", "cuda", "auto", "cpu", "mps", "tpu"]
                            .iter()
                            .any(|d| t.contains(d))
                };
                let accelerator =
                    m.kw(c, "accelerator")
                        .map(|a| match m.resolve(&a, c.span.start, c.ctx.func) {
                            Val::Str(v) => v,
                            _ => m.text(a.value).to_string(),
                        });
                // `accelerator=config.ACCELERATOR`: a value of a config module the file is
                // handed, as `.to(config.DEVICE)` (a GPU unless the file names the CPU)
                // (also the config a Hydra entry point is handed, `@hydra.main(...) def
                // train(cfg):` ... `accelerator=cfg.train.accelerator`)
                let from_config = m.kw(c, "accelerator").is_some_and(|a| {
                    a.vkind == ValKind::Attr
                        && matches!(m.resolve(&a, c.span.start, c.ctx.func), Val::Unknown)
                        && m.text(a.value).split('.').next().is_some_and(|root| {
                            m.imports.contains_key(root) || hydra_config(m, c.ctx.func, root)
                        })
                });
                if from_config {
                    handed = true;
                } else if let Some(t) = accelerator.as_deref().filter(|t| !strategy(t)) {
                    if t.contains("gpu") || t.contains("cuda") || t.contains("auto") {
                        see("cuda");
                    } else {
                        see(t);
                    }
                } else if let Some(gpus) = m.kw(c, "gpus") {
                    // (Lightning 1.x's `gpus=0` or `gpus=None`, also an option defaulting to
                    // them, `gpus=hparams.gpus` with `default=0`, trains on the CPU)
                    let none = matches!(
                        m.resolve(&gpus, c.span.start, c.ctx.func),
                        Val::Int(0) | Val::None
                    );
                    if !none {
                        see("cuda");
                    }
                } else if m.kw(c, "devices").is_some() {
                    see("cuda");
                } else if last == "Trainer"
                    && (q.starts_with("lightning.")
                        || m.kw(c, "precision")
                            .is_some_and(|a| m.text(a.value).contains("-mixed"))
                        // (`pytorch_lightning.Trainer(max_epochs=10)` in a file that uses
                        // nothing only Lightning 1.x has: the Lightning the runner installs)
                        || (q.starts_with("pytorch_lightning.") && !lightning_1_only(m)))
                {
                    // Lightning 2's `Trainer()` picks its accelerator itself (`"auto"`: the
                    // GPU when there is one): the `lightning` package, or a 2.x precision
                    // string (`precision="bf16-mixed"`)
                    see("cuda");
                }
            }
            _ => {}
        }
        if m.kw(c, "device_map").is_some() {
            see("cuda");
        }
        // `torch.cuda.synchronize()`, `torch.cuda.Stream()`: the code drives a CUDA device,
        // whoever passes it in (a library module taking `device` as a parameter)
        if q.starts_with("torch.cuda.")
            && matches!(last, "synchronize" | "Stream" | "Event" | "set_device")
        {
            see("cuda");
        }
        // `print(torch.cuda.get_device_name(0))` with no test around it: the script cannot run
        // without a CUDA device (the call raises), whatever its configuration module chooses
        if q.starts_with("torch.cuda.")
            && matches!(last, "get_device_name" | "get_device_properties")
            && !m.dead(&c.ctx)
            && unconditional(m, c)
        {
            see("cuda");
        }
        // memory housekeeping (`torch.cuda.empty_cache()`, `memory_summary()`) and CUDA's
        // mixed-precision helpers (`torch.cuda.amp.autocast()`, a no-op with a warning off the
        // GPU) do nothing without CUDA work: they count only when nothing places the work on
        // the CPU or MPS (`device = 'cpu'` hard-coded, the CUDA line commented out, `--device`
        // with `default="cpu"`)
        if q.starts_with("torch.cuda.")
            && matches!(
                last,
                "autocast"
                    | "GradScaler"
                    | "empty_cache"
                    | "memory_allocated"
                    | "max_memory_allocated"
                    | "reset_peak_memory_stats"
                    | "memory_summary"
                    | "memory_reserved"
            )
        {
            housekeeping = true;
        }
        // (without `device=`, sentence-transformers picks CUDA when it is available: code that
        // names no device is not written for one, as the catalog reads any other file)
        if is_sentence_model(&q)
            && let Some(a) = m.kw(c, "device")
        {
            see(m.text(a.value));
        }
        // (not the names of a command-line option: `add_argument('--cuda', dest='cuda',
        // action='store_true')` says nothing of where the work runs; nor does ONNX Runtime's
        // device of its own buffers, `OrtValue.ortvalue_from_numpy(img, 'cuda', 0)`)
        let onnx_runtime = q.starts_with("onnxruntime.");
        // (nor a string method testing a device name, `opt.device.startswith("cuda")`)
        let string_test = c.method.is_some()
            && matches!(
                last,
                "startswith" | "endswith" | "find" | "index" | "count" | "replace" | "split"
            );
        // (`torch.device("cuda")` was read above, where an unread choice places nothing:
        // `if torch.cuda.is_available(): device = torch.device("cuda")` and no move after)
        let device_ctor = last == "device" && q.starts_with("torch") && !handed_to_to(m, c);
        for a in m.call_args(c) {
            if a.vkind == ValKind::Str
                && !adds_option(m, c)
                && !onnx_runtime
                && !string_test
                && !device_ctor
            {
                let t = m.text(a.value).trim_matches(['"', '\'']);
                if t == "cuda" || t.starts_with("cuda:") {
                    see("cuda");
                }
            }
        }
    }
    for a in &m.assigns {
        let mut v = m.text(a.value);
        // (a choice in a branch that does not run as shipped places nothing: `if args.device
        // == 'GPU': device = 'cuda'` with `default='cpu'`; nor does a CUDA choice nobody reads)
        if m.dead(&a.ctx) || (gpu_text(v) && unread_binding(m, a)) {
            continue;
        }
        // `device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else
        // torch.device('cpu')` with `--cuda` off by default: only the branch taken as shipped
        // says where the work runs (looked up only where the text holds a conditional that
        // names a device)
        if a.vkind == ValKind::Other
            && v.contains(" if ")
            && (gpu_text(v) || v.contains("cpu") || v.contains("mps"))
            && let Some(branch) = m
                .node(a.value)
                .and_then(|n| taken_branch(m, n, a.span.start, a.ctx.func))
        {
            v = m.node_text(branch);
        }
        // `"cuda:{}".format(rank)`, `f"cuda:{rank}"`: a CUDA device string built at run time
        let literal = match a.vkind {
            ValKind::Str => Some(v.trim_start_matches(['f', 'F'])),
            ValKind::Call => v.split_once(".format(").map(|(lit, _)| lit),
            _ => None,
        };
        if let Some(lit) = literal {
            let t = lit.trim_matches(['"', '\'']);
            if t == "cuda" || t.starts_with("cuda:") {
                see("cuda");
            } else if t == "cpu" {
                see("cpu");
            }
        } else if a.vkind == ValKind::Other && quotes_cuda(v) {
            // `device = "cuda" if torch.cuda.is_available() else "cpu"`
            see("cuda");
        } else if a.vkind == ValKind::Other
            && !m.node(a.value).is_some_and(|n| {
                matches!(
                    n.node_kind(),
                    "comparison_operator" | "boolean_operator" | "not_operator"
                )
            })
        {
            // `device = "mps" if torch.backends.mps.is_available() else "cpu"`: no CUDA in
            // either branch (a test of the device, `half = device.type != 'cpu'`, chooses none)
            for (quoted, dev) in [("mps", "mps"), ("cpu", "cpu")] {
                if v.contains(&format!("\"{quoted}\"")) || v.contains(&format!("'{quoted}'")) {
                    see(dev);
                }
            }
        }
    }
    // (`def nn_setup(..., device='cuda')` whose every call passes the device, `device=device`
    // with `--gpu` off: the default never applies)
    if m.cuda_default_param && cuda_default_applies(m) {
        see("cuda");
    }
    if let Some(d) = m.host_default_param {
        see(d);
    }

    let cuda = cuda
        || (((weak_cuda && live_move) || handed || housekeeping) && !cpu && !mps && !placed_cpu);
    let cpu = cpu || (placed_cpu && !cuda);
    m.facts.device = if cuda {
        Device::Cuda
    } else if mps {
        Device::Mps
    } else if cpu {
        Device::Cpu
    } else {
        Device::Unknown
    };
}

/// Does some parameter default `'cuda'` (`def train(model, device='cuda')`) apply: its
/// function is a method, or called from nowhere in the file, or called once without that
/// argument?
fn cuda_default_applies(m: &Model<'_>) -> bool {
    m.funcs.iter().any(|f| {
        f.params.iter().enumerate().any(|(p, (_, d))| {
            let Some((v, ValKind::Str)) = d else {
                return false;
            };
            let t = m.text(*v).trim_matches(['"', '\'']);
            if t != "cuda" && !t.starts_with("cuda:") {
                return false;
            }
            let name = m.text(f.name);
            let mut calls = m
                .calls
                .iter()
                .filter(|c| c.method.is_none() && m.text(c.func) == name)
                .peekable();
            f.class.is_some()
                || calls.peek().is_none()
                || calls.any(|c| c.star || c.splat.is_some() || m.passed_arg(c, f, p).is_none())
        })
    })
}

/// `.type(torch.cuda.FloatTensor)`, or `.type(dtype)` with `dtype` bound to an expression
/// naming a `torch.cuda` tensor type (`dtype = torch.cuda.FloatTensor if cuda else
/// torch.FloatTensor`): a move to the GPU.
pub(crate) fn to_cuda_type(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let [a] = m.call_args(c) else {
        return false;
    };
    let t = m.text(a.value);
    if t.contains("torch.cuda.") {
        return true;
    }
    // the nearest binding before the call in the same function (also inside a loop: `for
    // output in xin: dtype = torch.cuda.FloatTensor if output.is_cuda else ...`)
    a.vkind == ValKind::Ident
        && m.assigns
            .iter()
            .rfind(|b| {
                b.span.end <= c.span.start
                    && b.ctx.func == c.ctx.func
                    && b.targets.len() == 1
                    && !b.augmented
                    && m.text(b.left) == t
            })
            .is_some_and(|b| m.text(b.value).contains("torch.cuda."))
}

/// Does a model name (`vit_l_16`, `"vit_small_patch16_224.augreg_in1k"`, `swin_t`,
/// `"deit3_small_patch16_224"`) name a vision transformer, whose only convolution is the patch
/// embedding? Hybrids built on convolutions (`maxvit_t`, `mobilevit_s`, `levit_128`,
/// `convit_base`) do not count: their names do not start with one of these families.
fn vision_transformer(name: &str) -> bool {
    let name = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    [
        "vit", "deit", "swin", "beit", "eva", "cait", "xcit", "dinov2",
    ]
    .iter()
    .any(|family| {
        name.strip_prefix(family)
            .is_some_and(|rest| !rest.starts_with(|ch: char| ch.is_ascii_alphabetic()))
    })
}

/// Does call `c` run only under a test of where a tensor already is (`if raw_w.is_cuda: mask =
/// mask.cuda()`, `x.cuda() if w.is_cuda else x`)? Such a move keeps two tensors together.
// Ex) if raw_w.is_cuda: mask = mask.cuda()
fn follows_tensor_device(m: &Model<'_>, c: &super::facts::Call) -> bool {
    std::iter::successors(m.node(c.span), |n| n.parent())
        .take_while(|n| n.node_kind() != "function_definition")
        .take(24)
        .any(|n| {
            let cond = match n.node_kind() {
                "if_statement" => n.child_by_field_name("condition"),
                // `a if cond else b`: the condition is the middle child
                "conditional_expression" => n.named_child(1),
                _ => None,
            };
            cond.is_some_and(|k| {
                !k.byte_range().contains(&c.span.start)
                    && m.src
                        .get(k.byte_range())
                        .is_some_and(|t| t.ends_with(".is_cuda") && !t.contains(' '))
            })
        })
}

/// Does a device text name the GPU (`"cuda:0"`, `'gpu'`)?
fn gpu_text(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    s.contains("cuda") || s.contains("gpu")
}

/// Does call `c` run whenever the code around it runs: no `if`, conditional expression,
/// `and` / `or`, `try` or loop between it and its function (or the module)?
fn unconditional(m: &Model<'_>, c: &super::facts::Call) -> bool {
    std::iter::successors(m.node(c.span), |n| n.parent())
        .take(64)
        .take_while(|n| !matches!(n.node_kind(), "function_definition" | "module"))
        .all(|n| {
            !matches!(
                n.node_kind(),
                "if_statement"
                    | "conditional_expression"
                    | "boolean_operator"
                    | "try_statement"
                    | "for_statement"
                    | "while_statement"
                    | "lambda"
            )
        })
}

/// Is call `c` the device a `.to(...)` is handed, `y.to(torch.device('cpu'))`?
fn handed_to_to(m: &Model<'_>, c: &super::facts::Call) -> bool {
    m.calls
        .iter()
        .any(|k| m.last_name(k) == "to" && m.pos(k, 0).is_some_and(|a| a.value == c.span))
}

/// Is `name` the parameter of function `func` that Hydra fills with the run's configuration
/// (`@hydra.main(config_path=..., config_name=...)` on `def train(cfg):`)?
fn hydra_config(m: &Model<'_>, func: Option<u32>, name: &str) -> bool {
    let Some(f) = func.and_then(|f| m.funcs.get(f as usize)) else {
        return false;
    };
    f.params.iter().any(|(p, _)| m.text(*p) == name) && m.decorated_with(func, "hydra.main(")
}

/// Does the file use something only Lightning 1.x has (`gpus=`, `training_epoch_end`,
/// `resume_from_checkpoint=`, `progress_bar_refresh_rate=`, ...)? Then its bare `Trainer()`
/// is 1.x's, which trains on the CPU unless told otherwise.
fn lightning_1_only(m: &Model<'_>) -> bool {
    const ONLY_1X: &[&str] = &[
        "gpus=",
        "tpu_cores",
        "training_epoch_end",
        "validation_epoch_end",
        "test_epoch_end",
        "resume_from_checkpoint",
        "progress_bar_refresh_rate",
        "weights_summary",
        "distributed_backend",
        "auto_lr_find",
        "auto_scale_batch_size",
        "checkpoint_callback=",
        "flush_logs_every_n_steps",
        "amp_level",
        "amp_backend",
        "add_argparse_args",
        "from_argparse_args",
    ];
    ONLY_1X.iter().any(|w| m.src.contains(w))
}

/// Does source text `t` hold a quoted CUDA device string (`"cuda"`, `'cuda:0'`), or name the
/// machine's accelerator, `torch.accelerator.current_accelerator()` (CUDA on the GPU runner)?
pub(crate) fn quotes_cuda(t: &str) -> bool {
    t.contains("\"cuda") || t.contains("'cuda") || t.contains("accelerator.current_accelerator(")
}

/// The largest source [`unread_binding`] scans.
const UNREAD_SCAN_MAX: usize = 1 << 20;

/// Is the one name `a` binds never read: `device = torch.device("cuda" if ... else "cpu")` in a
/// script that then moves nothing? Such a choice puts no work anywhere. The name counts as
/// read wherever else it occurs as a word (code, strings and comments alike, to stay on the
/// side of "read"), other than as a target of assignments, a keyword's name or in what
/// `print` shows.
fn unread_binding(m: &Model<'_>, a: &super::facts::Assign) -> bool {
    // (each call scans the source: on a huge file, every choice counts as read)
    if a.targets.len() != 1 || a.augmented || m.src.len() > UNREAD_SCAN_MAX {
        return false;
    }
    let name = m.text(a.left);
    if name.is_empty()
        || !name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
    {
        return false;
    }
    // (a comment reads nothing: `#     net.to(device)` left from a tutorial)
    let uses = super::facts::word_positions(m.src, name)
        .filter(|&i| !in_comment(m.src, i))
        .count();
    // (a binding, `device = 'cuda'`, or a keyword's name, `device=idx.device`, reads nothing:
    // the word followed by a single `=`)
    let bindings = m
        .assigns
        .iter()
        .filter(|b| b.targets.len() == 1 && m.text(b.left) == name)
        .count()
        .max(assigned_like(m.src, name));
    // (printing the choice, `print(device)` or `print(f"using {device}")`, reads it for the
    // user, not for the work)
    let printed: usize = m
        .calls
        .iter()
        .filter(|c| c.method.is_none() && m.text(c.func) == "print")
        .map(|c| super::facts::word_uses(m.text(c.args_span), name))
        .sum();
    uses <= bindings + printed
}

/// The occurrences of word `name` followed by a single `=` (not `==`): assignment targets and
/// keyword names (`device = "cuda"`, `f(device=x)`), counted as [`super::facts::word_uses`]
/// counts words.
fn assigned_like(src: &str, name: &str) -> usize {
    super::facts::word_positions(src, name)
        .filter(|&i| !in_comment(src, i))
        .filter(|i| {
            let rest = src
                .get(i + name.len()..)
                .unwrap_or("")
                .trim_start_matches([' ', '\t']);
            rest.starts_with('=') && !rest.starts_with("==")
        })
        .count()
}

/// Does byte `i` of `src` lie in a comment: after a `#` on its line that no quote before it on
/// the line opens (`#     net.to(device)`; not `print("#", device)`)?
fn in_comment(src: &str, i: usize) -> bool {
    let line = src.get(..i).map_or("", |before| {
        before
            .rfind('\n')
            .map_or(before, |start| &before[start + 1..])
    });
    line.find('#')
        .is_some_and(|h| !line[..h].contains(['"', '\'']))
}

/// Does a keyword argument load int8/4-bit weights: `from_pretrained(..., load_in_8bit=True)`
/// (or `load_in_4bit=True`, or a wrapper's `use_4bit=True`), or a `quantization_config=` (a `BitsAndBytesConfig`: quantized
/// weights, whatever the compute dtype)?
pub(crate) fn quantized_weights(m: &Model<'_>, a: &super::facts::Arg) -> bool {
    match a.name.map(|n| m.text(n)) {
        // (`load_in_4bit=True`, and the same switch in wrappers: `use_4bit=True`)
        Some(k) if k.ends_with("_8bit") || k.ends_with("_4bit") => a.vkind == ValKind::True,
        Some("quantization_config") => true,
        _ => false,
    }
}

/// A dtype named by a variable: is every assignment that can reach `name` at `at` (earlier in
/// the same function, else at module level, never in a loop) a `torch.` dtype constant, and
/// are they all 16-bit (`Some(true)`) or all not (`Some(false)`)? `None` when any is not.
fn dtype_constant(m: &Model<'_>, name: &str, at: usize, func: Option<u32>) -> Option<bool> {
    if !name.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
        return None;
    }
    // (a binding in a branch that does not run as shipped binds nothing: `if
    // accelerator.mixed_precision == "fp16": weight_dtype = torch.float16` with `"no"`)
    let same = |a: &&super::facts::Assign| {
        !a.augmented && a.targets.len() == 1 && m.text(a.left) == name && !m.dead(&a.ctx)
    };
    let local: Vec<_> = m
        .assigns
        .iter()
        .filter(same)
        .filter(|a| func.is_some() && a.ctx.func == func && a.span.end <= at)
        .collect();
    let pool: Vec<_> = if local.is_empty() {
        m.assigns
            .iter()
            .filter(same)
            .filter(|a| a.ctx.func.is_none() && a.ctx.class.is_none())
            .collect()
    } else {
        local
    };
    let mut half = None;
    for a in &pool {
        let v = m.text(a.value);
        let constant = v.starts_with("torch.")
            && v["torch.".len()..]
                .chars()
                .all(|ch| ch.is_alphanumeric() || ch == '_');
        if a.ctx.loop_.is_some() || !constant {
            return None;
        }
        let h = is_16bit(v);
        if half.is_some_and(|x| x != h) {
            return None;
        }
        half = Some(h);
    }
    half
}

fn is_16bit(t: &str) -> bool {
    t.contains("float16")
        || t.contains("bfloat16")
        || t.contains("half")
        || t.contains("bf16")
        || t.contains("fp16")
}

/// What a precision setting read from a variable amounts to as shipped.
enum Shipped {
    /// 16-bit (mixed) precision, or TF32 for a `tf32` switch.
    Reduced,
    /// Full fp32: `"no"`, `"fp32"`, `"32"`, `False`.
    Full,
}

/// The shipped precision of a resolved `mixed_precision=` / `precision=` / `fp16=` / `bf16=` /
/// `tf32=` value; `None` when the analysis cannot tell (`None` leaves it to the launcher's
/// configuration, as `Accelerator(mixed_precision=None)` does).
fn shipped_precision(v: Val) -> Option<Shipped> {
    match v {
        Val::Bool(true) | Val::Int(16) => Some(Shipped::Reduced),
        // `None`: the framework's default (`Accelerator`'s "no", Lightning's "32-true")
        Val::Bool(false) | Val::Int(32 | 64) | Val::None => Some(Shipped::Full),
        Val::Str(s) => {
            let s = s.to_ascii_lowercase();
            if is_16bit(&s) || s.contains("16") || s == "fp8" {
                Some(Shipped::Reduced)
            } else if matches!(
                s.as_str(),
                "no" | "fp32" | "32" | "32-true" | "float32" | "64" | "64-true"
            ) {
                Some(Shipped::Full)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Is GradScaler call `c` bound to a name the file never scales, steps or unscales with?
// Ex) scaler = torch.cuda.amp.GradScaler() ... loss.backward(); optimizer.step()
fn unused_scaler(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let Some(ci) = m.calls.iter().position(|k| k.span == c.span) else {
        return false;
    };
    let Some(name) = m
        .assigns
        .iter()
        .find(|a| a.rhs_call == u32::try_from(ci).ok() && a.targets.len() == 1)
        .map(|a| m.text(a.left))
    else {
        return false;
    };
    !m.calls.iter().any(|k| {
        k.recv.is_some_and(|r| m.text(r) == name)
            && matches!(m.last_name(k), "scale" | "step" | "unscale_" | "update")
    }) && !m.args.iter().any(|a| m.text(a.value) == name)
}

fn precision(m: &mut Model<'_>) {
    let mut p = m.facts.precision.clone();
    let mut cudnn_benchmark = m.facts.cudnn_benchmark;
    let mut deterministic = m.deterministic;
    let mut compile = false;
    let mut conv = false;
    let mut channels_last = false;
    let mut from_pretrained = false;
    let mut compile_var = false;
    // the names bound to a context chosen among autocast and others, and where each binding ends
    let scopes: Vec<(&str, usize)> = m
        .assigns
        .iter()
        .filter(|a| {
            a.targets.len() == 1
                && m.text(a.value).contains("autocast")
                && code_only(m.text(a.value)).contains("autocast")
        })
        .map(|a| (m.text(a.left), a.span.end))
        .collect();
    for c in &m.calls {
        // `model.half()` under `if args.fp16:` (off by default) leaves the model in fp32
        if m.dead(&c.ctx) {
            continue;
        }
        let last = m.last_name(c);
        let q = m.qual(c);
        // Segment Anything's registry loads a pretrained SAM (ViT-B and up):
        // `sam_model_registry[args.model_type](checkpoint=...)`
        if c.method.is_none() && m.text(c.func).starts_with("sam_model_registry[") {
            from_pretrained = true;
        }
        // (code under `with autocast(...)` counts through that call below, which may be
        // disabled as shipped: `with autocast(enabled=args.amp):` with `--amp` off)
        // `GradScaler(enabled=args.mixed_precision)` with the flag off by default: fp32
        let disabled = || {
            m.kw(c, "enabled")
                .is_some_and(|a| m.resolve(&a, c.span.start, c.ctx.func) == Val::Bool(false))
        };
        match last {
            "autocast" if !disabled() => p.autocast = true,
            // (a scaler bound and never used, `scaler = GradScaler()` with no `scaler.scale(loss)`,
            // scales nothing: the loss is fp32 as before)
            "GradScaler" if !disabled() && !unused_scaler(m, c) => p.grad_scaler = true,
            "autocast" | "GradScaler" => {}
            "half" | "bfloat16" if c.method.is_some() => p.half = true,
            "set_float32_matmul_precision" => {
                if let Some(a) = m.pos(c, 0) {
                    let t = m.text(a.value);
                    if t.contains("high") || t.contains("medium") {
                        p.tf32 = true;
                    }
                }
            }
            "compile" if is_torch_compile(m, c) => compile = true,
            "use_deterministic_algorithms"
                if m.pos(c, 0).is_some_and(|a| a.vkind == ValKind::True) =>
            {
                deterministic = true;
            }
            "from_pretrained" => {
                from_pretrained = true;
                // the model's code comes from the hub and picks its own dtype (Qwen's selects
                // bf16 by itself) unless the call names one (or names a checkpoint of an
                // encoder family that Transformers implements itself, which has no code on
                // the hub: `"emilyalsentzer/Bio_ClinicalBERT"`)
                if m.kw(c, "trust_remote_code")
                    .is_some_and(|a| a.vkind == ValKind::True)
                    && m.kw(c, "torch_dtype")
                        .or_else(|| m.kw(c, "dtype"))
                        .is_none()
                    && !m
                        .pos(c, 0)
                        .or_else(|| m.kw(c, "pretrained_model_name_or_path"))
                        .is_some_and(|a| {
                            matches!(m.resolve(&a, c.span.start, c.ctx.func),
                                Val::Str(name) if built_in_encoder(&name))
                        })
                {
                    p.unresolved = true;
                }
            }
            // DeepSpeed takes its precision from its JSON config (`"bf16": {"enabled": true}`),
            // which the file does not show
            // Ex) model_engine, _, _, _ = deepspeed.initialize(args=args, model=model, ...)
            "initialize" if q == "deepspeed.initialize" => p.unresolved = true,
            // `torch.set_default_tensor_type(torch.cuda.HalfTensor)`,
            // `torch.set_default_dtype(torch.bfloat16)`: every model built after it is 16-bit
            "set_default_dtype" | "set_default_tensor_type"
                if m.pos(c, 0).is_some_and(|a| {
                    let t = m.text(a.value);
                    is_16bit(t) || t.contains("HalfTensor") || t.contains("BFloat16Tensor")
                }) =>
            {
                p.half = true
            }
            // (also through Accelerate: `DeepSpeedPlugin(hf_ds_config="ds_config.json")`)
            // Ex) accelerator = Accelerator(deepspeed_plugin=DeepSpeedPlugin(hf_ds_config='./ds_config_zero2.json'))
            "DeepSpeedPlugin" if m.kw(c, "hf_ds_config").is_some() => p.unresolved = true,
            // NVIDIA Apex's mixed precision: `amp.initialize(model, opt, opt_level="O1")`;
            // "O0" is fp32, a level the analysis cannot read is unknown
            // Ex) vocoder, optimizer = amp.initialize(vocoder, optimizer, opt_level="O1")
            // (also where `amp` comes through a star import: `from utils import *`, then
            // `amp.initialize(model, optimizer, opt_level="O1")`; the `opt_level` is Apex's)
            "initialize"
                if q == "apex.amp.initialize"
                    || (q == "amp.initialize" && m.kw(c, "opt_level").is_some()) =>
            {
                match m
                    .kw(c, "opt_level")
                    .or_else(|| m.pos(c, 2))
                    .map(|a| m.resolve(&a, c.span.start, c.ctx.func))
                {
                    Some(Val::Str(level)) if level.eq_ignore_ascii_case("O0") => {}
                    Some(Val::Str(_)) => p.autocast = true,
                    // Apex's default level is "O1"
                    None => p.autocast = true,
                    Some(_) => p.unresolved = true,
                }
            }
            // FSDP's mixed precision: parameters cast to 16 bits for the compute
            // Ex) mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            "MixedPrecision" | "MixedPrecisionPolicy"
                if m.kw(c, "param_dtype")
                    .is_some_and(|a| is_16bit(m.text(a.value))) =>
            {
                p.half = true;
            }
            // OpenAI CLIP loads its weights in fp16 on CUDA (`convert_weights`); a frozen
            // encoder feeding a model the file trains in fp32 leaves that training in fp32
            "load" if q == "clip.load" && !frozen_encoder(m, c) && !clip_in_fp32(m, c) => {
                p.half = true
            }
            "convert_weights" if q.starts_with("clip.") => p.half = true,
            // `amp_autocast()`, `maybe_autocast()`: a context chosen at run time (timm)
            _ if last.to_ascii_lowercase().contains("autocast") => p.unresolved = true,
            // `scope = autocast if opt.precision == "autocast" else nullcontext` ...
            // `with scope("cuda"):`: a context chosen at run time among autocast and others
            _ if c.method.is_none()
                && scopes
                    .iter()
                    .any(|&(name, end)| end <= c.span.start && name == m.text(c.func)) =>
            {
                p.unresolved = true;
            }
            _ => {}
        }
        // (a vision transformer, `vit_l_16()`, `timm.create_model("vit_small_patch16_224")`,
        // has one convolution, its patch embedding: not a convolutional network)
        let zoo_model = if q == "timm.create_model" {
            match m.pos(c, 0).map(|a| m.resolve(&a, c.span.start, c.ctx.func)) {
                Some(Val::Str(name)) => !vision_transformer(&name),
                // `def __init__(self, model_name="resnet34")`: the parameter's default; a name
                // the command line must give (`--model` required) may be either kind
                _ => m
                    .pos(c, 0)
                    .and_then(|a| {
                        let f = m.funcs.get(c.ctx.func? as usize)?;
                        let (_, default) = f
                            .params
                            .iter()
                            .find(|(p, _)| m.text(*p) == m.text(a.value))?;
                        let (span, _) = (*default)?;
                        string_value(m.node(span)?, m.src)
                    })
                    .is_some_and(|name| !vision_transformer(&name)),
            }
        } else {
            q.strip_prefix("torchvision.models.")
                .is_some_and(|rest| !vision_transformer(rest.rsplit('.').next().unwrap_or(rest)))
        };
        // a convolution whose stride is its kernel cuts an image into patches: the patch
        // embedding of a vision transformer, not a convolutional network
        // Ex) self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)
        let patchify = || {
            let (Some(k), Some(s)) = (
                m.kw(c, "kernel_size").or_else(|| m.pos(c, 2)),
                m.kw(c, "stride").or_else(|| m.pos(c, 3)),
            ) else {
                return false;
            };
            let (k, s) = (m.text(k.value), m.text(s.value));
            // (`kernel_size=2, stride=2` downsamples inside a CNN; patches are 4 px and up)
            k == s && k.parse::<u32>().map_or(true, |n| n >= 4)
        };
        if (last.starts_with("Conv") && last.ends_with('d') && !patchify())
            || initializes_convolutions(m, c)
            || zoo_model
            // MONAI's networks (UNet, SegResNet, DynUNet, ...) are built from Conv3d/Conv2d
            || q.starts_with("monai.networks.nets.")
        {
            conv = true;
        }
        // `pl.Trainer(**trainer_args)` with `trainer_args = {'precision': args.precision, ...}`:
        // the precision the dict holds as shipped
        if let Some(sp) = c.splat.filter(|_| matches!(last, "Trainer" | "Fabric"))
            && (q.starts_with("lightning") || q.starts_with("pytorch_lightning"))
        {
            match shipped_precision(super::as_shipped::dict_key(
                m,
                sp,
                "precision",
                c.span.start,
                c.ctx.func,
                0,
            )) {
                Some(Shipped::Reduced) => p.autocast = true,
                Some(Shipped::Full) => {}
                None => p.unresolved = true,
            }
        }
        for a in m.call_args(c) {
            let name = a.name.map_or("", |n| m.text(n));
            let v = m.text(a.value);
            let literal =
                a.vkind.is_literal() || (v.starts_with("torch.") && a.vkind != ValKind::Call);
            let model_dtype = matches!(name, "dtype" | "torch_dtype")
                && matches!(last, "from_pretrained" | "autocast" | "to" | "from_config");
            let precision_kw = matches!(
                name,
                "mixed_precision" | "precision" | "fp16" | "bf16" | "tf32"
            );
            if !literal && precision_kw {
                // `mixed_precision=args.mixed_precision`: the argparse default is what ships
                // `fp16=torch.cuda.is_available()`: a condition, true when the file runs on CUDA
                let shipped = match m.resolve(a, c.span.start, c.ctx.func) {
                    Val::Unknown if matches!(name, "fp16" | "bf16" | "tf32") => m
                        .node(a.value)
                        .and_then(|n| {
                            super::as_shipped::condition(m, n, c.span.start, c.ctx.func, 0)
                        })
                        .map(Val::Bool)
                        .unwrap_or(Val::Unknown),
                    v => v,
                };
                match shipped_precision(shipped) {
                    Some(Shipped::Reduced) if name == "tf32" => p.tf32 = true,
                    Some(Shipped::Reduced) => p.autocast = true,
                    Some(Shipped::Full) => {}
                    None => p.unresolved = true,
                }
            } else if !literal && name == "torch_compile" {
                compile_var = true;
            } else if !literal && model_dtype {
                // `dtype = torch.float16` at module level, then `autocast(dtype=dtype)`
                match dtype_constant(m, v, c.span.start, c.ctx.func) {
                    Some(true) => p.half = true,
                    Some(false) => {}
                    None => p.unresolved = true,
                }
            }
            match name {
                "dtype" | "torch_dtype" if is_16bit(v) => p.half = true,
                // `from_pretrained(..., torch_dtype="auto")`: the dtype the checkpoint was saved
                // in (bf16 for most current language and vision-language models)
                "dtype" | "torch_dtype" if model_dtype && v.trim_matches(['"', '\'']) == "auto" => {
                    p.unresolved = true
                }
                "mixed_precision" | "precision" if literal && (is_16bit(v) || v.contains("16")) => {
                    p.autocast = true
                }
                "fp16" | "bf16" if a.vkind == ValKind::True => p.autocast = true,
                "tf32" if a.vkind == ValKind::True => p.tf32 = true,
                // int8/4-bit weights, not an fp32 model
                _ if quantized_weights(m, a) => p.half = true,
                "torch_compile" if a.vkind == ValKind::True => compile = true,
                "benchmark" if last == "Trainer" => {
                    cudnn_benchmark = Some(a.vkind == ValKind::True);
                }
                "deterministic" if last == "Trainer" && a.vkind == ValKind::True => {
                    deterministic = true
                }
                _ => {}
            }
            if v.contains("channels_last") {
                channels_last = true;
            }
            // `partial(torch.autocast, ...)`: autocast handed around as a value
            if v.ends_with("autocast") {
                p.unresolved = true;
            }
            if last == "to" && a.name.is_none() && is_16bit(v) && v.starts_with("torch.") {
                p.half = true;
            }
            // `model.eval().to(device).to(dtype)` with a dtype the file does not show (`dtype =
            // parse_dtype(args.dtype)`, a parameter): the model's precision is unknown (a
            // tensor's cast, `batch["input"].to(weight_dtype)`, is not the model's)
            if last == "to"
                && a.name.is_none()
                && !literal
                && a.vkind == ValKind::Ident
                && (v == "dtype" || v.ends_with("_dtype"))
                && c.recv_root
                    .is_some_and(|r| m.var_kind(m.text(r)) == Some(VarKind::Model))
            {
                match dtype_constant(m, v, c.span.start, c.ctx.func) {
                    Some(true) => p.half = true,
                    Some(false) => {}
                    None => p.unresolved = true,
                }
            }
        }
    }
    m.facts.cudnn_benchmark = cudnn_benchmark;
    m.deterministic = deterministic;
    m.has_from_pretrained = from_pretrained;
    let live: Vec<bool> = m.assigns.iter().map(|a| !m.dead(&a.ctx)).collect();
    for (a, _) in m.assigns.iter().zip(&live).filter(|(_, l)| **l) {
        let left = m.text(a.left);
        if left.ends_with("matmul.allow_tf32") && a.vkind == ValKind::True {
            p.tf32 = true;
        } else if left.ends_with("cudnn.allow_tf32")
            && matches!(a.vkind, ValKind::True | ValKind::False)
        {
            p.cudnn_allow_tf32 = Some(a.vkind == ValKind::True);
        } else if left.ends_with("cudnn.benchmark") {
            m.facts.cudnn_benchmark = Some(a.vkind == ValKind::True);
            if a.vkind != ValKind::True && a.vkind != ValKind::False {
                m.facts.cudnn_benchmark = Some(true); // set from a flag: the user decides
            }
        } else if left.ends_with("cudnn.deterministic")
            // `= args.torch_deterministic` with `default=True`: the default ships
            && (a.vkind == ValKind::True
                || truth(&m.resolve_expr(a.value, a.span.start, a.ctx.func)) == Some(true))
        {
            m.deterministic = true;
        }
    }
    // (`Accelerator()` without `mixed_precision=` runs in fp32 as shipped: its default is
    // "no", and only a launch configuration outside the repository changes it; so does its
    // `dynamo_backend`: without one the model runs eagerly as shipped)
    // `TrainingArguments(torch_compile=args.compile)`,
    // `Accelerator(dynamo_backend=args.backend)`: compilation is decided elsewhere
    m.compile_unknown = compile_var
        || m.calls.iter().any(|c| {
            m.last_name(c) == "Accelerator"
                && (m.kw(c, "dynamo_plugin").is_some()
                    || m.kw(c, "dynamo_backend").is_some_and(|b| {
                        !matches!(
                            m.text(b.value)
                                .trim_matches(['"', '\''])
                                .to_ascii_lowercase()
                                .as_str(),
                            "no" | "none"
                        )
                    }))
        });
    // `@torch.compile` as a bare decorator is an attribute, not a call.
    if m.src.contains("@torch.compile") {
        compile = true;
    }
    p.fp64 = fp64_model(m);
    m.facts.precision = p;
    m.facts.compile = compile;
    m.facts.conv = conv;
    m.facts.channels_last = channels_last;
}

/// Does the model compute in float64: `torch.set_default_dtype(torch.float64)`, or
/// `.double()` / `.to(torch.float64)` on a model (a model-kind name, or a local `nn.Module`
/// class built and placed in the same expression: `Seq().to(device).double()`, or any class
/// built so and bound to a model's name: `model = SocialImplicit(...).cuda().double()`)?
fn fp64_model(m: &Model<'_>) -> bool {
    let is_f64 = |t: &str| matches!(t, "torch.float64" | "torch.double");
    m.calls.iter().enumerate().any(|(ci, c)| {
        let last = m.last_name(c);
        if last == "set_default_dtype" {
            return m.pos(c, 0).is_some_and(|a| is_f64(m.text(a.value)));
        }
        let to_f64 = c.method.is_some()
            && match last {
                "double" => m.call_args(c).is_empty(),
                "to" => m.call_args(c).iter().any(|a| {
                    is_f64(m.text(a.value)) && a.name.is_none_or(|n| m.text(n) == "dtype")
                }),
                _ => false,
            };
        if !to_f64 {
            return false;
        }
        let bound_to_model = m.assigns.iter().any(|a| {
            a.rhs_call == u32::try_from(ci).ok()
                && a.targets.len() == 1
                && m.var_kind(m.text(a.left)) == Some(VarKind::Model)
        });
        // the receiver chain, through placements and mode switches, down to the model
        let mut cur = c;
        for _ in 0..8 {
            if let Some(r) = cur.recv
                && m.var_kind(m.text(r)) == Some(VarKind::Model)
            {
                return true;
            }
            let Some(inner) = cur.recv_call.and_then(|i| m.calls.get(i as usize)) else {
                return false;
            };
            if inner.method.is_none() {
                let name = m.text(inner.func);
                return (bound_to_model && name.starts_with(|ch: char| ch.is_ascii_uppercase()))
                    || m.classes.iter().any(|k| {
                        m.text(k.name) == name
                            && k.bases.is_some_and(|b| m.text(b).contains("Module"))
                    });
            }
            if !matches!(m.last_name(inner), "to" | "cuda" | "train" | "eval") {
                return false;
            }
            cur = inner;
        }
        false
    })
}

/// The loader variable a `for` iterates, looking through `enumerate`/`tqdm`/`zip`/`iter`.
fn iterated_loader(m: &Model<'_>, iter: Span, func: Option<u32>) -> Option<String> {
    let node = m.node(iter)?;
    let mut stack = vec![node];
    let mut seen = 0;
    let mut followed = false;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 64 {
            break;
        }
        match n.node_kind() {
            "identifier" | "attribute" => {
                let t = m.node_text(n);
                if m.var_kind(t) == Some(VarKind::Loader) {
                    return Some(t.to_string());
                }
                // a progress bar bound before the loop: `pbar = tqdm(enumerate(dl_tr))` ...
                // `for i, (x, y) in pbar:` (its latest binding in the function, once)
                if !followed
                    && n.node_kind() == "identifier"
                    && let Some(value) = m
                        .assigns
                        .iter()
                        .filter(|a| {
                            a.ctx.func == func
                                && a.targets.len() == 1
                                && !a.augmented
                                && a.span.end <= iter.start
                                && m.text(a.left) == t
                        })
                        .last()
                        .filter(|a| {
                            a.rhs_call
                                .and_then(|i| m.calls.get(i as usize))
                                .is_some_and(|c| {
                                    c.method.is_none()
                                        && matches!(
                                            m.last_name(c),
                                            "tqdm"
                                                | "enumerate"
                                                | "track"
                                                | "progress_bar"
                                                | "tqdm_notebook"
                                        )
                                })
                                // (or a bar only when asked for, `iterator = tqdm(loader) if
                                // use_tqdm else loader`)
                                || m.node(a.value)
                                    .is_some_and(|v| v.node_kind() == "conditional_expression")
                        })
                        .and_then(|a| m.node(a.value))
                {
                    followed = true;
                    stack.push(value);
                }
            }
            // (the two values of `tqdm(loader) if use_tqdm else loader`, not its test)
            "conditional_expression" => {
                stack.extend(n.named_child(0));
                stack.extend(n.named_child(2));
            }
            "call" => {
                let f =
                    crate::analysis::facts::field::get(n, crate::analysis::facts::field::FUNCTION);
                let ft = f.map_or("", |f| m.node_text(f));
                let last = ft.rsplit('.').next().unwrap_or(ft);
                if last.ends_with("dataloader") || last.ends_with("_loader") {
                    return Some(ft.to_string());
                }
                if super::prefilter::ITER_WRAPPERS.contains(&last)
                    && let Some(args) = crate::analysis::facts::field::get(
                        n,
                        crate::analysis::facts::field::ARGUMENTS,
                    )
                {
                    let mut c = args.walk();
                    for a in args.named_children(&mut c) {
                        if a.node_kind() != "keyword_argument" {
                            stack.push(a);
                        }
                    }
                } else if last != "len"
                    && let Some(a0) = crate::analysis::facts::field::get(
                        n,
                        crate::analysis::facts::field::ARGUMENTS,
                    )
                    .and_then(|args| args.named_child(0))
                    && matches!(a0.node_kind(), "identifier" | "attribute")
                {
                    // `metric_logger.log_every(data_loader, 10, header)`: a wrapper handed the
                    // loader first yields its batches
                    let t = m.node_text(a0);
                    if m.var_kind(t) == Some(VarKind::Loader) {
                        return Some(t.to_string());
                    }
                }
            }
            "parenthesized_expression" => {
                if let Some(ch) = n.named_child(0) {
                    stack.push(ch);
                }
            }
            _ => {}
        }
    }
    None
}

/// Is this call a forward pass of a model-kind variable (`model(x)`, `self.net(x)`, `model.generate(...)`)?
pub(crate) fn is_model_call(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if c.method.is_none() {
        // `build_model()` / `from x import get_model`: a function, not a model variable
        let name = m.text(c.func);
        // (the kind first: the scan for an imported object's housekeeping runs only for names
        // of models)
        return c.dotted
            && !m.defined.contains(name)
            && m.var_kind(name) == Some(VarKind::Model)
            && (!m.imports.contains_key(name) || imported_module_object(m, name));
    }
    // `self.model(x)`: an attribute of the instance holding a model
    if c.recv.is_some_and(|r| m.text(r) == "self")
        && m.var_kind(m.text(c.func)) == Some(VarKind::Model)
    {
        return true;
    }
    let last = m.last_name(c);
    // (also MMEngine's and Lightning's step methods: `model.test_step(data_batch)`; and a
    // Keras-style `model.predict(batch)`)
    matches!(
        last,
        "generate" | "forward" | "test_step" | "val_step" | "predict"
    ) && c
        .recv
        .is_some_and(|r| m.var_kind(m.text(r)) == Some(VarKind::Model))
}

/// Is imported name `name` a module object rather than a function: the file manages it as one
/// (`from faster_rcnn.faster_rcnn import model` ... `model.to(device=device)`, `model.eval()`,
/// `model.parameters()`)? A function (`from x import get_model`) has none of these.
fn imported_module_object(m: &Model<'_>, name: &str) -> bool {
    m.calls.iter().any(|c| {
        c.recv.is_some_and(|r| m.text(r) == name)
            && matches!(
                m.last_name(c),
                "eval" | "train" | "parameters" | "to" | "cuda" | "state_dict" | "load_state_dict"
            )
    })
}

/// Methods of `nn.Module` (and of the wrappers around one) that manage the module rather than
/// run it: placement, mode, parameters, state, hooks, saving.
const MODULE_HOUSEKEEPING: &[&str] = &[
    "to",
    "cuda",
    "cpu",
    "eval",
    "train",
    "half",
    "float",
    "double",
    "bfloat16",
    "type",
    "parameters",
    "buffers",
    "state_dict",
    "load_state_dict",
    "zero_grad",
    "apply",
    "modules",
    "children",
    "requires_grad_",
    "add_module",
    "get_submodule",
    "get_parameter",
    "get_buffer",
    "share_memory",
    "extra_repr",
    "resize_token_embeddings",
    "get_input_embeddings",
    "get_output_embeddings",
    "tie_weights",
    "init_weights",
    "gradient_checkpointing_enable",
    "fit",
    "partial_fit",
    "update",
    "log",
];

/// Does a call run the model, by any method: [`is_model_call`], or a method of a model variable
/// that is not module housekeeping (`model.encode_image(x)`, `model.get_last_selfattention(x)`)
/// given data that changes per iteration or sits on the device.
///
/// For the loop and file classification (a loop that runs the model is a model loop); the
/// autograd rules keep [`is_model_call`]: a feature extractor may run without gradients itself.
pub(crate) fn runs_model(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if is_model_call(m, c) {
        return true;
    }
    // (also a dict of inputs unpacked, `model.get_audio_features(**inputs)`)
    let per_step = |t: &str| t.contains(".to(") || t.contains(".cuda(") || per_iteration(m, c, t);
    model_method(m, c)
        && (m.call_args(c).iter().any(|a| per_step(m.text(a.value)))
            || c.splat.is_some_and(|s| per_step(m.text(s))))
}

/// Is a call a method of a model variable that may run it: not module housekeeping
/// (placement, mode, state, hooks, saving), and not a library API that batches by itself?
fn model_method(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let (Some(_), Some(recv)) = (c.method, c.recv) else {
        return false;
    };
    let last = m.last_name(c);
    // sentence-transformers' `encode*` batch, pick the device and disable autograd inside the
    // library: an inference API call (`signals` counts `encode`), not a forward of this code
    let sentence_api = last.starts_with("encode")
        && m.imports
            .values()
            .any(|q| q.starts_with("sentence_transformers"));
    if !m.torch
        || sentence_api
        || m.var_kind(m.text(recv)) != Some(VarKind::Model)
        || MODULE_HOUSEKEEPING.contains(&last)
        || [
            "named_",
            "register_",
            "save",
            "set_",
            "load_",
            "from_",
            "print",
        ]
        .iter()
        .any(|p| last.starts_with(p))
    {
        return false;
    }
    true
}

/// Is a call another module's inference helper handed the model and this iteration's input:
/// `labels = predict(model, extractor, img, args.device)` in a frame loop, with `predict`
/// imported from the project's utilities? The helper runs the model once per call (what it
/// does inside, autograd included, the file does not show, so this only marks the loop as
/// one that runs the model). Not one handed a loader: that runs a whole pass.
fn delegated_inference(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let name = m.last_name(c);
    let verb = name == "predict"
        || name == "inference"
        || name == "infer"
        || ["predict_", "infer_", "inference_", "run_inference"]
            .iter()
            .any(|p| name.starts_with(p));
    if !verb || !m.torch || c.ctx.loop_.is_none() || m.defined.contains(name) {
        return false;
    }
    // a function, not a method of a model or of an object of this file
    if c.method.is_some() && c.recv.is_none_or(|r| !m.imports.contains_key(m.text(r))) {
        return false;
    }
    let args = m.call_args(c);
    // (one handed a loader runs a whole pass over it, `inference_one_epoch(model,
    // dm.val_dataloader(), device)` in a fold loop: the loop around it is no step loop)
    if args.iter().any(|a| {
        m.var_kind(m.text(a.value)) == Some(VarKind::Loader)
            || m.text(a.value).to_ascii_lowercase().contains("loader")
    }) {
        return false;
    }
    args.iter()
        .any(|a| a.vkind == ValKind::Ident && m.var_kind(m.text(a.value)) == Some(VarKind::Model))
        && args.iter().any(|a| {
            m.var_kind(m.text(a.value)) != Some(VarKind::Model)
                && per_iteration(m, c, m.text(a.value))
        })
}

/// Does a Hub checkpoint name an encoder family that Transformers implements in its own code
/// (BERT, RoBERTa, DeBERTa, ELECTRA, ALBERT, DistilBERT, XLM-R, MPNet, T5, BART): loading it
/// runs no code from the hub, `trust_remote_code=True` or not, and it loads in fp32.
fn built_in_encoder(name: &str) -> bool {
    const FAMILIES: &[&str] = &[
        "bert", "roberta", "deberta", "electra", "albert", "xlm-r", "mpnet", "t5-", "bart",
    ];
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    FAMILIES.iter().any(|f| base.contains(f))
}

/// Is a call a sentence-transformers model's `encode` of what this iteration binds
/// (`feat = model.encode(img)` for each image file)? The library batches, picks the device and
/// disables autograd itself, so this is no forward pass for the autograd rules; but the loop
/// runs the model once per item: an inference step.
fn encodes_per_item(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let (Some(_), Some(recv)) = (c.method, c.recv) else {
        return false;
    };
    m.last_name(c).starts_with("encode")
        && m.var_kind(m.text(recv)) == Some(VarKind::Model)
        && m.imports
            .values()
            .any(|q| q.starts_with("sentence_transformers"))
        && m.pos(c, 0)
            .is_some_and(|a| per_iteration(m, c, m.text(a.value)))
}

/// The model a placement chain starts from: `model` of `model.to(args.device)` or
/// `model.cuda()`; any other text as it is.
fn placed_root(recv: &str) -> &str {
    [".to(", ".cuda(", ".half(", ".float("]
        .iter()
        .filter_map(|p| recv.find(p))
        .min()
        .filter(|_| recv.ends_with(')'))
        .and_then(|i| recv.get(..i))
        .unwrap_or(recv)
}

/// Does a call, outside any loop of its function, run the model on what the function is
/// given: `output = model(inputs)`, `model.transcribe(filename)` in `def predict(filename):`?
/// Such a function does one inference step; a loop that calls it drives the model.
fn infers_per_call(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if c.ctx.loop_.is_some() {
        return false;
    }
    let Some(f) = c.ctx.func.and_then(|f| m.funcs.get(f as usize)) else {
        return false;
    };
    is_model_call(m, c)
        || (model_method(m, c)
            && m.call_args(c).iter().any(|a| {
                super::rules::words(m.text(a.value))
                    .any(|w| f.params.iter().any(|(p, _)| m.text(*p) == w))
            }))
}

/// Is an argument's root variable bound per iteration of a loop around the call: a loop target,
/// or assigned in the loop's body (`image = preprocess(raw).to(device)`)?
fn per_iteration(m: &Model<'_>, c: &super::facts::Call, arg: &str) -> bool {
    let root: &str = arg
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .next()
        .unwrap_or("");
    if root.is_empty() || root == "self" || root.starts_with(|ch: char| ch.is_ascii_digit()) {
        return false;
    }
    let mut cur = c.ctx.loop_;
    for _ in 0..256 {
        let Some(li) = cur else { return false };
        let Some(l) = m.loops.get(li as usize) else {
            return false;
        };
        if l.targets.iter().any(|t| m.text(*t) == root)
            || m.assigns
                .iter()
                .any(|a| l.span.contains(a.span) && a.targets.iter().any(|t| m.text(*t) == root))
        {
            return true;
        }
        cur = l.parent;
    }
    false
}

pub(crate) fn is_opt_step(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if m.last_name(c) == "run" && c.method.is_some() {
        return tf_session_trains(m, c);
    }
    if m.last_name(c) != "step" || c.method.is_none() {
        return false;
    }
    let Some(r) = c.recv else { return false };
    matches!(
        m.var_kind(m.text(r)),
        Some(VarKind::Optimizer) | Some(VarKind::Scaler)
    )
}

/// Is a function named for an adversarial attack (`attack_pgd`, `fgsm`, `perturb_batch`,
/// `adversarial_example`)? Its gradient loop optimises an input, not a model.
pub(crate) fn names_attack(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    ["attack", "fgsm", "pgd", "perturb", "adversar"]
        .iter()
        .any(|w| l.contains(w))
}

/// Is call `c` a weight initialiser's test for convolution layers, `isinstance(m, nn.Conv2d)`
/// (or `classname.find('Conv')` of `m.__class__.__name__`), in
/// a function the file applies to a model (`net.apply(weights_init)`) or in a loop over a
/// model's modules (`for m in model.modules():`)? The network it initialises has convolutions
/// whose layers the file does not show.
// Ex) def weights_init(m): if isinstance(m, nn.Conv2d): nn.init.kaiming_normal_(m.weight) ... net.apply(weights_init)
fn initializes_convolutions(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let isinstance_conv = c.method.is_none()
        && m.text(c.func) == "isinstance"
        && m.pos(c, 1).is_some_and(|a| {
            crate::analysis::rules::words(m.text(a.value))
                .any(|w| w.starts_with("Conv") && (w.ends_with('d') || w.ends_with("Transpose2d")))
        });
    // (also the DCGAN tutorial's test of the class name, `classname = m.__class__.__name__`
    // ... `if classname.find('Conv') != -1:`)
    let class_name_conv = c.method.is_some()
        && m.last_name(c) == "find"
        && m.pos(c, 0)
            .and_then(|a| m.node(a.value))
            .and_then(|n| super::facts::string_value(n, m.src))
            .is_some_and(|v| v.starts_with("Conv"))
        && c.recv.is_some_and(|r| {
            let name = m.text(r);
            m.assigns.iter().any(|a| {
                a.ctx.func == c.ctx.func
                    && m.text(a.left) == name
                    && m.text(a.value).ends_with("__class__.__name__")
            })
        });
    if !(isinstance_conv || class_name_conv) {
        return false;
    }
    let applied = c
        .ctx
        .func
        .and_then(|f| m.funcs.get(f as usize))
        .is_some_and(|f| {
            let name = m.text(f.name);
            m.calls.iter().any(|k| {
                m.last_name(k) == "apply"
                    && k.method.is_some()
                    && m.pos(k, 0).is_some_and(|a| m.text(a.value) == name)
            })
        });
    let over_modules = c
        .ctx
        .loop_
        .and_then(|l| m.loops.get(l as usize))
        .and_then(|l| l.iter)
        .is_some_and(|it| m.text(it).ends_with(".modules()"));
    applied || over_modules
}

/// Does call `c` run a TensorFlow 1 session on a training op: `sess.run([train_op, loss],
/// feed_dict=...)` with `train_op = optimizer.minimize(loss)` (or named for one: `train_op`,
/// `opt.opt_op`)? Each such run is one optimizer step.
// Ex) _, avg_cost = sess.run([opt.opt_op, opt.cost], feed_dict=feed_dict)
fn tf_session_trains(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let recv = c.recv.map_or("", |r| m.text(r)).to_ascii_lowercase();
    if !recv.contains("sess") {
        return false;
    }
    let Some(fetches) = m.pos(c, 0) else {
        return false;
    };
    crate::analysis::rules::words(m.text(fetches.value)).any(|w| {
        let l = w.to_ascii_lowercase();
        matches!(
            l.as_str(),
            "train_op" | "opt_op" | "train_step" | "optimize_op"
        ) || m.assigns.iter().any(|a| {
            m.text(a.left) == w && {
                let v = m.text(a.value);
                v.contains(".minimize(") || v.contains(".apply_gradients(")
            }
        })
    })
}

fn loops(m: &mut Model<'_>) {
    let n = m.loops.len();
    // functions that train (for one level of call graph)
    let mut fn_backward = vec![false; m.funcs.len()];
    // functions that do one training step (backward outside any loop of their own): calling
    // one makes the calling loop a step loop; a function with its own loop is an epoch body.
    let mut fn_step = vec![false; m.funcs.len()];
    for c in &m.calls {
        if m.last_name(c) == "backward"
            && let Some(f) = c.ctx.func
            && let Some(b) = fn_backward.get_mut(f as usize)
        {
            *b = true;
            if c.ctx.loop_.is_none()
                && let Some(st) = fn_step.get_mut(f as usize)
            {
                *st = true;
            }
        }
    }
    // a thin wrapper around one (`def train_sample(model, sample, opt): return
    // process_sample(model, sample, True, opt)`), called outside any loop of its own, does one
    // training step too (a few wrappers deep)
    for _ in 0..4 {
        let names: std::collections::HashSet<&str> = m
            .funcs
            .iter()
            .zip(&fn_step)
            .filter(|(f, b)| **b && f.class.is_none())
            .map(|(f, _)| m.text(f.name))
            .collect();
        // (and a method calling one of its class's own through `self`, outside any loop of its
        // own: a DQN agent's `def update(self, t): if t % self.freq == 0:
        // self._update_behavior_network()`)
        let methods: std::collections::HashSet<(Option<u32>, &str)> = m
            .funcs
            .iter()
            .zip(&fn_step)
            .filter(|(f, b)| **b && f.class.is_some())
            .map(|(f, _)| (f.class, m.text(f.name)))
            .collect();
        let mut grew = false;
        for c in &m.calls {
            let plain = c.method.is_none() && names.contains(m.text(c.func));
            let own_method = c.method.is_some_and(|meth| {
                c.recv.is_some_and(|r| m.text(r) == "self")
                    && methods.contains(&(c.ctx.class, m.text(meth)))
            });
            if (plain || own_method)
                && c.ctx.loop_.is_none()
                && let Some(f) = c.ctx.func
                && let Some(st) = fn_step.get_mut(f as usize)
                && !*st
            {
                *st = true;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    // functions that do one inference step (the model runs outside any loop of their own):
    // a loop calling one drives the model (`for f in files: predict(load(f))`)
    let mut fn_infer = vec![false; m.funcs.len()];
    for c in &m.calls {
        if let Some(f) = c.ctx.func
            && infers_per_call(m, c)
            && let Some(i) = fn_infer.get_mut(f as usize)
        {
            *i = true;
        }
    }
    let infer_fns: std::collections::HashSet<&str> = m
        .funcs
        .iter()
        .zip(&fn_infer)
        .filter(|(f, b)| **b && f.class.is_none())
        .map(|(f, _)| m.text(f.name))
        .collect();
    let train_fns: std::collections::HashSet<&str> = m
        .funcs
        .iter()
        .zip(&fn_step)
        .filter(|(_, b)| **b)
        .map(|(f, _)| m.text(f.name))
        .collect();
    let mut infos = vec![super::facts::LoopInfo::default(); n];
    for (i, l) in m.loops.iter().enumerate() {
        if let Some(it) = l.iter {
            infos[i].iterates_loader = iterated_loader(m, it, l.ctx.func);
        }
    }
    // `for loader in loaders: for x in tqdm(loader): ...`: a loop whose item an inner loader
    // loop iterates goes over loaders, one pass each, not over batches (an inner loop over a
    // batch's items, `for sample in batch:`, iterates no loader)
    let loader_loops: Vec<bool> = infos.iter().map(|i| i.iterates_loader.is_some()).collect();
    for (inner, _) in m.loops.iter().zip(&loader_loops).filter(|(_, l)| **l) {
        let Some(it) = inner.iter else { continue };
        let words: Vec<&str> = crate::analysis::rules::words(m.text(it)).collect();
        let mut cur = inner.parent;
        for _ in 0..64 {
            let Some(p) = cur else { break };
            let Some(outer) = m.loops.get(p as usize) else {
                break;
            };
            if let [t] = outer.targets.as_slice()
                && words.contains(&m.text(*t))
                && let Some(info) = infos.get_mut(p as usize)
            {
                info.iterates_loader = None;
            }
            cur = outer.parent;
        }
    }
    for c in &m.calls {
        let Some(li) = c.ctx.loop_ else { continue };
        let Some(info) = infos.get_mut(li as usize) else {
            continue;
        };
        let last = m.last_name(c);
        if last == "backward" && c.method.is_some() {
            info.backward = true;
        } else if is_opt_step(m, c) {
            info.opt_step = true;
        } else if runs_model(m, c) {
            info.model_call = true;
        } else if c.method.is_none() && train_fns.contains(m.text(c.func)) {
            info.backward = true;
        } else if let (Some(meth), Some(root)) = (c.method, c.recv_root)
            && (train_fns.contains(m.text(meth))
                || matches!(
                    m.text(meth),
                    "train_step" | "training_step" | "train_on_batch" | "optimize_parameters"
                )
                // (one per network of a GAN: `trainer.discriminator_trainstep(x, y, z)`,
                // `generator_train_step`)
                || ["_trainstep", "_train_step"]
                    .iter()
                    .any(|s| m.text(meth).ends_with(s)))
            && !m.imports.contains_key(m.text(root))
        {
            // `trainer.train_step(sample)`: a method of a class defined here that does one
            // training step (or named for one on an object of another module,
            // `model.train_step(batch, optimizer)`, Keras' `model.train_on_batch(x, y)`,
            // `trainer.generator_trainstep(y, z)`, the pix2pix / CycleGAN framework's
            // `model.optimize_parameters()`)
            info.backward = true;
        } else if (c.method.is_none() && infer_fns.contains(m.text(c.func)))
            || delegated_inference(m, c)
            || encodes_per_item(m, c)
        {
            info.model_call = true;
        } else if m
            .pos(c, 0)
            .is_some_and(|a| m.text(a.value).contains("loss"))
            && hands_optimizer(m, c)
        {
            // timm's `NativeScaler`: `loss_scaler(loss, optimizer, parameters=...)` runs the
            // backward pass and steps the optimizer
            info.backward = true;
            info.opt_step = true;
        }
    }
    // `for k in range(num_d_steps):` with `num_d_steps = 1`: a loop that runs once is a block
    // of the loop around it, whose step it is part of (innermost first, so a nest of them
    // hands its work all the way up)
    for i in (0..n).rev() {
        if let Some(p) = m.loops[i].parent
            && runs_once(m, &m.loops[i])
        {
            let inner = std::mem::take(&mut infos[i]);
            let outer = &mut infos[p as usize];
            outer.backward |= inner.backward;
            outer.opt_step |= inner.opt_step;
            outer.model_call |= inner.model_call;
        }
    }
    for (l, info) in m.loops.iter().zip(&mut infos) {
        // (a loop that breaks off after a few iterations, `if i >= 10: break`, samples a few
        // batches: no step of a hot loop)
        info.step =
            (info.iterates_loader.is_some() || info.backward || info.opt_step || info.model_call)
                && !capped_loop(m, l);
        info.train = info.backward || info.opt_step;
    }
    // `for fold in folds: for epoch ...: for xb in loader: ...; model(X_test)`: a loop holding a
    // training or loader loop of its own runs whole passes; a forward directly in its body is a
    // once-per-pass evaluation, not a step. (Its setup per pass is not loop-invariant work.)
    // (whether a loop trains or iterates a loader does not change on the way: the order of the
    // loops does not matter)
    for i in 0..n {
        if infos[i].train || infos[i].iterates_loader.is_some() {
            passes_around(m, &mut infos, i);
        }
    }
    for i in 0..n {
        if infos[i].step
            && let Some(p) = m.loops[i].parent
            && let Some(pi) = infos.get_mut(p as usize)
        {
            pi.has_child_step = true;
        }
    }
    // `for e in range(epochs): for x, y in loader: ...; optimizer.step()` then, once per pass,
    // `optimizer_proxies.step()`: a loop around a training loop over a loader runs whole
    // passes, whatever it also steps once per pass
    // (not a few critic iterations broken off the loader, `if i == args.n_critic: break`: the
    // loop around them is the generator's step)
    let mut holds_training_pass = vec![false; n];
    for (l, info) in m.loops.iter().zip(&infos) {
        if info.step
            && info.train
            && info.iterates_loader.is_some()
            && !breaks_off(m, l)
            && let Some(held) = l
                .parent
                .and_then(|p| holds_training_pass.get_mut(p as usize))
        {
            *held = true;
        }
    }
    for (info, holds) in infos.iter_mut().zip(holds_training_pass) {
        if holds && info.step && info.iterates_loader.is_none() {
            info.step = false;
            info.train = false;
        }
    }
    // `for epoch in ...: train_one_epoch(model, loader)` — a call to a local function whose body
    // holds a step loop makes the calling loop an epoch loop (not an adversarial attack's, whose
    // loop steps the input, not a model: `delta = attack_pgd(model, X, y, ...)` is per-batch
    // work of the loop that calls it)
    let step_fns: std::collections::HashSet<&str> = m
        .loops
        .iter()
        .zip(&infos)
        .filter(|(_, i)| i.step)
        .filter_map(|(l, _)| l.ctx.func)
        .filter_map(|f| m.funcs.get(f as usize))
        .map(|f| m.text(f.name))
        .filter(|name| !names_attack(name))
        .collect();
    // (functions whose step loop trains over a loader: a whole training pass)
    let pass_fns: std::collections::HashSet<&str> = m
        .loops
        .iter()
        .zip(&infos)
        .filter(|(l, i)| i.step && i.train && i.iterates_loader.is_some() && !breaks_off(m, l))
        .filter_map(|(l, _)| l.ctx.func)
        .filter_map(|f| m.funcs.get(f as usize))
        .map(|f| m.text(f.name))
        .collect();
    if !step_fns.is_empty() {
        for c in &m.calls {
            let Some(li) = c.ctx.loop_ else { continue };
            let name = match c.method {
                Some(meth) if c.recv.is_some_and(|r| m.text(r) == "self") => m.text(meth),
                None => m.text(c.func),
                _ => continue,
            };
            if step_fns.contains(name)
                && let Some(info) = infos.get_mut(li as usize)
            {
                info.has_child_step = true;
                // `for epoch in ...: train(epoch); test(epoch); model.decode(sample)`: as for
                // a loop holding a step loop, a forward in its body runs once per pass; so
                // does an optimizer step once per training pass (`for epoch in ...:
                // train(model, loader, optimizer); optimizer.step()`)
                if info.iterates_loader.is_none() && (!info.train || pass_fns.contains(name)) {
                    info.step = false;
                    info.train = false;
                }
            }
        }
    }
    // `for fold in folds: for epoch in ...: train_nn(...); ...; report(model, test_loader)`:
    // a loop around an epoch loop (one that calls a function holding the step loop) runs
    // whole trainings, and an evaluation run in its own body runs once per training
    // Ex) for fold in range(5): ... for t in range(epochs): train_nn(...) ... plotting_results(model, ...)
    for i in 0..n {
        if infos[i].has_child_step && !infos[i].step {
            passes_around(m, &mut infos, i);
        }
    }
    // `for epoch in ...: train_one_epoch(model, optimizer, loader)` with an imported function:
    // a loop that hands the optimizer to a call runs whole training passes.
    let mut delegated = false;
    // (or a training-pass method of an object of an imported class built with the optimizer:
    // `trainer = Triplet_Trainer(model, miner, loss, optimizer, ...)` ... `for epoch in ...:
    // trainer.Train_Epoch(train_loader)`)
    let object_pass = |c: &super::facts::Call| {
        let last = m.last_name(c).to_ascii_lowercase();
        c.method.is_some()
            && (last.contains("train") || last.contains("epoch") || last == "fit")
            && c.recv
                .is_some_and(|r| imported_instance_where(m, m.text(r), |k| hands_optimizer(m, k)))
    };
    for c in &m.calls {
        let Some(li) = c.ctx.loop_ else { continue };
        let by_object = object_pass(c);
        if (hands_optimizer(m, c) || by_object)
            && let Some(info) = infos.get_mut(li as usize)
        {
            info.has_child_step = true;
            // (also a training function of an imported module, `train_utils.train(loader,
            // model, criterion, optimizer)`, `engine.train_one_epoch(...)`; not a checkpoint
            // helper handed the optimizer to save it)
            // (or any function of a module named for training, `import modules.fit as fit` ...
            // `fit.run(device, loader, model, optimizer)`; not its checkpoint helpers)
            let last = m.last_name(c).to_ascii_lowercase();
            let module_fn = c.recv_root.is_some_and(|r| {
                let root = m.text(r);
                m.imports.contains_key(root)
                    && (["train", "epoch", "fit"].iter().any(|w| last.contains(w))
                        || (["train", "fit", "engine"]
                            .iter()
                            .any(|w| root.to_ascii_lowercase().contains(w))
                            && !["save", "load", "checkpoint", "log"]
                                .iter()
                                .any(|w| last.contains(w))))
            });
            // (not behind a switch that is off as shipped, `if train_flag:` with
            // `train_flag = False`)
            if !info.step
                && (c.method.is_none() || module_fn || by_object)
                && !m.defined.contains(m.text(c.func))
                && !m.dead(&c.ctx)
            {
                delegated = true;
            }
        }
    }
    // `hydragnn.train.train_validate_test(model, optimizer, ...)` outside any loop: a training
    // function of another module handed the optimizer runs the whole training
    // (also a method of an object built from an imported class: `runner = Runner(...)` ...
    // `runner.train(model=model, optimizer=optimizer)`)
    delegated |= m.calls.iter().any(|c| {
        let imported = c.method.is_none()
            || c.recv_root.is_some_and(|r| {
                m.imports.contains_key(m.text(r)) || imported_instance(m, m.text(r))
            });
        let name = m.last_name(c).to_ascii_lowercase();
        // (not a factory that builds a trainer, which trains only when run:
        // `create_supervised_trainer(model, optimizer, ...)`)
        let factory = BUILDER_VERBS
            .iter()
            .any(|v| name.trim_start_matches('_').starts_with(v));
        c.ctx.loop_.is_none()
            && imported
            && !factory
            && !m.defined.contains(m.text(c.func))
            && (name.contains("train") || name == "fit")
            && !m.dead(&c.ctx)
            && hands_optimizer(m, c)
    });
    // `trainer = Trainer(model=model, optimizer=optimizer, ...)` ... `trainer.train()`: a
    // trainer class of another module, handed the optimizer, runs the training
    // Ex) trainer = Trainer(model=model, criterion=criterion, optimizer=optimizer); trainer.fit(...)
    delegated |= m.calls.iter().enumerate().any(|(ci, c)| {
        let class = m.text(c.func);
        c.method.is_none()
            && class.starts_with(|ch: char| ch.is_ascii_uppercase())
            && !m.defined.contains(class)
            && !m.dead(&c.ctx)
            && hands_optimizer(m, c)
            && object_trained(m, ci)
    });
    m.delegated_train = delegated && !infos.iter().any(|i| i.backward || i.opt_step);
    for info in &mut infos {
        info.epoch = info.has_child_step && !info.step;
    }
    // batch names: loop targets of step loops and names derived from them
    for (i, l) in m.loops.iter().enumerate() {
        if infos[i].step {
            infos[i].batch_names = l.targets.iter().map(|t| m.text(*t).to_string()).collect();
        }
    }
    for a in &m.assigns {
        let Some(li) = a.ctx.loop_ else { continue };
        let Some(step) = step_loop_of(&m.loops, &infos, li) else {
            continue;
        };
        let Some(value) = m.node(a.value) else {
            continue;
        };
        // `images, masks = batch["image"], batch["mask"]`: each target from its own element
        let pairs: Vec<(Span, Node<'_>)> = match value.node_kind() {
            "expression_list" | "tuple"
                if super::facts::elements(value).len() == a.targets.len() =>
            {
                a.targets
                    .iter()
                    .copied()
                    .zip(super::facts::elements(value))
                    .collect()
            }
            _ => a.targets.iter().map(|t| (*t, value)).collect(),
        };
        let names = &infos[step as usize].batch_names;
        let new: Vec<String> = pairs
            .iter()
            .filter(|(_, v)| batch_root(m, *v).is_some_and(|r| names.iter().any(|b| b == r)))
            .map(|(t, _)| m.text(*t).to_string())
            .filter(|t| !names.contains(t))
            .collect();
        infos[step as usize].batch_names.extend(new);
    }
    for (l, info) in m.loops.iter_mut().zip(infos) {
        l.info = info;
    }
    for (f, b) in m.funcs.iter_mut().zip(fn_backward) {
        f.backward = b;
    }
}

/// The loops around loop `i` run whole passes of it: each of them that neither trains nor
/// iterates a loader itself is no step loop (a forward in its body runs once per pass) and holds
/// one.
fn passes_around(m: &Model<'_>, infos: &mut [super::facts::LoopInfo], i: usize) {
    let mut cur = m.loops.get(i).and_then(|l| l.parent);
    for _ in 0..256 {
        let Some(p) = cur else { break };
        let Some(info) = infos.get_mut(p as usize) else {
            break;
        };
        if info.iterates_loader.is_none() && !info.train {
            info.step = false;
            info.has_child_step = true;
        }
        cur = m.loops.get(p as usize).and_then(|l| l.parent);
    }
}

/// Does a statement of the loop's body leave it on a test, `if i == args.n_critic: break`?
fn breaks_off(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    let Some(body) = m.node(l.span).and_then(|n| n.child_by_field_name("body")) else {
        return false;
    };
    let mut cur = body.walk();
    body.named_children(&mut cur).any(breaks_on_test)
}

/// Is statement `st` an `if` whose body is a lone `break`?
fn breaks_on_test(st: Node<'_>) -> bool {
    st.node_kind() == "if_statement"
        && st.child_by_field_name("consequence").is_some_and(|b| {
            b.named_child_count() == 1
                && b.named_child(0)
                    .is_some_and(|k| k.node_kind() == "break_statement")
        })
}

/// Does the loop break off after a few iterations: a statement of its body `if i >= N: break`
/// (`>`, `==` too) on its own counter, `N` a literal of at most
/// [`FEW_ITERATIONS`](super::rules::FEW_ITERATIONS)? It samples a few batches (a
/// visualisation, a smoke test) rather than running a pass.
// Ex) for ind, image_attr in enumerate(val_loader): if ind >= 10: break
pub(crate) fn capped_loop(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    break_tests(m, l)
        .iter()
        .any(|(n, _)| *n <= super::rules::FEW_ITERATIONS)
        || returns_on_count(m, l)
}

/// Does the loop's function return once a counter the loop increments reaches a few, `if
/// images_so_far == num_images: ...; return` with `num_images=6`, also from a loop over the
/// batch's items nested in it (the transfer-learning tutorial's `visualize_model`)? The loop
/// reads at most that many batches. Counted per batch, a few is at most
/// [`FEW_ITERATIONS`](super::rules::FEW_ITERATIONS); counted per item, at most four times
/// that.
// Ex) for i, (inputs, labels) in enumerate(loader): for j in range(inputs.size()[0]):
// Ex)     images_so_far += 1; ...; if images_so_far == num_images: return
fn returns_on_count(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    // (only a loop that steps a counter by one has one to test: most loops are walked no further)
    if !m
        .assigns
        .iter()
        .any(|a| a.augmented && l.span.contains(a.span) && m.text(a.value) == "1")
    {
        return false;
    }
    let Some(body) = m.node(l.span).and_then(|n| n.child_by_field_name("body")) else {
        return false;
    };
    let mut stack = vec![body];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            return false;
        }
        if matches!(
            n.node_kind(),
            "function_definition" | "class_definition" | "lambda"
        ) {
            continue;
        }
        if n.node_kind() == "if_statement"
            && n.child_by_field_name("alternative").is_none()
            && n.child_by_field_name("consequence")
                .and_then(|b| {
                    b.named_child(u32::try_from(b.named_child_count().checked_sub(1)?).ok()?)
                })
                .is_some_and(|k| k.node_kind() == "return_statement")
            && counted_return(m, l, n)
        {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// Is `if_st`'s test `C == N` (`>=`) on a counter `C` that loop `l` increments, `N` a few?
fn counted_return(m: &Model<'_>, l: &super::facts::Loop, if_st: Node<'_>) -> bool {
    let Some((a, op, b)) = if_st
        .child_by_field_name("condition")
        .and_then(|c| super::facts::comparison_parts(c, m.src))
    else {
        return false;
    };
    if a.node_kind() != "identifier"
        || !matches!(op, "==" | ">=")
        || !counts_iterations(m, l, m.node_text(a))
    {
        return false;
    }
    let Val::Int(n) = m.resolve_expr(super::facts::Span::of(b), b.start_byte(), l.ctx.func) else {
        return false;
    };
    // (incremented in a loop nested in `l`, it counts the batch's items)
    let per_item = m.assigns.iter().any(|x| {
        l.span.contains(x.span)
            && m.text(x.left) == m.node_text(a)
            && x.ctx.loop_.is_some_and(|i| {
                m.loops
                    .get(i as usize)
                    .is_some_and(|inner| inner.span != l.span)
            })
    });
    let few = super::rules::FEW_ITERATIONS * if per_item { 4 } else { 1 };
    (1..=few).contains(&n)
}

/// How many iterations loop `l` runs at most when a statement of its body breaks off on its own
/// counter (`if step == 50: break`: 51; `if i > 9: break`: 11), `N` a literal.
pub(crate) fn break_cap(m: &Model<'_>, l: &super::facts::Loop) -> Option<i64> {
    break_tests(m, l).iter().map(|(_, cap)| *cap).min()
}

/// The statements of loop `l`'s body that break off on its own counter against a literal (`if
/// i >= N: break`, `>`, `==`), or a name bound to one: each `N` with the iterations it lets run.
fn break_tests(m: &Model<'_>, l: &super::facts::Loop) -> Vec<(i64, i64)> {
    let Some(body) = m.node(l.span).and_then(|n| n.child_by_field_name("body")) else {
        return Vec::new();
    };
    let targets: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
    let mut cur = body.walk();
    body.named_children(&mut cur)
        .filter_map(|st| {
            if st.node_kind() != "if_statement"
                || st.child_by_field_name("alternative").is_some()
                || !breaks_on_test(st)
            {
                return None;
            }
            let (a, op, b) = st
                .child_by_field_name("condition")
                .and_then(|c| super::facts::comparison_parts(c, m.src))?;
            if a.node_kind() != "identifier"
                || !(targets.contains(&m.node_text(a)) || counts_iterations(m, l, m.node_text(a)))
            {
                return None;
            }
            // (against a literal, or a name bound to one: `test_images_num = 10` ... `if i ==
            // test_images_num: break`)
            let n = match b.node_kind() {
                "integer" => m.node_text(b).parse::<i64>().ok()?,
                "identifier" => match m.resolve_span(
                    super::facts::Span::of(b),
                    ValKind::Ident,
                    st.start_byte(),
                    l.ctx.func,
                    0,
                ) {
                    Val::Int(n) => n,
                    _ => return None,
                },
                _ => return None,
            };
            let cap = match op {
                ">=" | "==" => n.checked_add(1),
                ">" => n.checked_add(2),
                _ => None,
            }?;
            Some((n, cap))
        })
        .collect()
}

/// Does `name` count loop `l`'s iterations: bound to an integer literal before the loop, in
/// the same function, and only ever `+= 1` in its body (`shown_batch = 0` ... `for images,
/// labels in loader: if shown_batch == 1: break` ... `shown_batch += 1`)?
fn counts_iterations(m: &Model<'_>, l: &super::facts::Loop, name: &str) -> bool {
    m.stepped_by_one(name, l.span)
        && m.assigns.iter().any(|a| {
            a.span.end <= l.span.start
                && !a.augmented
                && a.targets.len() == 1
                && m.text(a.left) == name
                && a.vkind == ValKind::Int
                && a.ctx.func == l.ctx.func
        })
}

/// The name a value is read from (`batch` of `batch["image"].to(d)`); `None` for a call of a
/// function (`f(batch)` is not the batch).
fn batch_root<'s>(m: &Model<'s>, n: Node<'_>) -> Option<&'s str> {
    let mut n = n;
    for _ in 0..64 {
        match n.node_kind() {
            "identifier" => {
                return Some(m.node_text(n));
            }
            "attribute" => {
                n = crate::analysis::facts::field::get(n, crate::analysis::facts::field::OBJECT)?
            }
            "subscript" => {
                n = crate::analysis::facts::field::get(n, crate::analysis::facts::field::VALUE)?
            }
            "call" => {
                // `x.to(d)` → x; `f(batch)` is not the batch, but `Variable(batch[0])` is
                // (PyTorch 0.3's wrapper hands back the same tensor since 0.4)
                let f =
                    crate::analysis::facts::field::get(n, crate::analysis::facts::field::FUNCTION)?;
                if f.node_kind() == "identifier" && m.node_text(f) == "Variable" {
                    n = crate::analysis::facts::field::get(
                        n,
                        crate::analysis::facts::field::ARGUMENTS,
                    )?
                    .named_child(0)?;
                    continue;
                }
                if f.node_kind() != "attribute" {
                    return None;
                }
                n = crate::analysis::facts::field::get(f, crate::analysis::facts::field::OBJECT)?;
            }
            _ => return None,
        }
    }
    None
}

/// Does loop `l` run its body exactly once: `for k in range(n)` with `n` 1 as shipped
/// (`num_d_steps = 1`, a literal, an option's default)?
fn runs_once(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    let Some(call) = l.iter.and_then(|it| m.call_at(it)) else {
        return false;
    };
    m.text(call.func) == "range"
        && call.splat.is_none()
        && !call.star
        && m.call_args(call).len() == 1
        && m.pos(call, 0).is_some_and(|a| {
            matches!(
                m.resolve_expr(a.value, call.span.start, call.ctx.func),
                Val::Int(1)
            )
        })
}

/// The nearest step loop enclosing loop `li` (itself included), not crossing an epoch loop.
pub(crate) fn step_loop_of(
    loops: &[super::facts::Loop],
    infos: &[super::facts::LoopInfo],
    li: u32,
) -> Option<u32> {
    let mut cur = Some(li);
    for _ in 0..256 {
        let i = cur?;
        let info = infos.get(i as usize)?;
        if info.step {
            return Some(i);
        }
        if info.epoch {
            return None;
        }
        cur = loops.get(i as usize)?.parent;
    }
    None
}

const S_BACKWARD: u32 = 1;
const S_OPT_STEP: u32 = 1 << 1;
const S_OPT_CTOR: u32 = 1 << 2;
const S_TRAIN_CALL: u32 = 1 << 3;
const S_HF_TRAINER: u32 = 1 << 4;
const S_EVAL: u32 = 1 << 5;
const S_GENERATE: u32 = 1 << 6;
const S_PRETRAINED: u32 = 1 << 7;
const S_HF_DATA: u32 = 1 << 9;
const S_PANDAS: u32 = 1 << 10;
/// Decodes an image, a video or an audio file.
const S_IMAGE: u32 = 1 << 11;
const S_GLOB: u32 = 1 << 12;
const S_WRITE: u32 = 1 << 13;
const S_NOGRAD_MODEL: u32 = 1 << 14;
const S_EPOCH_ARG: u32 = 1 << 15;
const S_READ: u32 = 1 << 16;
/// `trainer.train()` / `trainer.fit(...)`: a framework's training loop runs.
const S_FIT: u32 = 1 << 17;
/// An optimizer handed to a function from a loop (`train_one_epoch(model, optimizer, loader)`).
const S_OPT_PASSED: u32 = 1 << 18;
/// A loop runs the model, or moves a loader's batches to the GPU.
const S_MODEL_LOOP: u32 = 1 << 19;

fn signals(m: &Model<'_>, c: &super::facts::Call) -> u32 {
    let last = m.last_name(c);
    let q = m.qual(c);
    let recv = c.recv.map_or("", |r| m.text(r));
    let mut s = 0;
    match last {
        "backward" if c.method.is_some() => s |= S_BACKWARD,
        "train" if c.method.is_some() && m.var_kind(recv) == Some(VarKind::Model) => {
            s |= S_TRAIN_CALL
        }
        // (also through a placement chained before it, `model.to(args.device).eval()`)
        "eval" if c.method.is_some() && m.var_kind(placed_root(recv)) == Some(VarKind::Model) => {
            s |= S_EVAL
        }
        "Trainer" | "Seq2SeqTrainer" | "SFTTrainer" | "RewardTrainer" | "DPOTrainer"
        | "ORPOTrainer" | "KTOTrainer" | "CPOTrainer" | "GRPOTrainer" => {
            s |= S_HF_TRAINER;
        }
        _ if hf_config(m, c) => {
            s |= S_HF_TRAINER;
        }
        "fit" | "train" if c.method.is_some() && recv.to_ascii_lowercase().ends_with("trainer") => {
            s |= S_HF_TRAINER | S_FIT
        }
        // an Ignite trainer, handed the model and its optimizer: the framework's loop trains
        "create_supervised_trainer" if q.starts_with("ignite") => s |= S_FIT,
        "generate" | "predict" | "trace" if c.method.is_some() => s |= S_GENERATE,
        // (a model exported, `model.export(format="onnx")`; not pydub's `audio.export(dst)`)
        "export" if c.method.is_some() && m.var_kind(recv) == Some(VarKind::Model) => {
            s |= S_GENERATE
        }
        // `model.encode(sentences)` of a sentence-transformers model: inference (it runs under
        // `no_grad` itself, so it is not a forward pass for the autograd rules)
        "encode" if c.method.is_some() && m.var_kind(recv) == Some(VarKind::Model) => {
            s |= S_GENERATE
        }
        "pipeline" if q.starts_with("transformers") => s |= S_GENERATE,
        "from_pretrained" => s |= S_PRETRAINED,
        "load_dataset" => s |= S_HF_DATA,
        "open" if c.method.is_none() => s |= S_READ,
        "load" | "loads" | "read_text" | "loadtxt" if c.method.is_some() => s |= S_READ,
        "open" if c.method.is_some() && (q.starts_with("PIL") || recv == "Image") => s |= S_IMAGE,
        "imread" | "imdecode" | "read_image" | "VideoCapture" => s |= S_IMAGE,
        // Keras' image loader (`load_img(path)`)
        "load_img" if q.starts_with("keras") || q.starts_with("tensorflow") => s |= S_IMAGE,
        // a DICOM scan decoded (`pydicom.dcmread(path)`, the old `dicom.read_file(path)`)
        "dcmread" => s |= S_IMAGE | S_READ,
        "read_file" if q.starts_with("dicom.") || q.starts_with("pydicom.") => {
            s |= S_IMAGE | S_READ
        }
        // audio decoded from a file (`librosa.load(path)`, `torchaudio.load(path)`,
        // `sf.read(path)`): media decoding, as an image's
        "load" | "read"
            if matches!(
                q.as_ref(),
                "librosa.load"
                    | "librosa.core.load"
                    | "torchaudio.load"
                    | "soundfile.read"
                    | "scipy.io.wavfile.read"
            ) =>
        {
            s |= S_IMAGE | S_READ
        }
        "imwrite" => s |= S_WRITE,
        // SimpleITK's volumes, read and written per file (`sitk.ReadImage(path)`,
        // `sitk.WriteImage(img, out)`)
        "ReadImage" if q.starts_with("SimpleITK") => s |= S_IMAGE | S_READ,
        "WriteImage" if q.starts_with("SimpleITK") => s |= S_WRITE,
        // (an HDF5 file written, `h5_file.create_dataset('lr', shape=..., maxshape=...)`)
        "create_dataset"
            if c.method.is_some() && m.imports.values().any(|q| q.starts_with("h5py")) =>
        {
            s |= S_WRITE
        }
        // (`librosa.util.find_files(dir)`: the audio files under a folder; imutils'
        // `paths.list_images(dir)`)
        "glob" | "rglob" | "listdir" | "iterdir" | "walk" | "scandir" | "find_files"
        | "list_images" => {
            s |= S_GLOB;
        }
        // (also a file exported, pydub's `audio.export(dst, format="wav")`)
        "to_parquet" | "to_csv" | "save" | "savez" | "savetxt" | "to_json" | "write_table"
        | "export"
            if c.method.is_some() =>
        {
            s |= S_WRITE;
        }
        _ if adds_option(m, c) => {
            let a = m.text(c.args_span);
            if a.contains("epoch") || a.contains("\"--lr\"") || a.contains("learning") {
                s |= S_EPOCH_ARG;
            }
        }
        _ => {}
    }
    if is_opt_step(m, c) {
        s |= S_OPT_STEP;
    }
    if (q.starts_with("torch.optim.") && !q.contains("lr_scheduler")) || last == "get_scheduler" {
        s |= S_OPT_CTOR;
    }
    if q.starts_with("pandas.") || recv == "pd" || m.var_kind(recv) == Some(VarKind::DataFrame) {
        s |= S_PANDAS;
    }
    if c.ctx.no_grad && runs_model(m, c) {
        s |= S_NOGRAD_MODEL;
    }
    if c.ctx.loop_.is_some() && hands_optimizer(m, c) {
        s |= S_OPT_PASSED;
    }
    if let Some(l) = c.ctx.loop_.and_then(|li| m.loops.get(li as usize))
        && l.info.step
        && m.torch
        && (runs_model(m, c)
            || delegated_inference(m, c)
            || (l.info.iterates_loader.is_some()
                && c.method.is_some()
                && matches!(last, "cuda" | "to")))
    {
        s |= S_MODEL_LOOP;
    }
    s
}

fn score(s: u32, dataset: bool) -> CodeKind {
    let has = |b: u32| s & b != 0;
    let mut train = 0i32;
    let mut infer = 0i32;
    let mut data = 0i32;
    if has(S_BACKWARD) {
        train += 5;
        infer -= 5;
    }
    if has(S_OPT_STEP) {
        train += 4;
    }
    if has(S_OPT_CTOR) {
        train += 2;
    }
    if has(S_TRAIN_CALL) {
        train += 2;
    }
    if has(S_HF_TRAINER) {
        train += 5;
    }
    if has(S_EPOCH_ARG) {
        train += 1;
    }
    // each is evidence on its own: a model switched to eval mode and called without autograd
    // (a serving handler) outweighs the file reads and image decoding around it
    if has(S_EVAL) {
        infer += 4;
    }
    if has(S_NOGRAD_MODEL) {
        infer += 4;
    }
    if has(S_GENERATE) {
        infer += 4;
    }
    if has(S_PRETRAINED) && !has(S_OPT_CTOR) {
        infer += 2;
    }
    for b in [S_HF_DATA, S_PANDAS, S_IMAGE, S_GLOB, S_WRITE, S_READ] {
        if has(b) {
            data += 3;
        }
    }
    if dataset {
        data += 3;
    }
    if data < 6 {
        data = 0; // one data-ish call is not a data pipeline
    }
    if has(S_BACKWARD) && has(S_OPT_STEP) || has(S_FIT) || has(S_OPT_PASSED) {
        // a file that steps an optimizer on gradients (itself, through a framework's `fit`, or
        // through a function it hands the optimizer to) trains, whatever utilities it also holds
        return CodeKind::Train;
    }
    let best = train.max(infer).max(data);
    if best < 3 {
        if has(S_MODEL_LOOP) {
            return CodeKind::Infer;
        }
        CodeKind::Other
    } else if train == best {
        CodeKind::Train
    } else if infer == best || has(S_MODEL_LOOP) {
        // a loop that runs the model is model work, whatever data plumbing surrounds it
        CodeKind::Infer
    } else {
        CodeKind::Data
    }
}

fn classify(m: &mut Model<'_>) {
    let mut file = 0u32;
    let mut per_fn = vec![0u32; m.funcs.len()];
    for c in &m.calls {
        let s = signals(m, c);
        file |= s;
        if let Some(f) = c.ctx.func
            && let Some(x) = per_fn.get_mut(f as usize)
        {
            *x |= s;
        }
    }
    // `for path in images: label = predict_image(path, model)` with a function of the file
    // that runs the model without autograd: the loop runs the model, one call per item
    // (also one that decodes with a model's `generate(...)`, which runs without autograd:
    // `for batch in loader: translated = batch_translation(batch)`)
    let generates: std::collections::HashSet<u32> = m
        .calls
        .iter()
        .filter(|c| {
            c.method.is_some()
                && m.last_name(c) == "generate"
                && c.recv
                    .is_some_and(|r| m.var_kind(m.text(r)) == Some(VarKind::Model))
        })
        .filter_map(|c| c.ctx.func)
        .collect();
    let runs_model_fn: std::collections::HashSet<&str> = m
        .funcs
        .iter()
        .zip(&per_fn)
        .enumerate()
        .filter(|(i, (_, s))| {
            **s & S_NOGRAD_MODEL != 0 || u32::try_from(*i).is_ok_and(|i| generates.contains(&i))
        })
        .map(|(_, (f, _))| m.text(f.name))
        .collect();
    for c in &m.calls {
        let in_step_loop = c
            .ctx
            .loop_
            .and_then(|li| m.loops.get(li as usize))
            .is_some_and(|l| l.info.step);
        if in_step_loop && m.torch && c.method.is_none() && runs_model_fn.contains(m.last_name(c)) {
            file |= S_MODEL_LOOP;
            if let Some(f) = c.ctx.func
                && let Some(x) = per_fn.get_mut(f as usize)
            {
                *x |= S_MODEL_LOOP;
            }
        }
    }
    // a step loop that trains makes its function a training one
    for l in &m.loops {
        if l.info.train {
            file |= S_BACKWARD;
            if let Some(f) = l.ctx.func
                && let Some(x) = per_fn.get_mut(f as usize)
            {
                *x |= S_BACKWARD;
            }
        }
    }
    // (a training pass handed to another module, `train_one_epoch(model, optimizer, loader)`
    // or `trainer.train()` with the optimizer: the file trains, whatever per-file inference
    // it also holds)
    if m.delegated_train {
        file |= S_BACKWARD | S_OPT_PASSED;
    }
    let dataset = m
        .classes
        .iter()
        .any(|c| c.bases.is_some_and(|b| m.text(b).contains("Dataset")));
    m.kind = score(file, dataset);
    let mut facts = Vec::with_capacity(m.funcs.len());
    for (f, s) in m.funcs.iter_mut().zip(per_fn) {
        f.kind = score(s, false);
        facts.push(FunctionFacts {
            name: m
                .src
                .get(f.name.start..f.name.end)
                .unwrap_or("")
                .to_string(),
            line: f.line,
            kind: f.kind,
        });
    }
    m.facts.functions = facts;
    m.facts.loops = m
        .loops
        .iter()
        .filter_map(|l| {
            let kind = if l.info.step {
                "step"
            } else if l.info.epoch {
                "epoch"
            } else if is_record_loop(m, l) {
                "record"
            } else {
                return None;
            };
            Some(LoopFacts {
                line: l.line,
                end_line: l.end_line,
                kind,
                train: l.info.train,
            })
        })
        .collect();
    let mut imports: Vec<(String, String)> = m
        .imports
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    imports.sort();
    m.facts.imports = imports;
}

/// Is the object call `ci` builds bound to a name whose `.train()` / `.fit()` runs as shipped
/// (`trainer = Trainer(...)` ... `trainer.train()`)?
pub(crate) fn object_trained(m: &Model<'_>, ci: usize) -> bool {
    m.assigns
        .iter()
        .filter(|a| a.rhs_call == Some(ci as u32) && a.targets.len() == 1)
        .any(|a| {
            let name = m.text(a.left);
            m.calls.iter().any(|k| {
                k.recv.is_some_and(|r| m.text(r) == name)
                    && matches!(m.last_name(k), "train" | "fit")
                    && !m.dead(&k.ctx)
            })
        })
}

/// Is `name` bound (once at least, and never to anything else) to an instance of a class
/// imported from another module, `runner = Runner(...)` with `from runner import Runner`?
fn imported_instance(m: &Model<'_>, name: &str) -> bool {
    imported_instance_where(m, name, |_| true)
}

/// [`imported_instance`], each construction also accepted by `also` (`Trainer(model,
/// optimizer)`: handed the optimizer).
fn imported_instance_where(
    m: &Model<'_>,
    name: &str,
    also: impl Fn(&super::facts::Call) -> bool,
) -> bool {
    let mut binds = m
        .assigns
        .iter()
        .filter(|a| a.targets.len() == 1 && !a.augmented && m.text(a.left) == name)
        .peekable();
    binds.peek().is_some()
        && binds.all(|a| {
            a.rhs_call
                .and_then(|i| m.calls.get(i as usize))
                .is_some_and(|k| {
                    let class = m.text(k.func);
                    k.method.is_none()
                        && class.starts_with(|ch: char| ch.is_ascii_uppercase())
                        && m.imports.contains_key(class)
                        && !m.defined.contains(class)
                        && also(k)
                })
        })
}

/// Does call `c` hand an optimizer variable to its callee (`train_one_epoch(model, optimizer,
/// loader)`, `loss_scaler(loss, optimizer)`), or one built in its arguments
/// (`training_loop(ddpm, loader, optim=Adam(ddpm.parameters(), lr))`)?
pub(crate) fn hands_optimizer(m: &Model<'_>, c: &super::facts::Call) -> bool {
    m.call_args(c).iter().any(|a| {
        m.kinds.get(m.text(a.value)) == Some(&VarKind::Optimizer)
            || (a.vkind == ValKind::Call
                && m.call_at(a.value).is_some_and(|k| optimizer_ctor(m, k)))
    })
}

/// An optimizer of `torch.optim` (`torch.optim.AdamW`): not its learning-rate schedulers, nor
/// the weight averaging of `torch.optim.swa_utils` (`SWALR` schedules, `AveragedModel` is a model).
pub(crate) fn torch_optimizer(q: &str) -> bool {
    q.starts_with("torch.optim.") && !q.contains("lr_scheduler") && !q.contains("swa_utils")
}

/// A call that builds an optimizer: one of `torch.optim` or `bitsandbytes.optim` (also one
/// looked up by name, `getattr(optim, name)(...)`), or a constructor named like one
/// (`AdamW(...)` imported from elsewhere, `BertAdam(...)`, `FusedAdam(...)`).
pub(crate) fn optimizer_ctor(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let last = m.last_name(c);
    let q = m.qual(c);
    torch_optimizer(&q)
        || q.starts_with("bitsandbytes.optim.")
        || matches!(
            last,
            "AdamW" | "Adam" | "SGD" | "RMSprop" | "Adagrad" | "Adadelta" | "Lion" | "Adafactor"
        )
        // optimizers of other packages (`adabelief_pytorch`, `torch_optimizer`, `timm.optim`)
        || (c.method.is_none()
            && matches!(
                last,
                "AdaBelief"
                    | "AdaBound"
                    | "AdamP"
                    | "SGDP"
                    | "Ranger"
                    | "Lamb"
                    | "LAMB"
                    | "MADGRAD"
                    | "Adan"
                    | "NovoGrad"
                    | "Prodigy"
                    | "Yogi"
            ))
        || (c.method.is_none() && (last.ends_with("Adam") || last.ends_with("AdamW")))
        || (c.method.is_none() && !last.contains('.') && optimizer_class_name(m, last))
        // a helper named for building one (`optimizer = build_optimizer(model, cfg)`,
        // `utils.get_optimizer(args, params)`), not a method of another object
        || ((c.method.is_none() || c.dotted) && optimizer_builder(last))
        || optimizer_by_name(m, c)
}

/// Is call `c` an optimizer class of `torch.optim` looked up by name, `getattr(optim,
/// best_params["optimizer"])(model.parameters(), lr=lr)`?
fn optimizer_by_name(m: &Model<'_>, c: &super::facts::Call) -> bool {
    let Some(inner) = m.text(c.func).strip_prefix("getattr(") else {
        return false;
    };
    let module = inner.split(',').next().unwrap_or_default().trim();
    let (head, rest) = module.split_once('.').unwrap_or((module, ""));
    let qualified = match m.imports.get(head) {
        Some(q) if rest.is_empty() => q.clone(),
        Some(q) => format!("{q}.{rest}"),
        None => return false,
    };
    qualified == "torch.optim"
}

/// The verbs that start the names of helpers building an object (`build_optimizer`,
/// `create_supervised_trainer`).
const BUILDER_VERBS: &[&str] = &["build", "get", "make", "create", "init", "setup"];

/// Is `name` a helper named for building an optimizer: `build_optimizer`, `get_optim`,
/// `make_optimizer`, `create_optimizer`, `init_optimizer`, `setup_optimizer`?
fn optimizer_builder(name: &str) -> bool {
    // (also a private one, `_make_optimizer(model, config)`)
    let l = name.trim_start_matches('_').to_ascii_lowercase();
    BUILDER_VERBS.iter().any(|verb| {
        l.strip_prefix(verb)
            .map(|rest| rest.trim_start_matches('_'))
            .is_some_and(|rest| matches!(rest, "optimizer" | "optim" | "optimiser"))
    })
}

/// Is `name` a variable that holds an optimizer class: every binding of it is one
/// (`optimizer_class = bnb.optim.AdamW8bit` else `optimizer_class = torch.optim.AdamW`, the
/// Hugging Face example scripts' switch), so `optimizer_class(unet.parameters())` builds one?
fn optimizer_class_name(m: &Model<'_>, name: &str) -> bool {
    m.optimizer_classes
        .get_or_init(|| {
            let binds = |a: &&super::facts::Assign| a.targets.len() == 1 && !a.augmented;
            let class = |a: &super::facts::Assign| {
                let v = m.text(a.value);
                let (head, rest) = v.split_once('.').unwrap_or((v, ""));
                let q = match m.imports.get(head) {
                    Some(q) if !rest.is_empty() => format!("{q}.{rest}"),
                    Some(q) => q.clone(),
                    None => v.to_string(),
                };
                // (`bnb.optim.AdamW8bit` with `bnb` imported where the engine does not see it)
                torch_optimizer(&q)
                    || ((q.starts_with("bitsandbytes.optim.") || q.starts_with("bnb.optim."))
                        && !q.contains("lr_scheduler"))
            };
            // names with one binding to an optimizer class, kept if all their bindings are
            let candidates: std::collections::HashSet<&str> = m
                .assigns
                .iter()
                .filter(binds)
                .filter(|a| class(a))
                .map(|a| m.text(a.left))
                .collect();
            candidates
                .into_iter()
                .filter(|name| {
                    m.assigns
                        .iter()
                        .filter(binds)
                        .filter(|a| m.text(a.left) == *name)
                        .all(class)
                })
                .collect()
        })
        .contains(name)
}

/// Names whose parameters an optimizer is built over (`Adam(student.parameters())`), and the
/// variable holding a trained submodule (`encoder` of `encoder.linear.parameters()`).
pub(crate) fn trained_models<'s>(m: &Model<'s>) -> std::collections::HashSet<&'s str> {
    trained_models_in(m)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// [`trained_models`], each with the function whose code builds its optimizer (`None` at
/// module level): a script's training function and its inference function may both name
/// their model `model`.
pub(crate) fn trained_models_in<'s>(
    m: &Model<'s>,
) -> std::collections::HashSet<(&'s str, Option<u32>)> {
    let mut out = std::collections::HashSet::new();
    // `optimizer = set_optimizer(opt, classifier)`, `create_optimizer(args, model)`: a helper
    // (of another module) that builds the optimizer over the model it is handed (a helper
    // [`optimizer_ctor`] also counts as building one, `build_optimizer(model, cfg)`: it is
    // handed the model, not its parameters)
    for c in m.calls.iter().filter(|c| {
        let last = m.last_name(c);
        last.as_bytes()
            .windows("optimizer".len())
            .any(|w| w.eq_ignore_ascii_case(b"optimizer"))
            && (!optimizer_ctor(m, c) || optimizer_builder(last))
            && !m.defined.contains(last)
    }) {
        for a in m.call_args(c) {
            let name = m.text(a.value);
            if a.vkind == ValKind::Ident && m.var_kind(name) == Some(VarKind::Model) {
                out.insert((name, c.ctx.func));
            }
        }
    }
    for c in m.calls.iter().filter(|c| optimizer_ctor(m, c)) {
        // (`Adam(params=filter(lambda p: p.requires_grad, generator.parameters()), lr=lr)`)
        let Some(a) = m.pos(c, 0).or_else(|| m.kw(c, "params")) else {
            continue;
        };
        for owner in parameter_owners(m, m.text(a.value), c.span.start) {
            if owner.starts_with(|ch: char| ch.is_ascii_digit()) {
                continue;
            }
            out.insert((owner, c.ctx.func));
            // `generator.module.generator.parameters()`, `self.vqgan.encoder.parameters()`: a
            // part of a model trains the model that holds it (`generator`, `self.vqgan`)
            for (i, _) in owner.match_indices('.') {
                let holder = owner.get(..i).unwrap_or_default();
                if !holder.is_empty() && holder != "self" {
                    out.insert((holder, c.ctx.func));
                }
            }
        }
    }
    out
}

/// The models whose parameters an optimizer's first argument holds: `model.parameters()`
/// itself, or through names bound before `at` to values that read them (`param_optimizer =
/// list(model.named_parameters())`, `grouped = [{"params": [p for n, p in param_optimizer
/// ...]}]`, `BertAdam(grouped, ...)`), a few bindings deep.
fn parameter_owners<'s>(m: &Model<'s>, arg: &'s str, at: usize) -> Vec<&'s str> {
    let mut owners = Vec::new();
    let mut texts = vec![arg];
    for _ in 0..4 {
        let mut next = Vec::new();
        for text in texts {
            // (`.parameters()`, `.named_parameters()`, and a model's own selection of them,
            // `vqa.generator_parameters()`)
            for (j, _) in text.match_indices("parameters()") {
                let method_start = text
                    .get(..j)
                    .unwrap_or_default()
                    .trim_end_matches(|ch: char| ch.is_ascii_alphanumeric() || ch == '_')
                    .len();
                let Some(i) = method_start
                    .checked_sub(1)
                    .filter(|&i| text.get(i..=i) == Some("."))
                else {
                    continue;
                };
                let mut head = text.get(..i).unwrap_or_default();
                // `text_encoder.get_input_embeddings().parameters()`: a part the model hands
                // out trains the model
                if let Some(inner) = head.strip_suffix("()")
                    && let Some(dot) = inner.rfind('.')
                    && inner.get(dot + 1..).is_some_and(|m| {
                        m.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                    })
                {
                    head = inner.get(..dot).unwrap_or_default();
                }
                let start = head
                    .rfind(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                    .map_or(0, |j| j + 1);
                if let Some(owner) = head.get(start..).filter(|o| !o.is_empty()) {
                    owners.push(owner);
                }
            }
            // `get_require_updated_params(model, is_fixed)`, `add_weight_decay(net, 1e-4)`: a
            // helper named for the parameters it selects, handed the model
            if let Some(open) = text.find('(')
                && text.ends_with(')')
                && let Some(callee) = text.get(..open)
                && callee
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
            {
                let last = callee
                    .rsplit('.')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                if (last.contains("param") || last.contains("weight_decay"))
                    && !last.ends_with("parameters")
                {
                    owners.extend(
                        crate::analysis::rules::words(text.get(open..).unwrap_or_default())
                            .filter(|w| m.var_kind(w) == Some(VarKind::Model)),
                    );
                }
            }
            // the latest binding of each word, and the augmentations after it (`params +=
            // list(encoder.parameters())` adds to what `params = ...` held)
            for w in crate::analysis::rules::words(text) {
                let bindings =
                    m.assigns.iter().rev().filter(|a| {
                        a.span.end <= at && a.targets.len() == 1 && m.text(a.left) == w
                    });
                for a in bindings {
                    next.push(shipped_branch(m, a));
                    if !a.augmented {
                        break;
                    }
                }
            }
        }
        if next.is_empty() {
            break;
        }
        texts = next;
    }
    owners
}

/// The text of what assignment `a` binds as shipped: of a conditional expression whose test
/// the engine can read, the branch taken (`params = chain(unet.parameters(),
/// text_encoder.parameters()) if args.train_text_encoder else unet.parameters()` with the flag
/// off: `unet.parameters()`); else the whole value.
fn shipped_branch<'s>(m: &Model<'s>, a: &super::facts::Assign) -> &'s str {
    let mut n = m.node(a.value);
    while let Some(p) = n.filter(|p| p.node_kind() == "parenthesized_expression") {
        n = p.named_child(0);
    }
    n.and_then(|n| taken_branch(m, n, a.span.start, a.ctx.func))
        .map_or_else(|| m.text(a.value), |b| m.node_text(b))
}

/// Hugging Face's training configurations: `transformers`' `TrainingArguments` and TRL's
/// subclasses of it, whose Trainers run the same loop (`RewardConfig` for `RewardTrainer`,
/// `DPOConfig`, ...).
pub(crate) const HF_CONFIGS: &[&str] = &[
    "TrainingArguments",
    "Seq2SeqTrainingArguments",
    "SFTConfig",
    "RewardConfig",
    "DPOConfig",
    "ORPOConfig",
    "KTOConfig",
    "CPOConfig",
    "GRPOConfig",
];

/// A Hugging Face training configuration ([`HF_CONFIGS`]: `TrainingArguments`,
/// `Seq2SeqTrainingArguments`, TRL's `SFTConfig`, `RewardConfig`, ...) from `transformers` /
/// `trl` (or a star import), not a project's own class of the same name (`from .trainer_utils
/// import TrainingArguments`).
pub(crate) fn hf_config(m: &Model<'_>, c: &super::facts::Call) -> bool {
    const PACKAGES: &[&str] = &["transformers", "trl", "optimum"];
    if !HF_CONFIGS.contains(&m.last_name(c)) {
        return false;
    }
    let head = m.text(c.func).split('.').next().unwrap_or_default();
    m.imports.get(head).is_none_or(|q| {
        PACKAGES
            .iter()
            .any(|p| q == p || q.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
    })
}

/// A loop over files, paths, lines or rows: the iterated expression calls `glob` / `listdir` /
/// `iterdir` / `iterrows`..., or names a collection like `files`, `image_paths`, `rows`.
pub(crate) fn is_record_loop(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    const READERS: &[&str] = &["iterrows", "itertuples", "readlines"];
    const NOUNS: &[&str] = &[
        "files",
        "paths",
        "images",
        "records",
        "rows",
        "urls",
        "filenames",
        "fnames",
        "docs",
        "documents",
        "samples",
    ];
    listing_loop(m, l, DIRECTORY_LISTINGS, NOUNS)
        || listing_loop(m, l, READERS, &[])
        || path_column(m, l)
}

/// Calls that list a directory's entries (`librosa.util.find_files`: the audio files under a
/// folder; imutils' `paths.list_images(d)`: the images under one).
const DIRECTORY_LISTINGS: &[&str] = &[
    "glob",
    "rglob",
    "iglob",
    "listdir",
    "iterdir",
    "scandir",
    "walk",
    "find_files",
    "list_images",
];

/// A loop over a table column of paths: `for fl in train_df.train_path.values:`,
/// `for p in df["image_path"].tolist():`.
fn path_column(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    let Some(it) = l.iter else { return false };
    let text = m.text(it).to_ascii_lowercase();
    let column =
        text.ends_with(".values") || text.ends_with(".tolist()") || text.ends_with(".unique()");
    column
        && text
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .any(|w| {
                matches!(
                    w,
                    "path" | "file" | "filename" | "filepath" | "image" | "img"
                ) || ["_path", "_file", "_filename", "_img"]
                    .iter()
                    .any(|s| w.ends_with(s))
            })
}

/// A loop over the entries of a directory: the iterated expression (or the latest binding of
/// the name it iterates) calls `glob` / `listdir` / `iterdir` / `scandir` / `os.walk`.
pub(crate) fn lists_directory(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    listing_loop(m, l, DIRECTORY_LISTINGS, &[])
}

/// A loop over `os.walk`: the iterated expression, or the latest binding of the name it
/// iterates (`g = os.walk(root)` ... `for path, dirs, files in g:`), walks directories.
pub(crate) fn walks_directories(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    listing_loop(m, l, &["walk"], &[])
}

/// Does the loop iterate a listing call of `calls`, a collection named by one of `nouns`, or a
/// name whose latest binding before the loop calls one of `calls`?
fn listing_loop(m: &Model<'_>, l: &super::facts::Loop, calls: &[&str], nouns: &[&str]) -> bool {
    let Some(it) = l.iter else { return false };
    // the words of the code, not of its strings and comments (`for name in ["read",
    // "readlines"]` does not read lines)
    let words = |t: &'_ str| -> Vec<String> {
        code_only(t)
            .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    // `walk` lists a directory as `os.walk`, not as `ast.walk(tree)` or `message.walk()`
    let listing_in = |t: &str| {
        words(t)
            .iter()
            .any(|w| w.as_str() != "walk" && calls.contains(&w.as_str()))
            || os_walk(m, t)
    };
    let it_text = m.text(it);
    // `for root, dirs, files in os.walk(d):` ... `for f in files:`: a name an enclosing loop
    // over `os.walk` binds lists a directory's entries
    if calls.contains(&"walk") && m.node(it).is_some_and(|n| n.node_kind() == "identifier") {
        let mut p = l.parent;
        for _ in 0..64 {
            let Some(outer) = p.and_then(|i| m.loops.get(i as usize)) else {
                break;
            };
            if outer.targets.iter().any(|t| m.text(*t) == it_text) {
                return walks_directories(m, outer);
            }
            p = outer.parent;
        }
    }
    if listing_in(it_text)
        || words(it_text).iter().any(|w| {
            nouns.iter().any(|k| {
                w == k
                    || (w.len() > k.len() + 1
                        && (w.ends_with(k) && w.as_bytes()[w.len() - k.len() - 1] == b'_'
                            || w.starts_with(k) && w.as_bytes()[k.len()] == b'_'))
            })
        })
    {
        return true;
    }
    // `wavs = sorted(glob.glob(...))` ... `for wav in tqdm(wavs):`: the name's latest binding
    // before the loop, in the same function, lists a directory — or keeps some entries of a
    // name bound so (`captures = [f for f in dir_list if "captures" in f]`)
    // (in a function that never binds the name, it is the module's: `dirs = os.listdir(path)`
    // at module level, read by `def resize(): for item in dirs:`)
    let latest = |name: &str, before: usize| {
        m.assigns
            .iter()
            .rfind(|a| {
                a.span.end <= before
                    && a.ctx.func == l.ctx.func
                    && a.targets.len() == 1
                    && m.text(a.left) == name
            })
            .or_else(|| {
                let f = l.ctx.func.and_then(|f| m.funcs.get(f as usize))?;
                let local = f.params.iter().any(|(p, _)| m.text(*p) == name)
                    || m.assigns.iter().any(|a| {
                        a.ctx.func == l.ctx.func && a.targets.iter().any(|t| m.text(*t) == name)
                    });
                let mut module = m.assigns.iter().filter(|a| {
                    a.ctx.func.is_none()
                        && a.ctx.class.is_none()
                        && a.targets.iter().any(|t| m.text(*t) == name)
                });
                let only = module.next()?;
                (!local && module.next().is_none() && only.targets.len() == 1).then_some(only)
            })
    };
    code_only(it_text)
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .filter(|w| !w.is_empty())
        .any(|name| {
            latest(name, l.span.start).is_some_and(|a| {
                listing_in(m.text(a.value))
                    || filtered_from(m, a.value).is_some_and(|src| {
                        latest(src, a.span.start).is_some_and(|b| listing_in(m.text(b.value)))
                    })
            })
        })
}

/// The name a list comprehension draws its entries from, when value `v` is one over a plain
/// name (`[f for f in dir_list if f.endswith(".json")]`), also sorted (`sorted(f for f in
/// names if ...)`).
fn filtered_from<'s>(m: &Model<'s>, v: Span) -> Option<&'s str> {
    let mut n = m.node(v)?;
    if n.node_kind() == "call"
        && super::facts::field::get(n, super::facts::field::FUNCTION)
            .is_some_and(|f| matches!(m.node_text(f), "sorted" | "list"))
    {
        n = super::facts::field::get(n, super::facts::field::ARGUMENTS)?.named_child(0)?;
    }
    if !matches!(n.node_kind(), "list_comprehension" | "generator_expression") {
        return None;
    }
    let mut c = n.walk();
    let clause = n
        .named_children(&mut c)
        .find(|ch| ch.node_kind() == "for_in_clause")?;
    let src = clause.child_by_field_name("right")?;
    (src.node_kind() == "identifier").then(|| m.text(Span::of(src)))
}

/// `text` calls `os.walk`: through the module (`os.walk(d)`, `import os as o` ... `o.walk(d)`)
/// or by name (`from os import walk`).
fn os_walk(m: &Model<'_>, text: &str) -> bool {
    let code = code_only(text);
    m.imports.iter().any(|(name, q)| {
        (q == "os" && code.contains(&format!("{name}.walk(")))
            || (q == "os.walk"
                && code.match_indices(&format!("{name}(")).any(|(i, _)| {
                    !code[..i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
                }))
    })
}

/// `text` with the contents of its string literals and comments blanked (quotes kept).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' | '\'' => {
                out.push(ch);
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == ch {
                        out.push(ch);
                        break;
                    }
                }
            }
            _ => out.push(ch),
        }
    }
    out
}

fn loaders(m: &mut Model<'_>) {
    let mut out = Vec::new();
    for (i, c) in m.calls.iter().enumerate() {
        if !is_dataloader(m, c) {
            continue;
        }
        let var = m
            .assigns
            .iter()
            .find(|a| a.rhs_call == Some(i as u32) && a.targets.len() == 1)
            .map(|a| m.text(a.left).to_string());
        out.push(LoaderFacts {
            line: c.line,
            var,
            batch_size: loader_arg(m, c, "batch_size", 1),
            num_workers: loader_arg(m, c, "num_workers", 5),
            pin_memory: loader_arg(m, c, "pin_memory", 7),
            persistent_workers: loader_arg(m, c, "persistent_workers", usize::MAX),
            prefetch_factor: loader_arg(m, c, "prefetch_factor", usize::MAX),
        });
    }
    m.facts.loaders = out;
}

/// Is this a `torch.utils.data.DataLoader(...)` call (by any alias)?
pub(crate) fn is_dataloader(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if !c.dotted {
        return false;
    }
    let q = m.qual(c);
    q == "torch.utils.data.DataLoader"
        || q == "torch.utils.data.dataloader.DataLoader"
        // (a bare one not from a star import of the repository's own loader module, `from
        // dataloader import *`: that module's class)
        || (q == "DataLoader" && !m.imports.contains_key("DataLoader") && !m.loader_star_import)
        // `data.DataLoader(...)` with `data` from a star import (`from src.imports import *`)
        || (q == "data.DataLoader"
            && !m.imports.contains_key("data")
            && m.src.contains("import *"))
        // (torch's own modules and PyTorch Geometric's subclass; not a wrapper library that
        // only shares the prefix: `torchvision_sunner.data.DataLoader`)
        || (q.ends_with(".DataLoader")
            && (q.starts_with("torch.") || q.starts_with("torch_geometric.")))
        // (PyTorch Geometric's `DenseDataLoader`, a DataLoader with its own collate)
        || (q.ends_with(".DenseDataLoader") && q.starts_with("torch_geometric."))
        // a subclass with torch's arguments and defaults (`num_workers=0`, no pinning)
        || q == "monai.data.DataLoader"
}

/// A DataLoader argument by keyword or position, resolved; `**kwargs` dicts are looked into.
/// A switch (`pin_memory`, `persistent_workers`) given as an integer is its truth value
/// (`{'num_workers': 1, 'pin_memory': 1}`: pinned).
pub(crate) fn loader_arg(m: &Model<'_>, c: &super::facts::Call, name: &str, pos: usize) -> Val {
    match loader_arg_as_written(m, c, name, pos) {
        Val::Int(i) if matches!(name, "pin_memory" | "persistent_workers") => Val::Bool(i != 0),
        v => v,
    }
}

/// [`loader_arg`] before a switch's integer is read as its truth value.
fn loader_arg_as_written(m: &Model<'_>, c: &super::facts::Call, name: &str, pos: usize) -> Val {
    let given = m
        .kw(c, name)
        .or_else(|| m.pos(c, pos).filter(|_| pos != usize::MAX));
    if let Some(a) = given {
        let v = m.resolve(&a, c.span.start, c.ctx.func);
        // a switch given as a test of the device (`pin_memory=torch.cuda.is_available()`,
        // `pin_memory=gpu` with `gpu = torch.cuda.is_available()`): its value on the file's
        // device
        if v == Val::Unknown
            && matches!(name, "pin_memory" | "persistent_workers")
            && let Some(b) = m
                .node(a.value)
                .and_then(|n| super::as_shipped::condition(m, n, c.span.start, c.ctx.func, 0))
                .or_else(|| switch_handed_in(m, &a, c))
        {
            return Val::Bool(b);
        }
        return v;
    }
    if c.star {
        return Val::Unknown;
    }
    if let Some(s) = c.splat {
        return splat_value(m, s, name, c);
    }
    Val::Absent
}

/// A loader switch given as a parameter of the loader's function (`def make_dataloaders(pin_memory):
/// ... DataLoader(..., pin_memory=pin_memory)`) that the file's one plain call of that function
/// fills with a test of the device (`make_dataloaders(pin_memory)` with `pin_memory =
/// (device.type == "cuda")`): the test's value as shipped, read where the call is made.
// Ex) pin_memory = (device.type == "cuda"); train_loader, val_loader = make_dataloaders(pin_memory)
fn switch_handed_in(m: &Model<'_>, a: &super::facts::Arg, c: &super::facts::Call) -> Option<bool> {
    if a.vkind != ValKind::Ident {
        return None;
    }
    let (given, caller) = handed_in(m, m.text(a.value), c.ctx.func)?;
    super::as_shipped::condition(
        m,
        m.node(given.value)?,
        caller.span.start,
        caller.ctx.func,
        0,
    )
}

/// What the file's one plain call of function `func` (in a branch that runs as shipped) passes
/// for its parameter `name`, with that call: `get_loaders(ds, 64, cpu_count() // 2)` for
/// `num_workers` of `def get_loaders(ds, batch_size, num_workers)`. `None` when `name` is no
/// parameter of `func`, the function rebinds it, or the file calls it in several places (or
/// none, or as a method).
pub(crate) fn handed_in<'m>(
    m: &'m Model<'_>,
    name: &str,
    func: Option<u32>,
) -> Option<(super::facts::Arg, &'m super::facts::Call)> {
    let f = m.funcs.get(func? as usize)?;
    if f.class.is_some() {
        return None;
    }
    let p = f.params.iter().position(|(n, _)| m.text(*n) == name)?;
    // (rebound in the function: not the value handed in)
    if m.assigns
        .iter()
        .any(|x| x.ctx.func == func && x.targets.iter().any(|t| m.text(*t) == name))
    {
        return None;
    }
    let fname = m.text(f.name);
    let mut callers = m
        .calls
        .iter()
        .filter(|x| x.method.is_none() && m.text(x.func) == fname && !m.dead(&x.ctx));
    let caller = callers.next()?;
    if callers.next().is_some() {
        return None;
    }
    let given = m
        .kw(caller, name)
        .or_else(|| m.pos(caller, p).filter(|_| p < f.positional))?;
    Some((given, caller))
}

/// Whether a DataLoader's boolean switch (`pin_memory`, `persistent_workers`) is off as the
/// call writes it: not given (nor in a `**kwargs` dict it unpacks), or given as the literal
/// `False` (by keyword or at position `pos`). A value from a variable or an option
/// (`pin_memory=args.pin_memory`) is the user's switch and is not read as off.
pub(crate) fn switch_off_as_written(
    m: &Model<'_>,
    c: &super::facts::Call,
    name: &str,
    pos: usize,
) -> bool {
    match loader_arg(m, c, name, pos) {
        Val::Absent => true,
        Val::Bool(false) => {
            written_false(m, c, name, pos).is_some() || splat_writes_false(m, c, name)
        }
        _ => false,
    }
}

/// Does the `**kwargs` dict call `c` unpacks write `name` as the literal `False` where the file
/// builds it (`loader_args = dict(batch_size=b, num_workers=8, pin_memory=False)`)?
fn splat_writes_false(m: &Model<'_>, c: &super::facts::Call, name: &str) -> bool {
    let Some(dict) = c.splat.map(|s| m.text(s)) else {
        return false;
    };
    if m.kw(c, name).is_some() {
        return false;
    }
    m.assigns
        .iter()
        .rfind(|a| {
            a.span.end <= c.span.start
                && a.ctx.func == c.ctx.func
                && a.targets.len() == 1
                && m.text(a.left) == dict
        })
        .is_some_and(|a| {
            let v: String = m.text(a.value).split_whitespace().collect();
            [
                format!("{name}=False"),
                format!("'{name}':False"),
                format!("\"{name}\":False"),
            ]
            .iter()
            .any(|w| v.contains(w.as_str()))
        })
}

/// The argument `name` (by keyword, or at position `pos`) where the call writes it as the
/// literal `False`.
pub(crate) fn written_false(
    m: &Model<'_>,
    c: &super::facts::Call,
    name: &str,
    pos: usize,
) -> Option<super::facts::Arg> {
    m.kw(c, name)
        .or_else(|| m.pos(c, pos))
        .filter(|a| m.text(a.value) == "False")
}

/// The least number of worker processes a DataLoader starts as shipped, when the engine can
/// tell: `num_workers` resolved, or a floor of its expression
/// ([`super::as_shipped::at_least`]: `min(os.cpu_count(), 8)` starts at least one).
pub(crate) fn workers_at_least(m: &Model<'_>, c: &super::facts::Call) -> Option<i64> {
    match loader_arg(m, c, "num_workers", 5) {
        Val::Unknown => match m.kw(c, "num_workers").or_else(|| m.pos(c, 5)) {
            Some(a) => {
                super::as_shipped::at_least(m, m.node(a.value)?, c.span.start, c.ctx.func, 0)
            }
            // `DataLoader(ds, **loader_args)` with `loader_args = dict(num_workers=os.cpu_count())`
            None if !c.star => super::as_shipped::dict_key_at_least(
                m,
                c.splat?,
                "num_workers",
                c.span.start,
                c.ctx.func,
            ),
            None => None,
        },
        v => v.int(),
    }
}

/// Looks `name` up in a `**kwargs` dict as it stands at the call, on the file's device.
fn splat_value(m: &Model<'_>, s: Span, name: &str, at: &super::facts::Call) -> Val {
    super::as_shipped::dict_key(m, s, name, at.span.start, at.ctx.func, 0)
}

/// Which switches are off as shipped: a branch whose test resolves to the opposite of what it
/// needs never runs with the defaults the script ships with (`if args.fp16:` with a
/// `store_true` flag, `if profile:` with `profile = False`, `if save_txt:` with a parameter
/// defaulting to `False`, the `else` of `if use_cuda:` with `use_cuda=True`).
///
/// Settled in two rounds: a module-level flag set in the branches of a switch (`if args.mode
/// == "cln": flag_advtrain = False elif args.mode == "adv": flag_advtrain = True`) holds what
/// the branches the first round left running give it. The rest of a block after `exit()`,
/// `return` or `raise` is dead from the walk on and stays so.
fn guards(m: &mut Model<'_>) {
    let values: Vec<Option<bool>> = m
        .guards
        .iter()
        .map(|g| (!g.unreachable).then(|| switch_value(m, g)).flatten())
        .collect();
    for (g, v) in m.guards.iter_mut().zip(&values) {
        g.dead = g.unreachable || v.is_some_and(|v| v != g.when);
    }
    // the second round asks again only of the switches the first left undecided, when the
    // first found a branch that never runs
    if !m.guards.iter().any(|g| g.dead) {
        return;
    }
    let again: Vec<(usize, bool)> = m
        .guards
        .iter()
        .zip(&values)
        .enumerate()
        .filter(|(_, (g, v))| v.is_none() && !g.unreachable)
        .filter_map(|(i, (g, _))| switch_value(m, g).map(|v| (i, v != g.when)))
        .collect();
    for (i, d) in again {
        if let Some(g) = m.guards.get_mut(i) {
            g.dead = d;
        }
    }
}

/// Once the variables' kinds are known, a branch that runs only for something other than a
/// model never runs as shipped: the `else:` of `if isinstance(net, torch.nn.Module):` (the
/// evaluation helper of *Dive into Deep Learning*) where `net` is the file's model.
fn module_guards(m: &mut Model<'_>) {
    settle_guards(m, |t| t.contains("isinstance("));
}

/// Once the file's device is decided, a branch that runs only off it never runs as shipped:
/// the CPU fallback under `else:` of `if device == "cuda":` (with `device = "cuda" if
/// torch.cuda.is_available() else "cpu"`) or of `if torch.cuda.is_available():` on a CUDA file.
/// (The switches settled before the device was known left these tests undecided.)
fn device_guards(m: &mut Model<'_>) {
    if m.facts.device == Device::Unknown {
        return;
    }
    settle_guards(m, |t| {
        ["cuda", "cpu", "mps", "is_available"]
            .iter()
            .any(|w| t.contains(w))
    });
}

/// Marks dead each live guard whose condition's text `pick` selects and whose condition
/// [`super::as_shipped::condition`] now settles against the branch (the passes that run once
/// more is known: the device, the variables' kinds).
fn settle_guards(m: &mut Model<'_>, pick: impl Fn(&str) -> bool) {
    let off: Vec<usize> = m
        .guards
        .iter()
        .enumerate()
        .filter(|(_, g)| !g.dead && pick(m.text(g.cond)))
        .filter_map(|(i, g)| {
            let v = super::as_shipped::condition(m, m.node(g.cond)?, g.at, g.func, 0)?;
            (v != g.when).then_some(i)
        })
        .collect();
    for i in off {
        if let Some(g) = m.guards.get_mut(i) {
            g.dead = true;
        }
    }
}

/// The truth value of a resolved constant.
fn truth(v: &Val) -> Option<bool> {
    match v {
        Val::Bool(b) => Some(*b),
        Val::None => Some(false),
        Val::Int(n) => Some(*n != 0),
        Val::Str(s) => Some(!s.is_empty()),
        Val::Absent | Val::Unknown => None,
    }
}

/// The truth value a switch has as shipped, when the engine can tell.
fn switch_value(m: &Model<'_>, g: &Guard) -> Option<bool> {
    let node = m.node(g.cond)?;
    let name = m.text(g.cond);
    match node.node_kind() {
        "true" => Some(true),
        "false" => Some(false),
        // `args.x`: the argparse default (or a class field's), unless the file assigns the
        // attribute something else
        "attribute" => {
            // `args.cuda = args.gpu is not None` once, unconditionally, before the switch: the
            // value of that condition as shipped
            let assigned: Vec<&super::facts::Assign> = m
                .assigns
                .iter()
                .filter(|a| a.targets.iter().any(|t| m.text(*t) == name))
                .collect();
            if let [a] = assigned.as_slice()
                && !a.augmented
                && a.targets.len() == 1
                && a.span.end <= g.at
                && a.ctx.guard.is_none()
                && a.ctx.loop_.is_none()
                && (a.ctx.func.is_none() || a.ctx.func == g.func)
            {
                return super::as_shipped::condition(
                    m,
                    m.node(a.value)?,
                    a.span.start,
                    a.ctx.func,
                    0,
                );
            }
            let Some(v) = truth(&m.resolve_expr(g.cond, g.at, g.func)) else {
                // `if options.load: test(options) else: train(options)` with `--load` declared
                // without a default: None as shipped (not an option the script demands, `if
                // not args.image and not args.image_dir: parser.error(...)`: one of them is
                // given, the file cannot tell which)
                if assigned.is_empty() && (unset_option(m, name) || empty_default(m, name)) {
                    return Some(false);
                }
                return mode_switch_off(m, name, !assigned.is_empty());
            };
            let agrees = m
                .assigns
                .iter()
                .filter(|a| a.targets.iter().any(|t| m.text(*t) == name))
                .all(|a| {
                    !a.augmented
                        && a.targets.len() == 1
                        && truth(&m.resolve_expr(a.value, a.span.start, a.ctx.func)) == Some(v)
                });
            agrees.then_some(v)
        }
        "identifier" => match g.func.and_then(|f| param_index(m, f, name).map(|p| (f, p))) {
            Some((f, p)) => param_value(m, f, p),
            None if g.func.is_some_and(|f| binds_in(m, Some(f), name)) => local_switch(m, g, name),
            // (`if VERBOSE:` with `VERBOSE` from another module, `from config import *`: a
            // debugging switch, off unless asked for)
            None => module_constant(m, name).or_else(|| {
                let debug_switch =
                    matches!(name.to_ascii_lowercase().as_str(), "verbose" | "debug");
                let bound = || {
                    m.assigns
                        .iter()
                        .any(|a| a.targets.iter().any(|t| m.text(*t) == name))
                        || m.loops
                            .iter()
                            .any(|l| l.targets.iter().any(|t| m.text(*t) == name))
                        || m.defined.contains(name)
                };
                (debug_switch && !bound())
                    .then(|| mode_switch_off(m, name, false))
                    .flatten()
            }),
        },
        // `config["enable_tensorboard"]` of a dict the file builds from the argparse namespace
        // (`args['--cuda']` of a docopt usage text: the flag's default there)
        "subscript" => {
            super::as_shipped::docopt_flag(m, node).or_else(|| truth(&args_dict_value(m, node)?))
        }
        // `elif torch.backends.mps.is_available():` (PyTorch's ImageNet example): Apple's
        // GPU backend is never there on the Linux GPU runner the file is audited for
        "call" if super::facts::mps_available_call(node, m.src) => Some(false),
        // `opt.device.startswith("cuda")` with `--device` defaulting to `"cpu"`
        "call" if super::facts::affix_test(node, m.src).is_some() => {
            super::as_shipped::condition(m, node, g.at, g.func, 0)
        }
        // `args.inference or (args.render_validation and epoch % k == 0)`: false when each side
        // is; a side an `and` joins is false when one of its switches is
        "boolean_operator" | "parenthesized_expression" | "not_operator" => {
            let side = |n: Node<'_>| {
                switch_value(
                    m,
                    &Guard {
                        cond: super::facts::Span::of(n),
                        ..*g
                    },
                )
            };
            match node.node_kind() {
                "parenthesized_expression" => side(node.named_child(0)?),
                "not_operator" => side(node.child_by_field_name("argument")?).map(|b| !b),
                _ => {
                    use super::facts::field;
                    let l = side(field::get(node, field::LEFT)?);
                    let r = side(field::get(node, field::RIGHT)?);
                    super::as_shipped::truth_op(
                        m.node_text(field::get(node, field::OPERATOR)?),
                        l,
                        r,
                    )
                }
            }
        }
        // `args.mode == "train"`, `"info" in args.data`: both sides known as shipped, and the
        // file never reassigns the switch it compares
        "comparison_operator" => {
            // (`args.gpu = gpu` with `gpu` the `args.gpu` its caller passes: the same value)
            let mut c = node.walk();
            let reassigned = node.named_children(&mut c).any(|side| {
                let t = m.node_text(side);
                let shipped = || m.resolve_expr(super::facts::Span::of(side), g.at, g.func);
                side.node_kind() == "attribute"
                    && m.assigns
                        .iter()
                        .filter(|a| a.targets.iter().any(|x| m.text(*x) == t))
                        .any(|a| {
                            a.augmented
                                || a.targets.len() != 1
                                || matches!(shipped(), Val::Unknown)
                                || m.resolve_expr(a.value, a.span.start, a.ctx.func) != shipped()
                        })
            });
            if reassigned {
                return None;
            }
            super::as_shipped::condition(m, node, g.at, g.func, 0)
        }
        _ => None,
    }
}

/// `config["optimizer"]` of a dict the file builds from the argparse namespace (`config =
/// vars(args)`, or copied key by key from `vars(args)`): the option's default, unless the file
/// assigns that entry. `None` when `node` is no such entry.
// Ex) for arg in vars(args): training_config[arg] = getattr(args, arg)
pub(crate) fn args_dict_value(m: &Model<'_>, node: Node<'_>) -> Option<Val> {
    if node.node_kind() != "subscript" {
        return None;
    }
    let key = string_value(node.named_child(1)?, m.src)?;
    let name = m.node_text(node);
    let from_args = m
        .calls
        .iter()
        .any(|c| c.method.is_none() && m.text(c.func) == "vars");
    let assigned = m
        .assigns
        .iter()
        .any(|a| a.targets.iter().any(|t| m.text(*t) == name));
    if !from_args || assigned {
        return None;
    }
    let (vs, vk) = m.argparse.get(key.as_ref())?.as_ref()?;
    Some(m.resolve_span(*vs, *vk, vs.start, None, 0))
}

/// The value of expression `n` as shipped ([`Model::resolve_expr`]), else, for an entry of a
/// dict copied from the options, the option's default ([`args_dict_value`]).
pub(crate) fn resolve_with_options(
    m: &Model<'_>,
    n: Node<'_>,
    at: usize,
    func: Option<u32>,
) -> Val {
    match m.resolve_expr(Span::of(n), at, func) {
        Val::Unknown => args_dict_value(m, n).unwrap_or(Val::Unknown),
        v => v,
    }
}

/// Is `name` (`args.train`) an option whose default is an empty list, tuple or dict
/// (`add_argument("--train", nargs='+', default=[])`), and that the file never assigns: falsy
/// as shipped?
pub(crate) fn empty_default(m: &Model<'_>, name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, field)| {
        m.argparse
            .get(field)
            .and_then(|d| d.as_ref())
            .and_then(|(s, _)| m.node(*s))
            .is_some_and(|n| {
                matches!(n.node_kind(), "list" | "tuple" | "dictionary")
                    && n.named_child_count() == 0
            })
    }) && !m
        .assigns
        .iter()
        .any(|a| a.targets.iter().any(|t| m.text(*t) == name))
}

/// Is `name` (`args.load`) an option declared without a default that the script does not demand
/// (no `not args.load` / `args.load is None` test that could end in `parser.error(...)`): None
/// as shipped?
pub(crate) fn unset_option(m: &Model<'_>, name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, field)| m.argparse_unset.contains(field))
        && !tested_for_absence(m.src, name)
}

/// Does the source test option `name` (`args.image`) for absence: `not args.image`,
/// `args.image is None`?
fn tested_for_absence(src: &str, name: &str) -> bool {
    let word_end = |rest: &str| {
        !rest
            .chars()
            .next()
            .is_some_and(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.')
    };
    src.match_indices(name).any(|(i, _)| {
        let rest = src.get(i + name.len()..).unwrap_or("");
        word_end(rest)
            && (src.get(..i).is_some_and(|b| b.ends_with("not "))
                || rest.trim_start().starts_with("is None"))
    })
}

/// A mode switch of options the file does not declare (`opt.test`, `args.evaluate`, `cfg.debug`,
/// `in_arg.gpu` with the options parsed in another module, `from opt import Options`), never
/// assigned here:
/// off as shipped, as such command-line flags are (`store_true`), so the branch it opens runs
/// only on request.
fn mode_switch_off(m: &Model<'_>, name: &str, assigned: bool) -> Option<bool> {
    let field = name.rsplit('.').next()?;
    let lower = field.to_ascii_lowercase();
    let mode = matches!(
        lower.as_str(),
        // (not `evaluate`, which also names validation during training: `if args.evaluate
        // and step % val_freq == 0:`)
        "test"
            | "eval"
            | "test_only"
            | "eval_only"
            | "evaluate_only"
            | "predict"
            | "demo"
            | "debug"
            | "verbose"
            | "visualize"
            // (`--gpu` parsed in another module: an opt-in flag, `action='store_true'`, as in
            // `torch.device("cuda" if args.gpu and torch.cuda.is_available() else "cpu")`)
            | "gpu"
    ) || (
        // (`args.cuda` of a command line parsed in another module, `parser =
        // file_parser.get_parser()`: the opt-in `--cuda` flag of PyTorch's examples; not a
        // configuration object's field, `config.cuda`, which may well be on)
        lower == "cuda"
            && matches!(
                name.rsplit_once('.').map(|(recv, _)| recv),
                Some("args" | "opt" | "opts" | "options" | "flags" | "FLAGS")
            )
    );
    (mode && !assigned && !m.argparse.contains_key(field)).then_some(false)
}

/// [`mode_switch_off`] for a switch the file assigns nowhere, read outside an `if` (`"cuda" if
/// in_arg.gpu and torch.cuda.is_available() else "cpu"`).
pub(crate) fn unassigned_mode_switch(m: &Model<'_>, name: &str) -> Option<bool> {
    let assigned = m
        .assigns
        .iter()
        .any(|a| a.targets.iter().any(|t| m.text(*t) == name));
    mode_switch_off(m, name, assigned)
}

/// The index of parameter `name` of function `f`.
fn param_index(m: &Model<'_>, f: u32, name: &str) -> Option<usize> {
    m.funcs
        .get(f as usize)?
        .params
        .iter()
        .position(|(n, _)| m.text(*n) == name)
}

/// A local switch the test's function binds exactly once, unconditionally, outside loops and
/// before the test (`use_semihard = args.use_semihard` ... `if use_semihard:`): the value of
/// its expression as shipped. `None` for any other local.
fn local_switch(m: &Model<'_>, g: &Guard, name: &str) -> Option<bool> {
    let f = g.func?;
    let mut binds = assigns_to(m, Some(f), name);
    let (Some(a), None) = (binds.next(), binds.next()) else {
        return None;
    };
    let loop_target = loop_binds(m, Some(f), name);
    // (bound in the function's own body, not in a branch, a `try` or a `with`)
    if loop_target
        || a.augmented
        || a.targets.len() != 1
        || a.ctx.loop_.is_some()
        || a.span.end > g.at
        || !m.unconditional(a.span)
    {
        return None;
    }
    super::as_shipped::condition(m, m.node(a.value)?, a.span.start, a.ctx.func, 0)
}

/// Does code directly in function `f` (or at module level, for `None`) bind `name`: an
/// assignment or a loop target?
fn binds_in(m: &Model<'_>, f: Option<u32>, name: &str) -> bool {
    assigns_to(m, f, name).next().is_some() || loop_binds(m, f, name)
}

/// The assignments directly in function `f` (or at module level, for `None`) that bind `name`.
fn assigns_to<'a>(
    m: &'a Model<'_>,
    f: Option<u32>,
    name: &'a str,
) -> impl Iterator<Item = &'a super::facts::Assign> {
    m.assigns.iter().filter(move |a| {
        a.ctx.func == f
            && (f.is_some() || a.ctx.class.is_none())
            && (a.targets.iter().any(|t| m.text(*t) == name) || m.text(a.left) == name)
    })
}

/// Is `name` the target of a loop directly in function `f` (or at module level)?
fn loop_binds(m: &Model<'_>, f: Option<u32>, name: &str) -> bool {
    m.loops
        .iter()
        .any(|l| l.ctx.func == f && l.targets.iter().any(|t| m.text(*t) == name))
}

/// The truth value of parameter `p` of function `f` as shipped: the function never rebinds
/// it, and every call in the file leaves it at its default or passes a value of the same
/// truth (`run(**vars(opt))` passes the argparse default of the same name).
fn param_value(m: &Model<'_>, f: u32, p: usize) -> Option<bool> {
    param_value_at(m, f, p, 0)
}

/// [`param_value`], `depth` callers up: an argument that is itself a parameter of the calling
/// function (`device = build_device(use_gpu)` in `def train(..., use_gpu=False)`) holds what
/// that parameter holds.
fn param_value_at(m: &Model<'_>, f: u32, p: usize, depth: u8) -> Option<bool> {
    let func = m.funcs.get(f as usize)?;
    let (pname, default) = func.params.get(p)?;
    let pname = m.text(*pname);
    if binds_in(m, Some(f), pname) {
        return None;
    }
    // (a click command's parameter: its option's default, `@click.option("--cuda",
    // default=False)`)
    if let Some(v) = m.click_default(func, pname, 0) {
        return truth(&v);
    }
    let default = default.and_then(|(s, k)| {
        truth(&m.resolve(
            &Arg {
                name: None,
                value: s,
                vkind: k,
            },
            s.start,
            None,
        ))
    });
    let fname = m.text(func.name);
    // a method called as `obj.f(...)` does not pass `self` by position
    let skip_self = func.class.is_some()
        && func
            .params
            .first()
            .is_some_and(|(n, _)| matches!(m.text(*n), "self" | "cls"));
    let mut values = Vec::new();
    // a function is called plainly (`run(...)`), a method through an object (`self.f(...)`):
    // other calls of the name are other functions (`subprocess.run`)
    let method = func.class.is_some();
    for c in m
        .calls
        .iter()
        .filter(|c| m.last_name(c) == fname && c.method.is_some() == method)
    {
        let positional: Vec<&Arg> = m.call_args(c).iter().filter(|a| a.name.is_none()).collect();
        let at = p.checked_sub(usize::from(skip_self));
        // (a name the caller was handed: its own parameter's value, a few callers up)
        let passed = |a: &Arg| {
            truth(&m.resolve(a, c.span.start, c.ctx.func)).or_else(|| {
                let g = c.ctx.func.filter(|g| *g != f && depth < 3)?;
                let name = m.text(a.value);
                if a.vkind != ValKind::Ident || binds_in(m, Some(g), name) {
                    return None;
                }
                // (not a function handed on as a value, `run_somehow(main)`: whoever runs it
                // may pass anything)
                let caller = m.text(m.funcs.get(g as usize)?.name);
                if m.calls
                    .iter()
                    .any(|k| m.call_args(k).iter().any(|x| m.text(x.value) == caller))
                {
                    return None;
                }
                param_value_at(m, g, param_index(m, g, name)?, depth + 1)
            })
        };
        let v = if let Some(a) = m.kw(c, pname) {
            passed(&a)
        } else if let Some(a) = at
            .filter(|i| *i < func.positional)
            .and_then(|i| positional.get(i))
        {
            passed(a)
        } else if c.star || at.is_none() {
            None
        } else if let Some(s) = c.splat {
            match m.argparse.get(pname) {
                Some(Some((v, k))) => truth(&m.resolve(
                    &Arg {
                        name: None,
                        value: *v,
                        vkind: *k,
                    },
                    v.start,
                    None,
                )),
                Some(None) => None,
                None if m.text(s).starts_with("vars(") => default,
                None => None,
            }
        } else {
            default
        };
        values.push(v?);
    }
    if values.is_empty() {
        values.push(default?);
    }
    let first = *values.first()?;
    values.iter().all(|v| *v == first).then_some(first)
}

/// The truth value of a module-level name bound only to literals of one truth value
/// (`profile = False`), nowhere rebound (no loop target, import, definition or `global`).
fn module_constant(m: &Model<'_>, name: &str) -> Option<bool> {
    if m.imports.contains_key(name)
        || m.defined.contains(name)
        || m.src.contains(&format!("global {name}"))
        || m.loops
            .iter()
            .any(|l| l.ctx.func.is_none() && l.targets.iter().any(|t| m.text(*t) == name))
    {
        return None;
    }
    let mut value = None;
    // (an assignment in a branch that never runs as shipped binds nothing)
    for a in m.assigns.iter().filter(|a| {
        a.ctx.func.is_none()
            && a.ctx.class.is_none()
            && (a.targets.iter().any(|t| m.text(*t) == name) || m.text(a.left) == name)
            && !m.dead(&a.ctx)
    }) {
        let literal = matches!(
            a.vkind,
            ValKind::True | ValKind::False | ValKind::NoneLit | ValKind::Int
        );
        if a.augmented || a.targets.len() != 1 {
            return None;
        }
        // `GPU = False` ... `GPU = GPU and torch.cuda.is_available()`: a condition over earlier
        // values, read where it stands
        let v = if literal {
            truth(&m.resolve_expr(a.value, a.span.start, None))?
        } else {
            super::as_shipped::condition(m, m.node(a.value)?, a.span.start, None, 1)?
        };
        if value.is_some_and(|x| x != v) {
            return None;
        }
        value = Some(v);
    }
    value
}
