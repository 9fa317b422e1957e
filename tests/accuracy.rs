//! Precision and recall of the rules on the labelled corpus `tests/fixtures/corpus/`.
//!
//! Every line that must be flagged carries a trailing `# expect: <category>[, <category>...]`;
//! nothing else may be flagged. Print the table with
//! `cargo test --test accuracy -- --nocapture`.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use efficiency_audit::analysis::analyze_file;
use efficiency_audit::analysis::model::Category;
use efficiency_audit::config::Rules;

const MIN_PRECISION: f64 = 0.90;
const MIN_RECALL: f64 = 0.80;

fn expected(src: &str) -> BTreeSet<(usize, String)> {
    let mut out = BTreeSet::new();
    for (i, line) in src.lines().enumerate() {
        if let Some(pos) = line.find("# expect:") {
            for cat in line[pos + "# expect:".len()..].split(',') {
                out.insert((i + 1, cat.trim().to_string()));
            }
        }
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
}

#[test]
fn corpus_precision_and_recall() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let valid: BTreeSet<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    let mut per: BTreeMap<String, Counts> = BTreeMap::new();
    let mut mismatches = Vec::new();
    let mut clean_files = 0;
    for path in &files {
        let src = std::fs::read_to_string(path).expect("read corpus file");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let want = expected(&src);
        for (line, cat) in &want {
            assert!(
                valid.contains(cat.as_str()),
                "{name}:{line}: unknown category `{cat}`"
            );
        }
        if want.is_empty() {
            clean_files += 1;
        }
        let got: BTreeSet<(usize, String)> = analyze_file(&name, src.as_bytes(), &Rules::default())
            .findings
            .iter()
            .map(|f| (f.line, f.category.as_str().to_string()))
            .collect();
        for hit in want.intersection(&got) {
            per.entry(hit.1.clone()).or_default().tp += 1;
        }
        for miss in want.difference(&got) {
            per.entry(miss.1.clone()).or_default().fn_ += 1;
            mismatches.push(format!("missed     {name}:{} {}", miss.0, miss.1));
        }
        for extra in got.difference(&want) {
            per.entry(extra.1.clone()).or_default().fp += 1;
            mismatches.push(format!("unexpected {name}:{} {}", extra.0, extra.1));
        }
    }
    let total = per.values().fold(Counts::default(), |a, c| Counts {
        tp: a.tp + c.tp,
        fp: a.fp + c.fp,
        fn_: a.fn_ + c.fn_,
    });
    let ratio = |n: usize, d: usize| if d == 0 { 1.0 } else { n as f64 / d as f64 };
    println!(
        "corpus: {} files ({} with no expected finding)\n",
        files.len(),
        clean_files
    );
    println!("| category | TP | FP | FN | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (cat, c) in &per {
        println!(
            "| {cat} | {} | {} | {} | {:.2} | {:.2} |",
            c.tp,
            c.fp,
            c.fn_,
            ratio(c.tp, c.tp + c.fp),
            ratio(c.tp, c.tp + c.fn_)
        );
    }
    let precision = ratio(total.tp, total.tp + total.fp);
    let recall = ratio(total.tp, total.tp + total.fn_);
    println!(
        "| **all** | {} | {} | {} | {:.2} | {:.2} |",
        total.tp, total.fp, total.fn_, precision, recall
    );
    for m in &mismatches {
        println!("{m}");
    }
    assert!(
        files.len() >= 30,
        "the corpus needs at least 30 files, has {}",
        files.len()
    );
    assert!(
        clean_files >= 8,
        "the corpus needs at least 8 clean files, has {clean_files}"
    );
    assert!(
        precision >= MIN_PRECISION && recall >= MIN_RECALL,
        "precision {precision:.2} (min {MIN_PRECISION}) / recall {recall:.2} (min {MIN_RECALL}):\n{}",
        mismatches.join("\n")
    );
}
