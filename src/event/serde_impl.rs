//! The JSON form of [`Event`] beyond what the tables of `envelope.rs` and `catalog.rs`
//! give: the one reader of an event object's keys ([`EnvelopeVisitor`], shared by the typed
//! reader and `summarize`'s fast way), the payloads of `summary` (whose `ok`, `error` and
//! `prompt` sit at the top level) and of unknown types (kept whole, with the top-level fields
//! this version does not know), so that both survive a read and a write unchanged.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::catalog::typed_body;
use super::envelope::Head;
use super::*;

/// Writes a summary's top-level fields and its payload.
pub(super) fn write_summary<M: SerializeMap>(m: &mut M, sum: &Summary) -> Result<(), M::Error> {
    m.serialize_entry("ok", &sum.ok)?;
    if let Some(e) = &sum.error {
        m.serialize_entry("error", e)?;
    }
    if let Some(p) = &sum.prompt {
        m.serialize_entry("prompt", p)?;
    }
    m.serialize_entry("payload", &sum.figures)
}

/// Writes an unknown type's payload and the top-level fields it came with.
pub(super) fn write_other<M: SerializeMap>(m: &mut M, o: &Other) -> Result<(), M::Error> {
    m.serialize_entry("payload", &o.payload)?;
    for (k, v) in &o.extra {
        m.serialize_entry(k, v)?;
    }
    Ok(())
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
#[derive(Clone)]
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
        d.deserialize_map(EnvelopeVisitor(Typed))
    }
}

/// An event object's keys as read: the envelope, the type, the payload as the reader made
/// it, a summary's top-level fields and any other top-level field.
pub(crate) struct Fields<'de, P> {
    pub(crate) head: Head<'de>,
    pub(crate) type_name: Option<Cow<'de, str>>,
    pub(crate) payload: Option<P>,
    pub(crate) ok: Option<bool>,
    pub(crate) error: Option<ErrorInfo>,
    pub(crate) prompt: Option<Str<'de>>,
    pub(crate) extra: Map<String, Value>,
}

/// What a reader of events makes of a payload and of the keys read: the typed reader an
/// [`Event`], `summarize`'s fast way its own views of the hot types.
pub(crate) trait EventReader<'de> {
    /// A payload as read.
    type Payload;
    /// What the reader gives for a line.
    type Output;
    /// A `type` or `payload` seen twice makes the line no event for this reader.
    const ONCE: bool;
    /// Reads the payload, `type_name` given when the type came before it.
    fn payload<A: MapAccess<'de>>(&self, type_name: Option<&str>, map: &mut A) -> Result<Self::Payload, A::Error>;
    /// True when `payload` was read as the body of the type before it, so that another
    /// `type` after it contradicts it.
    fn bound(payload: &Self::Payload) -> bool;
    /// What the line gives, once every key is read.
    fn finish<E: de::Error>(&self, fields: Fields<'de, Self::Payload>) -> Result<Self::Output, E>;
}

/// Reads the keys of an event object for an [`EventReader`].
pub(crate) struct EnvelopeVisitor<R>(pub(crate) R);

impl<'de, R: EventReader<'de>> Visitor<'de> for EnvelopeVisitor<R> {
    type Value = R::Output;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a minicode.output.v1 event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<R::Output, A::Error> {
        let mut x = Fields {
            head: Head::default(),
            type_name: None,
            payload: None,
            ok: None,
            error: None,
            prompt: None,
            extra: Map::new(),
        };
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            match key.as_ref() {
                "schema" => {
                    let Str(s) = map.next_value()?;
                    if s != SCHEMA {
                        return Err(de::Error::custom(format_args!("schema {s:?} is not {SCHEMA}")));
                    }
                }
                "type" | "payload"
                    if R::ONCE
                        && (x.type_name.is_some() && key == "type" || x.payload.is_some() && key == "payload") =>
                {
                    return Err(de::Error::custom("repeated"));
                }
                "type" => {
                    let Str(t) = map.next_value()?;
                    // A payload already read as the body of the earlier type is not kept to
                    // be read again as another.
                    if let (Some(payload), Some(first)) = (&x.payload, &x.type_name) {
                        if R::bound(payload) && *first != t {
                            return Err(de::Error::custom(format_args!(
                                "`type` {t:?} after a payload read as {first:?}"
                            )));
                        }
                    }
                    x.type_name = Some(t);
                }
                // Read in place when the type is known by now (as `normalize` writes events),
                // so the payload, usually most of the line, is scanned once.
                "payload" => x.payload = Some(self.0.payload(x.type_name.as_deref(), &mut map)?),
                "ok" => x.ok = Some(map.next_value()?),
                "error" => x.error = map.next_value()?,
                "prompt" => x.prompt = map.next_value()?,
                other => {
                    if !x.head.read(other, &mut map)? {
                        let v: Value = map.next_value()?;
                        x.extra.insert(other.to_owned(), v);
                    }
                }
            }
        }
        self.0.finish(x)
    }
}

/// The typed reader: a whole [`Event`].
struct Typed;

impl<'de> EventReader<'de> for Typed {
    type Payload = Payload<'de>;
    type Output = Event;
    const ONCE: bool = false;

    fn payload<A: MapAccess<'de>>(&self, type_name: Option<&str>, map: &mut A) -> Result<Payload<'de>, A::Error> {
        map.next_value_seed(PayloadSeed(type_name))
    }

    fn bound(payload: &Payload<'de>) -> bool {
        matches!(payload, Payload::Read(_))
    }

    fn finish<E: de::Error>(&self, x: Fields<'de, Payload<'de>>) -> Result<Event, E> {
        let type_name = x.type_name.ok_or_else(|| E::missing_field("type"))?;
        let prompt = x.prompt.map(|s| s.0.into_owned());
        let body = match x.payload {
            Some(Payload::Read(body)) => body,
            Some(Payload::Later(raw)) => {
                body_from(&type_name, Some(raw), x.ok, x.error, prompt, x.extra).map_err(E::custom)?
            }
            None => body_from(&type_name, None, x.ok, x.error, prompt, x.extra).map_err(E::custom)?,
        };
        x.head.into_event(body, false)
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
