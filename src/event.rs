//! Where are we? The only module that reads the environment: `GITHUB_*`, `INPUT_*`,
//! `ACTIONS_*`, `RUNNER_*` and `ACT` are snapshotted once into [`GithubEnv`] and passed inward
//! as plain values, so everything downstream is deterministic in tests.
//!
//! The event payload (`GITHUB_EVENT_PATH`) is read into minimal serde structs rather than
//! octocrab models, which change shape between releases and cannot be built in tests.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::ForkBench;

/// `api.github.com`, used when `GITHUB_API_URL` is unset (outside Actions).
pub const DEFAULT_API_URL: &str = "https://api.github.com";
/// `github.com`, used when `GITHUB_SERVER_URL` is unset.
pub const DEFAULT_SERVER_URL: &str = "https://github.com";

/// A secret. It has no `Display`, its `Debug` prints `***`, and only the publisher reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a secret.
    #[must_use]
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    /// The secret itself, for the `Authorization` header only.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the secret in `text` (e.g. an error from a server that
    /// echoes headers) with `***`.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "***")
        }
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

/// A snapshot of the variables GitHub Actions (or `act`) sets for a step.
#[derive(Clone, Default)]
pub struct GithubEnv {
    vars: BTreeMap<String, String>,
}

impl fmt::Debug for GithubEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: BTreeMap<&str, &str> = self
            .vars
            .iter()
            .map(|(k, v)| {
                let secret = k.contains("TOKEN") || k.contains("SECRET");
                (k.as_str(), if secret { "***" } else { v.as_str() })
            })
            .collect();
        f.debug_struct("GithubEnv").field("vars", &shown).finish()
    }
}

fn relevant(name: &str) -> bool {
    name.starts_with("GITHUB_")
        || name.starts_with("INPUT_")
        || name.starts_with("ACTIONS_")
        || name.starts_with("RUNNER_")
        || name == "ACT"
        || name == "CI"
}

impl GithubEnv {
    /// Reads the process environment, once.
    #[must_use]
    pub fn from_process() -> Self {
        Self::from_vars(std::env::vars())
    }

    /// Builds a snapshot from name/value pairs (tests, and [`Self::from_process`]).
    pub fn from_vars<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .filter(|(k, _)| relevant(k))
                .collect(),
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// Running as a GitHub Actions step (`GITHUB_ACTIONS=true`; `act` sets it too).
    #[must_use]
    pub fn is_actions(&self) -> bool {
        self.get("GITHUB_ACTIONS") == Some("true")
    }

    /// Running under `act` (`ACT` set and not `false`): implies a dry run, because `act`
    /// silently injects the user's real token (`gh auth token`).
    #[must_use]
    pub fn is_act(&self) -> bool {
        self.get("ACT").is_some_and(|v| v != "false")
    }

    /// An action input, looked up as the runner passes it: `INPUT_` + the id upper-cased with
    /// spaces turned into `_` and dashes kept (`INPUT_GITHUB-TOKEN`,
    /// actions/runner `Handler.cs:AddInputsToEnvironment`); `act` turns every character
    /// outside `[A-Z0-9-]` into `_`, which is tried next. Empty values count as unset.
    #[must_use]
    pub fn input(&self, id: &str) -> Option<&str> {
        let upper = id.to_uppercase();
        let runner = format!("INPUT_{}", upper.replace(' ', "_"));
        let act: String = upper
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.get(&runner)
            .or_else(|| self.get(&format!("INPUT_{act}")))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    }

    /// A boolean input: `true`/`false` as YAML writes them; anything else is unset.
    #[must_use]
    pub fn input_bool(&self, id: &str) -> Option<bool> {
        match self.input(id)?.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Some(true),
            "false" | "no" | "0" => Some(false),
            _ => None,
        }
    }

    /// The API token: the `github-token` input, else `GITHUB_TOKEN`.
    #[must_use]
    pub fn token(&self) -> Option<Token> {
        self.input("github-token")
            .or_else(|| self.get("GITHUB_TOKEN"))
            .map(|t| Token::new(t.to_owned()))
    }

    /// REST API root: `GITHUB_API_URL` (GitHub Enterprise: `https://HOST/api/v3`).
    #[must_use]
    pub fn api_url(&self) -> String {
        self.get("GITHUB_API_URL")
            .unwrap_or(DEFAULT_API_URL)
            .trim_end_matches('/')
            .to_owned()
    }

    /// Web root: `GITHUB_SERVER_URL`.
    #[must_use]
    pub fn server_url(&self) -> String {
        self.get("GITHUB_SERVER_URL")
            .unwrap_or(DEFAULT_SERVER_URL)
            .trim_end_matches('/')
            .to_owned()
    }

    /// `owner/name` of the repository the workflow runs in.
    #[must_use]
    pub fn repository(&self) -> Option<&str> {
        self.get("GITHUB_REPOSITORY")
    }

    /// The event name (`pull_request`, `push`, ...).
    #[must_use]
    pub fn event_name(&self) -> Option<&str> {
        self.get("GITHUB_EVENT_NAME")
    }

    /// The event payload file.
    #[must_use]
    pub fn event_path(&self) -> Option<PathBuf> {
        self.get("GITHUB_EVENT_PATH").map(PathBuf::from)
    }

    /// `GITHUB_SHA` (the merge commit on pull requests; `git rev-parse HEAD` under act).
    #[must_use]
    pub fn sha(&self) -> Option<&str> {
        self.get("GITHUB_SHA")
    }

    /// `GITHUB_RUN_ID`.
    #[must_use]
    pub fn run_id(&self) -> Option<&str> {
        self.get("GITHUB_RUN_ID")
    }

    /// Link to this workflow run.
    #[must_use]
    pub fn run_url(&self) -> Option<String> {
        Some(format!(
            "{}/{}/actions/runs/{}",
            self.server_url(),
            self.repository()?,
            self.run_id()?
        ))
    }

    /// The job summary file.
    #[must_use]
    pub fn step_summary(&self) -> Option<PathBuf> {
        self.get("GITHUB_STEP_SUMMARY").map(PathBuf::from)
    }

    /// The step outputs file.
    #[must_use]
    pub fn output_file(&self) -> Option<PathBuf> {
        self.get("GITHUB_OUTPUT").map(PathBuf::from)
    }

    /// `GITHUB_WORKSPACE`.
    #[must_use]
    pub fn workspace(&self) -> Option<PathBuf> {
        self.get("GITHUB_WORKSPACE").map(PathBuf::from)
    }

    /// The artifact service: `ACTIONS_RUNTIME_TOKEN` and `ACTIONS_RESULTS_URL`, both set only
    /// for Docker and JavaScript actions (and by `act --artifact-server-path`).
    #[must_use]
    pub fn artifact_service(&self) -> Option<(Token, String)> {
        Some((
            Token::new(self.get("ACTIONS_RUNTIME_TOKEN")?.to_owned()),
            self.get("ACTIONS_RESULTS_URL")?.to_owned(),
        ))
    }

    /// `GITHUB_RETENTION_DAYS`.
    #[must_use]
    pub fn retention_days(&self) -> Option<u32> {
        self.get("GITHUB_RETENTION_DAYS")?.parse().ok()
    }
}

/// The event that started the run, reduced to what the bot needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// `pull_request`, `pull_request_target`, `push`, `workflow_dispatch`, ...
    pub name: String,
    /// `owner/name` of the base repository.
    pub repository: Option<String>,
    /// The pull request, on pull-request events.
    pub pull_request: Option<PullRequest>,
    /// The commit to audit: the PR head (not the merge commit), the pushed commit, or
    /// `GITHUB_SHA`.
    pub head_sha: Option<String>,
    /// The commit to compare with: the PR base, or the commit before a push.
    pub base_sha: Option<String>,
}

/// A pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    /// Its number.
    pub number: u64,
    /// `owner/name` of the head repository (`None` when the fork was deleted).
    pub head_repo: Option<String>,
    /// `owner/name` of the base repository.
    pub base_repo: Option<String>,
}

impl Event {
    /// A pull request from another repository: its token is read-only, and running its code
    /// on a self-hosted runner is the owner's explicit choice (`fork-bench: allow`).
    #[must_use]
    pub fn is_fork(&self) -> bool {
        self.pull_request
            .as_ref()
            .is_some_and(|pr| pr.head_repo.is_none() || pr.head_repo != pr.base_repo)
    }

    /// Whether the benchmark may run the PR's code.
    #[must_use]
    pub fn may_bench(&self, policy: ForkBench) -> bool {
        !self.is_fork() || policy == ForkBench::Allow
    }
}

/// The event payload cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// `GITHUB_EVENT_PATH` names a file that cannot be read.
    #[error(
        "cannot read the event payload {path}: {source} (inside a container, mount the file and pass GITHUB_EVENT_PATH)"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The payload is not the JSON GitHub sends for this event.
    #[error("the {event} event payload is not valid: {source}")]
    Parse {
        /// Event name.
        event: String,
        /// Why.
        source: serde_json::Error,
    },
}

#[derive(Deserialize)]
struct RepoJson {
    full_name: Option<String>,
}

#[derive(Deserialize)]
struct RefJson {
    sha: Option<String>,
    repo: Option<RepoJson>,
}

#[derive(Deserialize)]
struct PullJson {
    number: u64,
    head: RefJson,
    base: RefJson,
}

#[derive(Deserialize)]
struct PayloadJson {
    #[serde(default)]
    pull_request: Option<PullJson>,
    #[serde(default)]
    repository: Option<RepoJson>,
    #[serde(default)]
    before: Option<String>,
    #[serde(default)]
    after: Option<String>,
}

/// A push that creates a branch has `before` = forty zeros.
fn real_sha(sha: Option<String>) -> Option<String> {
    sha.filter(|s| !s.is_empty() && s.chars().any(|c| c != '0'))
}

/// Parses an event payload. `github_sha` is `GITHUB_SHA`, the fallback head commit.
pub fn parse_event(
    name: &str,
    payload: &str,
    repository: Option<&str>,
    github_sha: Option<&str>,
) -> Result<Event, EventError> {
    let json: PayloadJson = serde_json::from_str(payload).map_err(|source| EventError::Parse {
        event: name.to_owned(),
        source,
    })?;
    let repo = json
        .repository
        .and_then(|r| r.full_name)
        .or_else(|| repository.map(str::to_owned));
    let mut event = Event {
        name: name.to_owned(),
        repository: repo,
        pull_request: None,
        head_sha: github_sha.map(str::to_owned),
        base_sha: None,
    };
    if let Some(pr) = json.pull_request {
        event.head_sha = real_sha(pr.head.sha).or(event.head_sha);
        event.base_sha = real_sha(pr.base.sha);
        event.pull_request = Some(PullRequest {
            number: pr.number,
            head_repo: pr.head.repo.and_then(|r| r.full_name),
            base_repo: pr.base.repo.and_then(|r| r.full_name),
        });
    } else if name == "push" {
        event.head_sha = real_sha(json.after).or(event.head_sha);
        event.base_sha = real_sha(json.before);
    }
    Ok(event)
}

/// Reads the event of this run, or `None` outside Actions / without a payload file.
pub fn read_event(env: &GithubEnv) -> Result<Option<Event>, EventError> {
    let (Some(name), Some(path)) = (env.event_name(), env.event_path()) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|source| EventError::Read {
        path: path.clone(),
        source,
    })?;
    parse_event(name, &text, env.repository(), env.sha()).map(Some)
}

/// Reads a payload file directly (tests and `--event` debugging).
pub fn read_event_file(name: &str, path: &Path) -> Result<Event, EventError> {
    let text = std::fs::read_to_string(path).map_err(|source| EventError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_event(name, &text, None, None)
}
