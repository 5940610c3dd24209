//! Usage in the contract's one meaning (docs/contract.md §3): `input_tokens` is the input neither
//! read from nor written to a cache, `cache_read` and `cache_write` apart.
//!
//! ACP's prompt `usage` (unstable) says `totalTokens` is the sum of all token types, so its
//! `inputTokens` already leaves the cache out: claude-agent-acp sends Anthropic's uncached
//! count, codex-acp 2.x subtracts the cached tokens from Codex's count. An agent whose
//! total shows that its input count includes the cache (total = input + output, with
//! cached tokens reported) is converted here. `usage_update.cost` is the session's
//! cumulative cost; each turn reports what it added.

use super::wire::{Cost, PromptUsage};
use crate::event::Usage;

/// A prompt response's usage in the contract's meaning.
pub(super) fn of_prompt(u: &PromptUsage) -> Usage {
    let cached = u.cached_read_tokens.unwrap_or(0) + u.cached_write_tokens.unwrap_or(0);
    let input = match (u.input_tokens, u.total_tokens, u.output_tokens) {
        (Some(input), Some(total), Some(output)) if cached > 0 && includes_cache(input, total, output, u) => {
            Some(input.saturating_sub(cached))
        }
        (input, ..) => input,
    };
    Usage {
        input_tokens: input,
        output_tokens: u.output_tokens,
        cache_read: u.cached_read_tokens,
        cache_write: u.cached_write_tokens,
        cost_usd: None,
    }
}

/// True when the total adds up without the cached tokens: the input count holds them.
fn includes_cache(input: u64, total: u64, output: u64, u: &PromptUsage) -> bool {
    let sum = input + output;
    total == sum || u.thought_tokens.is_some_and(|t| total == sum + t)
}

/// The session's cumulative cost in US dollars, and how much of it turns already reported.
#[derive(Debug, Default)]
pub(super) struct CostTally {
    total: Option<f64>,
    reported: f64,
}

impl CostTally {
    /// A `usage_update`'s cost; other currencies are not dollars and are left out.
    pub fn saw(&mut self, cost: Option<Cost>) {
        if let Some(c) = cost.filter(|c| c.currency.eq_ignore_ascii_case("USD") && c.amount.is_finite()) {
            self.total = Some(c.amount);
        }
    }

    /// What the session's cost grew by since the last turn reported it, when it is known.
    pub fn take_turn(&mut self) -> Option<f64> {
        let total = self.total?;
        let added = (total - self.reported).max(0.0);
        self.reported = total;
        Some(added)
    }

    /// A new session starts its own tally.
    pub fn reset(&mut self) {
        *self = CostTally::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(v: serde_json::Value) -> Usage {
        of_prompt(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn the_same_tokens_give_the_same_figures_whether_the_input_count_holds_the_cache_or_not() {
        // 100 uncached input tokens, 50 read from the cache, 10 written to it, 20 output.
        let apart = usage(serde_json::json!({"totalTokens": 180, "inputTokens": 100, "outputTokens": 20,
            "cachedReadTokens": 50, "cachedWriteTokens": 10}));
        let inclusive = usage(serde_json::json!({"totalTokens": 180, "inputTokens": 160, "outputTokens": 20,
            "cachedReadTokens": 50, "cachedWriteTokens": 10}));
        let with_thoughts = usage(serde_json::json!({"totalTokens": 185, "inputTokens": 160, "outputTokens": 20,
            "thoughtTokens": 5, "cachedReadTokens": 50, "cachedWriteTokens": 10}));
        let expected = Usage {
            input_tokens: Some(100),
            output_tokens: Some(20),
            cache_read: Some(50),
            cache_write: Some(10),
            cost_usd: None,
        };
        assert_eq!((apart, inclusive, with_thoughts), (expected, expected, expected));
    }

    #[test]
    fn without_a_total_or_a_cache_the_input_count_is_taken_as_acp_defines_it() {
        let u = usage(serde_json::json!({"inputTokens": 160, "outputTokens": 20, "cachedReadTokens": 50}));
        assert_eq!(u.input_tokens, Some(160));
        let u = usage(serde_json::json!({"totalTokens": 12117, "inputTokens": 12105, "outputTokens": 12,
            "cachedReadTokens": 0, "cachedWriteTokens": 0}));
        assert_eq!((u.input_tokens, u.cache_read), (Some(12105), Some(0)));
    }

    #[test]
    fn each_turn_reports_the_cost_it_added_to_the_session() {
        let dollars = |amount: f64| Some(Cost { amount, currency: "USD".into() });
        let mut t = CostTally::default();
        assert_eq!(t.take_turn(), None, "no cost said: unknown, not 0");
        t.saw(dollars(0.25));
        t.saw(dollars(0.5));
        assert_eq!(t.take_turn(), Some(0.5));
        t.saw(Some(Cost { amount: 9.0, currency: "EUR".into() }));
        t.saw(dollars(0.75));
        assert_eq!(t.take_turn(), Some(0.25));
    }
}
