//! Provider parsers: one module per dialect, each turning its lines into calls on the
//! shared [`Engine`]. This file owns the [`Parse`] trait, the provider names, detection
//! (`--from auto`) and the [`Normalizer`] that feeds lines to the right parser and keeps
//! whatever no parser understood as `raw` events.

pub mod acp;
pub mod claude;
pub mod codex;
pub mod gemini;
pub mod opencode;
mod tool_args;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use crate::engine::clock::Clock;
use crate::engine::Engine;
use crate::event::{Event, RawReason};
use crate::io::Line;

/// Why a parser could not use a line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// The line is not JSON.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// JSON, but of a type the dialect does not define (or this version does not know).
    #[error("unknown event type {0:?}")]
    UnknownType(String),
    /// A known type whose fields are not what the dialect says.
    #[error("unexpected shape: {0}")]
    Shape(#[source] serde_json::Error),
}

impl LineError {
    /// Classifies a serde_json error: syntax errors mean the line is not JSON at all.
    pub fn from_json(e: serde_json::Error) -> LineError {
        match e.classify() {
            serde_json::error::Category::Data => LineError::Shape(e),
            _ => LineError::NotJson(e),
        }
    }

    /// Classifies a line a dialect's wire type failed to parse: a `type` the dialect does
    /// not define (`known`) is `UnknownType`, a known one that does not fit is a shape error,
    /// anything else is not JSON.
    pub fn classify(line: &str, e: serde_json::Error, known: &[&str]) -> LineError {
        match type_of(line) {
            Some(t) if !known.contains(&t.as_ref()) => LineError::UnknownType(t.into_owned()),
            _ => LineError::from_json(e),
        }
    }

    /// The error for a line whose `type` the dialect does not define, naming that type.
    pub fn unknown_type_of(line: &str) -> LineError {
        LineError::UnknownType(type_of(line).map(Cow::into_owned).unwrap_or_default())
    }

    fn reason(&self) -> RawReason {
        match self {
            LineError::NotJson(_) => RawReason::NotJson,
            LineError::UnknownType(_) => RawReason::UnknownType,
            LineError::Shape(_) => RawReason::UnexpectedShape,
        }
    }
}

/// The `type` field of a JSON object line, if it has one.
fn type_of(line: &str) -> Option<Cow<'_, str>> {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
    }
    serde_json::from_str::<Tag<'_>>(line).ok().map(|t| t.kind)
}

/// The `type` of a line that begins `{"type":"…"`, when its value has no escapes: found
/// without parsing, so a parser can pick its wire struct first. The rest of the line is not
/// checked; the parse that follows must be.
fn leading_type(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('{')?.trim_start().strip_prefix("\"type\"")?;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let end = rest.find(['"', '\\'])?;
    (rest.as_bytes()[end] == b'"').then(|| &rest[..end])
}

/// A provider dialect's parser. `Send`: `normalize` runs it on its reading thread.
pub trait Parse: Send {
    /// Handles one non-blank line. Errors become `raw` events; the parser must not have
    /// emitted anything for a line it returns an error for.
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError>;

    /// End of input: emit anything held back. The engine closes what is still open.
    fn finish(&mut self, _engine: &mut Engine) {}
}

/// The dialects `normalize` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Claude Code `--output-format stream-json`.
    Claude,
    /// Codex `exec --json`.
    Codex,
    /// OpenCode `run --format json`.
    OpenCode,
    /// Gemini CLI `--output-format stream-json`.
    Gemini,
    /// Auggie: its ACP mode (its other output is not publicly specified).
    Auggie,
    /// Any ACP agent's JSON-RPC traffic.
    Acp,
}

impl Provider {
    /// Every provider, in detection order.
    pub const ALL: [Provider; 6] =
        [Provider::Acp, Provider::Claude, Provider::Codex, Provider::OpenCode, Provider::Gemini, Provider::Auggie];

    /// The name used by `--from`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Claude => "claude",
            Provider::Codex => "codex",
            Provider::OpenCode => "opencode",
            Provider::Gemini => "gemini",
            Provider::Auggie => "auggie",
            Provider::Acp => "acp",
        }
    }

    /// A fresh parser for this dialect.
    pub fn parser(self) -> Box<dyn Parse> {
        match self {
            Provider::Claude => Box::new(claude::Claude::default()),
            Provider::Codex => Box::new(codex::Codex),
            Provider::OpenCode => Box::new(opencode::OpenCode::default()),
            Provider::Gemini => Box::new(gemini::Gemini::default()),
            Provider::Auggie | Provider::Acp => Box::new(acp::Acp::default()),
        }
    }

    /// Which dialect a JSON line is in, if it says.
    pub fn detect(line: &str) -> Option<Provider> {
        let p: Probe<'_> = serde_json::from_str(line).ok()?;
        if p.jsonrpc.is_some() {
            return Some(Provider::Acp);
        }
        let t = p.kind.as_deref()?;
        match t {
            "system" | "assistant" | "user" | "result" | "stream_event"
                if p.session_id.is_some() || p.message.is_some() =>
            {
                Some(Provider::Claude)
            }
            "thread.started" | "turn.started" | "turn.completed" | "turn.failed" => Some(Provider::Codex),
            _ if t.starts_with("item.") => Some(Provider::Codex),
            _ if p.session_id_oc.is_some() => Some(Provider::OpenCode),
            "init" | "message" | "tool_use" | "tool_result" | "result" if p.timestamp.is_some() => {
                Some(Provider::Gemini)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Provider {
    type Err = String;
    fn from_str(s: &str) -> Result<Provider, String> {
        Provider::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            format!("unknown provider {s:?} (expected auto, claude, codex, opencode, auggie, gemini or acp)")
        })
    }
}

/// The few fields that tell the dialects apart.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(rename = "sessionID", borrow)]
    session_id_oc: Option<Cow<'a, str>>,
    message: Option<serde::de::IgnoredAny>,
    timestamp: Option<serde::de::IgnoredAny>,
}

/// Feeds input lines to the right parser and the engine, turning whatever no parser
/// understood into `raw` events.
pub struct Normalizer {
    forced: Option<Provider>,
    /// The dialect being read (`forced`, or the last one detected), and its parser.
    parser: Option<(Provider, Box<dyn Parse>)>,
    engine: Engine,
    line_no: u64,
    checked: bool,
    diagnostics: Vec<String>,
}

impl Normalizer {
    /// A normalizer for `from` (`None` = detect), with the given clock and field bound.
    pub fn new(from: Option<Provider>, clock: Clock, bound: usize) -> Normalizer {
        Normalizer {
            forced: from,
            parser: from.map(|p| (p, p.parser())),
            engine: Engine::new(clock, bound),
            line_no: 0,
            checked: false,
            diagnostics: Vec::new(),
        }
    }

    /// Handles the next input line.
    pub fn line(&mut self, line: Line<'_>) {
        self.line_no += 1;
        let text = match &line {
            Line::Text(t) => t.as_ref(),
            Line::Oversized { .. } => "",
        };
        let blank = line.is_blank();
        self.engine.begin_line(self.line_no, blank);
        match line {
            Line::Oversized { bytes, sample } => {
                self.engine.count_oversized();
                self.engine.raw(&sample, RawReason::Oversized);
                self.diagnostics.push(format!(
                    "line {}: {bytes} bytes is over the line limit; kept its start as a raw event",
                    self.line_no
                ));
            }
            Line::Text(_) if blank => {}
            Line::Text(_) => self.parse(text),
        }
        self.engine.end_line();
    }

    fn parse(&mut self, text: &str) {
        if self.parser.is_none() {
            self.parser = Provider::detect(text).map(|p| (p, p.parser()));
        } else if !self.checked && self.forced.is_some() && text.trim_start().starts_with('{') {
            self.checked = true;
            let seen = Provider::detect(text);
            let forced = self.forced.map(Provider::parser_family);
            if seen.map(Provider::parser_family) != forced {
                let seen = seen.map_or("no known dialect".to_owned(), |p| format!("{p} output"));
                self.diagnostics.push(format!(
                    "line {}: --from {} was given, but the input looks like {seen}",
                    self.line_no,
                    self.forced.map_or("auto", Provider::name)
                ));
            }
        }
        let mut result = match self.parser.as_mut() {
            Some((_, p)) => p.line(text, &mut self.engine),
            None => Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => LineError::UnknownType(String::new()),
                Err(e) => LineError::NotJson(e),
            }),
        };
        if matches!(result, Err(LineError::UnknownType(_) | LineError::Shape(_))) {
            result = self.switch_dialect(text).unwrap_or(result);
        }
        if let Err(e) = result {
            let reason = if self.parser.is_none() && !matches!(e, LineError::NotJson(_)) {
                RawReason::UnknownProvider
            } else {
                e.reason()
            };
            self.engine.raw(text, reason);
        }
    }

    /// Detecting (no `--from`), a JSON line the current dialect cannot read may begin another
    /// agent's run, as when the outputs of several agents are concatenated or given as
    /// files: when the line is recognisably in another dialect, that dialect's parser takes
    /// over from it, and the run before ends as at the end of input. Gives the new parser's
    /// reading of the line, or `None` when the dialect stays.
    fn switch_dialect(&mut self, text: &str) -> Option<Result<(), LineError>> {
        let (current, before) = self.parser.as_mut().filter(|_| self.forced.is_none())?;
        let family = current.parser_family();
        let seen = Provider::detect(text).filter(|p| p.parser_family() != family)?;
        before.finish(&mut self.engine);
        self.engine.end_run();
        let mut parser = seen.parser();
        let result = parser.line(text, &mut self.engine);
        self.parser = Some((seen, parser));
        Some(result)
    }

    /// Ends the input: flushes the parser and closes every open lifecycle. The summary is
    /// returned, not queued, so the caller can finish its stages before writing it.
    pub fn finish(&mut self, redactions: BTreeMap<String, u64>) -> Event {
        if let Some((_, p)) = self.parser.as_mut() {
            p.finish(&mut self.engine);
        }
        self.engine.finish(redactions)
    }

    /// Takes the events produced so far.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Event> {
        self.engine.drain()
    }

    /// Takes the human diagnostics produced so far (for stderr).
    pub fn take_diagnostics(&mut self) -> Vec<String> {
        std::mem::take(&mut self.diagnostics)
    }
}

impl Provider {
    /// Dialects that share a parser count as the same for the `--from` check.
    fn parser_family(self) -> Provider {
        match self {
            Provider::Auggie => Provider::Acp,
            p => p,
        }
    }
}
