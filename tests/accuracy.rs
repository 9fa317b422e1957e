//! Precision and recall of the rules on the labelled corpora: `tests/fixtures/corpus/` (written
//! while the rules were built) and `tests/fixtures/corpus-heldout/` (a later batch, labelled and
//! committed before the rules first ran on it).
//!
//! Every line that must be flagged carries a trailing `# expect: <category>[, <category>...]`;
//! nothing else may be flagged. Print the tables with
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

/// The counts of one labelled folder.
#[derive(Default)]
struct Measured {
    files: usize,
    clean_files: usize,
    per: BTreeMap<String, Counts>,
    mismatches: Vec<String>,
}

impl Measured {
    fn total(&self) -> Counts {
        self.per.values().fold(Counts::default(), |a, c| Counts {
            tp: a.tp + c.tp,
            fp: a.fp + c.fp,
            fn_: a.fn_ + c.fn_,
        })
    }

    fn absorb(&mut self, other: &Measured) {
        self.files += other.files;
        self.clean_files += other.clean_files;
        for (cat, c) in &other.per {
            let e = self.per.entry(cat.clone()).or_default();
            e.tp += c.tp;
            e.fp += c.fp;
            e.fn_ += c.fn_;
        }
        self.mismatches.extend(other.mismatches.iter().cloned());
    }
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 { 1.0 } else { n as f64 / d as f64 }
}

fn measure(folder: &str) -> Measured {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let valid: BTreeSet<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    let mut out = Measured {
        files: files.len(),
        ..Measured::default()
    };
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
            out.clean_files += 1;
        }
        let got: BTreeSet<(usize, String)> = analyze_file(&name, src.as_bytes(), &Rules::default())
            .findings
            .iter()
            .map(|f| (f.line, f.category.as_str().to_string()))
            .collect();
        for hit in want.intersection(&got) {
            out.per.entry(hit.1.clone()).or_default().tp += 1;
        }
        for miss in want.difference(&got) {
            out.per.entry(miss.1.clone()).or_default().fn_ += 1;
            out.mismatches
                .push(format!("missed     {folder}/{name}:{} {}", miss.0, miss.1));
        }
        for extra in got.difference(&want) {
            out.per.entry(extra.1.clone()).or_default().fp += 1;
            out.mismatches.push(format!(
                "unexpected {folder}/{name}:{} {}",
                extra.0, extra.1
            ));
        }
    }
    out
}

fn print_table(title: &str, m: &Measured) {
    println!(
        "\n{title}: {} files ({} with no expected finding)\n",
        m.files, m.clean_files
    );
    println!("| category | TP | FP | FN | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (cat, c) in &m.per {
        println!(
            "| {cat} | {} | {} | {} | {:.2} | {:.2} |",
            c.tp,
            c.fp,
            c.fn_,
            ratio(c.tp, c.tp + c.fp),
            ratio(c.tp, c.tp + c.fn_)
        );
    }
    let t = m.total();
    println!(
        "| **all** | {} | {} | {} | {:.2} | {:.2} |",
        t.tp,
        t.fp,
        t.fn_,
        ratio(t.tp, t.tp + t.fp),
        ratio(t.tp, t.tp + t.fn_)
    );
}

#[test]
fn corpus_precision_and_recall() {
    let corpus = measure("tests/fixtures/corpus");
    let heldout = measure("tests/fixtures/corpus-heldout");
    let mut all = Measured::default();
    all.absorb(&corpus);
    all.absorb(&heldout);
    print_table("corpus", &corpus);
    print_table("corpus-heldout", &heldout);
    print_table("both", &all);
    for m in &all.mismatches {
        println!("{m}");
    }
    for (name, m, min_files, min_clean) in [
        ("corpus", &corpus, 30, 8),
        ("corpus-heldout", &heldout, 30, 10),
    ] {
        assert!(
            m.files >= min_files,
            "{name} needs at least {min_files} files, has {}",
            m.files
        );
        assert!(
            m.clean_files >= min_clean,
            "{name} needs at least {min_clean} clean files, has {}",
            m.clean_files
        );
        let t = m.total();
        let precision = ratio(t.tp, t.tp + t.fp);
        let recall = ratio(t.tp, t.tp + t.fn_);
        assert!(
            precision >= MIN_PRECISION && recall >= MIN_RECALL,
            "{name}: precision {precision:.2} (min {MIN_PRECISION}) / recall {recall:.2} (min {MIN_RECALL}):\n{}",
            m.mismatches.join("\n")
        );
    }
}
