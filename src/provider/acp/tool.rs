//! ACP tool calls: `tool_call` announcements and `tool_call_update`s turned into the
//! engine's tool lifecycle. A call announced twice is one tool (the engine refines it), an
//! update of a call that already ended is absorbed, and an edit that completes reports the
//! files its diffs touch as `file.changed`.

use std::collections::HashMap;

use serde_json::Value;

use super::output::{self, Context, Reading};
use super::wire::{Meta, ToolCall, ToolContent};
use super::Dialect;
use crate::engine::{Engine, ExitSource, ToolContext, ToolStatus, Update};
use crate::event::{FileChange, Stream, ToolKind, ToolStarted};

/// What the parser remembers about open calls beyond what the engine keeps.
#[derive(Debug, Default)]
pub(super) struct Tools {
    notes: HashMap<String, Note>,
    /// Terminal id → the call that embeds it (`content: [{type: terminal}]`).
    terminals: HashMap<String, String>,
    /// The client sent `session/cancel` during the current turn.
    pub cancel_requested: bool,
}

#[derive(Debug, Default)]
struct Note {
    /// Announced with `_meta.terminal_info`: an unknown agent's `terminal_output` is a delta.
    terminal_deltas: bool,
    /// Structured stdout/stderr arrived.
    structured: bool,
    /// The files its diffs (or a delete) touch, reported when it completes.
    changes: Vec<(String, FileChange)>,
    /// A permission request named the call, and whether its answer (when the input has
    /// it) allowed the call.
    permission: Option<bool>,
}

impl Tools {
    /// True when a first announcement is still empty (Claude's adapter sends each call
    /// twice, the first time without input), or is a command without its command (Kilo's
    /// names only the working directory, and its update the command): it is held until its
    /// input comes, so that the call starts with its command.
    pub fn is_placeholder(call: &ToolCall, engine: &Engine) -> bool {
        let commandless = call.kind.as_deref() == Some("execute")
            && call.raw_input.as_ref().is_some_and(|i| i.get("command").is_none());
        (!Tools::has_input(call) || commandless)
            && matches!(call.status.as_deref(), None | Some("pending"))
            && !engine.tool_is_known(&call.tool_call_id)
    }

    /// True when the call carries a non-empty `rawInput`.
    pub fn has_input(call: &ToolCall) -> bool {
        match &call.raw_input {
            None | Some(Value::Null) => false,
            Some(Value::Object(m)) => !m.is_empty(),
            Some(_) => true,
        }
    }

    /// Handles a `tool_call` (`announced`) or a `tool_call_update`.
    pub fn update(&mut self, engine: &mut Engine, dialect: Dialect, call: ToolCall, announced: bool) {
        let id = call.tool_call_id.clone();
        if engine.tool_is_known(&id) && !engine.tool_is_open(&id) {
            return; // a late update of a call that already ended changes nothing
        }
        engine.ensure_turn();
        if announced || !engine.tool_is_open(&id) || call.raw_input.is_some() {
            let parent_id = Meta::parent_tool_use_id(call.meta.as_ref());
            engine.tool_started(started(&call), ToolContext { parent_id });
        }
        let note = self.notes.entry(id.clone()).or_default();
        note.terminal_deltas |= call.meta.as_ref().is_some_and(|m| m.terminal_info.is_some());
        learn_changes(note, &call);
        for c in call.content.iter().flatten() {
            if let ToolContent::Terminal { terminal_id } = c {
                self.terminals.insert(terminal_id.clone(), id.clone());
            }
        }
        let end = status_of(call.status.as_deref());
        // Which `terminal_output` is a delta is the agent's dialect: Claude's adapter sends
        // whole snapshots although it announces `terminal_info` too (claude-agent-acp 0.101).
        let terminal_deltas = match dialect {
            Dialect::Claude => false,
            Dialect::Codex => true,
            Dialect::Unknown | Dialect::Other => note.terminal_deltas,
        };
        let cx = Context {
            terminal_deltas,
            claude: dialect == Dialect::Claude,
            structured: note.structured,
            // An update that carries the call's input refines it (claude-agent-acp): its
            // content describes the call, as an announcement's does.
            content_is_output: (!announced && call.raw_input.is_none()) || end.is_some(),
            last: end.is_some(),
        };
        let reading = output::read(&call, cx);
        note.structured |= reading.structured;
        apply(engine, &id, reading);
        let Some(mut status) = end else { return };
        if status == ToolStatus::Failed && dialect == Dialect::Claude {
            status = claude_end(&call, note, self.cancel_requested).unwrap_or(status);
        }
        let note = self.notes.remove(&id).unwrap_or_default();
        if status == ToolStatus::Completed {
            for (path, change) in note.changes {
                engine.file_changed(path, change, Some(id.clone()));
            }
        }
        engine.tool_ended(&id, status, None);
        self.terminals.retain(|_, t| *t != id);
    }

    /// A permission request names the call.
    pub fn permission_asked(&mut self, id: &str) {
        if let Some(note) = self.notes.get_mut(id) {
            note.permission.get_or_insert(false);
        }
    }

    /// The client answered the call's permission request.
    pub fn permission_answered(&mut self, id: &str, allowed: bool) {
        if let Some(note) = self.notes.get_mut(id) {
            note.permission = Some(allowed);
        }
    }

    /// The client's answer to `terminal/output` or `terminal/wait_for_exit` for a terminal
    /// it runs on the agent's behalf: the whole output so far and, once known, the exit.
    pub fn terminal(
        &mut self,
        engine: &mut Engine,
        terminal: &str,
        text: Option<&str>,
        truncated: bool,
        exit: Option<i64>,
    ) {
        let Some(id) = self.terminals.get(terminal) else { return };
        let mut r = Reading { truncated, ..Reading::default() };
        if let Some(text) = text {
            r.pieces.push(output::Piece { stream: Stream::Combined, update: Update::Snapshot, text: text.to_owned() });
        }
        r.exits.extend(exit.map(|c| (ExitSource::Explicit, c)));
        apply(engine, &id.clone(), r);
    }
}

fn apply(engine: &mut Engine, id: &str, r: Reading) {
    for p in r.pieces {
        engine.tool_output(id, p.stream, p.update, &p.text);
    }
    for (source, code) in r.exits {
        engine.tool_exit(id, source, code);
    }
    if r.truncated {
        engine.tool_truncated(id);
    }
}

/// How a call that Claude's adapter reports `failed` really ended: its
/// `_meta.claudeCode.nonExecutionKind` first, a denial the adapter reports with
/// `toolResponse.decisionReasonType`, then the refusal texts of older versions.
fn claude_end(call: &ToolCall, note: &Note, cancel_requested: bool) -> Option<ToolStatus> {
    let claude = call.meta.as_ref().and_then(|m| m.claude_code.as_ref());
    match claude.and_then(|c| c.non_execution_kind.as_deref()) {
        Some("interrupted" | "cancelled") => return Some(ToolStatus::Cancelled),
        // Claude Code also stamps a command that an interrupt killed `user-rejected`: the
        // user refused it only where a permission prompt for it was refused (or never
        // answered in the input) and the turn was not being cancelled.
        Some("user-rejected") => {
            let refused = note.permission == Some(false) && !cancel_requested;
            return Some(if refused { ToolStatus::Denied } else { ToolStatus::Cancelled });
        }
        Some(k) if k == "permission-rule" || k.starts_with("automode") => return Some(ToolStatus::Denied),
        _ => {}
    }
    let reason = claude.and_then(|c| c.tool_response.as_ref()?.get("decisionReasonType"));
    if reason.is_some_and(|r| !r.is_null()) {
        return Some(ToolStatus::Denied);
    }
    output::claude_refusal(call.raw_output.as_ref())
}

/// ACP statuses that end a call (`cancelled` is not ACP's, but agents send it).
fn status_of(status: Option<&str>) -> Option<ToolStatus> {
    match status? {
        "completed" => Some(ToolStatus::Completed),
        "failed" | "error" => Some(ToolStatus::Failed),
        "cancelled" | "canceled" => Some(ToolStatus::Cancelled),
        _ => None,
    }
}

fn learn_changes(note: &mut Note, call: &ToolCall) {
    let mut add = |path: &str, change: FileChange| match note.changes.iter_mut().find(|(p, _)| p == path) {
        Some(c) => c.1 = change,
        None => note.changes.push((path.to_owned(), change)),
    };
    for c in call.content.iter().flatten() {
        if let ToolContent::Diff { path, old_text, meta } = c {
            let change = match meta.as_ref().and_then(|m| m.kind.as_deref()) {
                Some("add") => FileChange::Add,
                Some("delete") => FileChange::Delete,
                Some(_) => FileChange::Update,
                None if old_text.is_none() => FileChange::Add,
                None => FileChange::Update,
            };
            add(path, change);
        }
    }
    if call.kind.as_deref() == Some("delete") {
        for l in call.locations.iter().flatten() {
            add(&l.path, FileChange::Delete);
        }
    }
}

/// The engine's view of a call's start: name, kind, target, command and working directory.
fn started(call: &ToolCall) -> ToolStarted {
    let meta = call.meta.as_ref();
    let input = call.raw_input.as_ref().filter(|v| !v.is_null() && v.as_object().is_none_or(|m| !m.is_empty()));
    let (name, qualified, kind) = identity(call, meta, input);
    let field = |k: &str| input.and_then(|i| i.get(k));
    let command = if kind == ToolKind::Shell { field("command").and_then(command_of) } else { None };
    let cwd = field("cwd")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| meta.and_then(|m| m.terminal_info.as_ref()?.cwd.clone()));
    let target = call
        .locations
        .iter()
        .flatten()
        .map(|l| l.path.clone())
        .next()
        .or_else(|| {
            call.content.iter().flatten().find_map(|c| match c {
                ToolContent::Diff { path, .. } => Some(path.clone()),
                _ => None,
            })
        })
        .or_else(|| {
            ["file_path", "path", "url", "pattern", "query"].iter().find_map(|k| Some(field(k)?.as_str()?.to_owned()))
        })
        .or_else(|| call.title.clone().filter(|_| kind != ToolKind::Shell));
    ToolStarted {
        tool_call_id: call.tool_call_id.clone(),
        name,
        qualified,
        kind,
        target,
        input: input.cloned(),
        command,
        cwd,
    }
}

/// Name, qualified name and kind. Claude's adapter names its tools in `_meta.claudeCode`;
/// otherwise the ACP kind is the name. MCP calls and subagents are told apart by `_meta`.
fn identity(call: &ToolCall, meta: Option<&Meta>, input: Option<&Value>) -> (String, String, ToolKind) {
    let acp_kind = call.kind.as_deref();
    let mut kind = match acp_kind {
        Some("execute") => ToolKind::Shell,
        Some("edit" | "delete" | "move") => ToolKind::Edit,
        Some("read") => ToolKind::Read,
        Some("search") => ToolKind::Search,
        Some("fetch") => ToolKind::Fetch,
        Some(_) => ToolKind::Other,
        // An update that only streams terminal output is a shell command.
        None if meta.is_some_and(|m| {
            m.terminal_output.is_some() || m.terminal_output_delta.is_some() || m.terminal_exit.is_some()
        }) =>
        {
            ToolKind::Shell
        }
        None => ToolKind::Other,
    };
    let claude_name = meta.and_then(|m| m.claude_code.as_ref()?.tool_name.clone());
    if matches!(claude_name.as_deref(), Some("Task" | "Agent"))
        || meta.is_some_and(|m| m.codex.as_ref().is_some_and(|c| c.subagent.is_some()))
    {
        kind = ToolKind::Agent;
    }
    if let Some(name) = claude_name {
        if name.starts_with("mcp__") {
            kind = ToolKind::Mcp;
        }
        return (name.clone(), name, kind);
    }
    if meta.and_then(|m| m.is_mcp_tool_call) == Some(true) {
        let part = |k: &str| input.and_then(|i| i.get(k)?.as_str());
        if let (Some(server), Some(tool)) = (part("server"), part("tool")) {
            return (tool.to_owned(), format!("mcp__{server}__{tool}"), ToolKind::Mcp);
        }
    }
    let name = acp_kind.unwrap_or(if kind == ToolKind::Shell { "execute" } else { "unknown" }).to_owned();
    let qualified = format!("acp/{name}");
    (name, qualified, kind)
}

/// A command as a string, or as an argv whose `sh -c`/`bash -lc` wrapper is dropped.
fn command_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(argv) => {
            let parts: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match parts.as_slice() {
                [] => None,
                [shell, flag, cmd] if is_shell(shell) && flag.starts_with('-') && flag.ends_with('c') => {
                    Some((*cmd).to_owned())
                }
                _ => Some(parts.join(" ")),
            }
        }
        _ => None,
    }
}

fn is_shell(program: &str) -> bool {
    matches!(program.rsplit('/').next(), Some("sh" | "bash" | "zsh" | "dash" | "fish"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(v: Value) -> ToolCall {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn codex_argv_commands_lose_their_shell_wrapper() {
        assert_eq!(
            command_of(&json!(["/bin/bash", "-lc", "printf 'a'; exit 4"])).as_deref(),
            Some("printf 'a'; exit 4")
        );
        assert_eq!(command_of(&json!(["git", "status"])).as_deref(), Some("git status"));
        assert_eq!(command_of(&json!("ls -la")).as_deref(), Some("ls -la"));
        assert_eq!(command_of(&json!([])), None);
    }

    #[test]
    fn kinds_follow_acp_and_the_adapters_meta() {
        let s = started(&call(
            json!({"toolCallId": "t", "kind": "execute", "title": "ls", "rawInput": {"command": "ls", "cwd": "/w"}}),
        ));
        assert_eq!(
            (s.name.as_str(), s.kind, s.command.as_deref(), s.cwd.as_deref(), s.target),
            ("execute", ToolKind::Shell, Some("ls"), Some("/w"), None)
        );
        let s = started(&call(
            json!({"toolCallId": "t", "kind": "think", "title": "Task", "_meta": {"claudeCode": {"toolName": "Task"}}}),
        ));
        assert_eq!((s.name.as_str(), s.kind), ("Task", ToolKind::Agent));
        let s = started(&call(
            json!({"toolCallId": "t", "kind": "execute", "rawInput": {"server": "gh", "tool": "search"}, "_meta": {"is_mcp_tool_call": true}}),
        ));
        assert_eq!((s.name.as_str(), s.qualified.as_str(), s.kind), ("search", "mcp__gh__search", ToolKind::Mcp));
        let s = started(&call(
            json!({"toolCallId": "t", "kind": "read", "title": "Read it", "locations": [{"path": "/a.txt"}]}),
        ));
        assert_eq!((s.kind, s.target.as_deref()), (ToolKind::Read, Some("/a.txt")));
        let s = started(&call(json!({"toolCallId": "t", "_meta": {"terminal_output_delta": {"data": "x"}}})));
        assert_eq!(s.kind, ToolKind::Shell);
        let s = started(&call(json!({"toolCallId": "t", "kind": "switch_mode", "title": "Ready"})));
        assert_eq!((s.kind, s.target.as_deref()), (ToolKind::Other, Some("Ready")));
    }

    #[test]
    fn diffs_say_whether_a_file_was_added_or_updated() {
        let mut note = Note::default();
        learn_changes(
            &mut note,
            &call(json!({"toolCallId": "t", "content": [
            {"type": "diff", "path": "/new.txt", "oldText": null, "newText": "x"},
            {"type": "diff", "path": "/old.txt", "oldText": "a", "newText": "b"},
            {"type": "diff", "path": "/gone.txt", "newText": "", "_meta": {"kind": "delete"}}]})),
        );
        learn_changes(
            &mut note,
            &call(json!({"toolCallId": "t", "content": [{"type": "diff", "path": "/new.txt", "newText": "y"}]})),
        );
        assert_eq!(
            note.changes,
            [
                ("/new.txt".into(), FileChange::Add),
                ("/old.txt".into(), FileChange::Update),
                ("/gone.txt".into(), FileChange::Delete)
            ]
        );
    }
}
