//! Kilo Code CLI `kilo run --format json`: a fork of OpenCode that prints OpenCode's shapes,
//! read by the OpenCode parser and named `kilo`. Its `step_finish` carries generation
//! `metrics`, which OpenCode's does not: until the first one a run could be either agent's.
//! (`kilo acp` is ACP, read by the ACP dialect and named from its `agentInfo`.)

use super::opencode::{self, OpenCode};
use super::{Claim, Dialect, Probe};

/// Kilo Code `run --format json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "kilo",
    about: "Kilo Code kilo run --format json",
    family: "kilo",
    opens: &[],
    claim,
    parser: || Box::new(OpenCode::named("kilo", "Kilo Code")),
};

fn claim(p: &Probe) -> Claim {
    match opencode::claim(p) {
        Claim::No => Claim::No,
        _ if p.kind() == Some("step_finish") => super::dialect::claim(p.at(&["part", "metrics"]).is_some(), false),
        _ => Claim::Maybe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_step_finish_with_metrics_is_surely_kilos() {
        let claim_of = |l: &str| claim(&Probe::parse(l).unwrap());
        let finish = r#"{"type":"step_finish","sessionID":"s","part":{"metrics":{"generation":4.8},"tokens":{}}}"#;
        assert_eq!(claim_of(finish), Claim::Yes);
        assert_eq!(claim_of(r#"{"type":"step_finish","sessionID":"s","part":{"tokens":{}}}"#), Claim::No);
        assert_eq!(claim_of(r#"{"type":"text","sessionID":"s","part":{}}"#), Claim::Maybe);
        assert_eq!(claim_of(r#"{"type":"text","part":{}}"#), Claim::No);
    }
}
