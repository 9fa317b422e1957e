//! Step 2: read Python source with tree-sitter, extract facts, run the rules, estimate demand.
//!
//! ```text
//! source ─► prefilter (can it matter?) ─► facts (one parse, one walk) ─► rules (RULES) ─► findings + fixes
//!                                                                    └► hot loops ─► estimate_demand(ceilings) ─► verdict
//! ```

pub(crate) mod as_shipped;
pub mod catalog;
pub mod demand;
pub mod facts;
pub mod fix;
pub mod model;
pub mod prefilter;
pub(crate) mod resolve;
pub mod rule;
pub mod rules;

use serde::Serialize;

pub use catalog::{RulesArgs, command};
pub use demand::estimate_demand;
pub use fix::{FixError, apply_fixes};
pub use rule::{Rule, RuleMeta};
pub use rules::RULES;

use model::{CodeKind, Finding, HotLoop};

/// One analysed file.
#[derive(Debug, Clone, Serialize)]
pub struct FileAnalysis {
    /// The path as given.
    pub path: String,
    /// What the file does (train / infer / data / other).
    pub kind: CodeKind,
    /// What the facts engine found.
    pub facts: facts::FileFacts,
    /// Findings, sorted by line.
    pub findings: Vec<Finding>,
    /// Step, epoch-fed and per-record loops, with their pipeline.
    pub hot_loops: Vec<HotLoop>,
    /// Problems reading the file (binary, not UTF-8, syntax errors).
    pub warnings: Vec<String>,
    /// `false` when the pre-parse scan ([`prefilter`]) showed that no rule and no fact can use
    /// the file, so it was not parsed (kind `other`, no findings, no hot loops, no facts).
    pub parsed: bool,
}

impl FileAnalysis {
    fn empty(path: &str, warning: String) -> Self {
        FileAnalysis {
            path: path.to_string(),
            kind: CodeKind::Other,
            facts: facts::FileFacts::default(),
            findings: Vec::new(),
            hot_loops: Vec::new(),
            warnings: vec![warning],
            parsed: false,
        }
    }

    fn unparsed(path: &str) -> Self {
        FileAnalysis {
            warnings: Vec::new(),
            ..FileAnalysis::empty(path, String::new())
        }
    }
}

/// Is the rule enabled by `rules.select` / `rules.ignore` (ids or categories)?
#[must_use]
pub fn rule_enabled(meta: &RuleMeta, rules: &crate::config::Rules) -> bool {
    let matches = |s: &String| {
        s.eq_ignore_ascii_case(meta.id) || s == meta.category.as_str() || s == meta.name
    };
    (rules.select.is_empty() || rules.select.iter().any(matches))
        && !rules.ignore.iter().any(matches)
}

/// Analyses one file. Never panics: non-UTF-8 / binary / empty input gives a warning and no
/// findings; syntax errors give a warning with line:col and the rest is analysed.
///
/// A file that the pre-parse scan ([`prefilter::may_matter`]) shows no rule and no fact can use
/// is not parsed: it comes back as kind `other` with `parsed: false`, and a syntax error in it
/// goes unreported (nothing would be analysed in it either way).
#[must_use]
pub fn analyze_file(path: &str, source: &[u8], rules: &crate::config::Rules) -> FileAnalysis {
    analyze(path, source, rules, true)
}

/// [`analyze_file`] without the pre-parse scan: every file is parsed. For tests that check the
/// scan skips only files that cannot matter.
#[must_use]
pub fn analyze_file_parsing_all(
    path: &str,
    source: &[u8],
    rules: &crate::config::Rules,
) -> FileAnalysis {
    analyze(path, source, rules, false)
}

fn analyze(
    path: &str,
    source: &[u8],
    rules: &crate::config::Rules,
    prefilter: bool,
) -> FileAnalysis {
    if source.iter().all(u8::is_ascii_whitespace) {
        return FileAnalysis::empty(path, format!("{path}: empty file, nothing to analyse"));
    }
    if source.contains(&0) {
        return FileAnalysis::empty(path, format!("{path}: binary file (NUL bytes), skipped"));
    }
    let src = match std::str::from_utf8(source) {
        Ok(s) => s,
        Err(e) => {
            return FileAnalysis::empty(
                path,
                format!(
                    "{path}: not UTF-8 (invalid byte at offset {}), skipped",
                    e.valid_up_to()
                ),
            );
        }
    };
    if prefilter && !prefilter::may_matter(src) {
        return FileAnalysis::unparsed(path);
    }
    let Some(m) = facts::build(src) else {
        return FileAnalysis::empty(
            path,
            format!("{path}: tree-sitter could not parse the file, skipped"),
        );
    };
    let mut warnings = Vec::new();
    if let Some((line, col)) = facts::first_error(&m.tree) {
        warnings.push(format!(
            "{path}:{line}:{col}: syntax error; analysed the parts that parse"
        ));
    }
    let mut cx = rule::Checker::new(&m, path);
    for r in RULES {
        if rule_enabled(r.meta(), rules) {
            r.check(&mut cx);
        }
    }
    let mut findings = cx.out;
    // a script's function that nothing calls does not run as shipped
    findings.retain(|f| !suppressed(&m, f) && !m.uncalled_line(f.line));
    findings.sort_by(|a, b| (a.line, a.column, &a.rule).cmp(&(b.line, b.column, &b.rule)));
    // one finding per rule and line; their fixes are merged (`x.cuda(), y.cuda()`)
    findings.dedup_by(|later, kept| {
        if later.line != kept.line || later.rule != kept.rule {
            return false;
        }
        match (kept.fix.as_mut(), later.fix.take()) {
            (Some(k), Some(l)) => {
                k.applicability = k.applicability.max(l.applicability);
                k.edits.extend(l.edits);
            }
            (None, Some(l)) => kept.fix = Some(l),
            _ => {}
        }
        true
    });
    let (hot_loops, profiles) = demand::hot_loops(&m, path);
    let mut file_facts = m.facts.clone();
    file_facts.hot = profiles;
    FileAnalysis {
        path: path.to_string(),
        kind: m.kind,
        facts: file_facts,
        findings,
        hot_loops,
        warnings,
        parsed: true,
    }
}

fn suppressed(m: &facts::Model<'_>, f: &Finding) -> bool {
    let Some(list) = m.suppress.get(&f.line) else {
        return false;
    };
    list.is_empty()
        || list
            .iter()
            .any(|s| s.eq_ignore_ascii_case(&f.rule) || s == f.category.as_str())
}
