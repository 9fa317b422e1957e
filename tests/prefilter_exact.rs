//! The pre-parse scan (`analysis::prefilter`) skips only files that cannot matter: analysing
//! with it gives the same kinds, findings and hot loops as parsing every file, on every Python
//! fixture and example, and (ignored by default; needs a folder) on a real tree:
//! `EA_STDLIB=/usr/lib/python3.11 cargo test --test prefilter_exact -- --ignored --nocapture`.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

mod common;

use std::path::{Path, PathBuf};

use efficiency_audit::analysis::{FileAnalysis, analyze_file, analyze_file_parsing_all};
use efficiency_audit::config::Rules;

/// What the skip must not change: kind, findings (with fixes), hot loops and their profiles.
fn outcome(a: &FileAnalysis) -> serde_json::Value {
    serde_json::json!({
        "kind": a.kind,
        "findings": a.findings,
        "hot_loops": a.hot_loops,
        "profiles": a.facts.hot,
    })
}

/// Checks every file; returns (files, skipped).
fn check_exact(files: &[PathBuf]) -> (usize, usize) {
    let rules = Rules::default();
    let mut skipped = 0;
    let mut differ = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        let fast = analyze_file(&name, &bytes, &rules);
        let full = analyze_file_parsing_all(&name, &bytes, &rules);
        if full.parsed && !fast.parsed {
            skipped += 1;
        }
        if fast.parsed {
            assert_eq!(fast.warnings, full.warnings, "{name}");
        }
        if outcome(&fast) != outcome(&full) {
            differ.push(format!(
                "{name}: skipped, but parsing it gives {}",
                outcome(&full)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "the pre-parse scan skipped {} file(s) that matter (a trigger is missing in \
         analysis::prefilter::ENGINE or a rule's `triggers`):\n{}",
        differ.len(),
        differ.join("\n")
    );
    (files.len(), skipped)
}

#[test]
fn skipping_changes_nothing_on_the_fixtures_and_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    common::walk_python(&root.join("tests/fixtures"), &mut files);
    common::walk_python(&root.join("examples"), &mut files);
    files.sort();
    assert!(files.len() > 50, "fixtures not found: {}", files.len());
    let (n, skipped) = check_exact(&files);
    // the fixtures are ML code: the scan keeps nearly all of them, but must skip plain Python
    assert!(skipped < n, "{skipped} of {n} skipped");
}

#[test]
fn plain_python_is_not_parsed() {
    let src = b"import os\n\ndef size(p):\n    return os.path.getsize(p)\n\nprint(size('a'))\n";
    let a = analyze_file("plain.py", src, &Rules::default());
    assert!(!a.parsed);
    assert_eq!(
        outcome(&a),
        outcome(&analyze_file_parsing_all(
            "plain.py",
            src,
            &Rules::default()
        ))
    );
}

#[test]
#[ignore = "needs EA_STDLIB=<folder of Python files>"]
fn skipping_changes_nothing_on_a_real_tree() {
    let Ok(root) = std::env::var("EA_STDLIB") else {
        return;
    };
    let mut files = Vec::new();
    common::walk_python(Path::new(&root), &mut files);
    files.sort();
    let (n, skipped) = check_exact(&files);
    println!("{root}: {n} files, {skipped} skipped by the pre-parse scan, none of them mattered");
}
