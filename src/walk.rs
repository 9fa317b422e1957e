//! Which files step 2 reads: the files named on the command line, and the files below named
//! folders, walked in parallel with `.gitignore` respected (also outside a git repository).
//!
//! Sits between the command line (or the changed-file list of a pull request) and the analysis.
//! Nothing here fails on a bad path: a missing file (deleted in the change), an unreadable
//! folder or a symlink loop becomes a warning, and the walk goes on.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::{WalkBuilder, WalkState};

/// A file to analyse.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceFile {
    /// The path users see: as named, or the walked folder joined with the path below it;
    /// forward slashes, no leading `./`.
    pub path: String,
    /// Where to read it.
    pub fs_path: PathBuf,
}

/// The files found, sorted by path, and what went wrong on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Files to analyse, sorted by [`SourceFile::path`], without duplicates.
    pub files: Vec<SourceFile>,
    /// One line per path that could not be walked.
    pub warnings: Vec<String>,
    /// Named files skipped because no `paths` glob matches them.
    pub not_matching: usize,
}

/// A `paths` glob from the configuration is not a valid glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob {glob:?} in `paths`: {source}")]
pub struct GlobError {
    /// The glob as written.
    pub glob: String,
    /// Why it does not parse.
    pub source: globset::Error,
}

/// Compiles the `paths` globs (`**/*.py` by default). A glob matches a path relative to the
/// walked folder, or a named file's path as given.
pub fn glob_set(globs: &[String]) -> Result<GlobSet, GlobError> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let compiled = Glob::new(glob).map_err(|source| GlobError {
            glob: glob.clone(),
            source,
        })?;
        builder.add(compiled);
    }
    builder.build().map_err(|source| GlobError {
        glob: globs.join(", "),
        source,
    })
}

/// Finds the files to analyse below `roots` (files or folders).
#[must_use]
pub fn discover(roots: &[PathBuf], globs: &GlobSet) -> Discovery {
    let mut found = Discovery::default();
    for root in roots {
        match std::fs::metadata(root) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                found.warnings.push(format!(
                    "{}: no such file or folder (deleted in this change?); skipped",
                    display(root)
                ));
            }
            Err(err) => found
                .warnings
                .push(format!("{}: cannot read ({err}); skipped", display(root))),
            Ok(meta) if meta.is_dir() => walk(root, globs, &mut found),
            Ok(_) => {
                let path = display(root);
                if globs.is_match(path.trim_start_matches('/')) {
                    found.files.push(SourceFile {
                        path,
                        fs_path: root.clone(),
                    });
                } else {
                    found.not_matching += 1;
                }
            }
        }
    }
    found.files.sort();
    found.files.dedup_by(|a, b| a.path == b.path);
    found.warnings.sort();
    found
}

/// Walks one folder with all cores, keeping regular files (or links to them) the globs match.
fn walk(root: &Path, globs: &GlobSet, found: &mut Discovery) {
    let (tx, rx) = mpsc::channel::<Result<SourceFile, String>>();
    WalkBuilder::new(root)
        .follow_links(true)
        .require_git(false)
        .build_parallel()
        .run(|| {
            let tx = tx.clone();
            Box::new(move |entry| {
                let message = match entry {
                    Ok(entry) => {
                        let is_file = entry.file_type().is_some_and(|t| t.is_file());
                        let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                        if is_file && globs.is_match(relative) {
                            Ok(SourceFile {
                                path: display(entry.path()),
                                fs_path: entry.path().to_path_buf(),
                            })
                        } else {
                            return WalkState::Continue;
                        }
                    }
                    // A symlink loop, a folder without permission, a broken .gitignore.
                    Err(err) => Err(format!("{err}; skipped")),
                };
                if tx.send(message).is_err() {
                    return WalkState::Quit;
                }
                WalkState::Continue
            })
        });
    drop(tx);
    for message in rx {
        match message {
            Ok(file) => found.files.push(file),
            Err(warning) => found.warnings.push(warning),
        }
    }
}

/// A path as users see it: forward slashes, no leading `./`.
fn display(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut rest = text.as_str();
    while let Some(stripped) = rest.strip_prefix("./") {
        rest = stripped;
    }
    if rest.is_empty() {
        ".".to_owned()
    } else {
        rest.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_globs() -> GlobSet {
        glob_set(&["**/*.py".to_owned()]).unwrap()
    }

    fn touch(dir: &Path, rel: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x = 1\n").unwrap();
    }

    fn paths(found: &Discovery) -> Vec<&str> {
        found.files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn walks_py_files_respecting_gitignore_without_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "b.py",
            "a/z.py",
            "a/notes.txt",
            "build/gen.py",
            "a/skip_me.py",
            ".venv/x.py",
        ] {
            touch(root, rel);
        }
        std::fs::write(root.join(".gitignore"), "build/\nskip_me.py\n").unwrap();
        let found = discover(&[root.to_path_buf()], &default_globs());
        let prefix = display(root);
        let expected: Vec<String> = ["a/z.py", "b.py"]
            .iter()
            .map(|r| format!("{prefix}/{r}"))
            .collect();
        assert_eq!(paths(&found), expected);
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    }

    #[test]
    fn config_globs_match_below_the_walked_folder() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "src/m/train.py");
        touch(dir.path(), "tests/test_x.py");
        let globs = glob_set(&["src/**/*.py".to_owned()]).unwrap();
        let found = discover(&[dir.path().to_path_buf()], &globs);
        assert_eq!(found.files.len(), 1);
        assert!(found.files[0].path.ends_with("/src/m/train.py"));
    }

    #[test]
    fn missing_paths_warn_and_named_files_dedupe() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "a.py");
        let a = dir.path().join("a.py");
        let missing = dir.path().join("gone.py");
        let found = discover(&[a.clone(), missing, a], &default_globs());
        assert_eq!(found.files.len(), 1);
        assert_eq!(found.warnings.len(), 1);
        assert!(
            found.warnings[0].contains("gone.py: no such file or folder (deleted in this change?)")
        );
    }

    #[test]
    fn named_files_outside_the_globs_are_counted_not_analysed() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "README.md");
        let found = discover(&[dir.path().join("README.md")], &default_globs());
        assert!(found.files.is_empty());
        assert_eq!(found.not_matching, 1);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_warn() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), "pkg/a.py");
        std::os::unix::fs::symlink("..", dir.path().join("pkg/loop")).unwrap();
        let found = discover(&[dir.path().to_path_buf()], &default_globs());
        assert_eq!(found.files.len(), 1, "{:?}", found.files);
        assert_eq!(found.warnings.len(), 1, "{:?}", found.warnings);
        assert!(found.warnings[0].contains("loop"), "{:?}", found.warnings);
    }

    #[test]
    fn bad_glob_is_an_error() {
        let err = glob_set(&["src/[.py".to_owned()]).unwrap_err();
        assert!(
            err.to_string().contains("invalid glob \"src/[.py\""),
            "{err}"
        );
    }

    #[test]
    fn display_strips_dot_slash() {
        assert_eq!(display(Path::new("./././a/b.py")), "a/b.py");
        assert_eq!(display(Path::new(".")), ".");
        assert_eq!(display(Path::new("/abs/x.py")), "/abs/x.py");
    }
}
