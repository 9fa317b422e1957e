//! Scratch copies: what is copied, linked and left out; patches never touch the original.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a failure is a test failure"
)]

mod experiments_support;

use std::path::PathBuf;

use efficiency_audit::experiments::FilePatch;
use efficiency_audit::experiments::scratch::{LINK_THRESHOLD, PatchError, Scratch};
use experiments_support::tree_hash;

#[test]
fn copies_sources_links_big_data_and_venvs_skips_git_caches_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("train.py"), "print('hi')\n").unwrap();
    std::fs::create_dir_all(d.join("pkg/__pycache__")).unwrap();
    std::fs::write(d.join("pkg/mod.py"), "X = 1\n").unwrap();
    std::fs::write(d.join("pkg/__pycache__/mod.cpython-311.pyc"), "junk").unwrap();
    std::fs::create_dir_all(d.join(".git/objects")).unwrap();
    std::fs::write(d.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(d.join(".venv/bin")).unwrap();
    std::fs::write(d.join(".venv/bin/python"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(d.join("report/efficiency")).unwrap();
    std::fs::write(d.join("report/efficiency/old.log"), "old").unwrap();
    std::fs::create_dir_all(d.join("data")).unwrap();
    std::fs::write(
        d.join("data/big.bin"),
        vec![7u8; LINK_THRESHOLD as usize + 1],
    )
    .unwrap();
    std::fs::write(d.join("data/small.csv"), "a,b\n").unwrap();
    let before = tree_hash(d);

    let scratch = Scratch::create(d, &[d.join("report/efficiency")]).unwrap();
    let s = scratch.path().to_path_buf();
    assert!(s.join("train.py").is_file() && !s.join("train.py").is_symlink());
    assert!(s.join("pkg/mod.py").is_file());
    assert!(!s.join("pkg/__pycache__").exists());
    assert!(!s.join(".git").exists());
    assert!(!s.join("report/efficiency").exists());
    assert!(s.join(".venv").is_symlink());
    assert!(
        s.join("data/big.bin").is_symlink(),
        "large untracked data is linked"
    );
    assert!(!s.join("data/small.csv").is_symlink());
    assert!(scratch.linked >= 2 && scratch.copied >= 3);

    // A patch over a linked file replaces the link; the original is untouched.
    let big = std::fs::read_to_string(d.join("data/big.bin")).unwrap();
    scratch
        .apply(&[FilePatch {
            path: PathBuf::from("data/big.bin"),
            expected_original: big,
            new_text: "small now".into(),
        }])
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(s.join("data/big.bin")).unwrap(),
        "small now"
    );

    // A stale patch is refused before anything is written.
    let err = scratch
        .apply(&[
            FilePatch {
                path: PathBuf::from("train.py"),
                expected_original: "print('hi')\n".into(),
                new_text: "print('patched')\n".into(),
            },
            FilePatch {
                path: PathBuf::from("pkg/mod.py"),
                expected_original: "X = 2\n".into(),
                new_text: "X = 3\n".into(),
            },
        ])
        .unwrap_err();
    assert!(
        matches!(err, PatchError::TargetChanged(ref p) if p == &PathBuf::from("pkg/mod.py")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(s.join("train.py")).unwrap(),
        "print('hi')\n"
    );

    drop(scratch);
    assert!(!s.exists(), "scratch copy removed on drop");
    assert_eq!(tree_hash(d), before, "the audited folder was modified");
}
