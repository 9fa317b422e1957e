//! Source transformations for step 3: parse Python with tree-sitter, find the shapes a
//! strategy rewrites, express each rewrite as byte-range [`Edit`]s, apply them bottom-up,
//! re-parse, and render the unified diff.
//!
//! Every helper here is a pure function of the source text and its tree.

use std::collections::HashMap;

use similar::TextDiff;
use tree_sitter::{Node, Parser, Tree};

use crate::analysis::model::Edit;

/// Why a patch was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatchError {
    /// Two edits touch the same bytes.
    #[error("overlapping edits at bytes {0}..{1}")]
    Overlap(usize, usize),
    /// An edit points outside the file or inside a UTF-8 character.
    #[error("edit {0}..{1} is outside the file or splits a character")]
    OutOfRange(usize, usize),
    /// The patched file has syntax errors the original did not have.
    #[error("the patched file no longer parses ({after} syntax errors, {before} before)")]
    Syntax {
        /// Error nodes before.
        before: usize,
        /// Error nodes after.
        after: usize,
    },
    /// tree-sitter could not parse at all.
    #[error("tree-sitter-python could not be loaded")]
    Parser,
}

/// A parsed Python file: its relative path, its text and its syntax tree.
#[derive(Debug)]
pub struct Parsed {
    /// Path relative to the audited folder, `/`-separated.
    pub path: String,
    /// The source text.
    pub text: String,
    /// Its syntax tree.
    pub tree: Tree,
    /// Import aliases: bound name → qualified module path (`DL` → `torch.utils.data.DataLoader`).
    pub aliases: HashMap<String, String>,
}

impl Parsed {
    /// Parses `text`; `None` when tree-sitter cannot be loaded.
    #[must_use]
    pub fn new(path: &str, text: &str) -> Option<Self> {
        let tree = parse(text)?;
        let aliases = import_aliases(tree.root_node(), text);
        Some(Self {
            path: path.to_owned(),
            text: text.to_owned(),
            tree,
            aliases,
        })
    }

    /// The text of `node`.
    #[must_use]
    pub fn text_of(&self, node: Node<'_>) -> &str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    /// The fully qualified name of a dotted expression, through the import aliases
    /// (`DataLoader` → `torch.utils.data.DataLoader`, `nn.Linear` → `torch.nn.Linear`).
    #[must_use]
    pub fn qualified(&self, node: Node<'_>) -> Option<String> {
        let dotted = dotted_name(node, &self.text)?;
        let (head, rest) = match dotted.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (dotted.as_str(), None),
        };
        let base = self.aliases.get(head)?;
        Some(match rest {
            Some(r) => format!("{base}.{r}"),
            None => base.clone(),
        })
    }

    /// The name `torch` is bound to in this file (`torch`, or the alias of `import torch as t`).
    #[must_use]
    pub fn torch_name(&self) -> Option<&str> {
        self.aliases
            .iter()
            .filter(|(_, q)| q.as_str() == "torch")
            .map(|(name, _)| name.as_str())
            .min()
    }

    /// Whether the file imports torch in any form.
    #[must_use]
    pub fn imports_torch(&self) -> bool {
        self.aliases
            .values()
            .any(|q| q == "torch" || q.starts_with("torch."))
    }

    /// 1-based line of a byte offset.
    #[must_use]
    pub fn line_of(&self, byte: usize) -> usize {
        self.text
            .get(..byte)
            .map_or(1, |head| head.bytes().filter(|b| *b == b'\n').count() + 1)
    }

    /// Whether the module has an `if __name__ == "__main__":` guard at top level.
    #[must_use]
    pub fn has_main_guard(&self) -> bool {
        children(self.tree.root_node())
            .into_iter()
            .any(|n| is_main_guard(n, &self.text))
    }

    /// The `torch` name to use in generated code, plus the import edit needed when the file
    /// does not bind `torch` yet.
    #[must_use]
    pub fn torch_for_codegen(&self) -> (String, Option<Edit>) {
        match self.torch_name() {
            Some(name) => (name.to_owned(), None),
            None => ("torch".to_owned(), Some(self.add_import("import torch"))),
        }
    }

    /// An edit adding `line` (e.g. `import concurrent.futures`) after the last top-level import,
    /// or after the module docstring when there is none.
    #[must_use]
    pub fn add_import(&self, line: &str) -> Edit {
        let at = self.after_imports();
        Edit {
            start: at,
            end: at,
            content: format!("{line}\n"),
        }
    }

    /// Byte offset of the start of the line after the last top-level import (or after the
    /// docstring, or 0).
    #[must_use]
    pub fn after_imports(&self) -> usize {
        let root = self.tree.root_node();
        let mut at = 0;
        for (i, child) in children(root).into_iter().enumerate() {
            let is_import = matches!(
                child.kind(),
                "import_statement" | "import_from_statement" | "future_import_statement"
            );
            let is_docstring = i == 0
                && child.kind() == "expression_statement"
                && child.named_child(0).is_some_and(|s| s.kind() == "string");
            if is_import || is_docstring {
                at = line_end(&self.text, child.end_byte());
            } else if child.kind() != "comment" {
                break;
            }
        }
        at
    }
}

/// Parses Python source; `None` only when the grammar cannot be loaded.
#[must_use]
pub fn parse(text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    parser.parse(text, None)
}

/// Number of `ERROR` and `MISSING` nodes in a tree.
#[must_use]
pub fn error_count(tree: &Tree) -> usize {
    let mut count = 0;
    walk(tree.root_node(), &mut |n| {
        if n.is_error() || n.is_missing() {
            count += 1;
        }
    });
    count
}

/// Applies edits bottom-up; refuses overlapping or out-of-range edits.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, PatchError> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    for pair in sorted.windows(2) {
        if let [a, b] = pair
            && b.start < a.end
        {
            return Err(PatchError::Overlap(b.start, a.end));
        }
    }
    let mut out = text.to_owned();
    for edit in sorted.iter().rev() {
        if edit.start > edit.end
            || edit.end > out.len()
            || !out.is_char_boundary(edit.start)
            || !out.is_char_boundary(edit.end)
        {
            return Err(PatchError::OutOfRange(edit.start, edit.end));
        }
        out.replace_range(edit.start..edit.end, &edit.content);
    }
    Ok(out)
}

/// Applies edits and re-parses: the result must not have more syntax errors than `text`.
pub fn apply_checked(text: &str, edits: &[Edit]) -> Result<String, PatchError> {
    let after = apply(text, edits)?;
    let before_tree = parse(text).ok_or(PatchError::Parser)?;
    let after_tree = parse(&after).ok_or(PatchError::Parser)?;
    let (before, after_errors) = (error_count(&before_tree), error_count(&after_tree));
    if after_errors > before {
        return Err(PatchError::Syntax {
            before,
            after: after_errors,
        });
    }
    Ok(after)
}

/// The unified diff of one file with `a/` and `b/` headers and 3 lines of context.
#[must_use]
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// Calls `f` on every node of the subtree, in document order.
pub fn walk<'t>(node: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    f(node);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, f);
    }
}

/// Every node of the subtree (in document order) for which `pred` holds.
#[must_use]
pub fn find_all<'t>(node: Node<'t>, pred: impl Fn(Node<'t>) -> bool) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    walk(node, &mut |n| {
        if pred(n) {
            out.push(n);
        }
    });
    out
}

/// The named children of a node.
#[must_use]
pub fn children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Named children, comments excluded.
#[must_use]
pub fn statements(block: Node<'_>) -> Vec<Node<'_>> {
    children(block)
        .into_iter()
        .filter(|n| n.kind() != "comment")
        .collect()
}

/// `a.b.c` for identifiers and attribute chains; `None` for anything else.
#[must_use]
pub fn dotted_name(node: Node<'_>, text: &str) -> Option<String> {
    match node.kind() {
        "identifier" => text.get(node.byte_range()).map(str::to_owned),
        "attribute" => {
            let object = node.child_by_field_name("object")?;
            let attr = node.child_by_field_name("attribute")?;
            Some(format!(
                "{}.{}",
                dotted_name(object, text)?,
                text.get(attr.byte_range())?
            ))
        }
        _ => None,
    }
}

/// The method name of a call `x.m(...)`, with the receiver node.
#[must_use]
pub fn method_call<'t>(call: Node<'t>, text: &str) -> Option<(Node<'t>, String)> {
    if call.kind() != "call" {
        return None;
    }
    let func = call.child_by_field_name("function")?;
    if func.kind() != "attribute" {
        return None;
    }
    let object = func.child_by_field_name("object")?;
    let attr = func.child_by_field_name("attribute")?;
    Some((object, text.get(attr.byte_range())?.to_owned()))
}

/// The arguments of a call: positional nodes and keyword name → keyword_argument node.
#[derive(Debug, Default)]
pub struct Args<'t> {
    /// Positional arguments in order.
    pub positional: Vec<Node<'t>>,
    /// Keyword arguments by name (the `keyword_argument` node).
    pub keywords: Vec<(String, Node<'t>)>,
    /// Whether `*args` or `**kwargs` appear (then nothing is known for sure).
    pub splat: bool,
}

impl<'t> Args<'t> {
    /// The value node of keyword `name`.
    #[must_use]
    pub fn keyword(&self, name: &str) -> Option<Node<'t>> {
        self.keywords
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, n)| n.child_by_field_name("value"))
    }
}

/// Splits a call's `argument_list`.
#[must_use]
pub fn call_args<'t>(call: Node<'t>, text: &str) -> Args<'t> {
    let mut args = Args::default();
    let Some(list) = call.child_by_field_name("arguments") else {
        return args;
    };
    if list.kind() != "argument_list" {
        // A generator argument: `f(x for x in y)`.
        args.positional.push(list);
        return args;
    }
    for arg in children(list) {
        match arg.kind() {
            "comment" => {}
            "keyword_argument" => {
                let name = arg
                    .child_by_field_name("name")
                    .and_then(|n| text.get(n.byte_range()))
                    .unwrap_or("")
                    .to_owned();
                args.keywords.push((name, arg));
            }
            "list_splat" | "dictionary_splat" => args.splat = true,
            _ => args.positional.push(arg),
        }
    }
    args
}

/// An edit that sets keyword `name=value` on a call; see [`set_keywords`].
#[must_use]
pub fn set_keyword(call: Node<'_>, text: &str, name: &str, value: &str) -> Option<Edit> {
    set_keywords(call, text, &[(name, value)])
        .into_iter()
        .next()
}

/// Edits that set keywords on a call: a keyword already present gets its value replaced; the
/// others are inserted together after the last argument, keeping a trailing comma and a
/// one-argument-per-line layout. Empty when the call has no argument list.
#[must_use]
pub fn set_keywords(call: Node<'_>, text: &str, pairs: &[(&str, &str)]) -> Vec<Edit> {
    let args = call_args(call, text);
    let mut edits = Vec::new();
    let mut new: Vec<(&str, &str)> = Vec::new();
    for (name, value) in pairs {
        match args.keyword(name) {
            Some(existing) => edits.push(Edit {
                start: existing.start_byte(),
                end: existing.end_byte(),
                content: (*value).to_owned(),
            }),
            None => new.push((name, value)),
        }
    }
    if new.is_empty() {
        return edits;
    }
    let Some(list) = call.child_by_field_name("arguments") else {
        return Vec::new();
    };
    if list.kind() != "argument_list" {
        return Vec::new();
    }
    let items: Vec<Node<'_>> = children(list)
        .into_iter()
        .filter(|n| n.kind() != "comment")
        .collect();
    let close = list.end_byte().saturating_sub(1);
    let Some(last) = items.last() else {
        // Ex) f() → f(name=value)
        let joined: Vec<String> = new.iter().map(|(n, v)| format!("{n}={v}")).collect();
        edits.push(Edit {
            start: close,
            end: close,
            content: joined.join(", "),
        });
        return edits;
    };
    let between = text.get(last.end_byte()..close).unwrap_or("");
    let has_comma = between.trim_start().starts_with(',');
    let comma_end = last.end_byte() + between.find(',').map_or(0, |i| i + 1);
    let multiline = text
        .get(list.start_byte()..list.end_byte())
        .is_some_and(|s| s.contains('\n'));
    if multiline && between.contains('\n') {
        // One argument per line, maybe a trailing comma:
        //     f(
        //         a,
        //         b,
        //     )
        let indent = line_indent(text, last.start_byte());
        let mut content = String::new();
        if !has_comma {
            content.push(',');
        }
        let lines: Vec<String> = new
            .iter()
            .map(|(n, v)| format!("\n{indent}{n}={v}"))
            .collect();
        content.push_str(&lines.join(","));
        if has_comma {
            content.push(',');
        }
        let at = if has_comma {
            comma_end
        } else {
            last.end_byte()
        };
        edits.push(Edit {
            start: at,
            end: at,
            content,
        });
        return edits;
    }
    let content: String = new.iter().map(|(n, v)| format!(", {n}={v}")).collect();
    edits.push(Edit {
        start: last.end_byte(),
        end: if has_comma {
            comma_end
        } else {
            last.end_byte()
        },
        content,
    });
    edits
}

/// The leading whitespace of the line that contains `byte`.
#[must_use]
pub fn line_indent(text: &str, byte: usize) -> String {
    let start = line_start(text, byte);
    text.get(start..)
        .unwrap_or("")
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// Byte offset of the start of the line containing `byte`.
#[must_use]
pub fn line_start(text: &str, byte: usize) -> usize {
    text.get(..byte)
        .and_then(|head| head.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// Byte offset just after the newline ending the line containing `byte` (or the file's end).
#[must_use]
pub fn line_end(text: &str, byte: usize) -> usize {
    let from = byte.saturating_sub(usize::from(
        byte > 0 && text.as_bytes().get(byte - 1) == Some(&b'\n'),
    ));
    match text.get(from..).and_then(|tail| tail.find('\n')) {
        Some(i) => from + i + 1,
        None => text.len(),
    }
}

/// The file's indentation unit: a tab, or the smallest positive run of leading spaces (4 when
/// nothing is indented).
#[must_use]
pub fn indent_unit(text: &str) -> String {
    let mut smallest: Option<usize> = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with('\t') {
            return "\t".to_owned();
        }
        let n = line.len() - line.trim_start_matches(' ').len();
        if n > 0 {
            smallest = Some(smallest.map_or(n, |s| s.min(n)));
        }
    }
    " ".repeat(smallest.unwrap_or(4).clamp(1, 8))
}

/// An edit inserting `lines` (already without indentation, one statement per element) on their
/// own lines just before the statement `node`, at its indentation.
#[must_use]
pub fn insert_before(text: &str, node: Node<'_>, lines: &[String]) -> Edit {
    let at = line_start(text, node.start_byte());
    let indent = line_indent(text, node.start_byte());
    let content: String = lines.iter().map(|l| format!("{indent}{l}\n")).collect();
    Edit {
        start: at,
        end: at,
        content,
    }
}

/// An edit inserting `lines` on their own lines just after the statement `node`, at its
/// indentation.
#[must_use]
pub fn insert_after(text: &str, node: Node<'_>, lines: &[String]) -> Edit {
    let indent = line_indent(text, node.start_byte());
    let at = line_end(text, node.end_byte());
    let needs_newline = at == text.len() && !text.ends_with('\n');
    let mut content = String::new();
    if needs_newline {
        content.push('\n');
    }
    for l in lines {
        content.push_str(&indent);
        content.push_str(l);
        content.push('\n');
    }
    Edit {
        start: at,
        end: at,
        content,
    }
}

/// An edit wrapping the statements `first..=last` (siblings in one block) in a compound header
/// such as `with torch.no_grad():`: the header takes their indentation and every line of the
/// range is indented by one more unit, except continuation lines inside multi-line strings.
#[must_use]
pub fn wrap(text: &str, root: Node<'_>, first: Node<'_>, last: Node<'_>, header: &str) -> Edit {
    let start = line_start(text, first.start_byte());
    let end = line_end(text, last.end_byte());
    let indent = line_indent(text, first.start_byte());
    let unit = indent_unit(text);
    // Lines that start inside a multi-line string keep their bytes.
    let strings: Vec<(usize, usize)> = find_all(root, |n| n.kind() == "string")
        .into_iter()
        .map(|n| (n.start_byte(), n.end_byte()))
        .filter(|(s, e)| *e > start && *s < end)
        .collect();
    let mut out = format!("{indent}{header}\n");
    let mut pos = start;
    let body = text.get(start..end).unwrap_or("");
    for line in body.split_inclusive('\n') {
        let inside_string = strings.iter().any(|(s, e)| *s < pos && pos < *e);
        if inside_string || line.trim().is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&unit);
            out.push_str(line);
        }
        pos += line.len();
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Edit {
        start,
        end,
        content: out,
    }
}

/// Like [`wrap`] for the statement spanning bytes `start..end`, after first applying `inner`
/// edits that lie inside that range: one edit that rewrites the inside and wraps it.
#[must_use]
pub fn wrap_with(
    text: &str,
    start: usize,
    end: usize,
    header: &str,
    inner: &[Edit],
) -> Option<Edit> {
    if inner.iter().any(|e| e.start < start || e.end > end) {
        return None;
    }
    let new_text = apply(text, inner).ok()?;
    let delta = new_text.len() as isize - text.len() as isize;
    let new_end = usize::try_from(end as isize + delta).ok()?;
    let tree = parse(&new_text)?;
    let root = tree.root_node();
    let mut node = root.descendant_for_byte_range(start, start)?;
    // Climb to the statement that starts here and spans to the end.
    while node.end_byte() < new_end {
        node = node.parent()?;
    }
    let stmt = statement_of(node).unwrap_or(node);
    let wrapped = wrap(&new_text, root, stmt, stmt, header);
    let line_from = line_start(text, start);
    let line_to = line_end(text, end);
    if wrapped.start != line_from {
        return None;
    }
    let tail = new_text.get(wrapped.end..)?;
    let orig_tail = text.get(line_to..)?;
    (tail == orig_tail).then_some(Edit {
        start: line_from,
        end: line_to,
        content: wrapped.content,
    })
}

/// The closest ancestor (not `node` itself) whose kind is one of `kinds`, stopping at function
/// and class boundaries unless they are asked for.
#[must_use]
pub fn ancestor<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if kinds.contains(&n.kind()) {
            return Some(n);
        }
        if matches!(
            n.kind(),
            "function_definition" | "class_definition" | "lambda"
        ) {
            return None;
        }
        cur = n.parent();
    }
    None
}

/// The statement (child of a `block` or `module`) that contains `node`.
#[must_use]
pub fn statement_of(node: Node<'_>) -> Option<Node<'_>> {
    let mut cur = node;
    loop {
        let parent = cur.parent()?;
        if matches!(parent.kind(), "block" | "module") {
            return Some(cur);
        }
        cur = parent;
    }
}

/// The enclosing function definition, if any.
#[must_use]
pub fn enclosing_function(node: Node<'_>) -> Option<Node<'_>> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "function_definition" {
            return Some(n);
        }
        cur = n.parent();
    }
    None
}

/// Whether any node under `scope` (nested functions and classes excluded) satisfies `pred`.
#[must_use]
pub fn any_in_scope(scope: Node<'_>, pred: &dyn Fn(Node<'_>) -> bool) -> bool {
    fn go(node: Node<'_>, pred: &dyn Fn(Node<'_>) -> bool, top: bool) -> bool {
        if !top
            && matches!(
                node.kind(),
                "function_definition" | "class_definition" | "lambda"
            )
        {
            return false;
        }
        if pred(node) {
            return true;
        }
        let mut cursor = node.walk();
        let kids: Vec<Node<'_>> = node.children(&mut cursor).collect();
        kids.into_iter().any(|c| go(c, pred, false))
    }
    go(scope, pred, true)
}

/// Whether `node` is `if __name__ == "__main__":`.
#[must_use]
pub fn is_main_guard(node: Node<'_>, text: &str) -> bool {
    if node.kind() != "if_statement" {
        return false;
    }
    node.child_by_field_name("condition")
        .and_then(|c| text.get(c.byte_range()))
        .is_some_and(|c| {
            let c: String = c.chars().filter(|ch| !ch.is_whitespace()).collect();
            c == "__name__==\"__main__\""
                || c == "__name__=='__main__'"
                || c == "\"__main__\"==__name__"
                || c == "'__main__'==__name__"
        })
}

/// Whether an identifier named `name` occurs under `node` (outside `skip`).
#[must_use]
pub fn mentions(node: Node<'_>, text: &str, name: &str, skip: Option<Node<'_>>) -> bool {
    !find_all(node, |n| {
        n.kind() == "identifier"
            && text.get(n.byte_range()) == Some(name)
            && skip.is_none_or(|s| !(s.start_byte() <= n.start_byte() && n.end_byte() <= s.end_byte()))
            // `x.name` mentions the attribute, not the variable.
            && !n.parent().is_some_and(|p| {
                p.kind() == "attribute"
                    && p.child_by_field_name("attribute").is_some_and(|a| a.id() == n.id())
            })
            && !n.parent().is_some_and(|p| {
                p.kind() == "keyword_argument"
                    && p.child_by_field_name("name").is_some_and(|a| a.id() == n.id())
            })
    })
    .is_empty()
}

/// Import aliases of a module: every bound name → its qualified path.
fn import_aliases(root: Node<'_>, text: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let get = |n: Node<'_>| text.get(n.byte_range()).unwrap_or("").to_owned();
    walk(root, &mut |node| match node.kind() {
        // Ex) import torch / import torch.nn as nn / import numpy as np
        "import_statement" => {
            for item in children(node) {
                match item.kind() {
                    "dotted_name" => {
                        let full = get(item);
                        let head = full.split('.').next().unwrap_or("").to_owned();
                        map.insert(head.clone(), head);
                    }
                    "aliased_import" => {
                        if let (Some(name), Some(alias)) = (
                            item.child_by_field_name("name"),
                            item.child_by_field_name("alias"),
                        ) {
                            map.insert(get(alias), get(name));
                        }
                    }
                    _ => {}
                }
            }
        }
        // Ex) from torch.utils.data import DataLoader as DL, Dataset
        "import_from_statement" => {
            let Some(module) = node.child_by_field_name("module_name") else {
                return;
            };
            let module = get(module);
            let mut cursor = node.walk();
            for item in node.children_by_field_name("name", &mut cursor) {
                match item.kind() {
                    "dotted_name" => {
                        let name = get(item);
                        map.insert(name.clone(), format!("{module}.{name}"));
                    }
                    "aliased_import" => {
                        if let (Some(name), Some(alias)) = (
                            item.child_by_field_name("name"),
                            item.child_by_field_name("alias"),
                        ) {
                            map.insert(get(alias), format!("{module}.{}", get(name)));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    });
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_call<'t>(p: &'t Parsed) -> Node<'t> {
        find_all(p.tree.root_node(), |n| n.kind() == "call")[0]
    }

    #[test]
    fn keyword_is_added_to_calls_of_every_shape() {
        for (src, want) in [
            ("f()\n", "f(k=1)\n"),
            ("f(a)\n", "f(a, k=1)\n"),
            ("f(a, b=2)\n", "f(a, b=2, k=1)\n"),
            ("f(a, b=2,)\n", "f(a, b=2, k=1)\n"),
            ("f(a, k=0)\n", "f(a, k=1)\n"),
            (
                "f(\n    a,\n    b=2,\n)\n",
                "f(\n    a,\n    b=2,\n    k=1,\n)\n",
            ),
            (
                "f(\n    a,\n    b=2\n)\n",
                "f(\n    a,\n    b=2,\n    k=1\n)\n",
            ),
        ] {
            let p = Parsed::new("x.py", src).unwrap();
            let edit = set_keyword(first_call(&p), src, "k", "1").unwrap();
            assert_eq!(apply_checked(src, &[edit]).unwrap(), want, "{src}");
        }
    }

    #[test]
    fn wrap_indents_the_block_but_not_multiline_strings() {
        let src =
            "def f():\n    for x in y:\n        s = \"\"\"a\nb\"\"\"\n        g(x)\n    return 1\n";
        let p = Parsed::new("x.py", src).unwrap();
        let loop_ = find_all(p.tree.root_node(), |n| n.kind() == "for_statement")[0];
        let edit = wrap(src, p.tree.root_node(), loop_, loop_, "with ctx():");
        let out = apply_checked(src, &[edit]).unwrap();
        assert_eq!(
            out,
            "def f():\n    with ctx():\n        for x in y:\n            s = \"\"\"a\nb\"\"\"\n            g(x)\n    return 1\n"
        );
    }

    #[test]
    fn wrap_keeps_tab_indentation() {
        let src = "def f(xs):\n\tfor x in xs:\n\t\tg(x)\n";
        let p = Parsed::new("x.py", src).unwrap();
        let loop_ = find_all(p.tree.root_node(), |n| n.kind() == "for_statement")[0];
        let edit = wrap(src, p.tree.root_node(), loop_, loop_, "with ctx():");
        assert_eq!(
            apply_checked(src, &[edit]).unwrap(),
            "def f(xs):\n\twith ctx():\n\t\tfor x in xs:\n\t\t\tg(x)\n"
        );
    }

    #[test]
    fn wrap_with_rewrites_inside_then_wraps() {
        let src = "for i in r:\n    y = [f(x) for x in i]\n    print(y)\nprint(1)\n";
        let p = Parsed::new("x.py", src).unwrap();
        let loop_ = find_all(p.tree.root_node(), |n| n.kind() == "for_statement")[0];
        let comp = find_all(p.tree.root_node(), |n| n.kind() == "list_comprehension")[0];
        let inner = Edit {
            start: comp.start_byte(),
            end: comp.end_byte(),
            content: "list(pool.map(f, i))".into(),
        };
        let edit = wrap_with(
            src,
            loop_.start_byte(),
            loop_.end_byte(),
            "with P() as pool:",
            &[inner],
        )
        .unwrap();
        assert_eq!(
            apply_checked(src, &[edit]).unwrap(),
            "with P() as pool:\n    for i in r:\n        y = list(pool.map(f, i))\n        print(y)\nprint(1)\n"
        );
    }

    #[test]
    fn aliases_resolve_qualified_names() {
        let src = "import torch as T\nfrom torch.utils.data import DataLoader as DL\nimport torch.nn as nn\nDL(x)\n";
        let p = Parsed::new("x.py", src).unwrap();
        let call = first_call(&p);
        let f = call.child_by_field_name("function").unwrap();
        assert_eq!(
            p.qualified(f).as_deref(),
            Some("torch.utils.data.DataLoader")
        );
        assert_eq!(p.torch_name(), Some("T"));
    }

    #[test]
    fn imports_go_after_the_last_import() {
        let src = "\"\"\"doc\"\"\"\nimport os\nimport sys\n\nx = 1\n";
        let p = Parsed::new("x.py", src).unwrap();
        let out = apply(src, &[p.add_import("import concurrent.futures")]).unwrap();
        assert_eq!(
            out,
            "\"\"\"doc\"\"\"\nimport os\nimport sys\nimport concurrent.futures\n\nx = 1\n"
        );
    }

    #[test]
    fn a_patch_that_breaks_syntax_is_refused() {
        let src = "x = f(1)\n";
        let edit = Edit {
            start: 7,
            end: 8,
            content: "(".into(),
        };
        assert!(matches!(
            apply_checked(src, &[edit]),
            Err(PatchError::Syntax { .. })
        ));
        let overlapping = [
            Edit {
                start: 0,
                end: 3,
                content: String::new(),
            },
            Edit {
                start: 2,
                end: 4,
                content: String::new(),
            },
        ];
        assert!(matches!(
            apply(src, &overlapping),
            Err(PatchError::Overlap(..))
        ));
    }
}
