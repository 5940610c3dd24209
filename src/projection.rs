//! Projections: canonical events in, one rendering out, for people (`normal`, `verbose`,
//! `debug`) or machines (`jsonl`, `acp`, `sse`, `stream-json`). A projection is pushed one
//! event at a time, like ripgrep's `Sink`, and writes as it goes, so output stays live.
//!
//! Projections know only the canonical [`crate::event`] model: nothing about providers.
//!
//! ```
//! use minicode_output::event::Event;
//! use minicode_output::projection::{Mode, Options};
//!
//! let line = r#"{"schema":"minicode.output.v1","eventId":"s1:1:1","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","turnId":1,"source":"agent","severity":"info","visibility":["normal","verbose","debug","machine"],"rawRef":{"line":1},"payload":{"delta":"Hello.","role":"assistant"}}"#;
//! let event: Event = serde_json::from_str(line).unwrap();
//! let mut out = Vec::new();
//! let mut p = Mode::Normal.projection(Options::default());
//! p.begin(&mut out).unwrap();
//! p.event(&event, &mut out).unwrap();
//! p.finish(&mut out).unwrap();
//! assert_eq!(String::from_utf8(out).unwrap(), "Hello.\n");
//! ```

mod acp;
mod ag_ui;
mod atif;
mod calls;
pub(crate) mod human;
mod jsonl;
mod otlp;
mod sse;
mod stream_json;

use std::fmt;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::str::FromStr;

pub use self::ag_ui::AgUiFormat;
pub use self::atif::ATIF_VERSION;
pub use self::otlp::{SCHEMA_URL as OTLP_SCHEMA_URL, SEMCONV as OTLP_SEMCONV};
use crate::engine::clock::parse_rfc3339;
use crate::event::{Event, ShellResult, Usage};

/// What a projection's hooks return: go on, or stop reading input (a named early stop).
pub type Flow = io::Result<ControlFlow<()>>;

/// A rendering of canonical events, pushed one event at a time.
///
/// `begin` is called once before the first event, `event` once per event in input order,
/// and `finish` once at the end of input (also when there were no events). Each writes
/// whole output as soon as it can; nothing waits for the end of input unless it must.
pub trait Projection {
    /// Called once, before any event.
    fn begin(&mut self, _out: &mut dyn Write) -> Flow {
        Ok(ControlFlow::Continue(()))
    }

    /// Renders one event.
    fn event(&mut self, event: &Event, out: &mut dyn Write) -> Flow;

    /// Renders one event read from `line`, its canonical JSON. A projection that passes
    /// events on unchanged writes the line itself, so fields this version does not know
    /// (a newer producer's) are not lost.
    fn event_line(&mut self, event: &Event, _line: &str, out: &mut dyn Write) -> Flow {
        self.event(event, out)
    }

    /// Called once at the end of input, to close what is still open.
    fn finish(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    /// Problems the projection found in its input or options (for stderr), taken once.
    fn take_problems(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// False when no event's tool output (`tool.output` deltas, a call's stdout and stderr)
    /// can reach the output: the caller may then leave it out of the events it reads
    /// instead of copying and scrubbing it, and most of a run's bytes are tool output.
    fn shows_tool_output(&self) -> bool {
        true
    }
}

/// The projections `project --mode` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// What happened, whether action is needed, and the result.
    #[default]
    Normal,
    /// Adds tool names, durations, command detail, output excerpts and reasoning.
    Verbose,
    /// Adds ids, timestamps and the redacted payload of every event.
    Debug,
    /// Canonical events unchanged, one per line.
    Jsonl,
    /// ACP JSON-RPC 2.0 `session/update` notifications.
    Acp,
    /// agent-output/v1 server-sent-event frames.
    Sse,
    /// Claude-Code-shaped batch JSONL.
    StreamJson,
    /// OpenTelemetry traces as OTLP/JSON, one export request per line.
    Otlp,
    /// One ATIF trajectory document per session.
    Atif,
    /// AG-UI events, as SSE frames or JSON lines.
    AgUi,
}

impl Mode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [Mode; 10] = [
        Mode::Normal,
        Mode::Verbose,
        Mode::Debug,
        Mode::Jsonl,
        Mode::Acp,
        Mode::Sse,
        Mode::StreamJson,
        Mode::Otlp,
        Mode::Atif,
        Mode::AgUi,
    ];

    /// The name `--mode` takes.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Verbose => "verbose",
            Mode::Debug => "debug",
            Mode::Jsonl => "jsonl",
            Mode::Acp => "acp",
            Mode::Sse => "sse",
            Mode::StreamJson => "stream-json",
            Mode::Otlp => "otlp",
            Mode::Atif => "atif",
            Mode::AgUi => "ag-ui",
        }
    }

    /// True for the modes written for people (the only ones that may use colour).
    pub fn is_human(self) -> bool {
        matches!(self, Mode::Normal | Mode::Verbose | Mode::Debug)
    }

    /// The projection for this mode.
    pub fn projection(self, options: Options) -> Box<dyn Projection> {
        match self {
            Mode::Normal => Box::new(human::Human::new(human::Level::Normal, options.color)),
            Mode::Verbose => Box::new(human::Human::new(human::Level::Verbose, options.color)),
            Mode::Debug => Box::new(human::Human::new(human::Level::Debug, options.color)),
            Mode::Jsonl => Box::new(jsonl::Jsonl),
            Mode::Acp => Box::new(acp::Acp::default()),
            Mode::Sse => Box::new(sse::Sse::new(options.after)),
            Mode::StreamJson => Box::new(stream_json::StreamJson::default()),
            Mode::Otlp => Box::new(otlp::Otlp::new(options.with_content)),
            Mode::Atif => Box::new(atif::Atif::default()),
            Mode::AgUi => Box::new(ag_ui::AgUi::new(options.ag_ui_format)),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown `--mode` name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown projection {0:?} (expected one of normal, verbose, debug, jsonl, acp, sse, stream-json, otlp, atif, ag-ui)"
)]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

/// Choices that shape a projection beyond its mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Colour human output with ANSI styles (never used by machine modes).
    pub color: bool,
    /// `sse`: resume after this frame id (`{session}-{seq}`), as `Last-Event-ID` does.
    pub after: Option<String>,
    /// `otlp`: add prompt, assistant text and tool input and output as span attributes.
    pub with_content: bool,
    /// `ag-ui`: SSE frames or JSON lines.
    pub ag_ui_format: AgUiFormat,
}

/// An event's own time in milliseconds since the epoch, when its timestamp parses.
fn event_millis(e: &Event) -> Option<i64> {
    parse_rfc3339(&e.timestamp)
}

/// All input tokens, the cached ones included (the OpenTelemetry, ATIF and AG-UI meaning),
/// from the canonical split (docs/contract.md §3); unknown when the uncached count is.
fn prompt_tokens(u: &Usage) -> Option<u64> {
    let cached = u.cache_read.unwrap_or(0).saturating_add(u.cache_write.unwrap_or(0));
    u.input_tokens.map(|i| i.saturating_add(cached))
}

/// A tool's output as one text: stdout, then stderr on a line of its own.
fn output_text(o: &ShellResult) -> String {
    let mut text = o.stdout.clone().unwrap_or_default();
    if let Some(err) = o.stderr.as_deref().filter(|e| !e.is_empty()) {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(err);
    }
    text
}

/// Runs a projection over events already in memory and returns what it wrote: handy for
/// tests and for callers that do not stream.
pub fn render<'a>(mode: Mode, options: Options, events: impl IntoIterator<Item = &'a Event>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut p = mode.projection(options);
    // Writing to a Vec cannot fail.
    let _ = (|| -> io::Result<()> {
        if p.begin(&mut out)?.is_break() {
            return p.finish(&mut out);
        }
        for e in events {
            if p.event(e, &mut out)?.is_break() {
                break;
            }
        }
        p.finish(&mut out)
    })();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names_round_trip() {
        for m in Mode::ALL {
            assert_eq!(m.name().parse::<Mode>(), Ok(m));
            assert_eq!(m.to_string(), m.name());
        }
        assert!("html".parse::<Mode>().is_err());
    }

    #[test]
    fn only_human_modes_are_human() {
        let human: Vec<_> = Mode::ALL.into_iter().filter(|m| m.is_human()).collect();
        assert_eq!(human, [Mode::Normal, Mode::Verbose, Mode::Debug]);
    }
}
