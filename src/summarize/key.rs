//! The identity of a run and of an input stream: a 128-bit digest of its canonical lines,
//! so that a merge can tell the same run seen twice (a part merged twice, two parts that
//! both hold it) from two runs. A line is digested without its envelope's `timestamp` and
//! `rawRef`: those say when and where the line was read (the read time when the provider
//! gives none; the file, when normalize read several), not what happened, so normalizing
//! the same input again, alone or among other files, gives the same keys. Every line
//! carries its session id and event id, so the digest names the session too.
//!
//! xxh3 is fixed by its specification, so keys agree between machines, builds and versions.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use crate::scan;

/// A run's or a stream's key: shown as 32 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Key(pub u128);

impl Key {
    /// The key after one more line whose digest is `line`.
    pub fn then(self, line: u128) -> Key {
        let mut both = [0u8; 32];
        both[..16].copy_from_slice(&self.0.to_le_bytes());
        both[16..].copy_from_slice(&line.to_le_bytes());
        Key(xxh3_128(&both))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return Err(serde::de::Error::custom(format_args!("key {s:?} is not 32 lowercase hex digits")));
        }
        u128::from_str_radix(&s, 16).map(Key).map_err(serde::de::Error::custom)
    }
}

/// The digest of one line: its bytes, less the top-level `timestamp` and `rawRef` members
/// when it is a JSON object that has them (any other line is digested whole).
pub fn line_digest(line: &[u8]) -> u128 {
    let mut h = Xxh3::new();
    let mut from = 0;
    for (start, end) in read_where(line) {
        h.update(&line[from..start]);
        from = end;
    }
    h.update(&line[from..]);
    h.digest128()
}

/// The byte ranges of the top-level members `"timestamp": …` and `"rawRef": …`, in order.
/// The scan stops once both are found, so on a canonical line (where they come before the
/// payload) it reads a hundred bytes or so, however long the line.
fn read_where(b: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::with_capacity(2);
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return found;
    }
    i += 1;
    while found.len() < 2 {
        i = skip_ws(b, i);
        let start = i;
        let Some(key_end) = skip_string(b, i) else { break };
        let key = &b[start..key_end];
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            break;
        }
        let Some(end) = skip_value(b, skip_ws(b, i + 1)) else { break };
        if key == b"\"timestamp\"" || key == b"\"rawRef\"" {
            found.push((start, end));
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => break,
        }
    }
    found
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the string that starts at `i`.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    scan::string_end(b, i + 1).map(|end| end + 1)
}

/// The end of the value that starts at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            Some(i + b[i..].iter().position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\n')).unwrap_or(b.len() - i))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_the_same_line_whenever_and_wherever_it_was_read() {
        let a = br#"{"schema":"minicode.output.v1","eventId":"s1:1:2","type":"text","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1","rawRef":{"line":4},"payload":{"delta":"hi \"timestamp\":1"}}"#;
        let b = br#"{"schema":"minicode.output.v1","eventId":"s1:1:2","type":"text","timestamp":"2026-05-05T10:11:12.000Z","sessionId":"s1","rawRef":{"line":1,"file":"runs/a.jsonl"},"payload":{"delta":"hi \"timestamp\":1"}}"#;
        assert_eq!(line_digest(a), line_digest(b));
        let other = String::from_utf8_lossy(a).replace("hi", "ho");
        assert_ne!(line_digest(a), line_digest(other.as_bytes()));
        // A member inside the payload is content, not provenance.
        let inner = String::from_utf8_lossy(a).replace(r#""delta""#, r#""rawRef":{"line":9},"delta""#);
        let inner2 = inner.replace(r#""line":9"#, r#""line":8"#);
        assert_ne!(line_digest(inner.as_bytes()), line_digest(inner2.as_bytes()));
        // Not JSON, or cut short: the bytes are the identity.
        assert_ne!(line_digest(b"not json"), line_digest(b"not json!"));
        assert_ne!(line_digest(br#"{"timestamp":"x"#), line_digest(br#"{"timestamp":"y"#));
    }

    #[test]
    fn keys_read_back_and_depend_on_order() {
        let k = Key::default().then(1).then(2);
        assert_ne!(k, Key::default().then(2).then(1));
        let s = serde_json::to_string(&k).unwrap();
        assert_eq!(s.len(), 34);
        assert_eq!(serde_json::from_str::<Key>(&s).unwrap(), k);
        assert!(serde_json::from_str::<Key>("\"abc\"").is_err());
    }
}
