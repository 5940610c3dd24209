//! `opencode export <session>` documents: one pretty-printed JSON object per session,
//! `{"info": {…session…}, "messages": [{"info": {…}, "parts": [{…}, …]}, …]}`, several
//! allowed one after another in a file. A document is read whole, so a file is read only up
//! to [`LIMIT`] (64 MiB, a thousand times the largest session seen), and its lines are the
//! same records the database gives, each on the line where its JSON starts in the
//! document (or the next free line when several start on one), so `rawRef.line` is a line
//! of the file. What is not such a document is passed on as it is, line for line (a
//! truncated export: its lines become `raw`).

use std::io::{self, Read};
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{record, MESSAGE, PART, SESSION};
use crate::io::{Decoded, Place};

/// The largest export file read.
pub(in crate::provider) const LIMIT: u64 = crate::io::DOCUMENT_BYTES;

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    #[serde(borrow)]
    messages: Vec<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    info: &'a RawValue,
    #[serde(borrow)]
    parts: Vec<&'a RawValue>,
}

/// The lines of the export at `path`, when `head` starts as one: an object whose first key
/// is `info`, holding a session id. Its sessions are said with the sessions they are part
/// of (`parentID`): a subagent's is read after its parent's, whose `task` call it belongs to.
pub(in crate::provider) fn decode(path: &Path, head: &[u8]) -> Option<io::Result<Decoded>> {
    if !looks_like_one(head) {
        return None;
    }
    Some(read(path))
}

/// Every file a directory walk finds is asked, so the bytes are looked at as they are.
fn looks_like_one(head: &[u8]) -> bool {
    let rest = head.trim_ascii_start().strip_prefix(b"{").map(<[u8]>::trim_ascii_start);
    rest.is_some_and(|r| r.starts_with(b"\"info\"")) && memchr::memmem::find(head, b"\"ses_").is_some()
}

/// The lines of the export `text` (a pipe's: `opencode export … | normalize`), when it is one.
pub(in crate::provider) fn decode_text(text: &[u8]) -> Option<Decoded> {
    let text = std::str::from_utf8(text).ok().filter(|t| looks_like_one(t.as_bytes()))?;
    Some(document(text))
}

/// The export at `path`, in UTF-8 or UTF-16 (as `opencode export > file` writes in Windows
/// PowerShell), up to [`LIMIT`] bytes of UTF-8.
fn read(path: &Path) -> io::Result<Decoded> {
    let mut bytes = Vec::new();
    crate::io::open_decoded(path)?.take(LIMIT + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > LIMIT {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("over the {LIMIT}-byte limit of an export")));
    }
    let text = std::str::from_utf8(crate::io::without_bom(&bytes))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(document(text))
}

/// The lines of the exports in `text`, and the sessions they hold.
fn document(text: &str) -> Decoded {
    let mut sessions = Vec::new();
    let lines = lines(text, |info| {
        if let Ok(ids) = serde_json::from_str::<Ids>(info.get()) {
            sessions.push(Place { id: ids.id, parent: ids.parent });
        }
    });
    Decoded { lines: Box::new(io::Cursor::new(lines)), sessions }
}

/// What a session's `info` says of its place.
#[derive(Deserialize)]
struct Ids {
    id: String,
    #[serde(rename = "parentID")]
    parent: Option<String>,
}

/// The records of every document in `text`, each on its own line of the document; `session`
/// is shown each document's `info`.
pub(super) fn lines(text: &str, mut session: impl FnMut(&RawValue)) -> Vec<u8> {
    let mut out = Lines { text, out: Vec::with_capacity(text.len()), written: 0, seen: 0, line: 1 };
    let mut docs = serde_json::Deserializer::from_str(text).into_iter::<Document<'_>>();
    loop {
        let start = docs.byte_offset();
        match docs.next() {
            None => break,
            Some(Ok(doc)) => {
                session(doc.info);
                out.record(SESSION, "info", doc.info);
                for m in doc.messages {
                    out.record(MESSAGE, "info", m.info);
                    for p in m.parts {
                        out.record(PART, "part", p);
                    }
                }
            }
            Some(Err(_)) => {
                out.verbatim(start);
                break;
            }
        }
    }
    out.out
}

/// The lines being written: `written` of them so far; `line` is the document's line at
/// byte `seen`.
struct Lines<'a> {
    text: &'a str,
    out: Vec<u8>,
    written: u64,
    seen: usize,
    line: u64,
}

impl Lines<'_> {
    /// The document's line at `offset` (never before the last one asked).
    fn line_at(&mut self, offset: usize) -> u64 {
        self.line += memchr::memchr_iter(b'\n', &self.text.as_bytes()[self.seen..offset]).count() as u64;
        self.seen = offset;
        self.line
    }

    fn record(&mut self, kind: &str, key: &str, json: &RawValue) {
        let offset = json.get().as_ptr() as usize - self.text.as_ptr() as usize;
        let line = self.line_at(offset);
        self.pad_to(line);
        let mut compact = Vec::with_capacity(json.get().len());
        squeeze(json.get(), &mut compact);
        record(kind, key, std::str::from_utf8(&compact).expect("JSON text minus whitespace is UTF-8"), &mut self.out);
        self.out.push(b'\n');
        self.written += 1;
    }

    /// Blank lines until the next line written is `line`.
    fn pad_to(&mut self, line: u64) {
        while self.written + 1 < line {
            self.out.push(b'\n');
            self.written += 1;
        }
    }

    /// The text of the document at `offset` on, as it is, from its first line on (or from
    /// the document on, when a record was written for its first line).
    fn verbatim(&mut self, offset: usize) {
        let rest = &self.text[offset..];
        let first = offset + rest.len() - rest.trim_start().len();
        let line = self.line_at(first);
        let from = match line > self.written {
            true => self.text[..first].rfind('\n').map_or(0, |i| i + 1),
            false => first,
        };
        self.pad_to(line);
        self.out.extend_from_slice(&self.text.as_bytes()[from..]);
    }
}

/// JSON text on one line: the whitespace between its tokens removed (a string's newlines
/// are escapes, so none is left).
fn squeeze(json: &str, out: &mut Vec<u8>) {
    let (mut in_string, mut escaped) = (false, false);
    for &b in json.as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b.is_ascii_whitespace() {
            continue;
        } else if b == b'"' {
            in_string = true;
        }
        out.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_is_an_object_that_starts_with_its_info_and_names_a_session() {
        assert!(looks_like_one(b"\n {\n  \"info\": {\"id\": \"ses_1\"}"));
        assert!(looks_like_one(b"{\"info\":{\"id\":\"ses_1\",\"title\":\"\xff\"}"), "whatever follows");
        assert!(!looks_like_one(b"{\"messages\": [], \"info\": {\"id\": \"ses_1\"}}"), "info not first");
        assert!(!looks_like_one(b"{\"info\": {\"id\": \"x\"}}"), "no session id");
        assert!(!looks_like_one(b"[{\"info\": {\"id\": \"ses_1\"}}]"), "not an object");
        assert!(!looks_like_one(b""));
    }

    #[test]
    fn records_land_on_the_lines_their_json_starts_on() {
        let doc = "{\n  \"info\": {\n    \"id\": \"ses_1\"\n  },\n  \"messages\": [\n    {\n      \"info\": {\"id\": \"m\"},\n      \"parts\": [\n        {\"type\": \"text\", \"text\": \"a b\\n\"}\n      ]\n    }\n  ]\n}\n";
        let out = String::from_utf8(lines(doc, |_| {})).unwrap();
        let got: Vec<&str> = out.split('\n').collect();
        assert_eq!(got[1], r#"{"type":"opencode-session","info":{"id":"ses_1"}}"#);
        assert_eq!(got[6], r#"{"type":"opencode-message","info":{"id":"m"}}"#);
        assert_eq!(got[8], r#"{"type":"opencode-part","part":{"type":"text","text":"a b\n"}}"#);
        assert!(got[..8].iter().enumerate().all(|(i, l)| l.is_empty() || [1, 6].contains(&i)));
    }

    #[test]
    fn what_is_not_a_document_is_passed_on_line_for_line() {
        let doc = "{\n  \"info\": {\"id\": \"ses_1\"},\n  \"messages\": [\n";
        assert_eq!(String::from_utf8(lines(doc, |_| {})).unwrap(), doc);
    }
}
