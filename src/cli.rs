//! Command-line plumbing shared by the five binaries: common options, colour choice, and
//! [`run_main`], the one place that turns results into exit codes.

pub mod handoff;
pub mod normalize;
pub mod project;
pub mod scrub;
pub mod summarize;
pub mod truncate;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};

/// Options every binary takes.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Input files, read in order; none or `-` means standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Color {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl Color {
    /// Whether to colour, resolving `auto` against stdout and `NO_COLOR`.
    pub fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal(),
        }
    }
}

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1: input was processed, but some of it was rejected (or `--check` failed).
    Rejected,
    /// Exit 3: `summarize --check` found no failed run, but some run is incomplete or
    /// unknown (a broken measurement, not a bad agent).
    Unsettled,
}

/// A binary's arguments and what it does with them.
pub trait Command: Parser {
    /// The binary's name, for messages.
    const NAME: &'static str;
    /// The input operands.
    fn files(&self) -> &[PathBuf];
    /// Runs the command over `sources`, writing its output to `out` (diagnostics still go
    /// to stderr). The binaries and the fuzz targets both come through here.
    fn run_on<W: Write>(self, sources: &[crate::io::Source], out: W) -> anyhow::Result<Outcome>;
    /// Runs the command over its operands (or stdin), writing to stdout.
    fn run(self) -> anyhow::Result<Outcome> {
        let sources = crate::io::Source::from_operands(self.files());
        self.run_on(&sources, std::io::stdout().lock())
    }
}

/// Parses arguments, runs the command, and maps the result to an exit code: 0 success,
/// 1 rejected input, 2 usage or fatal errors; a closed stdout is a quiet success.
pub fn run_main<C: Command>() -> ExitCode {
    let args = match C::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // Printing help to a closed pipe is not worth a message.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if let Err(e) = crate::io::stop_on_signals() {
        eprintln!("{}: cannot install signal handlers: {e}", C::NAME);
    }
    let result = args.run();
    if let Some(sig) = crate::io::stop_requested() {
        // The conventional status of a command stopped by a signal, after a clean stop.
        return ExitCode::from(128 + sig as u8);
    }
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Rejected) => ExitCode::from(1),
        Ok(Outcome::Unsettled) => ExitCode::from(3),
        Err(e) if crate::io::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e:#}", C::NAME);
            ExitCode::from(2)
        }
    }
}

/// Prints diagnostics to stderr, at most `limit` of them, then a count of the rest.
pub(crate) struct Diagnostics {
    name: &'static str,
    shown: usize,
    hidden: usize,
}

impl Diagnostics {
    const LIMIT: usize = 20;

    pub(crate) fn new(name: &'static str) -> Diagnostics {
        Diagnostics { name, shown: 0, hidden: 0 }
    }

    pub(crate) fn say(&mut self, msg: &str) {
        if self.shown < Self::LIMIT {
            self.shown += 1;
            eprintln!("{}: {msg}", self.name);
        } else {
            self.hidden += 1;
        }
    }
}

impl Drop for Diagnostics {
    fn drop(&mut self) {
        if self.hidden > 0 {
            eprintln!("{}: … and {} more message(s)", self.name, self.hidden);
        }
    }
}
