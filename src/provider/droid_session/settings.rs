//! The `<session id>.settings.json` droid keeps beside each session's JSONL: the session's
//! state, and among it the only record of its token usage (`tokenUsage`). A session read
//! from a file whose settings lie beside it gets them as one more line after its own
//! (`{"type":"droid-settings",…}`, numbered one past the file's last), which the dialect
//! reads as the session's total usage. The settings file is read with its session and never
//! on its own: a directory walk passes over it ([`is_settings_of_a_session`]).
//!
//! The settings are a small document (under 1 KiB seen) and are read whole: one over
//! [`LIMIT`], or that is not JSON, is not read, and its line says why.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{claim, SETTINGS};
use crate::io::{open_decoded, without_bom, Decoded, Input};
use crate::provider::{Claim, Probe};

/// The largest settings file read.
pub(in crate::provider) const LIMIT: u64 = 64 * 1024;

/// How a session's file name ends, and its settings'.
const SESSION_END: &str = ".jsonl";
const SETTINGS_END: &str = ".settings.json";

/// The lines of the droid session at `path`, then its settings' line, when `head` starts as
/// a droid session does and its settings lie beside it.
pub(in crate::provider) fn decode(path: &Path, head: &[u8]) -> Option<io::Result<Decoded>> {
    // The head first: looking for the settings beside costs a `stat` of every `.jsonl` file.
    if !starts_a_session(head) {
        return None;
    }
    let settings = beside(path, SESSION_END, SETTINGS_END)?;
    let trailer = line(&settings);
    Some(open_decoded(path).map(|f| Decoded::lines(Box::new(Trailed::new(f, trailer)))))
}

/// True when `path` is the settings file of a droid session beside it, which is read with
/// that session (when its first `head_bytes` say it is one).
pub(in crate::provider) fn is_settings_of_a_session(path: &Path, head_bytes: u64) -> bool {
    let Some(session) = beside(path, SETTINGS_END, SESSION_END) else { return false };
    let mut head = Vec::new();
    let read = open_decoded(&session).and_then(|f| f.take(head_bytes).read_to_end(&mut head));
    read.is_ok() && starts_a_session(without_bom(&head))
}

/// The file beside `path` named as it is, with `theirs` for the `ours` its name ends with.
fn beside(path: &Path, ours: &str, theirs: &str) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(ours).filter(|s| !s.is_empty())?;
    let other = path.with_file_name(format!("{stem}{theirs}"));
    other.is_file().then_some(other)
}

/// True when the first line in `head` is a droid session's `session_start`.
fn starts_a_session(head: &[u8]) -> bool {
    // Only the first line is decoded, and only when it may be one: every file is asked.
    let head = head.trim_ascii_start();
    let first = &head[..memchr::memchr(b'\n', head).unwrap_or(head.len())];
    if memchr::memmem::find(first, b"session_start").is_none() {
        return false;
    }
    let probe = Probe::parse(String::from_utf8_lossy(first).trim_end_matches('\r'));
    probe.is_some_and(|p| p.kind() == Some("session_start") && claim(&p) == Claim::Yes)
}

/// What is read of the settings: as a value, so its line is compact whatever the file's
/// layout (droid pretty-prints it).
#[derive(Deserialize)]
struct Settings {
    #[serde(rename = "tokenUsage")]
    token_usage: Option<Value>,
}

/// The settings' line: the usage, or why the file was not read.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    file: &'a str,
    #[serde(rename = "tokenUsage", skip_serializing_if = "Option::is_none")]
    token_usage: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unread: Option<String>,
}

/// The line of the settings at `path`, newline included.
fn line(path: &Path) -> Vec<u8> {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let mut text = Vec::new();
    let read = open_decoded(path).and_then(|f| f.take(LIMIT + 1).read_to_end(&mut text));
    let settings = match read {
        Err(e) => Err(format!("it could not be read: {e}")),
        Ok(_) if text.len() as u64 > LIMIT => Err(format!("it is over the {LIMIT}-byte limit of a settings file")),
        Ok(_) => serde_json::from_slice::<Settings>(without_bom(&text))
            .map_err(|e| format!("it is not droid's settings: {e}")),
    };
    let line = match settings {
        Ok(s) => Line { kind: SETTINGS, file: &name, token_usage: s.token_usage, unread: None },
        Err(why) => Line { kind: SETTINGS, file: &name, token_usage: None, unread: Some(why) },
    };
    let mut out = serde_json::to_vec(&line).expect("a line serializes");
    out.push(b'\n');
    out
}

/// A file's lines, then one more (the trailer), on a line of its own even when the file's
/// last line has no newline.
struct Trailed<R> {
    body: R,
    /// The last byte read of the body.
    last: u8,
    ended: bool,
    trailer: io::Cursor<Vec<u8>>,
}

impl<R> Trailed<R> {
    fn new(body: R, trailer: Vec<u8>) -> Trailed<R> {
        Trailed { body, last: b'\n', ended: false, trailer: io::Cursor::new(trailer) }
    }
}

impl<R: Read> Read for Trailed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if !self.ended {
            let n = self.body.read(buf)?;
            if n > 0 {
                self.last = buf[n - 1];
                return Ok(n);
            }
            self.ended = true;
            if self.last != b'\n' {
                self.trailer.get_mut().insert(0, b'\n');
            }
        }
        self.trailer.read(buf)
    }
}

impl<R: Input> Input for Trailed<R> {
    fn ready(&self) -> bool {
        self.ended || self.body.ready()
    }

    fn may_wait(&self) -> bool {
        self.body.may_wait()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(body: &[u8], trailer: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        Trailed::new(body, trailer.to_vec()).read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn a_session_is_known_by_its_first_line() {
        let start = r#"{"type":"session_start","id":"0b227852-7157-4add-a6e4-7e5d1173fe6f","title":"t","owner":"unknown","version":2,"cwd":"/tmp/w"}"#;
        let message = r#"{"type":"message","id":"m","message":{"role":"user","content":[]}}"#;
        assert!(starts_a_session(format!("{start}\n{message}\n").as_bytes()));
        assert!(starts_a_session(format!("\n  \r\n{start}\r\n{message}").as_bytes()), "after blank lines, in CRLF");
        assert!(starts_a_session(start.as_bytes()), "a head that is all one line");
        assert!(!starts_a_session(format!("{message}\n{start}\n").as_bytes()), "a start that is not first");
        assert!(!starts_a_session(start.replace("session_start", "session_end").as_bytes()));
        assert!(!starts_a_session(b"session_start\n"), "the word, not the record");
        assert!(!starts_a_session(b""));
    }

    #[test]
    fn the_trailer_is_a_line_of_its_own() {
        assert_eq!(read_all(b"a\nb\n", b"t\n"), b"a\nb\nt\n");
        assert_eq!(read_all(b"a\nb", b"t\n"), b"a\nb\nt\n");
        assert_eq!(read_all(b"", b"t\n"), b"t\n");
    }

    #[test]
    fn settings_that_cannot_be_used_say_why_and_give_no_usage() {
        let dir = std::env::temp_dir().join(format!("minicode-droid-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases: [(&str, Vec<u8>, &str); 3] = [
            ("big", vec![b' '; LIMIT as usize + 1], "over the"),
            ("bad", b"{\"tokenUsage\": [".to_vec(), "not droid's settings"),
            ("ok", br#"{"model":"m","tokenUsage":{"inputTokens":5}}"#.to_vec(), ""),
        ];
        for (name, bytes, why) in cases {
            let path = dir.join(format!("{name}.settings.json"));
            std::fs::write(&path, bytes).unwrap();
            let v: serde_json::Value = serde_json::from_slice(&line(&path)).unwrap();
            assert_eq!(v["type"], SETTINGS);
            assert_eq!(v["file"], format!("{name}.settings.json"));
            match why {
                "" => assert_eq!((v["tokenUsage"]["inputTokens"].as_u64(), v.get("unread")), (Some(5), None)),
                why => assert!(v["unread"].as_str().unwrap().contains(why) && v.get("tokenUsage").is_none(), "{v}"),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
