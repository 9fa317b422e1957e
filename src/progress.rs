//! Human-facing status lines on stderr, silenced by `--quiet`.

/// Prints status lines unless quiet.
#[derive(Debug, Clone, Copy)]
pub struct Console {
    quiet: bool,
}

impl Console {
    /// A console; `quiet` keeps it silent.
    #[must_use]
    pub fn new(quiet: bool) -> Self {
        Self { quiet }
    }

    /// One status line on stderr.
    pub fn status(&self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    /// A warning on stderr, printed even when quiet.
    pub fn warn(&self, line: &str) {
        eprintln!("warning: {line}");
    }
}
