//! The publisher against a local GitHub API (wiremock): the sticky comment, retries,
//! permission errors, forks, the 65 536-character limit, GitHub Enterprise, and the token
//! staying secret.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

mod common;

use std::path::Path;
use std::time::Duration;

use efficiency_audit::config::CommentMode;
use efficiency_audit::event::{Event, GithubEnv, PullRequest, Token};
use efficiency_audit::publish::action::{PublishInput, Published, publish};
use efficiency_audit::publish::github::GitHubPublisher;
use efficiency_audit::publish::{CommentOutcome, PublishError, Publisher, RetryPolicy};
use efficiency_audit::report::model::MARKER;
use serde_json::{Value, json};
use wiremock::matchers::{any, body_string_contains, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const TOKEN: &str = "ghs_SECRETtoken0123456789";

fn fast() -> RetryPolicy {
    RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    }
}

fn publisher(api: &str) -> GitHubPublisher {
    GitHubPublisher::new(api, Token::new(TOKEN.into()), "o/r")
        .unwrap()
        .with_retry(fast())
}

fn body() -> String {
    format!("## 🔴 efficiency-audit — RED\n\nsummary\n\n{MARKER}\n")
}

fn list(s: &common::Server, comments: Value) {
    s.mount(
        Mock::given(method("GET"))
            .and(path("/repos/o/r/issues/1/comments"))
            .respond_with(ResponseTemplate::new(200).set_body_json(comments)),
    );
}

#[test]
fn creates_the_comment_when_none_exists() {
    let s = common::Server::start();
    list(&s, json!([common::comment_json(5, "alice", "LGTM")]));
    s.mount(
        Mock::given(method("POST"))
            .and(path("/repos/o/r/issues/1/comments"))
            .and(body_string_contains("efficiency-audit:report v1"))
            .respond_with(
                ResponseTemplate::new(201).set_body_json(common::comment_json(
                    99,
                    "github-actions[bot]",
                    &body(),
                )),
            )
            .expect(1),
    );
    let out = publisher(&s.uri()).upsert_comment(1, &body()).unwrap();
    assert_eq!(
        out,
        CommentOutcome::Created("https://github.com/o/r/pull/1#issuecomment-99".into())
    );
    let auth = s.requests()[0]
        .headers
        .get("authorization")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(auth, format!("Bearer {TOKEN}"));
    s.verify();
}

#[test]
fn finds_its_own_comment_on_page_two_and_updates_it_in_place() {
    let s = common::Server::start();
    let mut page1: Vec<Value> = (0..100)
        .map(|i| common::comment_json(i, "alice", "chatter"))
        .collect();
    // Someone quoting the bot's comment (marker last) is not the bot.
    page1.push(common::comment_json(
        500,
        "mallory",
        &format!("> quoted\n{MARKER}"),
    ));
    let next = format!(
        "<{}/repos/o/r/issues/1/comments?per_page=100&page=2>; rel=\"next\"",
        s.uri()
    );
    s.mount(
        Mock::given(method("GET"))
            .and(path("/repos/o/r/issues/1/comments"))
            .and(query_param("page", "2"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([
                common::comment_json(777, "github-actions[bot]", &format!("old body\n{MARKER}\n")),
                common::comment_json(778, "bob", "thanks"),
            ])))
            .with_priority(1)
            .expect(1),
    );
    s.mount(
        Mock::given(method("GET"))
            .and(path("/repos/o/r/issues/1/comments"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(Value::Array(page1))
                    .insert_header("link", next.as_str()),
            )
            .with_priority(2)
            .expect(1),
    );
    s.mount(
        Mock::given(method("PATCH"))
            .and(path("/repos/o/r/issues/comments/777"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(common::comment_json(
                    777,
                    "github-actions[bot]",
                    &body(),
                )),
            )
            .expect(1),
    );
    s.mount(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201))
            .expect(0),
    );
    s.mount(
        Mock::given(method("PATCH"))
            .and(path("/repos/o/r/issues/comments/500"))
            .respond_with(ResponseTemplate::new(200))
            .expect(0),
    );
    let out = publisher(&s.uri()).upsert_comment(1, &body()).unwrap();
    assert_eq!(
        out,
        CommentOutcome::Updated("https://github.com/o/r/pull/1#issuecomment-777".into())
    );
    let patch = s
        .requests()
        .into_iter()
        .find(|r| r.method.as_str() == "PATCH")
        .unwrap();
    let sent: Value = serde_json::from_slice(&patch.body).unwrap();
    assert_eq!(sent["body"], body());
    s.verify();
}

#[test]
fn unchanged_body_is_not_posted_again() {
    let s = common::Server::start();
    // GitHub hands bodies back with CRLF line endings.
    list(
        &s,
        json!([common::comment_json(
            7,
            "github-actions[bot]",
            &body().replace('\n', "\r\n")
        )]),
    );
    s.mount(
        Mock::given(method("PATCH"))
            .respond_with(ResponseTemplate::new(200))
            .expect(0),
    );
    s.mount(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201))
            .expect(0),
    );
    let out = publisher(&s.uri()).upsert_comment(1, &body()).unwrap();
    assert!(matches!(out, CommentOutcome::Unchanged(_)), "{out:?}");
    s.verify();
}

#[test]
fn forbidden_prints_the_permissions_block_and_never_the_token() {
    let s = common::Server::start();
    list(&s, json!([]));
    s.mount(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(403).set_body_json(json!({
                "message": "Resource not accessible by integration",
                "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
                "status": "403"
            })))
            .expect(1),
    );
    let err = publisher(&s.uri()).upsert_comment(1, &body()).unwrap_err();
    assert!(
        matches!(err, PublishError::Permission { status: 403, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("Resource not accessible by integration"),
        "{text}"
    );
    assert!(text.contains("permissions:\n  contents: read"), "{text}");
    assert!(text.contains("pull-requests: write"), "{text}");
    assert!(!text.contains(TOKEN) && !format!("{err:?}").contains(TOKEN));
    s.verify();
}

#[test]
fn bad_gateway_is_retried_then_succeeds() {
    let s = common::Server::start();
    list(&s, json!([]));
    s.mount(
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad Gateway</html>"))
            .up_to_n_times(1)
            .with_priority(1)
            .expect(1),
    );
    s.mount(
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(201).set_body_json(common::comment_json(
                    3,
                    "github-actions[bot]",
                    &body(),
                )),
            )
            .with_priority(2)
            .expect(1),
    );
    let out = publisher(&s.uri()).upsert_comment(1, &body()).unwrap();
    assert!(matches!(out, CommentOutcome::Created(_)));
    s.verify();
}

#[test]
fn rate_limit_is_retried_within_a_bounded_wait() {
    let s = common::Server::start();
    s.mount(
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(403)
                    .insert_header("x-ratelimit-remaining", "0")
                    .insert_header("retry-after", "3600")
                    .set_body_json(json!({"message": "API rate limit exceeded"})),
            )
            .up_to_n_times(1)
            .with_priority(1),
    );
    list(&s, json!([]));
    s.mount(Mock::given(method("POST")).respond_with(
        ResponseTemplate::new(201).set_body_json(common::comment_json(
            3,
            "github-actions[bot]",
            &body(),
        )),
    ));
    let started = std::time::Instant::now();
    let out = publisher(&s.uri()).upsert_comment(1, &body()).unwrap();
    assert!(matches!(out, CommentOutcome::Created(_)));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "Retry-After is capped"
    );
}

#[test]
fn server_errors_give_up_after_the_last_attempt() {
    let s = common::Server::start();
    s.mount(
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(500))
            .expect(3),
    );
    let err = publisher(&s.uri()).upsert_comment(1, &body()).unwrap_err();
    assert!(
        matches!(err, PublishError::Http { status: 500, .. }),
        "{err:?}"
    );
    s.verify();
}

#[test]
fn enterprise_api_root_keeps_its_path_prefix() {
    let s = common::Server::start();
    s.mount(
        Mock::given(method("GET"))
            .and(path("/api/v3/repos/o/r/issues/1/comments"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
            .expect(1),
    );
    s.mount(
        Mock::given(method("POST"))
            .and(path("/api/v3/repos/o/r/issues/1/comments"))
            .respond_with(
                ResponseTemplate::new(201).set_body_json(common::comment_json(
                    4,
                    "github-actions[bot]",
                    &body(),
                )),
            )
            .expect(1),
    );
    let out = publisher(&format!("{}/api/v3", s.uri()))
        .upsert_comment(1, &body())
        .unwrap();
    assert!(matches!(out, CommentOutcome::Created(_)));
    s.verify();
}

fn actions_env(s: &common::Server, dir: &Path, extra: &[(&str, String)]) -> GithubEnv {
    let mut vars = vec![
        ("GITHUB_ACTIONS", "true".to_owned()),
        ("GITHUB_API_URL", s.uri()),
        ("GITHUB_SERVER_URL", "https://github.com".to_owned()),
        ("GITHUB_REPOSITORY", "o/r".to_owned()),
        ("GITHUB_RUN_ID", "123".to_owned()),
        ("GITHUB_TOKEN", TOKEN.to_owned()),
        (
            "GITHUB_STEP_SUMMARY",
            dir.join("summary.md").display().to_string(),
        ),
        (
            "GITHUB_OUTPUT",
            dir.join("output.txt").display().to_string(),
        ),
    ];
    vars.extend(extra.iter().cloned());
    GithubEnv::from_vars(vars)
}

fn pr_event(head_repo: &str) -> Event {
    Event {
        name: "pull_request".into(),
        repository: Some("o/r".into()),
        pull_request: Some(PullRequest {
            number: 1,
            head_repo: Some(head_repo.into()),
            base_repo: Some("o/r".into()),
        }),
        head_sha: Some("abc".into()),
        base_sha: Some("def".into()),
    }
}

/// Publishes `report` for PR 1 of `o/r` whose head lives in `head_repo`, with the Actions
/// environment of `actions_env` (plus `extra`) and the report folder `dir/report`.
fn publish_pr(
    s: &common::Server,
    dir: &Path,
    extra: &[(&str, String)],
    head_repo: &str,
    report: &mut efficiency_audit::report::model::Report,
) -> Published {
    let env = actions_env(s, dir, extra);
    let event = pr_event(head_repo);
    publish(
        report,
        &PublishInput {
            env: &env,
            event: Some(&event),
            out_dir: &dir.join("report"),
            dry_run: false,
            comment: CommentMode::Sticky,
            sarif: None,
            retry: fast(),
        },
    )
}

fn everything_written(dir: &Path) -> String {
    let mut all = String::new();
    for entry in walk(dir) {
        all.push_str(&String::from_utf8_lossy(&std::fs::read(entry).unwrap()));
    }
    all
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

#[test]
fn fork_pull_request_gets_summary_and_outputs_but_no_api_writes() {
    let s = common::Server::start();
    s.mount(
        Mock::given(any())
            .respond_with(ResponseTemplate::new(500))
            .expect(0),
    );
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("report");
    let published = publish_pr(
        &s,
        tmp.path(),
        &[],
        "mallory/r",
        &mut common::fixture_report(),
    );
    assert!(published.comment.is_none());
    assert!(
        published.skipped.iter().any(|m| m.contains("fork")),
        "{published:?}"
    );
    let summary = std::fs::read_to_string(tmp.path().join("summary.md")).unwrap();
    assert!(summary.starts_with("## 🔴 efficiency-audit"), "{summary}");
    let outputs = std::fs::read_to_string(tmp.path().join("output.txt")).unwrap();
    assert!(
        outputs.contains("verdict=red\n") && outputs.contains("bottleneck=gpu\n"),
        "{outputs}"
    );
    assert!(
        outputs.contains(&format!(
            "report-path={}",
            out_dir.join("final_report.html").display()
        )),
        "{outputs}"
    );
    assert!(out_dir.join("final_report.html").is_file() && out_dir.join("report.json").is_file());
    s.verify();
}

#[test]
fn end_to_end_post_respects_the_limit_and_keeps_the_token_out_of_every_file() {
    let s = common::Server::start();
    list(&s, json!([]));
    s.mount(
        Mock::given(method("POST"))
            .and(path("/repos/o/r/issues/1/comments"))
            .respond_with(
                ResponseTemplate::new(201).set_body_json(common::comment_json(
                    9,
                    "github-actions[bot]",
                    "x",
                )),
            )
            .expect(1),
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut report = common::fixture_report();
    let big = report.diffs[0].clone();
    for _ in 0..10 {
        let mut d = big.clone();
        d.text
            .push_str(&"+ a long generated line of code\n".repeat(400));
        report.diffs.push(d);
    }
    let published = publish_pr(&s, tmp.path(), &[], "o/r", &mut report);
    assert_eq!(
        published.comment.as_ref().and_then(|c| c.url()),
        Some("https://github.com/o/r/pull/1#issuecomment-9")
    );
    let post = s
        .requests()
        .into_iter()
        .find(|r| r.method.as_str() == "POST")
        .unwrap();
    let sent: Value = serde_json::from_slice(&post.body).unwrap();
    let sent = sent["body"].as_str().unwrap();
    assert!(
        sent.encode_utf16().count() <= 65_536,
        "{}",
        sent.encode_utf16().count()
    );
    assert!(sent.trim_end().ends_with(MARKER));
    let outputs = std::fs::read_to_string(tmp.path().join("output.txt")).unwrap();
    assert!(
        outputs.contains("comment-url=https://github.com/o/r/pull/1#issuecomment-9\n"),
        "{outputs}"
    );
    assert!(!everything_written(tmp.path()).contains(TOKEN));
    s.verify();
}

#[test]
fn act_writes_the_comment_file_and_sends_nothing() {
    let s = common::Server::start();
    s.mount(
        Mock::given(any())
            .respond_with(ResponseTemplate::new(500))
            .expect(0),
    );
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("report");
    let published = publish_pr(
        &s,
        tmp.path(),
        &[("ACT", "true".to_owned())],
        "o/r",
        &mut common::fixture_report(),
    );
    assert!(
        matches!(published.comment, Some(CommentOutcome::Written(_))),
        "{published:?}"
    );
    let md = std::fs::read_to_string(out_dir.join("comment.md")).unwrap();
    assert!(md.trim_end().ends_with(MARKER));
    s.verify();
}

#[test]
fn api_failures_degrade_to_warnings_without_the_token() {
    let s = common::Server::start();
    s.mount(
        Mock::given(any()).respond_with(
            ResponseTemplate::new(401)
                .set_body_string(format!("{{\"message\":\"Bad credentials for {TOKEN}\"}}")),
        ),
    );
    let tmp = tempfile::tempdir().unwrap();
    let published = publish_pr(&s, tmp.path(), &[], "o/r", &mut common::fixture_report());
    assert_eq!(published.warnings.len(), 1, "{published:?}");
    assert!(
        published.warnings[0].contains("Bad credentials for ***"),
        "{published:?}"
    );
    assert!(!published.warnings[0].contains(TOKEN));
    assert!(!everything_written(tmp.path()).contains(TOKEN));
}

#[test]
fn pull_request_files_are_listed_across_pages() {
    use efficiency_audit::changes::PullFiles;
    let s = common::Server::start();
    let next = format!(
        "<{}/repos/o/r/pulls/1/files?per_page=100&page=2>; rel=\"next\"",
        s.uri()
    );
    s.mount(
        Mock::given(method("GET"))
            .and(path("/repos/o/r/pulls/1/files"))
            .and(query_param("page", "2"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!([{"filename": "b.py", "status": "added"}])),
            )
            .with_priority(1),
    );
    s.mount(
        Mock::given(method("GET"))
            .and(path("/repos/o/r/pulls/1/files"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!([{"filename": "a.py", "status": "modified"}]))
                    .insert_header("link", next.as_str()),
            )
            .with_priority(2),
    );
    assert_eq!(publisher(&s.uri()).pull_files(1).unwrap(), ["a.py", "b.py"]);
}

#[test]
fn secondary_rate_limit_is_retried_and_bad_credentials_get_no_permissions_hint() {
    let s = common::Server::start();
    // Secondary limit: 403 with Retry-After, remaining quota not zero.
    s.mount(
        Mock::given(method("GET"))
            .respond_with(
                ResponseTemplate::new(403)
                    .insert_header("retry-after", "60")
                    .set_body_json(json!({"message": "You have exceeded a secondary rate limit."})),
            )
            .up_to_n_times(1)
            .with_priority(1)
            .expect(1),
    );
    list(&s, json!([]));
    s.mount(Mock::given(method("POST")).respond_with(
        ResponseTemplate::new(401).set_body_json(json!({"message": "Bad credentials"})),
    ));
    let err = publisher(&s.uri()).upsert_comment(1, &body()).unwrap_err();
    assert!(
        matches!(err, PublishError::Http { status: 401, .. }),
        "{err:?}"
    );
    assert!(!err.to_string().contains("permissions:"), "{err}");
    s.verify();
}
