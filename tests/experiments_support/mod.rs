//! Helpers shared by the `experiments_*` integration tests.
#![allow(dead_code, reason = "each test binary uses a subset")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use efficiency_audit::analysis::model::Applicability;
use efficiency_audit::config::{Bench, Config, Strategies};
use efficiency_audit::experiments::{ExperimentCandidate, FilePatch};

/// A fresh copy of `tests/fixtures/workloads/<name>` in a temp dir (the audited folder).
pub fn workload(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workloads")
        .join(name);
    copy_tree(&src, dir.path());
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// Hash of every file (path, symlink target, content) under `dir`.
pub fn tree_hash(dir: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut files: Vec<PathBuf> = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else {
                files.push(e.path());
            }
        }
    }
    files.sort();
    for f in files {
        f.strip_prefix(dir).unwrap().hash(&mut h);
        match std::fs::read_link(&f) {
            Ok(target) => target.hash(&mut h),
            Err(_) => std::fs::read(&f).unwrap().hash(&mut h),
        }
    }
    h.finish()
}

/// Bench settings for the small workloads: 1 warm-up, 3–10 runs, short timeout.
pub fn bench(command: &str) -> Bench {
    Bench {
        command: Some(command.to_owned()),
        warmup: 1,
        min_runs: 3,
        max_runs: 10,
        timeout: Duration::from_secs(60),
        budget: Duration::from_secs(240),
        ..Config::default().bench
    }
}

/// Strategy settings: up to 3 winners, numerics as given.
pub fn strategies(allow_numerics: bool) -> Strategies {
    Strategies {
        allow_numerics,
        ..Config::default().strategies
    }
}

/// A candidate that edits `file` in `dir` by replacing `from` with `to`.
pub fn edit(
    dir: &Path,
    id: &str,
    variant: Option<&str>,
    app: Applicability,
    file: &str,
    from: &str,
    to: &str,
) -> ExperimentCandidate {
    let original = std::fs::read_to_string(dir.join(file)).unwrap();
    assert!(original.contains(from), "{from:?} not in {file}");
    let new_text = original.replace(from, to);
    ExperimentCandidate {
        id: id.to_owned(),
        variant: variant.map(str::to_owned),
        applicability: app,
        diff: format!("--- a/{file}\n+++ b/{file}\n-{from}\n+{to}\n"),
        patch: vec![FilePatch {
            path: PathBuf::from(file),
            expected_original: original,
            new_text,
        }],
    }
}

/// Whether a process is gone (or only a zombie nobody reaps, as under a minimal init).
pub fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The sleepy workload's in-process throughput regex. Timed inside the program, it leaves out
/// the interpreter's start-up, which on a machine shared by several builds varies by ±50 %:
/// the speed-up assertions then rest on the work removed, not on the machine's load.
pub const THROUGHPUT: &str = r"throughput=([0-9.]+)";

/// [`bench`] measuring [`THROUGHPUT`].
pub fn bench_throughput(command: &str) -> Bench {
    Bench {
        metric_regex: Some(THROUGHPUT.to_owned()),
        ..bench(command)
    }
}
