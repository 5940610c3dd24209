//! The strings of an event: those that carry content ([`TextField`],
//! [`Event::for_each_text_mut`]), the ids, names and JSON object keys beside them ([`Label`],
//! [`Event::relabel`]), so that a stage such as scrub reaches every string an event writes,
//! and its tool output, found in place in its line ([`Event::cut_tool_output`]) or read.

use serde_json::{Map, Value};

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
    /// It holds nothing a reader cleaning control bytes would remove (no escape but `\n`,
    /// `\t`, `\"`, `\\`, no unsafe character): what
    /// [`json_is_clean`](crate::scrub::control::json_is_clean) says of `literal`.
    pub clean: bool,
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
            clean: p.clean,
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

    /// Offers `r` every string the event writes that is no content and no fixed vocabulary:
    /// the envelope's ids, the payload's ids and names, and the keys of the JSON objects it
    /// carries as given (tool input, unknown payloads). With [`Event::for_each_text_mut`],
    /// that is every string of the event's line but the schema's own words.
    pub fn relabel(&mut self, r: &mut dyn Relabel) {
        r.label(Label::EventId, &mut self.event_id);
        r.label(Label::Id, &mut self.session_id);
        opt_label(r, Label::Id, &mut self.correlation_id);
        opt_label(r, Label::Id, &mut self.parent_id);
        if let Some(file) = &mut self.raw_ref.file {
            // Shared by a file's events: copied out only when it is to change.
            let mut name = String::new();
            if r.wants(Label::Name, file) {
                name.push_str(file);
                r.label(Label::Name, &mut name);
                *file = name.into();
            }
        }
        self.body.relabel(r);
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

/// What a string that is no content is to the event, so a stage can keep what it means: an
/// id must stay one (two different ones stay different, the same one stays the same), a name
/// is never bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// An id: of a session, tool call, approval or correlation.
    Id,
    /// The envelope's `eventId`, `{sessionId}:{turnId}:{seq}`: an id whose first part is the
    /// session's.
    EventId,
    /// A name or word from the provider: tool names, the provider and its version, a stop
    /// reason, a warning's category, an unknown type's name, an input file's name.
    Name,
}

/// What a stage does to the strings [`Event::relabel`] offers.
pub trait Relabel {
    /// True when `s`, labelled `label`, may be changed by [`Relabel::label`]; false lets the
    /// caller skip copying it. Cheap by default: always true.
    fn wants(&mut self, label: Label, s: &str) -> bool {
        let _ = (label, s);
        true
    }
    /// Rewrites `s` in place.
    fn label(&mut self, label: Label, s: &mut String);
    /// The key `key` of a JSON object as it is to be written, when it is to change.
    fn key(&mut self, key: &str) -> Option<String>;
}

/// The strings of a payload, each with the role it plays: the catalog's answer to "what does
/// this type hold that is text" (scrub and truncate rely on it to see every such string
/// once) and "what else does it write" (ids, names, keys: scrub cleans them too). Every
/// payload type of the catalog implements it.
pub(super) trait Texts {
    /// Calls `f` on each string that carries content.
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String));
    /// Offers `r` each id, name and object key.
    fn labels(&mut self, r: &mut dyn Relabel);
}

/// The label of the string value of member `key` of a canonical event's line, `depth`
/// objects deep (1: the envelope, 2: the payload), when it is an id: what a filter that
/// rewrites the line without reading it as an [`Event`] needs to treat ids as
/// [`Event::relabel`] offers them.
pub fn id_member(depth: usize, key: &str) -> Option<Label> {
    match (depth, key) {
        (1, "eventId") => Some(Label::EventId),
        (1, "sessionId" | "correlationId" | "parentId") | (2, "toolCallId" | "approvalId") => Some(Label::Id),
        _ => None,
    }
}

pub(super) fn opt_label(r: &mut dyn Relabel, label: Label, s: &mut Option<String>) {
    if let Some(s) = s {
        r.label(label, s);
    }
}

/// Offers `r` every key of the objects inside `v`.
pub(super) fn value_keys(v: &mut Value, r: &mut dyn Relabel) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(|v| value_keys(v, r)),
        Value::Object(m) => map_keys(m, r),
        _ => {}
    }
}

/// Offers `r` every key of `m` and of the objects inside it; the map is rebuilt only when a
/// key changes. A changed key that meets another already there (keys that differ only in
/// control bytes) does not replace it: it takes `#`s after it until it is free, so no value
/// is lost.
pub(super) fn map_keys(m: &mut Map<String, Value>, r: &mut dyn Relabel) {
    m.values_mut().for_each(|v| value_keys(v, r));
    let changed: Vec<(String, String)> = m.keys().filter_map(|k| Some((k.clone(), r.key(k)?))).collect();
    for (old, mut new) in changed {
        if let Some(v) = m.remove(&old) {
            while m.contains_key(&new) {
                new.push('#');
            }
            m.insert(new, v);
        }
    }
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
