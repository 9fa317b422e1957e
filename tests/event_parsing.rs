//! The event payloads GitHub sends (trimmed real shapes in tests/fixtures/events/) and the
//! environment the runner sets, read the way the bot reads them.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

use std::path::PathBuf;

use efficiency_audit::config::ForkBench;
use efficiency_audit::event::{GithubEnv, parse_event, read_event};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/events")
        .join(name)
}

fn parse(event: &str, file: &str) -> efficiency_audit::event::Event {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    parse_event(
        event,
        &text,
        None,
        Some("merge0000000000000000000000000000000000001"),
    )
    .unwrap()
}

#[test]
fn pull_request_audits_the_head_not_the_merge_commit() {
    let e = parse("pull_request", "pull_request.json");
    let pr = e.pull_request.as_ref().unwrap();
    assert_eq!(pr.number, 42);
    assert_eq!(
        e.head_sha.as_deref(),
        Some("0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c")
    );
    assert_eq!(
        e.base_sha.as_deref(),
        Some("9049f1265b7d61be4a8904a9a27120d2064dab3b")
    );
    assert_eq!(e.repository.as_deref(), Some("octo-org/trainer"));
    assert!(!e.is_fork());
    assert!(e.may_bench(ForkBench::Skip));
}

#[test]
fn fork_pull_request_is_detected_and_not_benchmarked_by_default() {
    let e = parse("pull_request", "pull_request_fork.json");
    assert!(e.is_fork());
    assert!(!e.may_bench(ForkBench::Skip));
    assert!(e.may_bench(ForkBench::Allow));
    let target = parse("pull_request_target", "pull_request_fork.json");
    assert!(target.is_fork());
}

#[test]
fn push_compares_before_and_after() {
    let e = parse("push", "push.json");
    assert!(e.pull_request.is_none());
    assert_eq!(
        e.head_sha.as_deref(),
        Some("5e1f6c0b2e7a5d1c3b4a69788796a5b4c3d2e1f0")
    );
    assert_eq!(
        e.base_sha.as_deref(),
        Some("9049f1265b7d61be4a8904a9a27120d2064dab3b")
    );
}

#[test]
fn push_of_a_new_branch_has_no_base() {
    let e = parse("push", "push_new_branch.json");
    assert_eq!(e.base_sha, None);
    assert!(e.head_sha.is_some());
}

#[test]
fn workflow_dispatch_uses_github_sha() {
    let e = parse("workflow_dispatch", "workflow_dispatch.json");
    assert!(e.pull_request.is_none());
    assert_eq!(e.base_sha, None);
    assert_eq!(
        e.head_sha.as_deref(),
        Some("merge0000000000000000000000000000000000001")
    );
    assert_eq!(e.repository.as_deref(), Some("octo-org/trainer"));
}

#[test]
fn broken_payload_is_an_error_that_names_the_event() {
    let err = parse_event("pull_request", "{\"pull_request\": 3}", None, None).unwrap_err();
    assert!(
        err.to_string().contains("pull_request event payload"),
        "{err}"
    );
}

#[test]
fn reads_the_payload_named_by_the_environment() {
    let env = GithubEnv::from_vars([
        ("GITHUB_EVENT_NAME", "pull_request".to_owned()),
        (
            "GITHUB_EVENT_PATH",
            fixture("pull_request.json").display().to_string(),
        ),
        ("HOME", "/root".to_owned()),
    ]);
    let e = read_event(&env).unwrap().unwrap();
    assert_eq!(e.pull_request.unwrap().number, 42);
    assert!(read_event(&GithubEnv::default()).unwrap().is_none());
}

#[test]
fn inputs_are_read_as_the_runner_and_act_pass_them() {
    // actions/runner keeps dashes and turns spaces into `_`.
    let env = GithubEnv::from_vars([
        ("INPUT_GITHUB-TOKEN", "ghs_from_input"),
        ("INPUT_FAIL-ON", " red "),
        ("INPUT_DRY-RUN", "true"),
        ("INPUT_OUTPUT-DIR", ""),
        ("GITHUB_TOKEN", "ghs_from_env"),
    ]);
    assert_eq!(env.input("fail-on"), Some("red"));
    assert_eq!(env.input_bool("dry-run"), Some(true));
    assert_eq!(env.input("output-dir"), None, "empty inputs count as unset");
    assert_eq!(env.token().unwrap().expose(), "ghs_from_input");
    // act turns characters outside [A-Z0-9-] into `_`.
    let act = GithubEnv::from_vars([
        ("INPUT_BENCH_COMMAND", "python t.py"),
        ("GITHUB_TOKEN", "ghs_env"),
    ]);
    assert_eq!(act.input("bench command"), Some("python t.py"));
    assert_eq!(act.token().unwrap().expose(), "ghs_env");
}

#[test]
fn api_root_comes_from_the_environment() {
    let ghes = GithubEnv::from_vars([("GITHUB_API_URL", "https://ghe.example.com/api/v3/")]);
    assert_eq!(ghes.api_url(), "https://ghe.example.com/api/v3");
    assert_eq!(GithubEnv::default().api_url(), "https://api.github.com");
}

#[test]
fn act_is_detected_and_tokens_never_show_in_debug_output() {
    let env = GithubEnv::from_vars([
        ("ACT", "true"),
        ("GITHUB_TOKEN", "ghp_supersecret123"),
        ("ACTIONS_RUNTIME_TOKEN", "eyJsecret.eyJsecret.sig"),
        ("INPUT_GITHUB-TOKEN", "ghp_othersecret456"),
    ]);
    assert!(env.is_act());
    let shown = format!("{env:?} {:?}", env.token());
    for secret in ["ghp_supersecret123", "eyJsecret", "ghp_othersecret456"] {
        assert!(!shown.contains(secret), "{shown}");
    }
}
