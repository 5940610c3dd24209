//! The wire format of Claude Code's stream-json, as serde types. Only the fields the parser
//! reads are declared; everything else is ignored.

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Wire {
    System(System),
    Assistant {
        message: Message,
        parent_tool_use_id: Option<String>,
        session_id: Option<String>,
    },
    User {
        message: Message,
        parent_tool_use_id: Option<String>,
        tool_use_result: Option<ToolUseResult>,
        session_id: Option<String>,
        #[serde(default)]
        timestamp: Option<String>,
    },
    Result(Result),
    StreamEvent {
        event: StreamEvent,
        parent_tool_use_id: Option<String>,
    },
}

impl Wire {
    pub fn timestamp(&self) -> Option<&str> {
        match self {
            Wire::User { timestamp, .. } => timestamp.as_deref(),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct System {
    pub subtype: String,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub model: Option<String>,
    pub tools: Option<Vec<String>>,
    pub claude_code_version: Option<String>,
    pub attempt: Option<u64>,
    pub max_retries: Option<u64>,
    pub error_status: Option<u64>,
    pub compact_metadata: Option<CompactMetadata>,
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
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Content {
    Text(String),
    Blocks(Vec<Block>),
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
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Block {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: Option<Content>,
        #[serde(default)]
        is_error: bool,
    },
    #[serde(other)]
    Other,
}

/// The structured result beside a tool result: Bash's streams, or anything else.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum ToolUseResult {
    Shell {
        stdout: String,
        stderr: Option<String>,
        #[serde(rename = "persistedOutputPath")]
        persisted_output_path: Option<String>,
        #[serde(default)]
        interrupted: bool,
    },
    File {
        #[serde(rename = "type")]
        kind: Option<String>,
        #[serde(rename = "filePath")]
        file_path: String,
    },
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
pub(super) struct Result {
    pub subtype: String,
    #[serde(default)]
    pub is_error: bool,
    pub api_error_status: Option<u16>,
    pub duration_ms: Option<u64>,
    pub result: Option<String>,
    pub stop_reason: Option<String>,
    pub session_id: Option<String>,
    pub total_cost_usd: Option<f64>,
    pub usage: Option<ResultUsage>,
    #[serde(default)]
    pub permission_denials: Vec<Denial>,
}

#[derive(Deserialize)]
pub(super) struct ResultUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct Denial {
    pub tool_use_id: String,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum StreamEvent {
    MessageStart { message: StreamMessage },
    ContentBlockDelta { delta: Delta },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
pub(super) struct StreamMessage {
    pub id: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(other)]
    Other,
}

/// The `type`s Claude Code defines.
pub(super) const KNOWN: [&str; 5] = ["system", "assistant", "user", "result", "stream_event"];
