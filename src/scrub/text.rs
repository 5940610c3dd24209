//! Plain text, scrubbed line by line as it streams, except that the lines of a PEM private
//! key are held together until its END line, so a key spread over many lines is redacted
//! whole; so are lines of base64 with no BEGIN line before them, which an END line may show
//! to be the last lines of a key cut from its start (`tail -n 20 key.pem`). The hold is
//! bounded: past [`TextScrubber::HOLD_LINES`] lines or [`TextScrubber::HOLD_BYTES`] bytes
//! the held block is scrubbed as it stands, and when the key runs on past it, its next lines
//! are held in turn and redacted as the key's ([`Scrubber::key_goes_on`]).

use super::check::KeyTail;
use super::{Scrubber, KEY_MARK};

/// Scrubs a stream of text lines.
#[derive(Debug, Default)]
pub struct TextScrubber {
    held: String,
    held_lines: usize,
    /// The held lines are lines of base64 with no BEGIN line before them, and what may
    /// follow them.
    tail: KeyTail,
    /// The lines to come go on with a key whose BEGIN line went out with the last block.
    key_cut: bool,
}

impl TextScrubber {
    /// The most lines a PEM block is held for.
    pub const HOLD_LINES: usize = 400;
    /// The most bytes a PEM block is held for.
    pub const HOLD_BYTES: usize = 1 << 20;

    /// A scrubber holding nothing.
    pub fn new() -> TextScrubber {
        TextScrubber::default()
    }

    /// Takes one line (without its line terminator) and calls `emit` with scrubbed text
    /// ready to write: zero or more whole lines joined by `\n`, without the last `\n`.
    pub fn line<E>(
        &mut self,
        scrubber: &mut Scrubber,
        line: &str,
        emit: impl FnOnce(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.tail.is_open() && !line.contains("-----END") {
            let next = self.tail.line(line);
            if next == KeyTail::None {
                // Not a key's tail after all: the held lines go, and this one is taken afresh.
                let held = self.scrubbed(scrubber, false);
                if self.holds(line) {
                    return emit(&held);
                }
                return emit(&(held + "\n" + &scrubber.scrub_str(line)));
            }
            self.tail = next;
        }
        if self.held_lines == 0 && !self.key_cut {
            if self.holds(line) {
                return Ok(());
            }
            return emit(&scrubber.scrub_str(line));
        }
        if self.held_lines > 0 {
            self.held.push('\n');
        }
        self.held.push_str(line);
        self.held_lines += 1;
        let ended = line.contains("-----END");
        if ended || self.held_lines >= Self::HOLD_LINES || self.held.len() >= Self::HOLD_BYTES {
            let out = self.scrubbed(scrubber, !ended);
            return emit(&out);
        }
        Ok(())
    }

    /// With nothing held: holds `line` when it opens a key or may be a line of one.
    fn holds(&mut self, line: &str) -> bool {
        let opens = opens_key(line);
        let tail = KeyTail::None.line(line);
        if opens || tail == KeyTail::Body {
            self.held.push_str(line);
            self.held_lines = 1;
            self.tail = if opens { KeyTail::None } else { tail };
        }
        self.held_lines > 0
    }

    /// Scrubs and emits whatever is held (call at end of input).
    pub fn finish<E>(&mut self, scrubber: &mut Scrubber, emit: impl FnOnce(&str) -> Result<(), E>) -> Result<(), E> {
        if self.held_lines == 0 {
            return Ok(());
        }
        let out = self.scrubbed(scrubber, false);
        emit(&out)
    }

    /// The held block, scrubbed, holding nothing after; when `cut` (the hold is full), a key
    /// that runs to its end goes on in the lines to come.
    fn scrubbed(&mut self, scrubber: &mut Scrubber, cut: bool) -> String {
        let mut held = std::mem::take(&mut self.held);
        self.held_lines = 0;
        if self.key_cut {
            scrubber.key_goes_on(&mut held);
        }
        let out = scrubber.scrub_str(&held).into_owned();
        self.key_cut = cut && !self.tail.is_open() && out.ends_with(KEY_MARK);
        self.tail = KeyTail::None;
        out
    }
}

/// True when `line` begins a PEM private key that does not also end on it.
fn opens_key(line: &str) -> bool {
    line.find("-----BEGIN").is_some_and(|at| line[at..].contains("PRIVATE KEY") && !line[at..].contains("-----END"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrub_lines(lines: &[&str]) -> Vec<String> {
        let (mut s, mut t, mut out) = (Scrubber::new(), TextScrubber::new(), Vec::new());
        let mut push = |x: &str| -> Result<(), ()> {
            out.push(x.to_owned());
            Ok(())
        };
        for l in lines {
            t.line(&mut s, l, &mut push).unwrap();
        }
        t.finish(&mut s, &mut push).unwrap();
        out
    }

    #[test]
    fn a_key_over_many_lines_goes_whole() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let out =
            scrub_lines(&["before", "-----BEGIN PRIVATE KEY-----", body, body, "-----END PRIVATE KEY-----", "after"]);
        assert_eq!(out, ["before", "[REDACTED:private-key]", "after"]);
    }

    #[test]
    fn a_key_longer_than_the_hold_is_redacted_past_it() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let mut lines = vec!["-----BEGIN PRIVATE KEY-----"];
        lines.extend([body; 2 * TextScrubber::HOLD_LINES + 10]);
        lines.extend(["-----END PRIVATE KEY-----", "after"]);
        let out = scrub_lines(&lines);
        assert!(out.iter().all(|l| !l.contains(body)), "{} lines out", out.len());
        assert_eq!(out.last().map(String::as_str), Some("after"));
        // A BEGIN line before prose: the prose is held once, then goes line by line.
        let mut lines = vec!["-----BEGIN PRIVATE KEY-----"];
        lines.extend(["some words"; 2 * TextScrubber::HOLD_LINES]);
        let out = scrub_lines(&lines);
        assert_eq!(out[0].lines().count(), TextScrubber::HOLD_LINES);
        assert!(out[1..].iter().all(|l| l == "some words"), "{} lines out", out.len());
    }

    #[test]
    fn the_last_lines_of_a_key_without_its_begin_line_are_redacted_to_its_end() {
        let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
        let gutters = ["", "    12\u{2192}", "+", "> > "];
        for gutter in gutters {
            let line = format!("{gutter}{body}");
            let out = scrub_lines(&["before", &line, &line, "-----END PRIVATE KEY-----", "after"]);
            assert_eq!(out.len(), 3, "{gutter:?}: {out:?}");
            assert!(out[0] == "before" && out[1].ends_with("[REDACTED:private-key]") && out[2] == "after", "{out:?}");
        }
        // The body's last line, before the END line, may be shorter than a body line is.
        for last in ["AbCdEf12==", "Xy=", "QIBADANBgkqhkiG9w0BAQ==", "AbCd\n=XyZ1"] {
            let mut lines = vec!["before", body, body];
            lines.extend(last.split('\n'));
            lines.extend(["-----END PGP PRIVATE KEY BLOCK-----", "after"]);
            let out = scrub_lines(&lines);
            assert_eq!(out, ["before", "[REDACTED:private-key]", "after"], "last line {last:?}");
        }
        // A short line is the last of a body: the key's tail may begin at a body line after it.
        let out = scrub_lines(&["x", body, "Done", body, "-----END PRIVATE KEY-----"]);
        assert_eq!(out.join("\n"), ["x", body, "Done", "[REDACTED:private-key]"].join("\n"));
        // Lines of base64 that no END line follows, a hash among them, go as they were.
        let hash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let lines = ["x", body, hash, "some words", hash, "-----BEGIN PRIVATE KEY-----", body];
        let out = scrub_lines(&lines);
        assert_eq!(out.join("\n"), [&lines[..5].join("\n"), "[REDACTED:private-key]"].join("\n"));
    }

    #[test]
    fn a_cut_key_is_redacted_at_end_of_input() {
        let out =
            scrub_lines(&["-----BEGIN RSA PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"]);
        assert_eq!(out, ["[REDACTED:private-key]"]);
    }
}
