//! `summarize`: canonical JSONL in (or, with `--merge`, summarize's own JSON documents),
//! one whole-document run report out.

use std::io::Write;

use anyhow::Context;
use clap::{Parser, ValueEnum};

use super::{Color, Command, CommonArgs, Diagnostics, Outcome};
use crate::io::{is_blank, read_lines, Line, LineWriter, Source, DEFAULT_MAX_LINE};
use crate::summarize::{to_markdown, to_text, Merger, Report, Summarizer};

/// Summarize agent runs: outcome, errors, tools, shell commands, files, usage, input health.
///
/// Reads canonical minicode.output.v1 JSONL (one run, several runs one after another, or
/// several files) and writes one report for all of it. Only counters and short excerpts are
/// kept, so memory stays bounded however long the input.
#[derive(Debug, Parser)]
#[command(name = "summarize", version, after_help = AFTER_HELP)]
pub struct Args {
    /// The report's format: an indented JSON document, text, or Markdown for CI summaries.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit 1 when any summarized run is not ok (or there is none), like `jq -e`.
    #[arg(long)]
    pub check: bool,
    /// Read summarize's own JSON documents (`--format json` output) and merge them into one.
    #[arg(long)]
    pub merge: bool,
    /// When to colour text: auto means when stdout is a terminal and NO_COLOR is unset or empty.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Color::Auto)]
    pub color: Color,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One indented JSON object: its own `--merge` input.
    Json,
    /// Text for a terminal.
    Text,
    /// GitHub-flavoured Markdown (e.g. for $GITHUB_STEP_SUMMARY).
    Markdown,
}

const AFTER_HELP: &str = "\
Examples:
  codex exec --json 'fix the tests' | normalize | tee run.jsonl | summarize --check
  summarize --format markdown run.jsonl >> \"$GITHUB_STEP_SUMMARY\"
  printf '%s\\0' runs/*.jsonl |
    xargs -0 -P 8 -n 1 sh -c 'summarize --format json \"$1\" > \"$1.summary.json\"' _
  summarize --merge --format text runs/*.summary.json

Exit status:
  0  the report was written (with --check: and every run was ok)
  1  with --check: a run was not ok, or there was no run; or some input was not canonical
     JSONL (with --merge: not a summarize JSON document); see stderr
  2  usage error, or a file could not be read
  130, 143  stopped by SIGINT or SIGTERM: the output so far is whole lines

A run is one normalized stream, ended by its summary record; its `ok` is that record's.
Merging is associative: summaries of parts merge into the summary of the whole.";

impl Command for Args {
    const NAME: &'static str = "summarize";

    fn files(&self) -> &[std::path::PathBuf] {
        &self.common.files
    }

    fn run_on<W: Write>(self, sources: &[Source], out: W) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(out);
        let mut diag = Diagnostics::new(Self::NAME);
        let (report, rejected) = if self.merge {
            merge(sources, &mut diag)?
        } else {
            let mut s = Summarizer::new();
            let mut rejected = false;
            read_lines(sources, DEFAULT_MAX_LINE, &mut out, |n, line, _| {
                let error = match line {
                    Line::Text(t) if is_blank(&t) => return Ok(()),
                    Line::Text(t) => s.line(&t).err(),
                    Line::Oversized { bytes, .. } => Some(format!("{bytes} bytes is over the line limit")),
                };
                if let Some(error) = error {
                    rejected = true;
                    s.invalid();
                    diag.say(&format!("line {n}: not a canonical event: {error}"));
                }
                Ok(())
            })?;
            (s.finish(), rejected)
        };
        let doc = match self.format {
            Format::Json => report.to_json(),
            Format::Text => to_text(&report, self.color.enabled()),
            Format::Markdown => to_markdown(&report),
        };
        out.line_buf().extend_from_slice(doc.as_bytes());
        out.flush()?;
        Ok(if rejected || (self.check && !report.ok()) { Outcome::Rejected } else { Outcome::Success })
    }
}

/// Reads and merges every document of every source, in order.
fn merge(sources: &[Source], diag: &mut Diagnostics) -> anyhow::Result<(Report, bool)> {
    let mut total = Merger::new();
    let mut rejected = false;
    for source in sources {
        if crate::io::stop_requested().is_some() {
            break;
        }
        let input = source.open().with_context(|| format!("cannot read {}", source.name()))?;
        let mut n = 0;
        Report::read_documents(input, |doc| {
            n += 1;
            match doc {
                Ok(r) => total.add(r),
                Err(e) => {
                    rejected = true;
                    total.count_invalid();
                    diag.say(&format!("{}: document {n}: {e}", source.name()));
                }
            }
        })
        .with_context(|| format!("reading {}", source.name()))?;
    }
    Ok((total.finish(), rejected))
}
