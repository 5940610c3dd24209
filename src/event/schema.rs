//! The JSON Schema of `minicode.output.v1` (feature `schema`), generated from the event
//! types: payloads derive `JsonSchema`; the envelope is written here, beside the hand-written
//! serde impl it mirrors (a `type` tag picks the payload, a summary keeps `ok`, `error` and
//! `prompt` at the top level, and unknown types are kept whole).
//!
//! The schema describes what a v1 writer emits, as strictly as docs/contract.md §2-§6 say: the
//! envelope and every known payload are closed, optional fields are absent rather than
//! `null`, fixed vocabularies are enums, and lifecycle events carry the status their type
//! implies. Unknown types stay valid with any payload and extra top-level fields.

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Value};

use super::*;

/// The schema of one canonical event line, as a JSON Schema 2020-12 document (committed as
/// `schema/minicode.output.v1.schema.json`).
pub fn generate() -> Schema {
    let mut schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(RecursiveTransform(absent_not_null))
        .into_generator()
        .into_root_schema_for::<Event>();
    schema.insert("title".into(), json!(SCHEMA));
    schema
}

/// The writer skips every `None` (`skip_serializing_if`), so an optional field is absent,
/// never `null`: drop the `null` that schemars adds for `Option`. A field that does write
/// `null` then fails the golden validation instead of passing unnoticed.
fn absent_not_null(schema: &mut Schema) {
    let Some(obj) = schema.as_object_mut() else { return };
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            obj.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(any)) = obj.get("anyOf") {
        let kept: Vec<Value> = any.iter().filter(|s| **s != json!({"type": "null"})).cloned().collect();
        if let [Value::Object(only)] = kept.as_slice() {
            let only = only.clone();
            obj.remove("anyOf");
            obj.extend(only);
        }
    }
}

/// A known type: its name, the status it implies, and its payload.
struct Branch {
    name: String,
    status: Implied,
    payload: Schema,
}

/// What a type says about the envelope's `status`.
enum Implied {
    /// Nothing: not a lifecycle event.
    Nothing,
    /// Always this one.
    Always(Status),
    /// This one when present (live output may omit it).
    WhenPresent(Status),
    /// One of the terminal statuses.
    Terminal,
}

impl Branch {
    fn new(name: impl Into<String>, status: Implied, payload: Schema) -> Branch {
        Branch { name: name.into(), status, payload }
    }

    fn into_schema(self, terminal: &Value) -> Value {
        let mut properties = json!({ "type": { "const": self.name }, "payload": self.payload });
        let mut required = vec!["payload"];
        match self.status {
            Implied::Nothing => {}
            Implied::Always(s) => {
                required.push("status");
                properties["status"] = json!({ "const": s.as_str() });
            }
            Implied::WhenPresent(s) => properties["status"] = json!({ "const": s.as_str() }),
            Implied::Terminal => {
                required.push("status");
                properties["status"] = terminal.clone();
            }
        }
        json!({ "title": self.name, "properties": properties, "required": required })
    }
}

/// Adding a [`Body`] variant fails to compile here until [`branches`] describes it.
fn _every_body_has_a_branch(b: &Body) {
    match b {
        Body::SessionStarted(_)
        | Body::TurnStarted(_)
        | Body::Text(_)
        | Body::Reasoning(_)
        | Body::ToolStarted(_)
        | Body::ToolOutput(_)
        | Body::ToolEnded(_)
        | Body::ApprovalRequested(_)
        | Body::ApprovalSettled(_)
        | Body::Plan(_)
        | Body::FileChanged(_)
        | Body::Usage(_)
        | Body::ContextCompacted(_)
        | Body::Warning(_)
        | Body::Raw(_)
        | Body::TurnEnded(_)
        | Body::Summary(_)
        | Body::Other(_) => {}
    }
}

/// One branch per known type (the summary's is built apart: it has top-level fields).
fn branches(g: &mut SchemaGenerator) -> Vec<Branch> {
    let mut v = vec![
        Branch::new("session.started", Implied::Nothing, g.subschema_for::<SessionStarted>()),
        Branch::new("turn.started", Implied::Always(Status::Started), g.subschema_for::<TurnStarted>()),
        Branch::new("text", Implied::Nothing, g.subschema_for::<Text>()),
        Branch::new("reasoning", Implied::Nothing, g.subschema_for::<Reasoning>()),
        Branch::new("tool.started", Implied::Always(Status::Started), g.subschema_for::<ToolStarted>()),
        Branch::new("tool.output", Implied::WhenPresent(Status::Running), g.subschema_for::<ToolOutput>()),
        Branch::new("approval.requested", Implied::Always(Status::Started), g.subschema_for::<Approval>()),
        Branch::new("approval.settled", Implied::Terminal, g.subschema_for::<Approval>()),
        Branch::new("plan", Implied::Nothing, g.subschema_for::<Plan>()),
        Branch::new("file.changed", Implied::Nothing, g.subschema_for::<FileChanged>()),
        Branch::new("usage", Implied::Nothing, g.subschema_for::<Usage>()),
        Branch::new("context.compacted", Implied::Nothing, g.subschema_for::<ContextCompacted>()),
        Branch::new("warning", Implied::Nothing, g.subschema_for::<Warning>()),
        Branch::new("raw", Implied::Nothing, g.subschema_for::<Raw>()),
    ];
    // A terminal's type names its outcome (as `Body::type_name` does), and so does its status.
    for (prefix, payload) in [("tool", g.subschema_for::<ToolEnded>()), ("turn", g.subschema_for::<TurnEnded>())] {
        for o in Outcome::ALL {
            v.push(Branch::new(format!("{prefix}.{}", o.as_str()), Implied::Always(o.status()), payload.clone()));
        }
    }
    v
}

impl JsonSchema for Event {
    fn schema_name() -> Cow<'static, str> {
        "Event".into()
    }

    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let terminal = json!({ "enum": Outcome::ALL.map(Outcome::as_str) });
        let mut known: Vec<String> = Vec::new();
        let mut one_of: Vec<Value> = Vec::new();
        for b in branches(g) {
            known.push(b.name.clone());
            one_of.push(b.into_schema(&terminal));
        }
        known.push("summary".into());
        one_of.push(json!({
            "title": "summary",
            "description": "The terminal record (docs/contract.md §6): `ok`, `error` and `prompt` sit at the top level, the figures in `payload`.",
            "properties": {
                "type": { "const": "summary" },
                "ok": { "type": "boolean", "description": "True when every turn of every session completed." },
                "error": g.subschema_for::<ErrorInfo>(),
                "prompt": { "type": "string", "description": "The first prompt, scrubbed." },
                "payload": g.subschema_for::<SummaryFigures>(),
                "status": terminal,
            },
            "required": ["ok", "status", "payload"],
        }));
        one_of.push(json!({
            "title": "an unknown type",
            "description": "A type this version does not know, kept whole: any payload object, any further top-level fields.",
            "properties": { "type": { "not": { "enum": known } } },
            "additionalProperties": true,
        }));
        json_schema!({
            "description": "One line of minicode.output.v1 JSONL: the envelope (docs/contract.md §2) and a payload chosen by `type` (§3, §6).",
            "type": "object",
            "properties": {
                "schema": { "const": SCHEMA },
                "eventId": {
                    "type": "string",
                    "pattern": "^.+:[0-9]+:[0-9]+$",
                    "description": "`{sessionId}:{turnId}:{seq}`; seq increases by one per event within a session.",
                },
                "type": { "type": "string", "description": "The event type; consumers ignore types they do not know." },
                "timestamp": {
                    "type": "string",
                    "format": "date-time",
                    "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
                    "description": "RFC 3339 UTC with milliseconds.",
                },
                "sessionId": { "type": "string", "minLength": 1, "description": "The provider's session id, or s1, s2, … in order of appearance." },
                "turnId": { "type": "integer", "minimum": 0, "description": "1-based turn counter; 0 before the first turn." },
                "correlationId": { "type": "string", "description": "Ties the events of one tool call, approval or turn together." },
                "parentId": { "type": "string", "description": "For a child agent's events: the tool call that spawned it." },
                "source": g.subschema_for::<Source>(),
                "severity": g.subschema_for::<Severity>(),
                "status": g.subschema_for::<Status>(),
                "visibility": g.subschema_for::<Visibility>(),
                "rawRef": g.subschema_for::<RawRef>(),
                "payload": { "type": "object" },
            },
            "required": ["schema", "eventId", "type", "timestamp", "sessionId", "turnId", "source", "severity", "visibility", "rawRef", "payload"],
            "oneOf": one_of,
            "unevaluatedProperties": false,
        })
    }
}

impl JsonSchema for Visibility {
    fn schema_name() -> Cow<'static, str> {
        "Visibility".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The projections that show the event by default.",
            "type": "array",
            "items": { "enum": Visibility::NAMES.map(|(_, n)| n) },
            "uniqueItems": true,
        })
    }
}

impl JsonSchema for ErrorCategory {
    fn schema_name() -> Cow<'static, str> {
        "ErrorCategory".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An error category: one of docs/contract.md §6's, or another (the set is open).",
            "anyOf": [
                { "enum": ErrorCategory::KNOWN.map(|c| c.as_str().to_owned()) },
                { "type": "string", "minLength": 1 },
            ],
        })
    }
}
