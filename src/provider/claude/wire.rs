//! The wire format of Claude Code's stream-json, as serde types. Only the fields the parser
//! reads are declared; everything else is ignored.
//!
//! Every type is read in one pass straight from the line: no `#[serde(tag)]` or
//! `#[serde(untagged)]` enums, which buffer their whole input into an intermediate tree and
//! copy every string (the line's `type` is looked at first and picks the struct; blocks,
//! deltas and structured results are read into loose structs that their kind validates).


use serde::de::{self, Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::Value;

use crate::provider::usage::AnthropicUsage;
use crate::provider::LineError;

mod loose;

use loose::{optional, required, Loose};

/// One line of the stream.
pub(super) enum Wire {
    /// Boxed: the largest, and the rarest of the lines.
    System(Box<System>),
    Assistant(AssistantLine),
    User(UserLine),
    Result(Result),
    StreamEvent(StreamLine),
    /// `rate_limit_event`: the subscription's rate-limit state.
    RateLimit(RateLimitLine),
}

#[derive(Deserialize)]
pub(super) struct AssistantLine {
    pub message: Message,
    pub parent_tool_use_id: Option<String>,
    /// `sessionId` in a session transcript.
    #[serde(alias = "sessionId")]
    pub session_id: Option<String>,
    timestamp: Option<String>,
    /// The API error a made-up (`<synthetic>`) message reports (see [`is_output_limit`]).
    pub api_error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct UserLine {
    pub message: Message,
    pub parent_tool_use_id: Option<String>,
    /// `toolUseResult` and `sessionId` in a session transcript.
    #[serde(alias = "toolUseResult")]
    pub tool_use_result: Option<ToolUseResult>,
    #[serde(alias = "sessionId")]
    pub session_id: Option<String>,
    timestamp: Option<String>,
    /// Put in the conversation by the harness, not typed by the user (a compaction summary,
    /// a hook's note).
    #[serde(rename = "isSynthetic", default)]
    pub is_synthetic: bool,
    /// What Claude Code decided about each call of the line's results (2.1.3xx): whether a
    /// permission rule refused it, or why it never ran.
    #[serde(default)]
    pub tool_result_meta: Vec<ResultMeta>,
    /// A session transcript's word on the line's (one) result, where the stream has
    /// `tool_result_meta`.
    #[serde(rename = "permissionDecision")]
    pub permission_decision: Option<PermissionDecision>,
}

/// One entry of `tool_result_meta`.
#[derive(Deserialize)]
pub(super) struct ResultMeta {
    pub id: Option<String>,
    /// Why the call never ran (`user-rejected`, …).
    pub non_execution_kind: Option<String>,
    pub permission_decision: Option<PermissionDecision>,
}

#[derive(Deserialize)]
pub(super) struct PermissionDecision {
    /// `accept` or `reject`.
    pub decision: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct StreamLine {
    pub event: StreamEvent,
    pub parent_tool_use_id: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RateLimitLine {
    pub rate_limit_info: Option<RateLimitInfo>,
    pub session_id: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RateLimitInfo {
    /// `allowed`, `allowed_warning` or `rejected`.
    pub status: Option<String>,
    #[serde(rename = "rateLimitType")]
    pub kind: Option<String>,
    #[serde(rename = "resetsAt")]
    pub resets_at: Option<i64>,
}

impl Wire {
    /// Parses one line: its `type` picks the struct it is read into.
    pub fn parse(line: &str) -> std::result::Result<Wire, LineError> {
        let fail = |e: serde_json::Error| LineError::classify(line, e, &KNOWN);
        let Some(kind) = crate::provider::leading_type(line)
            .map(std::borrow::Cow::Borrowed)
            .or_else(|| crate::provider::type_of(line))
        else {
            // Not JSON, or JSON without a `type`: let the parse say which.
            return Err(fail(
                serde_json::from_str::<IgnoredAny>(line).err().unwrap_or_else(|| de::Error::missing_field("type")),
            ));
        };
        Ok(match kind.as_ref() {
            "stream_event" => Wire::StreamEvent(serde_json::from_str(line).map_err(fail)?),
            "assistant" => Wire::Assistant(serde_json::from_str(line).map_err(fail)?),
            "user" => Wire::User(serde_json::from_str(line).map_err(fail)?),
            "system" => Wire::System(Box::new(serde_json::from_str(line).map_err(fail)?)),
            "result" => Wire::Result(serde_json::from_str(line).map_err(fail)?),
            "rate_limit_event" => Wire::RateLimit(serde_json::from_str(line).map_err(fail)?),
            other => match serde_json::from_str::<IgnoredAny>(line) {
                Ok(_) => return Err(LineError::UnknownType(other.to_owned())),
                Err(e) => return Err(fail(e)),
            },
        })
    }

    /// The provider's time of the line, when it says (every line since 2.1.3xx).
    pub fn timestamp(&self) -> Option<&str> {
        match self {
            Wire::User(l) => l.timestamp.as_deref(),
            Wire::Assistant(l) => l.timestamp.as_deref(),
            Wire::System(l) => l.timestamp.as_deref(),
            Wire::Result(l) => l.timestamp.as_deref(),
            Wire::StreamEvent(_) | Wire::RateLimit(_) => None,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct System {
    pub subtype: String,
    #[serde(alias = "sessionId")]
    pub session_id: Option<String>,
    timestamp: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub tools: Option<Vec<String>>,
    pub claude_code_version: Option<String>,
    pub qwen_code_version: Option<String>,
    pub attempt: Option<u64>,
    pub max_retries: Option<u64>,
    pub error_status: Option<u64>,
    #[serde(alias = "compactMetadata")]
    pub compact_metadata: Option<CompactMetadata>,
    /// `permission_denied`: why a permission rule refused the call (`task.tool_use_id`).
    pub message: Option<String>,
    /// `task_*`: a background task's fields, at the top (Claude Code) or under `data` (Qwen);
    /// `permission_denied` names its call here too.
    #[serde(flatten)]
    pub task: Task,
    data: Option<Task>,
}

/// What a `task_started`, `task_updated` or `task_notification` line says of a task.
#[derive(Deserialize, Default)]
pub(super) struct Task {
    pub task_id: Option<String>,
    pub tool_use_id: Option<String>,
    /// `completed`, `failed`, `killed`, … (on a notification).
    pub status: Option<String>,
    pub summary: Option<String>,
    /// The status an update sets.
    pub patch: Option<TaskPatch>,
}

#[derive(Deserialize)]
pub(super) struct TaskPatch {
    pub status: Option<String>,
}

impl System {
    /// The task the line speaks of, wherever the dialect put its fields.
    pub fn task(self) -> Task {
        match self.data {
            Some(data) if data.task_id.is_some() || data.tool_use_id.is_some() => data,
            _ => self.task,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct CompactMetadata {
    pub trigger: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Message {
    pub id: Option<String>,
    pub model: Option<String>,
    #[serde(default)]
    pub content: Content,
}

/// Message content: a plain string or a list of blocks.
pub(super) enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Content, D::Error> {
        match Loose::<Content>::deserialize(d)? {
            Loose::Is(c) => Ok(c),
            _ => Err(de::Error::custom("content is neither a string nor a list of blocks")),
        }
    }
}

impl Default for Content {
    fn default() -> Content {
        Content::Blocks(Vec::new())
    }
}

impl Content {
    pub fn into_blocks(self) -> Vec<Block> {
        match self {
            Content::Text(text) => vec![Block::Text { text }],
            Content::Blocks(b) => b,
        }
    }

    pub fn texts(&self) -> impl Iterator<Item = &str> {
        let (one, many) = match self {
            Content::Text(t) => (Some(t.as_str()), &[][..]),
            Content::Blocks(b) => (None, &b[..]),
        };
        one.into_iter().chain(many.iter().filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        }))
    }

    /// All text of the content, blocks joined by newlines.
    pub fn joined(self) -> String {
        match self {
            Content::Text(t) => t,
            c => c.texts().collect::<Vec<_>>().join("\n"),
        }
    }
}

#[derive(Deserialize)]
#[serde(try_from = "RawBlock")]
pub(super) enum Block {
    Text { text: String },
    Thinking { thinking: String },
    ToolUse { id: String, name: String, input: Value },
    ToolResult { tool_use_id: String, content: Option<Content>, is_error: bool },
    Other,
}

/// A content block as read, whatever its kind: [`Block`] checks what its kind needs.
#[derive(Deserialize)]
struct RawBlock {
    #[serde(rename = "type")]
    kind: String,
    text: Option<Loose<String>>,
    thinking: Option<Loose<String>>,
    id: Option<Loose<String>>,
    name: Option<Loose<String>>,
    input: Option<Value>,
    tool_use_id: Option<Loose<String>>,
    content: Option<Loose<Content>>,
    is_error: Option<Loose<bool>>,
}

impl TryFrom<RawBlock> for Block {
    type Error = String;
    fn try_from(b: RawBlock) -> std::result::Result<Block, String> {
        Ok(match b.kind.as_str() {
            "text" => Block::Text { text: required(b.text, "text")? },
            "thinking" => Block::Thinking { thinking: required(b.thinking, "thinking")? },
            "tool_use" => Block::ToolUse {
                id: required(b.id, "id")?,
                name: required(b.name, "name")?,
                input: b.input.unwrap_or(Value::Null),
            },
            "tool_result" => Block::ToolResult {
                tool_use_id: required(b.tool_use_id, "tool_use_id")?,
                content: optional(b.content, "content")?,
                is_error: optional(b.is_error, "is_error")?.unwrap_or(false),
            },
            _ => Block::Other,
        })
    }
}

/// The structured result beside a tool result: Bash's streams, or anything else.
pub(super) enum ToolUseResult {
    Shell {
        stdout: String,
        stderr: Option<String>,
        persisted_output_path: Option<String>,
        interrupted: bool,
        /// Set when the command was sent to the background (`run_in_background`).
        background_task_id: Option<String>,
    },
    File {
        kind: Option<String>,
        file_path: String,
    },
    /// A subagent launched in the background (`isAsync`, status `async_launched`).
    Async,
    Other,
}

/// A structured result as read: the first shape whose fields all fit wins.
#[derive(Deserialize)]
struct RawToolUseResult {
    stdout: Option<Loose<String>>,
    stderr: Option<Loose<String>>,
    #[serde(rename = "persistedOutputPath")]
    persisted_output_path: Option<Loose<String>>,
    interrupted: Option<Loose<bool>>,
    #[serde(rename = "type")]
    kind: Option<Loose<String>>,
    #[serde(rename = "filePath")]
    file_path: Option<Loose<String>>,
    #[serde(rename = "backgroundTaskId")]
    background_task_id: Option<Loose<String>>,
    #[serde(rename = "isAsync")]
    is_async: Option<Loose<bool>>,
    status: Option<Loose<String>>,
}

impl<'de> Deserialize<'de> for ToolUseResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<ToolUseResult, D::Error> {
        let Loose::Is(r) = Loose::<RawToolUseResult>::deserialize(d)? else { return Ok(ToolUseResult::Other) };
        if matches!(r.is_async, Some(Loose::Is(true))) || matches!(&r.status, Some(Loose::Is(s)) if s == "async_launched") {
            return Ok(ToolUseResult::Async);
        }
        let shell = (|| {
            Ok::<_, String>(ToolUseResult::Shell {
                stdout: required(r.stdout, "stdout")?,
                stderr: optional(r.stderr, "stderr")?,
                persisted_output_path: optional(r.persisted_output_path, "persistedOutputPath")?,
                interrupted: match r.interrupted {
                    None => false,
                    Some(Loose::Is(b)) => b,
                    Some(_) => return Err(String::new()),
                },
                background_task_id: optional(r.background_task_id, "backgroundTaskId")?,
            })
        })();
        if let Ok(s) = shell {
            return Ok(s);
        }
        let file = (|| {
            Ok::<_, String>(ToolUseResult::File {
                kind: optional(r.kind, "type")?,
                file_path: required(r.file_path, "filePath")?,
            })
        })();
        Ok(file.unwrap_or(ToolUseResult::Other))
    }
}

#[derive(Deserialize)]
pub(super) struct Result {
    pub subtype: String,
    #[serde(default)]
    pub is_error: bool,
    pub api_error_status: Option<u16>,
    /// The API error that ended the run (see [`is_output_limit`]).
    pub api_error: Option<Value>,
    pub duration_ms: Option<u64>,
    pub result: Option<String>,
    pub stop_reason: Option<String>,
    pub session_id: Option<String>,
    timestamp: Option<String>,
    pub total_cost_usd: Option<f64>,
    pub usage: Option<AnthropicUsage>,
    /// Every model's tokens since the process began, subagents' included (keyed by model).
    #[serde(rename = "modelUsage")]
    pub model_usage: Option<std::collections::BTreeMap<String, AnthropicUsage>>,
    /// Which result of the process this is (0 for the first): a process that wakes for
    /// background work reports again, with figures counted from its start.
    pub result_index: Option<u64>,
    /// Qwen Code's reason for a failed run.
    pub error: Option<ResultError>,
    #[serde(default)]
    pub permission_denials: Vec<Denial>,
}

#[derive(Deserialize)]
pub(super) struct ResultError {
    pub message: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Denial {
    pub tool_use_id: String,
}

#[derive(Deserialize)]
#[serde(try_from = "RawStreamEvent")]
pub(super) enum StreamEvent {
    MessageStart { message: StreamMessage },
    /// A content block begins: whether it is a text or a thinking block (`None`: neither).
    ContentBlockStart { thinking: Option<bool> },
    ContentBlockDelta { delta: Delta },
    Other,
}

#[derive(Deserialize)]
pub(super) struct StreamMessage {
    pub id: Option<String>,
}

#[derive(Deserialize)]
struct RawStreamEvent {
    #[serde(rename = "type")]
    kind: String,
    message: Option<Loose<StreamMessage>>,
    delta: Option<Loose<RawDelta>>,
    content_block: Option<Loose<RawDelta>>,
}

#[derive(Deserialize)]
struct RawDelta {
    #[serde(rename = "type")]
    kind: Option<Loose<String>>,
    text: Option<Loose<String>>,
    thinking: Option<Loose<String>>,
}

pub(super) enum Delta {
    Text { text: String },
    Thinking { thinking: String },
    Other,
}

impl TryFrom<RawStreamEvent> for StreamEvent {
    type Error = String;
    fn try_from(e: RawStreamEvent) -> std::result::Result<StreamEvent, String> {
        Ok(match e.kind.as_str() {
            "message_start" => StreamEvent::MessageStart { message: required(e.message, "message")? },
            "content_block_start" => {
                // Read leniently: what the block is only tells where text begins.
                let block = optional(e.content_block, "content_block").ok().flatten();
                let kind = block.and_then(|b: RawDelta| optional(b.kind, "type").ok().flatten());
                StreamEvent::ContentBlockStart {
                    thinking: match kind.as_deref() {
                        Some("text") => Some(false),
                        Some("thinking") => Some(true),
                        _ => None,
                    },
                }
            }
            "content_block_delta" => {
                let d: RawDelta = required(e.delta, "delta")?;
                let kind: String = required(d.kind, "type")?;
                StreamEvent::ContentBlockDelta {
                    delta: match kind.as_str() {
                        "text_delta" => Delta::Text { text: required(d.text, "text")? },
                        "thinking_delta" => Delta::Thinking { thinking: required(d.thinking, "thinking")? },
                        _ => Delta::Other,
                    },
                }
            }
            _ => StreamEvent::Other,
        })
    }
}

/// The `type`s Claude Code defines.
pub(super) const KNOWN: [&str; 6] = ["system", "assistant", "user", "result", "stream_event", "rate_limit_event"];

/// True when an `api_error` is `max_output_tokens`: every answer was cut at the output token
/// limit (Claude Code asks the model to go on three times before it gives up). The field is
/// a name, read leniently (an object's `type`): a shape it does not expect must not make the
/// line unreadable.
pub(super) fn is_output_limit(api_error: Option<&Value>) -> bool {
    api_error.and_then(|v| v.as_str().or_else(|| v.get("type")?.as_str())) == Some("max_output_tokens")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(content: &str, result: &str) -> std::result::Result<Wire, LineError> {
        Wire::parse(&format!(r#"{{"type":"user","message":{{"content":{content}}},"tool_use_result":{result}}}"#))
    }

    #[test]
    fn a_field_of_another_kind_with_another_type_is_ignored() {
        let Ok(Wire::User(l)) =
            user(r#"[{"type":"image","text":5,"content":{"a":1}},{"type":"text","text":"hi"}]"#, "null")
        else {
            panic!("not read")
        };
        let blocks = l.message.content.into_blocks();
        assert!(matches!(&blocks[..], [Block::Other, Block::Text { text }] if text == "hi"));
    }

    #[test]
    fn a_block_missing_what_its_kind_needs_is_a_shape_error() {
        assert!(matches!(user(r#"[{"type":"text"}]"#, "null"), Err(LineError::Shape(_))));
        assert!(matches!(user(r#"[{"type":"tool_result","tool_use_id":7}]"#, "null"), Err(LineError::Shape(_))));
        assert!(matches!(user("null", "null"), Err(LineError::Shape(_))));
    }

    #[test]
    fn structured_results_take_the_first_shape_that_fits() {
        let result = |r: &str| match user("[]", r) {
            Ok(Wire::User(l)) => l.tool_use_result,
            _ => panic!("not read: {r}"),
        };
        assert!(matches!(
            result(r#"{"stdout":"a","stderr":null,"interrupted":true}"#),
            Some(ToolUseResult::Shell { interrupted: true, .. })
        ));
        assert!(matches!(
            result(r#"{"stdout":"a","interrupted":"yes","filePath":"/f"}"#),
            Some(ToolUseResult::File { .. })
        ));
        assert!(matches!(result(r#"{"stdout":1}"#), Some(ToolUseResult::Other)));
        assert!(matches!(result(r#""Error: no""#), Some(ToolUseResult::Other)));
        assert!(result("null").is_none());
    }

    #[test]
    fn the_type_picks_the_struct_and_errors_keep_their_kind() {
        assert!(matches!(
            Wire::parse(
                r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}}"#
            ),
            Ok(Wire::StreamEvent(StreamLine { event: StreamEvent::ContentBlockDelta { delta: Delta::Text { .. } }, .. }))
        ));
        assert!(matches!(
            Wire::parse(r#"{"session_id":"s","type":"result","subtype":"success"}"#),
            Ok(Wire::Result(_))
        ));
        assert!(matches!(Wire::parse(r#"{"type":"nope","x":1}"#), Err(LineError::UnknownType(t)) if t == "nope"));
        assert!(matches!(Wire::parse(r#"{"type":"nope","x":"#), Err(LineError::NotJson(_))));
        assert!(matches!(Wire::parse(r#"{"type":"user","message":"#), Err(LineError::NotJson(_))));
        assert!(matches!(Wire::parse(r#"{"x":1}"#), Err(LineError::Shape(_))));
    }
}
