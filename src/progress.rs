//! Human-facing status lines on stderr, silenced by `--quiet`, and progress for long work.
//!
//! Three modes: a terminal gets one live line rewritten in place (which experiment, which run,
//! time left in the budget); GitHub Actions logs (`GITHUB_ACTIONS=true`, passed in by the
//! caller — this module reads no environment) get plain lines at most every
//! [`PLAIN_PERIOD`] and foldable `::group::` sections
//! (<https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions#grouping-log-lines>);
//! anything else (a pipe, a file) gets the plain lines without groups.

use std::cell::Cell;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Shortest time between two plain progress lines (CI logs, pipes).
pub const PLAIN_PERIOD: Duration = Duration::from_secs(10);

/// Shortest time between two redraws of the live line.
const LIVE_PERIOD: Duration = Duration::from_millis(100);

/// Erase the current terminal line and return to its start (ECMA-48 EL).
const CLEAR_LINE: &str = "\r\x1b[2K";

/// Prints status lines unless quiet.
#[derive(Debug, Clone, Copy)]
pub struct Console {
    quiet: bool,
    tty: bool,
    ci: bool,
}

impl Console {
    /// A console for plain output (no live line, no CI groups); `quiet` keeps it silent.
    #[must_use]
    pub fn new(quiet: bool) -> Self {
        Self {
            quiet,
            tty: false,
            ci: false,
        }
    }

    /// A console that draws a live line when stderr is a terminal, and emits `::group::`
    /// folding when `github_actions` (the caller read `GITHUB_ACTIONS=true`).
    #[must_use]
    pub fn detect(quiet: bool, github_actions: bool) -> Self {
        Self {
            quiet,
            tty: !github_actions && std::io::stderr().is_terminal(),
            ci: github_actions,
        }
    }

    /// A console with an explicit mode (tests, or callers that know better).
    #[must_use]
    pub fn with_mode(quiet: bool, tty: bool, github_actions: bool) -> Self {
        Self {
            quiet,
            tty,
            ci: github_actions,
        }
    }

    /// Whether progress is drawn as a live terminal line.
    #[must_use]
    pub fn is_live(&self) -> bool {
        self.tty && !self.quiet
    }

    /// Whether output goes to a GitHub Actions log.
    #[must_use]
    pub fn is_github_actions(&self) -> bool {
        self.ci
    }

    /// One status line on stderr.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            let clear = if self.tty { CLEAR_LINE } else { "" };
            eprintln!("{clear}{line}");
        }
    }

    /// A warning on stderr, printed even when quiet.
    pub fn warn(&self, line: &str) {
        let clear = if self.tty { CLEAR_LINE } else { "" };
        eprintln!("{clear}warning: {line}");
    }

    /// Opens a foldable section in GitHub Actions logs; a plain heading elsewhere.
    pub fn group(&self, title: &str) {
        if self.quiet {
            return;
        }
        if self.ci {
            eprintln!("::group::{title}");
        } else {
            self.status(&format!("── {title}"));
        }
    }

    /// Closes the section opened by [`Console::group`].
    pub fn end_group(&self) {
        if self.ci && !self.quiet {
            eprintln!("::endgroup::");
        }
    }
}

/// Progress of long work: a live line on a terminal, periodic plain lines otherwise.
#[derive(Debug)]
pub struct Progress {
    console: Console,
    last: Cell<Option<Instant>>,
    shown: Cell<bool>,
}

impl Progress {
    /// Progress printed through `console`.
    #[must_use]
    pub fn new(console: Console) -> Self {
        Self {
            console,
            last: Cell::new(None),
            shown: Cell::new(false),
        }
    }

    /// Shows `line` now when it is time: redrawn in place on a terminal (at most 10 times a
    /// second), printed as a plain line at most every [`PLAIN_PERIOD`] elsewhere.
    pub fn update(&self, line: &str) {
        if self.console.quiet {
            return;
        }
        let now = Instant::now();
        let period = if self.console.tty {
            LIVE_PERIOD
        } else {
            PLAIN_PERIOD
        };
        if self
            .last
            .get()
            .is_some_and(|t| now.duration_since(t) < period)
        {
            return;
        }
        self.last.set(Some(now));
        if self.console.tty {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "{CLEAR_LINE}{line}");
            let _ = err.flush();
            self.shown.set(true);
        } else {
            eprintln!("{line}");
        }
    }

    /// Forces the next [`Progress::update`] to print (e.g. a new experiment started).
    pub fn reset(&self) {
        self.last.set(None);
    }

    /// Removes the live line (before printing results).
    pub fn clear(&self) {
        if self.shown.replace(false) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "{CLEAR_LINE}");
            let _ = err.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// `1:05`, `12:30`, `1:02:03`.
#[must_use]
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format() {
        assert_eq!(clock(Duration::from_secs(65)), "1:05");
        assert_eq!(clock(Duration::from_secs(3723)), "1:02:03");
    }

    #[test]
    fn detect_never_draws_live_in_ci() {
        let c = Console::detect(false, true);
        assert!(!c.is_live());
        assert!(c.is_github_actions());
    }
}
