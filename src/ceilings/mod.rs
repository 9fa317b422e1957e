//! Step 1: measure what this machine can do and write `theoretical_limits.yaml`.

pub mod model;

use std::path::PathBuf;

use crate::cli::GlobalArgs;
use crate::exit::ExitStatus;

/// Flags of `efficiency-audit ceilings`.
#[derive(Debug, Clone, clap::Args)]
pub struct CeilingsArgs {
    /// Folder whose filesystem the disk probe measures (the workspace).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub workspace: PathBuf,
}

/// Runs `efficiency-audit ceilings`.
pub fn command(_global: &GlobalArgs, _args: &CeilingsArgs) -> anyhow::Result<ExitStatus> {
    anyhow::bail!("ceilings: under construction")
}
