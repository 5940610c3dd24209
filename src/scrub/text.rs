//! Plain text, scrubbed line by line as it streams, except that the lines of a PEM private
//! key are held together until its END line, so a key spread over many lines is redacted
//! whole. The hold is bounded: past [`TextScrubber::HOLD_LINES`] lines or
//! [`TextScrubber::HOLD_BYTES`] bytes the held block is scrubbed as it stands.

use super::Scrubber;

/// Scrubs a stream of text lines.
#[derive(Debug, Default)]
pub struct TextScrubber {
    held: String,
    held_lines: usize,
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
        if self.held_lines == 0 {
            if opens_key(line) {
                self.held.push_str(line);
                self.held_lines = 1;
                return Ok(());
            }
            return emit(&scrubber.scrub_str(line));
        }
        self.held.push('\n');
        self.held.push_str(line);
        self.held_lines += 1;
        if line.contains("-----END") || self.held_lines >= Self::HOLD_LINES || self.held.len() >= Self::HOLD_BYTES {
            return self.finish(scrubber, emit);
        }
        Ok(())
    }

    /// Scrubs and emits whatever is held (call at end of input).
    pub fn finish<E>(&mut self, scrubber: &mut Scrubber, emit: impl FnOnce(&str) -> Result<(), E>) -> Result<(), E> {
        if self.held_lines == 0 {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        self.held_lines = 0;
        emit(&scrubber.scrub_str(&held))
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
    fn a_cut_key_is_redacted_at_end_of_input() {
        let out =
            scrub_lines(&["-----BEGIN RSA PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"]);
        assert_eq!(out, ["[REDACTED:private-key]"]);
    }
}
