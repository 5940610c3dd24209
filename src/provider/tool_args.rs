//! Tool calls of the dialects whose tools take JSON arguments and report one result
//! (OpenCode, Gemini CLI): which kind a tool name is, and which arguments name its command,
//! target and working directory. The dialects differ only in naming, so each one gives a
//! [`ToolNames`] table and the reading is shared.

use serde_json::Value;

use crate::event::{ToolKind, ToolStarted};

/// One dialect's tool names.
pub(super) struct ToolNames {
    /// The prefix of qualified names (`opencode` in `opencode/bash`).
    pub provider: &'static str,
    /// Built-in tools and their kinds.
    pub kinds: &'static [(&'static str, ToolKind)],
    /// What joins server and tool in an MCP tool's name (OpenCode `server_tool`, Gemini
    /// `server__tool`): an unknown name containing it is an MCP tool.
    pub mcp_separator: &'static str,
}

/// Arguments naming what a tool works on, most telling first (a grep's pattern says more
/// than the folder it searches).
const TARGET: [&str; 8] = ["filePath", "file_path", "absolute_path", "url", "pattern", "query", "path", "dir_path"];
/// Arguments naming a shell command's working directory.
const CWD: [&str; 3] = ["workdir", "dir_path", "cwd"];
/// Arguments naming what a child agent is asked to do.
const AGENT_TARGET: [&str; 2] = ["description", "subagent_type"];

impl ToolNames {
    /// The kind of the tool `name`.
    pub fn kind(&self, name: &str) -> ToolKind {
        match self.kinds.iter().find(|(n, _)| *n == name) {
            Some((_, kind)) => *kind,
            None if name.contains(self.mcp_separator) => ToolKind::Mcp,
            None => ToolKind::Other,
        }
    }

    /// The `tool.started` payload of call `id` to tool `name` with arguments `input`.
    pub fn started(&self, id: &str, name: &str, input: Option<Value>) -> ToolStarted {
        let kind = self.kind(name);
        let args = input.as_ref();
        let (command, cwd, target) = match kind {
            ToolKind::Shell => (string_arg(args, &["command"]), string_arg(args, &CWD), None),
            ToolKind::Agent => (None, None, string_arg(args, &AGENT_TARGET)),
            _ => (None, None, target(args)),
        };
        ToolStarted {
            tool_call_id: id.to_owned(),
            name: name.to_owned(),
            qualified: format!("{}/{name}", self.provider),
            kind,
            target,
            input,
            command,
            cwd,
        }
    }
}

/// The path, URL or pattern a tool's arguments name.
pub(super) fn target(args: Option<&Value>) -> Option<String> {
    string_arg(args, &TARGET)
}

/// The first of `keys` that holds a non-empty string.
fn string_arg(args: Option<&Value>, keys: &[&str]) -> Option<String> {
    let args = args?;
    keys.iter().find_map(|k| args.get(k)?.as_str().filter(|s| !s.is_empty())).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NAMES: ToolNames =
        ToolNames { provider: "p", kinds: &[("sh", ToolKind::Shell), ("task", ToolKind::Agent)], mcp_separator: "__" };

    #[test]
    fn kinds_come_from_the_table_and_mcp_names_from_the_separator() {
        assert_eq!(NAMES.kind("sh"), ToolKind::Shell);
        assert_eq!(NAMES.kind("github__create_issue"), ToolKind::Mcp);
        assert_eq!(NAMES.kind("mystery"), ToolKind::Other);
    }

    #[test]
    fn a_shell_call_names_its_command_and_cwd_not_a_target() {
        let s = NAMES.started("c1", "sh", Some(json!({"command": "ls", "dir_path": "/w", "path": "x"})));
        assert_eq!((s.command.as_deref(), s.cwd.as_deref(), s.target), (Some("ls"), Some("/w"), None));
        assert_eq!(s.qualified, "p/sh");
    }

    #[test]
    fn the_most_telling_argument_is_the_target() {
        let s = NAMES.started("c1", "grep", Some(json!({"path": "src", "pattern": "fn main"})));
        assert_eq!(s.target.as_deref(), Some("fn main"));
        let s = NAMES.started("c2", "task", Some(json!({"description": "review", "prompt": "…"})));
        assert_eq!(s.target.as_deref(), Some("review"));
        assert_eq!(NAMES.started("c3", "x", None).target, None);
    }
}
