//! The runner on real processes: a hang with grandchildren, a flood of output, a missing
//! command, and the sampler on a busy process.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod experiments_support;

use std::path::Path;
use std::time::{Duration, Instant};

use efficiency_audit::experiments::runner::{CommandRunner, ExitKind, RunRequest, SystemRunner};
use efficiency_audit::experiments::sampler::SamplerConfig;
use experiments_support::gone;

fn run(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    sample: Option<&SamplerConfig>,
) -> efficiency_audit::experiments::runner::RunOutput {
    SystemRunner.run(&RunRequest {
        command,
        cwd,
        timeout,
        capture_limit: 1 << 20,
        sample,
        on_tick: None,
    })
}

#[test]
fn timeout_kills_the_whole_process_group_grandchildren_included() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let cmd = format!(
        "sleep 100 & echo $! > {p}; sh -c 'sleep 100 & echo $! >> {p}; sleep 100' & sleep 100",
        p = pidfile.display()
    );
    let start = Instant::now();
    let out = run(&cmd, dir.path(), Duration::from_secs(1), None);
    assert_eq!(out.exit, ExitKind::TimedOut);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the runner waited for the sleeps"
    );
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "both background sleeps started");
    // SIGKILL delivery is asynchronous: give the kernel a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pids.iter().all(|p| gone(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in pids {
        assert!(gone(pid), "grandchild {pid} survived the timeout");
    }
}

#[test]
fn background_processes_left_behind_are_killed_after_a_normal_exit() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let cmd = format!("sleep 100 & echo $! > {}; echo done", pidfile.display());
    let out = run(&cmd, dir.path(), Duration::from_secs(30), None);
    assert_eq!(out.exit, ExitKind::Code(0));
    assert_eq!(out.stdout.trim(), "done");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone(pid), "the stray background sleep survived");
}

#[test]
fn flooding_stdout_is_captured_with_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    // 50 MB of output, then a final line that must survive (the tail is kept).
    let out = run(
        "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo final=7",
        dir.path(),
        Duration::from_secs(60),
        None,
    );
    assert_eq!(out.exit, ExitKind::Code(0));
    assert!(
        out.stdout.len() < (1 << 20) + 200,
        "{} bytes kept",
        out.stdout.len()
    );
    assert!(out.stdout_dropped > 48_000_000, "{}", out.stdout_dropped);
    assert!(out.stdout.trim_end().ends_with("final=7"));
    assert!(out.stdout.contains("bytes omitted"));
}

#[test]
fn a_missing_command_is_exit_127_with_the_shell_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        "no-such-benchmark-command-xyz --flag",
        dir.path(),
        Duration::from_secs(30),
        None,
    );
    assert_eq!(out.exit, ExitKind::Code(127));
    assert!(out.stderr.contains("not found"), "{}", out.stderr);
}

#[test]
fn sampler_sees_the_cpu_of_children_and_its_own_cost_is_small() {
    let dir = tempfile::tempdir().unwrap();
    // Two busy child processes for ~1.5 s (grandchildren of the shell).
    let cmd = "python3 -c 'import time\nt=time.time()\nwhile time.time()-t<1.5: pass' & python3 -c 'import time\nt=time.time()\nwhile time.time()-t<1.5: pass' & wait";
    let cfg = SamplerConfig {
        gpus: false,
        ..SamplerConfig::for_this_machine()
    };
    let out = run(cmd, dir.path(), Duration::from_secs(60), Some(&cfg));
    assert_eq!(out.exit, ExitKind::Code(0));
    let s = out.sampling.unwrap();
    assert!(s.samples >= 4, "{s:?}");
    assert!(s.max_processes >= 3, "shell + 2 pythons: {s:?}");
    // Two busy processes: the tree used clearly more than a trickle of CPU. (On a shared
    // machine they may get less than two cores; the margin is wide on purpose.)
    assert!(s.cpu_s > 0.5, "{s:?}");
    assert!(s.sampler_cpu_s < 0.1 * s.duration_s, "{s:?}");
}

#[test]
#[ignore = "known gap: bytes written by a grandchild that exits between two samples are lost (/proc/<pid>/io is not folded into the parent on reap); seen 35.6 of 40 MiB under load"]
fn sampler_counts_the_disk_bytes_the_tree_writes() {
    // On the build's filesystem, not /tmp: a tmpfs /tmp would do no block IO at all.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cfg = SamplerConfig {
        gpus: false,
        ..SamplerConfig::for_this_machine()
    };
    // 40 MiB written and synced by a grandchild (the `sh -c` runs two commands, so it forks).
    let out = run(
        "dd if=/dev/zero of=blob bs=1M count=40 conv=fsync 2>/dev/null; rm -f blob",
        dir.path(),
        Duration::from_secs(120),
        Some(&cfg),
    );
    assert_eq!(out.exit, ExitKind::Code(0));
    let s = out.sampling.unwrap();
    assert!(s.write_bytes >= 40 << 20, "{s:?}");
}
