//! ATIF's document as Harbor's schema names it: the trajectory, its steps, tool calls,
//! observations and metrics, and the `extra` objects in which the canonical facts ATIF has
//! no field for travel. The builder in the parent module fills them in.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::event::{ErrorCategory, ErrorInfo, ToolStarted, Usage};
use crate::projection::prompt_tokens;

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct Trajectory {
    pub(super) schema_version: &'static str,
    pub(super) session_id: Option<String>,
    pub(super) trajectory_id: Option<String>,
    pub(super) agent: Agent,
    pub(super) steps: Vec<Step>,
    pub(super) final_metrics: Option<FinalMetrics>,
    pub(super) extra: Option<SubagentExtra>,
    pub(super) subagent_trajectories: Option<Vec<Trajectory>>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct Agent {
    pub(super) name: String,
    pub(super) version: String,
    pub(super) model_name: Option<String>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct Step {
    pub(super) step_id: usize,
    pub(super) timestamp: Option<String>,
    pub(super) source: &'static str,
    pub(super) message: String,
    pub(super) reasoning_content: Option<String>,
    pub(super) tool_calls: Option<Vec<ToolCall>>,
    pub(super) observation: Option<Observation>,
    pub(super) metrics: Option<Metrics>,
    pub(super) extra: Option<SystemExtra>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct ToolCall {
    pub(super) tool_call_id: String,
    pub(super) function_name: String,
    pub(super) arguments: Arguments,
    pub(super) extra: Option<CallExtra>,
}

/// A tool's arguments as ATIF wants them: a JSON object (the input when it is one).
#[derive(Debug)]
pub(super) enum Arguments {
    Object(Value),
    Input(Value),
    Command(String),
    None,
}

impl Serialize for Arguments {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Arguments::Object(v) => v.serialize(s),
            Arguments::Input(v) => one_entry(s, "input", v),
            Arguments::Command(c) => one_entry(s, "command", c),
            Arguments::None => s.serialize_map(Some(0))?.end(),
        }
    }
}

/// A JSON object of one entry.
fn one_entry<S: Serializer, V: Serialize + ?Sized>(s: S, key: &str, value: &V) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(1))?;
    m.serialize_entry(key, value)?;
    m.end()
}

/// A tool call's `extra`. The `extra` objects list their keys in alphabetical order, the
/// order this projection has always written, so documents stay comparable across versions.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct CallExtra {
    pub(super) kind: &'static str,
    pub(super) qualified: String,
    pub(super) target: Option<String>,
}

/// A tool result's `extra`: how the call ended.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Serialize)]
pub(super) struct ResultExtra {
    pub(super) duration_ms: Option<u64>,
    pub(super) error: Option<ErrorExtra>,
    pub(super) exit_code: Option<i64>,
    pub(super) outcome: &'static str,
    pub(super) truncated: Option<bool>,
}

/// A canonical error in an `extra`.
#[derive(Debug, Serialize)]
pub(super) struct ErrorExtra {
    pub(super) category: ErrorCategory,
    pub(super) message: String,
}

impl ErrorExtra {
    pub(super) fn of(e: &ErrorInfo) -> ErrorExtra {
        ErrorExtra { category: e.category.clone(), message: e.message.clone() }
    }
}

/// A system step's `extra`: the canonical event it stands for.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Serialize)]
pub(super) struct SystemExtra {
    pub(super) approval: Option<Value>,
    pub(super) error: Option<ErrorExtra>,
    pub(super) minicode_type: String,
    pub(super) outcome: Option<&'static str>,
    pub(super) reason: Option<String>,
}

/// A child agent's trajectory `extra`: the call that spawned it.
#[derive(Debug, Serialize)]
pub(super) struct SubagentExtra {
    pub(super) parent_tool_call_id: String,
}

#[derive(Debug, Serialize)]
pub(super) struct Observation {
    pub(super) results: Vec<ObservationResult>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct ObservationResult {
    pub(super) source_call_id: Option<String>,
    pub(super) content: Option<String>,
    pub(super) subagent_trajectory_ref: Option<Vec<SubagentRef>>,
    pub(super) extra: Option<ResultExtra>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct SubagentRef {
    pub(super) trajectory_id: String,
    pub(super) session_id: Option<String>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Serialize)]
pub(super) struct Metrics {
    pub(super) prompt_tokens: Option<u64>,
    pub(super) completion_tokens: Option<u64>,
    pub(super) cached_tokens: Option<u64>,
    pub(super) cost_usd: Option<f64>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(super) struct FinalMetrics {
    pub(super) total_prompt_tokens: Option<u64>,
    pub(super) total_completion_tokens: Option<u64>,
    pub(super) total_cached_tokens: Option<u64>,
    pub(super) total_cost_usd: Option<f64>,
    pub(super) total_steps: Option<usize>,
}

impl Metrics {
    pub(super) fn of(u: &Usage) -> Option<Metrics> {
        let m = Metrics {
            prompt_tokens: prompt_tokens(u),
            completion_tokens: u.output_tokens,
            cached_tokens: u.cache_read,
            cost_usd: u.cost_usd,
        };
        (!u.is_empty()).then_some(m)
    }
}

/// A tool's arguments as ATIF wants them: a JSON object.
pub(super) fn arguments(t: &ToolStarted) -> Arguments {
    match (&t.input, &t.command) {
        (Some(v @ Value::Object(_)), _) => Arguments::Object(v.clone()),
        (Some(v), _) => Arguments::Input(v.clone()),
        (None, Some(c)) => Arguments::Command(c.clone()),
        (None, None) => Arguments::None,
    }
}

pub(super) fn final_metrics(u: &Usage, steps: usize) -> FinalMetrics {
    FinalMetrics {
        total_prompt_tokens: prompt_tokens(u),
        total_completion_tokens: u.output_tokens,
        total_cached_tokens: u.cache_read,
        total_cost_usd: u.cost_usd,
        total_steps: Some(steps),
    }
}
