//! The end of a Claude Code turn: the `result` line's outcome, the figures it adds since
//! the process's last report (a process that wakes for background work reports again,
//! counting from its start), and the rate limits that explain a refused run.

use super::wire::{RateLimitLine, Result as WireResult};
use super::{cancelled, Claude, QWEN};
use crate::engine::clock::format_rfc3339;
use crate::engine::{Engine, ToolStatus, UsageScope};
use crate::event::{ErrorCategory, ErrorInfo, Outcome, Usage};
use crate::provider::errors::{output_limit, provider_error, refused};

/// What a process's results have reported so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Reported {
    usage: Usage,
    cost: f64,
}

impl Claude {
    pub(super) fn result(&mut self, r: WireResult, engine: &mut Engine) {
        if let Some(s) = r.session_id.as_deref() {
            engine.use_session(s, self.provider);
        }
        // A result whose turn already ended (a second report of the same process without
        // an init before it) adds its figures to the session; it opens no turn of its own.
        if !engine.turn_is_open() && engine.turns() == 0 {
            engine.ensure_turn();
        }
        self.usage(&r, engine);
        for d in &r.permission_denials {
            engine.tool_ended(&d.tool_use_id, ToolStatus::Denied, None);
        }
        if let Some(ms) = r.duration_ms {
            if engine.turn_is_open() {
                engine.set_turn_duration(ms);
            }
            engine.add_session_duration(ms);
        }
        let message = r.error.and_then(|e| e.message).or(r.result).unwrap_or_default();
        let (outcome, error) = match r.subtype.as_str() {
            _ if super::wire::is_output_limit(r.api_error.as_ref()) => {
                let action = Some("raise CLAUDE_CODE_MAX_OUTPUT_TOKENS, or ask for the work in smaller pieces".into());
                (Outcome::Failed, Some(ErrorInfo { action, ..output_limit(message) }))
            }
            _ if r.api_error_status.is_some() => (Outcome::Failed, Some(provider_error(&message, r.api_error_status))),
            // The model declined: Claude Code still calls the run a success.
            "success" if !r.is_error && r.stop_reason.as_deref() == Some("refusal") => (Outcome::Failed, Some(refused())),
            "success" if !r.is_error => (Outcome::Completed, None),
            "error_during_execution" if self.interrupted => (Outcome::Cancelled, Some(cancelled())),
            "error_max_turns" => (
                Outcome::Failed,
                Some(limit(ErrorCategory::MaxTurns, "the agent reached its turn limit", "raise --max-turns or split the task")),
            ),
            "error_max_budget_usd" => (
                Outcome::Failed,
                Some(limit(ErrorCategory::BudgetExceeded, "the agent reached its budget", "raise the budget or split the task")),
            ),
            subtype => {
                // `success` with `is_error` contradicts itself: a failure, with its reason.
                let msg = match (&self.rate_limited, message.is_empty()) {
                    (Some(limit), true) => limit.clone(),
                    (Some(limit), false) => format!("{limit}: {message}"),
                    (None, true) => format!("the run ended with {subtype}"),
                    (None, false) => message,
                };
                (Outcome::Failed, Some(provider_error(&msg, None)))
            }
        };
        engine.turn_ended(outcome, r.stop_reason, error);
        if std::mem::take(&mut self.reentry) {
            engine.turn_started(None);
        }
    }

    /// Adds what the result reports beyond what was reported before: the figures of every
    /// model (subagents' included) and the cost when the result gives them, which count from
    /// the session's start (a resumed process restores them: Claude Code 2.1.332's second
    /// invocation of a session reports both invocations' figures there, and its own in
    /// `usage`), else the result's own `usage` since the process's last report.
    fn usage(&mut self, r: &WireResult, engine: &mut Engine) {
        let again = r.result_index.is_some_and(|i| i > 0);
        if !again {
            self.reported = Reported::default();
        }
        let total = match (&r.model_usage, r.result_index) {
            (Some(models), Some(_)) if !models.is_empty() => {
                let mut session = models.values().fold(Usage::default(), |mut t, m| {
                    t.add(&m.canonical());
                    t
                });
                session.cost_usd = r.total_cost_usd;
                return engine.usage(session, UsageScope::Cumulative);
            }
            _ => {
                let Some(u) = &r.usage else { return self.cost_only(r, engine) };
                let mut own = u.canonical();
                if self.provider == QWEN {
                    // Qwen's `input_tokens` counts the cache read in (Claude's leaves it out),
                    // and its figures count from the session's start: Qwen Code 0.24.4's
                    // resumed process reports both invocations' figures.
                    own.input_tokens = own.input_tokens.map(|i| i.saturating_sub(own.cache_read.unwrap_or(0)));
                    own.cost_usd = r.total_cost_usd;
                    return engine.usage(own, UsageScope::Cumulative);
                }
                own.add(&self.reported.usage);
                own
            }
        };
        let mut new = since(&total, &self.reported.usage);
        new.cost_usd = self.new_cost(r);
        self.reported.usage = total;
        if !(again && new.is_nothing()) {
            engine.usage(new, UsageScope::Increment);
        }
    }

    fn cost_only(&mut self, r: &WireResult, engine: &mut Engine) {
        let new = Usage { cost_usd: self.new_cost(r), ..Usage::default() };
        if !(r.result_index.is_some_and(|i| i > 0) && new.is_nothing()) {
            engine.usage(new, UsageScope::Increment);
        }
    }

    /// The cost the result adds: `total_cost_usd` counts from the process's start.
    fn new_cost(&mut self, r: &WireResult) -> Option<f64> {
        let total = r.total_cost_usd?;
        let new = (total - self.reported.cost).max(0.0);
        self.reported.cost = total;
        Some(new)
    }

    pub(super) fn rate_limit(&mut self, l: RateLimitLine, engine: &mut Engine) {
        if let Some(s) = l.session_id.as_deref() {
            engine.use_session(s, self.provider);
        }
        let Some(info) = l.rate_limit_info else { return };
        let kind = info.kind.as_deref().unwrap_or("usage").replace('_', "-");
        let resets = info
            .resets_at
            .map(|t| format!(", resets at {}", format_rfc3339(t.saturating_mul(1000))))
            .unwrap_or_default();
        match info.status.as_deref() {
            Some("rejected") => {
                let message = format!("the {kind} rate limit was reached{resets}");
                self.rate_limited = Some(message.clone());
                engine.warning(message, Some(ErrorCategory::ProviderError.as_str().to_owned()));
            }
            Some("allowed_warning") => {
                engine.warning(format!("the {kind} rate limit is close{resets}"), None);
            }
            // `allowed`: nothing to say.
            _ => {}
        }
    }
}

/// `total` less what was reported before; unknown stays unknown.
fn since(total: &Usage, before: &Usage) -> Usage {
    let less = |t: Option<u64>, b: Option<u64>| t.map(|t| t.saturating_sub(b.unwrap_or(0)));
    Usage {
        input_tokens: less(total.input_tokens, before.input_tokens),
        output_tokens: less(total.output_tokens, before.output_tokens),
        cache_read: less(total.cache_read, before.cache_read),
        cache_write: less(total.cache_write, before.cache_write),
        cost_usd: None,
    }
}

fn limit(category: ErrorCategory, message: &str, action: &str) -> ErrorInfo {
    ErrorInfo { category, message: message.into(), action: Some(action.into()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_since_the_last_report_never_go_below_zero() {
        let before = Usage { input_tokens: Some(10), output_tokens: Some(3), ..Usage::default() };
        let total = Usage { input_tokens: Some(25), output_tokens: Some(2), cache_read: Some(4), ..Usage::default() };
        let new = since(&total, &before);
        assert_eq!((new.input_tokens, new.output_tokens, new.cache_read), (Some(15), Some(0), Some(4)));
    }
}
