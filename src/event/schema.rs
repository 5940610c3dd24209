//! The JSON Schema of `minicode.output.v1` (feature `schema`), generated from the two tables:
//! the envelope's fields and their schemas from `envelope.rs`, one branch per type of the
//! catalog with the payload's derived `JsonSchema` and the status the type implies; here only
//! what the tables do not say (a `type` tag picks the payload, a summary keeps `ok`, `error`
//! and `prompt` at the top level, and unknown types are kept whole).
//!
//! The schema describes what a v1 writer emits, as strictly as docs/contract.md §2-§6 say: the
//! envelope and every known payload are closed, optional fields are absent rather than
//! `null`, fixed vocabularies are enums, and lifecycle events carry the status their type
//! implies. Unknown types stay valid with any payload and extra top-level fields.

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

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

impl Branch {
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
            Implied::OfOutcome => unreachable!("a terminal's branches are one per outcome"),
        }
        json!({ "title": self.name, "properties": properties, "required": required })
    }
}

/// One branch per known type of the catalog, the terminals last (the summary's is built
/// apart: it has top-level fields).
fn branches(g: &mut SchemaGenerator) -> Vec<Branch> {
    let rows = super::catalog::payload_schemas(g);
    let mut v: Vec<Branch> = rows
        .iter()
        .filter(|(row, _)| !row.terminal)
        .map(|(row, payload)| Branch { name: row.name.to_owned(), status: row.status, payload: payload.clone() })
        .collect();
    // A terminal's type names its outcome (as `Body::type_name` does), and so does its status.
    for (row, payload) in rows.iter().filter(|(row, _)| row.terminal) {
        for o in Outcome::ALL {
            let status = match row.status {
                Implied::OfOutcome => Implied::Always(o.status()),
                other => other,
            };
            v.push(Branch { name: format!("{}.{}", row.name, o.as_str()), status, payload: payload.clone() });
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
        let type_schema =
            json!({ "type": "string", "description": "The event type; consumers ignore types they do not know." });
        let mut properties = Map::new();
        let mut required = vec!["schema"];
        properties.insert("schema".into(), json!({ "const": SCHEMA }));
        for (key, schema, needed) in super::envelope::field_schemas(g, type_schema) {
            properties.insert(key.into(), schema);
            if needed {
                required.push(key);
            }
        }
        properties.insert("payload".into(), json!({ "type": "object" }));
        required.push("payload");
        json_schema!({
            "description": "One line of minicode.output.v1 JSONL: the envelope (docs/contract.md §2) and a payload chosen by `type` (§3, §6).",
            "type": "object",
            "properties": properties,
            "required": required,
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
