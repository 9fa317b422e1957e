//! Part of the post-pass (after device, before the DataLoader facts): what a condition and a
//! `**kwargs` dict hold when the file runs as shipped on the device the engine found.
//!
//! pytorch/examples builds its loader options with
//! `kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}` or
//! `if use_cuda: train_kwargs.update(cuda_kwargs)`: on CUDA the first branch runs. A condition is
//! evaluated with argparse defaults, literal booleans, `torch.cuda.is_available()` (true when the
//! file runs on CUDA) and a name that selects the device (`torch.device("cuda" if c else "cpu")`).
//! Anything else is unknown, and a dict key written under an unknown condition is unknown.

use crate::analysis::facts::NodeKind;
use tree_sitter::Node;

use super::facts::{Assign, Model, Span, Val, field, string_value};

/// How deep conditions and dict bindings are followed.
const MAX_DEPTH: u8 = 6;

/// How many ancestors of a write are looked at for the `if`s around it.
const MAX_ANCESTORS: usize = 64;

/// The value of condition `node` when the file runs as shipped on its device; `None` when the
/// engine cannot tell.
// Ex) not args.no_cuda and torch.cuda.is_available()
pub(crate) fn condition(
    m: &Model<'_>,
    node: Node<'_>,
    at: usize,
    func: Option<u32>,
    depth: u8,
) -> Option<bool> {
    if depth > MAX_DEPTH {
        return None;
    }
    match node.node_kind() {
        "true" => Some(true),
        "false" | "none" => Some(false),
        "parenthesized_expression" => condition(m, node.named_child(0)?, at, func, depth + 1),
        "not_operator" => {
            let arg = node.child_by_field_name("argument")?;
            condition(m, arg, at, func, depth + 1).map(|b| !b)
        }
        "boolean_operator" => {
            let l = condition(m, field::get(node, field::LEFT)?, at, func, depth + 1);
            let r = condition(m, field::get(node, field::RIGHT)?, at, func, depth + 1);
            truth_op(m.node_text(field::get(node, field::OPERATOR)?), l, r)
        }
        // `(args.GPU == True) & torch.cuda.is_available()`: `&` / `|` of truth values (each
        // side a comparison, a test or a call, so no integer bit-masks)
        "binary_operator" => {
            let op = field::get(node, field::OPERATOR).map(|o| m.node_text(o))?;
            let (l, r) = (
                field::get(node, field::LEFT)?,
                field::get(node, field::RIGHT)?,
            );
            if !matches!(op, "&" | "|")
                || !super::facts::truth_valued(l)
                || !super::facts::truth_valued(r)
            {
                return None;
            }
            let l = condition(m, l, at, func, depth + 1);
            let r = condition(m, r, at, func, depth + 1);
            truth_op(if op == "&" { "and" } else { "or" }, l, r)
        }
        "call" => {
            let f = field::get(node, field::FUNCTION)?;
            let t = m.node_text(f);
            // `isinstance(net, torch.nn.Module)` of a model (the evaluation helper of *Dive into
            // Deep Learning*, whose other branch serves plain functions as nets)
            if super::facts::module_test(node, m.src)
                && let Some(x) = field::get(node, field::ARGUMENTS).and_then(|a| a.named_child(0))
                && m.var_kind(m.node_text(x)) == Some(super::facts::VarKind::Model)
            {
                return Some(true);
            }
            // `opt.device.startswith("cuda")` with `--device` defaulting to `"cpu"`: a test of a
            // string the script ships with
            if let Some((method, tested, arg)) = super::facts::affix_test(node, m.src)
                && let Some(lit) = super::facts::string_value(arg, m.src)
                && let Val::Str(v) = super::resolve::resolve_with_options(m, tested, at, func)
            {
                return Some(if method == "startswith" {
                    v.starts_with(lit.as_ref())
                } else {
                    v.ends_with(lit.as_ref())
                });
            }
            let no_args =
                field::get(node, field::ARGUMENTS).is_some_and(|a| a.named_child_count() == 0);
            // (before the device is decided, `is_available()` is not known: the switches
            // resolved then must not take it as false)
            if !((no_args && t == "is_available") || super::facts::cuda_available_call(node, m.src))
            {
                return None;
            }
            match m.facts.device {
                super::facts::Device::Unknown => None,
                d => Some(d == super::facts::Device::Cuda),
            }
        }
        "identifier" | "attribute" => name_condition(m, node, at, func, depth),
        "comparison_operator" => comparison(m, node, at, func),
        "subscript" => docopt_flag(m, node),
        _ => None,
    }
}

/// `l and r` / `l or r` of two truth values, each known or not: a false side settles `and`, a
/// true side settles `or`, else both must be known.
pub(crate) fn truth_op(op: &str, l: Option<bool>, r: Option<bool>) -> Option<bool> {
    match (op, l, r) {
        ("and", Some(false), _) | ("and", _, Some(false)) => Some(false),
        ("or", Some(true), _) | ("or", _, Some(true)) => Some(true),
        ("and", Some(a), Some(b)) => Some(a && b),
        ("or", Some(a), Some(b)) => Some(a || b),
        _ => None,
    }
}

/// `args['--cuda']` with `args = docopt(__doc__)`: a flag of the usage text is false unless
/// given, and an option with a value is None unless the text names a `[default: ...]`. Known
/// only where the file imports docopt and the usage line naming the option is found.
// Ex) """Usage: run.py train [options]\n\nOptions:\n    --cuda    use GPU""" ... if args['--cuda']:
pub(crate) fn docopt_flag(m: &Model<'_>, node: Node<'_>) -> Option<bool> {
    if !m
        .imports
        .values()
        .any(|q| q == "docopt" || q.starts_with("docopt."))
    {
        return None;
    }
    let key = super::facts::string_value(node.child_by_field_name("subscript")?, m.src)?;
    if !key.starts_with("--") {
        return None;
    }
    // the option's own line of the usage text: `    --cuda    use GPU`, `--lr=<float> ... [default: 0.001]`
    let line = m.src.lines().find(|l| {
        let t = l.trim_start();
        t.strip_prefix(key.as_ref())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '=', ',']))
    })?;
    let default = line.split("[default:").nth(1).map(|d| {
        d.split(']')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    match default.as_deref() {
        None => Some(false),
        Some("" | "0" | "false" | "none") => Some(false),
        Some(_) => Some(true),
    }
}

/// `a == b`, `a != b`, `a in b`, `a not in b` (and `is` / `is not` with `None`) between two
/// values the engine can resolve to
/// constants (literals, argparse defaults, module constants): `'info' in args.data` with
/// `default="train.csv"` is false as shipped.
fn comparison(m: &Model<'_>, node: Node<'_>, at: usize, func: Option<u32>) -> Option<bool> {
    if node.named_child_count() != 2 {
        return None;
    }
    let (l, r) = (node.named_child(0)?, node.named_child(1)?);
    let op: String = {
        let mut c = node.walk();
        node.children(&mut c)
            .filter(|ch| !ch.is_named())
            .map(|ch| m.node_text(ch))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // `args.gpu is not None` with `--gpu` given no default: None as shipped; so is `args.mode
    // == 'train'` with `--mode` given choices and no default (run without options, the
    // script takes neither branch)
    let unset = |n: Node<'_>| {
        n.node_kind() == "attribute"
            && n.child_by_field_name("attribute")
                .is_some_and(|f| m.argparse_unset.contains(m.node_text(f)))
    };
    // (also `config["optimizer"]` of a dict built from `vars(args)`: the option's default)
    let value = |n: Node<'_>| match super::resolve::resolve_with_options(m, n, at, func) {
        Val::Unknown if (op.starts_with("is") || op == "==" || op == "!=") && unset(n) => Val::None,
        v => v,
    };
    // `device == "cuda"` with `device = torch.device(...)`: a `torch.device` never equals a
    // string (its `__eq__` compares devices only), so the test is false whatever the device
    if matches!(op.as_str(), "==" | "!=")
        && (torch_device_vs_string(m, l, r, at, func) || torch_device_vs_string(m, r, l, at, func))
    {
        return Some(op == "!=");
    }
    // `device == "cuda"` with `device = "cuda" if torch.cuda.is_available() else "cpu"`, or
    // `device.type == "cuda"` with `device = torch.device(...)` of such a choice: the branch
    // of the choice its test takes as shipped
    if matches!(op.as_str(), "==" | "!=")
        && let Some(same) =
            chosen_device_is(m, l, r, at, func).or_else(|| chosen_device_is(m, r, l, at, func))
    {
        return Some(same == (op == "=="));
    }
    // `if __name__ == 'main':` (not `'__main__'`): a script's name is never that, so the
    // block never runs
    let name_test = |n: Node<'_>, s: Node<'_>| {
        m.node_text(n) == "__name__"
            && super::facts::string_value(s, m.src).is_some_and(|v| v != "__main__")
    };
    if matches!(op.as_str(), "==" | "!=") && (name_test(l, r) || name_test(r, l)) {
        return Some(op == "!=");
    }
    let known = |v: &Val| matches!(v, Val::Int(_) | Val::Bool(_) | Val::Str(_) | Val::None);
    // `args.kd_mode in ['fsp', 'ab']`: membership in a collection of literals written out
    if matches!(op.as_str(), "in" | "not in") && matches!(r.node_kind(), "list" | "tuple" | "set") {
        let a = value(l);
        let mut c = r.walk();
        let items: Vec<Val> = r.named_children(&mut c).map(value).collect();
        if !known(&a) || items.is_empty() || !items.iter().all(known) {
            return None;
        }
        return Some(items.contains(&a) == (op == "in"));
    }
    let (a, b) = (value(l), value(r));
    if !known(&a) || !known(&b) {
        return None;
    }
    match op.as_str() {
        "==" => Some(a == b),
        "!=" => Some(a != b),
        // `args.gpu is not None` with no default: identity with None is equality
        // (`if training is False:` with `training = True` handed in: the singletons compare
        // as values)
        "is" | "is not"
            if a == Val::None
                || b == Val::None
                || matches!((&a, &b), (Val::Bool(_), Val::Bool(_))) =>
        {
            Some((a == b) == (op == "is"))
        }
        "<" | "<=" | ">" | ">=" => {
            let (x, y) = (a.int()?, b.int()?);
            Some(match op.as_str() {
                "<" => x < y,
                "<=" => x <= y,
                ">" => x > y,
                _ => x >= y,
            })
        }
        "in" | "not in" => match (&a, &b) {
            (Val::Str(x), Val::Str(y)) => Some(y.contains(x.as_str()) == (op == "in")),
            _ => None,
        },
        _ => None,
    }
}

/// `dev` is a name bound (once, as shipped) to a `torch.device(...)` call and `lit` a string
/// literal.
// Ex) device = torch.device("cuda" if torch.cuda.is_available() else "cpu"); if device == "cuda": ...
fn torch_device_vs_string(
    m: &Model<'_>,
    dev: Node<'_>,
    lit: Node<'_>,
    at: usize,
    func: Option<u32>,
) -> bool {
    if dev.node_kind() != "identifier" || lit.node_kind() != "string" {
        return false;
    }
    binding(m, m.node_text(dev), at, func)
        .and_then(|a| a.rhs_call)
        .and_then(|ci| m.calls.get(ci as usize))
        .is_some_and(|c| m.qual(c) == "torch.device")
}

/// Does `dev`, a name bound to a choice between device strings (`"cuda" if c else "cpu"`,
/// also `torch.device(...)` of one, read through `.type`), name the device of literal `lit` as
/// shipped? `None` when `dev` is no such choice or its test cannot be told.
// Ex) device = 'cuda' if torch.cuda.is_available() else 'cpu'; if device == 'cuda': ...
fn chosen_device_is(
    m: &Model<'_>,
    dev: Node<'_>,
    lit: Node<'_>,
    at: usize,
    func: Option<u32>,
) -> Option<bool> {
    let kind = |s: &str| s.split(':').next().unwrap_or_default().to_owned();
    let want = kind(&string_value(lit, m.src)?);
    if !matches!(want.as_str(), "cuda" | "cpu" | "mps") {
        return None;
    }
    // `device.type`: the object must be a `torch.device(...)` of the choice
    let (name, through_type) = match dev.node_kind() {
        "identifier" => (dev, false),
        "attribute"
            if field::get(dev, field::ATTRIBUTE).map(|a| m.node_text(a)) == Some("type") =>
        {
            (field::get(dev, field::OBJECT)?, true)
        }
        _ => return None,
    };
    if name.node_kind() != "identifier" {
        return None;
    }
    // (a device string chosen by statements: `device = "cpu"` then `if
    // torch.cuda.is_available(): device = "cuda"`, `elif ...: device = "mps"`)
    if !through_type && let Some(chosen) = chained_device(m, m.node_text(name), at, func) {
        return Some(kind(&chosen) == want);
    }
    // (`device.type == "cuda"` of a device handed in, `def load_data(..., device)`, or built by
    // a function, `device = setup_device()`, in a file that runs on CUDA: the runner's GPU)
    let bound = binding(m, m.node_text(name), at, func);
    let opaque = bound.is_none_or(|a| {
        a.rhs_call
            .and_then(|i| m.calls.get(i as usize))
            .is_some_and(|c| c.method.is_none() && m.text(c.func) != "torch.device")
    });
    if through_type && opaque && m.facts.device == super::facts::Device::Cuda {
        return Some(want == "cuda");
    }
    let a = bound?;
    let mut choice = m.node(a.value)?;
    if through_type {
        let call = choice;
        if call.node_kind() != "call"
            || field::get(call, field::FUNCTION).map(|f| m.node_text(f)) != Some("torch.device")
        {
            return None;
        }
        choice = field::get(call, field::ARGUMENTS)?.named_child(0)?;
    }
    // (a choice between device strings, also nested: `"cuda" if torch.cuda.is_available()
    // else "mps" if torch.backends.mps.is_available() else "cpu"`; the branch taken as shipped
    // must be a string)
    if choice.node_kind() != "conditional_expression" {
        return None;
    }
    let mut taken = choice;
    for _ in 0..8 {
        if taken.node_kind() != "conditional_expression" {
            break;
        }
        taken = super::resolve::taken_branch(m, taken, a.span.start, a.ctx.func)?;
    }
    Some(kind(&string_value(taken, m.src)?) == want)
}

/// The device string `name` holds at `at` when statements choose it: one default bound to a
/// string, then an `if` / `elif` chain whose branches each bind it to a string (`device = "cpu"`;
/// `if torch.cuda.is_available(): device = "cuda"`; `elif ...: device = "mps"`), every binding
/// of the name in the scope before `at` being one of these. The first branch whose test holds as
/// shipped gives the value, the default when none does; `None` when a test that could decide it
/// is not known.
// Ex) device = 'cpu'; if torch.cuda.is_available(): device = 'cuda'; elif mps: device = 'mps'
fn chained_device(m: &Model<'_>, name: &str, at: usize, func: Option<u32>) -> Option<String> {
    let binds: Vec<&Assign> = m
        .assigns
        .iter()
        .filter(|a| {
            a.ctx.func == func && a.span.end <= at && a.targets.iter().any(|t| m.text(*t) == name)
        })
        .collect();
    let string_of = |a: &Assign| -> Option<String> {
        if a.targets.len() != 1 || a.augmented {
            return None;
        }
        string_value(m.node(a.value)?, m.src).map(std::borrow::Cow::into_owned)
    };
    let (default, branches) = binds.split_first()?;
    let default_value = string_of(default)?;
    let first = branches.first()?;
    // each later binding sits directly in a branch of one `if` statement after the default
    let branch_of = |a: &Assign| {
        let b = enclosing_branch(m.node(a.span)?.parent()?)?;
        Some((b.branch, b.top))
    };
    let (_, top) = branch_of(first)?;
    if top.start_byte() < default.span.end {
        return None;
    }
    let mut values: Vec<(usize, String)> = Vec::new();
    for a in branches {
        let (branch, t) = branch_of(a)?;
        if t.id() != top.id() || values.iter().any(|(id, _)| *id == branch.id()) {
            return None;
        }
        values.push((branch.id(), string_of(a)?));
    }
    // walk the chain: the `if`, its `elif`s, its `else`
    let mut chain = vec![top];
    let mut cur = top.walk();
    chain.extend(
        top.named_children(&mut cur)
            .filter(|c| matches!(c.node_kind(), "elif_clause" | "else_clause")),
    );
    for branch in chain {
        let holds = match branch.node_kind() {
            "else_clause" => true,
            _ => condition(m, branch.child_by_field_name("condition")?, at, func, 0)?,
        };
        if holds {
            return Some(
                values
                    .iter()
                    .find(|(id, _)| *id == branch.id())
                    .map_or(default_value, |(_, v)| v.clone()),
            );
        }
    }
    Some(default_value)
}

/// Where a statement sits directly in a branch of an `if` statement.
pub(crate) struct Branch<'t> {
    /// The branch's own block, which holds the statement.
    pub block: Node<'t>,
    /// The branch: the `if` statement itself, or one of its `elif` / `else` clauses.
    pub branch: Node<'t>,
    /// The whole `if` statement, all its branches.
    pub top: Node<'t>,
}

/// The branch of an `if` statement whose own block holds statement `stmt` (not one nested
/// deeper); `None` when `stmt` is not directly in such a block.
pub(crate) fn enclosing_branch(stmt: Node<'_>) -> Option<Branch<'_>> {
    let block = stmt.parent().filter(|b| b.node_kind() == "block")?;
    let branch = block.parent()?;
    let top = match branch.node_kind() {
        "if_statement" => branch,
        "elif_clause" | "else_clause" => branch
            .parent()
            .filter(|p| p.node_kind() == "if_statement")?,
        _ => return None,
    };
    Some(Branch { block, branch, top })
}

/// A name used as a condition: its assignment, else its constant value (argparse default,
/// module constant), else whether it selects the CUDA device.
fn name_condition(
    m: &Model<'_>,
    node: Node<'_>,
    at: usize,
    func: Option<u32>,
    depth: u8,
) -> Option<bool> {
    let s = Span::of(node);
    let name = m.text(s);
    if let Some(a) = binding(m, name, at, func) {
        return m
            .node(a.value)
            .and_then(|v| condition(m, v, a.span.start, a.ctx.func, depth + 1));
    }
    // (`eval = args.eval` with `type=int, default=0`: falsy as shipped)
    match m.resolve_expr(s, at, func) {
        Val::Bool(b) => return Some(b),
        Val::None => return Some(false),
        Val::Int(n) => return Some(n != 0),
        Val::Str(t) => return Some(!t.is_empty()),
        _ => {}
    }
    // `use_compile = args.compile` with `--compile` declared without a default (nor demanded
    // by the script): None as shipped
    if node.node_kind() == "attribute"
        && (super::resolve::unset_option(m, name) || super::resolve::empty_default(m, name))
    {
        return Some(false);
    }
    // (`"cuda" if in_arg.gpu and torch.cuda.is_available() else "cpu"` with the options parsed
    // in another module: a mode switch, off as shipped, as in an `if`)
    if node.node_kind() == "attribute"
        && let Some(off) = super::resolve::unassigned_mode_switch(m, name)
    {
        return Some(off);
    }
    selects_cuda(m, name).then_some(m.facts.device == super::facts::Device::Cuda)
}

/// The assignment that binds `name` at byte `at`: the nearest earlier one in the same function
/// (or at module level, for module-level code), else the only module-level one. `None` when there is none or several module-level ones.
pub(crate) fn binding<'a>(
    m: &'a Model<'_>,
    name: &str,
    at: usize,
    func: Option<u32>,
) -> Option<&'a Assign> {
    let mut best: Option<&Assign> = None;
    let mut module: Vec<&Assign> = Vec::new();
    for a in &m.assigns {
        if a.augmented || a.targets.len() != 1 || m.text(a.left) != name {
            continue;
        }
        let module_level = a.ctx.func.is_none() && a.ctx.class.is_none();
        if a.ctx.func == func && (func.is_some() || module_level) && a.span.end <= at {
            best = Some(a);
        } else if module_level {
            module.push(a);
        }
    }
    let pick = match (best, module.as_slice()) {
        (Some(a), _) => a,
        (None, [a]) => *a,
        _ => return None,
    };
    pick.ctx.loop_.is_none().then_some(pick)
}

/// Is `name` the condition of a device choice, `"cuda" if name else "cpu"`?
fn selects_cuda(m: &Model<'_>, name: &str) -> bool {
    let spans = m
        .assigns
        .iter()
        .map(|a| a.value)
        .chain(m.args.iter().map(|a| a.value));
    spans.filter_map(|s| m.node(s)).any(|n| {
        n.node_kind() == "conditional_expression"
            && n.named_child(1).is_some_and(|c| m.node_text(c) == name)
            && n.named_child(0).is_some_and(|t| {
                let t = m.node_text(t);
                t.contains("\"cuda") || t.contains("'cuda")
            })
    })
}

/// Does the statement at `s` run, as shipped, whenever the code at `use_site` runs? `Some(true)`
/// when every `if` around it (and not around `use_site`) holds, `Some(false)` when one does not,
/// `None` when one cannot be told.
pub(crate) fn runs_before(
    m: &Model<'_>,
    s: Span,
    use_site: Span,
    func: Option<u32>,
) -> Option<bool> {
    let mut prev = m.node(s)?;
    let mut cur = prev.parent();
    for _ in 0..MAX_ANCESTORS {
        let Some(n) = cur else { return Some(true) };
        if n.start_byte() <= use_site.start && use_site.end <= n.end_byte() {
            return Some(true);
        }
        match n.node_kind() {
            "if_statement" => {
                let c = field::get(n, field::CONDITION)
                    .and_then(|c| condition(m, c, c.start_byte(), func, 0));
                match prev.node_kind() {
                    "block" => match c {
                        Some(true) => {}
                        Some(false) => return Some(false),
                        None => return None,
                    },
                    "else_clause" => match c {
                        Some(false) => {}
                        Some(true) => return Some(false),
                        None => return None,
                    },
                    // an `elif` runs only when the `if` does not
                    _ if c == Some(true) => return Some(false),
                    _ => return None,
                }
            }
            "function_definition" | "class_definition" => return None,
            _ => {}
        }
        prev = n;
        cur = n.parent();
    }
    None
}

/// The value of key `key` of the dict expression at `s` (`{...}`, `dict(...)`, `a if c else b`,
/// or a name bound to one and updated later), read at byte `at`. [`Val::Absent`] when the dict
/// surely lacks the key.
pub(crate) fn dict_key(
    m: &Model<'_>,
    s: Span,
    key: &str,
    at: usize,
    func: Option<u32>,
    depth: u8,
) -> Val {
    dict_key_with(m, s, key, at, func, depth, resolved)
}

/// The least integer key `key` of the dict expression at `s` holds as shipped
/// (`dict(num_workers=os.cpu_count())` holds at least 1: [`at_least`]).
pub(crate) fn dict_key_at_least(
    m: &Model<'_>,
    s: Span,
    key: &str,
    at: usize,
    func: Option<u32>,
) -> Option<i64> {
    dict_key_with(m, s, key, at, func, 0, |m, v, at, func| {
        m.node(v)
            .and_then(|n| at_least(m, n, at, func, 0))
            .map_or(Val::Unknown, Val::Int)
    })
    .int()
}

/// How a dict's value is read: resolved to a constant, or to a floor ([`at_least`]).
type Leaf = fn(&Model<'_>, Span, usize, Option<u32>) -> Val;

/// A value resolved to a constant where the engine can.
fn resolved(m: &Model<'_>, v: Span, at: usize, func: Option<u32>) -> Val {
    m.resolve_expr(v, at, func)
}

/// [`dict_key`], each value read with `leaf`.
fn dict_key_with(
    m: &Model<'_>,
    s: Span,
    key: &str,
    at: usize,
    func: Option<u32>,
    depth: u8,
    leaf: Leaf,
) -> Val {
    if depth > MAX_DEPTH {
        return Val::Unknown;
    }
    let Some(n) = m.node(s) else {
        return Val::Unknown;
    };
    match n.node_kind() {
        "dictionary" => {
            let mut found = Val::Absent;
            let mut cur = n.walk();
            for p in n.named_children(&mut cur) {
                match p.node_kind() {
                    "pair" => {
                        let (Some(k), Some(v)) =
                            (field::get(p, field::KEY), field::get(p, field::VALUE))
                        else {
                            return Val::Unknown;
                        };
                        match string_value(k, m.src) {
                            Some(k) if k == key => found = leaf(m, Span::of(v), at, func),
                            Some(_) => {}
                            None => return Val::Unknown,
                        }
                    }
                    "dictionary_splat" => {
                        let Some(inner) = p.named_child(0) else {
                            return Val::Unknown;
                        };
                        match dict_key_with(m, Span::of(inner), key, at, func, depth + 1, leaf) {
                            Val::Absent => {}
                            v => found = v,
                        }
                    }
                    "comment" => {}
                    _ => return Val::Unknown,
                }
            }
            found
        }
        "call" => {
            let Some(call) = m.call_at(s) else {
                return Val::Unknown;
            };
            if m.text(call.func) != "dict" || call.star {
                return Val::Unknown;
            }
            let mut found = match m.pos(call, 0) {
                Some(base) => dict_key_with(m, base.value, key, at, func, depth + 1, leaf),
                None => Val::Absent,
            };
            if let Some(sp) = call.splat {
                match dict_key_with(m, sp, key, at, func, depth + 1, leaf) {
                    Val::Absent => {}
                    v => found = v,
                }
            }
            if let Some(a) = m.kw(call, key) {
                found = leaf(m, a.value, call.span.start, call.ctx.func);
            }
            found
        }
        "conditional_expression" => {
            let (Some(yes), Some(cond), Some(no)) =
                (n.named_child(0), n.named_child(1), n.named_child(2))
            else {
                return Val::Unknown;
            };
            match condition(m, cond, at, func, depth + 1) {
                Some(true) => dict_key_with(m, Span::of(yes), key, at, func, depth + 1, leaf),
                Some(false) => dict_key_with(m, Span::of(no), key, at, func, depth + 1, leaf),
                None => {
                    let a = dict_key_with(m, Span::of(yes), key, at, func, depth + 1, leaf);
                    let b = dict_key_with(m, Span::of(no), key, at, func, depth + 1, leaf);
                    if a == b { a } else { Val::Unknown }
                }
            }
        }
        "parenthesized_expression" => match n.named_child(0) {
            Some(inner) => dict_key_with(m, Span::of(inner), key, at, func, depth + 1, leaf),
            None => Val::Unknown,
        },
        "identifier" => var_key(
            m,
            m.text(s),
            key,
            Span { start: at, end: at },
            func,
            depth,
            leaf,
        ),
        _ => Val::Unknown,
    }
}

/// Key `key` of a dict that function `func` receives as its parameter `var`: what every call of
/// the function in the file passes there holds (`get_loaders(data_dir, loader_kwargs)` with
/// `loader_kwargs = {"num_workers": 4, ...}` at the call); `Unknown` when the callers disagree,
/// none is found, or one passes arguments by `*`/`**`.
// Ex) def get_loaders(data_dir, loader_kwargs): DataLoader(ds, **loader_kwargs)
fn param_key(m: &Model<'_>, var: &str, key: &str, func: Option<u32>, depth: u8, leaf: Leaf) -> Val {
    let Some(f) = func.and_then(|f| m.funcs.get(f as usize)) else {
        return Val::Unknown;
    };
    let Some(p) = f.params.iter().position(|(n, _)| m.text(*n) == var) else {
        return Val::Unknown;
    };
    if f.class.is_some() {
        return Val::Unknown;
    }
    let fname = m.text(f.name);
    let mut value: Option<Val> = None;
    for c in m
        .calls
        .iter()
        .filter(|c| c.method.is_none() && m.text(c.func) == fname)
    {
        if c.star || c.splat.is_some() {
            return Val::Unknown;
        }
        let Some(a) = m.passed_arg(c, f, p) else {
            return Val::Unknown;
        };
        let v = dict_key_with(m, a.value, key, c.span.start, c.ctx.func, depth + 1, leaf);
        match &value {
            None => value = Some(v),
            Some(prev) if *prev == v => {}
            Some(_) => return Val::Unknown,
        }
    }
    value.unwrap_or(Val::Unknown)
}

/// Key `key` of the dict variable `var` where it is used (`use_site`): its last assignment that
/// runs, then every later `var[k] = v`, `var.update(...)`, `var.setdefault(...)`, `var.pop(...)`
/// in source order.
fn var_key(
    m: &Model<'_>,
    var: &str,
    key: &str,
    use_site: Span,
    func: Option<u32>,
    depth: u8,
    leaf: Leaf,
) -> Val {
    let at = use_site.start;
    let scope = |f: Option<u32>| f == func || f.is_none();
    // the binding: the last assignment before the use that runs as shipped
    let mut base: Option<&Assign> = None;
    for a in m.assigns.iter().rev() {
        if a.targets.len() != 1 || m.text(a.left) != var || a.span.end > at || !scope(a.ctx.func) {
            continue;
        }
        if a.augmented {
            return Val::Unknown; // `kwargs |= {...}`
        }
        match runs_before(m, a.span, use_site, func) {
            Some(true) => {
                base = Some(a);
                break;
            }
            Some(false) => {}
            None => return Val::Unknown,
        }
    }
    let Some(base) = base else {
        return param_key(m, var, key, func, depth, leaf);
    };
    if base.ctx.loop_.is_some() {
        return Val::Unknown;
    }
    let mut val = dict_key_with(
        m,
        base.value,
        key,
        base.span.start,
        base.ctx.func,
        depth + 1,
        leaf,
    );
    // the writes after it, in source order (assignments and calls interleaved)
    let sub_prefix = format!("{var}[");
    let mut writes: Vec<(usize, Write<'_>)> = Vec::new();
    for a in &m.assigns {
        if a.span.start > base.span.end
            && a.span.end <= at
            && scope(a.ctx.func)
            && m.text(a.left).starts_with(&sub_prefix)
        {
            writes.push((a.span.start, Write::Item(a)));
        }
    }
    for c in &m.calls {
        if c.span.start > base.span.end
            && c.span.end <= at
            && scope(c.ctx.func)
            && c.recv.is_some_and(|r| m.text(r) == var)
        {
            writes.push((c.span.start, Write::Method(c)));
        }
    }
    writes.sort_by_key(|w| w.0);
    for (_, w) in writes {
        let (s, v) = match w {
            Write::Item(a) => {
                let Some(k) = m
                    .node(a.left)
                    .and_then(|l| field::get(l, field::SUBSCRIPT))
                    .and_then(|k| string_value(k, m.src))
                else {
                    return Val::Unknown;
                };
                if k != key {
                    continue;
                }
                if a.augmented {
                    return Val::Unknown;
                }
                (a.span, leaf(m, a.value, a.span.start, a.ctx.func))
            }
            Write::Method(c) => {
                let v = match m.last_name(c) {
                    "update" => {
                        if c.star {
                            return Val::Unknown;
                        }
                        let mut v = match m.pos(c, 0) {
                            Some(d) => dict_key_with(
                                m,
                                d.value,
                                key,
                                c.span.start,
                                c.ctx.func,
                                depth + 1,
                                leaf,
                            ),
                            None => Val::Absent,
                        };
                        if let Some(sp) = c.splat {
                            match dict_key_with(
                                m,
                                sp,
                                key,
                                c.span.start,
                                c.ctx.func,
                                depth + 1,
                                leaf,
                            ) {
                                Val::Absent => {}
                                x => v = x,
                            }
                        }
                        if let Some(a) = m.kw(c, key) {
                            v = leaf(m, a.value, c.span.start, c.ctx.func);
                        }
                        if v == Val::Absent {
                            continue; // the update does not touch the key
                        }
                        v
                    }
                    "setdefault" | "pop" => {
                        let Some(k) = m
                            .pos(c, 0)
                            .and_then(|a| m.node(a.value))
                            .and_then(|n| string_value(n, m.src))
                        else {
                            return Val::Unknown;
                        };
                        if k != key {
                            continue;
                        }
                        match m.last_name(c) {
                            "pop" => Val::Absent,
                            _ if val != Val::Absent => continue,
                            _ => m
                                .pos(c, 1)
                                .map_or(Val::None, |a| leaf(m, a.value, c.span.start, c.ctx.func)),
                        }
                    }
                    "clear" => Val::Absent,
                    // reads (`get`, `items`, `copy`, ...) leave the dict as it is
                    _ => continue,
                };
                (c.span, v)
            }
        };
        match runs_before(m, s, use_site, func) {
            Some(true) => val = v,
            Some(false) => {}
            None => return Val::Unknown,
        }
    }
    val
}

/// A write to a dict variable.
enum Write<'a> {
    /// `var["k"] = v`
    Item(&'a Assign),
    /// `var.update(...)` and other method calls.
    Method(&'a super::facts::Call),
}

/// The line ranges (1-based, inclusive) of a script's top-level functions (also those defined
/// in its `if __name__ == "__main__":` block) that nothing in the script calls or names, or
/// calls only from a branch that never runs as shipped (`if args.train: train()` with the flag
/// off by default): when the script runs, they do not. A file with no `__main__` block and no
/// module-level code that names one of its own functions, if only in such a branch (a library
/// module, whose functions other files call), has none. A function defined again further down
/// under the same name, nothing at module level naming it in between, is replaced before any
/// call reaches it. Names count in code only, not in comments or strings (but in an f-string's interpolation, `print(f"{prepare(args)}")`).
// Ex) def train(...): ...  (its call commented out in main) → train's lines
pub(crate) fn uncalled_functions(m: &Model<'_>) -> Vec<(usize, usize)> {
    let root = m.tree.root_node();
    let mut funcs: Vec<(&str, Node<'_>)> = Vec::new();
    // names in module-level code: (name, only as the function of a call that never runs)
    let mut module_names: Vec<(&str, bool)> = Vec::new();
    let mut cursor = root.walk();
    let mut items: Vec<Node<'_>> = root.named_children(&mut cursor).collect();
    let mut main_block = false;
    let mut dispatched = false;
    // module-level classes, and the names of module-level statements that are not definitions
    let mut classes: Vec<&str> = Vec::new();
    let mut statement_names: Vec<&str> = Vec::new();
    // the names module-level code runs when the file loads (not those in a class's methods)
    let mut script_names: Vec<&str> = Vec::new();
    // the module-level statements that are not function definitions (where a function may be
    // called before a later definition of its name replaces it)
    let mut statements: Vec<Node<'_>> = Vec::new();
    let mut i = 0;
    while let Some(&child) = items.get(i) {
        i += 1;
        // the statements of `if __name__ == "__main__":` run at module level too
        if child.node_kind() == "if_statement"
            && child
                .child_by_field_name("condition")
                .is_some_and(|c| m.node_text(c).contains("__name__"))
            && let Some(body) = child.child_by_field_name("consequence")
        {
            main_block = true;
            let mut c = body.walk();
            items.extend(body.named_children(&mut c));
            let mut c = child.walk();
            for part in child.named_children(&mut c).filter(|p| p.id() != body.id()) {
                let names = names_in(m, part);
                script_names.extend(names.iter().map(|(w, _)| *w));
                module_names.extend(names);
            }
            continue;
        }
        let def = match child.node_kind() {
            "function_definition" => Some(child),
            "decorated_definition" => child
                .child_by_field_name("definition")
                .filter(|d| d.node_kind() == "function_definition"),
            _ => None,
        };
        match def.and_then(|d| d.child_by_field_name("name")) {
            // a decorator may register the function (`@app.route(...)`): it counts as called,
            // unless each only wraps it (`@torch.no_grad()`, `@functools.lru_cache`)
            Some(name)
                if child.node_kind() == "decorated_definition" && !only_wrapped(m, child) =>
            {
                module_names.push((m.node_text(name), false));
                funcs.push((m.node_text(name), child));
            }
            Some(name) => funcs.push((m.node_text(name), child)),
            None => {
                statements.push(child);
                // `globals()[sys.argv[1]]()`, `fire.Fire()`: the command line picks the function
                let text = m.node_text(child);
                dispatched |= text.contains("globals()[") || text.contains("Fire()");
                let names = names_in(m, child);
                match class_def(child).and_then(|k| k.child_by_field_name("name")) {
                    Some(name) => {
                        classes.push(m.node_text(name));
                        // (what a class statement runs when the module loads: its bases and
                        // class-level statements, not its methods' bodies)
                        script_names.extend(names_outside_functions(m, child));
                    }
                    None => {
                        statement_names.extend(names.iter().map(|(w, _)| *w));
                        script_names.extend(names.iter().map(|(w, _)| *w));
                    }
                }
                module_names.extend(names);
            }
        }
    }
    if dispatched {
        return Vec::new();
    }
    let defined: std::collections::HashSet<&str> = funcs.iter().map(|(n, _)| *n).collect();
    // a script: its module-level code calls (or names) one of its functions, if only in a
    // branch that is off, or it has a `__main__` block (which may call none of them:
    // `if __name__ == "__main__": print("ok")` with `main` left uncalled)
    // (or builds one of its classes in module-level code: `model = Net()`)
    // (or parses its command line at module level: `args = parser.parse_args()`, nothing
    // imports that)
    if !main_block
        && !script_names.iter().any(|w| defined.contains(w))
        && !statement_names.iter().any(|w| classes.contains(w))
        && !m
            .calls
            .iter()
            .any(|c| c.ctx.func.is_none() && m.last_name(c) == "parse_args")
    {
        return Vec::new();
    }
    let mut reached: std::collections::HashSet<&str> = module_names
        .iter()
        .filter(|(w, dead)| !dead && defined.contains(w))
        .map(|(w, _)| *w)
        .collect();
    let mut out = uncalled_methods(m);
    let mut frontier: Vec<&str> = reached.iter().copied().collect();
    while let Some(name) = frontier.pop() {
        for (f, node) in &funcs {
            if *f != name {
                continue;
            }
            for w in identifiers(m, *node) {
                if defined.contains(w) && reached.insert(w) {
                    frontier.push(w);
                }
            }
        }
    }
    // a function defined again further down under the same name, with no module-level
    // statement between the two that names it, is replaced before anything can call it: the
    // later definition runs (two `def test_model(...)` in one script)
    let replaced = |name: &str, node: &Node<'_>| {
        (node.node_kind() == "function_definition" || only_wrapped(m, *node))
            && funcs.iter().any(|(other, later)| {
                *other == name
                    && later.start_byte() > node.end_byte()
                    && !statements.iter().any(|s| {
                        s.start_byte() >= node.end_byte()
                            && s.end_byte() <= later.start_byte()
                            && names_outside_functions(m, *s).contains(&name)
                    })
            })
    };
    out.extend(
        funcs
            .iter()
            .filter(|(name, node)| !reached.contains(name) || replaced(name, node))
            .map(|(_, node)| (node.start_position().row + 1, node.end_position().row + 1)),
    );
    out
}

/// The class definition `n` is (also a decorated one), if it is one.
fn class_def(n: Node<'_>) -> Option<Node<'_>> {
    let def = match n.node_kind() {
        "decorated_definition" => n.child_by_field_name("definition")?,
        _ => n,
    };
    (def.node_kind() == "class_definition").then_some(def)
}

/// Are all the decorators of `def` wrappers that register nothing: PyTorch's autograd and
/// compile contexts (`@torch.no_grad()`, `@torch.inference_mode()`, `@torch.compile`) and
/// `functools`' caches?
fn only_wrapped(m: &Model<'_>, def: Node<'_>) -> bool {
    let mut c = def.walk();
    def.named_children(&mut c)
        .filter(|d| d.node_kind() == "decorator")
        .all(|d| {
            let t = m.node_text(d).trim_start_matches('@').trim();
            let name = t.split('(').next().unwrap_or(t);
            matches!(
                name.rsplit('.').next().unwrap_or(name),
                "no_grad" | "inference_mode" | "enable_grad" | "compile" | "lru_cache" | "cache"
            ) && (name.starts_with("torch.")
                || name.starts_with("functools.")
                || !name.contains('.'))
        })
}

/// The line ranges of the methods of the script's module-level classes that the file calls,
/// and only from code that never runs as shipped (`if self.config.srl_alternate:
/// self.train2(epoch)` with a `store_true` flag), and of the classes it builds only there or
/// never names at all (`pl.Trainer` names Lightning's class, not the file's). A method the file never names may be a hook
/// a framework calls (`forward`, `training_step`): it counts as called, as does a method named
/// anywhere but as the function of a call (a callback, `target=self.work`).
// Ex) if self.config.srl_alternate: self.train2(epoch) else: self.train(epoch)
fn uncalled_methods(m: &Model<'_>) -> Vec<(usize, usize)> {
    let root = m.tree.root_node();
    let mut methods: Vec<(&str, Node<'_>)> = Vec::new();
    // (the methods of a class with no base but `object`, which no framework calls back)
    let mut plain_methods: Vec<&str> = Vec::new();
    let mut classes: Vec<(&str, Node<'_>)> = Vec::new();
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        let Some(class) = class_def(child) else {
            continue;
        };
        if let Some(name) = class.child_by_field_name("name") {
            classes.push((m.node_text(name), class));
        }
        let plain = class
            .child_by_field_name("superclasses")
            .is_none_or(|b| matches!(m.node_text(b).trim(), "()" | "(object)"));
        let Some(body) = class.child_by_field_name("body") else {
            continue;
        };
        let mut c = body.walk();
        for item in body.named_children(&mut c) {
            // (a decorated method, `@property`, `@torch.no_grad()`, is reached by its own ways)
            if item.node_kind() != "function_definition" {
                continue;
            }
            if let Some(name) = item.child_by_field_name("name") {
                let name = m.node_text(name);
                if !name.starts_with("__") {
                    methods.push((name, item));
                    if plain {
                        plain_methods.push(name);
                    }
                }
            }
        }
    }
    if methods.is_empty() && classes.is_empty() {
        return Vec::new();
    }
    // each method name: (references, references that are dead calls)
    let mut refs: std::collections::HashMap<&str, (u32, u32)> =
        methods.iter().map(|(n, _)| (*n, (0, 0))).collect();
    // each class name, likewise: a class built only in code that never runs (`if False:
    // ... MultiGPULossCompute(...)`) runs none of its methods
    let mut class_refs: std::collections::HashMap<&str, (u32, u32)> =
        classes.iter().map(|(n, _)| (*n, (0, 0))).collect();
    // (each node with its parent: asking a node for its parent walks down from the root)
    let mut stack = vec![(root, None::<Node<'_>>)];
    while let Some((n, parent)) = stack.pop() {
        // (not the definition's own name, nor an attribute of another object: `pl.Trainer`
        // names Lightning's class, not the file's `Trainer`)
        let attribute_field = parent.is_some_and(|p| {
            p.node_kind() == "attribute" && p.child_by_field_name("attribute") == Some(n)
        });
        // (nor a naming inside the class itself, `super(Model, self).__init__()`)
        let own_body = || {
            classes.iter().any(|(name, def)| {
                *name == m.node_text(n)
                    && def.start_byte() <= n.start_byte()
                    && n.end_byte() <= def.end_byte()
            })
        };
        if n.node_kind() == "identifier"
            && parent.is_none_or(|p| p.node_kind() != "class_definition")
            && !attribute_field
            && let Some(entry) = class_refs.get_mut(m.node_text(n))
            && !own_body()
        {
            entry.0 += 1;
            if dead_call(m, n) {
                entry.1 += 1;
            }
        }
        // (a method's own body naming it does not call it from outside: `def train(self, model):
        // model.train()` is the module's `train`, and a recursion needs a first call)
        if n.node_kind() == "attribute"
            && let Some(attr) = n.child_by_field_name("attribute")
            && let Some(entry) = refs.get_mut(m.node_text(attr))
            && !methods.iter().any(|(name, def)| {
                *name == m.node_text(attr)
                    && def.start_byte() <= n.start_byte()
                    && n.end_byte() <= def.end_byte()
            })
        {
            entry.0 += 1;
            let called = parent
                .filter(|p| p.node_kind() == "call")
                .and_then(|p| p.child_by_field_name("function"))
                .is_some_and(|f| f.id() == n.id());
            if called && dead_call(m, n) {
                entry.1 += 1;
            }
        }
        stack.extend(
            code_children(n, &mut cursor)
                .into_iter()
                .map(|c| (c, Some(n))),
        );
    }
    let unused = |r: Option<&(u32, u32)>| r.is_some_and(|(all, dead)| *all > 0 && all == dead);
    // (a plain class's method that nothing names, its call commented out: `# a.test()`; a
    // name two classes share counts for both)
    let never_named = |name: &str| {
        refs.get(name).is_some_and(|(all, _)| *all == 0)
            && plain_methods.contains(&name)
            && methods.iter().filter(|(n, _)| *n == name).count()
                == plain_methods.iter().filter(|n| **n == name).count()
    };
    // (a class every naming of which is dead, or that the script never names at all, builds
    // nothing when it runs: an old `Trainer` whose use is commented out beside a Lightning
    // `pl.Trainer(...).fit(model)`)
    let unbuilt = |r: Option<&(u32, u32)>| r.is_some_and(|(all, dead)| all == dead);
    methods
        .iter()
        .filter(|(name, _)| unused(refs.get(name)) || never_named(name))
        .chain(
            classes
                .iter()
                .filter(|(name, _)| unbuilt(class_refs.get(name))),
        )
        .map(|(_, node)| (node.start_position().row + 1, node.end_position().row + 1))
        .collect()
}

/// The identifiers under `node` (names in code: comments hold none, strings only in their interpolations), leaving out
/// calls in a branch that never runs as shipped (`if FLAGS.train: train()` with the flag off
/// by default, the `else: eval(args)` of `if not args.eval:`). An attribute's name
/// (`FLAGS.train`, `trainer.train()`) and a keyword's (`f(train=True)`) name no function of the
/// module.
fn identifiers<'s>(m: &Model<'s>, node: Node<'_>) -> Vec<&'s str> {
    names_in(m, node)
        .into_iter()
        .filter(|(_, dead)| !dead)
        .map(|(w, _)| w)
        .collect()
}

/// The identifiers under `node`, as [`identifiers`] reads them, each with whether it is the
/// function of a call in a branch that never runs as shipped.
fn names_in<'s>(m: &Model<'s>, node: Node<'_>) -> Vec<(&'s str, bool)> {
    name_nodes(m, node, false)
        .into_iter()
        .map(|n| (m.node_text(n), dead_call(m, n)))
        .collect()
}

/// The names under `node` as [`names_in`] reads them, leaving out the bodies of the functions
/// defined there (a class's methods run when called, not when the class statement runs).
fn names_outside_functions<'s>(m: &Model<'s>, node: Node<'_>) -> Vec<&'s str> {
    name_nodes(m, node, true)
        .into_iter()
        .map(|n| m.node_text(n))
        .collect()
}

/// The identifier nodes under `node` that name something in code (not an attribute's name nor
/// a keyword's, not in comments, in strings only through interpolations); with
/// `skip_functions`, none inside a function defined there. Inside a function defined there, a
/// name its parameters bind is the parameter (`def forward(self, x, inference=False): if not
/// inference:` names no module function `inference`).
fn name_nodes<'t>(m: &Model<'_>, node: Node<'t>, skip_functions: bool) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    // (node, the scope it sits in); scopes: (enclosing scope, the parameter names bound)
    let mut scopes: Vec<(Option<usize>, Vec<&str>)> = Vec::new();
    let mut stack = vec![(node, None::<usize>)];
    let mut cursor = node.walk();
    let bound = |scopes: &[(Option<usize>, Vec<&str>)], mut s: Option<usize>, name: &str| {
        for _ in 0..64 {
            let Some((up, names)) = s.and_then(|i| scopes.get(i)) else {
                return false;
            };
            if names.contains(&name) {
                return true;
            }
            s = *up;
        }
        false
    };
    while let Some((n, scope)) = stack.pop() {
        match n.node_kind() {
            "function_definition" if skip_functions => {}
            "function_definition" => {
                let params: Vec<&str> = n
                    .child_by_field_name("parameters")
                    .map(|ps| {
                        let mut c = ps.walk();
                        ps.named_children(&mut c)
                            .filter_map(|p| match p.node_kind() {
                                "identifier" => Some(p),
                                _ => p
                                    .child_by_field_name("name")
                                    .or_else(|| p.named_child(0))
                                    .filter(|x| x.node_kind() == "identifier"),
                            })
                            .map(|p| m.node_text(p))
                            .collect()
                    })
                    .unwrap_or_default();
                scopes.push((scope, params));
                let inner = Some(scopes.len() - 1);
                // (defaults and decorators are read where the function is defined; the
                // parameters' own names name nothing)
                for ch in code_children(n, &mut cursor) {
                    match ch.node_kind() {
                        "block" => stack.push((ch, inner)),
                        "parameters" => {
                            let mut c = ch.walk();
                            let defaults: Vec<Node<'t>> = ch
                                .named_children(&mut c)
                                .filter_map(|p| p.child_by_field_name("value"))
                                .collect();
                            stack.extend(defaults.into_iter().map(|d| (d, scope)));
                        }
                        "identifier" => {}
                        _ => stack.push((ch, scope)),
                    }
                }
            }
            "identifier" if bound(&scopes, scope, m.node_text(n)) => {}
            "identifier" => out.push(n),
            "attribute" => stack.extend(n.child_by_field_name("object").map(|o| (o, scope))),
            "keyword_argument" => stack.extend(n.child_by_field_name("value").map(|v| (v, scope))),
            _ => stack.extend(
                code_children(n, &mut cursor)
                    .into_iter()
                    .map(|ch| (ch, scope)),
            ),
        }
    }
    out
}

/// The children of `n` that hold code: none for a comment, only the interpolations of a
/// string (`f"data: {prepare(args)}"` calls `prepare`), all of them otherwise.
fn code_children<'t>(n: Node<'t>, cursor: &mut tree_sitter::TreeCursor<'t>) -> Vec<Node<'t>> {
    match n.node_kind() {
        "comment" => Vec::new(),
        "string" => n
            .named_children(cursor)
            .filter(|c| c.node_kind() == "interpolation")
            .collect(),
        _ => n.named_children(cursor).collect(),
    }
}

/// Is `name` the function of a call that sits in code that never runs as shipped?
fn dead_call(m: &Model<'_>, name: Node<'_>) -> bool {
    let s = Span::of(name);
    let first = m.calls.partition_point(|c| c.span.start < s.start);
    m.calls
        .get(first..)
        .unwrap_or(&[])
        .iter()
        .take_while(|c| c.span.start == s.start)
        .any(|c| c.func == s && m.dead(&c.ctx))
}

/// Does callee text `f` name the machine's core count (`cpu_count`, `os.cpu_count`,
/// `multiprocessing.cpu_count`)?
fn names_cpu_count(f: &str) -> bool {
    f == "cpu_count" || f.ends_with(".cpu_count")
}

/// The least value an integer expression has as shipped, when the engine can tell: a constant
/// (literal, assignment, argparse default), the machine's core count (`os.cpu_count()`,
/// `multiprocessing.cpu_count()`: at least 1; in arithmetic with a constant, `int(cpu_count() *
/// 0.7)`, at least 2, a GPU machine's least), `min(...)` / `max(...)` of such (also of one
/// list), `int(x)`, and `a if cond else b` with the condition known as shipped (else the lesser
/// of both).
// Ex) nw = min([os.cpu_count(), batch_size if batch_size > 1 else 0, 8]) → 1 with batch_size = 32
pub(crate) fn at_least(
    m: &Model<'_>,
    node: Node<'_>,
    at: usize,
    func: Option<u32>,
    depth: u8,
) -> Option<i64> {
    if depth > MAX_DEPTH {
        return None;
    }
    let next = depth + 1;
    match node.node_kind() {
        "parenthesized_expression" => at_least(m, node.named_child(0)?, at, func, next),
        "identifier" => match binding(m, m.node_text(node), at, func) {
            Some(a) => at_least(m, m.node(a.value)?, a.span.start, a.ctx.func, next),
            None => m.resolve_expr(Span::of(node), at, func).int().or_else(|| {
                // a parameter the function's one call fills, `get_loaders(ds, 64,
                // cpu_count() // 2)`: the least that argument holds where it is passed
                let (given, caller) = super::resolve::handed_in(m, m.node_text(node), func)?;
                at_least(
                    m,
                    m.node(given.value)?,
                    caller.span.start,
                    caller.ctx.func,
                    next,
                )
            }),
        },
        // `args.num_workers` with `default=mp.cpu_count() - 1`: the option's default, unless
        // the file assigns the attribute
        "attribute" => match m.resolve_expr(Span::of(node), at, func).int() {
            Some(v) => Some(v),
            None => {
                let name = m.node_text(node);
                let field = name.rsplit('.').next()?;
                let (default, _) = m.argparse.get(field)?.as_ref()?;
                if m.assigns
                    .iter()
                    .any(|a| a.targets.iter().any(|t| m.text(*t) == name))
                {
                    return None;
                }
                at_least(m, m.node(*default)?, default.start, None, next)
            }
        },
        "conditional_expression" => {
            let (body, cond, alt) = (
                node.named_child(0)?,
                node.named_child(1)?,
                node.named_child(2)?,
            );
            match condition(m, cond, at, func, next) {
                Some(true) => at_least(m, body, at, func, next),
                Some(false) => at_least(m, alt, at, func, next),
                None => {
                    Some(at_least(m, body, at, func, next)?.min(at_least(m, alt, at, func, next)?))
                }
            }
        }
        "call" => {
            let f = m.node_text(field::get(node, field::FUNCTION)?);
            let args = field::get(node, field::ARGUMENTS)?;
            let mut c = args.walk();
            let mut items: Vec<Node<'_>> = args.named_children(&mut c).collect();
            if let [one] = items.as_slice()
                && matches!(one.node_kind(), "list" | "tuple")
            {
                let one = *one;
                let mut c = one.walk();
                items = one.named_children(&mut c).collect();
            }
            match f {
                _ if names_cpu_count(f) => Some(1),
                "min" if !items.is_empty() => items
                    .iter()
                    .map(|x| at_least(m, *x, at, func, next))
                    .try_fold(i64::MAX, |acc, v| v.map(|v| acc.min(v))),
                "max" => items
                    .iter()
                    .filter_map(|x| at_least(m, *x, at, func, next))
                    .max(),
                "int" if items.len() == 1 => at_least(m, *items.first()?, at, func, next),
                _ => m.resolve_expr(Span::of(node), at, func).int(),
            }
        }
        // `int(cpu_count() * 0.70)`, `os.cpu_count() // 2`: a share of the machine's cores, of
        // which a GPU machine has at least two
        "binary_operator" => {
            let (l, r) = (
                field::get(node, field::LEFT)?,
                field::get(node, field::RIGHT)?,
            );
            let op = m.node_text(field::get(node, field::OPERATOR)?);
            let k: f64 = match r.node_kind() {
                "integer" | "float" => m.node_text(r).replace('_', "").parse().ok()?,
                _ => return m.resolve_expr(Span::of(node), at, func).int(),
            };
            let cores = l.node_kind() == "call"
                && field::get(l, field::FUNCTION).is_some_and(|f| names_cpu_count(m.node_text(f)));
            let low = if cores {
                2.0
            } else {
                at_least(m, l, at, func, next)? as f64
            };
            let v = match op {
                "*" if k > 0.0 => low * k,
                "/" | "//" if k > 0.0 => low / k,
                "+" => low + k,
                "-" => low - k,
                _ => return None,
            };
            Some(v.floor() as i64)
        }
        _ => m.resolve_expr(Span::of(node), at, func).int(),
    }
}
