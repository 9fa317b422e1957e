use crate::analysis::facts::{ValKind, VarKind};
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags row-by-row pandas: `for ... in df.iterrows()` / `itertuples()`,
    /// `df.apply(f, axis=1)`, and `for i in range(len(df))` loops indexing `df.loc` / `df.iloc`.
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
            if c.method.is_none() {
                continue;
            }
            match last {
                "iterrows" | "itertuples" => {
                    // reported on the loop that iterates it
                    let in_loop_header = m
                        .loops
                        .iter()
                        .find(|l| l.iter.is_some_and(|it| it.contains(c.span)));
                    if let Some(l) = in_loop_header {
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
                "apply" => {
                    let axis1 = m.kw(c, "axis").is_some_and(|a| {
                        (a.vkind == ValKind::Int && m.text(a.value) == "1")
                            || m.text(a.value).contains("columns")
                    });
                    if axis1 {
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
            let Some(it) = l.iter else { continue };
            let t = m.text(it);
            let Some(inner) = t
                .strip_prefix("range(len(")
                .and_then(|s| s.strip_suffix("))"))
            else {
                continue;
            };
            if m.var_kind(inner) != Some(VarKind::DataFrame) {
                continue;
            }
            let indexed = m.subs.iter().any(|s| {
                s.loop_ as usize == li && {
                    let v = m.text(s.value);
                    v.starts_with(inner)
                        && [".loc", ".iloc", ".at", ".iat"]
                            .iter()
                            .any(|x| v.ends_with(x))
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
