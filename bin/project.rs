use std::process::ExitCode;

fn main() -> ExitCode {
    minicode_output::cli::run_main::<minicode_output::cli::project::Args>()
}
