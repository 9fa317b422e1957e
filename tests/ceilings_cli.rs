//! `efficiency-audit ceilings` run as a process on this machine: the file it writes, where, and
//! how it fails.
#![allow(
    clippy::expect_used,
    reason = "test helpers outside #[test] functions: a failure is the test failing"
)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use efficiency_audit::ceilings::model::{Ceilings, NO_GPU_WARNING};

const BIN: &str = env!("CARGO_BIN_EXE_efficiency-audit");

fn ceilings(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(cwd)
        .arg("ceilings")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every key the schema names, by path.
const KEYS: &[&str] = &[
    "schema",
    "measured_at",
    "host.cpu_brand",
    "host.logical_cpus",
    "host.physical_cores",
    "host.simd",
    "host.os",
    "host.kernel",
    "cpu.clock_ghz_measured",
    "cpu.fp32_gflops.theoretical",
    "cpu.fp32_gflops.measured",
    "cpu.fp32_gflops.method",
    "memory.total_gib",
    "memory.bandwidth_gbs.measured",
    "memory.bandwidth_gbs.method",
    "disk.path",
    "disk.fs",
    "disk.method",
    "disk.read_mbs.qd1.median",
    "disk.read_mbs.qd1.min",
    "disk.read_mbs.qd1.max",
    "disk.read_mbs.qd1.runs",
    "disk.read_mbs.qd4.median",
    "disk.write_mbs.qd1.median",
    "disk.write_mbs.qd4.median",
    "gpus",
    "warnings",
];

fn lookup<'a>(value: &'a serde_yaml::Value, path: &str) -> Option<&'a serde_yaml::Value> {
    path.split('.').try_fold(value, |v, key| v.get(key))
}

#[test]
fn writes_theoretical_limits_yaml_with_every_key_and_no_gpu_here() {
    let cwd = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let out = ceilings(
        cwd.path(),
        &[
            "--quick",
            "--quiet",
            "--workspace",
            workspace.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    // stdout is the path, relative to the current directory by default.
    let printed = text(&out.stdout);
    assert_eq!(printed.trim(), "report/efficiency/theoretical_limits.yaml");
    let yaml = std::fs::read_to_string(cwd.path().join(printed.trim())).unwrap();
    let value: serde_yaml::Value = serde_yaml::from_str(&yaml).unwrap();
    for key in KEYS {
        assert!(lookup(&value, key).is_some(), "missing {key} in\n{yaml}");
    }
    let c = Ceilings::from_yaml(&yaml).unwrap();
    assert_eq!(c.schema, 1);
    assert!(chrono::DateTime::parse_from_rfc3339(&c.measured_at).is_ok());
    assert!(c.cpu.fp32_gflops.measured.is_some_and(|g| g > 0.0));
    assert!(c.disk.read_mbs.qd4.is_some(), "{}", c.disk.method);
    if Path::new("/dev/nvidia0").exists() {
        return; // a GPU machine: the rest describes the CPU-only runner
    }
    assert!(c.gpus.is_empty());
    assert!(
        c.warnings.iter().any(|w| w.contains("--gpus all")),
        "{:?}",
        c.warnings
    );
    // No code was named, so no "code expects a GPU" warning.
    assert!(!c.warnings.iter().any(|w| w == NO_GPU_WARNING));
    // The disk probe left nothing in the workspace.
    assert_eq!(std::fs::read_dir(workspace.path()).unwrap().count(), 0);
}

#[test]
fn cuda_code_on_a_machine_without_gpu_gets_the_seed_warning() {
    if Path::new("/dev/nvidia0").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("train.py"),
        "import torch\nmodel = Net().to(\"cuda\")\n",
    )
    .unwrap();
    let out = ceilings(
        dir.path(),
        &["--quick", "--output-dir", "out", "--code", "train.py"],
    );
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "out/theoretical_limits.yaml");
    let yaml = std::fs::read_to_string(dir.path().join("out/theoretical_limits.yaml")).unwrap();
    let c = Ceilings::from_yaml(&yaml).unwrap();
    assert!(
        c.warnings.iter().any(|w| w == NO_GPU_WARNING),
        "{:?}",
        c.warnings
    );
    assert!(yaml.contains("No GPU detected but code expects one"));
}

#[test]
fn the_configuration_file_chooses_the_output_folder_and_the_flag_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("efficiency-audit.yml"),
        "output-dir: from-config\n",
    )
    .unwrap();
    let out = ceilings(dir.path(), &["--quick", "--quiet"]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(
        dir.path()
            .join("from-config/theoretical_limits.yaml")
            .is_file()
    );
    let out = ceilings(
        dir.path(),
        &["--quick", "--quiet", "--output-dir", "from-flag"],
    );
    assert!(out.status.success());
    assert!(
        dir.path()
            .join("from-flag/theoretical_limits.yaml")
            .is_file()
    );
}

#[test]
fn an_unwritable_output_folder_fails_with_status_2_and_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    // A folder below a regular file cannot be created, even by root.
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    let started = Instant::now();
    let out = ceilings(dir.path(), &["--output-dir", "blocker/report"]);
    assert_eq!(out.status.code(), Some(2), "stdout: {}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot write to the output folder blocker/report"),
        "{stderr}"
    );
    assert!(stderr.contains("--output-dir"), "{stderr}");
    assert!(text(&out.stdout).is_empty());
    // It failed before measuring anything (the full probes take seconds).
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_bad_configuration_file_fails_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("efficiency-audit.yml"), "outptu-dir: x\n").unwrap();
    let out = ceilings(dir.path(), &["--quick"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("outptu-dir"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn ctrl_c_during_the_disk_probe_removes_its_file_and_exits_130() {
    let cwd = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    // The real (not --quick) probe: the disk phase lasts seconds, long enough to interrupt.
    let mut child = Command::new(BIN)
        .current_dir(cwd.path())
        .args(["ceilings", "--quiet", "--workspace"])
        .arg(workspace.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let temp_file_exists = || {
        std::fs::read_dir(workspace.path())
            .unwrap()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".efficiency-audit-disk-")
            })
    };
    while !temp_file_exists() {
        assert!(Instant::now() < deadline, "the disk probe never started");
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before the disk probe was seen"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(std::fs::read_dir(workspace.path()).unwrap().count(), 0);
    assert!(
        !cwd.path()
            .join("report/efficiency/theoretical_limits.yaml")
            .exists()
    );
}
