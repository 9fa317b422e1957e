//! The rule catalog: ids unique, docs complete, every documented example triggers its rule and
//! its "Use instead" does not, every category has a rule, and docs/rules.md is up to date.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use std::collections::BTreeSet;

use efficiency_audit::analysis::catalog::{CatalogFormat, render};
use efficiency_audit::analysis::model::Category;
use efficiency_audit::analysis::{RULES, analyze_file};
use efficiency_audit::config::Rules;
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

/// The python code blocks of a doc, each with the text that precedes it since the last block.
fn python_blocks(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut before = String::new();
    let mut in_block = false;
    let mut code = String::new();
    for ev in Parser::new(doc) {
        match ev {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) if &*lang == "python" => {
                in_block = true;
                code.clear();
            }
            Event::End(TagEnd::CodeBlock) if in_block => {
                in_block = false;
                out.push((std::mem::take(&mut before), code.clone()));
            }
            Event::Text(t) if in_block => code.push_str(&t),
            Event::Text(t) | Event::Code(t) => before.push_str(&t),
            _ => {}
        }
    }
    out
}

#[test]
fn ids_are_unique_and_well_formed() {
    let mut ids = BTreeSet::new();
    let mut names = BTreeSet::new();
    for r in RULES {
        let m = r.meta();
        assert!(ids.insert(m.id), "duplicate rule id {}", m.id);
        assert!(names.insert(m.name), "duplicate rule name {}", m.name);
        assert!(m.id.starts_with("EA") && m.id.len() == 5, "bad id {}", m.id);
    }
}

#[test]
fn every_doc_has_the_required_sections() {
    for r in RULES {
        let m = r.meta();
        let doc = m.docs();
        for h in [
            "## What it does",
            "## Why is this slow?",
            "## Example",
            "Use instead:",
            "## Fix safety",
        ] {
            assert!(doc.contains(h), "{}: doc lacks `{h}`", m.id);
        }
        assert!(!m.summary().is_empty(), "{}: empty summary", m.id);
    }
}

#[test]
fn examples_trigger_exactly_their_rule_and_use_instead_does_not() {
    let mut errors = Vec::new();
    for r in RULES {
        let m = r.meta();
        let doc = m.docs();
        let blocks = python_blocks(&doc);
        assert_eq!(
            blocks.len(),
            2,
            "{}: expected an Example and a Use instead block",
            m.id
        );
        let (example, fixed) = (&blocks[0], &blocks[1]);
        assert!(
            example.0.contains("Example"),
            "{}: first block is not under Example",
            m.id
        );
        assert!(
            fixed.0.contains("Use instead"),
            "{}: second block is not under Use instead",
            m.id
        );
        let got: BTreeSet<String> =
            analyze_file("example.py", example.1.as_bytes(), &Rules::default())
                .findings
                .into_iter()
                .map(|f| f.rule)
                .collect();
        if got != BTreeSet::from([m.id.to_string()]) {
            errors.push(format!(
                "{}: the example triggers {got:?}, not exactly this rule",
                m.id
            ));
        }
        let after = analyze_file("fixed.py", fixed.1.as_bytes(), &Rules::default());
        if after.findings.iter().any(|f| f.rule == m.id) {
            errors.push(format!("{}: `Use instead` still triggers the rule", m.id));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn every_category_but_other_has_a_rule() {
    let covered: BTreeSet<Category> = RULES.iter().map(|r| r.meta().category).collect();
    for c in Category::ALL {
        if c != Category::Other {
            assert!(covered.contains(&c), "no rule for category {}", c.as_str());
        }
    }
}

#[test]
fn docs_rules_md_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == render(CatalogFormat::Markdown),
        "docs/rules.md is stale: regenerate it with `cargo run -- rules --format markdown > docs/rules.md`"
    );
}

#[test]
fn json_and_text_catalogs_list_every_rule() {
    let json: serde_json::Value =
        serde_json::from_str(&render(CatalogFormat::Json)).expect("valid JSON");
    assert_eq!(json.as_array().map(Vec::len), Some(RULES.len()));
    let text = render(CatalogFormat::Text);
    for r in RULES {
        assert!(text.contains(r.meta().id));
    }
}
