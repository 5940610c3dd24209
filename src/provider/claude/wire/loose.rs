//! Fields read whatever their JSON type ([`Loose`]): a block or event of another kind with
//! a same-named field of another type is still read, and the kind then says what it needs.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::{Content, RawDelta, RawToolUseResult, StreamMessage};

/// A field read whatever its JSON type, so that a block or event of another kind with a
/// same-named field of another type is still read; the kind then says what it needs.
pub(super) enum Loose<T> {
    Is(T),
    Null,
    Other,
}

/// A field the kind requires, of the right type.
pub(super) fn required<T>(v: Option<Loose<T>>, name: &str) -> std::result::Result<T, String> {
    match v {
        Some(Loose::Is(t)) => Ok(t),
        None | Some(Loose::Null) => Err(format!("missing field `{name}`")),
        Some(Loose::Other) => Err(format!("invalid type for field `{name}`")),
    }
}

/// An optional field: absent or null is `None`, another type an error.
pub(super) fn optional<T>(v: Option<Loose<T>>, name: &str) -> std::result::Result<Option<T>, String> {
    match v {
        None | Some(Loose::Null) => Ok(None),
        Some(Loose::Is(t)) => Ok(Some(t)),
        Some(Loose::Other) => Err(format!("invalid type for field `{name}`")),
    }
}

/// How a JSON value becomes the `T` of a [`Loose`]: a value of any other shape is skipped.
trait LooseShape<'de>: Sized {
    fn from_str<E: de::Error>(_: &str) -> std::result::Result<Loose<Self>, E> {
        Ok(Loose::Other)
    }
    fn from_bool<E: de::Error>(_: bool) -> std::result::Result<Loose<Self>, E> {
        Ok(Loose::Other)
    }
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> std::result::Result<Loose<Self>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
    fn from_map<A: MapAccess<'de>>(mut map: A) -> std::result::Result<Loose<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
}

impl LooseShape<'_> for String {
    fn from_str<E: de::Error>(s: &str) -> std::result::Result<Loose<String>, E> {
        Ok(Loose::Is(s.to_owned()))
    }
}

impl LooseShape<'_> for bool {
    fn from_bool<E: de::Error>(b: bool) -> std::result::Result<Loose<bool>, E> {
        Ok(Loose::Is(b))
    }
}

impl<'de> LooseShape<'de> for Content {
    fn from_str<E: de::Error>(s: &str) -> std::result::Result<Loose<Content>, E> {
        Ok(Loose::Is(Content::Text(s.to_owned())))
    }
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> std::result::Result<Loose<Content>, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(b) = seq.next_element()? {
            blocks.push(b);
        }
        Ok(Loose::Is(Content::Blocks(blocks)))
    }
}

/// Structs are read as themselves when the value is an object.
macro_rules! loose_struct {
    ($($t:ty),*) => {$(
        impl<'de> LooseShape<'de> for $t {
            fn from_map<A: MapAccess<'de>>(map: A) -> std::result::Result<Loose<$t>, A::Error> {
                <$t>::deserialize(de::value::MapAccessDeserializer::new(map)).map(Loose::Is)
            }
        }
    )*};
}
loose_struct!(StreamMessage, RawDelta, RawToolUseResult);

impl<'de, T: LooseShape<'de>> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Loose<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: LooseShape<'de>> Visitor<'de> for V<T> {
            type Value = Loose<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Loose<T>, E> {
                T::from_str(s)
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> std::result::Result<Loose<T>, E> {
                T::from_bool(b)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<Loose<T>, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<Loose<T>, E> {
                Ok(Loose::Null)
            }
            fn visit_none<E: de::Error>(self) -> std::result::Result<Loose<T>, E> {
                Ok(Loose::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Loose<T>, D::Error> {
                Loose::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<Loose<T>, A::Error> {
                T::from_seq(seq)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Loose<T>, A::Error> {
                T::from_map(map)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}
