//! The event catalog: every event type of `minicode.output.v1`, defined once in the table
//! below, with the payload struct of each. From the table follow (see `table.rs`) the
//! [`Body`] enum, each type's wire name ([`Body::type_name`]), how its payload is written and
//! read in place, the dispatch to the strings it holds that are text ([`Texts`], implemented
//! beside each payload), the status its type implies (for the JSON Schema) and [`CATALOG`],
//! the list the man page and the fast readers' tests are held to.
//!
//! `summary` and the types this version does not know ([`Other`]) are the two bodies outside
//! the table: some of their fields sit at the top level, beside the envelope.

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::serde_impl::{write_other, write_summary};
use super::table::{EventType, Implied};
use super::text::{
    error_strings, map_keys, opt, opt_label, value_keys, value_strings, Label, Relabel, TextField, Texts,
};
use super::vocab::*;
use super::{Status, Summary};

catalog! {
    /// `session.started`
    SessionStarted(SessionStarted) = one "session.started", Implied::Nothing,
        r#"{"provider":"p","providerVersion":"1","model":"m","cwd":"/w","tools":["Bash"]}"#;
    /// `turn.started`
    TurnStarted(TurnStarted) = one "turn.started", Implied::Always(Status::Started), r#"{"prompt":"go"}"#;
    /// `text`
    Text(Text) = one "text", Implied::Nothing, r#"{"delta":"hi","role":"assistant"}"#;
    /// `reasoning`
    Reasoning(Reasoning) = one "reasoning", Implied::Nothing, r#"{"delta":"hmm"}"#;
    /// `tool.started`
    ToolStarted(ToolStarted) = one "tool.started", Implied::Always(Status::Started),
        r#"{"toolCallId":"c1","name":"Bash","qualified":"Bash","kind":"shell","target":"t","input":{"command":"ls"},"command":"ls","cwd":"/w"}"#;
    /// `tool.output`
    ToolOutput(ToolOutput) = one "tool.output", Implied::WhenPresent(Status::Running),
        r#"{"toolCallId":"c1","stream":"stdout","delta":"out\n"}"#;
    /// `tool.completed` and the other tool terminals; the outcome is in [`ToolEnded::outcome`].
    ToolEnded(ToolEnded) = terminal "tool", Implied::OfOutcome,
        r#"{"toolCallId":"c1","name":"Bash","kind":"shell","durationMs":5,"output":{"exit_code":1,"stdout":"o\n","stderr":"e\n","truncated":true},"error":{"category":"TOOL_ERROR","message":"m","action":"a"}}"#;
    /// `approval.requested`
    ApprovalRequested(Approval) = one "approval.requested", Implied::Always(Status::Started),
        r#"{"approvalId":"a1","toolCallId":"c1","title":"may I","kind":"permission"}"#;
    /// `approval.settled`
    ApprovalSettled(Approval) = one "approval.settled", Implied::Terminal,
        r#"{"approvalId":"a1","toolCallId":"c1","title":"may I","kind":"permission","decision":"allow_once"}"#;
    /// `plan`
    Plan(Plan) = one "plan", Implied::Nothing, r#"{"entries":[{"content":"do","status":"pending"}]}"#;
    /// `file.changed`
    FileChanged(FileChanged) = one "file.changed", Implied::Nothing,
        r#"{"path":"a.rs","change":"update","toolCallId":"c1"}"#;
    /// `usage`
    Usage(Usage) = one "usage", Implied::Nothing,
        r#"{"input_tokens":1,"output_tokens":2,"cache_read":3,"cache_write":4,"cost_usd":0.5}"#;
    /// `context.compacted`
    ContextCompacted(ContextCompacted) = one "context.compacted", Implied::Nothing, r#"{"reason":"auto"}"#;
    /// `warning`
    Warning(Warning) = one "warning", Implied::Nothing, r#"{"message":"w","category":"c"}"#;
    /// `raw`
    Raw(Raw) = one "raw", Implied::Nothing, r#"{"line":"?","reason":"not_json"}"#;
    /// `turn.completed` and the other turn terminals; the outcome is in [`TurnEnded::outcome`].
    TurnEnded(TurnEnded) = terminal "turn", Implied::OfOutcome,
        r#"{"stopReason":"end","durationMs":5,"error":{"category":"PROVIDER_ERROR","message":"m","action":"a"}}"#;
}

/// Payload of `session.started`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionStarted {
    /// Provider name (`claude-code`, `codex`, …).
    pub provider: String,
    /// Provider version, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_version: Option<String>,
    /// Model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The working directory's git branch, where the agent records it (session files do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// Tools the agent offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// The revision of the scrub stage that scrubbed every event of the session, as the
    /// stage that did it (`normalize`) says; a reader with the same revision need not scrub
    /// them again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrubbed_by: Option<String>,
}

impl Texts for SessionStarted {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        opt(f, TextField::Other, &mut self.model);
        opt(f, TextField::Other, &mut self.cwd);
        opt(f, TextField::Other, &mut self.git_branch);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        r.label(Label::Name, &mut self.provider);
        opt_label(r, Label::Name, &mut self.provider_version);
        opt_label(r, Label::Name, &mut self.scrubbed_by);
        self.tools.iter_mut().flatten().for_each(|t| r.label(Label::Name, t));
    }
}

/// Payload of `turn.started`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct TurnStarted {
    /// The user's prompt, scrubbed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

impl Texts for TurnStarted {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        opt(f, TextField::Text, &mut self.prompt);
    }

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

/// Where a text or reasoning delta stands in what the provider said: the first piece of a
/// block (a message, a content block), or the next piece of the block before it. Canonical
/// text has no block identity, so this is not written and a delta read back is a next piece;
/// it tells the stages that a secret ending a block ended there
/// ([`crate::scrub::stream::Holder`]), however the next block begins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Piece {
    /// Goes on with the delta before it, or nothing says otherwise.
    #[default]
    Next,
    /// The provider says that a new block begins here.
    First,
}

/// Payload of `text`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Text {
    /// The text.
    pub delta: String,
    /// Who wrote it.
    pub role: Role,
    /// Whether it begins a block of its role's text: not written (see [`Piece`]).
    #[serde(skip)]
    pub piece: Piece,
}

impl Texts for Text {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::Text, &mut self.delta);
    }

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

/// Payload of `reasoning`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Reasoning {
    /// Thinking text.
    pub delta: String,
    /// Whether it begins a block of thinking: not written (see [`Piece`]).
    #[serde(skip)]
    pub piece: Piece,
}

impl Texts for Reasoning {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::Text, &mut self.delta);
    }

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

/// Payload of `tool.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolStarted {
    /// The provider's call id.
    pub tool_call_id: String,
    /// Short tool name (`Bash`, `shell`, …).
    pub name: String,
    /// Fully qualified name (`mcp__server__tool`, `provider/name`).
    pub qualified: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// The path, URL or pattern it works on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The provider's input arguments, as given.
    #[serde(default, skip_serializing_if = "is_absent")]
    pub input: Option<Value>,
    /// The shell command, for shell tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Working directory of the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl Texts for ToolStarted {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        opt(f, TextField::Other, &mut self.target);
        opt(f, TextField::Input, &mut self.command);
        opt(f, TextField::Other, &mut self.cwd);
        if let Some(v) = &mut self.input {
            value_strings(v, TextField::Input, f);
        }
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        r.label(Label::Id, &mut self.tool_call_id);
        r.label(Label::Name, &mut self.name);
        r.label(Label::Name, &mut self.qualified);
        if let Some(v) = &mut self.input {
            value_keys(v, r);
        }
    }
}

/// `null` reads back as `None`, so it is not written either: an event must survive a round
/// trip through its JSON unchanged (`project --mode jsonl` writes it back byte for byte).
fn is_absent(v: &Option<Value>) -> bool {
    v.as_ref().is_none_or(Value::is_null)
}

/// Payload of `tool.output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// The call it belongs to.
    pub tool_call_id: String,
    /// Which stream.
    pub stream: Stream,
    /// The new output.
    pub delta: String,
}

impl Texts for ToolOutput {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::ToolOutput, &mut self.delta);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        r.label(Label::Id, &mut self.tool_call_id);
    }
}

/// The final output of a tool call (docs/contract.md §5).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct ShellResult {
    /// Exit code; absent when unknown, never a stand-in 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Standard output, or the combined stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// Standard error, only when the provider separates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// True when the user is not seeing everything.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// An error in the grammar of the output protocol: what happened, why, what to do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct ErrorInfo {
    /// The category.
    pub category: ErrorCategory,
    /// What happened and why.
    pub message: String,
    /// What to do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// Payload of the tool terminals (`tool.completed`, `tool.failed`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ToolEnded {
    /// How it ended; this picks the event type, it is not in the payload.
    #[serde(skip)]
    pub outcome: Outcome,
    /// The provider's call id.
    pub tool_call_id: String,
    /// Short tool name.
    pub name: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// Wall time from start to end, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Output and exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ShellResult>,
    /// Why it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
}

impl Texts for ToolEnded {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        if let Some(o) = &mut self.output {
            opt(f, TextField::ToolOutput, &mut o.stdout);
            opt(f, TextField::ToolOutput, &mut o.stderr);
        }
        error_strings(f, &mut self.error);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        r.label(Label::Id, &mut self.tool_call_id);
        r.label(Label::Name, &mut self.name);
    }
}

/// Payload of `approval.requested` and `approval.settled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The approval's id.
    pub approval_id: String,
    /// The tool call waiting on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What is asked (on requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What kind of exchange it is; absent means a permission request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ApprovalKind>,
    /// The answer (on settlements); absent when the input never said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

impl Texts for Approval {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        opt(f, TextField::Other, &mut self.title);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        r.label(Label::Id, &mut self.approval_id);
        opt_label(r, Label::Id, &mut self.tool_call_id);
    }
}

/// Payload of `plan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Plan {
    /// The plan's entries, in order.
    pub entries: Vec<PlanEntry>,
}

impl Texts for Plan {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        self.entries.iter_mut().for_each(|e| f(TextField::Text, &mut e.content));
    }

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

/// One entry of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct PlanEntry {
    /// What is to be done.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: PlanStatus,
}

/// Payload of `file.changed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct FileChanged {
    /// The file.
    pub path: String,
    /// What happened to it.
    pub change: FileChange,
    /// The tool call that changed it.
    #[serde(rename = "toolCallId", default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Texts for FileChanged {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::Other, &mut self.path);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        opt_label(r, Label::Id, &mut self.tool_call_id);
    }
}

/// Payload of `usage`: provider token counts. Unknown stays absent, never 0.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Completion tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    /// Estimated cost in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// Token counts only: no text, no label.
impl Texts for Usage {
    fn texts(&mut self, _: &mut dyn FnMut(TextField, &mut String)) {}

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

impl Usage {
    /// True when nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }

    /// True when every figure is unknown or zero: an increment that adds nothing.
    pub fn is_nothing(&self) -> bool {
        let zero = |v: Option<u64>| v.is_none_or(|v| v == 0);
        zero(self.input_tokens)
            && zero(self.output_tokens)
            && zero(self.cache_read)
            && zero(self.cache_write)
            && self.cost_usd.is_none_or(|c| c == 0.0)
    }

    /// Adds another report to this total; what neither knows stays unknown. Counts come from
    /// the input, so they saturate rather than wrap (or panic) on absurd values.
    pub fn add(&mut self, other: &Usage) {
        fn add(a: &mut Option<u64>, b: Option<u64>) {
            if let Some(b) = b {
                *a = Some(a.map_or(b, |a| a.saturating_add(b)));
            }
        }
        add(&mut self.input_tokens, other.input_tokens);
        add(&mut self.output_tokens, other.output_tokens);
        add(&mut self.cache_read, other.cache_read);
        add(&mut self.cache_write, other.cache_write);
        if let Some(c) = other.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }

    /// What this running total adds to an earlier one, field by field: the inverse of
    /// [`Usage::add`]. A figure that did not grow (or that only this one knows) is kept whole,
    /// as a total that went down means a new count began.
    pub fn since(&self, earlier: &Usage) -> Usage {
        fn grew<T: PartialOrd + std::ops::Sub<Output = T>>(earlier: Option<T>, now: Option<T>) -> Option<T> {
            match (earlier, now) {
                (Some(e), Some(n)) if n >= e => Some(n - e),
                (_, n) => n,
            }
        }
        Usage {
            input_tokens: grew(earlier.input_tokens, self.input_tokens),
            output_tokens: grew(earlier.output_tokens, self.output_tokens),
            cache_read: grew(earlier.cache_read, self.cache_read),
            cache_write: grew(earlier.cache_write, self.cache_write),
            cost_usd: grew(earlier.cost_usd, self.cost_usd),
        }
    }
}

/// Payload of `context.compacted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct ContextCompacted {
    /// Why (`auto`, `manual`, …).
    pub reason: String,
}

impl Texts for ContextCompacted {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::Other, &mut self.reason);
    }

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

/// Payload of `warning`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Warning {
    /// What happened.
    pub message: String,
    /// A category, when one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

impl Texts for Warning {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::Text, &mut self.message);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        opt_label(r, Label::Name, &mut self.category);
    }
}

/// Payload of `raw`: input that could not be understood, preserved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Raw {
    /// The line, scrubbed and bounded.
    pub line: String,
    /// Why it was not understood.
    pub reason: RawReason,
}

impl Texts for Raw {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        f(TextField::Raw, &mut self.line);
    }

    fn labels(&mut self, _: &mut dyn Relabel) {}
}

/// Payload of the turn terminals (`turn.completed`, `turn.failed`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct TurnEnded {
    /// How it ended; this picks the event type, it is not in the payload.
    #[serde(skip)]
    pub outcome: Outcome,
    /// The provider's stop reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Wall time of the turn, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Why it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
}

impl Texts for TurnEnded {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        error_strings(f, &mut self.error);
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        opt_label(r, Label::Name, &mut self.stop_reason);
    }
}

/// An event type this version does not know: its name and payload, kept whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Other {
    /// The `type` string.
    pub type_name: String,
    /// The payload as given.
    pub payload: Map<String, Value>,
    /// Top-level fields outside the envelope, as given.
    pub extra: Map<String, Value>,
}

impl Texts for Other {
    fn texts(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
        self.payload.values_mut().for_each(|v| value_strings(v, TextField::Other, f));
        self.extra.values_mut().for_each(|v| value_strings(v, TextField::Other, f));
    }

    fn labels(&mut self, r: &mut dyn Relabel) {
        r.label(Label::Name, &mut self.type_name);
        map_keys(&mut self.payload, r);
        map_keys(&mut self.extra, r);
    }
}
