use std::collections::HashSet;

use tree_sitter::Node;

use crate::analysis::model::{Applicability, Edit};

use super::patch::{self, Parsed, find_all};
use super::{Context, Gain, Proposal, Site, Strategy, VariantEdits, at, site};

super::declare_strategy! {
    /// ## What it does
    /// Opens an output file once instead of once per row: a `with open(path, "a") as fh:`
    /// inside a loop, whose path does not change from one iteration to the next, moves
    /// around the loop (indentation-aware); the writes stay where they were.
    ///
    /// ## Why is it faster?
    /// Each `open`/`close` is a handful of system calls, a path lookup and a flush of a tiny
    /// buffer: per row, they cost far more than the write itself. One open lets Python
    /// buffer the writes into large blocks.
    ///
    /// ## Example
    /// ```python
    /// for record in records:
    ///     with open("out.jsonl", "a") as fh:
    ///         fh.write(json.dumps(record) + "\n")
    /// ```
    ///
    /// Use instead:
    /// ```python
    /// with open("out.jsonl", "a") as fh:
    ///     for record in records:
    ///         fh.write(json.dumps(record) + "\n")
    /// ```
    ///
    /// ## Safety
    /// Safe for append mode when nothing else in the loop reads the file: the same bytes
    /// are appended in the same order. Applied only when the path and mode use no name bound
    /// inside the loop and the handle is only written to. The file is created even when the
    /// loop runs zero times, and lines reach the disk when the buffer fills rather than at
    /// every row (a log tailed during a long run, or a crash mid-loop, sees fewer lines). A
    /// path that changes per row (one file per record) is left alone.
    ///
    /// ## Expected gain
    /// 1.1–3x for loops dominated by small writes [est]; reference ml_rules.md §3.16 (IO in
    /// the loop) and §3.15 (per-row Python work).
    pub struct HoistFileOpen {
        id: "hoist-file-open",
        title: "Open output files once, outside the loop",
        kind: Basic,
        resource: Io,
        targets: [IoInLoop],
    }
}

impl Strategy for HoistFileOpen {
    fn meta(&self) -> &'static super::Meta {
        &Self::META
    }

    fn propose(&self, ctx: &Context<'_>) -> Result<Proposal, String> {
        let mut sites: Vec<Site> = Vec::new();
        let mut reasons = Vec::new();
        let mut refusals = Vec::new();
        let mut files = Vec::new();
        for (fi, file) in ctx.files.iter().enumerate() {
            let mut groups: Vec<LoopGroup> = Vec::new();
            for with in find_all(file.tree.root_node(), |n| n.kind() == "with_statement") {
                let Some(shape) = append_open(file, with) else {
                    continue;
                };
                let Some(first_loop) = patch::ancestor(with, &["for_statement", "while_statement"])
                else {
                    continue;
                };
                // The outermost loop of the function in which the path stays the same.
                let mut target: Option<Node<'_>> = None;
                let mut cur = Some(first_loop);
                while let Some(l) = cur {
                    if mentions_any(file, shape.open_call, &bound_in(file, l)) {
                        break;
                    }
                    target = Some(l);
                    cur = patch::ancestor(l, &["for_statement", "while_statement"]);
                }
                let Some(loop_) = target else {
                    refusals.push(format!(
                        "`{}` at {} changes per iteration (one file per row)",
                        file.text_of(shape.open_call),
                        at(file, with)
                    ));
                    continue;
                };
                if handle_used_outside(file, loop_, with, &shape.name) {
                    continue;
                }
                let Some(inner) = dedent_body(file, with) else {
                    continue;
                };
                let range = (loop_.start_byte(), loop_.end_byte());
                let header = format!("{} as {}", file.text_of(shape.open_call), shape.name);
                match groups.iter_mut().find(|g| g.0 == range) {
                    Some(g) => {
                        g.1.push(header);
                        g.2.push(inner);
                    }
                    None => groups.push((range, vec![header], vec![inner])),
                }
                let what = format!(
                    "`{}` at {} opens and closes the file every iteration of the loop at {}",
                    file.text_of(shape.open_call),
                    at(file, with),
                    at(file, loop_)
                );
                reasons.push(what.clone());
                sites.push(site(file, with, what));
            }
            let mut edits = Vec::new();
            for ((start, end), headers, inner) in groups {
                let header = format!("with {}:", headers.join(", "));
                if let Some(e) = patch::wrap_with(&file.text, start, end, &header, &inner) {
                    edits.push(e);
                }
            }
            if !edits.is_empty() {
                files.push((fi, edits));
            }
        }
        if files.is_empty() {
            return Err(if refusals.is_empty() {
                "no `with open(path, \"a\")` inside a loop".to_owned()
            } else {
                refusals.join("; ")
            });
        }
        reasons.extend(refusals.into_iter().map(|r| format!("left alone: {r}")));
        Ok(Proposal {
            sites,
            applicability: 0.7,
            reasons,
            gain: Gain {
                expected: 1.2,
                upper: 3.0,
                source: "ml_rules.md §3.16 IO in the loop [est 1.1–3x]".to_owned(),
                bound: None,
            },
            safety: Applicability::Safe,
            variants: vec![VariantEdits { name: None, files }],
        })
    }
}

/// The loop's byte range, the `open(...) as fh` headers hoisted around it, and the edits that
/// dedent each `with` body in place.
type LoopGroup = ((usize, usize), Vec<String>, Vec<Edit>);

struct AppendOpen<'t> {
    open_call: Node<'t>,
    name: String,
}

/// Ex) with open(path, "a") as fh:   (one item, append mode, a name bound)
fn append_open<'t>(file: &Parsed, with: Node<'t>) -> Option<AppendOpen<'t>> {
    let clause = patch::children(with)
        .into_iter()
        .find(|n| n.kind() == "with_clause")?;
    let [item] = patch::children(clause)[..] else {
        return None;
    };
    let value = item.child_by_field_name("value")?;
    // tree-sitter-python: `open(...) as fh` is an as_pattern inside the with_item.
    let (call, alias) = if value.kind() == "as_pattern" {
        let call = patch::children(value).into_iter().next()?;
        let alias = value.child_by_field_name("alias")?;
        (call, alias)
    } else {
        return None;
    };
    if call.kind() != "call" {
        return None;
    }
    let func = call.child_by_field_name("function")?;
    if file.text_of(func) != "open" || file.aliases.contains_key("open") {
        return None;
    }
    let args = patch::call_args(call, &file.text);
    let mode = args
        .positional
        .get(1)
        .copied()
        .or_else(|| args.keyword("mode"))?;
    let m = file.text_of(mode).trim_matches(|c| c == '"' || c == '\'');
    if mode.kind() != "string" || !matches!(m, "a" | "ab" | "at") || args.splat {
        return None;
    }
    let name = find_all(alias, |n| n.kind() == "identifier")
        .first()
        .map(|n| file.text_of(*n).to_owned())?;
    Some(AppendOpen {
        open_call: call,
        name,
    })
}

/// Names a loop binds: its targets, nested loop and comprehension targets, assignments,
/// `with ... as` names and walrus targets.
fn bound_in(file: &Parsed, loop_: Node<'_>) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in find_all(loop_, |n| {
        matches!(
            n.kind(),
            "for_statement"
                | "for_in_clause"
                | "assignment"
                | "augmented_assignment"
                | "named_expression"
                | "as_pattern"
        )
    }) {
        let target = match n.kind() {
            "for_statement" | "for_in_clause" | "assignment" | "augmented_assignment" => {
                n.child_by_field_name("left")
            }
            "named_expression" => n.child_by_field_name("name"),
            _ => n.child_by_field_name("alias"),
        };
        if let Some(t) = target {
            for id in find_all(t, |i| i.kind() == "identifier") {
                out.insert(file.text_of(id).to_owned());
            }
        }
    }
    out
}

fn mentions_any(file: &Parsed, node: Node<'_>, names: &HashSet<String>) -> bool {
    names
        .iter()
        .any(|n| patch::mentions(node, &file.text, n, None))
}

/// The handle is used other than `name.write(...)` / `name.writelines(...)` in the with body,
/// or at all elsewhere in the loop.
fn handle_used_outside(file: &Parsed, loop_: Node<'_>, with: Node<'_>, name: &str) -> bool {
    if patch::mentions(loop_, &file.text, name, Some(with)) {
        return true;
    }
    let Some(body) = with.child_by_field_name("body") else {
        return true;
    };
    find_all(body, |n| {
        n.kind() == "identifier" && file.text_of(n) == name
    })
    .into_iter()
    .any(|id| {
        let receiver_of_write = id.parent().is_some_and(|attr| {
            attr.kind() == "attribute"
                && attr
                    .child_by_field_name("object")
                    .is_some_and(|o| o.id() == id.id())
                && attr
                    .child_by_field_name("attribute")
                    .is_some_and(|a| matches!(file.text_of(a), "write" | "writelines"))
        });
        !receiver_of_write
    })
}

/// Replaces the `with` statement's lines by its body, one level less indented.
fn dedent_body(file: &Parsed, with: Node<'_>) -> Option<Edit> {
    let text = &file.text;
    let body = with.child_by_field_name("body")?;
    let start = patch::line_start(text, with.start_byte());
    let body_start = patch::line_start(text, body.start_byte());
    if body_start == start {
        // `with open(p, "a") as fh: fh.write(x)` on one line.
        return None;
    }
    if find_all(body, |n| n.kind() == "string")
        .into_iter()
        .any(|s| file.text_of(s).contains('\n'))
    {
        return None;
    }
    let end = patch::line_end(text, with.end_byte());
    let outer = patch::line_indent(text, with.start_byte());
    let inner = patch::line_indent(text, body.start_byte());
    let mut content = String::new();
    for line in text.get(body_start..end)?.split_inclusive('\n') {
        match line.strip_prefix(inner.as_str()) {
            Some(rest) => {
                content.push_str(&outer);
                content.push_str(rest);
            }
            None if line.trim().is_empty() => content.push_str(line),
            None => return None,
        }
    }
    Some(Edit {
        start,
        end,
        content,
    })
}
