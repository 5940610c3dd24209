//! Usage as the agents count it, converted once to the contract's meaning (docs/contract.md
//! §3): the OpenAI way, the tokens read from and written to the cache inside the input count,
//! and the Anthropic way, outside it (as the canonical `input_tokens` is).

use serde::Deserialize;

use crate::event::Usage;

/// Usage the Anthropic way, as Claude Code, its transcripts and droid write it (snake case in
/// messages and results, camel case in Claude's per-model `modelUsage` and droid's session
/// settings, which shorten the cache's names).
#[derive(Debug, Deserialize)]
pub(super) struct AnthropicUsage {
    #[serde(alias = "inputTokens")]
    pub input_tokens: Option<u64>,
    #[serde(alias = "outputTokens")]
    pub output_tokens: Option<u64>,
    #[serde(alias = "cacheReadInputTokens", alias = "cacheReadTokens")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(alias = "cacheCreationInputTokens", alias = "cacheCreationTokens")]
    pub cache_creation_input_tokens: Option<u64>,
}

impl AnthropicUsage {
    /// The canonical usage: the same counts under the contract's names.
    pub(super) fn canonical(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read: self.cache_read_input_tokens,
            cache_write: self.cache_creation_input_tokens,
            cost_usd: None,
        }
    }
}

/// The canonical usage of `input` tokens that include `cache_read` and `cache_write`.
pub(super) fn cache_inclusive(
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
) -> Usage {
    let cached = cache_read.unwrap_or(0).saturating_add(cache_write.unwrap_or(0));
    Usage {
        input_tokens: input.map(|i| i.saturating_sub(cached)),
        output_tokens: output,
        cache_read,
        cache_write,
        cost_usd: None,
    }
}
