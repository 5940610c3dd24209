//! Amp `amp -x --stream-json`: documented as Claude Code compatible stream JSON
//! (<https://ampcode.com/manual/appendix>, <https://ampcode.com/news/streaming-json>; no
//! recording: the CLI needs Amp's service), read by the Claude Code parser and named `amp`.
//! Its session ids are Amp thread ids (`T-<uuid>`), which no other agent's are.

use super::{claude, Claim, Dialect, Probe};

/// Amp `--execute --stream-json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "amp",
    about: "Amp -x --stream-json",
    family: "claude",
    opens: &["system"],
    claim,
    parser: || Box::new(claude::Claude::named(PROVIDER)),
};

/// The name Amp's sessions give as their provider.
pub(super) const PROVIDER: &str = "amp";

fn claim(p: &Probe) -> Claim {
    let thread = p.str("session_id").is_some_and(|s| s.starts_with("T-"));
    let shaped = matches!(p.kind(), Some("system" | "user" | "assistant" | "result"));
    super::dialect::claim(thread && shaped, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_id_makes_a_claude_shaped_line_amps() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        assert_eq!(claim_of(r#"{"type":"system","subtype":"init","session_id":"T-1","tools":[]}"#), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"system","subtype":"init","session_id":"1","tools":[]}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"message","session_id":"T-1"}"#), Claim::No);
    }
}
