//! Fixes as data: byte-range edits, applied bottom-up, overlaps skipped, result re-parsed.

use super::facts::{Call, Model};
use super::model::{Edit, Fix};

/// Why a set of fixes could not be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FixError {
    /// An edit points outside the file or inside a UTF-8 character.
    #[error(
        "edit {start}..{end} is outside the file or splits a character; re-run the analysis on the current file"
    )]
    OutOfRange {
        /// First byte.
        start: usize,
        /// End byte.
        end: usize,
    },
    /// The fixed file has syntax errors the original did not have.
    #[error(
        "the fixed file no longer parses (first error at {line}:{column}); the fix was not applied"
    )]
    NewSyntaxError {
        /// 1-based line.
        line: usize,
        /// 1-based column (bytes).
        column: usize,
    },
    /// tree-sitter could not parse at all.
    #[error("tree-sitter could not parse the file")]
    Parser,
}

fn overlaps(a: &Edit, b: &Edit) -> bool {
    if a.start == b.start {
        return true;
    }
    if a.start == a.end {
        return b.start < a.start && a.start < b.end;
    }
    if b.start == b.end {
        return a.start < b.start && b.start < a.end;
    }
    a.start < b.end && b.start < a.end
}

fn error_count(src: &str) -> Result<(usize, Option<(usize, usize)>), FixError> {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|_| FixError::Parser)?;
    let tree = parser.parse(src, None).ok_or(FixError::Parser)?;
    let root = tree.root_node();
    if !root.has_error() {
        return Ok((0, None));
    }
    let mut count = 0;
    let mut first = None;
    let mut cursor = root.walk();
    'walk: loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            count += 1;
            if first.is_none() {
                let p = n.start_position();
                first = Some((p.row + 1, p.column + 1));
            }
        } else if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    Ok((count.max(1), first))
}

/// Applies fixes: a fix whose edits overlap an earlier accepted fix is skipped whole; edits are
/// applied bottom-up; the result must not have more syntax errors than the input.
pub fn apply_fixes(source: &str, fixes: &[&Fix]) -> Result<String, FixError> {
    let mut accepted: Vec<&Edit> = Vec::new();
    for fix in fixes {
        for e in &fix.edits {
            if e.start > e.end
                || e.end > source.len()
                || !source.is_char_boundary(e.start)
                || !source.is_char_boundary(e.end)
            {
                return Err(FixError::OutOfRange {
                    start: e.start,
                    end: e.end,
                });
            }
        }
        let clash = fix.edits.iter().enumerate().any(|(i, e)| {
            accepted.iter().any(|a| overlaps(a, e)) || fix.edits[..i].iter().any(|o| overlaps(o, e))
        });
        if !clash {
            accepted.extend(fix.edits.iter());
        }
    }
    accepted.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut out = source.to_string();
    for e in accepted {
        out.replace_range(e.start..e.end, &e.content);
    }
    let (before, _) = error_count(source)?;
    let (after, first) = error_count(&out)?;
    if after > before {
        let (line, column) = first.unwrap_or((1, 1));
        return Err(FixError::NewSyntaxError { line, column });
    }
    Ok(out)
}

/// An edit adding `text` (e.g. `pin_memory=True`) as the last argument of a call.
pub(crate) fn add_kwarg(m: &Model<'_>, c: &Call, text: &str) -> Option<Edit> {
    if c.args_span.end <= c.args_span.start {
        return None;
    }
    let last_end = m
        .call_args(c)
        .iter()
        .map(|a| a.value.end)
        .chain(c.splat.map(|s| s.end))
        .max();
    let args_text = m.text(c.args_span);
    if !args_text.starts_with('(') || !args_text.ends_with(')') {
        return None;
    }
    Some(match last_end {
        Some(end) => Edit {
            start: end,
            end,
            content: format!(", {text}"),
        },
        None => Edit {
            start: c.args_span.start + 1,
            end: c.args_span.start + 1,
            content: text.to_string(),
        },
    })
}

/// An edit that turns a boolean DataLoader switch on: `name=True` added when the call does
/// not give it, or its literal `False` replaced where the call writes one (`pin_memory=False`,
/// by keyword or at position `pos`; see [`crate::analysis::resolve::switch_off_as_written`]).
pub(crate) fn enable_switch(m: &Model<'_>, c: &Call, name: &str, pos: usize) -> Option<Edit> {
    if m.kw(c, name).or_else(|| m.pos(c, pos)).is_none() {
        return add_kwarg(m, c, &format!("{name}=True"));
    }
    crate::analysis::resolve::written_false(m, c, name, pos).map(|a| Edit {
        start: a.value.start,
        end: a.value.end,
        content: "True".to_string(),
    })
}

/// The start of the line holding `byte`, and its indentation.
pub(crate) fn line_start_indent(src: &str, byte: usize) -> (usize, &str) {
    let start = src
        .get(..byte)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1);
    let rest = src.get(start..).unwrap_or("");
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    (start, rest.get(..n).unwrap_or(""))
}

/// An edit inserting a whole line after the top-level imports (or at the top of the file).
pub(crate) fn insert_after_imports(m: &Model<'_>, line: &str) -> Edit {
    let at = match m.last_import_end {
        Some(end) => m
            .src
            .get(end..)
            .and_then(|s| s.find('\n'))
            .map_or(m.src.len(), |i| end + i + 1),
        None => 0,
    };
    let needs_nl = at == m.src.len() && !m.src.is_empty() && !m.src.ends_with('\n');
    Edit {
        start: at,
        end: at,
        content: if needs_nl {
            format!("\n{line}\n")
        } else {
            format!("{line}\n")
        },
    }
}

/// The local name bound to the `torch` module (`torch`, or `T` after `import torch as T`); of
/// several (`import torch` and `import torch as t`), the least name (`t`), as the strategies'
/// patches pick (`strategies::patch`), so the same file always gets the same fix.
pub(crate) fn torch_name<'s>(m: &Model<'s>) -> Option<&'s str> {
    m.imports
        .iter()
        .filter(|(k, v)| v.as_str() == "torch" && !k.is_empty())
        .map(|(k, _)| *k)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::Applicability;

    fn fix(edits: Vec<(usize, usize, &str)>) -> Fix {
        Fix {
            applicability: Applicability::Safe,
            edits: edits
                .into_iter()
                .map(|(start, end, c)| Edit {
                    start,
                    end,
                    content: c.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn applies_bottom_up_and_skips_overlaps() {
        let src = "f(a)\ng(b)\n";
        let a = fix(vec![(3, 3, ", x=1")]);
        let b = fix(vec![(8, 8, ", y=2")]);
        let c = fix(vec![(3, 3, ", z=3")]);
        let out = apply_fixes(src, &[&a, &b, &c]);
        assert_eq!(out, Ok("f(a, x=1)\ng(b, y=2)\n".to_string()));
    }

    #[test]
    fn rejects_a_fix_that_breaks_the_file() {
        let src = "f(a)\n";
        let bad = fix(vec![(3, 3, ", (")]);
        assert!(matches!(
            apply_fixes(src, &[&bad]),
            Err(FixError::NewSyntaxError { .. })
        ));
    }

    #[test]
    fn rejects_out_of_range_and_split_chars() {
        let src = "é = 1\n";
        assert!(matches!(
            apply_fixes(src, &[&fix(vec![(1, 1, "x")])]),
            Err(FixError::OutOfRange { .. })
        ));
        assert!(matches!(
            apply_fixes(src, &[&fix(vec![(0, 99, "x")])]),
            Err(FixError::OutOfRange { .. })
        ));
    }
}
