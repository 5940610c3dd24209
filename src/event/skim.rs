//! Tool output found in an event's JSON text before it is parsed, so a reader that never
//! shows it can cut it out of the line. Most of a run's bytes are tool output, dense with
//! `\n` escapes, and serde_json reads a string escape by escape; this walk looks at sixteen
//! bytes at a time between strings, and reads a string 64 bytes at a time to its closing
//! quote, without stopping at its escapes, finding in the same pass whether it holds a
//! control character a reader would clean away.

use std::ops::Range;

use super::{Outcome, OutputField};
use crate::scan::unsafe_chars::look_at;
use crate::scan::{self, eq, Block, Escapes};

/// A tool output string found in a line.
pub(super) struct Piece {
    pub field: OutputField,
    /// Its inside, between the quotes.
    pub inside: Range<usize>,
    /// Its UTF-8 length once unescaped.
    pub len: usize,
    /// It holds nothing `scrub::control::clean` would remove: what `json_is_clean` says of
    /// it, found in the same pass.
    pub clean: bool,
}

/// The tool output strings of the event `line`: `payload.delta` of a `tool.output`,
/// `payload.output.stdout` and `payload.output.stderr` of a tool terminal. `None` when
/// there are none, when the line is not one of those types, or when one of them is not as
/// `normalize` writes it (a `\u` escape, a raw control byte), or the line is not whole:
/// the caller then reads the line whole, as it would anyway.
///
/// Cutting these insides leaves every token of the line in place, so the rest parses as
/// the whole line would, and it is done only to strings whose every escape serde_json
/// accepts without judging. Up to a first error the walk sees the tokens serde_json does,
/// so a line that is not JSON stays so, failing where it did.
pub(super) fn tool_output(line: &[u8]) -> Option<Vec<Piece>> {
    let mut walk = Walk::default();
    let mut at = 0;
    'chunks: while let Some(v) = scan::chunk_at(line, at) {
        let mut m =
            scan::mask(eq(v, b'"') | eq(v, b'{') | eq(v, b'}') | eq(v, b'[') | eq(v, b']') | eq(v, b':') | eq(v, b','));
        while m != 0 {
            let i = at + m.trailing_zeros() as usize;
            if line[i] == b'"' {
                let (end, read) = string_end(line, i + 1)?;
                walk.string(line, i + 1..end, read)?;
                if end - at >= 16 {
                    at = end + 1;
                    continue 'chunks;
                }
                m &= u32::MAX << (end - at) << 1;
            } else {
                walk.punctuation(line[i])?;
                m &= m - 1;
            }
        }
        at += 16;
    }
    walk.finish()
}

/// The index of the quote that closes the string whose inside starts at `line[from]`, and
/// what the inside is when it is plain: no raw control byte and no escape but the short
/// ones (serde_json checks that `\u` escapes pair their surrogates: left to it). `None` at
/// the end of the line.
fn string_end(line: &[u8], mut from: usize) -> Option<(usize, Option<Plain>)> {
    let (mut plain, mut escaped_by) = (true, Escapes::default());
    let mut read = Plain { escapes: 0, clean: true };
    loop {
        let block = Block::at(line, from)?;
        let escaped = escaped_by.next(block.mask(|v| eq(v, b'\\')));
        let quotes = block.mask(|v| eq(v, b'"')) & !escaped;
        // The bytes before the closing quote, or the whole block.
        let inside = match quotes {
            0 => u64::MAX,
            q => (q & q.wrapping_neg()) - 1,
        };
        let escaped = escaped & inside;
        read.escapes += escaped.count_ones() as usize;
        let found = look_at(line, from, &block, escaped, inside);
        read.clean &= found.rare_escapes == 0 && !found.unsafe_char;
        // The other short escapes are plain too; any other escape or a raw control byte is not.
        let long = found.rare_escapes != 0
            && found.rare_escapes & !block.mask(|v| eq(v, b'/') | eq(v, b'r') | eq(v, b'b') | eq(v, b'f')) != 0;
        plain &= !found.raw_control && !long;
        if quotes != 0 {
            return Some((from + quotes.trailing_zeros() as usize, plain.then_some(read)));
        }
        from += 64;
    }
}

/// What [`string_end`] found of a plain string.
#[derive(Clone, Copy)]
struct Plain {
    /// Its escapes.
    escapes: usize,
    /// Nothing in it that `scrub::control::clean` would remove.
    clean: bool,
}

/// Where the walk is in the line.
#[derive(Default)]
struct Walk<'a> {
    /// Open objects and arrays.
    depth: usize,
    /// The key each of the three outer levels is under now; `None` inside arrays.
    keys: [Option<&'a [u8]>; 3],
    /// The last string closed, until a `:` makes it a key.
    last: Option<&'a [u8]>,
    /// A `:` was the last token: the next one is a value.
    value: bool,
    /// Which strings are tool output, once the top-level `type` says.
    wanted: Option<Wanted>,
    /// Every `payload.delta`, `payload.output.stdout` and `.stderr`, until the type says
    /// which are tool output.
    pieces: Vec<Piece>,
}

impl<'a> Walk<'a> {
    /// Takes in a punctuation byte between strings.
    fn punctuation(&mut self, byte: u8) -> Option<()> {
        match byte {
            b'{' | b'[' => {
                self.depth += 1;
                self.set_key(None);
            }
            b'}' | b']' => self.depth = self.depth.checked_sub(1)?,
            b':' => {
                let key = self.last.take()?;
                self.set_key(Some(key));
                self.value = true;
                return Some(());
            }
            _ => {}
        }
        self.value = false;
        Some(())
    }

    /// Sets the key the current level is under, when it is one of the three outer levels.
    fn set_key(&mut self, key: Option<&'a [u8]>) {
        if let Some(slot) = self.depth.checked_sub(1).and_then(|d| self.keys.get_mut(d)) {
            *slot = key;
        }
    }

    /// Takes in the string `line[inside]`: a key to be, or a value the walk may want (and
    /// cannot cut unless `read` says it is plain).
    fn string(&mut self, line: &'a [u8], inside: Range<usize>, read: Option<Plain>) -> Option<()> {
        let text = &line[inside.clone()];
        let piece = |field| read.map(|r| Piece { field, len: inside.len() - r.escapes, inside, clean: r.clean });
        if !std::mem::take(&mut self.value) {
            // A key is matched as written; one with an escape could read as `type` (spelled
            // `typ\u0065`) and change what the line is.
            self.last = Some(text).filter(|_| read.is_some_and(|r| r.escapes == 0));
            return self.last.map(drop);
        }
        match (self.depth, self.keys) {
            // Most lines are of other types: the walk stops at their `type`.
            (1, [Some(b"type"), ..]) if self.wanted.is_none() => self.wanted = Some(Wanted::of(text)?),
            (1, [Some(b"type"), ..]) => return None,
            (2, [Some(b"payload"), Some(b"delta"), _]) => self.pieces.push(piece(OutputField::Delta)?),
            (3, [Some(b"payload"), Some(b"output"), Some(b"stdout")]) => self.pieces.push(piece(OutputField::Stdout)?),
            (3, [Some(b"payload"), Some(b"output"), Some(b"stderr")]) => self.pieces.push(piece(OutputField::Stderr)?),
            _ => {}
        }
        Some(())
    }

    fn finish(self) -> Option<Vec<Piece>> {
        if self.depth != 0 {
            return None;
        }
        let (wanted, mut pieces) = (self.wanted?, self.pieces);
        pieces.retain(|p| wanted.holds(p.field));
        (!pieces.is_empty()).then_some(pieces)
    }
}

/// Where a type keeps its tool output.
#[derive(Clone, Copy)]
enum Wanted {
    /// `payload.delta`, of `tool.output`.
    Delta,
    /// `payload.output.stdout` and `.stderr`, of the tool terminals.
    Output,
}

impl Wanted {
    fn of(type_name: &[u8]) -> Option<Wanted> {
        let suffix = std::str::from_utf8(type_name.strip_prefix(b"tool.")?).ok()?;
        match suffix {
            "output" => Some(Wanted::Delta),
            _ => Outcome::from_suffix(suffix).map(|_| Wanted::Output),
        }
    }

    /// Whether a string at `field` is tool output of this type.
    fn holds(self, field: OutputField) -> bool {
        matches!(
            (self, field),
            (Wanted::Delta, OutputField::Delta) | (Wanted::Output, OutputField::Stdout | OutputField::Stderr)
        )
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::event::Event;

    const ENVELOPE: &str = r#""schema":"minicode.output.v1","eventId":"s:1:2","sessionId":"s","turnId":1,"source":"tool","severity":"info","visibility":["verbose","debug","machine"],"rawRef":{"line":2}"#;

    fn cut(line: &str) -> Option<Vec<&str>> {
        tool_output(line.as_bytes()).map(|pieces| pieces.into_iter().map(|p| &line[p.inside]).collect())
    }

    /// The line cut and read, and read whole with its tool output emptied, agree: the same
    /// event, or both not one; and what was cut is the whole event's tool output.
    fn agree(line: &str) -> Result<(), TestCaseError> {
        let Some(cut) = Event::cut_tool_output(line) else { return Ok(()) };
        match (Event::from_json(&cut.rest, false), Event::from_json(line, false)) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(a, b, "{}", line);
                let whole = Event::from_json(line, true).unwrap();
                for piece in cut.cut {
                    let text: String = serde_json::from_str(piece.literal).unwrap();
                    prop_assert_eq!(
                        (whole.tool_output(piece.field), piece.len),
                        (Some(text.as_str()), text.len()),
                        "{}",
                        line
                    );
                }
            }
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "{line}: cut {a:?}, whole {b:?}"),
        }
        Ok(())
    }

    #[test]
    fn a_terminal_gives_its_stdout_and_stderr_only() {
        let line = format!(
            r#"{{"type":"tool.failed",{ENVELOPE},"payload":{{"toolCallId":"c","name":"stdout","kind":"shell","input":{{"stdout":"not output"}},"output":{{"exit_code":1,"stdout":"a\n\"b\"\\","stderr":"","truncated":true}},"error":{{"category":"tool_error","message":"stdout"}}}}}}"#
        );
        assert_eq!(cut(&line), Some(vec![r#"a\n\"b\"\\"#, ""]));
    }

    #[test]
    fn a_tool_output_gives_its_delta_wherever_its_type_is() {
        let payload = r#""payload":{"toolCallId":"c","stream":"stdout","delta":"x\ty"}"#;
        assert_eq!(cut(&format!(r#"{{"type":"tool.output",{ENVELOPE},{payload}}}"#)), Some(vec![r"x\ty"]));
        assert_eq!(cut(&format!(r#"{{{ENVELOPE},{payload},"type":"tool.output"}}"#)), Some(vec![r"x\ty"]));
    }

    #[test]
    fn only_the_strings_the_type_keeps_its_tool_output_in_are_given() {
        let payload =
            r#""payload":{"toolCallId":"c","stream":"stdout","delta":"d","output":{"stdout":"o","stderr":"e"}}"#;
        for (t, given) in [("tool.output", vec!["d"]), ("tool.completed", vec!["o", "e"])] {
            assert_eq!(cut(&format!(r#"{{"type":"{t}",{ENVELOPE},{payload}}}"#)), Some(given.clone()), "{t}");
            assert_eq!(cut(&format!(r#"{{{ENVELOPE},{payload},"type":"{t}"}}"#)), Some(given), "{t}, typed last");
        }
    }

    #[test]
    fn other_lines_and_strange_ones_give_nothing() {
        let text = format!(r#"{{"type":"text",{ENVELOPE},"payload":{{"delta":"hi","role":"assistant"}}}}"#);
        let stdout = |s: &str| {
            format!(
                r#"{{"type":"tool.completed",{ENVELOPE},"payload":{{"toolCallId":"c","name":"x","kind":"shell","output":{{"stdout":"{s}"}}}}}}"#
            )
        };
        assert_eq!(cut(&stdout("ok")), Some(vec!["ok"]));
        // Other strings may hold anything: serde_json judges them, cut or not.
        assert_eq!(cut(&stdout("ok").replacen(r#""name":"x""#, "\"name\":\"\\u0078\\x\u{1}\"", 1)), Some(vec!["ok"]));
        for line in [
            text,
            // serde_json is left to judge a `\u` escape, a raw control byte, a bad escape.
            stdout(r"\u001b"),
            stdout("a\u{1}b"),
            stdout(r"\x"),
            // A repeated type, and a line cut short.
            stdout("ok").replacen(
                r#""type":"tool.completed""#,
                r#""type":"tool.completed","type":"tool.completed""#,
                1,
            ),
            stdout("ok").trim_end_matches('}').to_owned(),
            // Tool output of an unknown tool type is not known to be tool output.
            stdout("ok").replacen("tool.completed", "tool.exploded", 1),
            // A later `type` spelled with an escape makes the line another type.
            stdout("ok").replacen(r#""payload""#, r#""typ\u0065":"x.custom","payload""#, 1),
        ] {
            assert_eq!(cut(&line), None, "{line}");
        }
    }

    #[test]
    fn every_fixture_reads_as_it_does_whole() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let (mut lines, mut cut) = (0, 0);
        for dir in std::fs::read_dir(&root).unwrap() {
            let Ok(entries) = std::fs::read_dir(dir.unwrap().path()) else { continue };
            for f in entries.map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(".events.jsonl")) {
                for line in String::from_utf8_lossy(&std::fs::read(&f).unwrap()).lines() {
                    agree(line).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                    lines += 1;
                    cut += usize::from(tool_output(line.as_bytes()).is_some());
                }
            }
        }
        assert!(cut > 100 && lines > 1000, "{cut} of {lines} lines cut");
    }

    /// Plain pieces the walk must not stop at: the other short escapes, DEL, a C1 control,
    /// bidi controls, a byte-order mark, and safe neighbours.
    const CLEANING: [&str; 10] =
        [r"\r", r"\/", r"\b", "\u{7f}", "\u{85}", "\u{a0}", "\u{202e}", "\u{2028}", "\u{feff}", "\u{fffd}"];

    /// Pieces of tool output that matter to the walk: quotes and backslashes at chunk edges,
    /// escapes it leaves to serde_json, lone surrogates, brackets and colons, and plain
    /// pieces that are not ASCII letters.
    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            1 => Just(r"\n"),
            1 => Just(r#"\""#),
            1 => Just(r"\\"),
            1 => Just(r"\u0041"),
            1 => Just(r"\ud800"),
            1 => Just(r"\x"),
            1 => Just("\u{1}"),
            3 => prop::sample::select(&CLEANING[..]),
            1 => Just("{"),
            1 => Just("}"),
            1 => Just("["),
            1 => Just(":"),
            1 => Just(","),
            1 => Just("\""),
            1 => Just("é"),
            1 => Just("aaaaaaaaaaaaaaa"),
            1 => Just("a"),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn cutting_reads_as_the_whole_line_does(stdout in text(), stderr in text(), delta in text(), late in any::<bool>(), retyped in any::<bool>()) {
            // A second `type` spelled with an escape makes the line one of a type not known,
            // whose payload is kept whole.
            let envelope = if retyped { format!(r#"{ENVELOPE},"typ\u0065":"x.custom""#) } else { ENVELOPE.to_owned() };
            let terminal = format!(r#""payload":{{"toolCallId":"c","name":"x","kind":"shell","output":{{"stdout":"{stdout}","stderr":"{stderr}"}}}}"#);
            let output = format!(r#""payload":{{"toolCallId":"c","stream":"stderr","delta":"{delta}"}}"#);
            for (t, payload) in [("tool.completed", terminal), ("tool.output", output)] {
                let line = if late { format!(r#"{{{envelope},{payload},"type":"{t}"}}"#) } else { format!(r#"{{"type":"{t}",{envelope},{payload}}}"#) };
                agree(&line)?;
            }
        }
    }
}
