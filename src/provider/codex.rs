//! Codex `exec --json`: `thread.*`, `turn.*` and `item.*` events. Items carry their own
//! lifecycle (`item.started` → `item.updated` → `item.completed`); commands report
//! `exit_code` and a cumulative `aggregated_output`.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::usage::cache_inclusive;
use super::{LineError, Parse};
use crate::provider::errors::provider_error;
use crate::engine::{Engine, ExitSource, ToolContext, ToolStatus, Update, UsageScope};
use crate::event::{
    FileChange, Outcome, PlanEntry, PlanStatus, Piece, Role, SessionStarted, Stream, ToolKind, ToolStarted, Usage,
};

/// The Codex parser.
#[derive(Debug, Default)]
pub struct Codex;

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Wire<'a> {
    #[serde(rename = "thread.started")]
    ThreadStarted {
        #[serde(borrow)]
        thread_id: Option<Cow<'a, str>>,
    },
    #[serde(rename = "turn.started")]
    TurnStarted {},
    #[serde(rename = "turn.completed")]
    TurnCompleted { usage: Option<WireUsage> },
    #[serde(rename = "turn.failed")]
    TurnFailed { error: Option<WireError> },
    #[serde(rename = "item.started")]
    ItemStarted { item: Item },
    #[serde(rename = "item.updated")]
    ItemUpdated { item: Item },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: Item },
    #[serde(rename = "error")]
    Error { message: String },
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    input_tokens: Option<u64>,
    cached_input_tokens: Option<u64>,
    cache_write_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl WireUsage {
    /// Codex counts the tokens read from and written to the cache in `input_tokens`.
    pub(super) fn canonical(&self) -> Usage {
        cache_inclusive(self.input_tokens, self.output_tokens, self.cached_input_tokens, self.cache_write_input_tokens)
    }
}

#[derive(Deserialize)]
struct WireError {
    message: String,
}

#[derive(Deserialize)]
struct Item {
    id: String,
    #[serde(flatten)]
    kind: ItemKind,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ItemKind {
    AgentMessage {
        text: String,
    },
    Reasoning {
        text: String,
    },
    CommandExecution {
        command: String,
        #[serde(default)]
        aggregated_output: String,
        exit_code: Option<i64>,
        status: Option<String>,
    },
    FileChange {
        changes: Vec<Change>,
        status: Option<String>,
    },
    McpToolCall {
        server: String,
        tool: String,
        arguments: Option<Value>,
        result: Option<Value>,
        error: Option<Value>,
        status: Option<String>,
    },
    WebSearch {
        query: String,
    },
    TodoList {
        items: Vec<Todo>,
    },
    /// A call to another agent thread (`spawn_agent`, `send_input`, `wait`, `close_agent`).
    CollabToolCall {
        tool: Option<String>,
        prompt: Option<String>,
        #[serde(default)]
        receiver_thread_ids: Vec<String>,
        /// Each receiving thread's state: `{status, message}`.
        #[serde(default)]
        agents_states: serde_json::Map<String, Value>,
        status: Option<String>,
    },
    Error {
        message: String,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct Change {
    path: String,
    kind: String,
}

#[derive(Deserialize)]
struct Todo {
    text: String,
    completed: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

impl Parse for Codex {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        let wire: Wire<'_> = serde_json::from_str(line).map_err(|e| LineError::classify(line, e, &KNOWN))?;
        match wire {
            Wire::ThreadStarted { thread_id } => engine.session_started(
                thread_id.as_deref(),
                SessionStarted { provider: "codex".into(), ..Default::default() },
            ),
            Wire::TurnStarted {} => engine.turn_started(None),
            Wire::TurnCompleted { usage } => {
                if let Some(u) = usage {
                    engine.usage(u.canonical(), UsageScope::Cumulative);
                }
                engine.turn_ended(Outcome::Completed, None, None);
            }
            Wire::TurnFailed { error } => {
                let message = error.map_or_else(|| "the turn failed".to_owned(), |e| e.message);
                engine.turn_ended(Outcome::Failed, None, Some(provider_error(&message, None)));
            }
            Wire::Error { message } => {
                // An error after its turn failed belongs to that turn: it opens no other.
                if engine.turns() == 0 {
                    engine.ensure_turn();
                }
                let category = provider_error(&message, None).category;
                engine.warning(message, Some(category.as_str().to_owned()));
            }
            Wire::ItemStarted { item } => return item_event(engine, item, Phase::Started, line),
            Wire::ItemUpdated { item } => return item_event(engine, item, Phase::Updated, line),
            Wire::ItemCompleted { item } => return item_event(engine, item, Phase::Completed, line),
        }
        Ok(())
    }
}

const KNOWN: [&str; 8] = [
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
];

fn item_event(engine: &mut Engine, item: Item, phase: Phase, line: &str) -> Result<(), LineError> {
    let id = item.id;
    engine.ensure_turn();
    match item.kind {
        ItemKind::AgentMessage { text } if phase == Phase::Completed => engine.text(Role::Assistant, text, Piece::First, None),
        ItemKind::Reasoning { text } if phase == Phase::Completed => engine.reasoning(text, Piece::First, None),
        ItemKind::AgentMessage { .. } | ItemKind::Reasoning { .. } => {}
        ItemKind::CommandExecution { command, aggregated_output, exit_code, status } => {
            let command = unwrap_shell(&command);
            start(engine, &id, "shell", ToolKind::Shell, None, Some(command), None);
            let update = if phase == Phase::Completed { Update::Final } else { Update::Snapshot };
            if !aggregated_output.is_empty() || phase == Phase::Completed {
                engine.tool_output(&id, Stream::Combined, update, &aggregated_output);
            }
            if let Some(code) = exit_code {
                engine.tool_exit(&id, ExitSource::Structured, code);
            }
            if phase == Phase::Completed {
                ended(engine, &id, end_of(status.as_deref()));
            }
        }
        ItemKind::FileChange { changes, status } => {
            let target = changes.first().map(|c| c.path.clone());
            start(engine, &id, "apply_patch", ToolKind::Edit, target, None, None);
            if phase == Phase::Completed {
                let end = end_of(status.as_deref());
                if end == Ok(ToolStatus::Completed) {
                    for c in changes {
                        engine.file_changed(c.path, change_of(&c.kind), Some(id.clone()));
                    }
                }
                ended(engine, &id, end);
            }
        }
        ItemKind::McpToolCall { server, tool, arguments, result, error, status } => {
            let qualified = format!("mcp__{server}__{tool}");
            if !engine.tool_is_known(&id) {
                let started = ToolStarted {
                    tool_call_id: id.clone(),
                    name: tool,
                    qualified,
                    kind: ToolKind::Mcp,
                    target: None,
                    input: arguments,
                    command: None,
                    cwd: None,
                };
                engine.tool_started(started, ToolContext::default());
            }
            if phase == Phase::Completed {
                if let Some(r) = result.as_ref().or(error.as_ref()) {
                    let text = match r {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    engine.tool_output(&id, Stream::Combined, Update::Final, &text);
                }
                let end = if error.as_ref().is_some_and(|e| !e.is_null()) {
                    Ok(ToolStatus::Failed)
                } else {
                    end_of(status.as_deref())
                };
                ended(engine, &id, end);
            }
        }
        ItemKind::WebSearch { query } => {
            start(engine, &id, "web_search", ToolKind::Search, Some(query), None, None);
            if phase == Phase::Completed {
                engine.tool_ended(&id, ToolStatus::Completed, None);
            }
        }
        ItemKind::TodoList { items } => {
            let entries = items
                .into_iter()
                .map(|t| PlanEntry {
                    content: t.text,
                    status: if t.completed { PlanStatus::Completed } else { PlanStatus::Pending },
                })
                .collect();
            engine.plan(entries);
        }
        ItemKind::CollabToolCall { tool, prompt, receiver_thread_ids, agents_states, status } => {
            let name = tool.unwrap_or_else(|| "collab".into());
            if !engine.tool_is_known(&id) {
                let input = serde_json::json!({ "prompt": prompt, "receiver_thread_ids": receiver_thread_ids });
                let started = ToolStarted {
                    tool_call_id: id.clone(),
                    qualified: format!("codex/{name}"),
                    name,
                    kind: ToolKind::Agent,
                    target: prompt,
                    input: Some(input),
                    command: None,
                    cwd: None,
                };
                engine.tool_started(started, ToolContext::default());
            }
            if phase == Phase::Completed {
                // What each agent said back, one per line.
                let replies: Vec<&str> =
                    agents_states.values().filter_map(|s| s.get("message")?.as_str()).collect();
                if !replies.is_empty() {
                    engine.tool_output(&id, Stream::Combined, Update::Final, &replies.join("\n"));
                }
                ended(engine, &id, end_of(status.as_deref()));
            }
        }
        ItemKind::Error { message } => engine.warning(message, None),
        ItemKind::Unknown => return Err(LineError::UnknownType(item_type(line))),
    }
    Ok(())
}

fn item_type(line: &str) -> String {
    #[derive(Deserialize)]
    struct I {
        item: T,
    }
    #[derive(Deserialize)]
    struct T {
        #[serde(rename = "type")]
        kind: String,
    }
    serde_json::from_str::<I>(line).map(|i| format!("item.{}", i.item.kind)).unwrap_or_default()
}

/// A Codex file change's kind (`add`, `delete`, `update`) as the canonical change.
pub(super) fn change_of(kind: &str) -> FileChange {
    match kind {
        "add" => FileChange::Add,
        "delete" => FileChange::Delete,
        _ => FileChange::Update,
    }
}

/// Announces the call `id` to Codex's tool `name` unless it is known already.
pub(super) fn start(
    engine: &mut Engine,
    id: &str,
    name: &str,
    kind: ToolKind,
    target: Option<String>,
    command: Option<String>,
    cwd: Option<String>,
) {
    if engine.tool_is_known(id) {
        return;
    }
    engine.tool_started(ToolStarted { target, command, cwd, ..call(id, name, kind) }, ToolContext::default());
}

/// The call `id` to Codex's tool `name`, with nothing known of its arguments yet.
pub(super) fn call(id: &str, name: &str, kind: ToolKind) -> ToolStarted {
    ToolStarted {
        tool_call_id: id.to_owned(),
        name: name.to_owned(),
        qualified: format!("codex/{name}"),
        kind,
        target: None,
        input: None,
        command: None,
        cwd: None,
    }
}

/// How an item ended, by its `status`; `Err` holds a word this version does not know.
pub(super) fn end_of(status: Option<&str>) -> Result<ToolStatus, &str> {
    match status {
        None | Some("completed") => Ok(ToolStatus::Completed),
        Some("failed" | "error") => Ok(ToolStatus::Failed),
        Some("declined" | "rejected") => Ok(ToolStatus::Denied),
        Some("cancelled" | "canceled" | "aborted" | "interrupted") => Ok(ToolStatus::Cancelled),
        Some("timed_out" | "timeout") => Ok(ToolStatus::Timeout),
        Some(other) => Err(other),
    }
}

/// Ends item `id` as [`end_of`] read its status: an unknown word is never a success.
pub(super) fn ended(engine: &mut Engine, id: &str, end: Result<ToolStatus, &str>) {
    match end {
        Ok(status) => engine.tool_ended(id, status, None),
        Err(word) => engine.tool_ended_unknown(id, word),
    }
}

/// `/bin/bash -lc "<cmd>"` → `<cmd>`: Codex wraps every command in a login shell; the
/// user asked for the inner command.
pub(super) fn unwrap_shell(command: &str) -> String {
    let inner = ["/bin/bash -lc ", "bash -lc ", "/bin/zsh -lc ", "zsh -lc ", "/bin/sh -c ", "sh -c "]
        .iter()
        .find_map(|p| command.strip_prefix(p));
    let Some(inner) = inner else { return command.to_owned() };
    if let Some(s) = inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        if !s.contains('\'') {
            return s.to_owned();
        }
        return s.replace("'\\''", "'");
    }
    if let Some(s) = inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        let mut out = String::with_capacity(s.len());
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(n @ ('"' | '\\' | '$' | '`')) => out.push(n),
                    Some(n) => {
                        out.push('\\');
                        out.push(n);
                    }
                    None => out.push('\\'),
                },
                c => out.push(c),
            }
        }
        return out;
    }
    inner.to_owned()
}


/// Codex `exec --json`: its `thread.*`, `turn.*` and `item.*` types are its own.
pub(super) const DIALECT: super::Dialect = super::Dialect {
    name: "codex",
    about: "Codex exec --json",
    family: "codex",
    opens: &["thread.started"],
    claim,
    parser: || Box::new(Codex),
};

fn claim(p: &super::Probe) -> super::Claim {
    use super::Claim;
    match p.kind() {
        Some("thread.started" | "turn.started" | "turn.completed" | "turn.failed") => Claim::Yes,
        Some(t) if t.starts_with("item.") && p.get("item").is_some_and(Value::is_object) => Claim::Yes,
        // A bare `{"type":"error","message":…}` could be another agent's.
        Some("error") if p.str("message").is_some() => Claim::Maybe,
        _ => Claim::No,
    }
}

#[cfg(test)]
mod tests {
    use super::unwrap_shell;

    #[test]
    fn login_shell_wrapper_is_removed() {
        assert_eq!(
            unwrap_shell(r#"/bin/bash -lc "printf 'line1\\nline2\\n'; exit 4""#),
            r"printf 'line1\nline2\n'; exit 4"
        );
        assert_eq!(unwrap_shell("/bin/bash -lc 'sleep 30; echo done'"), "sleep 30; echo done");
        assert_eq!(unwrap_shell("bash -lc ls"), "ls");
        assert_eq!(unwrap_shell("git status"), "git status");
    }
}
