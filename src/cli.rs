//! Command-line plumbing shared by the five binaries: common options, colour choice, and
//! [`run_main`], the one place that turns results into exit codes.

// The exit status lines every filter's `--help` shares, written once (see [`run_main`]):
// `concat!` puts them into each binary's `after_help`, which must be a literal.
macro_rules! exit_usage_error {
    () => {
        "  2  usage error, or an input file could not be read (said on stderr; the others are
     still read and the output is whole)"
    };
}
macro_rules! exit_stopped {
    () => {
        "  130, 143  stopped by SIGINT or SIGTERM: the output so far is whole lines"
    };
}

mod canonical;
pub mod handoff;
pub mod normalize;
pub mod project;
pub mod scrub;
pub mod summarize;
pub mod truncate;

use std::cell::{Cell, RefCell};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, ValueEnum};

use crate::io::{Files, SourceNotes, Unreadable};

/// Options every binary takes.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Input files, read in order; none or `-` means standard input.
    #[arg(value_name = "FILE", conflicts_with = "files_from")]
    pub files: Vec<PathBuf>,
    /// Read the input files named in LIST (`-` for standard input), one path per line: any
    /// number of files in one process, with no argument-length limit.
    #[arg(long, value_name = "LIST")]
    pub files_from: Option<PathBuf>,
    /// With --files-from, the paths end with NUL, as `find -print0` writes them.
    #[arg(short = '0', long = "null", requires = "files_from")]
    pub null: bool,
}

impl CommonArgs {
    /// The inputs these options name.
    pub fn sources(&self) -> crate::io::Sources {
        match &self.files_from {
            Some(list) => crate::io::Sources::listed_in(list, self.null),
            None => crate::io::Sources::from_operands(&self.files),
        }
    }
}

/// `--max-line-bytes`, as the filters that read a line at a time take it.
#[derive(Debug, Clone, Copy, Args)]
pub struct LineLimit {
    /// Lines longer than this are read as their first 4 KiB only, and the exit status is 1
    /// (normalize: a `raw` event holds that start).
    #[arg(long, value_name = "N", default_value_t = crate::io::DEFAULT_MAX_LINE)]
    pub max_line_bytes: usize,
}

/// `--strict`, as the filters of canonical events take it.
#[derive(Debug, Clone, Copy, Args)]
pub struct Strict {
    /// Read canonical events only: provider output is an error (exit 1), as any line that
    /// is not an event, instead of being normalized first as `normalize` would.
    #[arg(long)]
    pub strict: bool,
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
    /// The input options.
    fn common(&self) -> &CommonArgs;
    /// What the command reads: which files of a directory, and which files it decodes.
    const FORMATS: &'static dyn crate::io::Formats = &crate::io::JsonLines;
    /// Runs the command over `sources`, writing its output to `out` (diagnostics still go
    /// to stderr). The binaries and the fuzz targets both come through here.
    fn run_on<W: Write>(self, sources: &crate::io::Sources, out: W) -> anyhow::Result<Outcome>;
    /// Runs the command over its inputs (or stdin), writing to stdout.
    fn run(self) -> anyhow::Result<Outcome> {
        let sources = self.common().sources().reading(Self::FORMATS);
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

/// Prints diagnostics to stderr, at most `limit` of them, then a count of the rest, and
/// counts the input files that could not be read.
pub(crate) struct Diagnostics {
    name: &'static str,
    shown: Cell<usize>,
    hidden: Cell<usize>,
    unreadable: Cell<u64>,
    /// The input's files, when it names them, so that a line is cited by its file.
    files: RefCell<Files>,
}

impl Diagnostics {
    const LIMIT: usize = 20;

    pub(crate) fn new(name: &'static str) -> Diagnostics {
        Diagnostics {
            name,
            shown: Cell::new(0),
            hidden: Cell::new(0),
            unreadable: Cell::new(0),
            files: RefCell::default(),
        }
    }

    /// The file `name` begins after line `before` of the whole input.
    pub(crate) fn begin_file(&self, before: u64, name: &str) {
        self.files.borrow_mut().begin(before, name);
    }

    /// Line `n` of the whole input for a person: `line 7`, or `FILE: line 3` when the input
    /// names its files.
    pub(crate) fn line(&self, n: u64) -> String {
        self.files.borrow().cite(n, n)
    }

    pub(crate) fn say(&self, msg: &str) {
        if self.shown.get() < Self::LIMIT {
            self.shown.set(self.shown.get() + 1);
            eprintln!("{}: {msg}", self.name);
        } else {
            self.hidden.set(self.hidden.get() + 1);
        }
    }

    /// Says that an input could not be read (the others still are), and counts it.
    pub(crate) fn unreadable(&self, what: impl std::fmt::Display) {
        self.unreadable.set(self.unreadable.get() + 1);
        self.say(&what.to_string());
    }

    /// The inputs that could not be read so far.
    pub(crate) fn unreadable_count(&self) -> u64 {
        self.unreadable.get()
    }

    /// The outcome of a run whose input was `rejected` or not; an input that could not be
    /// read makes it exit 2, once every other input was read and the output written.
    pub(crate) fn outcome(&self, rejected: bool) -> anyhow::Result<Outcome> {
        match self.unreadable.get() {
            0 => Ok(if rejected { Outcome::Rejected } else { Outcome::Success }),
            n => anyhow::bail!("{n} input file(s) could not be read (see above)"),
        }
    }
}

impl SourceNotes for &Diagnostics {
    fn begin(&mut self, before: u64, name: &str) {
        self.begin_file(before, name);
    }

    fn unreadable(&mut self, u: Unreadable) {
        Diagnostics::unreadable(self, u);
    }
}

impl Drop for Diagnostics {
    fn drop(&mut self) {
        if self.hidden.get() > 0 {
            eprintln!("{}: … and {} more message(s)", self.name, self.hidden.get());
        }
    }
}
