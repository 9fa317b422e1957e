//! The report folder uploaded with the Actions artifact protocol v4 against a local results
//! service: github.com's snake_case answers and act's camelCase ones.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly")]

mod common;

use std::time::Duration;

use base64::Engine as _;
use efficiency_audit::config::CommentMode;
use efficiency_audit::event::{GithubEnv, Token};
use efficiency_audit::publish::RetryPolicy;
use efficiency_audit::publish::action::{PublishInput, publish};
use efficiency_audit::publish::artifact::ArtifactClient;
use serde_json::{Value, json};
use sha2::Digest as _;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const TWIRP: &str = "/twirp/github.actions.results.api.v1.ArtifactService";

fn runtime_token(scp: &str) -> String {
    let enc = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!(
        "{}.{}.signature",
        enc.encode(r#"{"typ":"JWT","alg":"HS256"}"#),
        enc.encode(json!({ "scp": scp, "ac": "[]" }).to_string())
    )
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    }
}

fn report_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("final_report.html"),
        "<!DOCTYPE html><p>report</p>",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("experiments")).unwrap();
    std::fs::write(dir.path().join("experiments/a.log"), "runs").unwrap();
    dir
}

fn mount_blob(s: &common::Server, blob_path: &str) {
    s.mount(
        Mock::given(method("PUT"))
            .and(path(blob_path))
            .and(query_param("comp", "block"))
            .respond_with(ResponseTemplate::new(201))
            .expect(1),
    );
    s.mount(
        Mock::given(method("PUT"))
            .and(path(blob_path))
            .and(query_param("comp", "blocklist"))
            .respond_with(ResponseTemplate::new(201))
            .expect(1),
    );
}

fn check_flow(s: &common::Server, token: &str, run: &str, job: &str, blob_path: &str) {
    let reqs = s.requests();
    let create = reqs
        .iter()
        .find(|r| r.url.path().ends_with("/CreateArtifact"))
        .unwrap();
    let sent: Value = serde_json::from_slice(&create.body).unwrap();
    assert_eq!(
        sent,
        json!({"workflow_run_backend_id": run, "workflow_job_run_backend_id": job, "name": "efficiency-audit-report", "version": 4})
    );
    assert_eq!(
        create
            .headers
            .get("authorization")
            .unwrap()
            .to_str()
            .unwrap(),
        format!("Bearer {token}")
    );
    let block = reqs
        .iter()
        .find(|r| r.url.path() == blob_path && r.url.query().unwrap_or("").contains("comp=block&"))
        .unwrap();
    assert!(
        block.headers.get("authorization").is_none(),
        "the runtime token never goes to the blob store"
    );
    assert!(block.body.starts_with(b"PK"), "a zip");
    let list = reqs
        .iter()
        .find(|r| r.url.query().unwrap_or("").contains("comp=blocklist"))
        .unwrap();
    let xml = String::from_utf8(list.body.clone()).unwrap();
    let id = block
        .url
        .query_pairs()
        .find(|(k, _)| k == "blockid")
        .unwrap()
        .1
        .to_string();
    assert!(xml.contains(&format!("<Latest>{id}</Latest>")), "{xml}");
    let finalize = reqs
        .iter()
        .find(|r| r.url.path().ends_with("/FinalizeArtifact"))
        .unwrap();
    let sent: Value = serde_json::from_slice(&finalize.body).unwrap();
    assert_eq!(
        sent["size"],
        json!(block.body.len().to_string()),
        "int64 as a string"
    );
    let digest: String = sha2::Sha256::digest(&block.body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(sent["hash"], json!(format!("sha256:{digest}")));
    // The zip holds the folder with relative paths.
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(block.body.clone())).unwrap();
    let mut names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["experiments/a.log", "final_report.html"]);
}

#[test]
fn github_com_snake_case_answers() {
    let s = common::Server::start();
    let blob = "/container/efficiency-audit-report.zip";
    s.mount(Mock::given(method("POST")).and(path(format!("{TWIRP}/CreateArtifact"))).respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true, "signed_upload_url": format!("{}{blob}?sv=2023&sig=SAS", s.uri())}))).expect(1));
    mount_blob(&s, blob);
    s.mount(
        Mock::given(method("POST"))
            .and(path(format!("{TWIRP}/FinalizeArtifact")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": true, "artifact_id": "4242"})),
            )
            .expect(1),
    );
    let token = runtime_token(
        "Actions.ExampleScope Actions.Results:ce7f54c7-61c7-4aae-887f-30da475f5f1a:ca395085-040a-526b-2ce8-bdc85f692774",
    );
    let dir = report_dir();
    let up = ArtifactClient::new(Token::new(token.clone()), &format!("{}/", s.uri()))
        .unwrap()
        .with_retry(fast())
        .upload("efficiency-audit-report", dir.path())
        .unwrap();
    assert_eq!(up.id, "4242");
    check_flow(
        &s,
        &token,
        "ce7f54c7-61c7-4aae-887f-30da475f5f1a",
        "ca395085-040a-526b-2ce8-bdc85f692774",
        blob,
    );
    s.verify();
}

#[test]
fn act_camel_case_answers_and_numeric_ids() {
    let s = common::Server::start();
    let blob = format!("{TWIRP}/UploadArtifact");
    s.mount(Mock::given(method("POST")).and(path(format!("{TWIRP}/CreateArtifact"))).respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": true, "signedUploadUrl": format!("{}{blob}?sig=abc&expires=2026-12-02+18%3A00%3A00&artifactName=efficiency-audit-report&taskID=1", s.uri())}))).expect(1));
    mount_blob(&s, &blob);
    s.mount(
        Mock::given(method("POST"))
            .and(path(format!("{TWIRP}/FinalizeArtifact")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": true, "artifactId": 2_166_136_261_u64})),
            )
            .expect(1),
    );
    let token = runtime_token("Actions.Results:1:1");
    let dir = report_dir();
    let up = ArtifactClient::new(Token::new(token.clone()), &format!("{}/", s.uri()))
        .unwrap()
        .with_retry(fast())
        .upload("efficiency-audit-report", dir.path())
        .unwrap();
    assert_eq!(up.id, "2166136261");
    check_flow(&s, &token, "1", "1", &blob);
    s.verify();
}

#[test]
fn the_artifact_link_reaches_the_outputs_and_the_comment() {
    let s = common::Server::start();
    let blob = "/c/r.zip";
    s.mount(
        Mock::given(method("POST"))
            .and(path(format!("{TWIRP}/CreateArtifact")))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"ok": true, "signed_upload_url": format!("{}{blob}?sig=x", s.uri())}),
            )),
    );
    s.mount(
        Mock::given(method("PUT"))
            .and(path(blob))
            .respond_with(ResponseTemplate::new(201)),
    );
    s.mount(
        Mock::given(method("POST"))
            .and(path(format!("{TWIRP}/FinalizeArtifact")))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"ok": true, "artifact_id": "77"})),
            ),
    );
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("report");
    let token = runtime_token("Actions.Results:1:2");
    let env = GithubEnv::from_vars([
        ("GITHUB_ACTIONS", "true".to_owned()),
        ("GITHUB_SERVER_URL", "https://github.com".to_owned()),
        ("GITHUB_REPOSITORY", "o/r".to_owned()),
        ("GITHUB_RUN_ID", "123".to_owned()),
        ("ACTIONS_RUNTIME_TOKEN", token.clone()),
        ("ACTIONS_RESULTS_URL", format!("{}/", s.uri())),
        (
            "GITHUB_OUTPUT",
            tmp.path().join("out.txt").display().to_string(),
        ),
        (
            "GITHUB_STEP_SUMMARY",
            tmp.path().join("summary.md").display().to_string(),
        ),
    ]);
    let mut report = common::fixture_report();
    let published = publish(
        &mut report,
        &PublishInput {
            env: &env,
            event: None,
            out_dir: &out_dir,
            dry_run: false,
            comment: CommentMode::Sticky,
            sarif: None,
            retry: fast(),
        },
    );
    let url = "https://github.com/o/r/actions/runs/123/artifacts/77";
    assert_eq!(
        published.artifact_url.as_deref(),
        Some(url),
        "{published:?}"
    );
    assert!(
        std::fs::read_to_string(tmp.path().join("out.txt"))
            .unwrap()
            .contains(&format!("artifact-url={url}\n"))
    );
    assert!(
        std::fs::read_to_string(tmp.path().join("summary.md"))
            .unwrap()
            .contains(url)
    );
    assert!(
        std::fs::read_to_string(out_dir.join("comment.md"))
            .unwrap()
            .contains(url)
    );
    assert!(
        !std::fs::read_to_string(tmp.path().join("summary.md"))
            .unwrap()
            .contains(&token)
    );
}

#[test]
fn enterprise_server_skips_the_upload() {
    let s = common::Server::start();
    s.mount(
        Mock::given(wiremock::matchers::any())
            .respond_with(ResponseTemplate::new(500))
            .expect(0),
    );
    let tmp = tempfile::tempdir().unwrap();
    let env = GithubEnv::from_vars([
        ("GITHUB_ACTIONS", "true".to_owned()),
        (
            "GITHUB_SERVER_URL",
            "https://github.acme.internal".to_owned(),
        ),
        (
            "ACTIONS_RUNTIME_TOKEN",
            runtime_token("Actions.Results:1:2"),
        ),
        ("ACTIONS_RESULTS_URL", format!("{}/", s.uri())),
    ]);
    let mut report = common::fixture_report();
    let published = publish(
        &mut report,
        &PublishInput {
            env: &env,
            event: None,
            out_dir: tmp.path(),
            dry_run: false,
            comment: CommentMode::Off,
            sarif: None,
            retry: fast(),
        },
    );
    assert!(published.artifact_url.is_none());
    assert!(
        published
            .skipped
            .iter()
            .any(|m| m.contains("Enterprise Server")),
        "{published:?}"
    );
    s.verify();
}
