use crate::analysis::facts::NodeKind;
use crate::analysis::facts::{Model, Span, VarKind};
use crate::analysis::resolve::TENSOR_CTORS;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags a Python `for i in range(...)` loop (also `reversed(range(...))`) that computes a
    /// NumPy array or torch tensor
    /// element by element: it assigns `out[i] = ...` into an array built with `np.*` /
    /// `torch.*`, or one indexed as only an array is (`image[y, x, 0] = 255` over `range(
    /// image.shape[0])`, an image `cv2.imread` returned), or accumulates `total += a[i] ...`
    /// from one. Nested loops are reported once,
    /// on the outer loop; loops of at most 16 known iterations (`range(3)`, `range(len(ts))`
    /// over a list written out) are not reported,
    /// nor loops whose iterations each reduce whole arrays (`inter[c] += (pred == c).sum()`;
    /// the distinct values of a column, `values, counts = np.unique(cols[i],
    /// return_counts=True)` then `n[i] = len(counts)`),
    /// nor loops whose iterations run a model (also a module moved to the device and called
    /// by its variable, `layer = layers[i].to(dev)`, or a layer or method of the module the loop
    /// sits in, `self.get_att_score(h, enc[i])`) or a function of the file that loops itself (a
    /// patch through the network, an epoch of training), nor loops that read each element
    /// from a file or a stream (`ret, frame = capture.read()` ... `v[count] = frame`, an image
    /// decoded, `np.array(Image.open(path))`, a loader's `load_image(paths[i])`), nor loops
    /// that hand a whole pass to an object (`appr.eval(u, loader)`, `clf.fit(X, y)`), nor writes
    /// of a block (`t[i, s:s + n] = ...`) or of a masked selection (`viz[np.where(m[i] > 0)] =
    /// color`) per iteration.
    ///
    /// Reported on the `for` line of the element-wise loop (the outermost one when loops nest).
    ///
    /// ## Why is this slow?
    /// Every element costs interpreter dispatch, boxing and an indexing call: 10–100x slower
    /// than one vectorised operation over the whole array (and on a GPU tensor, one kernel
    /// launch and a sync per element).
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    ///
    /// out = np.zeros(n)
    /// for i in range(n):
    ///     out[i] = a[i] * b[i] + 1.0
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import numpy as np
    ///
    /// out = a[:n] * b[:n] + 1.0
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: vectorising needs the loop body rewritten.
    pub(crate) struct PythonLoopNumeric {
        id: "EA603",
        name: "elementwise-python-loop",
        category: PythonLoopNumeric,
        resource: Cpu,
        severity: Medium,
    }
}

/// Is `name` an array here: its nearest assignment before `at` in the same function builds one
/// with a NumPy/torch constructor (`acc = np.zeros_like(pos)`)? Names are reused across
/// functions, so the file-wide kind alone is not enough.
fn local_array(m: &Model<'_>, name: &str, at: usize, func: Option<u32>) -> bool {
    let Some(a) = m.assigns.iter().rev().find(|a| {
        a.span.end <= at && a.ctx.func == func && a.targets.len() == 1 && m.text(a.left) == name
    }) else {
        return m.kinds.get(name) == Some(&VarKind::Tensor);
    };
    a.rhs_call
        .and_then(|ci| m.calls.get(ci as usize))
        .is_some_and(|c| {
            let q = m.qual(c);
            let recv = c.recv.map_or("", |r| m.text(r));
            (q.starts_with("numpy.") || q.starts_with("torch.") || recv == "np")
                && TENSOR_CTORS.contains(&m.last_name(c))
        })
}

/// Is `name` a dict here: its nearest assignment before `at` in the same function builds one
/// (`d = {}`, `d = {"a": x}`, `d = dict(...)`)?
fn local_dict(m: &Model<'_>, name: &str, at: usize, func: Option<u32>) -> bool {
    m.assigns
        .iter()
        .rev()
        .find(|a| {
            a.span.end <= at && a.ctx.func == func && a.targets.len() == 1 && m.text(a.left) == name
        })
        .is_some_and(|a| {
            let v = m.text(a.value);
            (v.starts_with('{') && !v.contains("for "))
                || matches!(
                    v.split('(').next(),
                    Some("dict" | "defaultdict" | "OrderedDict" | "collections.defaultdict")
                )
        })
}

/// The text inside the brackets of a subscript whose value ends at `from` and which ends at
/// `to` (`:, i` in `a[:, i]`).
fn index_text<'s>(m: &Model<'s>, from: usize, to: usize) -> &'s str {
    m.src
        .get(from..to)
        .map(|t| {
            t.trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
        })
        .unwrap_or("")
}

/// A string or f-string index, or a component of one (`df.at[i, "col"]`): a dict key or a
/// label, not an element position.
fn is_key(idx: &str) -> bool {
    idx.split(',').any(|part| {
        let t = part
            .trim()
            .trim_start_matches(['f', 'r', 'b', 'F', 'R', 'B']);
        t.starts_with('"') || t.starts_with('\'')
    })
}

/// Methods that run a whole pass of an object over data given to them (`appr.train(t,
/// loader)`, `trainer.evaluate(ds)`, `clf.fit(X, y)`).
const PASSES: [&str; 8] = [
    "train",
    "eval",
    "evaluate",
    "test",
    "validate",
    "fit",
    "predict",
    "run_epoch",
];

/// An index that takes a whole axis (`:, i`, `i, :`, `..., i`): a row or column at a time.
fn whole_axis(idx: &str) -> bool {
    idx.split(',')
        .any(|part| matches!(part.trim(), ":" | "::" | "..."))
}

/// An index that takes a slice of an axis (`i, start:start + n`, `i, :n`): a block at a time.
fn block(idx: &str) -> bool {
    whole_axis(idx) || idx.split(',').any(|part| part.contains(':'))
}

/// `out[i] = x[:, i]`: the value reads a slice by the loop variable, a whole row or column per
/// iteration.
fn slices_by(m: &Model<'_>, a: &crate::analysis::facts::Assign, var: &str) -> bool {
    m.subs.iter().any(|s| {
        let Some(sub) = m.node(s.value).and_then(|v| v.parent()) else {
            return false;
        };
        let idx = index_text(m, s.value.end, sub.end_byte());
        a.value.contains(s.value) && whole_axis(idx) && super::words(idx).any(|w| w == var)
    })
}

impl Rule for PythonLoopNumeric {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // also outside hot loops: a numpy or torch import
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        use crate::analysis::prefilter::{Triggers, t};
        Triggers::EngineOr(const { &[t::code("numpy"), t::code("torch")] })
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        let numeric = m.imports.values().any(|q| {
            q == "numpy" || q == "torch" || q.starts_with("numpy.") || q.starts_with("torch.")
        });
        if !numeric {
            return;
        }
        // functions of this file that loop themselves (an epoch, a pass over a dataset): a
        // scalar helper (`def sigmoid(x): ...`) called per element is still element-wise work
        let looping_fns: std::collections::HashSet<&str> = m
            .loops
            .iter()
            .filter_map(|l| m.funcs.get(l.ctx.func? as usize))
            .filter(|f| f.class.is_none())
            .map(|f| m.text(f.name))
            .collect();
        // names bound to something moved to a device (`layer = layers[i].to(dev)`): modules
        let moved: std::collections::HashSet<&str> = m
            .assigns
            .iter()
            .filter(|a| {
                let v = m.text(a.value);
                v.contains(".to(") || v.contains(".cuda(")
            })
            .map(|a| m.text(a.left))
            .collect();
        let n = m.loops.len();
        let mut hit = vec![false; n];
        for (li, l) in m.loops.iter().enumerate() {
            if l.info.step || l.targets.len() != 1 {
                continue;
            }
            let Some(it) = l.iter else { continue };
            // a loop of a few known iterations (`range(3)`) is not a hot loop
            // (also walked backwards, `for t in reversed(range(T)):`)
            let it_text = m.text(it);
            if !(it_text.starts_with("range(") || it_text.starts_with("reversed(range("))
                || super::few_iterations(m, l)
            {
                continue;
            }
            // an iteration that runs a model or a looping function of this file does its work
            // in that call (a patch through the network, an epoch of training), not element by
            // element (a loop that calls the model directly is a step loop, skipped above)
            let first = m.calls.partition_point(|c| c.span.start < l.span.start);
            let mut in_loop = m
                .calls
                .get(first..)
                .unwrap_or(&[])
                .iter()
                .take_while(|c| c.span.start < l.span.end);
            // (also one that reads its element from a file or a stream, `ret, frame =
            // capture.read()` ... `v[count] = frame`: decoding, not arithmetic, each time)
            // (also one that hands a pass to an object, `appr.eval(u, data[u]['test loader'])`:
            // a whole evaluation or training pass per iteration)
            let calls_work = in_loop.any(|c| {
                l.span.contains(c.span)
                    && (matches!(
                        m.last_name(c),
                        "read" | "imread" | "imdecode" | "read_image" | "read_video" | "load"
                    )
                        // (an image decoded, `np.array(Image.open(path))`, or a loader of the
                        // file's, `img = load_image_fn(paths[i])`)
                        || super::image_decode_in_loop::is_image_decode(m, c)
                        || m.last_name(c).to_ascii_lowercase().starts_with("load_")
                        || (c.method.is_some()
                        && c.args.1 > c.args.0
                        && PASSES.contains(&m.last_name(c)))
                        || if c.method.is_none() {
                            // (also a module called by its variable: `layer = layers[i].to(dev)`
                            // ... `outs[j] = layer(inps[j])`, a model by its kind)
                            let f = m.text(c.func);
                            looping_fns.contains(f)
                                || m.var_kind(f) == Some(VarKind::Model)
                                || moved.contains(f)
                        } else {
                            c.recv.is_some_and(|r| {
                                let root = super::words(m.text(r)).next().unwrap_or_default();
                                m.var_kind(root) == Some(VarKind::Model)
                                // a layer or a method of the module the loop sits in
                                // (`self.get_att_score(dec_output, enc_outputs[i])`)
                                || (m.text(r) == "self" && in_module_class(m, c))
                            })
                        })
            });
            if calls_work {
                continue;
            }
            let var = m.text(l.targets[0]);
            let over_shape = m.text(it).contains(".shape");
            // assignments inside this loop (or loops nested in it)
            let first = m.assigns.partition_point(|a| a.span.start < l.span.start);
            let body = m
                .assigns
                .get(first..)
                .unwrap_or(&[])
                .iter()
                .take_while(|a| a.span.start < l.span.end);
            hit[li] = body.clone().any(|a| {
                if !l.span.contains(a.span) || a.ctx.loop_.is_none() {
                    return false;
                }
                let left = m.text(a.left);
                if let Some(node) = m.node(a.left)
                    && node.node_kind() == "subscript"
                {
                    // `a[i][j] = ...` indexes the array `a` (row `i`, then column `j`)
                    let mut base = crate::analysis::facts::field::get(
                        node,
                        crate::analysis::facts::field::VALUE,
                    );
                    let mut outer_idx = String::new();
                    while let Some(b) = base.filter(|b| b.node_kind() == "subscript") {
                        if let Some(i) = crate::analysis::facts::field::get(
                            b,
                            crate::analysis::facts::field::SUBSCRIPT,
                        ) {
                            outer_idx.push_str(m.node_text(i));
                            outer_idx.push(' ');
                        }
                        base = crate::analysis::facts::field::get(
                            b,
                            crate::analysis::facts::field::VALUE,
                        );
                    }
                    let arr = base.map(|v| m.node_text(v)).unwrap_or("");
                    // all of `[...]`: `a[:, i]` holds two subscript fields
                    let idx = crate::analysis::facts::field::get(
                        node,
                        crate::analysis::facts::field::VALUE,
                    )
                    .map_or("", |v| index_text(m, v.end_byte(), node.end_byte()));
                    // `d[f"{col}_{i}"] = ...` writes a dict by key, and `a[:, i] = ...` (or
                    // `... = b[:, i]`) moves a whole column per iteration, `a[i, s:s + n] =
                    // ...` a block: none is element-wise work
                    // (nor a masked or fancy write, `viz[np.where(out[i, c] > 0)] = color`: a
                    // selection of the whole array per iteration)
                    if is_key(idx)
                        || block(idx)
                        || idx.contains(['(', '<', '>'])
                        || whole_axis(&outer_idx)
                        || local_dict(m, arr, l.span.start, l.ctx.func)
                        || slices_by(m, a, var)
                    {
                        return false;
                    }
                    // `a[i, j]` (a tuple index) and `range(a.shape[0])` only exist for arrays
                    let local = local_array(m, arr, l.span.start, l.ctx.func);
                    let array = local
                        || m.kinds.get(arr) == Some(&VarKind::Tensor)
                        || (idx.contains(',') && !idx.contains(':'))
                        || over_shape;
                    if array
                        && (super::words(idx).any(|w| w == var)
                            || super::words(&outer_idx).any(|w| w == var))
                    {
                        return !reduction_pass(m, a, var, l.span);
                    }
                    // Ex) for i in range(len(x)): b = int(x[i] / w); counts[b] += 1
                    // (a histogram: element i read, a local array written)
                    return local
                        && !idx.contains(':')
                        && m.subs.iter().any(|s| {
                            l.span.contains(s.value)
                                && m.text(s.value) != arr
                                && m.text(s.index) == var
                        });
                }
                if a.augmented && !left.contains('[') {
                    let from = m.subs.partition_point(|s| s.value.start < a.value.start);
                    let subs = m.subs.get(from..).unwrap_or(&[]);
                    return subs
                        .iter()
                        .take_while(|s| s.value.start < a.value.end)
                        .any(|s| {
                            a.value.contains(s.value)
                                && m.kinds.get(m.text(s.value)) == Some(&VarKind::Tensor)
                                && super::words(m.text(s.index)).any(|w| w == var)
                        });
                }
                false
            });
        }
        for (li, l) in m.loops.iter().enumerate() {
            if !hit[li] {
                continue;
            }
            let mut p = l.parent;
            let mut outer_hit = false;
            while let Some(pi) = p {
                if hit.get(pi as usize).copied().unwrap_or(false) {
                    outer_hit = true;
                    break;
                }
                p = m.loops.get(pi as usize).and_then(|pl| pl.parent);
            }
            if outer_hit {
                continue;
            }
            cx.at(
                &Self::META,
                l.line,
                l.col,
                l.end_line,
                "element-wise Python loop over an array: use one vectorised NumPy/torch expression"
                    .to_string(),
                None,
            );
        }
    }
}

/// `inter[c] += ((pred == c) & valid).sum()`: each iteration reduces whole arrays (one
/// vectorised pass per class or bin), reading no element by the loop variable. Also through
/// names the loop body binds before the write (`loss = (dist[mask].sum()) / n` ...
/// `losses[i] = torch.exp(loss)`: a per-sample loss over whole per-sample arrays).
fn reduction_pass(
    m: &crate::analysis::facts::Model<'_>,
    a: &crate::analysis::facts::Assign,
    var: &str,
    body: Span,
) -> bool {
    !m.subs
        .iter()
        .any(|s| a.value.contains(s.value) && super::words(m.text(s.index)).any(|w| w == var))
        && reduces(m, a.value, a.span.start, body, 0)
}

/// Does the expression at `value` reduce whole arrays: a reduction call in its text, or a name
/// bound earlier in the loop body (before byte `before`) to one that does?
fn reduces(
    m: &crate::analysis::facts::Model<'_>,
    value: Span,
    before: usize,
    body: Span,
    depth: u8,
) -> bool {
    const REDUCTIONS: &[&str] = &[
        ".sum(",
        ".mean(",
        ".count_nonzero(",
        ".any(",
        ".all(",
        ".max(",
        ".min(",
        ".norm(",
        ".dot(",
        ".std(",
        ".var(",
        ".median(",
        // the distinct values of a row or column (`np.unique(cols[i], return_counts=True)`)
        ".unique(",
    ];
    let v = m.text(value);
    if REDUCTIONS.iter().any(|r| v.contains(r)) {
        return true;
    }
    depth < 3
        && super::words(v).any(|w| {
            m.assigns.iter().any(|b| {
                body.contains(b.span)
                    && b.span.end <= before
                    && (m.text(b.left) == w
                        // (one of several names bound from one reduction: `values, counts =
                        // np.unique(col, return_counts=True)`)
                        || b.targets.iter().any(|t| m.text(*t) == w))
                    && reduces(m, b.value, b.span.start, body, depth + 1)
            })
        })
}

/// Does call `c` sit in a method of a class that derives from a PyTorch `Module`?
fn in_module_class(m: &Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    c.ctx
        .class
        .and_then(|k| m.classes.get(k as usize))
        .and_then(|k| k.bases)
        .is_some_and(|b| m.text(b).contains("Module"))
}
