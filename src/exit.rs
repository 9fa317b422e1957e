//! Exit statuses, as DESIGN §2 defines them for the action and the CLI.

use std::process::ExitCode;

/// How a run ended, mapped to the process exit code at the edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: GREEN, or RED with `fail-on: never`, or a step that only writes files.
    Success,
    /// 1: RED with `fail-on: red`.
    Red,
    /// 2: the tool itself failed; the message says what to do.
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        match status {
            ExitStatus::Success => ExitCode::from(0),
            ExitStatus::Red => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
        }
    }
}
