//! Publish: where the report goes after step 5.
//!
//! The order follows what degrades best (reference ci_bots.md §9): job summary, step outputs,
//! the report folder as a workflow artifact, then the sticky pull-request comment that links
//! the artifact. Every publishing failure becomes a warning with what to do; none fails the
//! job. `ACT=true` or `--dry-run` send nothing to GitHub's API: `comment.md` is written and
//! printed in a collapsed log group instead.
//!
//! [`Publisher`] is the seam: [`github::GitHubPublisher`] talks to the API (octocrab lives
//! only there), [`DryRunPublisher`] writes a file.

pub mod action;
pub mod artifact;
pub mod github;
pub mod workflow;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::report::model::MARKER;

/// The exact block a workflow needs for the bot's writes (reference ci_bots.md §4,
/// "Permissions"); printed on a 403.
pub const PERMISSIONS_HINT: &str = "\
Add this to the workflow (or to the job that runs efficiency-audit):

permissions:
  contents: read          # checkout
  pull-requests: write    # the sticky PR comment
  security-events: write  # optional: upload analysis.sarif to code scanning

Pull requests from forks always get a read-only token: there the report is in the job summary
and the workflow artifact only.";

/// A publishing failure. None of them fails the job; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The token may not do this (HTTP 401/403 without a rate limit).
    #[error("GitHub refused the request (HTTP {status}: {message}).\n{PERMISSIONS_HINT}")]
    Permission {
        /// HTTP status.
        status: u16,
        /// GitHub's message.
        message: String,
    },
    /// Any other HTTP failure, after retries where retrying makes sense.
    #[error("{what} failed with HTTP {status}: {message}")]
    Http {
        /// The operation.
        what: String,
        /// HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The server could not be reached, or the answer could not be read.
    #[error("{what} failed: {message}")]
    Transport {
        /// The operation.
        what: String,
        /// Why.
        message: String,
    },
    /// A local problem (runtime, zip, files).
    #[error("{0}")]
    Local(String),
}

/// What happened to the comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommentOutcome {
    /// A new comment; its URL.
    Created(String),
    /// The existing sticky comment was edited; its URL.
    Updated(String),
    /// The existing comment already had this body; nothing was sent. Its URL.
    Unchanged(String),
    /// Written to a file instead (dry run).
    Written(PathBuf),
}

impl CommentOutcome {
    /// The comment's URL, when it is on GitHub.
    #[must_use]
    pub fn url(&self) -> Option<&str> {
        match self {
            CommentOutcome::Created(u)
            | CommentOutcome::Updated(u)
            | CommentOutcome::Unchanged(u) => Some(u),
            CommentOutcome::Written(_) => None,
        }
    }
}

/// Where the sticky comment goes.
pub trait Publisher {
    /// Creates or updates the one comment of pull request `pr` that ends with [`MARKER`].
    fn upsert_comment(&self, pr: u64, body: &str) -> Result<CommentOutcome, PublishError>;
}

/// The dry run: writes the comment body to a file and prints it in a collapsed log group.
#[derive(Debug, Clone)]
pub struct DryRunPublisher {
    /// The file written (`comment.md` in the output folder).
    pub path: PathBuf,
}

impl Publisher for DryRunPublisher {
    fn upsert_comment(&self, _pr: u64, body: &str) -> Result<CommentOutcome, PublishError> {
        std::fs::write(&self.path, body).map_err(|e| {
            PublishError::Local(format!("cannot write {}: {e}", self.path.display()))
        })?;
        print!("{}", workflow::group("efficiency-audit comment", body));
        Ok(CommentOutcome::Written(self.path.clone()))
    }
}

/// How often and how long to retry 5xx and rate-limit answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// Wait before the second try; doubled each time.
    pub base_delay: Duration,
    /// Longest single wait, whatever `Retry-After` asks: a CI step must not hang.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The wait before try `n + 1` (n ≥ 1), honouring a server's `Retry-After` up to the cap.
    #[must_use]
    pub fn delay(&self, n: u32, retry_after: Option<Duration>) -> Duration {
        let backoff = self
            .base_delay
            .saturating_mul(2_u32.saturating_pow(n.saturating_sub(1)));
        retry_after.unwrap_or(backoff).min(self.max_delay)
    }
}

/// Whether an HTTP status is worth retrying: server errors and 429.
#[must_use]
pub fn retryable(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// Whether a body ends with the sticky marker (trailing whitespace ignored).
#[must_use]
pub fn is_sticky(body: &str) -> bool {
    body.trim_end().ends_with(MARKER)
}

/// Bodies equal up to line endings and trailing whitespace, as GitHub stores them.
#[must_use]
pub fn same_body(a: &str, b: &str) -> bool {
    a.replace("\r\n", "\n").trim_end() == b.replace("\r\n", "\n").trim_end()
}

/// Collects the files under `dir` with their paths relative to it, sorted.
pub fn files_under(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && let Ok(rel) = path.strip_prefix(dir)
            {
                out.push((rel.to_string_lossy().replace('\\', "/"), path));
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        assert_eq!(p.delay(1, None), Duration::from_millis(100));
        assert_eq!(p.delay(2, None), Duration::from_millis(200));
        assert_eq!(p.delay(3, None), Duration::from_millis(300));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(60))),
            Duration::from_millis(300)
        );
    }

    #[test]
    fn sticky_marker_must_end_the_body() {
        assert!(is_sticky(&format!("x\n{MARKER}\n")));
        assert!(!is_sticky(&format!("{MARKER}\nquoted by someone else")));
    }
}
