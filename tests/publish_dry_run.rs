//! The real binary, end to end, as a GitHub Actions step under `act`: every step runs, the
//! report is written, the comment is printed in a log group instead of being posted, the
//! outputs are set, and the exit status follows the verdict and `fail-on`.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::Path;
use std::process::Command;

const TOKEN: &str = "ghp_e2eSECRET0123456789";

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn audit_under_act_writes_everything_and_posts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/src/train.py");
    std::fs::copy(&fixture, ws.join("src/train.py")).unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    let event =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events/pull_request.json");
    let out = Command::new(env!("CARGO_BIN_EXE_efficiency-audit"))
        .current_dir(&ws)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GITHUB_ACTIONS", "true")
        .env("ACT", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "octo-org/trainer")
        .env("GITHUB_RUN_ID", "9")
        .env("GITHUB_TOKEN", TOKEN)
        // Nothing listens here: a request would fail the run's comment step, not pass silently.
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .env("GITHUB_STEP_SUMMARY", tmp.path().join("summary.md"))
        .env("GITHUB_OUTPUT", tmp.path().join("output.txt"))
        .env("INPUT_FAIL-ON", "red")
        .args(["audit", ".", "--quick"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report_dir = ws.join("report/efficiency");
    for file in [
        "theoretical_limits.yaml",
        "analysis.json",
        "report.json",
        "final_report.html",
        "comment.md",
    ] {
        assert!(report_dir.join(file).is_file(), "{file} missing\n{stderr}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("report.json")).unwrap())
            .unwrap();
    let verdict = report["verdict"]["value"].as_str().unwrap();
    assert!(!report["findings"].as_array().unwrap().is_empty());
    // fail-on: red → exit 1 exactly when the verdict is RED.
    assert_eq!(
        out.status.code(),
        Some(if verdict == "RED" { 1 } else { 0 }),
        "{stderr}"
    );
    // The comment is printed, commands switched off around it, and nothing was posted.
    let group = stdout.find("::group::efficiency-audit comment").unwrap();
    let stop = stdout[group..]
        .lines()
        .nth(1)
        .unwrap()
        .strip_prefix("::stop-commands::")
        .unwrap()
        .to_owned();
    assert!(
        stdout.contains(&format!("::{stop}::\n::endgroup::")),
        "{stdout}"
    );
    assert!(
        stderr.contains("comment: ACT=true, nothing posted"),
        "{stderr}"
    );
    let outputs = std::fs::read_to_string(tmp.path().join("output.txt")).unwrap();
    assert!(
        outputs.contains(&format!("verdict={}\n", verdict.to_lowercase())),
        "{outputs}"
    );
    assert!(outputs.contains("sarif-path="), "{outputs}");
    let summary = std::fs::read_to_string(tmp.path().join("summary.md")).unwrap();
    assert!(summary.contains("efficiency-audit:report v1"));
    // The token is nowhere: not in the logs, not in any file.
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));
    for entry in std::fs::read_dir(&report_dir).unwrap() {
        let text = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!String::from_utf8_lossy(&text).contains(TOKEN));
    }
    assert!(!outputs.contains(TOKEN) && !summary.contains(TOKEN));
}
