//! How the event catalog's table (in `catalog.rs`) expands: the `catalog!` macro, and the
//! description of a row ([`EventType`]) the table keeps for the JSON Schema, the man page's
//! test and the tests of the readers that know the format by heart.

use super::vocab::Outcome;
use super::Status;

/// One row of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventType {
    /// The wire name; for a terminal, the prefix its outcomes are appended to (`tool`
    /// names `tool.completed`, `tool.failed`, …).
    pub name: &'static str,
    /// True for a terminal: one type per [`Outcome`], the payload's `outcome` picking it.
    pub terminal: bool,
    /// What the type says about the envelope's `status`.
    pub status: Implied,
    /// A payload of the type with every field the type has given, for tests of the readers
    /// that know the format by heart (`summarize`'s fast way, the tool output skim).
    pub example: &'static str,
}

impl EventType {
    /// The wire names of this row: one, or one per outcome for a terminal.
    pub fn type_names(&self) -> Vec<String> {
        match self.terminal {
            false => vec![self.name.to_owned()],
            true => Outcome::ALL.iter().map(|o| format!("{}.{}", self.name, o.as_str())).collect(),
        }
    }

    /// Every wire name of the catalog, `summary` last, in catalog order.
    pub fn all_type_names() -> Vec<String> {
        let mut names: Vec<String> = super::CATALOG.iter().flat_map(EventType::type_names).collect();
        names.push("summary".to_owned());
        names
    }
}

/// What a type says about the envelope's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implied {
    /// Nothing: not a lifecycle event.
    Nothing,
    /// Always this one.
    Always(Status),
    /// This one when present (live output may omit it).
    WhenPresent(Status),
    /// One of the terminal statuses.
    Terminal,
    /// The status of the outcome the type names (terminals).
    OfOutcome,
}

/// Declares the catalog: the [`Body`](super::Body) enum and what follows from it (see
/// `catalog.rs`). A row is
/// `Variant(Payload) = one "wire.name", implied status, example payload;` or, for a family of
/// terminals, `= terminal "prefix", …` (the payload then has an `outcome` field).
macro_rules! catalog {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($payload:ty) = $kind:ident $name:literal, $status:expr, $example:literal;
    )*) => {
        /// Every event type of the catalog, with its payload.
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum Body {
            $($(#[doc = $doc])* $variant($payload),)*
            /// `summary`
            Summary(Box<Summary>),
            /// A type this version does not know, kept whole.
            Other(Other),
        }

        /// Every type of the catalog but `summary`, in the order of [`Body`].
        pub const CATALOG: &[EventType] = &[$(catalog!(@row $kind $name, $status, $example)),*];

        impl Body {
            /// The `type` string of this body.
            pub fn type_name(&self) -> &str {
                match self {
                    $(Body::$variant(_p) => catalog!(@name $kind $name _p),)*
                    Body::Summary(_) => "summary",
                    Body::Other(o) => &o.type_name,
                }
            }

            /// Writes the payload (and for `summary` and unknown types, the top-level fields
            /// that go with it).
            pub(super) fn write_payload<M: SerializeMap>(&self, m: &mut M) -> Result<(), M::Error> {
                match self {
                    $(Body::$variant(p) => m.serialize_entry("payload", p),)*
                    Body::Summary(s) => write_summary(m, s),
                    Body::Other(o) => write_other(m, o),
                }
            }

            /// Calls `f` on every string of the body that carries content.
            pub(super) fn for_each_text_mut(&mut self, f: &mut dyn FnMut(TextField, &mut String)) {
                match self {
                    $(Body::$variant(p) => p.texts(f),)*
                    Body::Summary(s) => s.for_each_text_mut(f),
                    Body::Other(o) => o.texts(f),
                }
            }

            /// Offers `r` every id, name and object key of the body.
            pub(super) fn relabel(&mut self, r: &mut dyn Relabel) {
                match self {
                    $(Body::$variant(p) => p.labels(r),)*
                    Body::Summary(s) => s.relabel(r),
                    Body::Other(o) => o.labels(r),
                }
            }
        }

        /// The body of a type whose payload alone makes it; `Err` gives `d` back for `summary`
        /// and unknown types.
        pub(super) fn typed_body<'de, D: Deserializer<'de>>(type_name: &str, d: D) -> Result<Result<Body, D>, D::Error> {
            $(catalog!(@read $kind $name, $variant, $payload, type_name, d);)*
            Ok(Err(d))
        }

        /// The payload schema of every row, in catalog order.
        #[cfg(feature = "schema")]
        pub(super) fn payload_schemas(g: &mut schemars::SchemaGenerator) -> Vec<(EventType, schemars::Schema)> {
            vec![$((catalog!(@row $kind $name, $status, $example), g.subschema_for::<$payload>())),*]
        }
    };
    (@row one $name:literal, $status:expr, $example:literal) => {
        EventType { name: $name, terminal: false, status: $status, example: $example }
    };
    (@row terminal $name:literal, $status:expr, $example:literal) => {
        EventType { name: $name, terminal: true, status: $status, example: $example }
    };
    (@name one $name:literal $p:ident) => { $name };
    (@name terminal $name:literal $p:ident) => {
        match $p.outcome {
            Outcome::Completed => concat!($name, ".completed"),
            Outcome::Failed => concat!($name, ".failed"),
            Outcome::Denied => concat!($name, ".denied"),
            Outcome::Cancelled => concat!($name, ".cancelled"),
            Outcome::Timeout => concat!($name, ".timeout"),
            Outcome::Interrupted => concat!($name, ".interrupted"),
        }
    };
    (@read one $name:literal, $variant:ident, $payload:ty, $t:ident, $d:ident) => {
        if $t == $name {
            return Ok(Ok(Body::$variant(<$payload>::deserialize($d)?)));
        }
    };
    (@read terminal $name:literal, $variant:ident, $payload:ty, $t:ident, $d:ident) => {
        if let Some(outcome) = $t.strip_prefix(concat!($name, ".")).and_then(Outcome::from_suffix) {
            let mut p = <$payload>::deserialize($d)?;
            p.outcome = outcome;
            return Ok(Ok(Body::$variant(p)));
        }
    };
}
