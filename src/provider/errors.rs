//! Errors the model provider reported, classified once for every dialect: the same words and
//! HTTP statuses mean the same category whichever agent relayed them.

use crate::event::{ErrorCategory, ErrorInfo};

/// Words of a message that make the error the user's setup to fix.
const CONFIGURATION: [&str; 9] = [
    "authentication",
    "unauthorized",
    "api key",
    "api_key",
    "no auth",
    "not logged in",
    "model metadata",
    "invalid model",
    "permission denied",
];

/// The model refused to continue (stop reason `refusal`, as the Anthropic API and ACP name
/// it): the turn ended without doing what was asked.
pub fn refused() -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::Refused,
        message: "the agent refused to continue".into(),
        action: Some("rephrase the request".into()),
    }
}

/// The model's answer was cut at the output token limit and the agent gave up on it: the
/// run went over a budget, not the provider wrong.
pub fn output_limit(message: String) -> ErrorInfo {
    ErrorInfo {
        category: ErrorCategory::BudgetExceeded,
        message,
        action: Some("raise the agent's output token limit, or ask for the work in smaller pieces".into()),
    }
}

/// The warning that the agent asks the model provider again after a failed request (after
/// HTTP `status`, attempt `attempt` of `max`, as far as the agent says), and its category.
pub fn api_retry(status: Option<u64>, attempt: Option<u64>, max: Option<u64>) -> (String, Option<String>) {
    let status = status.map_or_else(String::new, |s| format!(" after HTTP {s}"));
    let attempt = match (attempt, max) {
        (Some(a), Some(m)) => format!(" (attempt {a} of {m})"),
        (Some(a), None) => format!(" (attempt {a})"),
        _ => String::new(),
    };
    (format!("retrying the API request{status}{attempt}"), Some(ErrorCategory::ProviderError.as_str().to_owned()))
}

/// What Codex says when the Responses API ended an answer at `max_output_tokens`.
const CUT_AT_OUTPUT_LIMIT: &str = "reason: max_output_tokens";

/// An error the model provider reported, classified from its message and HTTP status (the
/// one the dialect states, else one the message names): authentication and configuration
/// problems are the user's to fix, the rest are the provider's.
pub fn provider_error(message: &str, http_status: Option<u16>) -> ErrorInfo {
    let lower = message.to_ascii_lowercase();
    if lower.contains(CUT_AT_OUTPUT_LIMIT) {
        return output_limit(message.to_owned());
    }
    let status = http_status.or_else(|| status_in(message));
    let (category, action) =
        if matches!(status, Some(401 | 403 | 404)) || CONFIGURATION.iter().any(|w| lower.contains(w)) {
            (ErrorCategory::ConfigurationError, "check the agent's credentials, model name and configuration")
        } else if status == Some(429) || lower.contains("rate limit") || lower.contains("rate_limit") {
            (ErrorCategory::ProviderError, "the provider is rate limiting; wait and retry, or lower the request rate")
        } else if status == Some(400) || lower.contains("invalid_request") {
            (ErrorCategory::ProviderError, "the provider rejected the request; check the prompt, model and parameters")
        } else {
            (ErrorCategory::ProviderError, "the model provider failed; retry later or check its status page")
        };
    ErrorInfo { category, message: message.to_owned(), action: Some(action.to_owned()) }
}

/// An HTTP error status a message names: a number of exactly three digits from 400 to 599
/// standing alone (`API Error: 400 {…}`, `last status: 429 Too Many Requests`), so that
/// "4000 tokens" or an id is never read as one.
pub fn status_in(message: &str) -> Option<u16> {
    let bytes = message.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let alone = |b: Option<&u8>| b.is_none_or(|b| !b.is_ascii_alphanumeric() && !matches!(b, b'.' | b'_' | b'-'));
        let before = start.checked_sub(1).map(|k| &bytes[k]);
        if i - start == 3 && alone(before) && alone(bytes.get(i)) {
            let code: u16 = message[start..i].parse().ok()?;
            if (400..600).contains(&code) {
                return Some(code);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_a_lone_three_digit_error_code() {
        assert_eq!(status_in("API Error: 400 {\"type\":\"error\"}"), Some(400));
        assert_eq!(status_in("exceeded retry limit, last status: 429 Too Many Requests"), Some(429));
        assert_eq!(status_in("the prompt is 4000 tokens over"), None);
        assert_eq!(status_in("request req_400 failed after 1500ms"), None);
        assert_eq!(status_in("v1.400.2 returned 200"), None);
    }

    #[test]
    fn categories_follow_the_status_and_the_words() {
        assert_eq!(provider_error("API Error: 401 unauthorized", None).category, ErrorCategory::ConfigurationError);
        assert_eq!(provider_error("boom", Some(403)).category, ErrorCategory::ConfigurationError);
        let big = provider_error("context is 4000 tokens too long", None);
        assert_eq!(big.action.as_deref(), Some("the model provider failed; retry later or check its status page"));
        let limited = provider_error("last status: 429 Too Many Requests", None);
        assert!(limited.action.unwrap().contains("rate limiting"));
        assert!(provider_error("API Error: 400 bad", None).action.unwrap().contains("rejected the request"));
    }
}
