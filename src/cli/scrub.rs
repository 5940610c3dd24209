//! `scrub`: secrets and terminal control bytes out of canonical JSONL (every string value,
//! keys kept) or, with `--text`, out of any text.

use std::collections::BTreeMap;
use std::io::Write;

use clap::Parser;

use super::{Command, CommonArgs, Diagnostics, Outcome};
use crate::event::{Body, Event};
use crate::io::{is_blank, read_lines, LineWriter, Sources};
use crate::scrub::json::{classify, LineKind};
use crate::scrub::rules::RULES;
use crate::scrub::text::TextScrubber;
use crate::scrub::Scrubber;

/// Redact secrets and remove terminal control bytes from canonical minicode.output.v1 JSONL.
///
/// Every string value is scrubbed (keys are kept): known token formats become typed markers
/// such as `[REDACTED:github-token]`, ANSI/OSC sequences and control characters other than
/// newline and tab are removed, a `\r` progress line keeps its final state. Lines that are
/// not events are scrubbed as text and passed through; nothing is dropped or reordered, and
/// scrubbing twice gives the same output as scrubbing once. A `summary` record's
/// `input.redactions` is raised by what this run redacted before it.
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
        let mut text = TextScrubber::new();
        read_lines(
            sources,
            self.line_limit.max_line_bytes,
            &mut out,
            |u| diag.unreadable(u),
            |n, line, out| {
                let (line, oversized) = line.into_text();
                if let Some(bytes) = oversized {
                    run.reject(&oversized_message(n, bytes, line.len()));
                }
                if self.text {
                    text.line(&mut run.scrubber, &line, |s| out.write_line(s))?;
                } else {
                    run.jsonl_line(n, &line, out.line_buf())?;
                    out.end_line()?;
                }
                Ok(())
            },
        )?;
        text.finish(&mut run.scrubber, |s| out.write_line(s))?;
        out.flush()?;
        if self.stats {
            print_stats(run.scrubber.counts());
        }
        std::io::stderr().flush().ok();
        diag.outcome(run.rejected)
    }
}

/// The message for a line over `--max-line-bytes` (shared with `truncate`).
pub(super) fn oversized_message(n: u64, bytes: u64, kept: usize) -> String {
    format!("line {n}: {bytes} bytes is over --max-line-bytes; only its first {kept} bytes are kept")
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
                    self.reject(&format!("line {n}: not JSON until its control bytes were removed; scrubbed and kept"));
                    return self.jsonl_line(n, &text, buf);
                }
                buf.extend_from_slice(text.as_bytes());
            }
        }
        match kind {
            LineKind::Event { summary: true } => {
                if let Err(e) = self.update_summary(buf) {
                    self.reject(&format!("line {n}: a summary that is not a valid event ({e}); scrubbed and kept"));
                }
            }
            LineKind::Event { summary: false } => {}
            LineKind::Json => {
                self.reject(&format!("line {n}: JSON but not a {} event; scrubbed and kept", crate::event::SCHEMA))
            }
            LineKind::Text => self.reject(&format!("line {n}: not JSON; scrubbed as text and kept")),
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

/// The kind of a line as `normalize` writes events (`{"schema":"minicode.output.v1","eventId":…,
/// "type":…`), told without parsing it; `None` for any other spelling. Only used for lines
/// passed through unchanged, so a full parse is spent only where strings are rewritten.
fn canonical_kind(line: &str) -> Option<LineKind> {
    let rest = line.strip_prefix("{\"schema\":\"minicode.output.v1\",\"eventId\":\"")?;
    if !line.ends_with('}') {
        return None;
    }
    let after_id = &rest[memchr::memchr(b'"', rest.as_bytes())? + 1..];
    let type_name = after_id.strip_prefix(",\"type\":\"")?;
    Some(LineKind::Event { summary: type_name.starts_with("summary\"") })
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
