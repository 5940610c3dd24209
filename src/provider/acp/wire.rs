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
        #[serde(rename = "_meta", default, deserialize_with = "lenient")]
        meta: Option<Meta>,
        /// Shared by the chunks of one message: a new id begins a new message.
        #[serde(rename = "messageId", default, deserialize_with = "lenient")]
        message_id: Option<String>,
    },
    AgentThoughtChunk {
        content: ContentBlock,
        #[serde(rename = "_meta", default, deserialize_with = "lenient")]
        meta: Option<Meta>,
        #[serde(rename = "messageId", default, deserialize_with = "lenient")]
        message_id: Option<String>,
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
    SessionInfoUpdate {
        #[serde(rename = "_meta", default, deserialize_with = "lenient")]
        meta: Option<Meta>,
    },
    UsageUpdate {
        #[serde(default, deserialize_with = "lenient")]
        cost: Option<Cost>,
    },
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

impl ToolCall {
    /// Takes in a later report of the same call: what it says replaces what this one said.
    pub fn absorb(&mut self, later: ToolCall) {
        fn take<T>(mine: &mut Option<T>, theirs: Option<T>) {
            if theirs.is_some() {
                *mine = theirs;
            }
        }
        take(&mut self.title, later.title);
        take(&mut self.kind, later.kind);
        take(&mut self.status, later.status);
        take(&mut self.content, later.content);
        take(&mut self.locations, later.locations);
        take(&mut self.raw_input, later.raw_input);
        take(&mut self.raw_output, later.raw_output);
        match (&mut self.meta, later.meta) {
            (Some(mine), Some(theirs)) => {
                take(&mut mine.terminal_info, theirs.terminal_info);
                take(&mut mine.terminal_output, theirs.terminal_output);
                take(&mut mine.terminal_output_delta, theirs.terminal_output_delta);
                take(&mut mine.terminal_exit, theirs.terminal_exit);
                match (&mut mine.claude_code, theirs.claude_code) {
                    (Some(mine), Some(theirs)) => {
                        take(&mut mine.tool_name, theirs.tool_name);
                        take(&mut mine.tool_response, theirs.tool_response);
                        take(&mut mine.parent_tool_use_id, theirs.parent_tool_use_id);
                        take(&mut mine.non_execution_kind, theirs.non_execution_kind);
                    }
                    (mine, theirs) => take(mine, theirs),
                }
                take(&mut mine.is_mcp_tool_call, theirs.is_mcp_tool_call);
                take(&mut mine.codex, theirs.codex);
            }
            (mine, theirs) => take(mine, theirs),
        }
    }
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

/// `usage_update.cost`: the session's cumulative cost.
#[derive(Debug, Deserialize)]
pub(super) struct Cost {
    pub amount: f64,
    pub currency: String,
}

/// The `_meta` keys of updates that agents use to say what ACP itself does not.
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
    /// Codex's adapter: subagent activity, the thread's status and its errors.
    #[serde(default, deserialize_with = "lenient")]
    pub codex: Option<CodexMeta>,
}

impl Meta {
    /// The tool call that spawned this child agent's update (Claude's adapter).
    pub fn parent_tool_use_id(meta: Option<&Meta>) -> Option<String> {
        meta?.claude_code.as_ref()?.parent_tool_use_id.clone()
    }

    /// True for a warning that Claude's adapter sends as agent text (an SDK notice of level
    /// `warning`, written `**Warning:** …`): not the agent's answer.
    pub fn is_claude_warning(meta: Option<&Meta>) -> bool {
        meta.and_then(|m| m.claude_code.as_ref()).is_some_and(|c| {
            c.kind.as_deref() == Some("informational") && c.level.as_deref() == Some("warning")
        })
    }
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
    /// The child agent's spawning tool call.
    #[serde(default, deserialize_with = "lenient")]
    pub parent_tool_use_id: Option<String>,
    /// Why a failed call never ran or stopped: `interrupted`, `cancelled`, `user-rejected`,
    /// `permission-rule`, `automode-*`, … (Claude Code's `non_execution_kind`).
    #[serde(default, deserialize_with = "lenient")]
    pub non_execution_kind: Option<String>,
    /// `informational` on a notice the adapter folds into agent text, with its `level`.
    #[serde(default, deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub level: Option<String>,
}

/// `_meta.codex`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CodexMeta {
    #[serde(default)]
    pub subagent: Option<Value>,
    /// `{type: active | idle | systemError | …}`, on `session_info_update`.
    #[serde(default, deserialize_with = "lenient")]
    pub thread_status: Option<ThreadStatus>,
    /// An error of another turn or one that will be retried, on `session_info_update`.
    #[serde(default, deserialize_with = "lenient")]
    pub error: Option<CodexError>,
}

/// `_meta.codex.threadStatus`.
#[derive(Debug, Deserialize)]
pub(super) struct ThreadStatus {
    #[serde(rename = "type")]
    pub kind: String,
}

/// `_meta.codex.error`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CodexError {
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub will_retry: bool,
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

/// `elicitation/create` params: a form or a URL, tied to a session (maybe a tool call) or
/// to a request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ElicitationParams {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
}

/// `_auth/status_update` params (claude-agent-acp and codex-acp): who the agent is logged
/// in as; `kind: none` is a known logged-out state.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AuthStatusParams {
    pub auth_status: AuthStatus,
}

/// `authStatus`.
#[derive(Debug, Deserialize)]
pub(super) struct AuthStatus {
    pub kind: String,
    #[serde(default)]
    pub label: Option<String>,
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
    // `elicitation/create`
    #[serde(default, deserialize_with = "lenient")]
    pub action: Option<String>,
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

/// `usage` of a prompt response (unstable in ACP). Its `totalTokens` is the "sum of all
/// token types", so `inputTokens` counts no cached token; both new adapters send it so.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct PromptUsage {
    #[serde(default, deserialize_with = "lenient")]
    pub total_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub thought_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub cached_read_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
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
