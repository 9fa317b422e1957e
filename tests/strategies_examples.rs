//! Step 3 on the bundled examples: the patched pipeline still runs and prints the same
//! figures, rankings are stable on fixed inputs, and the CLI writes `strategies.md`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use efficiency_audit::config::Strategies;
use efficiency_audit::strategies::{GpuState, Machine, Plan, load_sources, plan_on};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn plan_example(name: &str, machine: Machine, allow_numerics: bool) -> Plan {
    let dir = root().join("examples").join(name);
    let sources = load_sources(&dir, std::slice::from_ref(&dir)).unwrap();
    let cfg = Strategies {
        max: 3,
        allow_numerics,
        include: Vec::new(),
        exclude: Vec::new(),
    };
    plan_on(&sources, &[], machine, &cfg)
}

fn cpu_machine(cores: usize) -> Machine {
    Machine {
        cores,
        cores_source: format!("{cores} CPUs available (test)"),
        gpu: GpuState::Absent,
    }
}

/// `records=… slow=…` of a pipeline run.
fn pipeline_counts(script: &Path) -> String {
    let work = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .arg(script)
        .args(["--records", "160", "--workdir"])
        .arg(work.path().join("w"))
        .output()
        .expect("python3 is required by the end-to-end tests");
    assert!(
        out.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout
        .lines()
        .find(|l| l.starts_with("records="))
        .unwrap_or_else(|| panic!("no records= line in {stdout}"))
        .to_owned()
}

#[test]
fn patched_pipeline_runs_and_prints_the_same_slow_count() {
    let plan = plan_example("pipeline", cpu_machine(2), false);
    assert_eq!(plan.ranked[0].id, "parallel-map", "{:#?}", plan.ranked);
    let candidate = &plan.ranked[0].candidates[0];
    assert_eq!(candidate.variant.as_deref(), Some("workers-2"));
    let [file] = &candidate.patch[..] else {
        panic!("one file expected: {:#?}", candidate.patch)
    };
    assert_eq!(file.path, "pipeline.py");
    let original = root().join("examples/pipeline/pipeline.py");
    assert_eq!(
        std::fs::read_to_string(&original).unwrap(),
        file.expected_original
    );
    let dir = tempfile::tempdir().unwrap();
    let patched = dir.path().join("pipeline.py");
    std::fs::write(&patched, &file.new_text).unwrap();
    let before = pipeline_counts(&original);
    assert!(before.contains(" slow="), "{before}");
    assert_eq!(before, pipeline_counts(&patched));
    assert!(
        candidate
            .diff
            .starts_with("--- a/pipeline.py\n+++ b/pipeline.py\n")
    );
}

#[test]
fn ranking_of_the_training_example_is_stable() {
    let machine = Machine {
        cores: 16,
        cores_source: "16 CPUs available (test)".to_owned(),
        gpu: GpuState::Present {
            name: "NVIDIA H100 80GB HBM3".to_owned(),
            capability: Some((9, 0)),
            fp32: Some((51.2, "measured")),
            tf32: Some((378.0, "datasheet")),
            bf16: Some((756.0, "datasheet")),
        },
    };
    let plan = plan_example("torch-train", machine.clone(), true);
    let order: Vec<(&str, String)> = plan
        .ranked
        .iter()
        .map(|r| (r.id.as_str(), format!("{:.3}", r.score)))
        .collect();
    insta::assert_debug_snapshot!(order);
    for pair in plan.ranked.windows(2) {
        assert!(pair[0].score >= pair[1].score);
    }
    // Without allow-numerics the safe strategies come first and the others are held back.
    let safe_first = plan_example("torch-train", machine, false);
    let first_held = safe_first
        .ranked
        .iter()
        .position(|r| r.held_back.is_some())
        .unwrap();
    assert!(
        safe_first.ranked[..first_held]
            .iter()
            .all(|r| r.safety_weight == 1.0)
    );
    assert!(
        safe_first.ranked[first_held..]
            .iter()
            .all(|r| r.held_back.is_some())
    );
    assert_eq!(safe_first.candidates(3).len(), 3.min(first_held));
}

#[test]
fn worker_variants_follow_the_core_count() {
    let two = plan_example("torch-train", cpu_machine(2), false);
    let r = two
        .ranked
        .iter()
        .find(|r| r.id == "parallel-data-loading")
        .unwrap();
    let names: Vec<_> = r
        .candidates
        .iter()
        .filter_map(|c| c.variant.as_deref())
        .collect();
    assert_eq!(names, ["workers-2", "workers-1"]);
    let many = plan_example("torch-train", cpu_machine(32), false);
    let r = many
        .ranked
        .iter()
        .find(|r| r.id == "parallel-data-loading")
        .unwrap();
    let names: Vec<_> = r
        .candidates
        .iter()
        .filter_map(|c| c.variant.as_deref())
        .collect();
    assert_eq!(names, ["workers-2", "workers-16", "workers-32"]);
}

#[test]
fn cli_writes_strategies_md_with_the_ranked_table_and_diffs() {
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_efficiency-audit"))
        .arg("--output-dir")
        .arg(out.path())
        .arg("--quiet")
        .arg("strategies")
        .arg(root().join("examples/pipeline"))
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(out.path().join("strategies.md")).unwrap();
    assert!(md.contains("| Rank | Strategy | Title | Kind | Targets | Expected gain | Safety | Applicability | Score |"));
    assert!(md.contains("| 1 | `parallel-map` |"), "{md}");
    assert!(
        md.contains("```diff\n--- a/pipeline.py\n+++ b/pipeline.py\n"),
        "{md}"
    );
    assert!(md.contains("## Not applicable"));
    // The candidates step 4 reads: the top strategy's variants, round-tripping through JSON.
    let json = std::fs::read_to_string(out.path().join("candidates.json")).unwrap();
    let candidates: Vec<efficiency_audit::strategies::Candidate> =
        serde_json::from_str(&json).unwrap();
    assert_eq!(candidates[0].id, "parallel-map");
    assert_eq!(candidates[0].patch[0].path, "pipeline.py");
    assert!(out.path().join("strategies.json").is_file());
}

#[test]
fn step_two_findings_are_resolved_and_confirm_the_fit() {
    let dir = root().join("examples/torch-train");
    let sources = load_sources(&dir, std::slice::from_ref(&dir)).unwrap();
    let rules = efficiency_audit::config::Rules::default();
    let analyses: Vec<_> = sources
        .iter()
        .map(|s| efficiency_audit::analysis::analyze_file(&s.path, s.text.as_bytes(), &rules))
        .collect();
    let cfg = Strategies {
        max: 3,
        allow_numerics: false,
        include: Vec::new(),
        exclude: Vec::new(),
    };
    let with = efficiency_audit::strategies::plan_analyses(&analyses, &sources, None, &cfg);
    let without = efficiency_audit::strategies::plan(&sources, &[], None, &cfg);
    let loading = |p: &Plan| {
        p.ranked
            .iter()
            .find(|r| r.id == "parallel-data-loading")
            .cloned()
            .unwrap()
    };
    let (w, wo) = (loading(&with), loading(&without));
    assert!(wo.resolves.is_empty());
    let categories: Vec<&str> = w.resolves.iter().map(|r| r.category.as_str()).collect();
    assert!(
        categories.contains(&"dataloader_workers"),
        "{:#?}",
        w.resolves
    );
    assert!(w.resolves.iter().all(|r| r.path == "train.py"));
    assert!(w.applicability > wo.applicability || wo.applicability >= 0.95);
    assert!(w.reasons.iter().any(|r| r.starts_with("confirmed by ")));
}

#[test]
fn every_patch_of_the_rule_corpus_still_parses_with_python() {
    let dir = root().join("tests/fixtures/corpus");
    let sources = load_sources(&dir, std::slice::from_ref(&dir)).unwrap();
    let rules = efficiency_audit::config::Rules::default();
    let findings: Vec<_> = sources
        .iter()
        .flat_map(|s| {
            efficiency_audit::analysis::analyze_file(&s.path, s.text.as_bytes(), &rules).findings
        })
        .collect();
    let cfg = Strategies {
        max: 3,
        allow_numerics: true,
        include: Vec::new(),
        exclude: Vec::new(),
    };
    let machine = Machine {
        cores: 8,
        cores_source: "8 CPUs available (test)".to_owned(),
        gpu: GpuState::Unknown,
    };
    let plan = plan_on(&sources, &findings, machine, &cfg);
    let out = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for r in &plan.ranked {
        for (ci, c) in r.candidates.iter().enumerate() {
            for f in &c.patch {
                let p = out
                    .path()
                    .join(format!("{}-{ci}-{}", r.id, f.path.replace('/', "_")));
                std::fs::write(&p, &f.new_text).unwrap();
                paths.push(p);
            }
        }
    }
    assert!(plan.ranked.len() >= 10, "{:#?}", plan.skipped);
    assert!(paths.len() >= 20, "{} patched files", paths.len());
    let check = Command::new("python3")
        .args([
            "-c",
            "import ast, sys\nfor p in sys.argv[1:]:\n    ast.parse(open(p).read(), p)",
        ])
        .args(&paths)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn the_machine_comes_from_the_ceilings_file() {
    let yaml = std::fs::read_to_string(root().join("tests/fixtures/theoretical_limits_h100.yaml"))
        .unwrap();
    let ceilings = efficiency_audit::ceilings::model::Ceilings::from_yaml(&yaml).unwrap();
    let machine = Machine::from_ceilings(Some(&ceilings));
    assert_eq!(machine.cores, 16);
    let GpuState::Present { capability, .. } = &machine.gpu else {
        panic!("{machine:?}")
    };
    assert_eq!(*capability, Some((9, 0)));
    // Measured figures win over the datasheet: 378 / 51.2 TF32, 731 / 51.2 BF16.
    let (tf32, why) = machine
        .tensor_ratio(efficiency_audit::strategies::TensorPrecision::Tf32)
        .unwrap();
    assert!((tf32 - 378.0 / 51.2).abs() < 1e-9, "{why}");
    assert!(why.contains("measured"), "{why}");
    let dir = root().join("examples/torch-train");
    let sources = load_sources(&dir, std::slice::from_ref(&dir)).unwrap();
    let cfg = Strategies {
        max: 3,
        allow_numerics: true,
        include: Vec::new(),
        exclude: vec!["torch-compile".to_owned()],
    };
    let plan = efficiency_audit::strategies::plan(&sources, &[], Some(&ceilings), &cfg);
    let amp = plan.ranked.iter().find(|r| r.id == "autocast").unwrap();
    // The ratio (14x) is capped by the reference's 3x; the bound names this GPU's figures.
    assert!((amp.expected_gain.upper - 3.0).abs() < 1e-9);
    assert!(amp.expected_gain.bound.as_deref().unwrap().contains("H100"));
    assert!(
        plan.skipped
            .iter()
            .any(|s| s.id == "torch-compile" && s.reason.contains("exclude"))
    );
    let loading = plan
        .ranked
        .iter()
        .find(|r| r.id == "parallel-data-loading")
        .unwrap();
    let names: Vec<_> = loading
        .candidates
        .iter()
        .filter_map(|c| c.variant.as_deref())
        .collect();
    assert_eq!(names, ["workers-2", "workers-8", "workers-16"]);
}

#[test]
fn strategies_md_of_the_pipeline_example() {
    let plan = plan_example("pipeline", cpu_machine(4), false);
    insta::assert_snapshot!(efficiency_audit::strategies::markdown(&plan));
}

#[test]
fn on_a_cpu_only_machine_workers_come_with_a_cap_on_pytorch_threads() {
    let patched = |example: &str, id: &str, machine: Machine| {
        let plan = plan_example(example, machine, false);
        let r = plan.ranked.iter().find(|r| r.id == id).unwrap();
        r.candidates[0].patch[0].new_text.clone()
    };
    // 2 CPUs, 2 workers: the model keeps one intra-op thread.
    let train = patched("torch-train", "parallel-data-loading", cpu_machine(2));
    assert!(train.contains("    torch.set_num_threads(1)  # the model shares the CPUs with 2 loader worker(s)\n    train_loader = DataLoader("), "{train}");
    let infer = patched("torch-infer", "parallel-map", cpu_machine(2));
    assert!(infer.contains("    torch.set_num_threads(1)  # PyTorch shares the CPUs with 2 pool worker(s)\n    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:\n"), "{infer}");
    // With a GPU the model does not run on those cores: no cap.
    let gpu = Machine {
        cores: 2,
        cores_source: "2 CPUs available (test)".to_owned(),
        gpu: GpuState::Present {
            name: "NVIDIA H100 80GB HBM3".to_owned(),
            capability: Some((9, 0)),
            fp32: None,
            tf32: None,
            bf16: None,
        },
    };
    assert!(!patched("torch-train", "parallel-data-loading", gpu).contains("set_num_threads"));
    // The plain-Python pipeline has no PyTorch to cap.
    assert!(!patched("pipeline", "parallel-map", cpu_machine(2)).contains("set_num_threads"));
}
