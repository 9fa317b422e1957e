//! Step 3's promises on shaped fixtures: each strategy rewrites the shapes it targets into
//! code that still parses (tree-sitter and Python's own parser), and the diffs are pinned.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail the test loudly"
)]

use std::path::Path;
use std::process::Command;

use efficiency_audit::config::Strategies;
use efficiency_audit::strategies::patch::{error_count, parse};
use efficiency_audit::strategies::{GpuState, Machine, Parsed, Plan, Ranked, plan_on};

fn gpu_machine() -> Machine {
    Machine {
        cores: 8,
        cores_source: "8 CPUs available (test)".to_owned(),
        gpu: GpuState::Present {
            name: "NVIDIA H100 80GB HBM3".to_owned(),
            capability: Some((9, 0)),
            fp32: Some((51.2, "measured")),
            tf32: Some((378.0, "datasheet")),
            bf16: Some((756.0, "datasheet")),
        },
    }
}

fn cfg() -> Strategies {
    Strategies {
        max: 3,
        allow_numerics: true,
        include: Vec::new(),
        exclude: Vec::new(),
    }
}

fn fixture(name: &str) -> Parsed {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/strategies")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    Parsed::new(name, &text).unwrap()
}

fn plan_for(name: &str, machine: Machine) -> Plan {
    plan_on(&[fixture(name)], &[], machine, &cfg())
}

fn strategy<'a>(plan: &'a Plan, id: &str) -> &'a Ranked {
    plan.ranked
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id} not proposed; skipped: {:#?}", plan.skipped))
}

/// Every variant's files parse cleanly with tree-sitter and with Python's own parser.
fn assert_runnable_syntax(r: &Ranked) {
    for c in &r.candidates {
        for f in &c.patch {
            let tree = parse(&f.new_text).unwrap();
            assert_eq!(
                error_count(&tree),
                0,
                "{} {:?}:\n{}",
                r.id,
                c.variant,
                f.new_text
            );
            let status = Command::new("python3")
                .args(["-c", "import ast, sys; ast.parse(sys.stdin.read())"])
                .stdin(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    use std::io::Write;
                    child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(f.new_text.as_bytes())?;
                    child.wait()
                })
                .expect("python3 is required by the strategy tests");
            assert!(
                status.success(),
                "python3 rejects {} {:?}:\n{}",
                r.id,
                c.variant,
                f.new_text
            );
        }
    }
}

fn diffs(r: &Ranked) -> String {
    r.candidates
        .iter()
        .map(|c| {
            format!(
                "# variant {}\n{}",
                c.variant.as_deref().unwrap_or("-"),
                c.diff
            )
        })
        .collect()
}

#[test]
fn for_append_loop_becomes_a_process_pool_map() {
    let plan = plan_for("for_append.py", gpu_machine());
    let r = strategy(&plan, "parallel-map");
    assert_runnable_syntax(r);
    let names: Vec<_> = r
        .candidates
        .iter()
        .map(|c| c.variant.clone().unwrap())
        .collect();
    assert_eq!(names, ["workers-2", "workers-4", "workers-8"]);
    insta::assert_snapshot!(diffs(r));
}

#[test]
fn list_comprehensions_over_files_become_pool_maps() {
    let plan = plan_for("list_comprehension.py", gpu_machine());
    let r = strategy(&plan, "parallel-map");
    assert_runnable_syntax(r);
    assert_eq!(r.sites.len(), 2, "{:#?}", r.sites);
    insta::assert_snapshot!(diffs(&Ranked {
        candidates: r.candidates[..1].to_vec(),
        ..r.clone()
    }));
}

#[test]
fn parallel_output_equals_serial_output() {
    // The patched fixtures print the same thing as the originals.
    for name in ["for_append.py", "list_comprehension.py"] {
        let plan = plan_for(name, gpu_machine());
        let r = strategy(&plan, "parallel-map");
        let dir = tempfile::tempdir().unwrap();
        let original = &r.candidates[0].patch[0].expected_original;
        let patched = &r.candidates[0].patch[0].new_text;
        std::fs::write(dir.path().join("orig.py"), original).unwrap();
        std::fs::write(dir.path().join("patched.py"), patched).unwrap();
        let run = |file: &str| {
            let out = Command::new("python3")
                .arg(dir.path().join(file))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{file}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(run("orig.py"), run("patched.py"), "{name}");
    }
}

#[test]
fn dataloader_calls_with_and_without_keywords_get_workers() {
    let plan = plan_for("dataloader.py", gpu_machine());
    let r = strategy(&plan, "parallel-data-loading");
    assert_runnable_syntax(r);
    // plain, keyworded, multiline (num_workers=0), positional 0, epochs; `done` is left alone.
    assert_eq!(r.sites.len(), 5, "{:#?}", r.sites);
    let first = &r.candidates[0].patch[0].new_text;
    assert!(
        first.contains("done = DL(ds, num_workers=4, persistent_workers=True, pin_memory=True)")
    );
    // Persistent workers only where the loader is iterated once per epoch.
    assert!(first.contains(
        "epochs = DL(ds, batch_size=4, num_workers=2, persistent_workers=True, pin_memory=True)"
    ));
    assert!(first.contains("plain = DL(ds, num_workers=2, pin_memory=True)"));
    insta::assert_snapshot!(diffs(r));
}

#[test]
fn dataloader_on_a_machine_without_gpu_is_not_pinned() {
    let machine = Machine {
        gpu: GpuState::Absent,
        ..gpu_machine()
    };
    let plan = plan_for("dataloader.py", machine);
    let r = strategy(&plan, "parallel-data-loading");
    assert!(
        r.candidates
            .iter()
            .all(|c| !c.diff.contains("pin_memory=True)\n+"))
    );
    assert!(
        !r.candidates[0].patch[0]
            .new_text
            .contains("plain = DL(ds, num_workers=2, persistent_workers=True, pin_memory")
    );
}

#[test]
fn eval_loops_get_no_grad() {
    let plan = plan_for("eval_loop.py", gpu_machine());
    let r = strategy(&plan, "disable-autograd");
    assert_runnable_syntax(r);
    // `validate` is decorated, the loop after `net.eval()` wrapped, `already_fine` untouched.
    assert_eq!(r.sites.len(), 2, "{:#?}", r.sites);
    insta::assert_snapshot!(diffs(r));
}

#[test]
fn training_step_fixture_gets_sync_copy_and_precision_patches() {
    let plan = plan_for("train_step.py", gpu_machine());
    let mut all = String::new();
    for id in [
        "deferred-host-sync",
        "non-blocking-copies",
        "create-on-device",
        "tf32",
        "autocast",
        "torch-compile",
        "larger-batch",
    ] {
        let r = strategy(&plan, id);
        assert_runnable_syntax(r);
        all.push_str(&format!("## {id}\n{}", diffs(r)));
    }
    insta::assert_snapshot!(all);
}

#[test]
fn host_sync_float_sums_are_numerics_and_counts_are_safe() {
    let train = plan_for("train_step.py", gpu_machine());
    let r = strategy(&train, "deferred-host-sync");
    assert_eq!(
        r.safety,
        efficiency_audit::analysis::model::Applicability::Numerics
    );
    let eval = plan_for("eval_loop.py", gpu_machine());
    let r = strategy(&eval, "deferred-host-sync");
    assert_eq!(
        r.safety,
        efficiency_audit::analysis::model::Applicability::Safe
    );
}

#[test]
fn no_gpu_makes_gpu_only_strategies_not_applicable_and_says_so() {
    let machine = Machine {
        gpu: GpuState::Absent,
        ..gpu_machine()
    };
    let plan = plan_for("train_step.py", machine);
    for id in ["tf32", "autocast", "non-blocking-copies"] {
        let skipped = plan.skipped.iter().find(|s| s.id == id).unwrap();
        assert!(
            skipped.reason.contains("no GPU"),
            "{id}: {}",
            skipped.reason
        );
    }
}

#[test]
fn pre_ampere_gpus_get_fp16_only_and_no_tf32() {
    let machine = Machine {
        gpu: GpuState::Present {
            name: "Tesla T4".to_owned(),
            capability: Some((7, 5)),
            fp32: Some((8.1, "datasheet")),
            tf32: None,
            bf16: Some((65.0, "datasheet")),
        },
        ..gpu_machine()
    };
    let plan = plan_for("train_step.py", machine);
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.id == "tf32" && s.reason.contains("8.0"))
    );
    let r = strategy(&plan, "autocast");
    let names: Vec<_> = r
        .candidates
        .iter()
        .filter_map(|c| c.variant.clone())
        .collect();
    assert_eq!(names, ["fp16"]);
    assert!(r.candidates[0].diff.contains("GradScaler"));
}

#[test]
fn expected_gain_is_bounded_by_the_measured_ceilings() {
    let mut machine = gpu_machine();
    machine.gpu = GpuState::Present {
        name: "Small GPU".to_owned(),
        capability: Some((8, 6)),
        fp32: Some((20.0, "measured")),
        tf32: Some((30.0, "measured")),
        bf16: Some((40.0, "measured")),
    };
    let plan = plan_for("train_step.py", machine);
    let tf32 = strategy(&plan, "tf32");
    assert!(
        (tf32.expected_gain.upper - 1.5).abs() < 1e-9,
        "{:?}",
        tf32.expected_gain
    );
    assert!(
        tf32.expected_gain
            .bound
            .as_deref()
            .unwrap()
            .contains("TF32 30.0")
    );
    let amp = strategy(&plan, "autocast");
    assert!(
        (amp.expected_gain.upper - 2.0).abs() < 1e-9,
        "{:?}",
        amp.expected_gain
    );
    assert!(amp.expected_gain.expected <= amp.expected_gain.upper);
}

#[test]
fn per_row_append_opens_move_out_of_the_loop_and_write_the_same_bytes() {
    let plan = plan_for("row_writes.py", gpu_machine());
    let r = strategy(&plan, "hoist-file-open");
    assert_runnable_syntax(r);
    assert_eq!(r.sites.len(), 1, "{:#?}", r.sites);
    assert!(
        r.reasons.iter().any(|x| x.contains("one file per row")),
        "{:#?}",
        r.reasons
    );
    insta::assert_snapshot!(diffs(r));
    let dir = tempfile::tempdir().unwrap();
    let file = &r.candidates[0].patch[0];
    let run = |script: &str, name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, script).unwrap();
        let out_dir = dir.path().join(format!("{name}.out"));
        let out = Command::new("python3")
            .arg(&path)
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let all = std::fs::read_to_string(out_dir.join("all.jsonl")).unwrap();
        (String::from_utf8(out.stdout).unwrap(), all)
    };
    assert_eq!(
        run(&file.expected_original, "orig.py"),
        run(&file.new_text, "patched.py")
    );
}

#[test]
fn scripts_without_a_main_guard_get_no_workers() {
    let src = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(list(range(8)), batch_size=2)\nfor b in loader:\n    pass\n";
    let file = Parsed::new("top.py", src).unwrap();
    let plan = plan_on(&[file], &[], gpu_machine(), &cfg());
    let r = strategy(&plan, "parallel-data-loading");
    let text = &r.candidates[0].patch[0].new_text;
    assert!(!text.contains("num_workers"), "{text}");
    assert!(text.contains("pin_memory=True"), "{text}");
    assert!(
        r.reasons.iter().any(|x| x.contains("guard")),
        "{:#?}",
        r.reasons
    );
}

#[test]
fn pandas_row_arithmetic_becomes_column_expressions() {
    let plan = plan_for("pandas_rows.py", gpu_machine());
    let r = strategy(&plan, "vectorize-pandas");
    assert_runnable_syntax(r);
    assert_eq!(r.sites.len(), 2, "{:#?}", r.sites);
    let text = &r.candidates[0].patch[0].new_text;
    assert!(
        text.contains("    df[\"total\"] = df[\"price\"] * df[\"qty\"] - (df[\"discount\"] / 2)\n")
    );
    assert!(text.contains("df[\"margin\"] = df[\"total\"] * 0.2 + 1\n"));
    assert!(text.contains("lambda r: str(r[\"qty\"])"));
    insta::assert_snapshot!(diffs(r));
}
