//! What changed? The files of the pull request (or push) that the audit looks at.
//!
//! `git diff --name-only base...head` when both commits are in the local clone (checkout with
//! `fetch-depth: 0`), else the pull request files API (paginated; GitHub lists at most 3 000
//! files), else nothing — and the audit then reads every file matching `paths`.

use std::path::Path;
use std::process::Command;

use globset::{Glob, GlobSetBuilder};
use serde::Serialize;

use crate::event::Event;

/// Where the list came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeSource {
    /// `git diff --name-only base...head` in the local clone.
    GitDiff,
    /// The pull request files API.
    PullFilesApi,
    /// No list: not a PR or push, or neither source worked (the reason).
    Unknown(String),
}

/// The changed files, relative to the repository root, filtered by the `paths` globs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Paths that match the globs.
    pub files: Vec<String>,
    /// Where the list came from.
    pub source: ChangeSource,
}

/// Lists a pull request's files through the API (implemented by the GitHub publisher).
pub trait PullFiles {
    /// Every file name of pull request `number`, following pagination.
    fn pull_files(&self, number: u64) -> Result<Vec<String>, String>;
}

/// The changed files of `event` in the clone at `repo`, matched against `globs`.
#[must_use]
pub fn changed_files(
    event: &Event,
    repo: &Path,
    api: Option<&dyn PullFiles>,
    globs: &[String],
) -> Changes {
    let diff = match (&event.base_sha, &event.head_sha) {
        (Some(base), Some(head)) => git_diff(repo, base, head),
        _ => Err("the event names no base commit".to_owned()),
    };
    let (files, source) = match diff {
        Ok(files) => (files, ChangeSource::GitDiff),
        Err(git_why) => match (&event.pull_request, api) {
            (Some(pr), Some(api)) => match api.pull_files(pr.number) {
                Ok(files) => (files, ChangeSource::PullFilesApi),
                Err(api_why) => (
                    Vec::new(),
                    ChangeSource::Unknown(format!("git: {git_why}; API: {api_why}")),
                ),
            },
            _ => (Vec::new(), ChangeSource::Unknown(git_why)),
        },
    };
    Changes {
        files: filter(&files, globs),
        source,
    }
}

fn has_commit(repo: &Path, sha: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "-e", &format!("{sha}^{{commit}}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `git diff --name-only base...head`, when both commits are present.
pub fn git_diff(repo: &Path, base: &str, head: &str) -> Result<Vec<String>, String> {
    for sha in [base, head] {
        if !has_commit(repo, sha) {
            return Err(format!(
                "commit {sha} is not in the clone (check out with fetch-depth: 0)"
            ));
        }
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "diff",
            "--name-only",
            "--no-renames",
            &format!("{base}...{head}"),
        ])
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Keeps the files matching any of `globs` (`**/*.py` also matches top-level files).
#[must_use]
pub fn filter(files: &[String], globs: &[String]) -> Vec<String> {
    let mut builder = GlobSetBuilder::new();
    for g in globs {
        if let Ok(glob) = Glob::new(g) {
            builder.add(glob);
        }
    }
    let Ok(set) = builder.build() else {
        return files.to_vec();
    };
    files.iter().filter(|f| set.is_match(f)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_keep_python_files_at_any_depth() {
        let files = vec![
            "train.py".to_owned(),
            "a/b/data.py".to_owned(),
            "README.md".to_owned(),
        ];
        assert_eq!(
            filter(&files, &["**/*.py".to_owned()]),
            ["train.py", "a/b/data.py"]
        );
    }

    #[test]
    fn git_diff_between_two_commits() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "one"]);
        let base = git(&["rev-parse", "HEAD"]);
        std::fs::write(dir.path().join("b.py"), "y = 2\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "n\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "two"]);
        let head = git(&["rev-parse", "HEAD"]);
        let event = Event {
            name: "push".into(),
            base_sha: Some(base),
            head_sha: Some(head),
            ..Event::default()
        };
        let changes = changed_files(&event, dir.path(), None, &["**/*.py".to_owned()]);
        assert_eq!(changes.source, ChangeSource::GitDiff);
        assert_eq!(changes.files, ["b.py"]);
    }
}
