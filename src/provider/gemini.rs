//! Gemini CLI `--output-format stream-json`: `init`, `message` (the user's prompt, then
//! assistant text in `delta` chunks), `tool_use` / `tool_result` pairs, `error` notes and
//! one closing `result` with `stats`. The shell tool reports no exit code: what its result
//! says only in display text (a blocked command, an empty output's exit code, a cancel or
//! timeout) is read from that text, and anything else leaves the exit code unknown.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::tool_args::{target, ToolNames};
use super::{LineError, Parse};
use crate::engine::clock::parse_rfc3339;
use crate::provider::errors::provider_error;
use crate::engine::{Engine, ExitSource, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{ErrorCategory, ErrorInfo, FileChange, Outcome, Piece, Role, SessionStarted, Stream, ToolKind, Usage};

/// The Gemini CLI parser.
#[derive(Debug, Default)]
pub struct Gemini {
    /// Assistant text streamed since the last boundary, so that a whole-message repeat of
    /// the chunks is not shown twice.
    streamed: String,
    /// The files edit tools were asked to change, by call id, until their result.
    edits: HashMap<String, String>,
    /// The last `error` note of severity `error`: it explains a failed `result` that gives
    /// no error, or a stream that stops after it.
    last_error: Option<ErrorInfo>,
    /// Plain-text notices printed before the run's `init`: they belong to its session.
    notices: Vec<String>,
}

pub(super) const NAMES: ToolNames = ToolNames {
    provider: "gemini",
    kinds: &[
        ("run_shell_command", ToolKind::Shell),
        ("write_file", ToolKind::Edit),
        ("replace", ToolKind::Edit),
        ("edit", ToolKind::Edit),
        ("read_file", ToolKind::Read),
        ("read_many_files", ToolKind::Read),
        ("list_directory", ToolKind::Search),
        ("glob", ToolKind::Search),
        ("search_file_content", ToolKind::Search),
        ("grep_search", ToolKind::Search),
        ("google_web_search", ToolKind::Search),
        ("web_fetch", ToolKind::Fetch),
        ("invoke_agent", ToolKind::Agent),
        ("delegate_to_agent", ToolKind::Agent),
        ("codebase_investigator", ToolKind::Agent),
    ],
    mcp_separator: "__",
};

/// What the shell tool says only in its display text (`returnDisplay` of Gemini's
/// shell tool), by the text's start.
const SHELL_NOTES: [(&str, ToolStatus); 4] = [
    ("Blocked: ", ToolStatus::Denied),
    ("Command cancelled by user.", ToolStatus::Cancelled),
    ("Command was automatically cancelled because it exceeded the timeout", ToolStatus::Timeout),
    ("Command terminated by signal: ", ToolStatus::Failed),
];
/// The whole display text of a command that failed without output.
const EXIT_NOTE: &str = "Command exited with code: ";

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(flatten)]
    event: Wire,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    Init {
        session_id: Option<String>,
        model: Option<String>,
    },
    Message {
        role: WireRole,
        #[serde(default)]
        content: String,
        #[serde(default)]
        delta: bool,
    },
    ToolUse {
        tool_name: String,
        tool_id: String,
        parameters: Option<Value>,
    },
    ToolResult {
        tool_id: String,
        status: String,
        output: Option<String>,
        error: Option<WireError>,
    },
    Error {
        severity: Option<String>,
        message: String,
    },
    Result {
        status: String,
        error: Option<WireError>,
        stats: Option<Stats>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum WireRole {
    User,
    Assistant,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct Stats {
    /// All input, the cached part included.
    input_tokens: Option<u64>,
    /// The input not read from the cache (newer versions).
    input: Option<u64>,
    output_tokens: Option<u64>,
    cached: Option<u64>,
    duration_ms: Option<u64>,
}

impl Parse for Gemini {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        if !line.trim_start().starts_with('{') {
            // Gemini CLI prints notices as plain text among its events ("YOLO mode is
            // enabled…", warnings); they are part of the run, not unreadable input.
            match engine.session_id() {
                Some(_) => engine.warning(line.trim().to_owned(), None),
                None => self.notices.push(line.trim().to_owned()),
            }
            return Ok(());
        }
        let env: Envelope<'_> = serde_json::from_str(line).map_err(LineError::from_json)?;
        if let Some(ms) = env.timestamp.as_deref().and_then(parse_rfc3339) {
            engine.set_time(ms);
        }
        match env.event {
            Wire::Init { session_id, model } => {
                engine.session_started(
                    session_id.as_deref(),
                    SessionStarted { provider: "gemini-cli".into(), model, ..Default::default() },
                );
                self.notices.drain(..).for_each(|n| engine.warning(n, None));
            }
            Wire::Message { role: WireRole::User, content, .. } => {
                self.streamed.clear();
                engine.turn_started(Some(content));
            }
            Wire::Message { role: WireRole::Assistant, content, delta } => {
                engine.ensure_turn();
                let new = if delta { content } else { self.unseen(content) };
                self.streamed.push_str(&new);
                engine.text(Role::Assistant, new, Piece::Next, None);
            }
            Wire::ToolUse { tool_name, tool_id, parameters } => {
                engine.ensure_turn();
                self.streamed.clear();
                if NAMES.kind(&tool_name) == ToolKind::Edit {
                    if let Some(path) = target(parameters.as_ref()) {
                        self.edits.insert(tool_id.clone(), path);
                    }
                }
                engine.tool_started(NAMES.started(&tool_id, &tool_name, parameters), ToolContext::default());
            }
            Wire::ToolResult { tool_id, status, output, error } => {
                self.streamed.clear();
                self.tool_result(engine, &tool_id, &status, output, error);
            }
            Wire::Error { severity, message } => {
                let category = if message.contains("session turns") {
                    ErrorCategory::MaxTurns
                } else {
                    ErrorCategory::ProviderError
                };
                if severity.as_deref() == Some("error") {
                    engine.warning(message.clone(), Some(category.as_str().to_owned()));
                    self.last_error = Some(ErrorInfo { category, message, action: None });
                } else {
                    engine.warning(message, None);
                }
            }
            Wire::Result { status, error, stats } => {
                engine.ensure_turn();
                // A run whose model calls all failed reports its counters' zero start, not figures.
                if let Some(s) = stats.filter(|s| s.input_tokens.unwrap_or(0) + s.output_tokens.unwrap_or(0) > 0) {
                    let uncached = s.input.or_else(|| Some(s.input_tokens?.saturating_sub(s.cached.unwrap_or(0))));
                    let usage = Usage {
                        input_tokens: uncached,
                        output_tokens: s.output_tokens,
                        cache_read: s.cached,
                        cache_write: None,
                        cost_usd: None,
                    };
                    // The figures of this process alone: a resumed session's next process
                    // reports its own (Gemini CLI 0.61.0), so they add up.
                    engine.usage(usage, UsageScope::Increment);
                    if let Some(ms) = s.duration_ms.filter(|&ms| ms > 0) {
                        engine.set_turn_duration(ms);
                        engine.set_session_duration(ms);
                    }
                }
                if status == "success" {
                    engine.turn_ended(Outcome::Completed, None, None);
                } else {
                    let error = match error.and_then(|e| e.message) {
                        Some(m) => provider_error(&m, http_status(&m)),
                        None => self
                            .last_error
                            .take()
                            .unwrap_or_else(|| provider_error("Gemini CLI reported an error", None)),
                    };
                    engine.turn_ended(Outcome::Failed, None, Some(error));
                }
            }
            Wire::Unknown => return Err(LineError::unknown_type_of(line)),
        }
        Ok(())
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.notices.drain(..).for_each(|n| engine.warning(n, None));
        // A stream that stops after an error note failed for that reason; one that just
        // stops is left to the engine, which calls it interrupted.
        if let Some(error) = self.last_error.take().filter(|_| engine.turn_is_open()) {
            engine.turn_ended(Outcome::Failed, None, Some(error));
        }
    }
}

impl Gemini {
    /// The part of a whole assistant message that its streamed chunks did not already show.
    fn unseen(&mut self, content: String) -> String {
        match content.strip_prefix(self.streamed.as_str()) {
            Some(rest) if !self.streamed.is_empty() => rest.to_owned(),
            _ => content,
        }
    }

    fn tool_result(
        &mut self,
        engine: &mut Engine,
        id: &str,
        status: &str,
        output: Option<String>,
        error: Option<WireError>,
    ) {
        let kind = NAMES.kind(engine.tool_name(id).unwrap_or_default());
        let (mut status, mut error) = match (status, error) {
            ("error", e) => {
                let e = e.unwrap_or(WireError { kind: None, message: None });
                let message = e.message.unwrap_or_else(|| "the tool failed".into());
                if e.kind.as_deref() == Some("policy_violation") {
                    (ToolStatus::Denied, Some(denied(message, "allow the tool in Gemini CLI's policy settings")))
                } else {
                    (ToolStatus::Failed, Some(ErrorInfo { category: ErrorCategory::ToolError, message, action: None }))
                }
            }
            ("success", _) => (ToolStatus::Completed, None),
            (other, _) => return engine.tool_ended_unknown(id, other),
        };
        let mut output = output;
        if kind == ToolKind::Shell && status == ToolStatus::Completed {
            if let Some(text) = output.as_deref() {
                if let Some(code) = text.strip_prefix(EXIT_NOTE).and_then(|c| c.trim().parse().ok()) {
                    engine.tool_exit(id, ExitSource::ParsedText, code);
                    output = None;
                } else if let Some((_, s)) = SHELL_NOTES.iter().find(|(note, _)| text.starts_with(note)) {
                    status = *s;
                    if status == ToolStatus::Denied {
                        let action = "Gemini CLI's shell tool refused the command; rewrite it without what it blocks (e.g. command substitution)";
                        error = output.take().map(|message| denied(message, action));
                    }
                }
            }
        }
        if let Some(text) = &output {
            engine.tool_output(id, Stream::Combined, Update::Final, text);
        }
        if let Some(path) = self.edits.remove(id) {
            if status == ToolStatus::Completed {
                // Gemini does not say whether `write_file` created the file or replaced it.
                engine.file_changed(path, FileChange::Update, Some(id.to_owned()));
            }
        }
        engine.tool_ended(id, status, error);
    }
}

fn denied(message: String, action: &str) -> ErrorInfo {
    ErrorInfo { category: ErrorCategory::PermissionDenied, message, action: Some(action.to_owned()) }
}

/// The HTTP status in an API error message such as `[API Error: {"error":{"code":400,…}}]`.
fn http_status(message: &str) -> Option<u16> {
    let rest = &message[message.find("\"code\":")? + "\"code\":".len()..];
    let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|c| (100..600).contains(c))
}


/// Gemini CLI's stream-json: its types with their own fields and an RFC 3339 `timestamp`.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "gemini",
    about: "Gemini CLI --output-format stream-json",
    family: "gemini",
    opens: &["init"],
    claim,
    parser: || Box::new(Gemini::default()),
};

fn claim(p: &super::Probe) -> super::Claim {
    let timestamped = p.str("timestamp").is_some_and(|t| parse_rfc3339(t).is_some());
    let has = |keys: &[&str]| keys.iter().all(|k| p.has(k));
    let own = match p.kind() {
        Some("init") => has(&["session_id", "model"]),
        Some("message") => has(&["role", "content"]),
        Some("tool_use") => has(&["tool_name", "tool_id"]),
        Some("tool_result") => has(&["tool_id", "status"]),
        Some("error") => has(&["severity", "message"]),
        Some("result") => p.str("status").is_some(),
        _ => false,
    };
    super::dialect::claim(timestamped && own, false)
}

#[cfg(test)]
mod tests {
    use super::http_status;

    #[test]
    fn http_status_is_read_from_an_api_error_body() {
        assert_eq!(http_status(r#"[API Error: {"error":{"code":400,"status":"INVALID_ARGUMENT"}}]"#), Some(400));
        assert_eq!(http_status(r#"{"code": 429}"#), Some(429));
        assert_eq!(http_status("fetch failed"), None);
        assert_eq!(http_status(r#"{"code":"x"}"#), None);
    }
}
