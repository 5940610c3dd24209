//! Qwen Code's stream-json: Claude Code's shapes, read by the Claude Code parser (which
//! names the run from the init's `qwen_code_version`). Only that init is surely Qwen's.

use super::{claude, Claim, Dialect, Probe};

/// Qwen Code `--output-format stream-json`.
pub(super) const DIALECT: Dialect = Dialect {
    name: "qwen",
    about: "Qwen Code --output-format stream-json",
    family: "claude",
    opens: &["system"],
    claim,
    parser: || Box::new(claude::Claude::named(claude::QWEN)),
};

fn claim(p: &Probe) -> Claim {
    if p.kind() == Some("system") && p.has("qwen_code_version") {
        return Claim::Yes;
    }
    match claude::claim(p) {
        Claim::No => Claim::No,
        _ => Claim::Maybe,
    }
}
