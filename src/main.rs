//! Thin binary: parse the command line, run, map the outcome to an exit status.

use std::process::ExitCode;

use clap::Parser;
use efficiency_audit::cli::Cli;
use efficiency_audit::exit::ExitStatus;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = efficiency_audit::cli::run(cli);
    // an interrupt being handled decides the exit status (130), not what it made fail
    efficiency_audit::cleanup::wait_if_interrupted();
    match outcome {
        Ok(status) => status.into(),
        Err(err) => {
            // A closed pipe (`efficiency-audit rules | head`) is not a failure.
            if err.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitStatus::Success.into();
            }
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitStatus::Error.into()
        }
    }
}
