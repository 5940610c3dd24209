//! The strings of an event that carry content ([`TextField`], [`Event::for_each_text_mut`])
//! and its tool output, found in place in its line ([`Event::cut_tool_output`]) or read.

use serde_json::Value;

use super::catalog::{ErrorInfo, ShellResult};
use super::{skim, Body, Event};

/// An event line with its tool output cut: see [`Event::cut_tool_output`].
#[derive(Debug)]
pub struct CutLine<'a> {
    /// The line, every tool output string in it emptied.
    pub rest: String,
    /// The strings cut, in the order they were in.
    pub cut: Vec<CutOutput<'a>>,
}

/// A tool output string cut from an event line.
#[derive(Debug, Clone, Copy)]
pub struct CutOutput<'a> {
    /// Where it was.
    pub field: OutputField,
    /// The string as written, quotes and escapes included: its escapes are short ones (no
    /// `\u`), and it has no raw control byte.
    pub literal: &'a str,
    /// Its UTF-8 length once unescaped.
    pub len: usize,
}

/// Where a tool output string is in its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputField {
    /// `payload.delta` of a `tool.output`.
    Delta,
    /// `payload.output.stdout` of a tool terminal.
    Stdout,
    /// `payload.output.stderr` of a tool terminal.
    Stderr,
}

impl Event {
    /// Reads one event from a line of JSON, as [`Deserialize`](serde::Deserialize) does; without `tool_output`,
    /// its tool output (`tool.output` deltas, a call's stdout and stderr) is left empty.
    pub fn from_json(line: &str, tool_output: bool) -> serde_json::Result<Event> {
        let mut event: Event = serde_json::from_str(line)?;
        if !tool_output {
            event.clear_tool_output();
        }
        Ok(event)
    }

    /// Empties the event's tool output (`tool.output` deltas, a call's stdout and stderr), for
    /// a reader that does not keep it.
    pub fn clear_tool_output(&mut self) {
        self.for_each_text_mut(|field, s| {
            if field == TextField::ToolOutput {
                s.clear();
            }
        });
    }

    /// The event line `line` with the insides of its tool output strings cut, for a reader
    /// that does not keep them: they are most of a run's bytes, and need not be parsed.
    /// `None` when it has none or a walk cannot show the cut safe. The cut line holds the
    /// same tokens, and its cut strings were ones serde_json accepts without judging (no `\u`
    /// escape, no raw control byte), so it parses as the whole line would, tool output aside.
    pub fn cut_tool_output(line: &str) -> Option<CutLine<'_>> {
        let pieces = skim::tool_output(line.as_bytes())?;
        let mut rest = String::with_capacity(line.len() - pieces.iter().map(|p| p.inside.len()).sum::<usize>());
        let mut from = 0;
        for p in &pieces {
            rest.push_str(&line[from..p.inside.start]);
            from = p.inside.end;
        }
        rest.push_str(&line[from..]);
        let cut = pieces.into_iter().map(|p| CutOutput {
            field: p.field,
            literal: &line[p.inside.start - 1..p.inside.end + 1],
            len: p.len,
        });
        Some(CutLine { rest, cut: cut.collect() })
    }

    /// The tool output string at `field`, when the event has one there.
    pub fn tool_output(&self, field: OutputField) -> Option<&str> {
        match (&self.body, field) {
            (Body::ToolOutput(p), OutputField::Delta) => Some(&p.delta),
            (Body::ToolEnded(t), OutputField::Stdout) => t.output.as_ref()?.stdout.as_deref(),
            (Body::ToolEnded(t), OutputField::Stderr) => t.output.as_ref()?.stderr.as_deref(),
            _ => None,
        }
    }

    /// Calls `f` on every string value of the event that carries content (payload strings and
    /// free text), so stages such as scrub and truncate see each once. Ids, enums and the
    /// envelope's own fields are left alone: they are generated here or are fixed vocabulary.
    pub fn for_each_text_mut(&mut self, mut f: impl FnMut(TextField, &mut String)) {
        self.body.for_each_text_mut(&mut f);
    }

    /// Marks the event's tool output as truncated, when it has one.
    pub fn mark_truncated(&mut self) {
        if let Body::ToolEnded(t) = &mut self.body {
            t.output.get_or_insert_with(ShellResult::default).truncated = true;
        }
    }
}

/// The role a string plays, so stages can treat tool output differently from other text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextField {
    /// Tool output (`stdout`, `stderr`, `tool.output` deltas): kept newest-first when bounded.
    ToolOutput,
    /// Tool input: command and arguments.
    Input,
    /// Assistant and user text.
    Text,
    /// A raw input line.
    Raw,
    /// Anything else: paths, messages, unknown payloads.
    Other,
}

/// The strings of a payload that carry content, each with the role it plays: the catalog's
/// answer to "what does this type hold that is text", which scrub and truncate rely on to see
/// every such string once. Every payload type of the catalog implements it.
pub(super) trait Texts {
    /// Calls `f` on each such string.
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String));
}

pub(super) fn opt(f: &mut dyn FnMut(TextField, &mut String), field: TextField, s: &mut Option<String>) {
    if let Some(s) = s {
        f(field, s);
    }
}

pub(super) fn error_strings(f: &mut dyn FnMut(TextField, &mut String), e: &mut Option<ErrorInfo>) {
    if let Some(e) = e {
        f(TextField::Other, &mut e.message);
        opt(f, TextField::Other, &mut e.action);
    }
}

/// Calls `f` on every string inside a JSON value (keys are kept as they are).
pub fn value_strings(v: &mut Value, field: TextField, f: &mut dyn FnMut(TextField, &mut String)) {
    match v {
        Value::String(s) => f(field, s),
        Value::Array(a) => a.iter_mut().for_each(|v| value_strings(v, field, f)),
        Value::Object(m) => m.values_mut().for_each(|v| value_strings(v, field, f)),
        _ => {}
    }
}
