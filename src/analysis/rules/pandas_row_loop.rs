use crate::analysis::facts::NodeKind;
use crate::analysis::facts::{ValKind, VarKind};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags row-by-row pandas: `for ... in df.iterrows()` / `itertuples()`,
    /// `df.apply(f, axis=1)` (also tqdm's `progress_apply`), and `for i in range(len(df))` (or `range(df.shape[0])`) loops
    /// (also in a progress bar, `tqdm(range(len(df)))`) indexing `df.loc` / `df.iloc`, or a
    /// column by the row (`df["body"][i]`, `df.file_name[i]`), also in a loop
    /// nested in it (`for col in cols: df[col + "_x"].iloc[i]`).
    /// Not reported for a row loop that runs a model on each row (an evaluation over a table of
    /// questions, a Hugging Face `pipeline` per row, `df.apply(f, axis=1)` with a function `f`
    /// of the file that runs one): the forward pass dwarfs the row's cost; so does a request
    /// to a service per row (`df.apply(lambda row: test_api_request(row.tolist()), axis=1)`,
    /// `requests.post(...)`). Nor for a frame cut to a known
    /// handful of rows (`df.head()`, `df[:5]`,
    /// `df.sample(10)`, a frame written out in the file, `pd.DataFrame({'c1': [10, 11, 12]})`
    /// (also its data bound to a name first),
    /// directly or through the variable it is assigned to): a few rows cost
    /// nothing, whatever the loop does. Nor are rows handed to a process pool
    /// (`for r in pool.imap(write_row, df.iterrows()):`): their work already runs in parallel.
    ///
    /// Reported on the `for` line of the row loop, or on the `apply(..., axis=1)` call.
    ///
    /// ## Why is this slow?
    /// Each row becomes a Python object (a `Series` for `iterrows`), so the work runs in the
    /// interpreter one row at a time. Column-wise vectorised expressions run in compiled code
    /// over whole arrays, typically 10–100x faster.
    ///
    /// ## Example
    /// ```python
    /// import pandas as pd
    ///
    /// df = pd.read_csv("events.csv")
    /// df["score"] = df.apply(lambda r: r["clicks"] * 0.3 + r["views"] * 0.1, axis=1)
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// import pandas as pd
    ///
    /// df = pd.read_csv("events.csv")
    /// df["score"] = df["clicks"] * 0.3 + df["views"] * 0.1
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: vectorising needs the row function rewritten.
    pub(crate) struct PandasRowLoop {
        id: "EA601",
        name: "pandas-row-loop",
        category: PandasRowLoop,
        resource: Cpu,
        severity: High,
    }
}

impl Rule for PandasRowLoop {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // also outside hot loops: a pandas row loop, an axis=1 apply, a DataFrame
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        use crate::analysis::prefilter::{Context, Triggers, t};
        Triggers::EngineOr(
            const {
                &[
                    t::method("iterrows"),
                    t::method("itertuples"),
                    t::code("axis"),
                    t::part("df", Context::ForHeader),
                    t::whole("pd", Context::Receiver),
                    t::code("pandas"),
                ]
            },
        )
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        for c in &m.calls {
            let last = m.last_name(c);
            // a branch that never runs as shipped (`if "info" in args.data:`) costs nothing
            if c.method.is_none() || m.dead(&c.ctx) {
                continue;
            }
            match last {
                "iterrows" | "itertuples" => {
                    // reported on the loop that iterates it
                    let in_loop_header = m
                        .loops
                        .iter()
                        .find(|l| l.iter.is_some_and(|it| it.contains(c.span)));
                    let few = c.recv.is_some_and(|r| few_rows(m, r));
                    // rows handed to a process pool (`pool.imap(write_row, df.iterrows())`): each
                    // row's work already runs in parallel, the loop only collects results
                    let pooled = m.calls.iter().any(|k| {
                        k.method.is_some()
                            && matches!(
                                m.last_name(k),
                                "imap" | "imap_unordered" | "map" | "starmap" | "map_async"
                            )
                            && k.args_span.contains(c.span)
                    });
                    // a loop that runs a model on each row (an evaluation over a question
                    // table): the forward pass costs milliseconds, the row object microseconds
                    let model_rows = in_loop_header
                        .is_some_and(|l| l.info.model_call || l.info.step || runs_pipeline(m, l));
                    if let Some(l) = in_loop_header.filter(|_| !few && !pooled && !model_rows) {
                        cx.at(
                            &Self::META,
                            l.line,
                            l.col,
                            l.end_line,
                            format!("`{last}()` loop handles one row at a time in Python: use column-wise vectorised operations"),
                            None,
                        );
                    }
                }
                "apply" | "progress_apply" => {
                    let axis1 = m.kw(c, "axis").is_some_and(|a| {
                        (a.vkind == ValKind::Int && m.text(a.value) == "1")
                            || m.text(a.value).contains("columns")
                    });
                    // (a function of the file that runs a model on each row, `df.apply(
                    // transcribe_audio, axis=1)`: the forward pass dwarfs the row's cost)
                    // (or one that sends each row to a service, `lambda row:
                    // test_api_request(row.tolist())`: the round trip dwarfs it too)
                    let model_rows = m.pos(c, 0).is_some_and(|f| {
                        let name = m.text(f.value);
                        let per_row = |k: &crate::analysis::facts::Call| {
                            crate::analysis::resolve::runs_model(m, k) || requests_service(m, k)
                        };
                        m.funcs.iter().enumerate().any(|(fi, func)| {
                            m.text(func.name) == name
                                && m.calls
                                    .iter()
                                    .any(|k| k.ctx.func == u32::try_from(fi).ok() && per_row(k))
                        }) || (m.node(f.value).is_some_and(|n| n.node_kind() == "lambda")
                            && m.calls
                                .iter()
                                .any(|k| f.value.contains(k.span) && requests_service(m, k)))
                    });
                    if axis1 && !model_rows && !c.recv.is_some_and(|r| few_rows(m, r)) {
                        cx.at_call(
                            &Self::META,
                            c,
                            "`apply(..., axis=1)` calls a Python function per row: use column-wise vectorised operations".to_string(),
                            None,
                        );
                    }
                }
                _ => {}
            }
        }
        // for i in range(len(df)): df.loc[i, ...]
        for (li, l) in m.loops.iter().enumerate() {
            let Some(it) = l.iter.filter(|_| !m.dead(&l.ctx)) else {
                continue;
            };
            // a loop that runs a model on each row, as for `iterrows()` above
            if l.info.model_call || l.info.step || runs_pipeline(m, l) {
                continue;
            }
            let Some(inner) = range_over_rows(m.text(it)) else {
                continue;
            };
            if m.var_kind(inner) != Some(VarKind::DataFrame) {
                continue;
            }
            let targets: Vec<&str> = l.targets.iter().map(|t| m.text(*t)).collect();
            // (also in a loop nested in it: `for i in range(df.shape[0]): for col in cols:
            // df[col + "_x"].iloc[i]`)
            let indexed = m.subs.iter().any(|s| {
                (s.loop_ as usize == li || l.span.contains(s.value)) && {
                    let v = m.text(s.value);
                    // `df.loc[i, ...]`, or a column indexed by the row (`df["body"][i]`, also
                    // as an attribute: `df.file_name[i]`)
                    v.starts_with(inner)
                        && ([".loc", ".iloc", ".at", ".iat"]
                            .iter()
                            .any(|x| v.ends_with(x))
                            || (v.get(inner.len()..).is_some_and(|r| {
                                r.starts_with('[')
                                    || r.strip_prefix('.').is_some_and(|col| {
                                        !col.is_empty()
                                            && col
                                                .chars()
                                                .all(|ch| ch.is_alphanumeric() || ch == '_')
                                    })
                            }) && targets.contains(&m.text(s.index))))
                }
            });
            if indexed {
                cx.at(
                    &Self::META,
                    l.line,
                    l.col,
                    l.end_line,
                    "row-by-row loop over a DataFrame: use column-wise vectorised operations"
                        .to_string(),
                    None,
                );
            }
        }
    }
}

/// The frame a `for` over its row numbers iterates: `range(len(df))`, `range(0, len(df))`,
/// `range(df.shape[0])`, `range(0, df.shape[0])`, also in a progress bar.
fn range_over_rows(t: &str) -> Option<&str> {
    // (also in a progress bar: `tqdm(range(len(df)))`, `trange(len(df))`)
    let t = t
        .strip_prefix("tqdm(")
        .and_then(|r| r.strip_suffix(')'))
        .map_or(t, str::trim);
    let args = t
        .strip_prefix("range(")
        .or_else(|| t.strip_prefix("trange("))?
        .strip_suffix(')')?;
    range_args(args)
}

/// The frame a `range(...)`'s arguments count the rows of (`len(df)`, `0, df.shape[0]`).
fn range_args(args: &str) -> Option<&str> {
    let last = args.strip_prefix("0,").map_or(args, str::trim_start).trim();
    last.strip_prefix("len(")
        .and_then(|s| s.strip_suffix(')'))
        .or_else(|| last.strip_suffix(".shape[0]"))
        .filter(|f| {
            f.chars()
                .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.')
        })
}

/// Does call `k` send a request to a service (`requests.post(...)`, `httpx.get(...)`, a
/// function named for one, `test_api_request(row)`)?
fn requests_service(
    m: &crate::analysis::facts::Model<'_>,
    k: &crate::analysis::facts::Call,
) -> bool {
    let q = m.qual(k);
    q.starts_with("requests.")
        || q.starts_with("httpx.")
        || q.starts_with("urllib.request.")
        || m.last_name(k)
            .to_ascii_lowercase()
            .split('_')
            .any(|w| w == "request")
}

/// At most this many rows make a row loop harmless.
const FEW_ROWS: i64 = 100;

/// Is `frame` a DataFrame expression cut to at most [`FEW_ROWS`] known rows: `x.head()`,
/// `x.head(n)` / `x.tail(n)` / `x.sample(n)`, `x[:n]` / `x.iloc[:n]` (n a known integer), or a
/// name every assignment of which is one of these?
// Ex) test = pd.read_csv("data.csv")[:5]; for i, row in test.iterrows(): ...
fn few_rows(m: &crate::analysis::facts::Model<'_>, frame: crate::analysis::facts::Span) -> bool {
    use crate::analysis::facts::Val;
    let known_few = |v: Val| matches!(v, Val::Int(n) if (0..=FEW_ROWS).contains(&n));
    let cut = |value: crate::analysis::facts::Span| {
        if let Some(c) = m.call_at(value) {
            // a frame written out in the file (`pd.DataFrame({'c1': [10, 11, 12], ...})`)
            // (also through the name it is bound to: `dict_for_data_frame = {"name": [...]}`)
            if m.last_name(c) == "DataFrame" {
                return m
                    .pos(c, 0)
                    .and_then(|a| match m.node(a.value)?.node_kind() {
                        "identifier" => crate::analysis::as_shipped::binding(
                            m,
                            m.text(a.value),
                            c.span.start,
                            c.ctx.func,
                        )
                        .and_then(|b| m.node(b.value)),
                        _ => m.node(a.value),
                    })
                    .is_some_and(|data| written_out_rows(data).is_some_and(|n| n <= FEW_ROWS));
            }
            return match (
                c.method.map(|s| m.text(s)),
                m.pos(c, 0).or_else(|| m.kw(c, "n")),
            ) {
                (Some("head" | "tail"), None) => c.splat.is_none() && !c.star,
                (Some("head" | "tail" | "sample"), Some(n)) => {
                    known_few(m.resolve_expr(n.value, c.span.start, c.ctx.func))
                }
                _ => false,
            };
        }
        let text = m.text(value).trim_end();
        let Some(open) = text.strip_suffix(']').and_then(|t| t.rfind('[')) else {
            return false;
        };
        let slice = &text[open + 1..text.len() - 1];
        let Some((lo, hi)) = slice.split_once(':') else {
            return false;
        };
        let int = |s: &str| s.trim().parse::<i64>().ok();
        let lo = if lo.trim().is_empty() {
            Some(0)
        } else {
            int(lo)
        };
        matches!((lo, int(hi)), (Some(lo), Some(hi)) if 0 <= lo && lo <= hi && hi - lo <= FEW_ROWS)
    };
    if cut(frame) {
        return true;
    }
    let name = m.text(frame);
    if !name.chars().all(|ch| ch == '_' || ch.is_alphanumeric()) {
        return false;
    }
    let mut assigned = m
        .assigns
        .iter()
        .filter(|a| !a.augmented && a.targets.len() == 1 && m.text(a.targets[0]) == name)
        .peekable();
    assigned.peek().is_some() && assigned.all(|a| cut(a.value))
}

/// How many rows a frame's data written out holds: a list of rows (`[[1, 'a'], [2, 'b']]`), or
/// a dict of columns each a list (`{'c1': [10, 11, 12], 'c2': [...]}`, its longest); `None`
/// for anything else.
fn written_out_rows(data: tree_sitter::Node<'_>) -> Option<i64> {
    let count = |n: tree_sitter::Node<'_>| {
        matches!(n.node_kind(), "list" | "tuple")
            .then(|| i64::try_from(n.named_child_count()).ok())
            .flatten()
    };
    match data.node_kind() {
        "list" => count(data),
        "dictionary" => {
            let mut cursor = data.walk();
            let mut longest = 0;
            for pair in data.named_children(&mut cursor) {
                if pair.node_kind() != "pair" {
                    return None;
                }
                longest = longest.max(count(pair.child_by_field_name("value")?)?);
            }
            Some(longest)
        }
        _ => None,
    }
}

/// Does the loop (also a loop nested in it) call a Hugging Face `pipeline(...)` bound in the
/// file, a model behind a library call (`classifier(chunk, candidate_labels=labels)`)?
// Ex) classifier = pipeline("zero-shot-classification") ... for i, row in df.iterrows(): classifier(row.text, ...)
fn runs_pipeline(m: &crate::analysis::facts::Model<'_>, l: &crate::analysis::facts::Loop) -> bool {
    // (the names bound to a pipeline first: most files bind none, and their loops are not
    // searched)
    let pipelines: Vec<&str> = m
        .assigns
        .iter()
        .filter(|a| {
            a.targets.len() == 1
                && a.rhs_call
                    .and_then(|i| m.calls.get(i as usize))
                    .is_some_and(|p| {
                        m.last_name(p) == "pipeline" && m.qual(p) == "transformers.pipeline"
                    })
        })
        .map(|a| m.text(a.left))
        .collect();
    !pipelines.is_empty()
        && m.calls.iter().any(|k| {
            k.method.is_none() && l.span.contains(k.span) && pipelines.contains(&m.text(k.func))
        })
}
