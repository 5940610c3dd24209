//! `summarize`: canonical JSONL in (or provider output, normalized on the way in; with
//! `--merge`, summarize's own JSON documents), one whole-document run report out.

use std::io::Write;

use clap::{Parser, ValueEnum};

use super::canonical::{Canonical, Reader};
use super::{Color, Command, CommonArgs, Diagnostics, Outcome};
use crate::event::{Event, Verdict};
use crate::io::{each_line, is_blank, Line, LineWriter, Sources, Unreadable, DEFAULT_MAX_LINE};
use crate::scrub::Scrubber;
use crate::summarize::words::what_happened;
use crate::summarize::{to_markdown, to_text, Merger, Report, SessionReport, Summarizer};

/// Summarize agent runs: outcome, errors, tools, shell commands, files, usage, input health.
///
/// Reads canonical minicode.output.v1 JSONL (one run, several runs one after another, or
/// several files) and writes one report for all of it. Only counters and short excerpts are
/// kept, so memory stays bounded however long the input. Provider output (what `normalize`
/// reads) is normalized first, in process: each input file whose first JSON line is not a
/// canonical event is read as `normalize` would read it; --strict reads canonical events only.
/// Every string the report shows (a prompt, an error, a command, an excerpt) is scrubbed of
/// secrets and terminal control bytes, whoever wrote the events.
#[derive(Debug, Parser)]
#[command(name = "summarize", version, after_help = AFTER_HELP)]
pub struct Args {
    /// The report's format: an indented JSON document, text, or Markdown for CI summaries.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Gate on the runs' verdicts: exit 0 when every run succeeded, 1 when any failed, 3
    /// when none failed but some are incomplete or unknown (or there is none); each run that
    /// is not a success gets one line on stderr: what happened, why, what to do.
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
    pub strict: super::Strict,
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

const AFTER_HELP: &str = concat!(
    "\
Examples:
  codex exec --json 'fix the tests' | normalize | tee run.jsonl | summarize --check
  summarize --format markdown run.jsonl >> \"$GITHUB_STEP_SUMMARY\"
  printf '%s\\0' runs/*.jsonl |
    xargs -0 -P 8 -n 1 sh -c 'summarize --format json \"$1\" > \"$1.summary.json\"' _
  summarize --merge --format text runs/*.summary.json
  find runs -name '*.jsonl' -print0 | LC_ALL=C sort -z | normalize --files-from - -0 | summarize --check

Exit status:
  0  the report was written (with --check: and every run's verdict is success)
  1  with --check: a run failed; without it: some input was not canonical JSONL (with
     --merge: not a summarize JSON document); see stderr
",
    exit_usage_error!(),
    "\n  3  with --check: no run failed, but some run is incomplete or unknown, there was no run,
     or some input could not be read: the measurement is broken, not the agent
",
    exit_stopped!(),
    "

A run is one session of one normalized stream. Its verdict is success, failed (the agent
or a step failed, or the agent's result contradicts itself), incomplete (the input ended
before the run's terminal record) or unknown (nothing of an agent run was recognised).
Each run is known by a key, a digest of its events, so --merge is a union: associative,
commutative and idempotent; a run that two parts both hold counts once."
);

impl Command for Args {
    const NAME: &'static str = "summarize";
    const FORMATS: &'static dyn crate::io::Formats = &crate::provider::EventsOrSessions;

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run_on<W: Write>(self, sources: &Sources, out: W) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(out);
        let diag = Diagnostics::new(Self::NAME);
        let (mut report, rejected) = if self.merge {
            merge(sources, &diag)?
        } else {
            // Provider output is normalized here first, as `normalize | summarize` would;
            // `--strict` reads only canonical events, as before.
            let summary = Summary { s: Summarizer::new(), rejected: false, diag: &diag };
            let mut reader = Reader::new(summary, self.strict.strict, sources, &diag);
            each_line(sources, DEFAULT_MAX_LINE, &mut reader)?;
            reader.finish()?;
            let Summary { s, rejected, .. } = reader.into_filter();
            (s.finish(), rejected)
        };
        report.scrub(&mut Scrubber::new());
        let doc = match self.format {
            Format::Json => report.to_json(),
            Format::Text => to_text(&report, self.color.enabled()),
            Format::Markdown => to_markdown(&report),
        };
        out.line_buf().extend_from_slice(doc.as_bytes());
        out.flush()?;
        if !self.check {
            return diag.outcome(rejected);
        }
        // A file that could not be read, here or by the normalize that wrote the input, leaves
        // the verdicts short of some runs: a broken measurement (3), unless a run failed (1).
        let rejected = rejected || diag.unreadable_count() > 0 || report.input().unreadable > 0;
        gate(&report, rejected, &diag);
        Ok(match report.verdict() {
            Verdict::Failed => Outcome::Rejected,
            Verdict::Success if !rejected => Outcome::Success,
            _ => Outcome::Unsettled,
        })
    }
}

/// The summarizer and what it needs for each line.
struct Summary<'a> {
    s: Summarizer,
    /// Some input line was not a canonical event.
    rejected: bool,
    diag: &'a Diagnostics,
}

impl Canonical for Summary<'_> {
    fn line(&mut self, n: u64, line: Line<'_>) -> anyhow::Result<()> {
        let (error, seen) = match &line {
            Line::Text(t) if is_blank(t) => return Ok(()),
            Line::Text(t) => match self.s.line(t) {
                Ok(()) => return Ok(()),
                Err(e) => (e, t.as_bytes().to_vec()),
            },
            Line::Oversized { bytes, sample } => {
                (format!("{bytes} bytes is over the line limit"), format!("{bytes} bytes: {sample}").into_bytes())
            }
        };
        self.rejected = true;
        self.s.invalid(&seen);
        self.diag.say(&format!("{}: not a canonical event: {error}", self.diag.line(n)));
        Ok(())
    }

    // The line, not the event: a run's key is the digest of its lines, and the fast reading
    // keeps nothing of most of them.
    fn normalized(&mut self, _event: Event, line: &str) -> anyhow::Result<()> {
        self.s.line(line).map_err(|e| anyhow::anyhow!("normalize wrote a line that is not an event: {e}"))
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn unreadable(&mut self, u: Unreadable, counted: bool) {
        if !counted {
            self.s.unreadable(&u.to_string());
        }
        self.diag.unreadable(u);
    }
}

/// `--check`'s lines on stderr: one per run that is not a success, in the error grammar.
fn gate(report: &Report, rejected: bool, diag: &Diagnostics) {
    if report.sessions.is_empty() {
        diag.say("no run: no canonical events were read; pipe normalize's output into summarize");
    }
    for s in report.sessions.iter().filter(|s| s.verdict != Verdict::Success) {
        diag.say(&verdict_line(s));
    }
    if rejected {
        diag.say("some input could not be read (see above), so these verdicts may not cover every run");
    }
}

/// `run <session> (<agent>) failed: <what happened> [while <during>]; why: <message>; next: <action>`.
fn verdict_line(s: &SessionReport) -> String {
    let agent = s.provider.as_deref().map_or_else(String::new, |p| format!(" ({})", one_line(p)));
    let mut line = format!("run {}{agent} {}", one_line(&s.session_id), s.verdict.as_str());
    if let Some(e) = &s.error {
        line.push_str(&format!(": {} ({})", what_happened(&e.category), e.category.as_str()));
        if let Some(d) = &s.during {
            line.push_str(&format!(" while {}", one_line(d)));
        }
        line.push_str(&format!("; why: {}", one_line(&e.message)));
        if let Some(a) = &e.action {
            line.push_str(&format!("; next: {}", one_line(a)));
        }
    }
    line
}

/// Text on one line, control bytes removed.
fn one_line(s: &str) -> String {
    crate::vocabulary::style::clean(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads and merges every document of every source, in order.
fn merge(sources: &Sources, diag: &Diagnostics) -> anyhow::Result<(Report, bool)> {
    let mut total = Merger::new();
    let mut rejected = false;
    for source in sources.iter()? {
        let source = source?;
        if crate::io::stop_requested().is_some() {
            break;
        }
        let mut n = 0;
        let read = source.open().and_then(|input| {
            Report::read_documents(input, |doc| {
                n += 1;
                match doc {
                    Ok(r) => total.add(r),
                    Err(e) => {
                        rejected = true;
                        let what = format!("{}: document {n}: {e}", source.name());
                        total.count_invalid(&what);
                        diag.say(&what);
                    }
                }
            })
        });
        if let Err(error) = read {
            let u = Unreadable { name: source.name(), error, part_way: n > 0 };
            total.count_unreadable(&u.to_string());
            diag.unreadable(u);
        }
    }
    Ok((total.finish(), rejected))
}
