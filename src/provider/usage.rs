//! Usage counted the OpenAI way, the tokens read from and written to the cache inside the
//! input count, converted once to the contract's meaning (docs/contract.md §3): the canonical
//! `input_tokens` leaves them out.

use crate::event::Usage;

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
