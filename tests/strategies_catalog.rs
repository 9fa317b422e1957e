//! The strategy registry: unique ids, complete documentation, and `docs/strategies.md` in step
//! with the doc comments.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail the test loudly"
)]

use std::collections::HashSet;
use std::path::Path;

use efficiency_audit::strategies::{Kind, STRATEGIES, catalog_markdown};

#[test]
fn ids_are_unique_and_kebab_case() {
    let mut seen = HashSet::new();
    for s in STRATEGIES {
        let id = s.meta().id;
        assert!(seen.insert(id), "duplicate strategy id {id}");
        assert!(
            id.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{id}"
        );
    }
    let ids: Vec<&str> = STRATEGIES.iter().map(|s| s.meta().id).collect();
    insta::assert_debug_snapshot!(ids);
}

#[test]
fn at_least_five_basic_and_three_advanced() {
    let basic = STRATEGIES
        .iter()
        .filter(|s| s.meta().kind == Kind::Basic)
        .count();
    let advanced = STRATEGIES
        .iter()
        .filter(|s| s.meta().kind == Kind::Advanced)
        .count();
    assert!(basic >= 5, "{basic} basic");
    assert!(advanced >= 3, "{advanced} advanced");
}

#[test]
fn every_strategy_documents_every_section() {
    for s in STRATEGIES {
        let m = s.meta();
        for section in [
            "## What it does",
            "## Why is it faster?",
            "## Example",
            "Use instead:",
            "## Safety",
            "## Expected gain",
        ] {
            assert!(m.doc.contains(section), "{} lacks {section}", m.id);
        }
        assert!(
            m.doc.matches("```python").count() >= 2,
            "{}: example and fix",
            m.id
        );
        assert!(!m.targets.is_empty(), "{} targets no category", m.id);
    }
}

#[test]
fn docs_strategies_md_is_not_stale() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/strategies.md");
    let want = catalog_markdown();
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/strategies.md is stale: regenerate it with `cargo run -- strategies --catalog > docs/strategies.md`"
    );
}

#[test]
fn the_cli_prints_the_catalog() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_efficiency-audit"))
        .args(["strategies", "--catalog"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), catalog_markdown());
}
