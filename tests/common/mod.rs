//! Shared test fixtures: a report assembled from tests/fixtures/report, and a wiremock server
//! on its own runtime (the publisher blocks on its own current-thread runtime).

#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::PathBuf;

use efficiency_audit::analysis::model::{Applicability, Resource};
use efficiency_audit::report::assemble::{assemble, read_outputs};
use efficiency_audit::report::model::{Context, Experiment, ExperimentStatus, Report, Strategy};
use efficiency_audit::report::summary;

pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report")
}

/// The report of the fixture project, as steps 1–2 left it (no strategies, no experiments).
pub fn fixture_report() -> Report {
    let dir = fixture_dir();
    let mut r = assemble(
        read_outputs(&dir),
        &dir,
        0.7,
        Context {
            repository: Some("octo-org/trainer".into()),
            commit: Some("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c".into()),
            pull_request: Some(42),
            event: Some("pull_request".into()),
            run_url: Some("https://github.com/octo-org/trainer/actions/runs/123".into()),
            changed_files: Some(vec!["src/train.py".into()]),
        },
        vec![
            "git checkout 0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c".into(),
            "efficiency-audit --output-dir report/efficiency audit . --dry-run".into(),
        ],
    );
    // The fixture lives outside the repository root; keep paths stable in snapshots.
    for m in &mut r.missing {
        m.reason = m.reason.replace(&dir.display().to_string(), "<fixtures>");
    }
    r.tool_version = "0.0.0-test".into();
    r
}

/// The same report once steps 3–4 have measured two strategies.
pub fn measured_report() -> Report {
    let mut r = fixture_report();
    r.missing
        .retain(|m| m.step != "strategies" && m.step != "experiments");
    r.strategies = vec![
        Strategy {
            id: "dataloader-workers".into(),
            title: "Load batches in 8 worker processes with pinned memory".into(),
            rank: 1,
            bottleneck: Some(Resource::Cpu),
            expected_gain: Some("up to 8× on the input pipeline".into()),
            safety: Applicability::Safe,
            resolves: vec!["EA101".into()],
            patch: None,
        },
        Strategy {
            id: "bf16-autocast".into(),
            title: "bf16 autocast for forward and backward".into(),
            rank: 2,
            bottleneck: Some(Resource::Gpu),
            expected_gain: Some("≤ 1.9× (bf16/fp32 ratio measured on this GPU)".into()),
            safety: Applicability::Numerics,
            resolves: vec!["EA301".into()],
            patch: None,
        },
    ];
    r.experiments = vec![
        Experiment {
            strategy: "dataloader-workers".into(),
            variant: Some("num_workers=8".into()),
            baseline: 41.2,
            candidate: 12.9,
            unit: "s".into(),
            speedup: 3.19,
            ci95: [2.95, 3.41],
            runs: 6,
            status: ExperimentStatus::Faster,
        },
        Experiment {
            strategy: "bf16-autocast".into(),
            variant: None,
            baseline: 41.2,
            candidate: 40.6,
            unit: "s".into(),
            speedup: 1.01,
            ci95: [0.97, 1.06],
            runs: 6,
            status: ExperimentStatus::NoChange,
        },
    ];
    r.recommendations = summary::recommendations(&r.strategies, &r.findings);
    r.summary = summary::paragraph(
        r.verdict.as_ref(),
        &r.saturation,
        &r.recommendations,
        &r.experiments,
        false,
    );
    r
}

/// A wiremock server that keeps serving while the test thread blocks in the publisher.
pub struct Server {
    pub rt: tokio::runtime::Runtime,
    pub mock: wiremock::MockServer,
}

impl Server {
    pub fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let mock = rt.block_on(wiremock::MockServer::start());
        Self { rt, mock }
    }

    pub fn uri(&self) -> String {
        self.mock.uri()
    }

    pub fn mount(&self, m: wiremock::Mock) {
        self.rt.block_on(m.mount(&self.mock));
    }

    pub fn requests(&self) -> Vec<wiremock::Request> {
        self.rt
            .block_on(self.mock.received_requests())
            .unwrap_or_default()
    }

    pub fn verify(&self) {
        self.rt.block_on(self.mock.verify());
    }
}

/// A comment as GitHub's REST API returns it (trimmed to the fields the bot reads, plus a few).
pub fn comment_json(id: u64, login: &str, body: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "node_id": format!("IC_{id}"),
        "url": format!("https://api.github.com/repos/o/r/issues/comments/{id}"),
        "html_url": format!("https://github.com/o/r/pull/1#issuecomment-{id}"),
        "body": body,
        "user": { "login": login, "id": 41898282, "type": if login.ends_with("[bot]") { "Bot" } else { "User" } },
        "created_at": "2026-11-30T10:00:00Z",
        "updated_at": "2026-11-30T10:00:00Z",
        "author_association": "NONE"
    })
}

/// Every `.py` file below `dir` (recursively, skipping `site-packages`/`dist-packages`),
/// appended to `out`; unreadable folders are passed over.
pub fn walk_python(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() && !p.ends_with("site-packages") && !p.ends_with("dist-packages") {
            walk_python(&p, out);
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "py") {
            out.push(p);
        }
    }
}

/// Analyses `src` as a file `t.py` with every rule enabled.
pub fn analyse(src: &str) -> efficiency_audit::analysis::FileAnalysis {
    efficiency_audit::analysis::analyze_file(
        "t.py",
        src.as_bytes(),
        &efficiency_audit::config::Rules::default(),
    )
}

/// The ids of the rules that fire on `src`, in report order.
pub fn rule_ids(src: &str) -> Vec<String> {
    analyse(src)
        .findings
        .iter()
        .map(|f| f.rule.clone())
        .collect()
}

/// The lines where `rule` fires.
pub fn rule_lines(a: &efficiency_audit::analysis::FileAnalysis, rule: &str) -> Vec<usize> {
    a.findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.line)
        .collect()
}

/// The ids of the rules that fired in `a`, in report order.
pub fn ids_of(a: &efficiency_audit::analysis::FileAnalysis) -> Vec<String> {
    a.findings.iter().map(|f| f.rule.clone()).collect()
}

/// Fails, listing the findings, when any of `rules` reports on `src`.
pub fn assert_silent(src: &str, rules: &[&str]) {
    let a = analyse(src);
    assert!(
        rules.iter().all(|r| rule_lines(&a, r).is_empty()),
        "{rules:?} should be silent: {:?}",
        ids_of(&a)
    );
}
