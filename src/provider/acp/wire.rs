//! The ACP wire format: private serde structs mirroring JSON-RPC 2.0 and the parts of the
//! Agent Client Protocol schema (v1) this parser reads. Fields the schema marks
//! "default on error" (`_meta`, `content`, `locations`, `rawInput`, …) are read leniently:
//! a malformed value is treated as absent instead of failing the whole line.

use std::borrow::Cow;

use serde::de::{DeserializeOwned, Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// One JSON-RPC message: a request (`id` + `method`), a notification (`method` only) or a
/// response (`id` + `result` or `error`).
#[derive(Debug, Deserialize)]
pub(super) struct Envelope<'a> {
    /// `"2.0"` in every JSON-RPC message: a line without it is some other JSON.
    #[serde(default)]
    pub jsonrpc: Option<IgnoredAny>,
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<RpcError>,
}

/// A JSON-RPC error object.
#[derive(Debug, Deserialize)]
pub(super) struct RpcError {
    #[serde(default)]
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub data: Option<Value>,
}

/// Reads a field that the schema allows to be malformed: a bad value is `None`.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

// ------------------------------------------------------------ session/update ----

/// `session/update` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UpdateParams {
    #[serde(default)]
    pub session_id: Option<String>,
    pub update: SessionUpdate,
}

/// The update kinds of ACP v1.
#[derive(Debug, Deserialize)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
pub(super) enum SessionUpdate {
    UserMessageChunk {
        content: ContentBlock,
    },
    AgentMessageChunk {
        content: ContentBlock,
    },
    AgentThoughtChunk {
        content: ContentBlock,
    },
    ToolCall(ToolCall),
    ToolCallUpdate(ToolCall),
    Plan {
        #[serde(default)]
        entries: Vec<PlanEntry>,
    },
    AvailableCommandsUpdate {},
    CurrentModeUpdate {},
    ConfigOptionUpdate {},
    SessionInfoUpdate {},
    UsageUpdate {},
    #[serde(other)]
    Unknown,
}

/// Just the tag, to name an update kind this version does not know.
#[derive(Debug, Deserialize)]
pub(super) struct UpdateTag {
    pub update: Tag,
}

/// The `sessionUpdate` tag.
#[derive(Debug, Deserialize)]
pub(super) struct Tag {
    #[serde(rename = "sessionUpdate")]
    pub kind: String,
}

/// A content block; only text is read.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ContentBlock {
    Text {
        text: String,
    },
    #[serde(other)]
    Other,
}

impl ContentBlock {
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            ContentBlock::Other => None,
        }
    }
}

/// A plan entry.
#[derive(Debug, Deserialize)]
pub(super) struct PlanEntry {
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub status: String,
}

/// `tool_call` and `tool_call_update` (and the `toolCall` of a permission request): every
/// field but the id is optional, so one struct reads all three.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolCall {
    pub tool_call_id: String,
    #[serde(default, deserialize_with = "lenient")]
    pub title: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub status: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub content: Option<Vec<ToolContent>>,
    #[serde(default, deserialize_with = "lenient")]
    pub locations: Option<Vec<Location>>,
    #[serde(default)]
    pub raw_input: Option<Value>,
    #[serde(default)]
    pub raw_output: Option<Value>,
    #[serde(rename = "_meta", default, deserialize_with = "lenient")]
    pub meta: Option<Meta>,
}

/// What a tool call produced: text, a file diff, or an embedded terminal.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ToolContent {
    Content {
        content: ContentBlock,
    },
    #[serde(rename_all = "camelCase")]
    Diff {
        path: String,
        #[serde(default)]
        old_text: Option<String>,
        #[serde(rename = "_meta", default, deserialize_with = "lenient")]
        meta: Option<DiffMeta>,
    },
    #[serde(rename_all = "camelCase")]
    Terminal {
        terminal_id: String,
    },
    #[serde(other)]
    Other,
}

/// Codex's adapter says what a diff does to its file.
#[derive(Debug, Deserialize)]
pub(super) struct DiffMeta {
    #[serde(default)]
    pub kind: Option<String>,
}

/// A file a tool works on.
#[derive(Debug, Deserialize)]
pub(super) struct Location {
    pub path: String,
}

/// The `_meta` keys of tool calls that agents use to say what ACP itself does not.
#[derive(Debug, Deserialize, Default)]
pub(super) struct Meta {
    /// Codex's adapter announces its terminal (whose `terminal_output` is then a delta).
    #[serde(default, deserialize_with = "lenient")]
    pub terminal_info: Option<TerminalInfo>,
    /// Live terminal text: a delta from Codex's adapter, a whole snapshot from Claude's.
    #[serde(default, deserialize_with = "lenient")]
    pub terminal_output: Option<TerminalData>,
    /// Live terminal text, always a delta.
    #[serde(default, deserialize_with = "lenient")]
    pub terminal_output_delta: Option<TerminalData>,
    /// The command's exit status: the most authoritative exit code.
    #[serde(default, deserialize_with = "lenient")]
    pub terminal_exit: Option<TerminalExit>,
    /// Claude's adapter: the Claude Code tool name and its structured result.
    #[serde(rename = "claudeCode", default, deserialize_with = "lenient")]
    pub claude_code: Option<ClaudeMeta>,
    /// Codex's adapter marks MCP tool calls.
    #[serde(default, deserialize_with = "lenient")]
    pub is_mcp_tool_call: Option<bool>,
    /// Codex's adapter marks subagent activity.
    #[serde(default, deserialize_with = "lenient")]
    pub codex: Option<CodexMeta>,
}

/// `_meta.terminal_info`.
#[derive(Debug, Deserialize)]
pub(super) struct TerminalInfo {
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `_meta.terminal_output` / `_meta.terminal_output_delta`.
#[derive(Debug, Deserialize)]
pub(super) struct TerminalData {
    pub data: String,
}

/// `_meta.terminal_exit`; a malformed code is unknown.
#[derive(Debug, Deserialize)]
pub(super) struct TerminalExit {
    #[serde(default, deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
}

/// `_meta.claudeCode`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ClaudeMeta {
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_response: Option<Value>,
}

/// `_meta.codex`.
#[derive(Debug, Deserialize)]
pub(super) struct CodexMeta {
    #[serde(default)]
    pub subagent: Option<Value>,
}

// ----------------------------------------------------------------- requests ----

/// `session/prompt` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptParams {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub prompt: Option<Vec<ContentBlock>>,
}

/// Params that name a session and maybe a working directory (`session/new`, `session/load`,
/// `session/resume`, `session/cancel`).
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionParams {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `session/request_permission` params.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PermissionParams {
    #[serde(default)]
    pub session_id: Option<String>,
    pub tool_call: ToolCall,
    #[serde(default, deserialize_with = "lenient")]
    pub options: Option<Vec<PermissionOption>>,
}

/// One answer a permission request offers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PermissionOption {
    pub option_id: String,
    #[serde(default)]
    pub kind: Option<String>,
}

/// Params of the `terminal/*` requests.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TerminalParams {
    pub terminal_id: String,
}

// ---------------------------------------------------------------- responses ----

/// Any result, read for the fields that identify it when its request is not in the input
/// (the agent's stdout alone).
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct AnyResult {
    // `initialize`
    #[serde(default, deserialize_with = "lenient")]
    pub agent_info: Option<Implementation>,
    // `session/new`
    #[serde(default, deserialize_with = "lenient")]
    pub session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub models: Option<Models>,
    #[serde(default, deserialize_with = "lenient")]
    pub config_options: Option<Vec<ConfigOption>>,
    // `session/prompt`
    #[serde(default, deserialize_with = "lenient")]
    pub stop_reason: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub usage: Option<PromptUsage>,
    // `session/request_permission`
    #[serde(default, deserialize_with = "lenient")]
    pub outcome: Option<PermissionOutcome>,
    // `terminal/output` and `terminal/wait_for_exit`
    #[serde(default, deserialize_with = "lenient")]
    pub output: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub truncated: Option<bool>,
    #[serde(default, deserialize_with = "lenient")]
    pub exit_status: Option<ExitStatus>,
    #[serde(default, deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
}

/// `agentInfo`.
#[derive(Debug, Deserialize)]
pub(super) struct Implementation {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
}

/// `models` (unstable): the model the session starts with.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Models {
    #[serde(default)]
    pub current_model_id: Option<String>,
}

/// A session config option; the one of category `model` names the model.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ConfigOption {
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub current_value: Option<Value>,
}

/// `usage` of a prompt response (unstable; Codex's adapter sends it).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cached_read_tokens: Option<u64>,
    #[serde(default)]
    pub cached_write_tokens: Option<u64>,
}

/// The answer to a permission request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PermissionOutcome {
    pub outcome: String,
    #[serde(default)]
    pub option_id: Option<String>,
}

/// A terminal's exit status as the client reports it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ExitStatus {
    #[serde(default, deserialize_with = "lenient")]
    pub exit_code: Option<i64>,
}
