//! Provider parsers: one module per dialect, each turning its lines into calls on the
//! shared [`Engine`] and declaring its [`Dialect`]: its name and how sure it is that a line
//! is its own. This file owns the [`Parse`] trait and the registry of dialects; the
//! [`Normalizer`] picks among their claims and feeds lines to the right parser.

mod dialect;
mod errors;
mod normalizer;
mod repeats;
mod tool_args;
mod transcript;
mod usage;

pub use dialect::{Claim, Dialect, Probe, Verdict};
pub use normalizer::Normalizer;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::Deserialize;

use crate::engine::Engine;
use crate::event::RawReason;

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

/// Declares the dialect modules and registers their [`Dialect`]s, in the order that breaks a
/// tie between dialects that stay equally sure to the end (a format's origin before its
/// forks). A new dialect is a new module and its name here.
macro_rules! dialects {
    ($($module:ident),* $(,)?) => {
        $(mod $module;)*

        impl Provider {
            /// Every dialect, in registry order.
            pub const ALL: &'static [Provider] = &[$(Provider(&$module::DIALECT)),*];
        }
    };
}

dialects!(
    acp,
    claude,
    qwen,
    amp,
    codex,
    codex_rollout,
    opencode,
    opencode_session,
    kilo,
    gemini,
    gemini_session,
    auggie,
    copilot,
    copilot_session,
    cline,
    droid,
    droid_session,
    cursor,
    claude_session,
    qwen_session,
);

/// The session files that are not lines, each known by its first bytes and turned into
/// lines of its dialect, and the lines that are read with a file beside them (a droid
/// session and its settings): what `normalize` reads besides lines.
const DOCUMENTS: &[Decode] =
    &[opencode_session::db::decode, opencode_session::export::decode, droid_session::settings::decode];

type Decode = fn(&std::path::Path, &[u8]) -> Option<std::io::Result<crate::io::Decoded>>;

/// What `normalize` reads: lines of a dialect it knows, and the `DOCUMENTS`. In a
/// directory, a file is read when it is one of the documents, or when some dialect claims
/// its first non-blank line; the others (configuration, caches, locks) are skipped.
#[derive(Debug)]
pub struct SessionFiles;

impl crate::io::Formats for SessionFiles {
    fn decode(&self, path: &std::path::Path, head: &[u8]) -> Option<std::io::Result<crate::io::Decoded>> {
        DOCUMENTS.iter().find_map(|decode| decode(path, head))
    }

    fn claims(&self, line: &str) -> bool {
        Probe::parse(line).is_some_and(|probe| Provider::detect(&probe) != Verdict::None)
    }

    fn read_with_another(&self, path: &std::path::Path) -> bool {
        droid_session::settings::is_settings_of_a_session(path, crate::io::HEAD_BYTES as u64)
    }

    fn text_decoder(&self) -> Option<crate::io::DecodeText> {
        Some(opencode_session::export::decode_text)
    }
}

/// What `project` and `summarize` read: canonical events or any agent's output, as lines
/// (a directory's files whose first line is a JSON object) or as the [`SessionFiles`]
/// documents, which they normalize on the way in as `normalize` would.
#[derive(Debug)]
pub struct EventsOrSessions;

impl crate::io::Formats for EventsOrSessions {
    fn decode(&self, path: &std::path::Path, head: &[u8]) -> Option<std::io::Result<crate::io::Decoded>> {
        SessionFiles.decode(path, head)
    }

    fn claims(&self, line: &str) -> bool {
        crate::io::JsonLines.claims(line)
    }

    fn read_with_another(&self, path: &std::path::Path) -> bool {
        SessionFiles.read_with_another(path)
    }

    fn text_decoder(&self) -> Option<crate::io::DecodeText> {
        SessionFiles.text_decoder()
    }
}

/// A dialect `normalize` reads: a handle to its registered [`Dialect`].
#[derive(Clone, Copy)]
pub struct Provider(&'static Dialect);

impl Provider {
    /// The name used by `--from`.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// What the dialect is (the agent and the output it reads).
    pub fn about(self) -> &'static str {
        self.0.about
    }

    /// The parser family: dialects of one family are read alike and name their runs alike.
    pub fn family(self) -> &'static str {
        self.0.family
    }

    /// A fresh parser for this dialect.
    pub fn parser(self) -> Box<dyn Parse> {
        (self.0.parser)()
    }

    /// True when a line of `type` opens a run of this dialect.
    pub fn opens(self, kind: &str) -> bool {
        self.0.opens.contains(&kind)
    }

    /// How sure this dialect is that the line is its own.
    pub fn claim(self, probe: &Probe) -> Claim {
        (self.0.claim)(probe)
    }

    /// Which dialect a JSON line is in, by every dialect's claim.
    pub fn detect(probe: &Probe) -> Verdict<Provider> {
        dialect::decide(Provider::ALL.iter().map(|&p| (p, p.claim(probe))))
    }
}

/// Dialects are known by their names (unique: a test says so), not by where their
/// `const` happens to be placed.
impl PartialEq for Provider {
    fn eq(&self, other: &Provider) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Provider {}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
        Provider::ALL.iter().copied().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Provider::ALL.iter().map(|p| p.name()).collect();
            format!("unknown provider {s:?} (expected auto or one of: {})", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for (i, p) in Provider::ALL.iter().enumerate() {
            assert!(Provider::ALL[..i].iter().all(|q| q.name() != p.name()), "{p} twice");
            assert_eq!(p.name().parse::<Provider>(), Ok(*p));
        }
        assert!("nope".parse::<Provider>().unwrap_err().contains("claude"));
    }
}
