use crate::analysis::facts::NodeKind;
use crate::analysis::rule::{Checker, Rule, RuleMeta};
use crate::declare_rule;

declare_rule! {
    /// ## What it does
    /// Flags file reads and writes inside a step loop: `open()`, `json.load`, `pickle.load`,
    /// `np.load`, `torch.load`, `pd.read_*`, `np.save`, `json.dump`, `to_csv`, when not under a
    /// `step % N == 0` guard. (Checkpoints with `torch.save` are EA503; image decoding EA502.)
    ///
    /// Reported on the line of the read or write call; for a
    /// `with open(...) as f:` (also `gzip.open`, `bz2.open`, `lzma.open`) whose body reads or writes
    /// through `f` (`pickle.dump(obj, f)`), once, on the `open(` line.
    ///
    /// ## Why is this slow?
    /// The training process blocks on the disk every step while the GPU waits. Reads belong in
    /// a `Dataset` served by `DataLoader` workers (in parallel, ahead of the step) or in memory
    /// before the loop.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    ///
    /// for path in shard_paths:
    ///     x = np.load(path)
    ///     loss = model(x).sum()
    ///     loss.backward()
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// from torch.utils.data import DataLoader
    ///
    /// loader = DataLoader(ShardDataset(shard_paths), batch_size=None, num_workers=4, persistent_workers=True)
    /// for x in loader:
    ///     loss = model(x).sum()
    ///     loss.backward()
    /// ```
    ///
    /// ## Fix safety
    /// No automatic fix: moving reads into a `Dataset` changes the data flow.
    pub(crate) struct IoInLoop {
        id: "EA501",
        name: "file-io-in-step-loop",
        category: IoInLoop,
        resource: Io,
        severity: Medium,
    }
}

impl Rule for IoInLoop {
    fn meta(&self) -> &'static RuleMeta {
        &Self::META
    }

    // fires in a step or record loop, or on a file's kind: nothing beyond the engine's triggers
    fn triggers(&self) -> crate::analysis::prefilter::Triggers {
        crate::analysis::prefilter::Triggers::Engine
    }

    fn check(&self, cx: &mut Checker<'_>) {
        let m = cx.m;
        for c in &m.calls {
            if c.ctx.getitem || c.ctx.in_except {
                continue;
            }
            let q = m.qual(c);
            let last = m.last_name(c);
            let io = opens_file(m, c)
                || matches!(
                    q.as_ref(),
                    "json.load"
                        | "json.dump"
                        | "pickle.load"
                        | "pickle.dump"
                        | "numpy.load"
                        | "numpy.save"
                        | "numpy.savez"
                        | "numpy.loadtxt"
                        | "torch.load"
                        | "h5py.File"
                        | "yaml.safe_load"
                )
                || (q.starts_with("pandas.read_"))
                || (c.method.is_some() && matches!(last, "to_csv" | "to_parquet" | "to_json"));
            if !io {
                continue;
            }
            let Some(s) = super::step_ctx(m, c) else {
                continue;
            };
            if s.mod_guard || feeds_image_decode(m, c) || writes_opened_handle(m, c) {
                continue;
            }
            cx.at_call(
                &Self::META,
                c,
                format!("`{}` in the step loop blocks on the disk every step; read in a Dataset with DataLoader workers, or once before the loop", m.text(c.func)),
                None,
            );
        }
    }
}

/// `open(...)`, also through a compressing module (`gzip.open`, `bz2.open`, `lzma.open`) or
/// `io.open` / `codecs.open`.
fn opens_file(m: &crate::analysis::facts::Model<'_>, c: &crate::analysis::facts::Call) -> bool {
    (c.method.is_none() && m.text(c.func) == "open")
        || matches!(
            m.qual(c).as_ref(),
            "gzip.open" | "bz2.open" | "lzma.open" | "io.open" | "codecs.open"
        )
}

/// `with gzip.open(path, "wb") as f: pickle.dump(obj, f)`: a read or write through the handle
/// of an enclosing `with` that opens the file, reported once, on the `with`'s `open(` line.
fn writes_opened_handle(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    if opens_file(m, c) {
        return false;
    }
    let args: Vec<&str> = m.call_args(c).iter().map(|a| m.text(a.value)).collect();
    let Some(mut cur) = m.node(c.span) else {
        return false;
    };
    for _ in 0..64 {
        let Some(p) = cur.parent() else { return false };
        cur = p;
        if p.node_kind() != "with_statement" {
            continue;
        }
        let mut w = p.walk();
        let clauses: Vec<_> = p
            .named_children(&mut w)
            .filter(|k| k.node_kind() == "with_clause")
            .collect();
        for clause in clauses {
            let mut ic = clause.walk();
            for item in clause.named_children(&mut ic) {
                let Some(pat) = item
                    .named_child(0)
                    .filter(|n| n.node_kind() == "as_pattern")
                else {
                    continue;
                };
                let (Some(value), Some(alias)) =
                    (pat.named_child(0), pat.child_by_field_name("alias"))
                else {
                    continue;
                };
                let handle = m.node_text(alias);
                if args.contains(&handle)
                    && m.calls.iter().any(|o| {
                        o.span.start == value.start_byte()
                            && o.span.end == value.end_byte()
                            && opens_file(m, o)
                    })
                {
                    return true;
                }
            }
        }
    }
    false
}

/// `with open(path, "rb") as f: img = Image.open(f)`: the handle is the decoder's input, so the
/// read is the image decode's own, which EA502 reports.
fn feeds_image_decode(
    m: &crate::analysis::facts::Model<'_>,
    c: &crate::analysis::facts::Call,
) -> bool {
    use crate::analysis::facts::Span;
    let Some(n) = m.node(c.span) else {
        return false;
    };
    let Some(pat) = n.parent().filter(|p| p.node_kind() == "as_pattern") else {
        return false;
    };
    let Some(alias) = pat.child_by_field_name("alias") else {
        return false;
    };
    let handle = m
        .src
        .get(alias.start_byte()..alias.end_byte())
        .unwrap_or("");
    let Some(with) = pat
        .parent()
        .and_then(|i| i.parent())
        .and_then(|cl| cl.parent())
        .filter(|w| w.node_kind() == "with_statement")
    else {
        return false;
    };
    let body = Span::of(with);
    m.calls.iter().any(|d| {
        body.contains(d.span)
            && super::image_decode_in_loop::is_image_decode(m, d)
            && m.pos(d, 0).is_some_and(|a| m.text(a.value) == handle)
    })
}
