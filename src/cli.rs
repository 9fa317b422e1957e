//! The command line (clap derive): one subcommand per step, plus `rules`.
//!
//! Each subcommand is standalone-runnable with its inputs named on the command line; common
//! flags (`--output-dir`, `--config`, `--quiet`) are global.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::exit::ExitStatus;

/// Is this code already running at the speed this machine allows?
///
/// Measures the machine's ceilings, reads the Python code to estimate its demand, and says RED
/// (no resource saturated: speed-up is provably possible) or GREEN (bottlenecked on X).
#[derive(Debug, Parser)]
#[command(name = "efficiency-audit", version, about, long_about)]
pub struct Cli {
    /// Common flags.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct GlobalArgs {
    /// Folder for reports [default: report/efficiency, or `output-dir` from the config].
    #[arg(long, global = true, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Configuration file [default: .github/efficiency-audit.yml, else efficiency-audit.yml in
    /// the audited folder].
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print only errors and the final result.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Step 1: measure this machine's CPU, memory, disk and GPU ceilings and write
    /// theoretical_limits.yaml (≈10 s; never fails for a missing GPU).
    Ceilings(crate::ceilings::CeilingsArgs),
    /// Print the catalog of static-analysis rules (`--format markdown` is docs/rules.md).
    Rules(crate::analysis::RulesArgs),
    /// Step 3: rank speed-up strategies for the Python code under PATHS, each as a real patch
    /// with its unified diff, and write strategies.md.
    Strategies(crate::strategies::StrategiesArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Ceilings(args) => crate::ceilings::command(&cli.global, &args),
        Command::Rules(args) => crate::analysis::command(&args),
        Command::Strategies(args) => crate::strategies::command(&cli.global, &args),
    }
}
