//! What one ACP tool update says about its call's output and exit code (docs/contract.md §5). ACP
//! leaves shell output to the agents, and each adapter has its own dialect:
//!
//! - Codex: `_meta.terminal_output_delta` (or `terminal_output`) deltas, then
//!   `rawOutput.formatted_output` and `_meta.terminal_exit`;
//! - Claude: `_meta.terminal_output` whole snapshots and `_meta.terminal_exit`, else a plain
//!   string `rawOutput` that may start with `Exit code N`; `_meta.claudeCode.toolResponse`
//!   carries Claude Code's structured stdout/stderr;
//! - OpenCode: cumulative text `content`, then `rawOutput.output` and `rawOutput.metadata.exit`;
//! - Auggie: `<output>`, `<stderr>` and `<return-code>` inside `rawOutput.output`;
//! - OMP: cumulative `content` with the command echoed first (the engine removes the echo);
//! - Copilot: `rawOutput.content` ending in a `<shellId: N completed with exit code N>` line
//!   (removed: metadata), and the exit code in `rawOutput.contents[]`'s `shell_exit` item.
//!
//! This module only reads; the engine weighs exit sources and accumulates the text.

use serde_json::Value;

use super::wire::{ToolCall, ToolContent};
use crate::provider::copilot::without_shell_trailer;
use crate::engine::{parse_exit_prefix, ExitSource, ToolStatus, Update};
use crate::event::Stream;

/// What the reader knows about the call beyond the update itself.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Context {
    /// `_meta.terminal_output` carries deltas (Codex's adapter), not snapshots (Claude's).
    pub terminal_deltas: bool,
    /// Claude's adapter: its terminal text is Claude Code's result text, which starts
    /// `Exit code N` when the command failed.
    pub claude: bool,
    /// Structured stdout/stderr already arrived, so a plain text result only repeats it.
    pub structured: bool,
    /// Text `content` is output (not for a first announcement, where it describes the call).
    pub content_is_output: bool,
    /// The update ends the call: its text is the final aggregate.
    pub last: bool,
}

/// One piece of output text and how it relates to what came before.
#[derive(Debug, PartialEq)]
pub(super) struct Piece {
    pub stream: Stream,
    pub update: Update,
    pub text: String,
}

/// Everything one update says about output.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Reading {
    pub pieces: Vec<Piece>,
    pub exits: Vec<(ExitSource, i64)>,
    /// The agent itself shortened the output.
    pub truncated: bool,
    /// The update carried structured stdout/stderr.
    pub structured: bool,
}

impl Reading {
    fn piece(&mut self, stream: Stream, update: Update, text: &str) {
        self.pieces.push(Piece { stream, update, text: text.to_owned() });
    }
}

/// Reads one `tool_call` or `tool_call_update`.
pub(super) fn read(call: &ToolCall, cx: Context) -> Reading {
    let mut r = Reading::default();
    if let Some(meta) = &call.meta {
        if let Some(resp) = meta.claude_code.as_ref().and_then(|c| c.tool_response.as_ref()) {
            structured_streams(&mut r, resp, Update::Snapshot);
        }
        if let Some(d) = &meta.terminal_output_delta {
            r.piece(Stream::Combined, Update::Delta, &d.data);
        }
        if let Some(d) = &meta.terminal_output {
            if cx.terminal_deltas {
                r.piece(Stream::Combined, Update::Delta, &d.data);
            } else if !cx.claude {
                r.piece(Stream::Combined, Update::Snapshot, &d.data);
            } else if !(cx.structured || r.structured) {
                // Claude's terminal text joins the structured stdout and stderr, when they
                // came, into one: it would only repeat them.
                let text = exit_prefix(&mut r, &d.data);
                r.piece(Stream::Combined, Update::Snapshot, text);
            }
        }
        if let Some(code) = meta.terminal_exit.as_ref().and_then(|e| e.exit_code) {
            r.exits.push((ExitSource::Explicit, code));
        }
    }
    let cx = Context { structured: cx.structured || r.structured, ..cx };
    let from_raw = call.raw_output.as_ref().is_some_and(|v| raw_output(&mut r, v, cx));
    if !from_raw && cx.content_is_output {
        if let Some(text) = content_text(call.content.as_deref().unwrap_or_default()) {
            r.piece(Stream::Combined, if cx.last { Update::Final } else { Update::Snapshot }, &text);
        }
    }
    r
}

/// `rawOutput` in its three shapes; true when it supplied output text.
fn raw_output(r: &mut Reading, v: &Value, cx: Context) -> bool {
    match v {
        Value::String(s) => {
            let text = exit_prefix(r, s);
            final_text(r, text, cx);
            true
        }
        Value::Array(items) => {
            let texts: Vec<&str> = items.iter().filter_map(|i| i.get("text")?.as_str()).collect();
            if !texts.is_empty() {
                final_text(r, &texts.join("\n"), cx);
            }
            !texts.is_empty()
        }
        Value::Object(map) => {
            let exit = ["exit_code", "exitCode"]
                .iter()
                .find_map(|k| map.get(*k))
                .or_else(|| v.pointer("/metadata/exit"))
                .or_else(|| shell_exit(v));
            if let Some(code) = exit.and_then(Value::as_i64) {
                r.exits.push((ExitSource::Structured, code));
            }
            if v.pointer("/metadata/truncated").and_then(Value::as_bool) == Some(true) {
                r.truncated = true;
            }
            let text = |k: &str| map.get(k).and_then(Value::as_str);
            let whole = text("aggregated_output").or_else(|| text("output")).or_else(|| text("content"));
            match (text("formatted_output"), whole) {
                (Some(formatted), _) if !is_shortened(formatted) => final_text(r, formatted, cx),
                (_, Some(whole)) => final_text(r, without_shell_trailer(whole), cx),
                (Some(preview), None) => r.piece(Stream::Combined, Update::Preview, preview),
                (None, None) => return structured_streams(r, v, Update::Final),
            }
            true
        }
        _ => false,
    }
}

/// Copilot's exit code: `rawOutput.contents[]` holds a `shell_exit` item with `exitCode`.
fn shell_exit(v: &Value) -> Option<&Value> {
    let contents = v.get("contents")?.as_array()?;
    contents.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("shell_exit"))?.get("exitCode")
}

/// Claude Code's failed Bash result starts `Exit code N`: that line is metadata (the exit,
/// parsed from text), and the output is what follows it.
fn exit_prefix<'a>(r: &mut Reading, text: &'a str) -> &'a str {
    match parse_exit_prefix(text) {
        Some((code, rest)) => {
            r.exits.push((ExitSource::ParsedText, code));
            rest
        }
        None => text,
    }
}

/// Codex shortens `formatted_output` for the model: a `Total output lines: N` header and a
/// `…N tokens truncated…` cut. Such a text is a preview, not the whole output.
fn is_shortened(text: &str) -> bool {
    text.starts_with("Total output lines: ")
        || text.contains(" tokens truncated…")
        || text.contains(" chars truncated…")
}

/// Separate `stdout` / `stderr` string fields, when the agent gives them.
fn structured_streams(r: &mut Reading, v: &Value, update: Update) -> bool {
    let mut any = false;
    for (key, stream) in [("stdout", Stream::Stdout), ("stderr", Stream::Stderr)] {
        if let Some(text) = v.get(key).and_then(Value::as_str) {
            r.piece(stream, update, text);
            any = true;
        }
    }
    r.structured |= any;
    any
}

/// A final output text: a shortened preview, Auggie's tagged streams, or plain combined text.
fn final_text(r: &mut Reading, text: &str, cx: Context) {
    if text.trim_start().starts_with("<persisted-output>") {
        r.piece(Stream::Combined, Update::Preview, text);
    } else if let Some(tagged) = Tagged::parse(text) {
        if let Some(out) = tagged.stdout {
            r.piece(Stream::Stdout, Update::Final, out);
        }
        if let Some(err) = tagged.stderr {
            r.piece(Stream::Stderr, Update::Final, err);
        }
        if let Some(code) = tagged.exit_code {
            r.exits.push((ExitSource::ParsedText, code));
        }
    } else if !cx.structured {
        r.piece(Stream::Combined, Update::Final, text);
    }
}

/// The text blocks of a call's `content`, joined; `None` when there are none.
fn content_text(content: &[ToolContent]) -> Option<String> {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            ToolContent::Content { content } => content.text(),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// Auggie's tool result: `<output>…</output>`, `<stderr>…</stderr>` and
/// `<return-code>N</return-code>`, in that order, each optional.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Tagged<'a> {
    pub stdout: Option<&'a str>,
    pub stderr: Option<&'a str>,
    pub exit_code: Option<i64>,
}

impl<'a> Tagged<'a> {
    /// The tagged fields of `text`, or `None` when it has none of the tags. The body of a
    /// tag runs to the last closing tag before the next field, so output that itself
    /// mentions `</output>` stays whole.
    pub fn parse(text: &'a str) -> Option<Tagged<'a>> {
        let mut t = Tagged::default();
        let mut rest = text;
        let mut found = false;
        for tag in ["output", "stderr", "return-code"] {
            let Some((body, after)) = tagged_field(rest, tag) else { continue };
            found = true;
            rest = after;
            match tag {
                "output" => t.stdout = Some(body),
                "stderr" => t.stderr = Some(body),
                _ => t.exit_code = body.trim().parse().ok(),
            }
        }
        found.then_some(t)
    }
}

/// The body of `<tag>…</tag>` in `s` and the text after it.
fn tagged_field<'a>(s: &'a str, tag: &str) -> Option<(&'a str, &'a str)> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = s.find(&open)? + open.len();
    let body = &s[start..];
    // The next field's opening tag bounds this one's search for its closing tag.
    let limit = ["<stderr>", "<return-code>"]
        .iter()
        .filter(|n| **n != open)
        .filter_map(|n| body.find(n))
        .min()
        .unwrap_or(body.len());
    let end = body[..limit].rfind(&close).or_else(|| body.find(&close))?;
    Some((&body[..end], &body[end + close.len()..]))
}

/// Claude's adapter reports a refused or aborted permission only as the failed call's text.
pub(super) fn claude_refusal(raw_output: Option<&Value>) -> Option<ToolStatus> {
    let text = raw_output?.as_str()?;
    if text.contains("Tool use aborted") {
        Some(ToolStatus::Cancelled)
    } else if text.contains("refused permission")
        || text.contains(" was blocked")
        || (text.contains("requested permissions to") && text.contains("haven't granted it yet"))
    {
        Some(ToolStatus::Denied)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(v: Value) -> ToolCall {
        serde_json::from_value(v).unwrap()
    }

    fn update(v: Value) -> Reading {
        read(&call(v), Context { content_is_output: true, ..Context::default() })
    }

    fn piece(stream: Stream, update: Update, text: &str) -> Piece {
        Piece { stream, update, text: text.into() }
    }

    #[test]
    fn auggie_tags_give_separate_streams_and_a_return_code() {
        let t = Tagged::parse("<output>ok\n</output>\n<stderr>warn\n</stderr>\n<return-code>3</return-code>").unwrap();
        assert_eq!(t, Tagged { stdout: Some("ok\n"), stderr: Some("warn\n"), exit_code: Some(3) });
        let t = Tagged::parse("<output>a </output> b\n</output>\n<return-code>0</return-code>").unwrap();
        assert_eq!(t.stdout, Some("a </output> b\n"));
        assert_eq!(t.stderr, None);
        assert_eq!(Tagged::parse("<return-code>x</return-code>").unwrap().exit_code, None);
        assert_eq!(Tagged::parse("plain output\n"), None);
    }

    #[test]
    fn auggie_output_has_no_tags_left() {
        let r = update(json!({"toolCallId": "c", "status": "completed",
            "rawOutput": {"output": "<output>ok\n</output>\n<stderr></stderr>\n<return-code>0</return-code>"}}));
        assert_eq!(r.pieces, [piece(Stream::Stdout, Update::Final, "ok\n"), piece(Stream::Stderr, Update::Final, "")]);
        assert_eq!(r.exits, [(ExitSource::ParsedText, 0)]);
    }

    #[test]
    fn codex_prefers_formatted_output_and_terminal_exit() {
        let r = read(
            &call(json!({"toolCallId": "c", "status": "failed",
                "rawOutput": {"stdout": "x", "stderr": "y", "formatted_output": "line1\n", "exit_code": 4},
                "_meta": {"terminal_output": {"terminal_id": "c", "data": "line1\n"}, "terminal_exit": {"exit_code": 4}}})),
            Context { terminal_deltas: true, last: true, content_is_output: true, ..Context::default() },
        );
        assert_eq!(
            r.pieces,
            [piece(Stream::Combined, Update::Delta, "line1\n"), piece(Stream::Combined, Update::Final, "line1\n")]
        );
        assert_eq!(r.exits, [(ExitSource::Explicit, 4), (ExitSource::Structured, 4)]);
    }

    #[test]
    fn a_shortened_formatted_output_gives_way_to_the_whole_aggregated_output() {
        let r = update(json!({"toolCallId": "c", "status": "completed",
            "rawOutput": {"formatted_output": "Total output lines: 3\n\na…9 tokens truncated…c\n", "aggregated_output": "a\nb\nc\n"}}));
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Final, "a\nb\nc\n")]);
        let r = update(
            json!({"toolCallId": "c", "status": "completed", "rawOutput": {"formatted_output": "a…9 tokens truncated…c\n"}}),
        );
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Preview, "a…9 tokens truncated…c\n")]);
    }

    #[test]
    fn claude_terminal_output_is_a_snapshot_and_exit_text_is_metadata() {
        let r = update(json!({"toolCallId": "c", "_meta": {"terminal_output": {"data": "a\nb\n"}}}));
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Snapshot, "a\nb\n")]);
        let r = update(json!({"toolCallId": "c", "status": "failed", "rawOutput": "Exit code 4\nline1\nline2",
            "content": [{"type": "content", "content": {"type": "text", "text": "```\nExit code 4\nline1\nline2\n```"}}]}));
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Final, "line1\nline2")]);
        assert_eq!(r.exits, [(ExitSource::ParsedText, 4)]);
    }

    #[test]
    fn claude_structured_result_wins_over_its_text_copy() {
        let resp =
            json!({"toolCallId": "c", "_meta": {"claudeCode": {"toolResponse": {"stdout": "big", "stderr": ""}}}});
        let r = update(resp);
        assert!(r.structured);
        assert_eq!(
            r.pieces,
            [piece(Stream::Stdout, Update::Snapshot, "big"), piece(Stream::Stderr, Update::Snapshot, "")]
        );
        let last = call(json!({"toolCallId": "c", "status": "completed", "rawOutput": "big"}));
        let cx = Context { structured: true, last: true, content_is_output: true, ..Context::default() };
        assert_eq!(read(&last, cx).pieces, []);
        let preview = call(
            json!({"toolCallId": "c", "status": "completed", "rawOutput": "<persisted-output>\nOutput too large"}),
        );
        assert_eq!(read(&preview, cx).pieces[0].update, Update::Preview);
    }

    #[test]
    fn opencode_content_is_cumulative_and_metadata_exit_is_structured() {
        let r = update(json!({"toolCallId": "c", "status": "in_progress",
            "content": [{"type": "content", "content": {"type": "text", "text": "one\n"}}]}));
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Snapshot, "one\n")]);
        let r = update(json!({"toolCallId": "c", "status": "completed",
            "rawOutput": {"output": "one\ntwo\n", "metadata": {"exit": 7, "truncated": true}}}));
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Final, "one\ntwo\n")]);
        assert_eq!(r.exits, [(ExitSource::Structured, 7)]);
        assert!(r.truncated);
    }

    #[test]
    fn a_structured_raw_output_without_text_falls_back_to_content() {
        let r = read(
            &call(json!({"toolCallId": "c", "status": "completed", "rawOutput": {"durationMs": 5},
                "content": [{"type": "content", "content": {"type": "text", "text": "$ git statusOn branch main\n"}}]})),
            Context { content_is_output: true, last: true, ..Context::default() },
        );
        assert_eq!(r.pieces, [piece(Stream::Combined, Update::Final, "$ git statusOn branch main\n")]);
    }

    #[test]
    fn announcement_content_is_not_output_and_bad_exit_metadata_is_unknown() {
        let c = call(
            json!({"toolCallId": "c", "content": [{"type": "content", "content": {"type": "text", "text": "Run a shell command"}}],
            "_meta": {"terminal_exit": {"exit_code": "four"}}}),
        );
        assert_eq!(read(&c, Context::default()), Reading::default());
    }

    #[test]
    fn claude_refusals_are_read_from_text() {
        let refusal = |s: &str| claude_refusal(Some(&Value::String(s.into())));
        assert_eq!(refusal("User refused permission to run tool"), Some(ToolStatus::Denied));
        assert_eq!(refusal("Tool permission request failed: Error: Tool use aborted"), Some(ToolStatus::Cancelled));
        assert_eq!(refusal("line1"), None);
    }
}
