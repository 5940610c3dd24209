//! `truncate`: every text field of canonical JSONL bounded, UTF-8-safe, or with `--text`
//! a whole text stream bounded.

use std::io::Write;

use clap::{Parser, ValueEnum};

use super::{Command, CommonArgs, Diagnostics, Outcome};
use crate::bound::{bound, Keep};
use crate::engine::DEFAULT_FIELD_BOUND;
use crate::event::{Event, TextField};
use crate::io::{is_blank, read_lines, without_bom, LineWriter, Sources};
use crate::scrub::json::{classify, rewrite_values, LineKind};
use crate::scrub::vouch::Vouched;
use crate::scrub::Scrubber;
use crate::truncate::{bound_text, FieldSet, TextTruncator, Truncator};

/// Bound the text fields of canonical minicode.output.v1 JSONL.
///
/// Each selected text field longer than --max-bytes is cut on a UTF-8 character boundary,
/// never grown, never inside a redaction marker. Tool output keeps its newest bytes (the end
/// of a log is what matters), from the start of a line when one starts near the cut, and
/// its event gets `truncated: true`; other text keeps 70 % head and 30 % tail around a
/// marker `[… N bytes truncated …]`. Events keep their order and count; truncating twice
/// gives the same output as truncating once. Lines that are not events are bounded string
/// by string (or, when not JSON, as one text) and passed through. In a session `normalize`
/// stamped as scrubbed (`scrubbedBy`, which `project` takes at its word), what a cut leaves
/// is scrubbed again, so that the stamp stays true: a cut can make a secret of the start of
/// a longer run.
#[derive(Debug, Parser)]
#[command(name = "truncate", version, after_help = AFTER_HELP)]
pub struct Args {
    /// The most bytes a field keeps (with --text: the whole output).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FIELD_BOUND)]
    pub max_bytes: usize,
    /// How a cut field keeps its bytes [default: tail for tool output, head-tail for the
    /// rest; tail with --text].
    #[arg(long, value_name = "HOW")]
    pub keep: Option<KeepArg>,
    /// Which fields to bound, comma-separated [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub fields: Vec<FieldArg>,
    /// Treat the input as plain text and bound all of it.
    #[arg(long)]
    pub text: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub line_limit: super::LineLimit,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

/// `--keep`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeepArg {
    /// The newest bytes.
    Tail,
    /// The oldest bytes.
    Head,
    /// 70 % head, 30 % tail, and a marker stating the bytes cut.
    HeadTail,
}

impl From<KeepArg> for Keep {
    fn from(k: KeepArg) -> Keep {
        match k {
            KeepArg::Tail => Keep::Tail,
            KeepArg::Head => Keep::Head,
            KeepArg::HeadTail => Keep::HeadTail,
        }
    }
}

/// `--fields`: the roles of text fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FieldArg {
    /// Tool output: `stdout`/`stderr` of tool terminals, `delta` of `tool.output`.
    Output,
    /// Tool input: `command` and `input` of `tool.started`.
    Input,
    /// Text: `delta` of `text`/`reasoning`, prompts, plan entries, warning messages.
    Text,
    /// The `line` of `raw` events.
    Raw,
    /// Everything else: paths, titles, error messages, unknown payloads.
    Other,
}

impl From<FieldArg> for TextField {
    fn from(f: FieldArg) -> TextField {
        match f {
            FieldArg::Output => TextField::ToolOutput,
            FieldArg::Input => TextField::Input,
            FieldArg::Text => TextField::Text,
            FieldArg::Raw => TextField::Raw,
            FieldArg::Other => TextField::Other,
        }
    }
}

const AFTER_HELP: &str = concat!(
    "\
Examples:
  normalize run.jsonl | truncate --max-bytes 16384 --keep head-tail | project
  truncate --fields output,raw --max-bytes 4096 run.events.jsonl
  cargo build 2>&1 | truncate --text --max-bytes 16384 --keep head-tail

Exit status:
  0  every line was bounded
  1  some lines were not canonical events or were over --max-line-bytes (they were still
     bounded and written; see stderr)
",
    exit_usage_error!(),
    "\n",
    exit_stopped!()
);

impl Command for Args {
    const NAME: &'static str = "truncate";

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run_on<W: Write>(self, sources: &Sources, out: W) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(out);
        if self.text {
            let keep = self.keep.map_or(Keep::Tail, Keep::from);
            return text(sources, TextTruncator::new(self.max_bytes, keep), &mut out);
        }
        let fields = if self.fields.is_empty() {
            FieldSet::ALL
        } else {
            self.fields.iter().fold(FieldSet::NONE, |s, f| s.with((*f).into()))
        };
        let truncator = Truncator::new(self.max_bytes, self.keep.map(Keep::from)).with_fields(fields);
        let diag = Diagnostics::new(Self::NAME);
        let mut rejected = false;
        let mut stamped = Stamped { vouched: Vouched::default(), scrubber: Scrubber::new() };
        read_lines(sources, self.line_limit.max_line_bytes, &mut out, &diag, |n, line, out| {
            let (line, oversized) = line.into_text();
            if let Some(bytes) = oversized {
                rejected = true;
                diag.say(&super::scrub::oversized_message(&diag.line(n), bytes, line.len()));
            }
            let start = out.line_buf().len();
            if let Err(why) = jsonl_line(&truncator, &mut stamped, &line, out.line_buf()) {
                rejected = true;
                diag.say(&format!("{}: {why}; bounded and kept", diag.line(n)));
            }
            // The next reader would take a U+FEFF that starts a line for a byte order mark
            // (one can come from a cut).
            let buf = out.line_buf();
            let marks = buf.len() - start - without_bom(&buf[start..]).len();
            buf.drain(start..start + marks);
            Ok(out.end_line()?)
        })?;
        out.flush()?;
        std::io::stderr().flush().ok();
        diag.outcome(rejected)
    }
}

/// The sessions stamped as scrubbed, and the scrubbing that keeps them so.
struct Stamped {
    vouched: Vouched,
    scrubber: Scrubber,
}

/// Bounds one JSONL line into `buf`; `Err` says why the line is not an event.
fn jsonl_line(t: &Truncator, stamped: &mut Stamped, line: &str, buf: &mut Vec<u8>) -> Result<(), String> {
    let vouched = stamped.vouched.line(line, |line| serde_json::from_str::<Event>(line).ok());
    if is_blank(line) {
        // A blank line holds nothing worth a marker: a long one is only cut to the bound.
        buf.extend_from_slice(&line.as_bytes()[..line.len().min(t.max())]);
        return Ok(());
    }
    let kind = classify(line);
    // A decoded string is never longer than its JSON spelling, so a short line has nothing
    // to cut and is passed through byte for byte.
    let short = line.len() <= t.max();
    match kind {
        LineKind::Event { .. } if short => buf.extend_from_slice(line.as_bytes()),
        LineKind::Event { .. } => match serde_json::from_str::<Event>(line) {
            Ok(mut ev) => {
                let scrubbed = vouched.is_some_and(|v| v.covers(&ev, line));
                let cut = match scrubbed {
                    true => t.truncate_scrubbed(&mut ev, &mut stamped.scrubber),
                    false => t.truncate_event(&mut ev),
                };
                if cut {
                    serde_json::to_writer(&mut *buf, &ev).map_err(|e| e.to_string())?;
                } else {
                    buf.extend_from_slice(line.as_bytes());
                }
            }
            Err(e) => {
                bound_values(t, line, buf);
                return Err(format!("not a valid event ({e})"));
            }
        },
        LineKind::Json => bound_values(t, line, buf),
        LineKind::Text => {
            let mut s = line.to_owned();
            if bound(&mut s, t.max(), t.keep_for(TextField::Raw)) && s.contains('\n') {
                // The marker's newlines would split the line; spaces keep it one line and
                // the same length.
                s = s.replace('\n', " ");
            }
            // A cut may end on a `\r`, which the next reader takes for part of the line ending.
            buf.extend_from_slice(s.trim_end_matches('\r').as_bytes());
        }
    }
    match kind {
        LineKind::Event { .. } => Ok(()),
        LineKind::Json => Err(format!("JSON but not a {} event", crate::event::SCHEMA)),
        LineKind::Text => Err("not JSON".into()),
    }
}

/// Bounds every string value of a JSON line that is not an event, as `other` text.
fn bound_values(t: &Truncator, line: &str, buf: &mut Vec<u8>) {
    rewrite_values(line, buf, |s| {
        let mut s = s.to_owned();
        t.truncate_str(TextField::Other, &mut s).then_some(s)
    });
}

/// `--text`: the whole input bounded as one text ([`bound_text`]), written at the end.
fn text<W: Write>(sources: &Sources, t: TextTruncator, out: &mut LineWriter<W>) -> anyhow::Result<Outcome> {
    let diag = Diagnostics::new(Args::NAME);
    let (kept, _) = bound_text(sources, t, |u| diag.unreadable(u))?;
    out.line_buf().extend_from_slice(kept.as_bytes());
    out.flush()?;
    diag.outcome(false)
}
