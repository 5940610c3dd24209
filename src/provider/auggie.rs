//! Auggie: the output it prints that is publicly specified is ACP, read by the ACP parser.
//! Its lines are any ACP agent's, so it claims none for itself; `--from auggie` names it.

use super::{acp, Claim, Dialect, Probe};

/// Auggie `--acp`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "auggie",
    about: "Auggie --acp (ACP JSON-RPC)",
    family: "acp",
    opens: &[],
    claim,
    parser: acp::DIALECT.parser,
};

fn claim(p: &Probe) -> Claim {
    // It speaks ACP: maybe its, never only its.
    match acp::DIALECT.claim {
        own if own(p) == Claim::No => Claim::No,
        _ => Claim::Maybe,
    }
}
