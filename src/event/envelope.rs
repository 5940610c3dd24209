//! The envelope of every event, defined once in the `envelope!` table below: from it follow
//! the [`Event`] struct, the order and presence of its fields on the wire, how each is read
//! (strings borrowed from the line where they can be, by every reader of events, the typed
//! one and `summarize`'s fast way alike), which are required, and their JSON Schema.
//! The vocabularies of the envelope (source, severity, status, visibility, provenance) are
//! here too.

use serde::de::{self, MapAccess};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::serde_impl::Str;
use super::{Body, SCHEMA};
#[cfg(feature = "schema")]
use serde_json::json;

/// How an envelope field is read: its strings borrowed from the line where they can be.
pub(crate) trait Wire<'de>: Sized {
    /// What is read from the line.
    type Read: Deserialize<'de>;
    /// The field, owned.
    fn own(read: Self::Read) -> Self;
    /// The field for a reader that keeps no envelope strings (it has the [`Head`]'s): a
    /// string is left empty, anything else kept.
    fn light(read: Self::Read) -> Self;
}

impl<'de> Wire<'de> for String {
    type Read = Str<'de>;
    fn own(read: Str<'de>) -> String {
        read.0.into_owned()
    }
    fn light(_: Str<'de>) -> String {
        String::new()
    }
}

impl<'de> Wire<'de> for Option<String> {
    type Read = Option<Str<'de>>;
    fn own(read: Option<Str<'de>>) -> Option<String> {
        read.map(|s| s.0.into_owned())
    }
    fn light(_: Option<Str<'de>>) -> Option<String> {
        None
    }
}

macro_rules! wire_as_is {
    ($($t:ty),*) => {$(
        impl<'de> Wire<'de> for $t {
            type Read = $t;
            fn own(read: $t) -> $t {
                read
            }
            fn light(read: $t) -> $t {
                read
            }
        }
    )*};
}

wire_as_is!(u64, Source, Severity, Option<Status>, Visibility, RawRef);

/// Declares the envelope; see the module docs. A row is
/// `field: Type = "wireKey", presence, schema(g) <JSON Schema of the value>;` where presence
/// is `required` (an event without it is no event), `default(value)` (always written, the
/// value when absent) or `optional` (an `Option`, written when `Some`). `+ type` after a key
/// writes the event's `type` after that field.
macro_rules! envelope {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty = $key:literal $(+ $after:tt)?, $presence:ident $(($default:expr))?, schema($g:ident) $schema:expr;
    )*) => {
        /// One canonical event: the envelope of docs/contract.md §2 and a typed body.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Event {
            $($(#[doc = $doc])* pub $field: $ty,)*
            /// The type and its payload.
            pub body: Body,
        }

        impl Serialize for Event {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("schema", SCHEMA)?;
                $(
                    envelope!(@write $presence m, $key, &self.$field);
                    $(m.serialize_entry(stringify!($after), self.type_name())?;)?
                )*
                self.body.write_payload(&mut m)?;
                m.end()
            }
        }

        /// The envelope fields of a line as read, each when it was there.
        #[derive(Default)]
        pub(crate) struct Head<'de> {
            $(pub(crate) $field: Option<<$ty as Wire<'de>>::Read>,)*
        }

        impl<'de> Head<'de> {
            /// Reads the value of `key` when it is an envelope field; `false` when it is not.
            pub(crate) fn read<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
                match key {
                    $($key => self.$field = Some(map.next_value()?),)*
                    _ => return Ok(false),
                }
                Ok(true)
            }

            /// The event of this envelope and `body`; with `light`, its strings are left empty
            /// (see [`Wire::light`]).
            pub(crate) fn into_event<E: de::Error>(self, body: Body, light: bool) -> Result<Event, E> {
                $(
                    let $field = match self.$field {
                        Some(read) if light => Wire::light(read),
                        Some(read) => Wire::own(read),
                        None => envelope!(@absent $presence $key $(, $default)?),
                    };
                )*
                Ok(Event { $($field,)* body })
            }
        }

        /// The JSON Schema of every envelope field in wire order, with whether it is required,
        /// `type_schema` at the place of `type`.
        #[cfg(feature = "schema")]
        pub(super) fn field_schemas(
            g: &mut schemars::SchemaGenerator,
            type_schema: serde_json::Value,
        ) -> Vec<(&'static str, serde_json::Value, bool)> {
            let mut fields = Vec::new();
            $(
                fields.push(($key, serde_json::Value::from({ #[allow(unused_variables)] let $g = &mut *g; $schema }), envelope!(@required $presence)));
                $(fields.push((stringify!($after), type_schema.clone(), true));)?
            )*
            fields
        }

        /// The wire key of every envelope field, in wire order (`schema`, `type` and
        /// `payload` aside).
        pub const ENVELOPE_KEYS: &[&str] = &[$($key),*];
    };
    (@write optional $m:ident, $key:literal, $v:expr) => {
        if let Some(v) = $v {
            $m.serialize_entry($key, v)?;
        }
    };
    (@write $presence:ident $m:ident, $key:literal, $v:expr) => {
        $m.serialize_entry($key, $v)?
    };
    (@absent required $key:literal) => {
        return Err(E::missing_field($key))
    };
    (@absent default $key:literal, $default:expr) => {
        $default
    };
    (@absent optional $key:literal) => {
        None
    };
    (@required optional) => {
        false
    };
    (@required $presence:ident) => {
        true
    };
}

envelope! {
    /// `{sessionId}:{turnId}:{seq}`.
    event_id: String = "eventId" + type, required, schema(g) json!({
        "type": "string",
        "pattern": "^.+:[0-9]+:[0-9]+$",
        "description": "`{sessionId}:{turnId}:{seq}`; seq increases by one per event within a session.",
    });
    /// RFC 3339 UTC with milliseconds.
    timestamp: String = "timestamp", default(String::new()), schema(g) json!({
        "type": "string",
        "format": "date-time",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        "description": "RFC 3339 UTC with milliseconds.",
    });
    /// The provider's session id, or `s1`, `s2`, … in order of appearance.
    session_id: String = "sessionId", required, schema(g) json!({
        "type": "string", "minLength": 1, "description": "The provider's session id, or s1, s2, … in order of appearance.",
    });
    /// 1-based turn counter; 0 before the first turn.
    turn_id: u64 = "turnId", default(0), schema(g) json!({
        "type": "integer", "minimum": 0, "description": "1-based turn counter; 0 before the first turn.",
    });
    /// Ties the events of one tool call, approval or turn together.
    correlation_id: Option<String> = "correlationId", optional, schema(g) json!({
        "type": "string", "description": "Ties the events of one tool call, approval or turn together.",
    });
    /// For a child agent's events: the tool call that spawned it.
    parent_id: Option<String> = "parentId", optional, schema(g) json!({
        "type": "string", "description": "For a child agent's events: the tool call that spawned it.",
    });
    /// Who said it.
    source: Source = "source", default(Source::Agent), schema(g) g.subschema_for::<Source>();
    /// How much it matters.
    severity: Severity = "severity", default(Severity::Info), schema(g) g.subschema_for::<Severity>();
    /// Lifecycle status, on lifecycle events.
    status: Option<Status> = "status", optional, schema(g) g.subschema_for::<Status>();
    /// Which projections show it by default.
    visibility: Visibility = "visibility", default(Visibility::ALL), schema(g) g.subschema_for::<Visibility>();
    /// The input lines it came from.
    raw_ref: RawRef = "rawRef", default(RawRef::default()), schema(g) g.subschema_for::<RawRef>();
}

impl Event {
    /// The `type` string.
    pub fn type_name(&self) -> &str {
        self.body.type_name()
    }
}

/// Who produced an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The provider said it.
    Agent,
    /// Tool output.
    Tool,
    /// Synthesized by the toolkit.
    Normalizer,
}

/// Event severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Diagnostic detail.
    Debug,
    /// Ordinary progress.
    Info,
    /// Something a user may want to know.
    Warning,
    /// Something failed.
    Error,
}

/// Lifecycle status of a turn, tool or approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It began.
    Started,
    /// It is under way.
    Running,
    /// It ended well.
    Completed,
    /// It ended badly.
    Failed,
    /// Permission was refused.
    Denied,
    /// The user or client cancelled it.
    Cancelled,
    /// It ran out of time.
    Timeout,
    /// The input ended before it did.
    Interrupted,
}

impl Status {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Started => "started",
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Denied => "denied",
            Status::Cancelled => "cancelled",
            Status::Timeout => "timeout",
            Status::Interrupted => "interrupted",
        }
    }

    /// True for the statuses that end a lifecycle.
    pub fn is_terminal(self) -> bool {
        !matches!(self, Status::Started | Status::Running)
    }
}

/// The projections that show an event by default, as a small set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Visibility(u8);

impl Visibility {
    /// Shown by `normal`.
    pub const NORMAL: Visibility = Visibility(1);
    /// Shown by `verbose`.
    pub const VERBOSE: Visibility = Visibility(2);
    /// Shown by `debug`.
    pub const DEBUG: Visibility = Visibility(4);
    /// Carried by machine projections.
    pub const MACHINE: Visibility = Visibility(8);
    /// Every projection.
    pub const ALL: Visibility = Visibility(15);
    /// Verbose, debug and machine: detail a normal view hides.
    pub const DETAIL: Visibility = Visibility(14);
    /// Debug and machine only.
    pub const DEBUG_ONLY: Visibility = Visibility(12);

    pub(super) const NAMES: [(Visibility, &'static str); 4] = [
        (Visibility::NORMAL, "normal"),
        (Visibility::VERBOSE, "verbose"),
        (Visibility::DEBUG, "debug"),
        (Visibility::MACHINE, "machine"),
    ];

    /// True when every projection in `other` is in `self`.
    pub fn contains(self, other: Visibility) -> bool {
        self.0 & other.0 == other.0
    }

    /// The wire names, in canonical order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES.into_iter().filter(move |(v, _)| self.contains(*v)).map(|(_, n)| n)
    }

    /// Parses one wire name.
    pub fn from_name(name: &str) -> Option<Visibility> {
        Self::NAMES.into_iter().find(|(_, n)| *n == name).map(|(v, _)| v)
    }

    /// The union of two sets.
    pub fn union(self, other: Visibility) -> Visibility {
        Visibility(self.0 | other.0)
    }
}

/// Provenance: the 1-based input lines an event came from, inclusive, and, when the input
/// was several files, which file (the lines are then that file's own).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct RawRef {
    /// First line.
    pub line: u64,
    /// Last line, when more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// The file, as its path was given, when the input was several files. Shared by every
    /// event of the file, so naming it costs a reference count, not a copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<std::sync::Arc<str>>,
}

impl RawRef {
    /// The lines `first..=last`.
    pub fn span(first: u64, last: u64) -> RawRef {
        RawRef { line: first, end_line: (last > first).then_some(last), file: None }
    }

    /// The last line referenced.
    pub fn last(&self) -> u64 {
        self.end_line.unwrap_or(self.line)
    }
}
