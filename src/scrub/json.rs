//! Strings of a JSON line, rewritten in place: every string (the values, or the keys too,
//! each with where it is) is offered to a function, and only the strings it changes are
//! re-encoded, so the rest of the line (key order, number spelling, unknown fields) comes back
//! byte for byte. The filters use it for lines they do not need to understand as events.

use std::borrow::Cow;

use serde::Deserialize;

use crate::event::SCHEMA;
use crate::scan;

/// What a line of canonical JSONL turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A `minicode.output.v1` event; `summary` when its type is `summary`.
    Event {
        /// True for the `summary` record.
        summary: bool,
    },
    /// Valid JSON, but not an event.
    Json,
    /// Not JSON.
    Text,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    schema: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    type_name: Option<Cow<'a, str>>,
}

/// What an event's envelope says of whose it is.
#[derive(Deserialize)]
pub struct Owner<'a> {
    #[serde(borrow)]
    schema: Cow<'a, str>,
    /// The event's type.
    #[serde(rename = "type", borrow)]
    pub type_name: Cow<'a, str>,
    /// Its session.
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Cow<'a, str>,
}

/// The type of the event on `line` as `normalize` writes events
/// (`{"schema":"minicode.output.v1","eventId":…,"type":…`), told without parsing it; `None`
/// for any other spelling.
pub fn canonical_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"schema\":\"minicode.output.v1\",\"eventId\":\"")?;
    if !line.ends_with('}') {
        return None;
    }
    let after_id = &rest[memchr::memchr(b'"', rest.as_bytes())? + 1..];
    let type_name = after_id.strip_prefix(",\"type\":\"")?;
    let type_name = &type_name[..memchr::memchr(b'"', type_name.as_bytes())?];
    // An escape would need decoding: that spelling is left to a parse.
    (!type_name.contains('\\')).then_some(type_name)
}

/// The type of the event on `line`, however it is spelled; `None` when it is not an event.
pub fn event_type(line: &str) -> Option<Cow<'_, str>> {
    if let Some(t) = canonical_type(line) {
        return Some(Cow::Borrowed(t));
    }
    match serde_json::from_str::<Probe<'_>>(line) {
        Ok(p) if p.schema.as_deref() == Some(SCHEMA) => p.type_name,
        _ => None,
    }
}

/// Whose the event on `line` is; `None` when it is not an event, or its session is no string.
pub fn event_owner(line: &str) -> Option<Owner<'_>> {
    serde_json::from_str::<Owner<'_>>(line).ok().filter(|o| o.schema == SCHEMA)
}

/// Parses `line` just enough to tell an event from other JSON and from text.
pub fn classify(line: &str) -> LineKind {
    match serde_json::from_str::<Probe<'_>>(line) {
        Ok(p) if p.schema.as_deref() == Some(SCHEMA) && p.type_name.is_some() => {
            LineKind::Event { summary: p.type_name.as_deref() == Some("summary") }
        }
        Ok(_) => LineKind::Json,
        Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok() => LineKind::Json,
        Err(_) => LineKind::Text,
    }
}

/// Where a string of a JSON line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// A key of an object.
    Key,
    /// A value, inside `depth` objects and arrays (a member of the line's top object is at
    /// depth 1), the value of member `key` (as written, escapes undecoded) when it is one.
    Value {
        /// How many objects and arrays hold it.
        depth: usize,
        /// The key it is the value of.
        key: Option<&'a str>,
    },
}

/// Appends `line` (valid JSON) to `out`, with every value string `s` replaced by `f(s)` when
/// that returns `Some`. Returns true when anything was replaced.
pub fn rewrite_values(line: &str, out: &mut Vec<u8>, mut f: impl FnMut(&str) -> Option<String>) -> bool {
    rewrite_strings(line, out, |place, s| match place {
        Place::Key => None,
        Place::Value { .. } => f(s),
    })
}

/// Appends `line` (valid JSON) to `out`, with every string `s`, key or value, replaced by
/// `f(place, s)` when that returns `Some`. Returns true when anything was replaced.
pub fn rewrite_strings<'a>(
    line: &'a str,
    out: &mut Vec<u8>,
    mut f: impl FnMut(Place<'a>, &str) -> Option<String>,
) -> bool {
    let b = line.as_bytes();
    let (mut i, mut copied, mut changed) = (0, 0, false);
    let mut depth = 0usize;
    // The key just read, while only a colon has followed it.
    let mut member: Option<&str> = None;
    while let Some(q) = memchr::memchr(b'"', &b[i..]) {
        let start = i + q;
        let gap = &b[i..start];
        for c in gap {
            match c {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        let key = member.take().filter(|_| gap.iter().all(|c| *c == b':' || c.is_ascii_whitespace()));
        let Some(end) = scan::string_end(b, start + 1) else { break };
        i = end + 1;
        let next = b[i..].iter().find(|c| !c.is_ascii_whitespace());
        let raw = &line[start + 1..end];
        let place = if next == Some(&b':') {
            member = Some(raw);
            Place::Key
        } else {
            Place::Value { depth, key }
        };
        let decoded: Cow<'_, str> = if raw.contains('\\') {
            match serde_json::from_str::<String>(&line[start..=end]) {
                Ok(s) => Cow::Owned(s),
                Err(_) => continue,
            }
        } else {
            Cow::Borrowed(raw)
        };
        if let Some(new) = f(place, &decoded) {
            out.extend_from_slice(&b[copied..start]);
            // Serialising a String into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, &new);
            copied = end + 1;
            changed = true;
        }
    }
    out.extend_from_slice(&b[copied..]);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(line: &str) -> String {
        let mut out = Vec::new();
        rewrite_values(line, &mut out, |s| s.contains('x').then(|| s.to_uppercase()));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values_change_keys_and_the_rest_stay() {
        assert_eq!(
            upper(r#"{"x":"ax","n":1.50,"a":["x\n",{"x" : "b"}]}"#),
            r#"{"x":"AX","n":1.50,"a":["X\n",{"x" : "b"}]}"#
        );
    }

    #[test]
    fn keys_and_values_are_told_with_their_depth_and_member() {
        let mut seen = Vec::new();
        rewrite_strings(r#"{"a":"x","p":{"k" : "y","l":["z",{"m":"w"}]},"b":"v"}"#, &mut Vec::new(), |place, s| {
            seen.push((place, s.to_owned()));
            None
        });
        let value = |depth, key| Place::Value { depth, key };
        let want = [
            (Place::Key, "a"),
            (value(1, Some("a")), "x"),
            (Place::Key, "p"),
            (Place::Key, "k"),
            (value(2, Some("k")), "y"),
            (Place::Key, "l"),
            (value(3, None), "z"),
            (Place::Key, "m"),
            (value(4, Some("m")), "w"),
            (Place::Key, "b"),
            (value(1, Some("b")), "v"),
        ];
        assert_eq!(seen, want.map(|(p, s)| (p, s.to_owned())));
    }

    #[test]
    fn escaped_quotes_do_not_end_a_string() {
        assert_eq!(upper(r#"{"k":"say \"x\"","x":"y"}"#), r#"{"k":"SAY \"X\"","x":"y"}"#);
    }

    #[test]
    fn classify_tells_events_from_json_and_text() {
        assert_eq!(classify(r#"{"schema":"minicode.output.v1","type":"summary"}"#), LineKind::Event { summary: true });
        assert_eq!(classify(r#"{"schema":"other","type":"text"}"#), LineKind::Json);
        assert_eq!(classify("[1,2]"), LineKind::Json);
        assert_eq!(classify("hello {"), LineKind::Text);
    }
}
