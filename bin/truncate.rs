use std::process::ExitCode;

use minicode_output::cli;

fn main() -> ExitCode {
    cli::handoff::coreutils_truncate().unwrap_or_else(cli::run_main::<cli::truncate::Args>)
}
