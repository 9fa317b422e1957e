//! End-to-end runs of `efficiency-audit analyze` on temporary projects: what it writes, what it
//! prints, its exit status, and how it survives bad input.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failed setup step should fail the test loudly"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const TRAIN: &str = include_str!("../examples/torch-train/train.py");

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn analyze(dir: &Path, args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_efficiency-audit"))
        .current_dir(dir)
        .arg("analyze")
        .args(args)
        .output()
        .unwrap();
    Run {
        status: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

fn project(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, content) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report/efficiency/analysis.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn warnings(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

/// Every file below `dir` with its bytes, to prove the run changed none of them.
fn snapshot_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let ty = entry.file_type().unwrap();
            if ty.is_dir() {
                stack.push(entry.path());
            } else if ty.is_file() {
                out.insert(entry.path(), std::fs::read(entry.path()).unwrap());
            }
        }
    }
    out
}

#[test]
fn writes_three_reports_and_prints_the_verdict() {
    let dir = project(&[
        ("src/train.py", TRAIN.as_bytes()),
        ("notes.txt", b"not python"),
    ]);
    let before = snapshot_tree(dir.path());
    let run = analyze(dir.path(), &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let headline = run.stdout.lines().last().unwrap();
    assert!(
        headline.starts_with("RED: ") || headline.starts_with("GREEN: "),
        "{}",
        run.stdout
    );
    for name in ["analysis.json", "analysis.html", "analysis.sarif"] {
        let path = Path::new("report/efficiency").join(name);
        assert!(dir.path().join(&path).is_file(), "{name} missing");
        assert!(
            run.stderr.contains(&format!("wrote {}", path.display())),
            "{}",
            run.stderr
        );
    }
    let v = json(dir.path());
    assert_eq!(v["schema"], 1);
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(v["files"][0]["path"], "src/train.py");
    assert_eq!(v["files"][0]["kind"], "train");
    let findings = v["findings"].as_array().unwrap();
    assert!(
        !findings.is_empty(),
        "the example's main-process DataLoader is a finding"
    );
    assert!(
        findings
            .iter()
            .all(|f| f["path"] == "src/train.py" && f["line"].as_u64() >= Some(1))
    );
    assert!(!v["demand"]["loops"].as_array().unwrap().is_empty());
    assert_eq!(v["verdict"]["basis"], "estimated");
    assert_eq!(v["verdict"]["threshold"], 0.7);
    assert_eq!(v["verdict"]["value"], headline.split(':').next().unwrap());
    // Without --ceilings, the demand says which core count it assumed.
    let notes = v["demand"]["notes"].to_string();
    assert!(notes.contains("logical CPUs"), "{notes}");

    let sarif: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("report/efficiency/analysis.sarif")).unwrap(),
    )
    .unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    let uri = &results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(uri, "src/train.py");

    // The user's files are never modified; only the report folder is new.
    let mut after = snapshot_tree(dir.path());
    after.retain(|p, _| !p.starts_with(dir.path().join("report")));
    assert_eq!(before, after);
}

#[test]
fn output_is_deterministic() {
    let dir = project(&[
        ("a/train.py", TRAIN.as_bytes()),
        ("b/train.py", TRAIN.as_bytes()),
        ("c.py", b"import pandas as pd\n"),
    ]);
    analyze(dir.path(), &[]);
    let first = std::fs::read(dir.path().join("report/efficiency/analysis.json")).unwrap();
    let first_sarif = std::fs::read(dir.path().join("report/efficiency/analysis.sarif")).unwrap();
    analyze(dir.path(), &[]);
    assert_eq!(
        first,
        std::fs::read(dir.path().join("report/efficiency/analysis.json")).unwrap()
    );
    assert_eq!(
        first_sarif,
        std::fs::read(dir.path().join("report/efficiency/analysis.sarif")).unwrap()
    );
    let v: Value = serde_json::from_slice(&first).unwrap();
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a/train.py", "b/train.py", "c.py"]);
}

#[test]
fn bad_input_warns_and_never_fails() {
    let mut big = b"x = 1\n".repeat(50 * 1024 * 1024 / 6);
    big.truncate(50 * 1000 * 1000);
    let dir = project(&[
        ("ok.py", TRAIN.as_bytes()),
        (
            "broken.py",
            b"import torch\n\ndef f(:\n    pass\nfor x in y:\n    x.item()\n",
        ),
        ("latin1.py", b"# caf\xe9\nx = 1\n"),
        ("binary.py", b"\x7fELF\x02\x01\x01\x00\x00\x00\x00"),
        ("empty.py", b""),
        ("big.py", &big),
    ]);
    // pkg/loop points back at the project root: a walker that followed it would never end.
    #[cfg(unix)]
    {
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        std::os::unix::fs::symlink("..", dir.path().join("pkg/loop")).unwrap();
    }
    let run = analyze(dir.path(), &[".", "deleted_in_pr.py"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let v = json(dir.path());
    let warnings = warnings(&v);
    let has = |needle: &str| {
        assert!(
            warnings.iter().any(|w| w.contains(needle)),
            "no warning with {needle:?} in {warnings:#?}"
        );
        assert!(
            run.stderr.contains(needle),
            "stderr lacks {needle:?}: {}",
            run.stderr
        );
    };
    has("broken.py:3:");
    has("syntax error");
    has("latin1.py: not UTF-8");
    has("binary.py: binary file");
    has("empty.py: empty file");
    has("big.py: 50.0 MB is over the 10 MiB limit (analyse it with --max-file-size 48)");
    has("deleted_in_pr.py: no such file or folder (deleted in this change?)");
    #[cfg(unix)]
    has("loop");
    // The good file is still analysed, and the parts of the broken one that parse.
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"ok.py") && paths.contains(&"broken.py"),
        "{paths:?}"
    );
    assert!(!paths.contains(&"big.py"));
}

#[test]
fn a_missing_named_path_alone_still_writes_reports() {
    let dir = project(&[]);
    let run = analyze(dir.path(), &["gone.py"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("gone.py: no such file or folder"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.starts_with("RED: "), "{}", run.stdout);
    assert_eq!(json(dir.path())["files"].as_array().unwrap().len(), 0);
}

#[test]
fn big_files_are_analysed_when_the_cap_is_raised() {
    let dir = project(&[("gen.py", "x = 1\n".repeat(400_000).as_bytes())]);
    let run = analyze(dir.path(), &["--max-file-size", "1"]);
    assert!(
        run.stderr.contains("over the 1 MiB limit"),
        "{}",
        run.stderr
    );
    let run = analyze(dir.path(), &["--max-file-size", "3"]);
    assert_eq!(run.status, 0);
    assert!(!run.stderr.contains("limit"), "{}", run.stderr);
    assert_eq!(json(dir.path())["files"][0]["path"], "gen.py");
}

#[test]
fn unwritable_output_folder_is_a_tool_failure() {
    let dir = project(&[("a.py", b"x = 1\n"), ("blocker", b"a file, not a folder")]);
    let run = analyze(dir.path(), &["--output-dir", "blocker/out"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("cannot create the output folder blocker/out")
            && run.stderr.contains("--output-dir"),
        "{}",
        run.stderr
    );
}

#[test]
fn missing_ceilings_file_is_a_tool_failure() {
    let dir = project(&[("a.py", b"x = 1\n")]);
    let run = analyze(dir.path(), &["--ceilings", "nope.yaml"]);
    assert_eq!(run.status, 2);
    assert!(
        run.stderr.contains("efficiency-audit ceilings"),
        "{}",
        run.stderr
    );
}

#[test]
fn fail_on_red_exits_one_and_never_exits_zero() {
    // No hot loop: nothing can be shown to reach the threshold, so the verdict is RED.
    let dir = project(&[("a.py", b"x = 1\n")]);
    let run = analyze(dir.path(), &[]);
    assert_eq!(run.status, 0);
    assert!(run.stdout.starts_with("RED"), "{}", run.stdout);
    std::fs::write(dir.path().join("efficiency-audit.yml"), "fail-on: red\n").unwrap();
    let run = analyze(dir.path(), &[]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    let run = analyze(
        dir.path(),
        &["--config", "efficiency-audit.yml", "--quiet", "a.py"],
    );
    assert_eq!(run.status, 1);
    assert!(!run.stderr.contains("wrote"), "--quiet: {}", run.stderr);
}

#[test]
fn config_paths_and_output_dir_apply() {
    let dir = project(&[
        ("src/train.py", TRAIN.as_bytes()),
        ("tests/test_train.py", TRAIN.as_bytes()),
        (
            ".github/efficiency-audit.yml",
            b"paths: ['src/**/*.py']\noutput-dir: out/ea\nthreshold: 0.5\n",
        ),
    ]);
    let run = analyze(dir.path(), &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/ea/analysis.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(v["verdict"]["threshold"], 0.5);
    let run = analyze(dir.path(), &["--threshold", "0.9", "--output-dir", "x"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("x/analysis.json")).unwrap())
            .unwrap();
    assert_eq!(v["verdict"]["threshold"], 0.9);
}

#[test]
fn annotations_go_to_stdout_escaped_and_capped() {
    // Twelve copies of the example: more findings of one level than GitHub shows per step.
    let files: Vec<(String, &[u8])> = (0..12)
        .map(|i| (format!("m{i:02}/train.py"), TRAIN.as_bytes()))
        .collect();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    let dir = project(&refs);
    let run = analyze(dir.path(), &["--annotations"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let commands: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert!(!commands.is_empty(), "{}", run.stdout);
    for level in ["::error ", "::warning ", "::notice "] {
        assert!(commands.iter().filter(|l| l.starts_with(level)).count() <= 10);
    }
    for c in &commands {
        assert!(
            c.contains(" file=m") && c.contains(",line=") && c.contains(",title=efficiency-audit ")
        );
        assert!(c.contains("%3A"), "title colon escaped: {c}");
    }
    let total = json(dir.path())["findings"].as_array().unwrap().len();
    if total > commands.len() {
        assert!(
            run.stdout.contains(&format!(
                "efficiency-audit: {} more finding(s) not annotated",
                total - commands.len()
            )),
            "{}",
            run.stdout
        );
    }
    // Without the flag, stdout is the verdict only.
    let run = analyze(dir.path(), &[]);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
}

#[test]
fn hostile_code_is_escaped_in_the_html() {
    let hostile = TRAIN.replace(
        "        losses.append(loss.item())",
        "        losses.append(loss.item())  # </script><script>alert(1)</script> <!-- <img src=x onerror=\"alert(2)\">",
    );
    let dir = project(&[("evil<img src=x onerror=alert(3)>.py", hostile.as_bytes())]);
    let run = analyze(dir.path(), &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let html = std::fs::read_to_string(dir.path().join("report/efficiency/analysis.html")).unwrap();
    assert!(
        html.contains("&lt;/script&gt;&lt;script&gt;alert(1)"),
        "excerpt missing"
    );
    assert!(html.contains("evil&lt;img src=x onerror=alert(3)&gt;.py"));
    for raw in ["<script", "</script>", "<!--", "<img"] {
        assert!(!html.contains(raw), "unescaped {raw}");
    }
}
