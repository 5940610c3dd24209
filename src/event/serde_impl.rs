//! The JSON form of [`Event`]: the envelope's fields, `type`, `payload`, and for a summary
//! the top-level `ok`/`status`/`error`/`prompt`. Written by hand so that unknown types and
//! unknown top-level fields survive a read and a write unchanged.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::*;

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("schema", SCHEMA)?;
        m.serialize_entry("eventId", &self.event_id)?;
        m.serialize_entry("type", self.type_name())?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        m.serialize_entry("sessionId", &self.session_id)?;
        m.serialize_entry("turnId", &self.turn_id)?;
        if let Some(c) = &self.correlation_id {
            m.serialize_entry("correlationId", c)?;
        }
        if let Some(p) = &self.parent_id {
            m.serialize_entry("parentId", p)?;
        }
        m.serialize_entry("source", &self.source)?;
        m.serialize_entry("severity", &self.severity)?;
        if let Some(st) = &self.status {
            m.serialize_entry("status", st)?;
        }
        m.serialize_entry("visibility", &VisibilityNames(self.visibility))?;
        m.serialize_entry("rawRef", &self.raw_ref)?;
        match &self.body {
            Body::SessionStarted(p) => m.serialize_entry("payload", p)?,
            Body::TurnStarted(p) => m.serialize_entry("payload", p)?,
            Body::Text(p) => m.serialize_entry("payload", p)?,
            Body::Reasoning(p) => m.serialize_entry("payload", p)?,
            Body::ToolStarted(p) => m.serialize_entry("payload", p)?,
            Body::ToolOutput(p) => m.serialize_entry("payload", p)?,
            Body::ToolEnded(p) => m.serialize_entry("payload", p)?,
            Body::ApprovalRequested(p) | Body::ApprovalSettled(p) => m.serialize_entry("payload", p)?,
            Body::Plan(p) => m.serialize_entry("payload", p)?,
            Body::FileChanged(p) => m.serialize_entry("payload", p)?,
            Body::Usage(p) => m.serialize_entry("payload", p)?,
            Body::ContextCompacted(p) => m.serialize_entry("payload", p)?,
            Body::Warning(p) => m.serialize_entry("payload", p)?,
            Body::Raw(p) => m.serialize_entry("payload", p)?,
            Body::TurnEnded(p) => m.serialize_entry("payload", p)?,
            Body::Summary(sum) => {
                m.serialize_entry("ok", &sum.ok)?;
                if let Some(e) = &sum.error {
                    m.serialize_entry("error", e)?;
                }
                if let Some(p) = &sum.prompt {
                    m.serialize_entry("prompt", p)?;
                }
                m.serialize_entry("payload", &sum.figures)?;
            }
            Body::Other(o) => {
                m.serialize_entry("payload", &o.payload)?;
                for (k, v) in &o.extra {
                    m.serialize_entry(k, v)?;
                }
            }
        }
        m.end()
    }
}

struct VisibilityNames(Visibility);

impl Serialize for VisibilityNames {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.names())
    }
}

impl<'de> Deserialize<'de> for Visibility {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Visibility;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Visibility, A::Error> {
                let mut v = Visibility::default();
                // Unknown projection names are ignored, as consumers ignore what they do not know.
                while let Some(Str(name)) = seq.next_element::<Str<'_>>()? {
                    v = Visibility::from_name(&name).map_or(v, |n| v.union(n));
                }
                Ok(v)
            }
        }
        d.deserialize_seq(V)
    }
}

/// A string borrowed from the input when it has no escapes: serde's own `Cow<str>` always
/// copies, and the keys and tags of every line are read this way.
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

impl Serialize for Visibility {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        VisibilityNames(*self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EventVisitor)
    }
}

struct EventVisitor;

#[derive(Default)]
struct Fields<'de> {
    event_id: Option<String>,
    type_name: Option<Cow<'de, str>>,
    timestamp: Option<String>,
    session_id: Option<String>,
    turn_id: Option<u64>,
    correlation_id: Option<String>,
    parent_id: Option<String>,
    source: Option<Source>,
    severity: Option<Severity>,
    status: Option<Status>,
    visibility: Option<Visibility>,
    raw_ref: Option<RawRef>,
    payload: Option<Payload<'de>>,
    ok: Option<bool>,
    error: Option<ErrorInfo>,
    prompt: Option<String>,
    extra: Map<String, Value>,
}

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a minicode.output.v1 event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut x = Fields::default();
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            match key.as_ref() {
                "schema" => {
                    let Str(s) = map.next_value()?;
                    if s != SCHEMA {
                        return Err(de::Error::custom(format_args!("schema {s:?} is not {SCHEMA}")));
                    }
                }
                "eventId" => x.event_id = Some(map.next_value()?),
                "type" => {
                    let Str(t) = map.next_value()?;
                    // A payload already read as the body of the earlier type is not kept to
                    // be read again as another.
                    if let (Some(Payload::Read(_)), Some(first)) = (&x.payload, &x.type_name) {
                        if *first != t {
                            return Err(de::Error::custom(format_args!(
                                "`type` {t:?} after a payload read as {first:?}"
                            )));
                        }
                    }
                    x.type_name = Some(t);
                }
                "timestamp" => x.timestamp = Some(map.next_value()?),
                "sessionId" => x.session_id = Some(map.next_value()?),
                "turnId" => x.turn_id = Some(map.next_value()?),
                "correlationId" => x.correlation_id = map.next_value()?,
                "parentId" => x.parent_id = map.next_value()?,
                "source" => x.source = Some(map.next_value()?),
                "severity" => x.severity = Some(map.next_value()?),
                "status" => x.status = map.next_value()?,
                "visibility" => x.visibility = Some(map.next_value()?),
                "rawRef" => x.raw_ref = Some(map.next_value()?),
                // Read in place when the type is known by now (as `normalize` writes events),
                // so the payload, usually most of the line, is scanned once.
                "payload" => x.payload = Some(map.next_value_seed(PayloadSeed(x.type_name.as_deref()))?),
                "ok" => x.ok = Some(map.next_value()?),
                "error" => x.error = map.next_value()?,
                "prompt" => x.prompt = map.next_value()?,
                other => {
                    let v: Value = map.next_value()?;
                    x.extra.insert(other.to_owned(), v);
                }
            }
        }
        let type_name = x.type_name.ok_or_else(|| de::Error::missing_field("type"))?;
        let body = match x.payload {
            Some(Payload::Read(body)) => body,
            Some(Payload::Later(raw)) => {
                body_from(&type_name, Some(raw), x.ok, x.error, x.prompt, x.extra).map_err(de::Error::custom)?
            }
            None => body_from(&type_name, None, x.ok, x.error, x.prompt, x.extra).map_err(de::Error::custom)?,
        };
        Ok(Event {
            event_id: x.event_id.ok_or_else(|| de::Error::missing_field("eventId"))?,
            timestamp: x.timestamp.unwrap_or_default(),
            session_id: x.session_id.ok_or_else(|| de::Error::missing_field("sessionId"))?,
            turn_id: x.turn_id.unwrap_or(0),
            correlation_id: x.correlation_id,
            parent_id: x.parent_id,
            source: x.source.unwrap_or(Source::Agent),
            severity: x.severity.unwrap_or(Severity::Info),
            status: x.status,
            visibility: x.visibility.unwrap_or(Visibility::ALL),
            raw_ref: x.raw_ref.unwrap_or_default(),
            body,
        })
    }
}

/// A payload as read: in place as the body of the type named before it, or kept for later
/// when no type came first, or the body needs fields that may follow it (`summary` and the
/// types this version does not know).
enum Payload<'de> {
    Read(Body),
    Later(&'de RawValue),
}

struct PayloadSeed<'a>(Option<&'a str>);

impl<'de> de::DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = Payload<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Payload<'de>, D::Error> {
        let Some(type_name) = self.0 else {
            return <&RawValue>::deserialize(d).map(Payload::Later);
        };
        match typed_body(type_name, d)? {
            Ok(body) => Ok(Payload::Read(body)),
            Err(d) => <&RawValue>::deserialize(d).map(Payload::Later),
        }
    }
}

/// The body of a type whose payload alone makes it; `Err` gives `d` back for `summary` and
/// unknown types.
fn typed_body<'de, D: Deserializer<'de>>(type_name: &str, d: D) -> Result<Result<Body, D>, D::Error> {
    if let Some(suffix) = type_name.strip_prefix("tool.") {
        if let Some(outcome) = Outcome::from_suffix(suffix) {
            let mut t = ToolEnded::deserialize(d)?;
            t.outcome = outcome;
            return Ok(Ok(Body::ToolEnded(t)));
        }
    }
    if let Some(suffix) = type_name.strip_prefix("turn.") {
        if let Some(outcome) = Outcome::from_suffix(suffix) {
            let mut t = TurnEnded::deserialize(d)?;
            t.outcome = outcome;
            return Ok(Ok(Body::TurnEnded(t)));
        }
    }
    Ok(Ok(match type_name {
        "session.started" => Body::SessionStarted(Deserialize::deserialize(d)?),
        "turn.started" => Body::TurnStarted(Deserialize::deserialize(d)?),
        "text" => Body::Text(Deserialize::deserialize(d)?),
        "reasoning" => Body::Reasoning(Deserialize::deserialize(d)?),
        "tool.started" => Body::ToolStarted(Deserialize::deserialize(d)?),
        "tool.output" => Body::ToolOutput(Deserialize::deserialize(d)?),
        "approval.requested" => Body::ApprovalRequested(Deserialize::deserialize(d)?),
        "approval.settled" => Body::ApprovalSettled(Deserialize::deserialize(d)?),
        "plan" => Body::Plan(Deserialize::deserialize(d)?),
        "file.changed" => Body::FileChanged(Deserialize::deserialize(d)?),
        "usage" => Body::Usage(Deserialize::deserialize(d)?),
        "context.compacted" => Body::ContextCompacted(Deserialize::deserialize(d)?),
        "warning" => Body::Warning(Deserialize::deserialize(d)?),
        "raw" => Body::Raw(Deserialize::deserialize(d)?),
        _ => return Ok(Err(d)),
    }))
}

fn body_from(
    type_name: &str,
    raw: Option<&RawValue>,
    ok: Option<bool>,
    error: Option<ErrorInfo>,
    prompt: Option<String>,
    extra: Map<String, Value>,
) -> Result<Body, serde_json::Error> {
    let mut d = serde_json::Deserializer::from_str(raw.map_or("{}", RawValue::get));
    let body = match typed_body(type_name, &mut d)? {
        Ok(body) => body,
        Err(d) if type_name == "summary" => Body::Summary(Box::new(Summary {
            ok: ok.unwrap_or(false),
            error,
            prompt,
            figures: Deserialize::deserialize(d)?,
        })),
        Err(d) => Body::Other(Other { type_name: type_name.to_owned(), payload: Deserialize::deserialize(d)?, extra }),
    };
    d.end()?;
    Ok(body)
}
