//! The tools of Claude-shaped streams: what each tool name does (Claude Code's `Bash`,
//! `Edit`, … and Qwen Code's `run_shell_command`, `write_file`, …), and the facts some of
//! them say only in their result text (Qwen's `Command: … Exit Code: N` block).

use serde_json::Value;

use crate::engine::{Engine, ToolContext};
use crate::event::{PlanEntry, PlanStatus, ToolKind, ToolStarted};

/// Tool names, their kind, and the argument naming what they work on (the command, for
/// shell tools).
const TOOLS: &[(&str, ToolKind, &[&str])] = &[
    // Claude Code
    ("Bash", ToolKind::Shell, &["command"]),
    ("BashOutput", ToolKind::Shell, &["command"]),
    ("Edit", ToolKind::Edit, &["file_path"]),
    ("Write", ToolKind::Edit, &["file_path"]),
    ("MultiEdit", ToolKind::Edit, &["file_path"]),
    ("NotebookEdit", ToolKind::Edit, &["notebook_path"]),
    ("Read", ToolKind::Read, &["file_path"]),
    ("Grep", ToolKind::Search, &["pattern", "path"]),
    ("Glob", ToolKind::Search, &["pattern", "path"]),
    ("LS", ToolKind::Search, &["pattern", "path"]),
    ("WebSearch", ToolKind::Search, &["query"]),
    ("WebFetch", ToolKind::Fetch, &["url"]),
    ("Task", ToolKind::Agent, &["description"]),
    ("Agent", ToolKind::Agent, &["description"]),
    // Qwen Code
    ("run_shell_command", ToolKind::Shell, &["command"]),
    ("write_file", ToolKind::Edit, &["file_path"]),
    ("edit", ToolKind::Edit, &["file_path"]),
    ("replace", ToolKind::Edit, &["file_path"]),
    ("notebook_edit", ToolKind::Edit, &["notebook_path", "file_path"]),
    ("read_file", ToolKind::Read, &["file_path", "absolute_path"]),
    ("read_many_files", ToolKind::Read, &["paths"]),
    ("grep_search", ToolKind::Search, &["pattern", "path"]),
    ("glob", ToolKind::Search, &["pattern", "path"]),
    ("list_directory", ToolKind::Search, &["path"]),
    ("web_search", ToolKind::Search, &["query"]),
    ("web_fetch", ToolKind::Fetch, &["url"]),
    ("agent", ToolKind::Agent, &["description"]),
    ("task", ToolKind::Agent, &["description"]),
];

/// Tools whose input is the agent's plan (a todo list).
const PLANS: [&str; 2] = ["TodoWrite", "todo_write"];
/// Tools that ask the user a question: an approval exchange of kind question, which the
/// tool's result (the answer, or its refusal) settles.
pub(super) const QUESTIONS: [&str; 1] = ["AskUserQuestion"];

/// Announces a tool call; returns the file it edits, for edit tools.
pub(super) fn tool_use(
    engine: &mut Engine,
    id: &str,
    name: String,
    input: Value,
    parent: Option<String>,
) -> Option<String> {
    let field = |keys: &[&str]| keys.iter().find_map(|k| input.get(k)?.as_str()).map(str::to_owned);
    let (kind, arg) = match TOOLS.iter().find(|(n, ..)| *n == name) {
        Some((_, kind, keys)) => (*kind, field(keys)),
        None if name.starts_with("mcp__") => (ToolKind::Mcp, None),
        None => (ToolKind::Other, None),
    };
    let (target, command) = if kind == ToolKind::Shell { (None, arg) } else { (arg, None) };
    if PLANS.contains(&name.as_str()) {
        if let Some(todos) = input.get("todos").and_then(Value::as_array) {
            engine.plan(todos.iter().filter_map(plan_entry).collect());
        }
    }
    let asked = QUESTIONS.contains(&name.as_str()).then(|| question(&input));
    let short = name.rsplit("__").next().unwrap_or(&name).to_owned();
    let edits = (kind == ToolKind::Edit).then(|| target.clone()).flatten();
    let started = ToolStarted {
        tool_call_id: id.to_owned(),
        name: short,
        qualified: name,
        kind,
        target,
        input: Some(input),
        command,
        cwd: None,
    };
    engine.tool_started(started, ToolContext { parent_id: parent });
    if let Some(question) = asked {
        engine.question_asked(id, Some(id), Some(question));
    }
    edits
}

/// The question an `AskUserQuestion` call asks: its questions' texts, one per line.
fn question(input: &Value) -> String {
    let texts: Vec<&str> = input
        .get("questions")
        .and_then(Value::as_array)
        .map(|qs| qs.iter().filter_map(|q| q.get("question")?.as_str()).collect())
        .unwrap_or_default();
    if texts.is_empty() {
        "the agent asks the user a question".into()
    } else {
        texts.join("\n")
    }
}

/// True when a call's input asks for it to run in the background.
pub(super) fn runs_in_background(input: &Value) -> bool {
    ["run_in_background", "is_background"].iter().any(|k| input.get(k).and_then(Value::as_bool) == Some(true))
}

fn plan_entry(todo: &Value) -> Option<PlanEntry> {
    let content = todo.get("content")?.as_str()?.to_owned();
    let status = match todo.get("status").and_then(Value::as_str) {
        Some("completed") => PlanStatus::Completed,
        Some("in_progress") => PlanStatus::InProgress,
        _ => PlanStatus::Pending,
    };
    Some(PlanEntry { content, status })
}

/// A shell result as Qwen Code writes it for the model:
/// `Command: …\nDirectory: …\nOutput: …\nError: …\nExit Code: N\nSignal: …\n…`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ShellBlock<'a> {
    pub output: &'a str,
    /// The error the shell reported, when not `(none)`.
    pub error: Option<&'a str>,
    pub exit_code: Option<i64>,
}

/// Reads a [`ShellBlock`]; `None` when the text is not one.
pub(super) fn shell_block(text: &str) -> Option<ShellBlock<'_>> {
    if !text.starts_with("Command: ") {
        return None;
    }
    let start = text.find("\nOutput: ")? + "\nOutput: ".len();
    // The fields after the output are fixed lines; the output itself may hold anything.
    let tail = text[start..].rfind("\nExit Code: ").map(|i| start + i)?;
    let error_at = text[start..tail].rfind("\nError: ").map(|i| start + i);
    let output = &text[start..error_at.unwrap_or(tail)];
    let error = error_at.map(|i| &text[i + "\nError: ".len()..tail]).filter(|e| *e != "(none)");
    let code = text[tail + "\nExit Code: ".len()..].lines().next().unwrap_or("");
    let output = if output == "(empty)" { "" } else { output };
    Some(ShellBlock { output, error, exit_code: code.trim().parse().ok() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qwen_shell_block_gives_its_output_error_and_exit_code() {
        let text = "Command: printf 'a\\nb'; exit 4\nDirectory: (root)\nOutput: line1\nline2\nError: (none)\nExit Code: 4\nSignal: (none)\nProcess Group PGID: (none)";
        assert_eq!(shell_block(text), Some(ShellBlock { output: "line1\nline2", error: None, exit_code: Some(4) }));
        let text = "Command: x\nDirectory: (root)\nOutput: (empty)\nError: spawn failed\nExit Code: (none)\nSignal: 9";
        assert_eq!(shell_block(text), Some(ShellBlock { output: "", error: Some("spawn failed"), exit_code: None }));
        assert_eq!(shell_block("line1\nline2"), None);
        assert_eq!(shell_block("Command: ls\nno output field"), None);
    }

    #[test]
    fn qwen_and_claude_tools_have_kinds_and_targets() {
        let kind = |n: &str| TOOLS.iter().find(|(name, ..)| *name == n).map(|(_, k, _)| *k);
        assert_eq!(kind("run_shell_command"), Some(ToolKind::Shell));
        assert_eq!(kind("write_file"), Some(ToolKind::Edit));
        assert_eq!(kind("Bash"), Some(ToolKind::Shell));
        assert!(runs_in_background(&serde_json::json!({"command": "sleep 9", "run_in_background": true})));
        assert!(!runs_in_background(&serde_json::json!({"command": "ls", "is_background": false})));
    }
}
