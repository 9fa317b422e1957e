//! `efficiency-audit experiment` as a user runs it: baseline-only mode, candidates from a file,
//! and Ctrl-C in the middle of a run (scratch copies removed, the benchmark's processes killed).

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod experiments_support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use efficiency_audit::analysis::model::Applicability;
use experiments_support::{edit, gone, tree_hash, workload};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_efficiency-audit"))
}

fn scratch_dirs(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("efficiency-audit-scratch-"))
        .collect()
}

#[test]
fn baseline_only_reports_noise_and_measured_saturation() {
    let dir = workload("sleepy");
    let tmp = tempfile::tempdir().unwrap();
    let before = tree_hash(dir.path());
    let out = bin()
        .args([
            "experiment",
            "--bench",
            "python3 work.py",
            "--min-runs",
            "3",
            "--max-runs",
            "4",
            "--warmup",
            "0",
        ])
        .arg(dir.path())
        .env("TMPDIR", tmp.path())
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("::group::Baseline") && stderr.contains("::endgroup::"),
        "{stderr}"
    );
    assert!(stderr.contains("noise: cv"), "{stderr}");
    assert!(stderr.contains("measured cpu:"), "{stderr}");
    assert!(stderr.contains("sampler cost:"), "{stderr}");
    // The default output folder is inside the audited folder; the report is the only change.
    let report = dir.path().join("report/efficiency/experiments");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("outcome.json")).unwrap())
            .unwrap();
    assert_eq!(json["baseline"]["summary"]["n"], 4);
    assert!(
        json["measured_saturation"]["saturation"]["cpu"]["value"].is_f64(),
        "{json}"
    );
    assert!(report.join("baseline.log").is_file());
    std::fs::remove_dir_all(dir.path().join("report")).unwrap();
    assert_eq!(tree_hash(dir.path()), before);
    assert!(
        scratch_dirs(tmp.path()).is_empty(),
        "scratch copies left behind"
    );
}

#[test]
fn candidates_from_a_json_file() {
    let dir = workload("sleepy");
    let out_dir = tempfile::tempdir().unwrap();
    let cand = edit(
        dir.path(),
        "drop-wait-1",
        None,
        Applicability::Safe,
        "work.py",
        "    time.sleep(0.25)  # wait-1\n",
        "",
    );
    let file = out_dir.path().join("candidates.json");
    std::fs::write(&file, serde_json::to_string(&[cand]).unwrap()).unwrap();
    let out = bin()
        .args([
            "experiment",
            "--bench",
            "python3 work.py",
            "--quiet",
            "--max-runs",
            "10",
            "--metric-regex",
            experiments_support::THROUGHPUT,
            "--candidates",
        ])
        .arg(&file)
        .arg("--output-dir")
        .arg(out_dir.path())
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("experiments/outcome.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["results"][0]["strategy"], "drop-wait-1");
    assert_eq!(json["results"][0]["status"], "passed", "{json:#}");
    assert!(out_dir.path().join("experiments/drop-wait-1.log").is_file());
}

#[test]
fn a_broken_benchmark_exits_2_with_the_reason() {
    let dir = workload("sleepy");
    let out = bin()
        .args([
            "experiment",
            "--bench",
            "python3 missing_script.py",
            "--output-dir",
        ])
        .arg(dir.path().join("out"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the benchmark itself is broken"),
        "{stderr}"
    );
    assert!(stderr.contains("exited with status 2"), "{stderr}");
}

#[test]
fn ctrl_c_removes_scratch_copies_and_kills_the_benchmark() {
    let dir = workload("sleepy");
    let tmp = tempfile::tempdir().unwrap();
    let pidfile = tmp.path().join("bench.pid");
    let cmd = format!("sleep 120 & echo $! > {}; sleep 120", pidfile.display());
    let mut child = bin()
        .args(["experiment", "--quiet", "--bench", &cmd, "--output-dir"])
        .arg(tmp.path().join("out"))
        .arg(dir.path())
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let bench_pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        scratch_dirs(tmp.path()).len(),
        1,
        "the baseline's scratch copy exists while it runs"
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        scratch_dirs(tmp.path()).is_empty(),
        "scratch copy left after Ctrl-C"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(bench_pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        gone(bench_pid),
        "the benchmark's background process survived Ctrl-C"
    );
}
