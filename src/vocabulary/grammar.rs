//! The error grammar of the output protocol: what happened, what was being done, why, and
//! what to do next, in that order, with provider JSON turned into a sentence first.

use std::borrow::Cow;

use serde_json::Value;

use super::style::{clean, one_line, Mark, Paint, Tone};
use crate::event::{ErrorCategory, ErrorInfo};

/// One error, ready to be laid out.
#[derive(Debug, Clone)]
pub struct Report<'a> {
    /// The status: `✕ failed`, `◌ cancelled`, …
    pub mark: Mark,
    /// What happened, e.g. `turn 1`.
    pub what: String,
    /// What was being done, when known.
    pub doing: Option<String>,
    /// Why, and what next.
    pub error: Option<&'a ErrorInfo>,
    /// Show the internal category (verbose and debug).
    pub show_category: bool,
}

impl Report<'_> {
    /// The lines of the report, the first one unindented (the caller indents them all).
    pub fn lines(&self, paint: Paint) -> Vec<String> {
        let mut head = String::new();
        self.mark.push(paint, &mut head);
        let mut what = self.what.clone();
        if let Some(phrase) = self.error.map(|e| phrase(&e.category)).filter(|p| !p.is_empty() && !what.contains(p)) {
            what = if what.is_empty() { phrase.to_owned() } else { format!("{what}: {phrase}") };
        }
        if !what.is_empty() {
            head.push_str("  ");
            paint.push(&mut head, Tone::Strong, &what);
        }
        if let Some(e) = self.error {
            if self.show_category {
                head.push(' ');
                paint.push(&mut head, Tone::Muted, &format!("[{}]", e.category.as_str()));
            }
        }
        let mut lines = vec![head];
        if let Some(d) = &self.doing {
            lines.push(format!("  {}", paint.paint(Tone::Muted, &format!("while {d}"))));
        }
        if let Some(e) = self.error {
            let why = readable(&e.message);
            for l in clean(&why).lines().filter(|l| !l.trim().is_empty()) {
                lines.push(format!("  {l}"));
            }
            if let Some(next) = e.action.as_deref().or_else(|| default_action(&e.category)) {
                lines.push(format!("  {} {}", paint.paint(Tone::Strong, "→"), one_line(next, 300)));
            }
        }
        lines
    }
}

/// The category in words, for a headline.
pub fn phrase(c: &ErrorCategory) -> &str {
    match c {
        ErrorCategory::ConfigurationError => "configuration error",
        ErrorCategory::InputError => "input error",
        ErrorCategory::ProviderError => "provider error",
        ErrorCategory::ToolError => "tool error",
        ErrorCategory::PermissionDenied => "permission denied",
        ErrorCategory::MaxTurns => "turn limit reached",
        ErrorCategory::BudgetExceeded => "budget exceeded",
        ErrorCategory::Refused => "the model refused",
        // The status word already says these.
        ErrorCategory::Cancelled | ErrorCategory::Timeout | ErrorCategory::Interrupted => "",
        ErrorCategory::Other(_) => "",
    }
}

/// A next step when the event gives none.
fn default_action(c: &ErrorCategory) -> Option<&'static str> {
    Some(match c {
        ErrorCategory::ConfigurationError => "check the agent's configuration and credentials, then retry",
        ErrorCategory::InputError => "check that the input is the agent's complete output",
        ErrorCategory::ProviderError => "retry later; if it persists, check the provider's status and the request",
        ErrorCategory::PermissionDenied => "grant the permission or change the approval settings, then retry",
        ErrorCategory::Timeout => "raise the time limit or split the task, then retry",
        ErrorCategory::Interrupted => "check whether the agent was killed or its output was cut short",
        ErrorCategory::MaxTurns => "raise the turn limit or narrow the task",
        ErrorCategory::BudgetExceeded => "raise the budget or narrow the task",
        ErrorCategory::Refused => "rephrase the request",
        ErrorCategory::ToolError | ErrorCategory::Cancelled | ErrorCategory::Other(_) => return None,
    })
}

/// A provider's error message as a sentence: JSON bodies (`{"error":{"message":…}}`, also
/// after a prefix such as `API Error: 400`) give their message; other text is unchanged.
pub fn readable(msg: &str) -> Cow<'_, str> {
    let Some(start) = msg.find('{') else { return Cow::Borrowed(msg) };
    let Ok(v) = serde_json::from_str::<Value>(msg[start..].trim_end()) else { return Cow::Borrowed(msg) };
    let Some(inner) = message_in(&v) else { return Cow::Borrowed(msg) };
    let prefix = msg[..start].trim().trim_end_matches([':', '-', '·']).trim();
    Cow::Owned(if prefix.is_empty() { inner.to_owned() } else { format!("{prefix}: {inner}") })
}

fn message_in(v: &Value) -> Option<&str> {
    let o = v.as_object()?;
    match o.get("error") {
        Some(Value::String(s)) => return Some(s),
        Some(e @ Value::Object(_)) => {
            if let Some(m) = message_in(e) {
                return Some(m);
            }
        }
        _ => {}
    }
    ["message", "detail", "msg"].iter().find_map(|k| o.get(*k)?.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_json_becomes_its_message() {
        let m = r#"{"error": {"message": "mock: simulated HTTP 400 (ERR400)", "type": "invalid_request_error"}}"#;
        assert_eq!(readable(m), "mock: simulated HTTP 400 (ERR400)");
        assert_eq!(readable(r#"API Error: 400 {"error":{"message":"bad"}}"#), "API Error: 400: bad");
        assert_eq!(readable("plain {not json"), "plain {not json");
    }

    #[test]
    fn a_report_reads_what_why_next() {
        let e = ErrorInfo {
            category: ErrorCategory::ProviderError,
            message: "HTTP 500".into(),
            action: Some("try again".into()),
        };
        let r = Report {
            mark: Mark::outcome(crate::event::Outcome::Failed),
            what: "turn 1".into(),
            doing: Some("running make".into()),
            error: Some(&e),
            show_category: false,
        };
        assert_eq!(
            r.lines(Paint::new(false)),
            ["✕ failed  turn 1: provider error", "  while running make", "  HTTP 500", "  → try again"]
        );
    }
}
