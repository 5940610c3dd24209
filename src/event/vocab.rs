//! The fixed vocabularies the payloads are written in: outcomes, roles, tool kinds, error
//! categories, decisions and the like, each with its wire words.

use serde::{Deserialize, Serialize};

use super::Status;

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

    pub(super) fn from_suffix(s: &str) -> Option<Outcome> {
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
    pub(super) const KNOWN: [ErrorCategory; 11] = [
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
