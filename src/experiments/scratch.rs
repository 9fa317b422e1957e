//! Scratch copies of the audited folder, patches applied to them, and stacked patches.
//!
//! The audited folder is never written: every benchmark run happens in a copy under the
//! system temp folder, registered with [`crate::cleanup`] so it is removed on every path,
//! Ctrl-C included. What is copied: every file except version-control internals (`.git`),
//! build and cache folders (`target`, `__pycache__`, tool caches) and the report output folder.
//! Virtual environments (`.venv`, `venv`) and large untracked files (> [`LINK_THRESHOLD`]) are
//! symlinked instead of copied: a benchmark still finds its interpreter and data, at no cost.
//! (A benchmark that *writes into* a linked data file writes through the link.)

use std::collections::HashSet;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::FilePatch;
use crate::cleanup::PathGuard;

/// Untracked files larger than this are symlinked, not copied.
pub const LINK_THRESHOLD: u64 = 4 * 1024 * 1024;

/// Folders never copied.
const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "target",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
];

/// Folders linked instead of copied.
const LINK_DIRS: &[&str] = &[".venv", "venv", "node_modules"];

/// A scratch copy, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    guard: PathGuard,
    /// Files copied.
    pub copied: usize,
    /// Files or folders symlinked.
    pub linked: usize,
}

impl Scratch {
    /// Copies `source` into a new temp folder, leaving out `exclude` (absolute paths inside
    /// `source`, e.g. the output folder).
    pub fn create(source: &Path, exclude: &[PathBuf]) -> io::Result<Self> {
        let source = source.canonicalize()?;
        let dir = tempfile::Builder::new()
            .prefix("efficiency-audit-scratch-")
            .tempdir()?
            .keep();
        let guard = PathGuard::new(dir);
        let tracked = git_tracked(&source);
        let exclude: Vec<PathBuf> = exclude
            .iter()
            .filter_map(|p| p.canonicalize().ok().or_else(|| Some(p.clone())))
            .collect();
        let mut scratch = Self {
            guard,
            copied: 0,
            linked: 0,
        };
        let root = scratch.guard.path().to_path_buf();
        scratch.copy_dir(&source, &source, &root, &tracked, &exclude)?;
        Ok(scratch)
    }

    /// The copy's root folder.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.guard.path()
    }

    fn copy_dir(
        &mut self,
        root: &Path,
        from: &Path,
        to: &Path,
        tracked: &HashSet<PathBuf>,
        exclude: &[PathBuf],
    ) -> io::Result<()> {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            let src = entry.path();
            let dst = to.join(entry.file_name());
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let kind = entry.file_type()?;
            if exclude.iter().any(|e| e == &src) {
                continue;
            }
            if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
                self.linked += 1;
            } else if kind.is_dir() {
                if SKIP_DIRS.contains(&name.as_ref()) {
                    continue;
                }
                if LINK_DIRS.contains(&name.as_ref()) {
                    std::os::unix::fs::symlink(&src, &dst)?;
                    self.linked += 1;
                    continue;
                }
                self.copy_dir(root, &src, &dst, tracked, exclude)?;
            } else if kind.is_file() {
                let relative = src.strip_prefix(root).unwrap_or(&src);
                let large = entry.metadata()?.len() > LINK_THRESHOLD;
                if large && !tracked.contains(relative) {
                    std::os::unix::fs::symlink(&src, &dst)?;
                    self.linked += 1;
                } else {
                    std::fs::copy(&src, &dst)?;
                    self.copied += 1;
                }
            }
            // Sockets, fifos and devices are not copied.
        }
        Ok(())
    }

    /// Applies a patch to the copy: every target must still equal its `expected_original`
    /// (all are checked before any is written).
    pub fn apply(&self, patch: &[FilePatch]) -> Result<(), PatchError> {
        apply_patch(self.path(), patch)
    }
}

/// Files git tracks under `folder` (relative paths); empty when it is not a git work tree.
fn git_tracked(folder: &Path) -> HashSet<PathBuf> {
    let Ok(out) = std::process::Command::new("git")
        .arg("-C")
        .arg(folder)
        .args(["ls-files", "-z", "--cached"])
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return HashSet::new();
    };
    if !out.status.success() {
        return HashSet::new();
    }
    out.stdout
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| PathBuf::from(String::from_utf8_lossy(s).into_owned()))
        .collect()
}

/// Why a patch could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The file differs from what the strategy saw: the patch was made against other code.
    #[error("patch target changed: {0} no longer matches the code the strategy was made from")]
    TargetChanged(PathBuf),
    /// An absolute path or one with `..`.
    #[error("patch path {0} is not a plain relative path inside the audited folder")]
    BadPath(PathBuf),
    /// Reading or writing failed.
    #[error("cannot patch {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

fn checked(path: &Path) -> Result<(), PatchError> {
    let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
    if plain && !path.as_os_str().is_empty() {
        Ok(())
    } else {
        Err(PatchError::BadPath(path.to_path_buf()))
    }
}

/// Applies `patch` under `root` (pure file operations; `root` is a scratch copy). A missing
/// file matches an empty `expected_original` (the patch creates it).
pub fn apply_patch(root: &Path, patch: &[FilePatch]) -> Result<(), PatchError> {
    for p in patch {
        checked(&p.path)?;
        let target = root.join(&p.path);
        let current = match std::fs::read_to_string(&target) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(_) => return Err(PatchError::TargetChanged(p.path.clone())),
        };
        if current != p.expected_original {
            return Err(PatchError::TargetChanged(p.path.clone()));
        }
    }
    for p in patch {
        let target = root.join(&p.path);
        let io_err = |source| PatchError::Io {
            path: p.path.clone(),
            source,
        };
        // Never write through a symlink into the audited folder.
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
            std::fs::remove_file(&target).map_err(io_err)?;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_err)?;
        }
        std::fs::write(&target, &p.new_text).map_err(io_err)?;
    }
    Ok(())
}

/// One changed region: original lines `old` replaced by `new`.
struct Hunk<'a> {
    old: std::ops::Range<usize>,
    new: Vec<&'a str>,
}

fn hunks<'a>(orig: &[&str], new: &[&'a str]) -> Vec<Hunk<'a>> {
    similar::capture_diff_slices(similar::Algorithm::Myers, orig, new)
        .into_iter()
        .filter_map(|op| {
            let (tag, old, new_range) = op.as_tag_tuple();
            (tag != similar::DiffTag::Equal).then(|| Hunk {
                old,
                new: new[new_range].to_vec(),
            })
        })
        .collect()
}

/// Three-way merge of two edits of the same `original`, line-based. `None` when they change
/// the same or adjacent lines (a conflict a human must resolve).
#[must_use]
pub fn merge3(original: &str, a: &str, b: &str) -> Option<String> {
    let orig: Vec<&str> = original.split_inclusive('\n').collect();
    let a_lines: Vec<&str> = a.split_inclusive('\n').collect();
    let b_lines: Vec<&str> = b.split_inclusive('\n').collect();
    let mut all = hunks(&orig, &a_lines);
    all.extend(hunks(&orig, &b_lines));
    all.sort_by_key(|h| (h.old.start, h.old.end));
    for w in all.windows(2) {
        // Touching counts as overlapping: two insertions at one place have no defined order.
        if w[1].old.start <= w[0].old.end {
            return None;
        }
    }
    let mut out = String::with_capacity(original.len() + a.len().max(b.len()));
    let mut at = 0;
    for h in &all {
        out.extend(orig[at..h.old.start].iter().copied());
        out.extend(h.new.iter().copied());
        at = h.old.end;
    }
    out.extend(orig[at..].iter().copied());
    Some(out)
}

/// Stacks several patches (in rank order) into one: patches of different files are combined;
/// two patches of the same file apply in sequence when the later was made on the earlier's
/// output, merge when both were made on the same original and change different lines, and
/// otherwise stacking is refused with the reason.
pub fn stack(patches: &[(&str, &[FilePatch])]) -> Result<Vec<FilePatch>, String> {
    let mut out: Vec<(FilePatch, &str)> = Vec::new();
    for (label, patch) in patches {
        for p in *patch {
            match out.iter_mut().find(|(q, _)| q.path == p.path) {
                None => out.push((p.clone(), label)),
                Some((acc, first)) => {
                    if p.expected_original == acc.new_text {
                        acc.new_text.clone_from(&p.new_text);
                    } else if p.expected_original == acc.expected_original {
                        acc.new_text = merge3(&acc.expected_original, &acc.new_text, &p.new_text)
                            .ok_or_else(|| {
                            format!(
                                "{first} and {label} change the same lines of {}; not stacked",
                                p.path.display()
                            )
                        })?;
                    } else {
                        return Err(format!(
                            "{label}'s patch of {} was made against different code than {first}'s; not stacked",
                            p.path.display()
                        ));
                    }
                }
            }
        }
    }
    Ok(out.into_iter().map(|(p, _)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(path: &str, from: &str, to: &str) -> FilePatch {
        FilePatch {
            path: PathBuf::from(path),
            expected_original: from.to_owned(),
            new_text: to.to_owned(),
        }
    }

    #[test]
    fn merge_of_disjoint_edits() {
        let orig = "a\nb\nc\nd\ne\n";
        let a = "A\nb\nc\nd\ne\n";
        let b = "a\nb\nc\nd\nE\nf\n";
        assert_eq!(merge3(orig, a, b).as_deref(), Some("A\nb\nc\nd\nE\nf\n"));
    }

    #[test]
    fn merge_refuses_overlap() {
        let orig = "a\nb\nc\n";
        assert_eq!(merge3(orig, "a\nX\nc\n", "a\nY\nc\n"), None);
        assert_eq!(merge3(orig, "a\nb\nX\nc\n", "a\nb\nY\nc\n"), None);
    }

    #[test]
    fn stack_sequential_merged_and_refused() {
        let orig = "a\nb\nc\nd\n";
        let first = [fp("x.py", orig, "A\nb\nc\nd\n"), fp("y.py", "", "new\n")];
        let sequential = [fp("x.py", "A\nb\nc\nd\n", "A\nb\nc\nD\n")];
        let s = stack(&[("s1", &first), ("s2", &sequential)]).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].new_text, "A\nb\nc\nD\n");
        assert_eq!(s[0].expected_original, orig);
        let parallel = [fp("x.py", orig, "a\nb\nc\nD\n")];
        let s = stack(&[("s1", &first), ("s2", &parallel)]).unwrap();
        assert_eq!(s[0].new_text, "A\nb\nc\nD\n");
        let clash = [fp("x.py", orig, "Z\nb\nc\nd\n")];
        let why = stack(&[("s1", &first), ("s2", &clash)]).unwrap_err();
        assert!(why.contains("same lines of x.py"), "{why}");
        let other = [fp("x.py", "zzz\n", "q\n")];
        assert!(
            stack(&[("s1", &first), ("s2", &other)])
                .unwrap_err()
                .contains("different code")
        );
    }

    #[test]
    fn patch_paths_must_stay_inside() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["../x.py", "/etc/passwd", ""] {
            let err = apply_patch(dir.path(), &[fp(bad, "", "x")]).unwrap_err();
            assert!(matches!(err, PatchError::BadPath(_)), "{bad}: {err}");
        }
    }
}
