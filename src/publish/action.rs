//! What the action step publishes, in the order that degrades best: the report artifact, the
//! job summary, the sticky comment (which links the artifact), then the step outputs.
//! Nothing here fails the job: every problem becomes a warning that says what to do.

use std::path::{Path, PathBuf};

use crate::config::CommentMode;
use crate::event::{Event, GithubEnv};
use crate::publish::artifact::{ARTIFACT_NAME, ArtifactClient, artifact_url, supported_server};
use crate::publish::github::GitHubPublisher;
use crate::publish::{CommentOutcome, DryRunPublisher, Publisher, RetryPolicy, workflow};
use crate::report::command::{COMMENT_MD, write_all};
use crate::report::comment;
use crate::report::model::Report;

/// Everything publishing needs, passed in (no environment reads below this point).
#[derive(Debug)]
pub struct PublishInput<'a> {
    /// The Actions environment snapshot.
    pub env: &'a GithubEnv,
    /// The event, when there is one.
    pub event: Option<&'a Event>,
    /// The output folder (uploaded as the artifact).
    pub out_dir: &'a Path,
    /// `--dry-run` / the `dry-run` input: nothing is sent anywhere.
    pub dry_run: bool,
    /// `comment: sticky|off`.
    pub comment: CommentMode,
    /// The SARIF file, when step 2 wrote one.
    pub sarif: Option<PathBuf>,
    /// Retry policy for API and artifact calls.
    pub retry: RetryPolicy,
}

/// What was published.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The comment, when one was written or posted.
    pub comment: Option<CommentOutcome>,
    /// The artifact's page.
    pub artifact_url: Option<String>,
    /// Problems, each with what to do (already printed).
    pub warnings: Vec<String>,
    /// Things deliberately not done, and why (already printed).
    pub skipped: Vec<String>,
}

/// Publishes `report` (its `artifact_url` is filled in when the upload works, and the files in
/// `out_dir` are re-rendered with it).
pub fn publish(report: &mut Report, input: &PublishInput<'_>) -> Published {
    let env = input.env;
    let act = env.is_act();
    let mut out = Published::default();
    // The artifact carries the report as it is now; it is rewritten below with its own link.
    if let Err(e) = write_all(report, input.out_dir) {
        out.warnings.push(format!("cannot write the report: {e:#}"));
    }

    // 1. The artifact. Under act it goes to act's own local artifact server (when started with
    //    --artifact-server-path); an explicit dry run sends nothing at all.
    if input.dry_run {
        out.skipped
            .push("artifact: dry run, nothing uploaded".to_owned());
    } else if let Some((token, results_url)) = env.artifact_service() {
        if supported_server(&env.server_url()) {
            let uploaded = ArtifactClient::new(token, &results_url)
                .map(|c| c.with_retry(input.retry))
                .and_then(|c| c.upload(ARTIFACT_NAME, input.out_dir));
            match (uploaded, env.repository(), env.run_id()) {
                (Ok(u), Some(repo), Some(run)) => {
                    out.artifact_url = Some(artifact_url(&env.server_url(), repo, run, &u.id));
                }
                (Ok(u), _, _) => out.skipped.push(format!(
                    "artifact {} uploaded ({} bytes), but GITHUB_REPOSITORY/GITHUB_RUN_ID are unset, so it has no link",
                    u.id, u.size
                )),
                (Err(e), _, _) => out.warnings.push(format!(
                    "the report artifact could not be uploaded ({e}); the report stays in {}",
                    input.out_dir.display()
                )),
            }
        } else {
            out.skipped.push(format!(
                "artifact: GitHub Enterprise Server does not support artifact protocol v4; the report stays in {} (upload it with actions/upload-artifact@v3)",
                input.out_dir.display()
            ));
        }
    } else if env.is_actions() {
        out.skipped.push(
            "artifact: ACTIONS_RUNTIME_TOKEN/ACTIONS_RESULTS_URL are not set (composite actions and run: steps do not get them; use actions/upload-artifact, as native/action.yml does)"
                .to_owned(),
        );
    }
    report.artifact_url.clone_from(&out.artifact_url);
    if let Err(e) = write_all(report, input.out_dir) {
        out.warnings.push(format!(
            "cannot rewrite the report with its artifact link: {e:#}"
        ));
    }
    let body = comment::render(report);

    // 2. The job summary: always, forks included.
    if let Some(path) = env.step_summary()
        && let Err(e) = workflow::append_summary(&path, &body)
    {
        out.warnings.push(format!(
            "cannot write the job summary {}: {e}",
            path.display()
        ));
    }

    // 3. The sticky comment.
    let pr = input
        .event
        .and_then(|e| e.pull_request.as_ref())
        .map(|p| p.number);
    let fork = input.event.is_some_and(Event::is_fork);
    if input.comment == CommentMode::Off {
        out.skipped.push("comment: off (comment: off)".to_owned());
    } else if input.dry_run || act {
        let why = if act { "ACT=true" } else { "dry run" };
        let publisher = DryRunPublisher {
            path: input.out_dir.join(COMMENT_MD),
        };
        match publisher.upsert_comment(pr.unwrap_or(0), &body) {
            Ok(o) => out.comment = Some(o),
            Err(e) => out.warnings.push(e.to_string()),
        }
        out.skipped.push(format!("comment: {why}, nothing posted"));
    } else if let Some(pr) = pr {
        if fork {
            out.skipped.push("comment: pull request from a fork, whose token is read-only; the report is in the job summary and the artifact".to_owned());
        } else {
            match (env.token(), env.repository().or_else(|| input.event.and_then(|e| e.repository.as_deref()))) {
                (Some(token), Some(repo)) => {
                    let result = GitHubPublisher::new(&env.api_url(), token, repo)
                        .map(|p| p.with_retry(input.retry))
                        .and_then(|p| p.upsert_comment(pr, &body));
                    match result {
                        Ok(o) => out.comment = Some(o),
                        Err(e) => out.warnings.push(format!("the pull request comment was not posted: {e}")),
                    }
                }
                (None, _) => out.warnings.push("the pull request comment was not posted: no token (set the github-token input or GITHUB_TOKEN)".to_owned()),
                (_, None) => out.warnings.push("the pull request comment was not posted: GITHUB_REPOSITORY is not set".to_owned()),
            }
        }
    } else {
        out.skipped
            .push("comment: not a pull request event".to_owned());
    }

    // 4. Step outputs.
    if let Some(path) = env.output_file() {
        let outputs = step_outputs(report, input, &out);
        if let Err(e) = workflow::write_outputs(&path, &outputs) {
            out.warnings
                .push(format!("cannot write step outputs {}: {e}", path.display()));
        }
    }

    for w in &out.warnings {
        if env.is_actions() {
            print!("{}", workflow::warning(w));
        } else {
            eprintln!("warning: {w}");
        }
    }
    for s in &out.skipped {
        eprintln!("efficiency-audit: {s}");
    }
    out
}

/// The action's outputs (action.yml `outputs:`).
#[must_use]
pub fn step_outputs(
    report: &Report,
    input: &PublishInput<'_>,
    published: &Published,
) -> Vec<(&'static str, String)> {
    let verdict = report
        .verdict
        .as_ref()
        .map_or_else(String::new, |v| match v.value {
            crate::verdict::VerdictValue::Red => "red".to_owned(),
            crate::verdict::VerdictValue::Green => "green".to_owned(),
        });
    let bottleneck = report
        .verdict
        .as_ref()
        .and_then(|v| v.bottleneck)
        .map_or_else(String::new, |r| r.as_str().to_owned());
    let best = report
        .best_speedup()
        .map_or_else(String::new, |e| format!("{:.2}", e.speedup));
    vec![
        ("verdict", verdict),
        ("bottleneck", bottleneck),
        ("best-speedup", best),
        (
            "report-path",
            input
                .out_dir
                .join(crate::report::command::FINAL_HTML)
                .display()
                .to_string(),
        ),
        (
            "comment-url",
            published
                .comment
                .as_ref()
                .and_then(CommentOutcome::url)
                .unwrap_or_default()
                .to_owned(),
        ),
        (
            "artifact-url",
            published.artifact_url.clone().unwrap_or_default(),
        ),
        (
            "sarif-path",
            input
                .sarif
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
    ]
}
