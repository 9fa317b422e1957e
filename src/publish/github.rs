//! The only module that talks to GitHub's REST API (octocrab, with a current-thread tokio
//! runtime built here so the rest of the crate stays synchronous).
//!
//! Requests go through octocrab's raw `_get`/`_post`/`_patch` with minimal serde structs of our
//! own: octocrab's models are `#[non_exhaustive]` and change between releases (reference
//! ci_bots.md §7). The API root is `GITHUB_API_URL`, so GitHub Enterprise (`/api/v3`) and a
//! local mock server work the same way.

use std::time::Duration;

use http::header::HeaderMap;
use octocrab::Octocrab;
use serde::Deserialize;
use serde_json::json;

use crate::changes::PullFiles;
use crate::event::Token;
use crate::publish::{
    CommentOutcome, PublishError, Publisher, RetryPolicy, is_sticky, retryable, same_body,
};

/// The login of `GITHUB_TOKEN`'s comments.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// Page size for listings; GitHub's maximum.
const PER_PAGE: u32 = 100;
/// Safety net against a server that keeps answering `rel="next"`.
const MAX_PAGES: u32 = 100;

/// A client for one repository.
pub struct GitHubPublisher {
    rt: tokio::runtime::Runtime,
    client: Octocrab,
    token: Token,
    repo: String,
    retry: RetryPolicy,
}

impl std::fmt::Debug for GitHubPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubPublisher")
            .field("repo", &self.repo)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct UserJson {
    login: String,
}

#[derive(Deserialize)]
struct CommentJson {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    html_url: String,
    #[serde(default)]
    user: Option<UserJson>,
}

#[derive(Deserialize)]
struct FileJson {
    filename: String,
}

#[derive(Deserialize)]
struct ErrorJson {
    message: Option<String>,
}

/// A raw answer.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl GitHubPublisher {
    /// A client for `repo` (`owner/name`) at `api_url` (`GITHUB_API_URL`).
    pub fn new(api_url: &str, token: Token, repo: &str) -> Result<Self, PublishError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PublishError::Local(format!("cannot start the HTTP runtime: {e}")))?;
        let client = rt
            .block_on(async {
                Octocrab::builder()
                    .base_uri(api_url)?
                    .personal_token(token.expose().to_owned())
                    .set_connect_timeout(Some(Duration::from_secs(10)))
                    .set_read_timeout(Some(Duration::from_secs(30)))
                    .build()
            })
            .map_err(|e| {
                PublishError::Local(token.redact(&format!("bad GITHUB_API_URL {api_url}: {e}")))
            })?;
        Ok(Self {
            rt,
            client,
            token,
            repo: repo.to_owned(),
            retry: RetryPolicy::default(),
        })
    }

    /// Replaces the retry policy (tests use millisecond waits).
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    async fn send(
        &self,
        what: &str,
        method: &str,
        uri: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, PublishError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = match method {
                "POST" => self.client._post(uri, body).await,
                "PATCH" => self.client._patch(uri, body).await,
                _ => self.client._get(uri).await,
            };
            let (status, headers, text) = match sent {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let headers = resp.headers().clone();
                    match self.client.body_to_string(resp).await {
                        Ok(text) => (status, headers, text),
                        Err(e) => (0, HeaderMap::new(), e.to_string()),
                    }
                }
                Err(e) => (0, HeaderMap::new(), e.to_string()),
            };
            // Primary limit: 403 with `x-ratelimit-remaining: 0`; secondary limit: 403 with
            // `retry-after` (docs.github.com, "Rate limits for the REST API").
            let rate_limited = status == 429
                || (status == 403
                    && (headers
                        .get("x-ratelimit-remaining")
                        .is_some_and(|v| v.as_bytes() == b"0")
                        || headers.contains_key("retry-after")));
            let again = status == 0 || retryable(status) || rate_limited;
            if again && attempt < self.retry.attempts {
                let after = headers
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                tokio::time::sleep(self.retry.delay(attempt, after)).await;
                continue;
            }
            if status == 0 {
                return Err(PublishError::Transport {
                    what: what.to_owned(),
                    message: self.token.redact(&text),
                });
            }
            if (200..300).contains(&status) {
                return Ok(Answer {
                    status,
                    headers,
                    body: text,
                });
            }
            let message = serde_json::from_str::<ErrorJson>(&text)
                .ok()
                .and_then(|e| e.message)
                .unwrap_or_else(|| text.chars().take(200).collect());
            let message = self.token.redact(&message);
            return Err(if status == 403 && !rate_limited {
                PublishError::Permission { status, message }
            } else {
                PublishError::Http {
                    what: what.to_owned(),
                    status,
                    message,
                }
            });
        }
    }

    fn parse<T: for<'de> Deserialize<'de>>(
        &self,
        what: &str,
        a: &Answer,
    ) -> Result<T, PublishError> {
        serde_json::from_str(&a.body).map_err(|e| PublishError::Transport {
            what: what.to_owned(),
            message: format!("unexpected answer (HTTP {}): {e}", a.status),
        })
    }

    /// Every page of a listing, following `Link: <...>; rel="next"`.
    async fn all_pages<T: for<'de> Deserialize<'de>>(
        &self,
        what: &str,
        first: String,
    ) -> Result<Vec<T>, PublishError> {
        let mut items = Vec::new();
        let mut next = Some(first);
        let mut pages = 0;
        while let Some(uri) = next.take() {
            pages += 1;
            let answer = self.send(what, "GET", &uri, None).await?;
            let page: Vec<T> = self.parse(what, &answer)?;
            items.extend(page);
            next = next_link(&answer.headers).filter(|_| pages < MAX_PAGES);
        }
        Ok(items)
    }

    /// The login whose comments count as the bot's own: `GITHUB_TOKEN` (an installation
    /// token, `ghs_…`) comments as `github-actions[bot]`; a personal token as its user.
    async fn viewer_login(&self) -> String {
        if self.token.expose().starts_with("ghs_") {
            return ACTIONS_BOT.to_owned();
        }
        match self
            .send("reading the token's user", "GET", "/user", None)
            .await
        {
            Ok(a) => self
                .parse::<UserJson>("reading the token's user", &a)
                .map_or_else(|_| ACTIONS_BOT.to_owned(), |u| u.login),
            Err(_) => ACTIONS_BOT.to_owned(),
        }
    }

    async fn upsert(&self, pr: u64, body: &str) -> Result<CommentOutcome, PublishError> {
        let login = self.viewer_login().await;
        let comments: Vec<CommentJson> = self
            .all_pages(
                "listing the pull request's comments",
                format!(
                    "/repos/{}/issues/{pr}/comments?per_page={PER_PAGE}",
                    self.repo
                ),
            )
            .await?;
        // The newest of the bot's own comments that carries the marker.
        let existing = comments.into_iter().rev().find(|c| {
            c.user.as_ref().is_some_and(|u| u.login == login)
                && c.body.as_deref().is_some_and(is_sticky)
        });
        match existing {
            Some(c) if c.body.as_deref().is_some_and(|b| same_body(b, body)) => {
                Ok(CommentOutcome::Unchanged(c.html_url))
            }
            Some(c) => {
                let what = "updating the sticky comment";
                let uri = format!("/repos/{}/issues/comments/{}", self.repo, c.id);
                let a = self
                    .send(what, "PATCH", &uri, Some(&json!({ "body": body })))
                    .await?;
                let updated: CommentJson = self.parse(what, &a)?;
                Ok(CommentOutcome::Updated(updated.html_url))
            }
            None => {
                let what = "creating the sticky comment";
                let uri = format!("/repos/{}/issues/{pr}/comments", self.repo);
                let a = self
                    .send(what, "POST", &uri, Some(&json!({ "body": body })))
                    .await?;
                let created: CommentJson = self.parse(what, &a)?;
                Ok(CommentOutcome::Created(created.html_url))
            }
        }
    }
}

impl Publisher for GitHubPublisher {
    fn upsert_comment(&self, pr: u64, body: &str) -> Result<CommentOutcome, PublishError> {
        self.rt.block_on(self.upsert(pr, body))
    }
}

impl PullFiles for GitHubPublisher {
    fn pull_files(&self, number: u64) -> Result<Vec<String>, String> {
        self.rt
            .block_on(self.all_pages::<FileJson>(
                "listing the pull request's files",
                format!(
                    "/repos/{}/pulls/{number}/files?per_page={PER_PAGE}",
                    self.repo
                ),
            ))
            .map(|files| files.into_iter().map(|f| f.filename).collect())
            .map_err(|e| e.to_string())
    }
}

/// The `rel="next"` target of a `Link` header.
fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = headers.get("link")?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, rel) = part.split_once(';')?;
        rel.contains("rel=\"next\"").then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_owned()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_next_link() {
        let mut h = HeaderMap::new();
        h.insert(
            "link",
            "<https://x/r?page=3>; rel=\"last\", <https://x/r?page=2>; rel=\"next\""
                .parse()
                .unwrap(),
        );
        assert_eq!(next_link(&h).as_deref(), Some("https://x/r?page=2"));
        h.insert(
            "link",
            "<https://x/r?page=1>; rel=\"prev\"".parse().unwrap(),
        );
        assert_eq!(next_link(&h), None);
    }
}
