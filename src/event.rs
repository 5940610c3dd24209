//! The canonical `minicode.output.v1` event: the only vocabulary shared by providers,
//! stages, projections and the summary. It imports nothing else from the crate.
//!
//! The envelope is a typed struct and each event type is a variant of [`Body`] with its
//! own payload struct. Types this version does not know are kept whole in
//! [`Body::Other`], the one explicit escape hatch, so filters never drop them.

#[cfg(feature = "schema")]
pub mod schema;
mod serde_impl;
mod skim;
mod summary;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) use serde_impl::Str;
pub use summary::{InputHealth, SessionFigures, Summary, SummaryFigures, ToolCounts, UsageTotals, Verdict};

/// The schema name every event carries.
pub const SCHEMA: &str = "minicode.output.v1";

/// One canonical event: the envelope of docs/contract.md §2 and a typed body.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `{sessionId}:{turnId}:{seq}`.
    pub event_id: String,
    /// RFC 3339 UTC with milliseconds.
    pub timestamp: String,
    /// The provider's session id, or `s1`, `s2`, … in order of appearance.
    pub session_id: String,
    /// 1-based turn counter; 0 before the first turn.
    pub turn_id: u64,
    /// Ties the events of one tool call, approval or turn together.
    pub correlation_id: Option<String>,
    /// For a child agent's events: the tool call that spawned it.
    pub parent_id: Option<String>,
    /// Who said it.
    pub source: Source,
    /// How much it matters.
    pub severity: Severity,
    /// Lifecycle status, on lifecycle events.
    pub status: Option<Status>,
    /// Which projections show it by default.
    pub visibility: Visibility,
    /// The input lines it came from.
    pub raw_ref: RawRef,
    /// The type and its payload.
    pub body: Body,
}

/// Who produced an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The provider said it.
    Agent,
    /// Tool output.
    Tool,
    /// Synthesized by the toolkit.
    Normalizer,
}

/// Event severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Diagnostic detail.
    Debug,
    /// Ordinary progress.
    Info,
    /// Something a user may want to know.
    Warning,
    /// Something failed.
    Error,
}

/// Lifecycle status of a turn, tool or approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It began.
    Started,
    /// It is under way.
    Running,
    /// It ended well.
    Completed,
    /// It ended badly.
    Failed,
    /// Permission was refused.
    Denied,
    /// The user or client cancelled it.
    Cancelled,
    /// It ran out of time.
    Timeout,
    /// The input ended before it did.
    Interrupted,
}

impl Status {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Started => "started",
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Denied => "denied",
            Status::Cancelled => "cancelled",
            Status::Timeout => "timeout",
            Status::Interrupted => "interrupted",
        }
    }

    /// True for the statuses that end a lifecycle.
    pub fn is_terminal(self) -> bool {
        !matches!(self, Status::Started | Status::Running)
    }
}

/// The projections that show an event by default, as a small set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Visibility(u8);

impl Visibility {
    /// Shown by `normal`.
    pub const NORMAL: Visibility = Visibility(1);
    /// Shown by `verbose`.
    pub const VERBOSE: Visibility = Visibility(2);
    /// Shown by `debug`.
    pub const DEBUG: Visibility = Visibility(4);
    /// Carried by machine projections.
    pub const MACHINE: Visibility = Visibility(8);
    /// Every projection.
    pub const ALL: Visibility = Visibility(15);
    /// Verbose, debug and machine: detail a normal view hides.
    pub const DETAIL: Visibility = Visibility(14);
    /// Debug and machine only.
    pub const DEBUG_ONLY: Visibility = Visibility(12);

    const NAMES: [(Visibility, &'static str); 4] = [
        (Visibility::NORMAL, "normal"),
        (Visibility::VERBOSE, "verbose"),
        (Visibility::DEBUG, "debug"),
        (Visibility::MACHINE, "machine"),
    ];

    /// True when every projection in `other` is in `self`.
    pub fn contains(self, other: Visibility) -> bool {
        self.0 & other.0 == other.0
    }

    /// The wire names, in canonical order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES.into_iter().filter(move |(v, _)| self.contains(*v)).map(|(_, n)| n)
    }

    /// Parses one wire name.
    pub fn from_name(name: &str) -> Option<Visibility> {
        Self::NAMES.into_iter().find(|(_, n)| *n == name).map(|(v, _)| v)
    }

    /// The union of two sets.
    pub fn union(self, other: Visibility) -> Visibility {
        Visibility(self.0 | other.0)
    }
}

/// Provenance: the 1-based input lines an event came from, inclusive, and, when the input
/// was several files, which file (the lines are then that file's own).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct RawRef {
    /// First line.
    pub line: u64,
    /// Last line, when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// The file, as its path was given, when the input was several files. Shared by every
    /// event of the file, so naming it costs a reference count, not a copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<std::sync::Arc<str>>,
}

impl RawRef {
    /// The lines `first..=last`.
    pub fn span(first: u64, last: u64) -> RawRef {
        RawRef { line: first, end_line: (last > first).then_some(last), file: None }
    }

    /// The last line referenced.
    pub fn last(&self) -> u64 {
        self.end_line.unwrap_or(self.line)
    }
}

/// Every event type of the catalog, with its payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Body {
    /// `session.started`
    SessionStarted(SessionStarted),
    /// `turn.started`
    TurnStarted(TurnStarted),
    /// `text`
    Text(Text),
    /// `reasoning`
    Reasoning(Reasoning),
    /// `tool.started`
    ToolStarted(ToolStarted),
    /// `tool.output`
    ToolOutput(ToolOutput),
    /// `tool.completed` and the other tool terminals; the outcome is in [`ToolEnded::outcome`].
    ToolEnded(ToolEnded),
    /// `approval.requested`
    ApprovalRequested(Approval),
    /// `approval.settled`
    ApprovalSettled(Approval),
    /// `plan`
    Plan(Plan),
    /// `file.changed`
    FileChanged(FileChanged),
    /// `usage`
    Usage(Usage),
    /// `context.compacted`
    ContextCompacted(ContextCompacted),
    /// `warning`
    Warning(Warning),
    /// `raw`
    Raw(Raw),
    /// `turn.completed` and the other turn terminals; the outcome is in [`TurnEnded::outcome`].
    TurnEnded(TurnEnded),
    /// `summary`
    Summary(Box<Summary>),
    /// A type this version does not know, kept whole.
    Other(Other),
}

/// How a tool call, turn or run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Ended well.
    #[default]
    Completed,
    /// Ended badly.
    Failed,
    /// Permission refused.
    Denied,
    /// Cancelled by user or client.
    Cancelled,
    /// Out of time.
    Timeout,
    /// The input ended first.
    Interrupted,
}

impl Outcome {
    /// Every outcome, in display order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Completed,
        Outcome::Failed,
        Outcome::Denied,
        Outcome::Cancelled,
        Outcome::Timeout,
        Outcome::Interrupted,
    ];

    /// The lifecycle status of the same name.
    pub fn status(self) -> Status {
        match self {
            Outcome::Completed => Status::Completed,
            Outcome::Failed => Status::Failed,
            Outcome::Denied => Status::Denied,
            Outcome::Cancelled => Status::Cancelled,
            Outcome::Timeout => Status::Timeout,
            Outcome::Interrupted => Status::Interrupted,
        }
    }

    /// The wire word (`completed`, `failed`, …).
    pub fn as_str(self) -> &'static str {
        self.status().as_str()
    }

    fn from_suffix(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// The error category an outcome implies when nothing more specific is known.
    pub fn default_category(self) -> Option<ErrorCategory> {
        match self {
            Outcome::Completed => None,
            Outcome::Failed => Some(ErrorCategory::ToolError),
            Outcome::Denied => Some(ErrorCategory::PermissionDenied),
            Outcome::Cancelled => Some(ErrorCategory::Cancelled),
            Outcome::Timeout => Some(ErrorCategory::Timeout),
            Outcome::Interrupted => Some(ErrorCategory::Interrupted),
        }
    }
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
    /// Tools the agent offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// Payload of `turn.started`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct TurnStarted {
    /// The user's prompt, scrubbed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// Who wrote a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The agent.
    Assistant,
    /// The user (echoed prompts, interruption notes).
    User,
    /// The system.
    System,
}

/// Payload of `text`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Text {
    /// The text.
    pub delta: String,
    /// Who wrote it.
    pub role: Role,
}

/// Payload of `reasoning`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Reasoning {
    /// Thinking text.
    pub delta: String,
}

/// What kind of thing a tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// Runs a command.
    Shell,
    /// Writes or edits files.
    Edit,
    /// Reads files.
    Read,
    /// Searches files or the web.
    Search,
    /// Fetches a URL.
    Fetch,
    /// An MCP server's tool.
    Mcp,
    /// Spawns a child agent.
    Agent,
    /// Anything else.
    Other,
}

impl ToolKind {
    /// The wire word.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Shell => "shell",
            ToolKind::Edit => "edit",
            ToolKind::Read => "read",
            ToolKind::Search => "search",
            ToolKind::Fetch => "fetch",
            ToolKind::Mcp => "mcp",
            ToolKind::Agent => "agent",
            ToolKind::Other => "other",
        }
    }
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

/// `null` reads back as `None`, so it is not written either: an event must survive a round
/// trip through its JSON unchanged (`project --mode jsonl` writes it back byte for byte).
fn is_absent(v: &Option<Value>) -> bool {
    v.as_ref().is_none_or(Value::is_null)
}

/// Which stream a piece of tool output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// One combined terminal stream.
    Combined,
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
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

/// Error categories (docs/contract.md §6, an open set).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCategory {
    /// Bad setup: auth, config, missing model.
    ConfigurationError,
    /// The input could not be understood.
    InputError,
    /// The model provider failed (HTTP errors, overload).
    ProviderError,
    /// A tool failed.
    ToolError,
    /// Permission refused.
    PermissionDenied,
    /// Cancelled.
    Cancelled,
    /// Out of time.
    Timeout,
    /// The input ended early.
    Interrupted,
    /// Turn limit reached.
    MaxTurns,
    /// Token or cost budget exhausted.
    BudgetExceeded,
    /// The model refused.
    Refused,
    /// A category this version does not know.
    Other(String),
}

impl ErrorCategory {
    /// The categories docs/contract.md §6 names.
    const KNOWN: [ErrorCategory; 11] = [
        ErrorCategory::ConfigurationError,
        ErrorCategory::InputError,
        ErrorCategory::ProviderError,
        ErrorCategory::ToolError,
        ErrorCategory::PermissionDenied,
        ErrorCategory::Cancelled,
        ErrorCategory::Timeout,
        ErrorCategory::Interrupted,
        ErrorCategory::MaxTurns,
        ErrorCategory::BudgetExceeded,
        ErrorCategory::Refused,
    ];

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCategory::ConfigurationError => "CONFIGURATION_ERROR",
            ErrorCategory::InputError => "INPUT_ERROR",
            ErrorCategory::ProviderError => "PROVIDER_ERROR",
            ErrorCategory::ToolError => "TOOL_ERROR",
            ErrorCategory::PermissionDenied => "PERMISSION_DENIED",
            ErrorCategory::Cancelled => "CANCELLED",
            ErrorCategory::Timeout => "TIMEOUT",
            ErrorCategory::Interrupted => "INTERRUPTED",
            ErrorCategory::MaxTurns => "MAX_TURNS",
            ErrorCategory::BudgetExceeded => "BUDGET_EXCEEDED",
            ErrorCategory::Refused => "REFUSED",
            ErrorCategory::Other(s) => s,
        }
    }

    fn parse(s: &str) -> ErrorCategory {
        Self::KNOWN.into_iter().find(|c| c.as_str() == s).unwrap_or_else(|| ErrorCategory::Other(s.to_owned()))
    }
}

impl Serialize for ErrorCategory {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCategory {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(ErrorCategory::parse(&s))
    }
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

/// What an approval exchange asks of the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKind {
    /// May a tool run (the default when `kind` is absent).
    Permission,
    /// The agent asks the user a question (ACP `elicitation/create`, Claude's
    /// AskUserQuestion); the answer settles it.
    Question,
}

/// The answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Allowed this once.
    AllowOnce,
    /// Allowed from now on.
    AllowAlways,
    /// Rejected this once.
    RejectOnce,
    /// Rejected from now on.
    RejectAlways,
    /// The request was cancelled.
    Cancelled,
    /// A question was answered.
    Answered,
    /// The user declined to answer a question.
    Declined,
    /// Never answered in the input.
    Unknown,
}

impl Decision {
    /// True when the tool may run.
    pub fn is_allowed(self) -> bool {
        matches!(self, Decision::AllowOnce | Decision::AllowAlways)
    }

    /// True when the user said yes: allowed a tool or answered a question.
    pub fn is_yes(self) -> bool {
        self.is_allowed() || self == Decision::Answered
    }
}

/// Payload of `plan`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Plan {
    /// The plan's entries, in order.
    pub entries: Vec<PlanEntry>,
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

/// State of a plan entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not begun.
    Pending,
    /// Under way.
    InProgress,
    /// Done.
    Completed,
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

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FileChange {
    /// Created.
    Add,
    /// Modified.
    Update,
    /// Removed.
    Delete,
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

impl Usage {
    /// True when nothing is known.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
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
}

/// Payload of `context.compacted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct ContextCompacted {
    /// Why (`auto`, `manual`, …).
    pub reason: String,
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

/// Payload of `raw`: input that could not be understood, preserved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
pub struct Raw {
    /// The line, scrubbed and bounded.
    pub line: String,
    /// Why it was not understood.
    pub reason: RawReason,
}

/// Why a line became a `raw` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RawReason {
    /// Not JSON at all.
    NotJson,
    /// JSON, but an event type the provider parser does not know.
    UnknownType,
    /// JSON of a known type in an unexpected shape.
    UnexpectedShape,
    /// Longer than `--max-line-bytes`.
    Oversized,
    /// No provider recognised the stream.
    UnknownProvider,
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

impl Body {
    /// The `type` string of this body.
    pub fn type_name(&self) -> &str {
        match self {
            Body::SessionStarted(_) => "session.started",
            Body::TurnStarted(_) => "turn.started",
            Body::Text(_) => "text",
            Body::Reasoning(_) => "reasoning",
            Body::ToolStarted(_) => "tool.started",
            Body::ToolOutput(_) => "tool.output",
            Body::ToolEnded(t) => match t.outcome {
                Outcome::Completed => "tool.completed",
                Outcome::Failed => "tool.failed",
                Outcome::Denied => "tool.denied",
                Outcome::Cancelled => "tool.cancelled",
                Outcome::Timeout => "tool.timeout",
                Outcome::Interrupted => "tool.interrupted",
            },
            Body::ApprovalRequested(_) => "approval.requested",
            Body::ApprovalSettled(_) => "approval.settled",
            Body::Plan(_) => "plan",
            Body::FileChanged(_) => "file.changed",
            Body::Usage(_) => "usage",
            Body::ContextCompacted(_) => "context.compacted",
            Body::Warning(_) => "warning",
            Body::Raw(_) => "raw",
            Body::TurnEnded(t) => match t.outcome {
                Outcome::Completed => "turn.completed",
                Outcome::Failed => "turn.failed",
                Outcome::Denied => "turn.denied",
                Outcome::Cancelled => "turn.cancelled",
                Outcome::Timeout => "turn.timeout",
                Outcome::Interrupted => "turn.interrupted",
            },
            Body::Summary(_) => "summary",
            Body::Other(o) => &o.type_name,
        }
    }
}

/// An event line with its tool output cut: see [`Event::cut_tool_output`].
#[derive(Debug)]
pub struct CutLine<'a> {
    /// The line, every tool output string in it emptied.
    pub rest: String,
    /// The strings cut, in the order they were in.
    pub cut: Vec<CutOutput<'a>>,
}

/// A tool output string cut from an event line.
#[derive(Debug, Clone, Copy)]
pub struct CutOutput<'a> {
    /// Where it was.
    pub field: OutputField,
    /// The string as written, quotes and escapes included: its escapes are short ones (no
    /// `\u`), and it has no raw control byte.
    pub literal: &'a str,
    /// Its UTF-8 length once unescaped.
    pub len: usize,
}

/// Where a tool output string is in its event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputField {
    /// `payload.delta` of a `tool.output`.
    Delta,
    /// `payload.output.stdout` of a tool terminal.
    Stdout,
    /// `payload.output.stderr` of a tool terminal.
    Stderr,
}

impl Event {
    /// The `type` string.
    pub fn type_name(&self) -> &str {
        self.body.type_name()
    }

    /// Reads one event from a line of JSON, as [`Deserialize`] does; without `tool_output`,
    /// its tool output (`tool.output` deltas, a call's stdout and stderr) is left empty.
    pub fn from_json(line: &str, tool_output: bool) -> serde_json::Result<Event> {
        let mut event: Event = serde_json::from_str(line)?;
        if !tool_output {
            event.for_each_text_mut(|field, s| {
                if field == TextField::ToolOutput {
                    s.clear();
                }
            });
        }
        Ok(event)
    }

    /// The event line `line` with the insides of its tool output strings cut, for a reader
    /// that does not keep them: they are most of a run's bytes, and need not be parsed.
    /// `None` when it has none or a walk cannot show the cut safe. The cut line holds the
    /// same tokens, and its cut strings were ones serde_json accepts without judging (no `\u`
    /// escape, no raw control byte), so it parses as the whole line would, tool output aside.
    pub fn cut_tool_output(line: &str) -> Option<CutLine<'_>> {
        let pieces = skim::tool_output(line.as_bytes())?;
        let mut rest = String::with_capacity(line.len() - pieces.iter().map(|p| p.inside.len()).sum::<usize>());
        let mut from = 0;
        for p in &pieces {
            rest.push_str(&line[from..p.inside.start]);
            from = p.inside.end;
        }
        rest.push_str(&line[from..]);
        let cut = pieces.into_iter().map(|p| CutOutput {
            field: p.field,
            literal: &line[p.inside.start - 1..p.inside.end + 1],
            len: p.len,
        });
        Some(CutLine { rest, cut: cut.collect() })
    }

    /// The tool output string at `field`, when the event has one there.
    pub fn tool_output(&self, field: OutputField) -> Option<&str> {
        match (&self.body, field) {
            (Body::ToolOutput(p), OutputField::Delta) => Some(&p.delta),
            (Body::ToolEnded(t), OutputField::Stdout) => t.output.as_ref()?.stdout.as_deref(),
            (Body::ToolEnded(t), OutputField::Stderr) => t.output.as_ref()?.stderr.as_deref(),
            _ => None,
        }
    }

    /// Calls `f` on every string value of the event that carries content (payload strings and
    /// free text), so stages such as scrub and truncate see each once. Ids, enums and the
    /// envelope's own fields are left alone: they are generated here or are fixed vocabulary.
    pub fn for_each_text_mut(&mut self, mut f: impl FnMut(TextField, &mut String)) {
        let f = &mut f;
        match &mut self.body {
            Body::SessionStarted(p) => {
                opt(f, TextField::Other, &mut p.model);
                opt(f, TextField::Other, &mut p.cwd);
            }
            Body::TurnStarted(p) => opt(f, TextField::Text, &mut p.prompt),
            Body::Text(p) => f(TextField::Text, &mut p.delta),
            Body::Reasoning(p) => f(TextField::Text, &mut p.delta),
            Body::ToolStarted(p) => {
                opt(f, TextField::Other, &mut p.target);
                opt(f, TextField::Input, &mut p.command);
                opt(f, TextField::Other, &mut p.cwd);
                if let Some(v) = &mut p.input {
                    value_strings(v, TextField::Input, f);
                }
            }
            Body::ToolOutput(p) => f(TextField::ToolOutput, &mut p.delta),
            Body::ToolEnded(p) => {
                if let Some(o) = &mut p.output {
                    opt(f, TextField::ToolOutput, &mut o.stdout);
                    opt(f, TextField::ToolOutput, &mut o.stderr);
                }
                error_strings(f, &mut p.error);
            }
            Body::ApprovalRequested(p) | Body::ApprovalSettled(p) => opt(f, TextField::Other, &mut p.title),
            Body::Plan(p) => p.entries.iter_mut().for_each(|e| f(TextField::Text, &mut e.content)),
            Body::FileChanged(p) => f(TextField::Other, &mut p.path),
            Body::Usage(_) => {}
            Body::ContextCompacted(p) => f(TextField::Other, &mut p.reason),
            Body::Warning(p) => f(TextField::Text, &mut p.message),
            Body::Raw(p) => f(TextField::Raw, &mut p.line),
            Body::TurnEnded(p) => error_strings(f, &mut p.error),
            Body::Summary(s) => s.for_each_text_mut(f),
            Body::Other(o) => {
                o.payload.values_mut().for_each(|v| value_strings(v, TextField::Other, f));
                o.extra.values_mut().for_each(|v| value_strings(v, TextField::Other, f));
            }
        }
    }

    /// Marks the event's tool output as truncated, when it has one.
    pub fn mark_truncated(&mut self) {
        if let Body::ToolEnded(t) = &mut self.body {
            t.output.get_or_insert_with(ShellResult::default).truncated = true;
        }
    }
}

/// The role a string plays, so stages can treat tool output differently from other text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextField {
    /// Tool output (`stdout`, `stderr`, `tool.output` deltas): kept newest-first when bounded.
    ToolOutput,
    /// Tool input: command and arguments.
    Input,
    /// Assistant and user text.
    Text,
    /// A raw input line.
    Raw,
    /// Anything else: paths, messages, unknown payloads.
    Other,
}

fn opt(f: &mut dyn FnMut(TextField, &mut String), field: TextField, s: &mut Option<String>) {
    if let Some(s) = s {
        f(field, s);
    }
}

fn error_strings(f: &mut dyn FnMut(TextField, &mut String), e: &mut Option<ErrorInfo>) {
    if let Some(e) = e {
        f(TextField::Other, &mut e.message);
        opt(f, TextField::Other, &mut e.action);
    }
}

/// Calls `f` on every string inside a JSON value (keys are kept as they are).
pub fn value_strings(v: &mut Value, field: TextField, f: &mut dyn FnMut(TextField, &mut String)) {
    match v {
        Value::String(s) => f(field, s),
        Value::Array(a) => a.iter_mut().for_each(|v| value_strings(v, field, f)),
        Value::Object(m) => m.values_mut().for_each(|v| value_strings(v, field, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_tool_input_is_not_written_so_the_event_round_trips() {
        // Found by fuzzing: `"input":null` read back as no input, so `project --mode jsonl`
        // dropped it and the stream was no longer written back byte for byte.
        let started = ToolStarted {
            tool_call_id: "c1".into(),
            name: "Bash".into(),
            qualified: "Bash".into(),
            kind: ToolKind::Shell,
            target: None,
            input: Some(Value::Null),
            command: None,
            cwd: None,
        };
        let json = serde_json::to_string(&started).unwrap();
        assert!(!json.contains("input"), "{json}");
        let back: ToolStarted = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    const ENVELOPE: &str = r#""schema":"minicode.output.v1","eventId":"e1","sessionId":"s1","turnId":1"#;
    const DONE: &str = r#"{"toolCallId":"c1","name":"Bash","kind":"shell","output":{"stdout":"ok\n","exit_code":0}}"#;

    fn read(line: &str) -> Result<Event, serde_json::Error> {
        serde_json::from_str(line)
    }

    #[test]
    fn a_payload_reads_the_same_before_or_after_its_type() {
        let type_first = read(&format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{DONE}}}"#)).unwrap();
        let payload_first = read(&format!(r#"{{{ENVELOPE},"payload":{DONE},"type":"tool.completed"}}"#)).unwrap();
        assert_eq!(type_first, payload_first);
        let Body::ToolEnded(t) = &type_first.body else { panic!("{type_first:?}") };
        assert_eq!(
            (t.outcome, t.output.as_ref().and_then(|o| o.stdout.as_deref())),
            (Outcome::Completed, Some("ok\n"))
        );
        // A type this version does not know keeps its payload and the fields after it.
        let other = read(&format!(r#"{{{ENVELOPE},"type":"x.new","payload":{{"a":1}},"b":2}}"#)).unwrap();
        let Body::Other(o) = &other.body else { panic!("{other:?}") };
        assert_eq!((o.payload.get("a"), o.extra.get("b")), (Some(&Value::from(1)), Some(&Value::from(2))));
    }

    #[test]
    fn a_summary_takes_its_ok_from_after_its_payload() {
        let figures = r#"{"turns":0,"tools":{"total":0,"completed":0,"failed":0,"denied":0,"cancelled":0,"timeout":0,"interrupted":0},"input":{"lines":1,"events":0,"raw":0,"unknownTypes":0,"oversized":0,"redactions":{}}}"#;
        let summary = read(&format!(r#"{{{ENVELOPE},"type":"summary","payload":{figures},"ok":true}}"#)).unwrap();
        assert!(matches!(&summary.body, Body::Summary(s) if s.ok), "{summary:?}");
    }

    #[test]
    fn of_two_payloads_that_fit_the_last_counts() {
        let first = DONE.replace("Bash", "Read");
        let line = format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{first},"payload":{DONE}}}"#);
        let ev = read(&line).unwrap();
        assert!(matches!(&ev.body, Body::ToolEnded(t) if t.name == "Bash"), "{ev:?}");
    }

    #[test]
    fn a_second_type_must_agree_with_the_payload_read_under_the_first() {
        let line = format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{DONE},"type":"tool.completed"}}"#);
        assert!(read(&line).is_ok());
        let line = format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{DONE},"type":"tool.failed"}}"#);
        let error = read(&line).unwrap_err().to_string();
        assert!(error.contains(r#""tool.failed" after a payload read as "tool.completed""#), "{error}");
    }

    #[test]
    fn a_payload_that_does_not_fit_its_type_is_an_error_either_way() {
        for line in [
            format!(r#"{{{ENVELOPE},"type":"tool.completed","payload":{{"name":"Bash"}}}}"#),
            format!(r#"{{{ENVELOPE},"payload":{{"name":"Bash"}},"type":"tool.completed"}}"#),
        ] {
            let error = read(&line).unwrap_err().to_string();
            assert!(error.contains("toolCallId"), "{line}: {error}");
        }
    }
}
