//! `scrub`: secrets and terminal control bytes out of canonical JSONL (every string value,
//! keys kept) or, with `--text`, out of any text.

use std::collections::BTreeMap;
use std::io::Write;

use clap::Parser;

use super::{Command, CommonArgs, Diagnostics, Outcome};
use crate::engine::clock::Clock;
use crate::event::{Body, Event};
use crate::io::{each_line, is_blank, read_lines, Line, LineSink, LineWriter, Source, Sources, Unreadable};
use crate::scrub::json::{canonical_type, classify, event_owner, event_type, LineKind};
use crate::scrub::rules::RULES;
use crate::scrub::stream::{Delta, Ends, Holder, Pauses, StreamKey};
use crate::scrub::text::TextScrubber;
use crate::scrub::Scrubber;

/// Redact secrets and remove terminal control bytes from canonical minicode.output.v1 JSONL.
///
/// Every string is scrubbed, object keys and ids included: known token formats become typed
/// markers such as `[REDACTED:github-token]`, ANSI/OSC sequences and control characters other
/// than newline and tab are removed, a `\r` progress line keeps its final state. A redacted
/// id or key ends in `#` and a digest of the one it was, so it still names one thing. Lines that are
/// not events are scrubbed as text and passed through; nothing is dropped or reordered, and
/// scrubbing twice gives the same output as scrubbing once. A secret split over the deltas
/// of one stream (a message's text or thinking, a tool's output) is redacted whole: the
/// unfinished tail of a delta waits for the stream's next delta, its block's end (another
/// event of its session) or a pause of the input (not a pause when SOURCE_DATE_EPOCH is
/// set, for reproducible output). A `summary` record's `input.redactions` is raised by what
/// this run redacted before it.
#[derive(Debug, Parser)]
#[command(name = "scrub", version, after_help = AFTER_HELP)]
pub struct Args {
    /// Treat the input as plain text, not JSONL (a PEM key over many lines goes whole).
    #[arg(long)]
    pub text: bool,
    /// Print what was redacted, by kind, on stderr at the end.
    #[arg(long)]
    pub stats: bool,
    /// Print the rule table (rule, kind, format, source) as Markdown and exit.
    #[arg(long)]
    pub list_rules: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub line_limit: super::LineLimit,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

const AFTER_HELP: &str = concat!(
    "\
Examples:
  codex exec --json 'fix it' | normalize --max-bytes 1000000 | scrub | truncate
  scrub --stats run.events.jsonl > run.clean.jsonl
  make test 2>&1 | scrub --text
  scrub --list-rules

Exit status:
  0  every line was scrubbed
  1  some lines were not canonical events or were over --max-line-bytes (they were still
     scrubbed and written; see stderr)
",
    exit_usage_error!(),
    "\n",
    exit_stopped!()
);

impl Command for Args {
    const NAME: &'static str = "scrub";

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run_on<W: Write>(self, sources: &Sources, out: W) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(out);
        if self.list_rules {
            out.write_line(&rule_table())?;
            out.flush()?;
            return Ok(Outcome::Success);
        }
        let diag = Diagnostics::new(Self::NAME);
        let mut run = Run { scrubber: Scrubber::new(), diag: &diag, rejected: false, at_summary: BTreeMap::new() };
        if self.text {
            let mut text = TextScrubber::new();
            read_lines(sources, self.line_limit.max_line_bytes, &mut out, &diag, |n, line, out| {
                let (line, oversized) = line.into_text();
                if let Some(bytes) = oversized {
                    run.reject(&oversized_message(&run.diag.line(n), bytes, line.len()));
                }
                Ok(text.line(&mut run.scrubber, &line, |s| out.write_line(s))?)
            })?;
            text.finish(&mut run.scrubber, |s| out.write_line(s))?;
        } else {
            let pauses = Pauses::for_clock(Clock::from_env());
            let names_files = sources.names_files();
            let mut sink =
                Jsonl { run, out: &mut out, n: 0, names_files, streams: Holder::new(pauses), ready: Vec::new() };
            each_line(sources, self.line_limit.max_line_bytes, &mut sink)?;
            sink.streams.decide_all(&mut sink.ready, |tail, seal| sink.run.scrubber.seal(tail, seal));
            sink.write_ready()?;
            run = sink.run;
        }
        out.flush()?;
        if self.stats {
            print_stats(run.scrubber.counts());
        }
        std::io::stderr().flush().ok();
        diag.outcome(run.rejected)
    }
}

/// The message for a line over `--max-line-bytes` (shared with `truncate`).
pub(super) fn oversized_message(line: &str, bytes: u64, kept: usize) -> String {
    format!("{line}: {bytes} bytes is over --max-line-bytes; only its first {kept} bytes are kept")
}

/// A line waiting behind the held tail of a stream (see [`Holder`]): a delta event is read,
/// so that text can move between it and the stream's next delta.
struct Waiting {
    n: u64,
    line: String,
    delta: Option<Event>,
    /// The blocks the line ends when it is an event and no delta.
    ends: Ends<'static>,
    /// The holder moved text in or out of `delta`: the line is written anew from it.
    moved: bool,
}

impl Waiting {
    fn new(n: u64, line: String) -> Waiting {
        // A line that is JSON only once its control bytes are gone is read as the next pass
        // will read it, so that scrubbing twice gives what scrubbing once gives.
        let cleaned = crate::scrub::control::clean(&line);
        let type_name = event_type(&cleaned);
        let delta = matches!(type_name.as_deref(), Some("text" | "reasoning" | "tool.output"))
            .then(|| Event::from_json(&cleaned, true).ok())
            .flatten();
        // As `normalize` ends blocks at the events it writes (`Delta for Event`).
        let ends = match type_name {
            Some(_) if delta.is_none() => {
                event_owner(&cleaned).map_or(Ends::Nothing, |o| Ends::of(&o.type_name, &o.session_id).into_owned())
            }
            _ => Ends::Nothing,
        };
        Waiting { n, line, delta, ends, moved: false }
    }
}

impl Delta for Waiting {
    fn stream(&self) -> Option<StreamKey> {
        self.delta.as_ref()?.stream()
    }

    fn ends_blocks(&self) -> Ends<'_> {
        self.ends.borrowed()
    }

    fn delta_mut(&mut self) -> &mut String {
        self.delta.as_mut().expect("only a delta has a stream").delta_mut()
    }

    fn touched(&mut self) {
        self.moved = true;
    }

    fn weight(&mut self) -> usize {
        self.line.len() + self.delta.as_mut().map_or(0, Delta::weight)
    }
}

/// Canonical JSONL through the holder of delta streams, then scrubbed line by line.
struct Jsonl<'a, 'd, W: Write> {
    run: Run<'d>,
    out: &'a mut LineWriter<W>,
    n: u64,
    /// The input names its files: diagnostics cite a line by its file.
    names_files: bool,
    streams: Holder<Waiting>,
    ready: Vec<Waiting>,
}

impl<W: Write> Jsonl<'_, '_, W> {
    fn write_ready(&mut self) -> anyhow::Result<()> {
        for w in std::mem::take(&mut self.ready) {
            let line = match (&w.delta, w.moved) {
                (Some(event), true) => serde_json::to_string(event)?,
                _ => w.line,
            };
            self.run.jsonl_line(w.n, &line, self.out.line_buf())?;
            self.out.end_line()?;
        }
        Ok(())
    }
}

impl<W: Write> LineSink for Jsonl<'_, '_, W> {
    fn begin(&mut self, source: &Source, flush: bool) -> anyhow::Result<bool> {
        if self.names_files {
            self.run.diag.begin_file(self.n, &source.name());
        }
        if flush {
            self.idle()?;
        }
        Ok(true)
    }

    fn line(&mut self, line: Line<'_>) -> anyhow::Result<bool> {
        self.n += 1;
        let (line, oversized) = line.into_text();
        if let Some(bytes) = oversized {
            self.run.reject(&oversized_message(&self.run.diag.line(self.n), bytes, line.len()));
        }
        // The common case, nothing held and no delta: the line is scrubbed as it is.
        let plain = canonical_type(&line).is_some_and(|t| !matches!(t, "text" | "reasoning" | "tool.output"));
        if plain && self.streams.is_empty() {
            self.run.jsonl_line(self.n, &line, self.out.line_buf())?;
            self.out.end_line()?;
        } else {
            // Canonical lines do not say where a block begins: no tail is sealed as ended.
            let scrubber = &mut self.run.scrubber;
            self.streams.push_sealing(Waiting::new(self.n, line.into_owned()), &mut self.ready, |tail, seal| {
                scrubber.seal(tail, seal)
            });
            self.write_ready()?;
        }
        Ok(true)
    }

    fn idle(&mut self) -> anyhow::Result<bool> {
        self.streams.pause(&mut self.ready, |tail, seal| self.run.scrubber.seal(tail, seal));
        self.write_ready()?;
        self.out.flush()?;
        Ok(true)
    }

    fn unreadable(&mut self, u: Unreadable) {
        self.run.diag.unreadable(u);
    }
}

/// The state of one run over canonical JSONL.
struct Run<'a> {
    scrubber: Scrubber,
    diag: &'a Diagnostics,
    rejected: bool,
    /// The counts when the last summary was written, so the next one adds only what is new.
    at_summary: BTreeMap<String, u64>,
}

impl Run<'_> {
    fn reject(&mut self, msg: &str) {
        self.rejected = true;
        self.diag.say(msg);
    }

    /// Scrubs one JSONL line into `buf` (without its newline).
    fn jsonl_line(&mut self, n: u64, line: &str, buf: &mut Vec<u8>) -> anyhow::Result<()> {
        if is_blank(line) {
            buf.extend_from_slice(line.as_bytes());
            return Ok(());
        }
        // The common case: nothing in the raw line could change, so no string value can.
        let quick = !self.scrubber.may_change_json(line);
        let kind = quick.then(|| canonical_kind(line)).flatten().unwrap_or_else(|| classify(line));
        match kind {
            LineKind::Event { .. } | LineKind::Json if quick => buf.extend_from_slice(line.as_bytes()),
            LineKind::Event { .. } | LineKind::Json => {
                self.scrubber.scrub_json_values(line, buf);
            }
            LineKind::Text => {
                let text = self.scrubber.scrub_str(line);
                // A control byte may be all that kept the line from being JSON: once it is
                // gone the next reader sees JSON, so the line is scrubbed as that JSON now.
                if classify(&text) != LineKind::Text {
                    self.reject(&format!(
                        "{}: not JSON until its control bytes were removed; scrubbed and kept",
                        self.diag.line(n)
                    ));
                    return self.jsonl_line(n, &text, buf);
                }
                buf.extend_from_slice(text.as_bytes());
            }
        }
        match kind {
            LineKind::Event { summary: true } => {
                if let Err(e) = self.update_summary(buf) {
                    self.reject(&format!(
                        "{}: a summary that is not a valid event ({e}); scrubbed and kept",
                        self.diag.line(n)
                    ));
                }
            }
            LineKind::Event { summary: false } => {}
            LineKind::Json => self.reject(&format!(
                "{}: JSON but not a {} event; scrubbed and kept",
                self.diag.line(n),
                crate::event::SCHEMA
            )),
            LineKind::Text => self.reject(&format!("{}: not JSON; scrubbed as text and kept", self.diag.line(n))),
        }
        Ok(())
    }

    /// Adds what was redacted since the last summary to the summary just written to `buf`.
    /// A line that only looks like a summary is left as written; its redactions go to the
    /// next real one.
    fn update_summary(&mut self, buf: &mut Vec<u8>) -> serde_json::Result<()> {
        let counts = self.scrubber.counts();
        if *counts == self.at_summary {
            return Ok(());
        }
        let start = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut ev: Event = serde_json::from_slice(&buf[start..])?;
        if let Body::Summary(s) = &mut ev.body {
            for (kind, &now) in counts {
                let new = now - self.at_summary.get(kind).copied().unwrap_or(0);
                if new > 0 {
                    *s.figures.input.redactions.entry(kind.clone()).or_insert(0) += new;
                }
            }
            buf.truncate(start);
            serde_json::to_writer(&mut *buf, &ev)?;
        }
        self.at_summary = counts.clone();
        Ok(())
    }
}

/// The kind of a line as `normalize` writes events, told without parsing it ([`canonical_type`]);
/// `None` for any other spelling. Only used for lines passed through unchanged, so a full
/// parse is spent only where strings are rewritten.
fn canonical_kind(line: &str) -> Option<LineKind> {
    canonical_type(line).map(|t| LineKind::Event { summary: t == "summary" })
}

fn print_stats(counts: &BTreeMap<String, u64>) {
    let total: u64 = counts.values().sum();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "scrub: {total} redaction(s)");
    for (kind, n) in counts {
        let _ = writeln!(err, "  {kind:<24} {n}");
    }
}

/// The rule table as Markdown.
pub fn rule_table() -> String {
    let mut t = String::from("| rule | marker kind | format | source |\n|---|---|---|---|\n");
    for r in RULES {
        t.push_str(&format!("| {} | {} | {} | {} |\n", r.id, r.kind, r.format.replace('|', "\\|"), r.source));
    }
    t.pop();
    t
}
