//! String values of a JSON line, rewritten in place: every value string (never a key) is
//! offered to a function, and only the strings it changes are re-encoded, so the rest of the
//! line (key order, number spelling, unknown fields) comes back byte for byte. The filters
//! use it for lines they do not need to understand as events.

use std::borrow::Cow;

use serde::Deserialize;

use crate::event::SCHEMA;

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

/// Appends `line` (valid JSON) to `out`, with every value string `s` replaced by `f(s)` when
/// that returns `Some`. Returns true when anything was replaced.
pub fn rewrite_values(line: &str, out: &mut Vec<u8>, mut f: impl FnMut(&str) -> Option<String>) -> bool {
    let b = line.as_bytes();
    let (mut i, mut copied, mut changed) = (0, 0, false);
    while let Some(q) = memchr::memchr(b'"', &b[i..]) {
        let start = i + q;
        let Some(end) = string_end(b, start + 1) else { break };
        i = end + 1;
        let next = b[i..].iter().find(|c| !c.is_ascii_whitespace());
        if next == Some(&b':') {
            continue;
        }
        let raw = &line[start + 1..end];
        let decoded: Cow<'_, str> = if raw.contains('\\') {
            match serde_json::from_str::<String>(&line[start..=end]) {
                Ok(s) => Cow::Owned(s),
                Err(_) => continue,
            }
        } else {
            Cow::Borrowed(raw)
        };
        if let Some(new) = f(&decoded) {
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

/// The index of the quote that closes the string whose contents start at `from`.
fn string_end(b: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let k = memchr::memchr2(b'"', b'\\', &b[from..])?;
        let p = from + k;
        if b[p] == b'"' {
            return Some(p);
        }
        from = p + 2;
        if from > b.len() {
            return None;
        }
    }
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
