//! The post-pass of the facts engine: resolves what the walk recorded into facts.
//!
//! Runs once per file after the walk, in linear passes over the recorded calls, assignments and
//! loops: argparse defaults, variable kinds, device, precision, loop kinds (step / epoch /
//! record), function and file classification (reference ml_rules.md §2.3), DataLoader facts.

use super::facts::{
    Device, FunctionFacts, LoaderFacts, LoopFacts, Model, Span, Val, ValKind, VarKind,
    kind_by_name, string_value,
};
use super::model::CodeKind;

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
    kinds(m);
    device(m);
    precision(m);
    loops(m);
    classify(m);
    loaders(m);
}

fn argparse(m: &mut Model<'_>) {
    for c in &m.calls {
        if m.last_name(c) != "add_argument" {
            continue;
        }
        let mut dest: Option<String> = None;
        for a in m.call_args(c).iter().filter(|a| a.name.is_none()) {
            let Some(n) = m.node(a.value) else { continue };
            let Some(s) = string_value(n, m.src) else {
                continue;
            };
            if let Some(long) = s.strip_prefix("--") {
                dest = Some(long.replace('-', "_"));
            } else if !s.starts_with('-') && dest.is_none() {
                dest = Some(s.replace('-', "_"));
            }
        }
        if let Some(d) = m.kw(c, "dest")
            && let Some(n) = m.node(d.value)
            && let Some(s) = string_value(n, m.src)
        {
            dest = Some(s.into_owned());
        }
        let Some(dest) = dest else { continue };
        let mut default = m.kw(c, "default").map(|a| (a.value, a.vkind));
        // `action="store_true"` without `default=` defaults to False
        if default.is_none()
            && let Some(a) = m.kw(c, "action")
            && m.text(a.value).trim_matches(['"', '\'']) == "store_true"
        {
            default = Some((a.value, ValKind::False));
        }
        m.argparse.insert(dest, default);
    }
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
        } else if (q.starts_with("torch.optim.") && !q.contains("lr_scheduler"))
            || q.starts_with("bitsandbytes.optim.")
            || matches!(
                last,
                "AdamW" | "Adam" | "SGD" | "RMSprop" | "Adagrad" | "Lion" | "Adafactor"
            )
        {
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
        } else if q.starts_with("torchvision.models.")
            || q == "timm.create_model"
            || local_modules.contains(&m.text(c.func))
            || (q.starts_with("torch.nn.")
                && last
                    .chars()
                    .next()
                    .is_some_and(|ch| ch.is_ascii_uppercase())
                && !last.ends_with("Loss"))
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
            recv_kind
        } else if (q.starts_with("torch.") || q.starts_with("numpy.") || recv == "np")
            && TENSOR_CTORS.contains(&last)
        {
            Some(VarKind::Tensor)
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
    // `Adam(transformer.parameters(), ...)`: what an optimizer trains is a model
    for c in &m.calls {
        let q = m.qual(c);
        let last = m.last_name(c);
        let optimizer = (q.starts_with("torch.optim.") && !q.contains("lr_scheduler"))
            || matches!(
                last,
                "AdamW" | "Adam" | "SGD" | "RMSprop" | "Adagrad" | "Adadelta"
            );
        if !optimizer {
            continue;
        }
        if let Some(a) = m.pos(c, 0)
            && let Some(owner) = m.text(a.value).strip_suffix(".parameters()")
            && !owner.is_empty()
            && owner
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
        {
            known.entry(owner).or_insert(VarKind::Model);
        }
    }
    m.kinds = known;
}

/// The kind a constructor call (or a chain of `.to()` / `.cuda()` / `.eval()` on one) produces.
fn ctor_kind(m: &Model<'_>, c: &super::facts::Call, local_modules: &[&str]) -> Option<VarKind> {
    let mut cur = c;
    for _ in 0..16 {
        let last = m.last_name(cur);
        if matches!(
            last,
            "to" | "cuda" | "half" | "float" | "bfloat16" | "eval" | "train"
        ) && let Some(inner) = cur.recv_call.and_then(|i| m.calls.get(i as usize))
        {
            cur = inner;
            continue;
        }
        let q = m.qual(cur);
        let recv = cur.recv.map_or("", |r| m.text(r));
        if last == "from_pretrained"
            && !recv.contains("Tokenizer")
            && !recv.contains("Processor")
            && (recv.contains("Model") || recv.contains("For"))
        {
            return Some(VarKind::Model);
        }
        if q.starts_with("torchvision.models.")
            || q == "timm.create_model"
            || local_modules.contains(&m.text(cur.func))
            || (q.starts_with("torch.nn.")
                && last
                    .chars()
                    .next()
                    .is_some_and(|ch| ch.is_ascii_uppercase())
                && !last.ends_with("Loss"))
        {
            return Some(VarKind::Model);
        }
        return None;
    }
    None
}

fn device(m: &mut Model<'_>) {
    let mut cuda = false;
    let mut weak_cuda = false;
    let mut mps = false;
    let mut cpu = false;
    let mut see = |s: &str| {
        let s = s.to_ascii_lowercase();
        if s.contains("cuda") || s.contains("gpu") {
            cuda = true;
        } else if s.contains("mps") {
            mps = true;
        } else if s.contains("cpu") {
            cpu = true;
        }
    };
    for c in &m.calls {
        let last = m.last_name(c);
        let q = m.qual(c);
        match last {
            "device" if q.starts_with("torch") => {
                if let Some(a) = m.pos(c, 0) {
                    see(m.text(a.value));
                }
            }
            "cuda" if c.method.is_some() => see("cuda"),
            // `torch.cuda.is_available()` alone (a print, an assert) does not put work on the GPU
            "is_available" if q.contains("cuda") => weak_cuda = true,
            "to" if c.method.is_some() => {
                if let Some(a) = m.pos(c, 0).filter(|a| a.vkind == ValKind::Str) {
                    see(m.text(a.value));
                }
            }
            "Accelerator"
            | "DistributedDataParallel"
            | "init_process_group"
            | "TrainingArguments"
            | "Seq2SeqTrainingArguments"
            | "SFTConfig" => see("cuda"),
            "Trainer" | "Fabric" => {
                if let Some(a) = m.kw(c, "accelerator") {
                    let t = m.text(a.value);
                    if t.contains("gpu") || t.contains("cuda") || t.contains("auto") {
                        see("cuda");
                    } else {
                        see(t);
                    }
                } else if m.kw(c, "gpus").is_some() || m.kw(c, "devices").is_some() {
                    see("cuda");
                }
            }
            _ => {}
        }
        if m.kw(c, "device_map").is_some() {
            see("cuda");
        }
        for a in m.call_args(c) {
            if a.vkind == ValKind::Str {
                let t = m.text(a.value).trim_matches(['"', '\'']);
                if t == "cuda" || t.starts_with("cuda:") {
                    see("cuda");
                }
            }
        }
    }
    for a in &m.assigns {
        let v = m.text(a.value);
        if a.vkind == ValKind::Str {
            let t = v.trim_matches(['"', '\'']);
            if t == "cuda" || t.starts_with("cuda:") {
                see("cuda");
            } else if t == "cpu" {
                see("cpu");
            }
        } else if a.vkind == ValKind::Other && (v.contains("\"cuda") || v.contains("'cuda")) {
            // `device = "cuda" if torch.cuda.is_available() else "cpu"`
            see("cuda");
        }
    }
    if m.cuda_default_param {
        see("cuda");
    }

    let cuda = cuda || (weak_cuda && !cpu && !mps);
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

fn is_16bit(t: &str) -> bool {
    t.contains("float16")
        || t.contains("bfloat16")
        || t.contains("half")
        || t.contains("bf16")
        || t.contains("fp16")
}

fn precision(m: &mut Model<'_>) {
    let mut p = m.facts.precision.clone();
    let mut cudnn_benchmark = m.facts.cudnn_benchmark;
    let mut deterministic = m.deterministic;
    let mut compile = false;
    let mut conv = false;
    let mut channels_last = false;
    let mut from_pretrained = false;
    for c in &m.calls {
        let last = m.last_name(c);
        let q = m.qual(c);
        if c.ctx.autocast {
            p.autocast = true;
        }
        match last {
            "autocast" => p.autocast = true,
            "GradScaler" => p.grad_scaler = true,
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
            "from_pretrained" => from_pretrained = true,
            // `amp_autocast()`, `maybe_autocast()`: a context chosen at run time (timm)
            _ if last.to_ascii_lowercase().contains("autocast") => p.unresolved = true,
            _ => {}
        }
        if (last.starts_with("Conv") && last.ends_with('d'))
            || q.starts_with("torchvision.models.")
            || q == "timm.create_model"
            // MONAI's networks (UNet, SegResNet, DynUNet, ...) are built from Conv3d/Conv2d
            || q.starts_with("monai.networks.nets.")
        {
            conv = true;
        }
        for a in m.call_args(c) {
            let name = a.name.map_or("", |n| m.text(n));
            let v = m.text(a.value);
            let literal = matches!(
                a.vkind,
                ValKind::True | ValKind::False | ValKind::Str | ValKind::Int | ValKind::NoneLit
            ) || v.starts_with("torch.");
            let model_dtype = matches!(name, "dtype" | "torch_dtype")
                && matches!(last, "from_pretrained" | "autocast" | "to" | "from_config");
            if !literal
                && (model_dtype
                    || matches!(
                        name,
                        "mixed_precision"
                            | "precision"
                            | "fp16"
                            | "bf16"
                            | "tf32"
                            | "torch_compile"
                    ))
            {
                p.unresolved = true;
            }
            match name {
                "dtype" | "torch_dtype" if is_16bit(v) => p.half = true,
                "mixed_precision" | "precision" if is_16bit(v) || v.contains("16") => {
                    p.autocast = true
                }
                "fp16" | "bf16" if a.vkind == ValKind::True => p.autocast = true,
                "tf32" if a.vkind == ValKind::True => p.tf32 = true,
                // `from_pretrained(..., load_in_8bit=True)`: int8/4-bit weights, not an fp32 model
                "load_in_8bit" | "load_in_4bit" if a.vkind == ValKind::True => p.half = true,
                // a `BitsAndBytesConfig`: quantized weights, whatever the compute dtype
                "quantization_config" => p.half = true,
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
        }
    }
    m.facts.cudnn_benchmark = cudnn_benchmark;
    m.deterministic = deterministic;
    m.has_from_pretrained = from_pretrained;
    for a in &m.assigns {
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
        } else if left.ends_with("cudnn.deterministic") && a.vkind == ValKind::True {
            m.deterministic = true;
        }
    }
    // `Accelerator()` without `mixed_precision=` takes precision and dynamo settings from the
    // `accelerate launch` configuration: unknown here.
    if m.calls
        .iter()
        .any(|c| m.last_name(c) == "Accelerator" && m.kw(c, "mixed_precision").is_none())
    {
        p.unresolved = true;
    }
    m.compile_unknown = m.calls.iter().any(|c| {
        m.last_name(c) == "Accelerator"
            && m.kw(c, "dynamo_backend").is_none()
            && m.kw(c, "dynamo_plugin").is_none()
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
/// class built and placed in the same expression: `Seq().to(device).double()`)?
fn fp64_model(m: &Model<'_>) -> bool {
    let is_f64 = |t: &str| matches!(t, "torch.float64" | "torch.double");
    m.calls.iter().any(|c| {
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
                return m.classes.iter().any(|k| {
                    m.text(k.name) == name && k.bases.is_some_and(|b| m.text(b).contains("Module"))
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
fn iterated_loader(m: &Model<'_>, iter: Span) -> Option<String> {
    let node = m.node(iter)?;
    let mut stack = vec![node];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 64 {
            break;
        }
        match n.kind() {
            "identifier" | "attribute" => {
                let t = m.text(Span {
                    start: n.start_byte(),
                    end: n.end_byte(),
                });
                if m.var_kind(t) == Some(VarKind::Loader) {
                    return Some(t.to_string());
                }
            }
            "call" => {
                let f =
                    crate::analysis::facts::field::get(n, crate::analysis::facts::field::FUNCTION);
                let ft = f.map_or("", |f| {
                    m.text(Span {
                        start: f.start_byte(),
                        end: f.end_byte(),
                    })
                });
                let last = ft.rsplit('.').next().unwrap_or(ft);
                if last.ends_with("dataloader") || last.ends_with("_loader") {
                    return Some(ft.to_string());
                }
                if matches!(
                    last,
                    "enumerate"
                        | "tqdm"
                        | "zip"
                        | "iter"
                        | "islice"
                        | "track"
                        | "progress_bar"
                        | "tqdm_notebook"
                ) && let Some(args) =
                    crate::analysis::facts::field::get(n, crate::analysis::facts::field::ARGUMENTS)
                {
                    let mut c = args.walk();
                    for a in args.named_children(&mut c) {
                        if a.kind() != "keyword_argument" {
                            stack.push(a);
                        }
                    }
                } else if last != "len"
                    && let Some(a0) = crate::analysis::facts::field::get(
                        n,
                        crate::analysis::facts::field::ARGUMENTS,
                    )
                    .and_then(|args| args.named_child(0))
                    && matches!(a0.kind(), "identifier" | "attribute")
                {
                    // `metric_logger.log_every(data_loader, 10, header)`: a wrapper handed the
                    // loader first yields its batches
                    let t = m.text(Span {
                        start: a0.start_byte(),
                        end: a0.end_byte(),
                    });
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
        return c.dotted
            && !m.defined.contains(name)
            && !m.imports.contains_key(name)
            && m.var_kind(name) == Some(VarKind::Model);
    }
    // `self.model(x)`: an attribute of the instance holding a model
    if c.recv.is_some_and(|r| m.text(r) == "self")
        && m.var_kind(m.text(c.func)) == Some(VarKind::Model)
    {
        return true;
    }
    let last = m.last_name(c);
    matches!(last, "generate" | "forward")
        && c.recv
            .is_some_and(|r| m.var_kind(m.text(r)) == Some(VarKind::Model))
}

pub(crate) fn is_opt_step(m: &Model<'_>, c: &super::facts::Call) -> bool {
    if m.last_name(c) != "step" || c.method.is_none() {
        return false;
    }
    let Some(r) = c.recv else { return false };
    matches!(
        m.var_kind(m.text(r)),
        Some(VarKind::Optimizer) | Some(VarKind::Scaler)
    )
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
            infos[i].iterates_loader = iterated_loader(m, it);
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
        } else if is_model_call(m, c) {
            info.model_call = true;
        } else if c.method.is_none() && train_fns.contains(m.text(c.func)) {
            info.backward = true;
        } else if let (Some(meth), Some(root)) = (c.method, c.recv_root)
            && train_fns.contains(m.text(meth))
            && !m.imports.contains_key(m.text(root))
        {
            // `trainer.train_step(sample)`: a method of a class defined here that does one
            // training step
            info.backward = true;
        }
    }
    for info in &mut infos {
        info.step =
            info.iterates_loader.is_some() || info.backward || info.opt_step || info.model_call;
        info.train = info.backward || info.opt_step;
    }
    // `for fold in folds: for epoch ...: for xb in loader: ...; model(X_test)`: a loop holding a
    // training or loader loop of its own runs whole passes; a forward directly in its body is a
    // once-per-pass evaluation, not a step. (Its setup per pass is not loop-invariant work.)
    let mut holds_pass = vec![false; n];
    for (l, info) in m.loops.iter().zip(&infos) {
        if !(info.train || info.iterates_loader.is_some()) {
            continue;
        }
        let mut cur = l.parent;
        for _ in 0..256 {
            let Some(p) = cur else { break };
            let Some(h) = holds_pass.get_mut(p as usize) else {
                break;
            };
            *h = true;
            cur = m.loops.get(p as usize).and_then(|l| l.parent);
        }
    }
    for (info, holds) in infos.iter_mut().zip(&holds_pass) {
        if *holds && info.iterates_loader.is_none() && !info.train {
            info.step = false;
            info.has_child_step = true;
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
    // `for epoch in ...: train_one_epoch(model, loader)` — a call to a local function whose body
    // holds a step loop makes the calling loop an epoch loop.
    let step_fns: std::collections::HashSet<&str> = m
        .loops
        .iter()
        .zip(&infos)
        .filter(|(_, i)| i.step)
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
            }
        }
    }
    // `for epoch in ...: train_one_epoch(model, optimizer, loader)` with an imported function:
    // a loop that hands the optimizer to a call runs whole training passes.
    let mut delegated = false;
    for c in &m.calls {
        let Some(li) = c.ctx.loop_ else { continue };
        if m.call_args(c)
            .iter()
            .any(|a| m.kinds.get(m.text(a.value)) == Some(&VarKind::Optimizer))
            && let Some(info) = infos.get_mut(li as usize)
        {
            info.has_child_step = true;
            if !info.step && c.method.is_none() && !m.defined.contains(m.text(c.func)) {
                delegated = true;
            }
        }
    }
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
        let root = m
            .node(a.value)
            .and_then(|n| {
                let mut n = n;
                for _ in 0..64 {
                    match n.kind() {
                        "identifier" => return Some(n),
                        "attribute" => {
                            n = crate::analysis::facts::field::get(
                                n,
                                crate::analysis::facts::field::OBJECT,
                            )?
                        }
                        "subscript" => {
                            n = crate::analysis::facts::field::get(
                                n,
                                crate::analysis::facts::field::VALUE,
                            )?
                        }
                        "call" => {
                            // `x.to(d)` → x; `f(batch)` is not the batch
                            let f = crate::analysis::facts::field::get(
                                n,
                                crate::analysis::facts::field::FUNCTION,
                            )?;
                            if f.kind() != "attribute" {
                                return None;
                            }
                            n = crate::analysis::facts::field::get(
                                f,
                                crate::analysis::facts::field::OBJECT,
                            )?;
                        }
                        _ => return None,
                    }
                }
                None
            })
            .map(|r| {
                m.text(Span {
                    start: r.start_byte(),
                    end: r.end_byte(),
                })
            });
        let Some(root) = root else { continue };
        let names = &infos[step as usize].batch_names;
        if names.iter().any(|b| b == root) {
            let new: Vec<String> = a
                .targets
                .iter()
                .map(|t| m.text(*t).to_string())
                .filter(|t| !names.contains(t))
                .collect();
            infos[step as usize].batch_names.extend(new);
        }
    }
    for (l, info) in m.loops.iter_mut().zip(infos) {
        l.info = info;
    }
    for (f, b) in m.funcs.iter_mut().zip(fn_backward) {
        f.backward = b;
    }
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
        "eval" if c.method.is_some() && m.var_kind(recv) == Some(VarKind::Model) => s |= S_EVAL,
        "Trainer"
        | "Seq2SeqTrainer"
        | "SFTTrainer"
        | "TrainingArguments"
        | "Seq2SeqTrainingArguments" => {
            s |= S_HF_TRAINER;
        }
        "fit" | "train" if c.method.is_some() && recv.to_ascii_lowercase().ends_with("trainer") => {
            s |= S_HF_TRAINER | S_FIT
        }
        "generate" | "predict" | "trace" | "export" if c.method.is_some() => s |= S_GENERATE,
        "pipeline" if q.starts_with("transformers") => s |= S_GENERATE,
        "from_pretrained" => s |= S_PRETRAINED,
        "load_dataset" => s |= S_HF_DATA,
        "open" if c.method.is_none() => s |= S_READ,
        "load" | "loads" | "read_text" | "loadtxt" if c.method.is_some() => s |= S_READ,
        "open" if c.method.is_some() && (q.starts_with("PIL") || recv == "Image") => s |= S_IMAGE,
        "imread" | "imdecode" | "read_image" => s |= S_IMAGE,
        "glob" | "rglob" | "listdir" | "iterdir" | "walk" | "scandir" => s |= S_GLOB,
        "to_parquet" | "to_csv" | "save" | "savez" | "to_json" | "write_table"
            if c.method.is_some() =>
        {
            s |= S_WRITE;
        }
        "add_argument" => {
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
    if c.ctx.no_grad && is_model_call(m, c) {
        s |= S_NOGRAD_MODEL;
    }
    if c.ctx.loop_.is_some()
        && m.call_args(c)
            .iter()
            .any(|a| m.kinds.get(m.text(a.value)) == Some(&VarKind::Optimizer))
    {
        s |= S_OPT_PASSED;
    }
    if let Some(l) = c.ctx.loop_.and_then(|li| m.loops.get(li as usize))
        && l.info.step
        && m.imports
            .values()
            .any(|q| q == "torch" || q.starts_with("torch."))
        && (is_model_call(m, c)
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

/// A loop over files, paths, lines or rows: the iterated expression calls `glob` / `listdir` /
/// `iterdir` / `iterrows`..., or names a collection like `files`, `image_paths`, `rows`.
pub(crate) fn is_record_loop(m: &Model<'_>, l: &super::facts::Loop) -> bool {
    const CALLS: &[&str] = &[
        "glob",
        "rglob",
        "iglob",
        "listdir",
        "iterdir",
        "scandir",
        "walk",
        "iterrows",
        "itertuples",
        "readlines",
    ];
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
    let listing = |w: &str| CALLS.contains(&w);
    let it_text = m.text(it);
    if words(it_text).iter().any(|w| {
        listing(w)
            || NOUNS.iter().any(|k| {
                w == k
                    || (w.len() > k.len() + 1
                        && (w.ends_with(k) && w.as_bytes()[w.len() - k.len() - 1] == b'_'
                            || w.starts_with(k) && w.as_bytes()[k.len()] == b'_'))
            })
    }) {
        return true;
    }
    // `wavs = sorted(glob.glob(...))` ... `for wav in tqdm(wavs):`: the name's latest binding
    // before the loop, in the same function, lists a directory
    code_only(it_text)
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .filter(|w| !w.is_empty())
        .any(|name| {
            m.assigns
                .iter()
                .rfind(|a| {
                    a.span.end <= l.span.start
                        && a.ctx.func == l.ctx.func
                        && a.targets.len() == 1
                        && m.text(a.left) == name
                })
                .is_some_and(|a| words(m.text(a.value)).iter().any(|w| listing(w)))
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
        || (q == "DataLoader" && !m.imports.contains_key("DataLoader"))
        || (q.ends_with(".DataLoader") && q.starts_with("torch"))
        // a subclass with torch's arguments and defaults (`num_workers=0`, no pinning)
        || q == "monai.data.DataLoader"
}

/// A DataLoader argument by keyword or position, resolved; `**kwargs` dicts are looked into.
pub(crate) fn loader_arg(m: &Model<'_>, c: &super::facts::Call, name: &str, pos: usize) -> Val {
    if let Some(a) = m.kw(c, name) {
        return m.resolve(&a, c.span.start, c.ctx.func);
    }
    if pos != usize::MAX
        && let Some(a) = m.pos(c, pos)
    {
        return m.resolve(&a, c.span.start, c.ctx.func);
    }
    if c.star {
        return Val::Unknown;
    }
    if let Some(s) = c.splat {
        return splat_value(m, s, name, c);
    }
    Val::Absent
}

/// Looks `name` up in a `**kwargs` dict built from a literal (`dict(...)` or `{...}`).
fn splat_value(m: &Model<'_>, s: Span, name: &str, at: &super::facts::Call) -> Val {
    let var = m.text(s);
    let Some(a) = m.assigns.iter().rev().find(|a| {
        a.targets.len() == 1 && !a.augmented && m.text(a.left) == var && a.span.end <= at.span.start
    }) else {
        return Val::Unknown;
    };
    // later `kwargs["x"] = ...` / `kwargs.update(...)` writes make it unknown
    if m.assigns.iter().any(|b| {
        b.span.start > a.span.end
            && b.span.end <= at.span.start
            && m.text(b.left).starts_with(&format!("{var}["))
    }) || m.calls.iter().any(|c| {
        c.span.start > a.span.end
            && c.span.end <= at.span.start
            && c.recv.is_some_and(|r| m.text(r) == var)
            && matches!(m.last_name(c), "update" | "setdefault")
    }) {
        return Val::Unknown;
    }
    if let Some(ci) = a.rhs_call
        && let Some(call) = m.calls.get(ci as usize)
        && m.text(call.func) == "dict"
    {
        if call.splat.is_some() || call.star || m.pos(call, 0).is_some() {
            return Val::Unknown;
        }
        return match m.kw(call, name) {
            Some(arg) => m.resolve(&arg, call.span.start, call.ctx.func),
            None => Val::Absent,
        };
    }
    if a.vkind == ValKind::Dict
        && let Some(d) = m.node(a.value)
    {
        let mut cur = d.walk();
        let mut found = Val::Absent;
        for p in d.named_children(&mut cur) {
            if p.kind() != "pair" {
                return Val::Unknown; // `**other` inside the literal
            }
            let (Some(k), Some(v)) = (
                crate::analysis::facts::field::get(p, crate::analysis::facts::field::KEY),
                crate::analysis::facts::field::get(p, crate::analysis::facts::field::VALUE),
            ) else {
                return Val::Unknown;
            };
            match string_value(k, m.src) {
                Some(key) if key == name => {
                    found = m.resolve(
                        &super::facts::Arg {
                            name: None,
                            value: Span {
                                start: v.start_byte(),
                                end: v.end_byte(),
                            },
                            vkind: match v.kind() {
                                "integer" => ValKind::Int,
                                "true" => ValKind::True,
                                "false" => ValKind::False,
                                "identifier" => ValKind::Ident,
                                "attribute" => ValKind::Attr,
                                "string" => ValKind::Str,
                                _ => ValKind::Other,
                            },
                        },
                        a.span.start,
                        a.ctx.func,
                    );
                }
                Some(_) => {}
                None => return Val::Unknown,
            }
        }
        return found;
    }
    Val::Unknown
}
