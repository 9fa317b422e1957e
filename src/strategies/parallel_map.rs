use tree_sitter::Node;

use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, Parsed, children, find_all, statements};
use super::{Context, Gain, Proposal, Site, Strategy, VariantEdits, at, site, worker_counts};

super::declare_strategy! {
    /// ## What it does
    /// Runs serial per-file or per-record work in a process pool: a `for` loop that appends
    /// `work(item)` for each item, or a list comprehension `[work(item) for item in items]`,
    /// becomes `list(pool.map(work, items))` inside a
    /// `concurrent.futures.ProcessPoolExecutor`. Order is kept; the import is added.
    ///
    /// ## Why is it faster?
    /// CPython runs one thread of Python at a time, so a serial loop of CPU-bound work keeps
    /// one core busy while the others idle. Worker processes each run their own interpreter.
    ///
    /// ## Example
    /// ```python
    /// results = []
    /// for path in files:
    ///     results.append(process_file(path))
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// with concurrent.futures.ProcessPoolExecutor(max_workers=4) as pool:
    ///     results = list(pool.map(process_file, files))
    /// ```
    ///
    /// Variants: `max_workers` ∈ {2, cores/2, cores} of the measured core count (at least 2).
    /// In a PyTorch script on a machine without a GPU, the model's intra-op threads are capped
    /// at the cores the workers leave (`torch.set_num_threads`, at least 1).
    ///
    /// ## Safety
    /// Safe when the work function is pure per item: it must be a module-level function (so it
    /// pickles), must not declare `global`s, and its results must not depend on the order of
    /// side effects. Applied only inside a function of a script with an
    /// `if __name__ == "__main__":` guard (or inside the guard), because `spawn` and
    /// `forkserver` workers re-import the script.
    ///
    /// ## Expected gain
    /// Amdahl-bounded by the core count: ≤ N× on N CPUs for the loop itself, minus pickling
    /// and start-up [est 80 % parallel efficiency]; reference ml_rules.md §3.15 (serial Python
    /// work) and this project's BENCHMARKS.md (≥ 1.5× on 2 cores for the bundled pipeline).
    pub struct ParallelMap {
        id: "parallel-map",
        title: "Process-pool map for serial per-item work",
        kind: Basic,
        resource: Cpu,
        targets: [SerialProcessing],
    }
}

/// One rewrite: replace `start..end` by the pool block built from these parts.
struct Target {
    file: usize,
    /// First byte replaced (line start of the first statement).
    start: usize,
    /// End byte (line end of the last statement).
    end: usize,
    indent: String,
    /// `results = list(pool.map(f, xs))` or `results.extend(pool.map(f, xs))` without the pool
    /// name, which depends on the file.
    body: Body,
    site: Site,
    /// The outermost loop around the target (same function): the pool is created once
    /// around it instead of once per iteration.
    outer: Option<(usize, usize)>,
    /// The iterable is a slice (`rows[i : i + n]`): sized, so a chunk size can be computed.
    sized_slice: bool,
}

/// Targets of one file sharing an outer loop (or a lone target).
type Group<'a> = (
    usize,
    Option<(usize, usize)>,
    Vec<&'a (Target, String, String)>,
);

enum Body {
    /// `target = list(POOL.map(func, iterable))`
    Assign { target: String },
    /// `acc.extend(POOL.map(func, iterable))`
    Extend { acc: String },
    /// `return list(POOL.map(func, iterable))`
    Return,
}

impl Strategy for ParallelMap {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let cores = ctx.machine.cores;
        let counts = worker_counts(cores, 2);
        if counts.is_empty() {
            return Err(format!(
                "{}: a pool needs at least 2 CPUs",
                ctx.machine.cores_source
            ));
        }
        let mut targets: Vec<(Target, String, String)> = Vec::new();
        let mut reasons = Vec::new();
        let mut refusals = Vec::new();
        let mut heavy_any = false;
        for (fi, file) in ctx.files.iter().enumerate() {
            for (t, func, iter) in for_append_loops(fi, file)
                .into_iter()
                .chain(comprehensions(fi, file))
            {
                let node_desc = t.site.what.clone();
                match check_function(file, &func, t.start) {
                    Ok(heavy) => {
                        heavy_any |= heavy;
                        reasons.push(format!(
                            "{node_desc}{}",
                            if heavy {
                                format!("; `{func}` loops per item (CPU-bound)")
                            } else {
                                String::new()
                            }
                        ));
                        targets.push((t, func, iter));
                    }
                    Err(Some(why)) => refusals.push(format!("{node_desc}: {why}")),
                    Err(None) => {}
                }
            }
        }
        if targets.is_empty() {
            return Err(if refusals.is_empty() {
                "no serial for-append loop or list comprehension calls a module-level function per item".to_owned()
            } else {
                refusals.join("; ")
            });
        }
        reasons.extend(refusals.into_iter().map(|r| format!("left alone: {r}")));
        let mut variants = Vec::new();
        for n in &counts {
            let mut files: Vec<(usize, Vec<Edit>)> = Vec::new();
            // Targets sharing an outer loop share one pool around it.
            let mut groups: Vec<Group<'_>> = Vec::new();
            for entry in &targets {
                let t = &entry.0;
                match groups
                    .iter_mut()
                    .find(|g| t.outer.is_some() && g.0 == t.file && g.1 == t.outer)
                {
                    Some(g) => g.2.push(entry),
                    None => groups.push((t.file, t.outer, vec![entry])),
                }
            }
            for (fi, outer, group) in groups {
                let file = &ctx.files[fi];
                let pool = if file.text.contains("pool") {
                    "_ea_pool"
                } else {
                    "pool"
                };
                let unit = patch::indent_unit(&file.text);
                let header = format!(
                    "with concurrent.futures.ProcessPoolExecutor(max_workers={n}) as {pool}:"
                );
                let line_of = |(t, func, iter): &(Target, String, String)| {
                    // Many small items per call (a slice per batch): one message per worker.
                    let chunks = if t.sized_slice {
                        format!(", chunksize=max(1, len({iter}) // {n})")
                    } else {
                        String::new()
                    };
                    let map = format!("{pool}.map({func}, {iter}{chunks})");
                    match &t.body {
                        Body::Assign { target } => format!("{target} = list({map})"),
                        Body::Extend { acc } => format!("{acc}.extend({map})"),
                        Body::Return => format!("return list({map})"),
                    }
                };
                let mut edits = Vec::new();
                // A PyTorch model on the CPU beside the pool: its intra-op threads would take
                // the workers' cores (measured on examples/torch-infer, 2 CPUs: 0.8x without
                // the cap, 1.7x with it).
                let mut cap = thread_cap(ctx, file, *n);
                match outer {
                    None => {
                        for entry in &group {
                            let t = &entry.0;
                            let first = cap
                                .take()
                                .map_or_else(String::new, |c| format!("{}{c}\n", t.indent));
                            edits.push(Edit {
                                start: t.start,
                                end: t.end,
                                content: format!(
                                    "{first}{i}{header}\n{i}{unit}{}\n",
                                    line_of(entry),
                                    i = t.indent
                                ),
                            });
                        }
                    }
                    Some((start, end)) => {
                        let inner: Vec<Edit> = group
                            .iter()
                            .map(|entry| Edit {
                                start: entry.0.start,
                                end: entry.0.end,
                                content: format!("{}{}\n", entry.0.indent, line_of(entry)),
                            })
                            .collect();
                        let Some(mut e) = patch::wrap_with(&file.text, start, end, &header, &inner)
                        else {
                            continue;
                        };
                        if let Some(c) = cap.take() {
                            let indent = patch::line_indent(&file.text, start);
                            e.content = format!("{indent}{c}\n{}", e.content);
                        }
                        edits.push(e);
                    }
                }
                if !file
                    .aliases
                    .iter()
                    .any(|(k, v)| k == "concurrent" && v == "concurrent")
                {
                    edits.push(file.add_import("import concurrent.futures"));
                }
                files.push((fi, edits));
            }
            variants.push(VariantEdits {
                name: Some(format!("workers-{n}")),
                files,
            });
        }
        let nested = targets.iter().any(|(t, _, _)| t.outer.is_some());
        if nested {
            reasons.push("inside a loop: one pool is created around the outermost loop and mapped per iteration".to_owned());
        }
        let upper = cores as f64;
        let expected = 1.0 + (upper - 1.0) * 0.8;
        reasons.push(format!(
            "{}: max_workers {:?}",
            ctx.machine.cores_source, counts
        ));
        Ok(Proposal {
            sites: targets.iter().map(|(t, _, _)| t.site.clone()).collect(),
            applicability: if heavy_any { 0.9 } else { 0.6 } * if nested { 0.7 } else { 1.0 },
            reasons,
            gain: Gain {
                expected,
                upper,
                source: "Amdahl bound on the CPU count for the loop itself, 80 % parallel efficiency [est]"
                    .to_owned(),
                bound: Some(format!("≤ {cores}x ({})", ctx.machine.cores_source)),
            },
            safety: Applicability::Safe,
            variants,
        })
    }
}

/// Ex) results = []            (optional, replaced too)
///     for path in files:
///         results.append(process_file(path))
/// `torch.set_num_threads(cores − workers)` (at least 1) when the file uses PyTorch on a
/// machine without a GPU and sets no thread count itself.
fn thread_cap(ctx: &Context<'_>, file: &Parsed, workers: usize) -> Option<String> {
    if !matches!(ctx.machine.gpu, super::GpuState::Absent) || file.text.contains("set_num_threads(")
    {
        return None;
    }
    let torch = file.torch_name()?;
    let threads = ctx.machine.cores.saturating_sub(workers).max(1);
    Some(format!(
        "{torch}.set_num_threads({threads})  # PyTorch shares the CPUs with {workers} pool worker(s)"
    ))
}

fn for_append_loops(fi: usize, file: &Parsed) -> Vec<(Target, String, String)> {
    let text = &file.text;
    let mut out = Vec::new();
    for loop_ in find_all(file.tree.root_node(), |n| n.kind() == "for_statement") {
        if loop_.child_by_field_name("alternative").is_some() {
            continue;
        }
        let (Some(left), Some(right), Some(body)) = (
            loop_.child_by_field_name("left"),
            loop_.child_by_field_name("right"),
            loop_.child_by_field_name("body"),
        ) else {
            continue;
        };
        if left.kind() != "identifier" {
            continue;
        }
        let var = file.text_of(left);
        let [stmt] = statements(body)[..] else {
            continue;
        };
        let Some(call) = stmt
            .named_child(0)
            .filter(|c| stmt.kind() == "expression_statement" && c.kind() == "call")
        else {
            continue;
        };
        let Some((acc, method)) = patch::method_call(call, text) else {
            continue;
        };
        if method != "append" || acc.kind() != "identifier" {
            continue;
        }
        let args = patch::call_args(call, text);
        let [inner] = args.positional[..] else {
            continue;
        };
        let Some(func) = single_arg_call(file, inner, var) else {
            continue;
        };
        let acc = file.text_of(acc).to_owned();
        let mut first = loop_;
        let mut body_kind = Body::Extend { acc: acc.clone() };
        // `acc = []` right before the loop: the pool result replaces it.
        if let Some(prev) = loop_.prev_named_sibling()
            && prev.kind() == "expression_statement"
            && let Some(assign) = prev.named_child(0)
            && assign.kind() == "assignment"
            && assign
                .child_by_field_name("left")
                .is_some_and(|l| file.text_of(l) == acc)
            && assign
                .child_by_field_name("right")
                .is_some_and(|r| matches!(file.text_of(r), "[]" | "list()"))
        {
            first = prev;
            body_kind = Body::Assign {
                target: acc.clone(),
            };
        }
        let what = format!(
            "serial loop at {} appends `{func}({var})` for each item of `{}`",
            at(file, loop_),
            file.text_of(right)
        );
        out.push((
            Target {
                file: fi,
                start: patch::line_start(text, first.start_byte()),
                end: patch::line_end(text, loop_.end_byte()),
                indent: patch::line_indent(text, first.start_byte()),
                body: body_kind,
                site: site(file, loop_, what),
                outer: outer_loop(loop_),
                sized_slice: right.kind() == "subscript",
            },
            func,
            file.text_of(right).to_owned(),
        ));
    }
    out
}

/// Ex) results = [work(f) for f in files]
///     return [work(f) for f in files]
fn comprehensions(fi: usize, file: &Parsed) -> Vec<(Target, String, String)> {
    let text = &file.text;
    let mut out = Vec::new();
    for comp in find_all(file.tree.root_node(), |n| n.kind() == "list_comprehension") {
        let Some(stmt) = patch::statement_of(comp) else {
            continue;
        };
        let body = match stmt.kind() {
            "expression_statement" => {
                let Some(assign) = stmt.named_child(0).filter(|a| a.kind() == "assignment") else {
                    continue;
                };
                let (Some(left), Some(right)) = (
                    assign.child_by_field_name("left"),
                    assign.child_by_field_name("right"),
                ) else {
                    continue;
                };
                if right.id() != comp.id() || left.kind() != "identifier" {
                    continue;
                }
                Body::Assign {
                    target: file.text_of(left).to_owned(),
                }
            }
            "return_statement" => {
                if stmt.named_child(0).is_none_or(|r| r.id() != comp.id()) {
                    continue;
                }
                Body::Return
            }
            _ => continue,
        };
        let kids = children(comp);
        let (Some(element), Some(clause)) = (comp.child_by_field_name("body"), kids.get(1)) else {
            continue;
        };
        if kids.len() != 2 || clause.kind() != "for_in_clause" {
            continue;
        }
        let (Some(left), Some(right)) = (
            clause.child_by_field_name("left"),
            clause.child_by_field_name("right"),
        ) else {
            continue;
        };
        if left.kind() != "identifier" {
            continue;
        }
        let var = file.text_of(left);
        let Some(func) = single_arg_call(file, element, var) else {
            continue;
        };
        let what = format!(
            "list comprehension at {} calls `{func}({var})` for each item of `{}`",
            at(file, comp),
            file.text_of(right)
        );
        out.push((
            Target {
                file: fi,
                start: patch::line_start(text, stmt.start_byte()),
                end: patch::line_end(text, stmt.end_byte()),
                indent: patch::line_indent(text, stmt.start_byte()),
                body,
                site: site(file, stmt, what),
                outer: outer_loop(stmt),
                sized_slice: right.kind() == "subscript",
            },
            func,
            file.text_of(right).to_owned(),
        ));
    }
    out
}

/// `func(var)` with a plain name (or dotted module attribute) as the function: its name.
fn single_arg_call(file: &Parsed, node: Node<'_>, var: &str) -> Option<String> {
    if node.kind() != "call" {
        return None;
    }
    let func = node.child_by_field_name("function")?;
    if !matches!(func.kind(), "identifier" | "attribute") {
        return None;
    }
    let args = patch::call_args(node, &file.text);
    match (&args.positional[..], args.keywords.is_empty(), args.splat) {
        ([only], true, false) if file.text_of(*only) == var => Some(file.text_of(func).to_owned()),
        _ => None,
    }
}

/// Whether `func` can run in a worker process, and whether it does CPU work per item.
fn check_function(file: &Parsed, func: &str, at_byte: usize) -> Result<bool, Option<String>> {
    let root = file.tree.root_node();
    let site = find_all(root, |n| {
        n.start_byte() == at_byte || n.start_byte() > at_byte
    })
    .into_iter()
    .find(|n| n.kind() != "module");
    // Where the loop is: inside a function, or inside the main guard.
    let in_guard = site.is_some_and(|n| {
        let mut cur = n.parent();
        while let Some(p) = cur {
            if patch::is_main_guard(p, &file.text) {
                return true;
            }
            cur = p.parent();
        }
        false
    });
    let in_function = site.and_then(patch::enclosing_function).is_some();
    if !(in_guard || in_function && file.has_main_guard()) {
        return Err(Some(
            "runs at import time without an `if __name__ == \"__main__\":` guard; workers would re-run it".to_owned(),
        ));
    }
    if let Some(enclosing) = site.and_then(patch::enclosing_function) {
        // A pool inside a function that itself runs in workers would nest pools.
        let name = enclosing
            .child_by_field_name("name")
            .map(|n| file.text_of(n))
            .unwrap_or("");
        if name == func {
            return Err(Some("recursive".to_owned()));
        }
    }
    if func.contains('.') {
        // `module.work`: imported functions pickle by reference.
        let head = func.split('.').next().unwrap_or("");
        return if file.aliases.contains_key(head) {
            Ok(false)
        } else {
            Err(None)
        };
    }
    let defs: Vec<Node<'_>> = children(root)
        .into_iter()
        .filter(|n| n.kind() == "function_definition" || n.kind() == "decorated_definition")
        .filter_map(|n| {
            if n.kind() == "decorated_definition" {
                n.child_by_field_name("definition")
            } else {
                Some(n)
            }
        })
        .filter(|d| {
            d.child_by_field_name("name")
                .is_some_and(|n| file.text_of(n) == func)
        })
        .collect();
    let Some(def) = defs.last() else {
        return if file.aliases.contains_key(func) {
            Ok(false)
        } else {
            // A builtin or a local function: not ours to move.
            Err(None)
        };
    };
    if !find_all(*def, |n| {
        n.kind() == "global_statement" || n.kind() == "nonlocal_statement"
    })
    .is_empty()
    {
        return Err(Some(format!("`{func}` writes global state")));
    }
    let heavy = !find_all(*def, |n| {
        matches!(
            n.kind(),
            "for_statement" | "while_statement" | "list_comprehension" | "generator_expression"
        )
    })
    .is_empty();
    // A function that only calls a loop-heavy module function is heavy too.
    let calls_heavy = find_all(*def, |n| n.kind() == "call").into_iter().any(|c| {
        c.child_by_field_name("function").is_some_and(|f| {
            let name = file.text_of(f);
            name != func
                && children(root).into_iter().any(|d| {
                    d.kind() == "function_definition"
                        && d.child_by_field_name("name")
                            .is_some_and(|n| file.text_of(n) == name)
                        && !find_all(d, |n| {
                            matches!(n.kind(), "for_statement" | "while_statement")
                        })
                        .is_empty()
                })
        })
    });
    Ok(heavy || calls_heavy)
}

/// The byte range of the outermost `for`/`while` around `node` in its function.
fn outer_loop(node: Node<'_>) -> Option<(usize, usize)> {
    let mut outer = None;
    let mut cur = node.parent();
    while let Some(p) = cur {
        if matches!(
            p.kind(),
            "function_definition" | "class_definition" | "lambda"
        ) {
            break;
        }
        if matches!(p.kind(), "for_statement" | "while_statement") {
            outer = Some((p.start_byte(), p.end_byte()));
        }
        cur = p.parent();
    }
    outer
}
