//! Step 4 end to end on real Python workloads: real speed-ups detected, failing variants,
//! stale patches, numerics without a gate, gates, stacking, broken baselines — and the audited
//! folder is never modified.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod experiments_support;

use std::time::Duration;

use efficiency_audit::analysis::model::Applicability;
use efficiency_audit::experiments::{ExperimentError, Gate, Settings, Status, run_experiments};
use efficiency_audit::progress::Console;
use experiments_support::{bench, bench_throughput, edit, strategies, tree_hash, workload};

const WAIT1: &str = "    time.sleep(0.25)  # wait-1\n";
const WAIT2: &str = "    time.sleep(0.25)  # wait-2\n";

fn quiet() -> Console {
    Console::new(true)
}

#[test]
fn real_speedups_are_detected_failures_follow_the_rule_and_winners_stack() {
    let dir = workload("sleepy");
    let out = tempfile::tempdir().unwrap();
    let before = tree_hash(dir.path());
    let d = dir.path();
    let candidates = vec![
        // Strategy 1: the first variant breaks the program (FAILED), the second removes a wait.
        edit(
            d,
            "drop-wait-1",
            Some("broken"),
            Applicability::Safe,
            "work.py",
            WAIT1,
            "    raise SystemExit(3)\n",
        ),
        edit(
            d,
            "drop-wait-1",
            Some("fixed"),
            Applicability::Safe,
            "work.py",
            WAIT1,
            "",
        ),
        // A third variant is never tried: the strategy already has a winner.
        edit(
            d,
            "drop-wait-1",
            Some("unused"),
            Applicability::Safe,
            "work.py",
            WAIT1,
            "    pass\n",
        ),
        // Strategy 2: a patch made against code that has since changed (SKIPPED).
        {
            let mut c = edit(d, "stale", None, Applicability::Safe, "work.py", WAIT2, "");
            c.patch[0]
                .expected_original
                .push_str("# someone edited this file\n");
            c
        },
        // Strategy 3: a change that makes it slower (FAILED). (A true no-op is left to the
        // statistics tests: at 95 % it may legitimately "pass" 1 time in 20.)
        edit(
            d,
            "slower",
            None,
            Applicability::Safe,
            "work.py",
            "def load():\n",
            "def load():\n    time.sleep(0.6)\n",
        ),
        // Strategy 4: removes the other wait (same file, other lines: stacks with strategy 1).
        edit(
            d,
            "drop-wait-2",
            None,
            Applicability::Safe,
            "work.py",
            WAIT2,
            "",
        ),
    ];
    let bench = bench_throughput("python3 work.py");
    let strategies = strategies(false);
    let settings = Settings {
        dir: d,
        output_dir: out.path(),
        bench: &bench,
        strategies: &strategies,
        ceilings: None,
        sample_interval: Duration::from_millis(200),
    };
    let outcome = run_experiments(&settings, &candidates, &quiet()).unwrap();

    let got: Vec<(String, Option<String>, Status)> = outcome
        .results
        .iter()
        .map(|r| (r.strategy.clone(), r.variant.clone(), r.status))
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        got,
        vec![
            (s("drop-wait-1"), Some(s("broken")), Status::Failed),
            (s("drop-wait-1"), Some(s("fixed")), Status::Passed),
            (s("stale"), None, Status::Skipped),
            (s("slower"), None, Status::Failed),
            (s("drop-wait-2"), None, Status::Passed),
        ],
        "{:#?}",
        outcome.results
    );
    let r = &outcome.results;
    assert!(
        r[0].reason.contains("exited with status 3"),
        "{}",
        r[0].reason
    );
    assert!(
        r[2].reason.contains("patch target changed"),
        "{}",
        r[2].reason
    );
    // The claim is FAILED; with a 0.6 s slowdown the interval is usually below 1.0 too.
    assert!(
        r[3].reason.starts_with("slower") || r[3].reason.starts_with("no measurable speed-up"),
        "{}",
        r[3].reason
    );
    // Removing one of two 0.25 s waits doubles the in-process throughput: a real margin; the
    // claim is the interval, its size only sanity-checked.
    for winner in [&r[1], &r[4]] {
        assert!(winner.ci_low.unwrap() > 1.0, "{winner:?}");
        assert!(winner.speedup.unwrap() > 1.5, "{winner:?}");
    }
    let stacked = outcome.stacked.as_ref().unwrap();
    assert_eq!(stacked.status, Status::Passed, "{stacked:?}");
    assert!(
        stacked.speedup.unwrap() > r[1].speedup.unwrap().max(r[4].speedup.unwrap()),
        "{stacked:?}"
    );

    // Logs: one per variant tried, with the patch, the runs, the statistics and the status.
    for name in [
        "baseline",
        "drop-wait-1-broken",
        "drop-wait-1-fixed",
        "stale",
        "slower",
        "drop-wait-2",
        "stacked",
    ] {
        let log =
            std::fs::read_to_string(out.path().join(format!("experiments/{name}.log"))).unwrap();
        assert!(
            log.contains("## Runs") && log.contains("## Correctness gate"),
            "{name}:\n{log}"
        );
    }
    let fixed =
        std::fs::read_to_string(out.path().join("experiments/drop-wait-1-fixed.log")).unwrap();
    assert!(fixed.contains("status:        PASSED"), "{fixed}");
    assert!(fixed.contains("-    time.sleep(0.25)  # wait-1"), "{fixed}");
    assert!(fixed.contains("95 % CI ["), "{fixed}");
    assert!(
        fixed.contains("\ncpu: "),
        "every log repeats the baseline's sampled saturation: {fixed}"
    );
    let base_log = std::fs::read_to_string(out.path().join("experiments/baseline.log")).unwrap();
    assert!(base_log.contains("cpu: "), "{base_log}");
    assert!(base_log.contains("sampler: "), "{base_log}");

    // The baseline was sampled: a sleeping process barely uses the CPU.
    let m = outcome.measured_saturation.as_ref().unwrap();
    assert!(m.saturation.cpu.value.unwrap() < 0.5, "{m:?}");
    assert!(m.samples > 3);

    assert_eq!(tree_hash(d), before, "the audited folder was modified");
}

#[test]
fn numerics_without_a_gate_is_unverified_and_skipped_unless_allowed() {
    let dir = workload("sleepy");
    let out = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cand = edit(
        d,
        "fast-math",
        None,
        Applicability::Numerics,
        "work.py",
        WAIT1,
        "",
    );
    let bench = bench_throughput("python3 work.py");

    let denied = strategies(false);
    let settings = Settings {
        dir: d,
        output_dir: out.path(),
        bench: &bench,
        strategies: &denied,
        ceilings: None,
        sample_interval: Duration::from_millis(200),
    };
    let outcome = run_experiments(&settings, std::slice::from_ref(&cand), &quiet()).unwrap();
    assert_eq!(outcome.results[0].status, Status::Skipped);
    assert!(
        outcome.results[0].reason.contains("allow-numerics"),
        "{}",
        outcome.results[0].reason
    );

    let allowed = strategies(true);
    let settings = Settings {
        strategies: &allowed,
        ..settings
    };
    let outcome = run_experiments(&settings, &[cand], &quiet()).unwrap();
    let r = &outcome.results[0];
    assert_eq!(r.status, Status::Passed, "{r:?}");
    assert_eq!(r.gate, Gate::Unverified);
    assert!(
        r.reason
            .contains("speed-up measured, correctness unverified"),
        "{}",
        r.reason
    );
}

#[test]
fn the_correctness_gate_fails_a_faster_but_wrong_candidate() {
    let dir = workload("sleepy");
    let out = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Faster (no wait) but computes a different result.
    let mut wrong = edit(d, "wrong", None, Applicability::Safe, "work.py", WAIT2, "");
    wrong.patch[0].new_text = wrong.patch[0].new_text.replace("x * x", "x * 2");
    let mut bench = bench("python3 work.py");
    bench.check_regex = Some(r"result=([0-9]+)".to_owned());
    bench.check_rtol = 0.0;
    bench.metric_regex = Some(r"throughput=([0-9.]+)".to_owned());
    let strategies = strategies(false);
    let settings = Settings {
        dir: d,
        output_dir: out.path(),
        bench: &bench,
        strategies: &strategies,
        ceilings: None,
        sample_interval: Duration::from_millis(200),
    };
    let right = edit(d, "right", None, Applicability::Safe, "work.py", WAIT2, "");
    let outcome = run_experiments(&settings, &[wrong, right], &quiet()).unwrap();
    let (w, r) = (&outcome.results[0], &outcome.results[1]);
    assert_eq!(w.status, Status::Failed, "{w:?}");
    assert!(
        matches!(&w.gate, Gate::Failed { reason } if reason.contains("differs from the baseline")),
        "{w:?}"
    );
    assert_eq!(r.status, Status::Passed, "{r:?}");
    assert!(matches!(r.gate, Gate::Passed { .. }), "{r:?}");
    assert_eq!(outcome.baseline.check_value, Some(2_666_466_670_000.0));
}

fn broken(command: &str, timeout: Duration) -> String {
    let dir = workload("sleepy");
    let out = tempfile::tempdir().unwrap();
    let mut bench = bench(command);
    bench.timeout = timeout;
    let strategies = strategies(false);
    let settings = Settings {
        dir: dir.path(),
        output_dir: out.path(),
        bench: &bench,
        strategies: &strategies,
        ceilings: None,
        sample_interval: Duration::from_millis(200),
    };
    let cand = edit(
        dir.path(),
        "drop-wait-1",
        None,
        Applicability::Safe,
        "work.py",
        WAIT1,
        "",
    );
    let err = run_experiments(&settings, &[cand], &quiet()).unwrap_err();
    assert!(
        matches!(err, ExperimentError::BaselineBroken { .. }),
        "{err}"
    );
    let log = std::fs::read_to_string(out.path().join("experiments/baseline.log")).unwrap();
    assert!(log.contains("status:        FAILED"), "{log}");
    err.to_string()
}

#[test]
fn a_broken_baseline_stops_with_a_clear_message_never_a_result() {
    let msg = broken("python3 work.py; exit 4", Duration::from_secs(60));
    assert!(
        msg.contains("the benchmark itself is broken") && msg.contains("exited with status 4"),
        "{msg}"
    );
    let msg = broken("no-such-benchmark-xyz", Duration::from_secs(60));
    assert!(msg.contains("command not found"), "{msg}");
    let msg = broken("sleep 100 & sleep 100", Duration::from_secs(1));
    assert!(msg.contains("timed out"), "{msg}");
    let mut b = bench("python3 work.py");
    b.metric_regex = Some("images/s=([0-9.]+)".to_owned());
    let dir = workload("sleepy");
    let out = tempfile::tempdir().unwrap();
    let strategies = strategies(false);
    let settings = Settings {
        dir: dir.path(),
        output_dir: out.path(),
        bench: &b,
        strategies: &strategies,
        ceilings: None,
        sample_interval: Duration::from_millis(200),
    };
    let err = run_experiments(&settings, &[], &quiet())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("metric-regex `images/s=([0-9.]+)` matched nothing"),
        "{err}"
    );
}

#[test]
fn a_spent_budget_skips_candidates_instead_of_running_past_it() {
    let dir = workload("sleepy");
    let out = tempfile::tempdir().unwrap();
    let mut bench = bench("python3 work.py");
    // Enough for the baseline's warm-up and 3 runs, not for a comparison of 2 × 4 more runs.
    bench.budget = Duration::from_secs(3);
    let strategies = strategies(false);
    let settings = Settings {
        dir: dir.path(),
        output_dir: out.path(),
        bench: &bench,
        strategies: &strategies,
        ceilings: None,
        sample_interval: Duration::from_millis(200),
    };
    let cand = edit(
        dir.path(),
        "drop-wait-1",
        None,
        Applicability::Safe,
        "work.py",
        WAIT1,
        "",
    );
    let outcome = run_experiments(&settings, &[cand], &quiet()).unwrap();
    let r = &outcome.results[0];
    assert_eq!(r.status, Status::Skipped, "{r:?}");
    assert!(r.reason.starts_with("budget exhausted"), "{}", r.reason);
    assert_eq!(
        outcome.baseline.summary.n, 3,
        "the baseline still gets its min-runs"
    );
}
