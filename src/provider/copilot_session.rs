//! GitHub Copilot CLI sessions: `~/.copilot/session-state/<session id>/events.jsonl`.
//!
//! The file is the `--output-format json` stream's events less the live-only ones marked
//! `ephemeral` (text deltas, shell output chunks, model calls), so every event the two share
//! is read by the stream's parser ([`Copilot`]). The file adds `session.start` (the session
//! id, version, model and cwd the stream never states), `session.usage_record` (one per model
//! call), `session.shutdown` (where an invocation ends: the stream's closing `result`, without
//! its exit code) and `session.resume` (a later invocation appended to the same file: one more
//! turn of the same session).

use std::borrow::Cow;

use serde::Deserialize;

use super::copilot::{is_envelope, Copilot, Envelope};
use super::repeats::ReadOnce;
use super::usage::cache_inclusive;
use super::{Claim, Dialect, LineError, Parse, Probe};
use crate::engine::clock::parse_rfc3339;
use crate::engine::{Engine, UsageScope};
use crate::event::{Outcome, SessionStarted, Usage};

/// Copilot CLI's session files.
pub(super) const DIALECT: Dialect = Dialect {
    name: "copilot-session",
    about: "GitHub Copilot CLI sessions (~/.copilot/session-state/<id>/events.jsonl)",
    family: "copilot-session",
    opens: &["session.start"],
    claim,
    parser: || Box::new(ReadOnce::<CopilotSession>::default()),
};

/// The events only the session file holds.
const FILE_ONLY: [&str; 5] =
    ["session.start", "session.resume", "session.usage_record", "session.shutdown", "system.message"];

/// The file's alone: its own event types; the events it shares with the stream fit both
/// (never a live-only `ephemeral` one).
fn claim(p: &Probe) -> Claim {
    if !is_envelope(p) || p.get("ephemeral").is_some_and(|e| e == true) {
        return Claim::No;
    }
    super::dialect::claim(p.kind().is_some_and(|t| FILE_ONLY.contains(&t)), true)
}

/// The provider name of the sessions, the same as the stream's.
const PROVIDER: &str = "copilot";

/// The session file parser: the stream's, and the events only the file has.
#[derive(Debug, Default)]
pub struct CopilotSession {
    stream: Copilot,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    session_id: Option<String>,
    copilot_version: Option<String>,
    selected_model: Option<String>,
    context: Option<Context>,
}

#[derive(Deserialize)]
struct Context {
    cwd: Option<String>,
}

#[derive(Deserialize)]
struct UsageRecord {
    usage: CallUsage,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Shutdown {
    shutdown_type: Option<String>,
}

impl Parse for CopilotSession {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let kind = super::leading_type(line).map(Cow::Borrowed).or_else(|| super::type_of(line));
        if !kind.is_some_and(|k| FILE_ONLY.contains(&k.as_ref())) {
            return self.stream.line(line, engine);
        }
        let env: Envelope = serde_json::from_str(line).map_err(LineError::from_json)?;
        if let Some(ms) = env.timestamp.as_deref().and_then(parse_rfc3339) {
            engine.set_time(ms);
        }
        let shape = LineError::Shape;
        match env.kind.as_str() {
            "session.start" => {
                let s: Start = serde_json::from_value(env.data).map_err(shape)?;
                let info = SessionStarted {
                    provider: PROVIDER.into(),
                    provider_version: s.copilot_version,
                    model: s.selected_model,
                    cwd: s.context.and_then(|c| c.cwd),
                    ..Default::default()
                };
                engine.session_started(s.session_id.as_deref(), info);
            }
            "session.usage_record" => {
                let r: UsageRecord = serde_json::from_value(env.data).map_err(shape)?;
                engine.enter_session(None, PROVIDER);
                engine.usage(r.usage.canonical(), UsageScope::Increment);
            }
            "session.shutdown" => {
                let s: Shutdown = serde_json::from_value(env.data).map_err(shape)?;
                engine.enter_session(None, PROVIDER);
                // A routine shutdown is the invocation ending as its stream's `result` does;
                // the file keeps no exit code, so any other one ends the turn unfinished.
                match s.shutdown_type.as_deref() {
                    Some("routine") => {
                        engine.turn_ended(Outcome::Completed, None, None);
                        engine.session_closed();
                    }
                    other => engine.turn_ended(Outcome::Interrupted, other.map(str::to_owned), None),
                }
            }
            // A resumed invocation: its `user.message` opens the next turn. The system prompt
            // is the agent's, not the conversation's.
            _ => {}
        }
        Ok(())
    }
}

impl CallUsage {
    /// Copilot's `inputTokens` are the model API's prompt tokens, the cached ones inside.
    fn canonical(&self) -> Usage {
        cache_inclusive(self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_own_events_are_claimed_and_live_ones_are_not() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        let start = r#"{"type":"session.start","data":{"sessionId":"s"},"id":"x","timestamp":"t","parentId":null}"#;
        assert_eq!(claim_of(start), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"user.message","data":{},"id":"x","timestamp":"t"}"#), Claim::Maybe);
        assert_eq!(claim_of(r#"{"type":"assistant.idle","data":{},"id":"x","ephemeral":true}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"result","sessionId":"s","exitCode":0}"#), Claim::No);
    }
}
