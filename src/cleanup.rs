//! Process-wide cleanup that also runs on Ctrl-C (and SIGTERM/SIGHUP, e.g. a cancelled CI job).
//!
//! Any step that creates something outside the output folder — a scratch copy of the audited
//! repository, a probe's temp file — or starts a process group registers it here. Exactly one
//! signal handler exists for the whole program ([`install`]); it kills every registered process
//! group, removes every registered path and exits with status 130. On ordinary paths the owner
//! removes its item itself and calls [`unregister`] / [`unregister_process_group`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

struct State {
    paths: Vec<PathBuf>,
    groups: Vec<i32>,
}

static STATE: Mutex<State> = Mutex::new(State {
    paths: Vec::new(),
    groups: Vec::new(),
});
static INSTALL: Once = Once::new();
/// Set by the signal handler before it cleans up: the work the main thread sees fail (a
/// benchmark killed by the cleanup) failed because of the interrupt.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit status after an interrupt: 128 + SIGINT, as shells report it.
pub const INTERRUPTED_EXIT: i32 = 130;

fn state() -> MutexGuard<'static, State> {
    // A panic while holding the lock must not stop the cleanup of the others' paths.
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Installs the one signal handler (idempotent). Called by [`register`] and
/// [`register_process_group`]; call it early in `main` to also cover work registered later.
///
/// Returns an error message when another handler was installed with `ctrlc` directly: then
/// registered items are only removed on ordinary exit paths.
pub fn install() -> Result<(), String> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        if let Err(err) = ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            run_all();
            std::process::exit(INTERRUPTED_EXIT);
        }) {
            result = Err(format!(
                "cannot install the Ctrl-C handler ({err}); scratch copies are only removed on normal exit"
            ));
        }
    });
    result
}

/// Has an interrupt arrived (the handler is cleaning up and will exit with
/// [`INTERRUPTED_EXIT`])?
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Called on the main thread before it exits: when an interrupt is being handled, waits for
/// the handler to finish its cleanup and exit with [`INTERRUPTED_EXIT`] (a benchmark the
/// handler killed must not turn into "the benchmark is broken", exit 2, while the scratch copy
/// is still being removed).
pub fn wait_if_interrupted() {
    if interrupted() {
        // the handler exits the process; this only bounds the wait should it never return
        std::thread::sleep(std::time::Duration::from_secs(60));
        std::process::exit(INTERRUPTED_EXIT);
    }
}

/// Registers a file or folder to remove on interrupt.
pub fn register(path: &Path) {
    let _ = install();
    state().paths.push(path.to_path_buf());
}

/// Forgets a path registered with [`register`] (its owner removed it).
pub fn unregister(path: &Path) {
    state().paths.retain(|p| p != path);
}

/// Registers a process group to kill (SIGKILL) on interrupt.
pub fn register_process_group(pgid: i32) {
    let _ = install();
    state().groups.push(pgid);
}

/// Forgets a process group registered with [`register_process_group`].
pub fn unregister_process_group(pgid: i32) {
    state().groups.retain(|g| *g != pgid);
}

/// Kills every registered process group and removes every registered path, now. The signal
/// handler calls this; it is public so that a fatal-error path can call it too.
pub fn run_all() {
    let (paths, groups) = {
        let mut s = state();
        (std::mem::take(&mut s.paths), std::mem::take(&mut s.groups))
    };
    for pgid in groups {
        kill_group(pgid);
    }
    for path in paths {
        remove_path(&path);
    }
}

/// SIGKILL to a whole process group (grandchildren included); a gone group is fine.
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Removes a file, a symlink or a folder tree; missing is fine.
pub fn remove_path(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Removes a registered path when dropped, and unregisters it.
#[derive(Debug)]
pub struct PathGuard {
    path: PathBuf,
}

impl PathGuard {
    /// Registers `path` and returns the guard that removes it.
    #[must_use]
    pub fn new(path: PathBuf) -> Self {
        register(&path);
        Self { path }
    }

    /// The guarded path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PathGuard {
    fn drop(&mut self) {
        remove_path(&self.path);
        unregister(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_removes_and_unregisters() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("scratch");
        std::fs::create_dir_all(target.join("a/b")).unwrap();
        std::fs::write(target.join("a/b/f.txt"), "x").unwrap();
        {
            let g = PathGuard::new(target.clone());
            assert!(state().paths.contains(&target));
            assert_eq!(g.path(), target);
        }
        assert!(!target.exists());
        assert!(!state().paths.contains(&target));
    }
}
