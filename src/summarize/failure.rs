//! How failures read: errors bounded for the report, the status an error implies, and the
//! failures `summarize` states itself when a stream ends too early.

use super::clip::{clip, clip_opt};
use super::model::{limits, Failure};
use crate::event::{ErrorCategory, ErrorInfo, Outcome, Status};

/// An error with its message and action bounded.
pub fn bounded(e: &ErrorInfo) -> ErrorInfo {
    ErrorInfo {
        category: e.category.clone(),
        message: clip(&e.message, limits::MESSAGE),
        action: clip_opt(e.action.as_deref(), limits::MESSAGE),
    }
}

/// The status a failure with this error has when nothing says otherwise.
pub fn status_for(e: Option<&ErrorInfo>) -> Status {
    match e.map(|e| &e.category) {
        Some(ErrorCategory::Cancelled) => Status::Cancelled,
        Some(ErrorCategory::Timeout) => Status::Timeout,
        Some(ErrorCategory::Interrupted) => Status::Interrupted,
        _ => Status::Failed,
    }
}

/// The status of this wire name (`failed`, `timeout`, …), if it is one.
pub fn status_named(s: &str) -> Option<Status> {
    Outcome::ALL.into_iter().map(Outcome::status).find(|st| st.as_str() == s)
}

/// A session whose turn was still open when its stream ended.
pub fn unfinished_turn() -> Failure {
    Failure {
        status: Status::Interrupted,
        error: Some(ErrorInfo {
            category: ErrorCategory::Interrupted,
            message: "the stream ended before the turn finished".into(),
            action: Some("check whether the agent was killed or its output was cut short".into()),
        }),
        during: None,
    }
}

/// A run whose stream ended without its `summary` record.
pub fn unfinished_stream() -> Failure {
    Failure {
        status: Status::Interrupted,
        error: Some(ErrorInfo {
            category: ErrorCategory::Interrupted,
            message: "the stream ended without its summary record, so the run may not have finished".into(),
            action: Some(
                "summarize normalize's complete output; check whether the agent or a pipeline stage was cut off".into(),
            ),
        }),
        during: None,
    }
}

/// A run of which nothing was recognised: no provider, no turn.
pub fn nothing_recognised() -> Failure {
    Failure {
        status: Status::Failed,
        error: Some(ErrorInfo {
            category: ErrorCategory::InputError,
            message: "nothing of an agent run was recognised in this input".into(),
            action: Some("check that the input is an agent's JSON output, piped through normalize".into()),
        }),
        during: None,
    }
}
