//! The figures of a session that need care: token usage and cost (unknown stays unknown,
//! sums are exact), the context window, the budget, and tool calls by kind.

use serde::{Deserialize, Serialize};

use super::tally::Tally;
use crate::event::{ToolCounts, ToolKind};

/// Whether a token or cost budget ran out. The stream never states the budget itself, so
/// "not exceeded" cannot be known: it is `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Budget {
    /// No sign either way.
    #[default]
    Unknown,
    /// A `BUDGET_EXCEEDED` error was reported.
    Over,
}

/// Provider token usage, counted once: a `usage` payload whose `cost_usd` is always
/// `None` here, since the cost is kept apart as an exact [`Cost`]. Unknown stays `None`.
pub type Tokens = crate::event::Usage;

/// An estimated cost, kept in nano-dollars so that sums are exact and merging is
/// associative (floating-point addition is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Cost {
    /// US dollars × 10⁹.
    pub nanos: u64,
}

impl Cost {
    /// A cost from a dollar amount; `None` for amounts that are not a finite, non-negative number.
    pub fn from_usd(usd: f64) -> Option<Cost> {
        (usd.is_finite() && usd >= 0.0).then(|| Cost { nanos: (usd * 1e9).round() as u64 })
    }

    /// The amount in US dollars.
    pub fn usd(self) -> f64 {
        self.nanos as f64 / 1e9
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CostWire {
    estimated_usd: f64,
}

impl Serialize for Cost {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        CostWire { estimated_usd: self.usd() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Cost {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = CostWire::deserialize(d)?;
        Cost::from_usd(w.estimated_usd)
            .ok_or_else(|| serde::de::Error::custom("estimatedUsd must be a non-negative number"))
    }
}

/// The context window: its size is an estimate the stream does not carry, so only
/// compactions (and why they happened) are known.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    /// Compactions by reason (`auto`, `manual`, `pressure:high`, `recovery`, …).
    pub reasons: Tally,
}

impl Serialize for Context {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Context", 2)?;
        st.serialize_field("compactions", &self.reasons.total())?;
        st.serialize_field("reasons", &self.reasons)?;
        st.end()
    }
}

/// Tool calls by kind, each by outcome; kinds without calls are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ByKind(pub [ToolCounts; 8]);

impl ByKind {
    /// Every kind, in index order.
    pub const KINDS: [ToolKind; 8] = [
        ToolKind::Shell,
        ToolKind::Edit,
        ToolKind::Read,
        ToolKind::Search,
        ToolKind::Fetch,
        ToolKind::Mcp,
        ToolKind::Agent,
        ToolKind::Other,
    ];

    /// The counts of one kind.
    pub fn get_mut(&mut self, kind: ToolKind) -> &mut ToolCounts {
        let i = Self::KINDS.iter().position(|k| *k == kind).unwrap_or(7);
        &mut self.0[i]
    }

    /// Kinds with at least one call.
    pub fn iter(&self) -> impl Iterator<Item = (ToolKind, &ToolCounts)> {
        Self::KINDS.into_iter().zip(self.0.iter()).filter(|(_, c)| c.total > 0)
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, other: &ByKind) {
        self.0.iter_mut().zip(other.0.iter()).for_each(|(a, b)| a.merge(b));
    }
}

impl Serialize for ByKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter().map(|(k, c)| (k.as_str(), c)))
    }
}

impl<'de> Deserialize<'de> for ByKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = std::collections::HashMap::<ToolKind, ToolCounts>::deserialize(d)?;
        let mut by = ByKind::default();
        map.iter().for_each(|(k, c)| by.get_mut(*k).merge(c));
        Ok(by)
    }
}

/// Adds two counts of which either may be unknown: unknown + unknown stays unknown.
pub fn add_opt(a: &mut Option<u64>, b: Option<u64>) {
    if let Some(b) = b {
        *a = Some(a.unwrap_or(0).saturating_add(b));
    }
}

/// The token counts of a `usage` payload, without its cost.
pub fn tokens_of(u: &crate::event::Usage) -> Tokens {
    Tokens { cost_usd: None, ..*u }
}

/// Adds two costs of which either may be unknown.
pub fn add_cost(a: &mut Option<Cost>, b: Option<Cost>) {
    if let Some(b) = b {
        *a = Some(Cost { nanos: a.map_or(0, |c| c.nanos).saturating_add(b.nanos) });
    }
}
