//! The Claude Code stream-json wire shapes this projection writes (snake_case, `type` plus
//! `subtype` discriminators), and Claude's own tool vocabulary: a shell call is `Bash` with
//! a `command`, a read is `Read` with a `file_path`, … so Claude readers know them.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::event::{ErrorInfo, Event, ToolKind, ToolStarted};

/// One output line: its kind and the run-wide sequence number.
#[derive(Serialize)]
pub struct Line<'a> {
    #[serde(flatten)]
    pub kind: Kind<'a>,
    pub seq: u64,
}

/// The `type` of a line.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Kind<'a> {
    System(System<'a>),
    Assistant(Message<'a>),
    User(Message<'a>),
    Result(Box<Final>),
}

/// `system` lines, by `subtype`.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum System<'a> {
    Init {
        session_id: &'a str,
        cwd: Option<&'a str>,
        model: Option<&'a str>,
        tools: &'a [String],
        mcp_servers: [(); 0],
        provider: Option<&'a str>,
        provider_version: Option<&'a str>,
    },
    Warning {
        session_id: &'a str,
        message: &'a str,
        category: Option<&'a str>,
    },
    CompactBoundary {
        session_id: &'a str,
        compact_metadata: Compact<'a>,
    },
}

#[derive(Serialize)]
pub struct Compact<'a> {
    pub trigger: &'a str,
}

/// An `assistant` or `user` line.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
pub struct Message<'a> {
    pub message: Inner<'a>,
    /// Claude writes `null` for the root agent.
    #[serialize_always]
    pub parent_tool_use_id: Option<&'a str>,
    pub session_id: &'a str,
    pub tool_use_result: Option<ToolUseResult>,
}

impl<'a> Message<'a> {
    /// A line of `ev`'s session and agent.
    pub fn new(ev: &'a Event, message: Inner<'a>, tool_use_result: Option<ToolUseResult>) -> Message<'a> {
        Message { message, parent_tool_use_id: ev.parent_id.as_deref(), session_id: &ev.session_id, tool_use_result }
    }
}

/// The Anthropic message inside a line.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
pub struct Inner<'a> {
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<&'static str>,
    pub role: &'static str,
    pub model: Option<&'a str>,
    pub content: Vec<Block<'a>>,
}

/// Content blocks.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block<'a> {
    Text { text: &'a str },
    Thinking { thinking: &'a str, signature: &'static str },
    ToolUse { id: &'a str, name: String, input: Value },
    ToolResult { tool_use_id: &'a str, content: String, is_error: bool },
}

/// Claude's side field on a tool result: structured for a shell command, else the text.
#[derive(Serialize)]
#[serde(untagged)]
pub enum ToolUseResult {
    Text(String),
    Shell { stdout: String, stderr: String, interrupted: bool },
}

/// The one terminal `result` line.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
pub struct Final {
    pub subtype: &'static str,
    pub is_error: bool,
    pub duration_ms: Option<u64>,
    pub num_turns: u64,
    pub result: String,
    pub session_id: String,
    pub total_cost_usd: Option<f64>,
    pub usage: Option<ClaudeUsage>,
    pub permission_denials: Vec<Denial>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// The toolkit's status word (`completed`, `failed`, `cancelled`, …).
    pub status: &'static str,
    pub error: Option<ErrorInfo>,
}

/// Token counts under Claude's names.
#[serde_with::skip_serializing_none]
#[derive(Serialize)]
pub struct ClaudeUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
}

/// One entry of `permission_denials`.
#[derive(Serialize, Clone, Debug)]
pub struct Denial {
    pub tool_name: String,
    pub tool_use_id: String,
    pub tool_input: Value,
}

/// The call under Claude's tool name, with its input carrying the key Claude uses for the
/// target (`command`, `file_path`, `pattern`, `url`, `description`).
pub fn claude_tool(s: &ToolStarted) -> (String, Value) {
    let keep = |names: &[&str], default: &str| {
        if names.contains(&s.name.as_str()) {
            s.name.clone()
        } else {
            default.to_owned()
        }
    };
    let (name, key, value) = match s.kind {
        ToolKind::Shell => ("Bash".to_owned(), "command", s.command.as_ref().or(s.target.as_ref())),
        ToolKind::Read => (keep(&["Read", "NotebookRead"], "Read"), "file_path", s.target.as_ref()),
        ToolKind::Edit => {
            (keep(&["Edit", "Write", "MultiEdit", "NotebookEdit"], "Edit"), "file_path", s.target.as_ref())
        }
        ToolKind::Search => (keep(&["Grep", "Glob", "WebSearch"], "Grep"), "pattern", s.target.as_ref()),
        ToolKind::Fetch => (keep(&["WebFetch", "WebSearch"], "WebFetch"), "url", s.target.as_ref()),
        ToolKind::Agent => (keep(&["Task", "Agent"], "Task"), "description", s.target.as_ref()),
        ToolKind::Mcp if s.qualified.starts_with("mcp__") => (s.qualified.clone(), "", None),
        ToolKind::Mcp => (format!("mcp__{}", s.qualified.replace('/', "__")), "", None),
        ToolKind::Other => (s.name.clone(), "", None),
    };
    let mut input = match &s.input {
        Some(Value::Object(m)) => m.clone(),
        Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
        None => Map::new(),
    };
    if let Some(v) = value {
        input.entry(key).or_insert_with(|| Value::String(v.clone()));
    }
    (name, Value::Object(input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(name: &str, kind: ToolKind, command: Option<&str>, target: Option<&str>) -> ToolStarted {
        ToolStarted {
            tool_call_id: "c1".into(),
            name: name.into(),
            qualified: format!("x/{name}"),
            kind,
            target: target.map(Into::into),
            input: None,
            command: command.map(Into::into),
            cwd: None,
        }
    }

    #[test]
    fn tools_get_claude_names_and_keys() {
        let (n, i) = claude_tool(&started("shell", ToolKind::Shell, Some("ls -la"), None));
        assert_eq!((n.as_str(), i.to_string()), ("Bash", r#"{"command":"ls -la"}"#.to_owned()));
        let (n, i) = claude_tool(&started("apply_patch", ToolKind::Edit, None, Some("/a/b.txt")));
        assert_eq!((n.as_str(), i.to_string()), ("Edit", r#"{"file_path":"/a/b.txt"}"#.to_owned()));
        let (n, _) = claude_tool(&started("Write", ToolKind::Edit, None, Some("/a")));
        assert_eq!(n, "Write");
        let (n, _) = claude_tool(&started("search", ToolKind::Mcp, None, None));
        assert_eq!(n, "mcp__x__search");
    }
}
