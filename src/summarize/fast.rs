//! The fast way in: a canonical line read without keeping its text. Most of a stream's
//! bytes are assistant text and tool output, which a report never keeps, so those lines are
//! checked for shape and counted, a tool's output is cut out of the line before it is parsed
//! (or measured as it is parsed, when it cannot be cut) and its end kept, and only the other
//! lines are read as a whole [`Event`]. The result is the one [`Summarizer::event`] gives; a
//! test holds the two ways to that.

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::clip::tail_to_clip;
use super::collect::{OutputFacts, Summarizer};
use super::key::line_digest;
use super::model::limits;
use crate::event::*;
use crate::scan::{self, Positions};
use crate::scrub::clean_json_line;

impl Summarizer {
    /// Takes one line of canonical JSONL into account, control bytes removed from its
    /// strings first (from ids and names too, before anything reads them); `Err` says why it
    /// is not an event.
    pub fn line(&mut self, line: &str) -> Result<(), String> {
        // Tool output with no control byte to remove is cut before the line is cleaned and
        // parsed: it is the bulk of a run, and only measured.
        let digest = line_digest(line.as_bytes());
        let cut = Event::cut_tool_output(line).filter(|cut| cut.cut.iter().all(|piece| piece.clean));
        if let Some(cut) = cut {
            if self.fast(&clean_json_line(&cut.rest), &cut.cut, digest).is_some() {
                return Ok(());
            }
        }
        let line = clean_json_line(line);
        match self.fast(&line, &[], digest) {
            Some(()) => Ok(()),
            None => self.typed(&line, digest),
        }
    }

    /// Takes one line into account the typed way only: cleaned, then read as one whole
    /// [`Event`]. It gives what [`Summarizer::line`] gives, slowly: the reference the fast
    /// way is tested against.
    pub fn typed_line(&mut self, line: &str) -> Result<(), String> {
        self.typed(&clean_json_line(line), line_digest(line.as_bytes()))
    }

    /// Takes a line already cleaned of control bytes into account the typed way, as one
    /// whole [`Event`]; `digest` is the [`line_digest`] of the line as it was read.
    fn typed(&mut self, line: &str, digest: u128) -> Result<(), String> {
        let mut ev: Event = serde_json::from_str(line).map_err(|e| crate::event::line_error(&e))?;
        let session = std::mem::take(&mut ev.session_id);
        self.take(&session, ev, None, &[], digest);
        Ok(())
    }

    /// Takes `line` into account the fast way when it is of a hot type and plainly written,
    /// with the tool output `cut` from it in place of its emptied strings; `None` (taking
    /// nothing) leaves every other line, and every line this way cannot read or reads
    /// doubtfully (a repeated `type` or `payload`), to the typed way, which also words the
    /// error of a line that is not an event.
    fn fast(&mut self, line: &str, cut: &[CutOutput<'_>], digest: u128) -> Option<()> {
        let mut de = serde_json::Deserializer::from_str(line);
        let x = de.deserialize_map(EnvelopeVisitor(Fast(cut))).ok()?;
        de.end().ok()?;
        let kind = Kind::of(x.type_name.as_deref()?);
        let (body, output, bodies) = match x.payload? {
            Payload::Read(body, output, bodies) => (body, output, bodies),
            Payload::Later(raw) if kind != Kind::Whole => {
                match PayloadSeed(kind, cut).deserialize(&mut serde_json::Deserializer::from_str(raw.get())).ok()? {
                    Payload::Read(body, output, bodies) => (body, output, bodies),
                    _ => unreachable!("a seed of a kind read in place reads it"),
                }
            }
            _ => return None,
        };
        let Str(session) = x.head.session_id.clone()?;
        // The envelope's strings are not kept: the session is passed apart, ids unused.
        let ev = x.head.into_event::<serde_json::Error>(body, true).ok()?;
        let [a, b] = bodies.map(|t| t.map(JsonStr::text));
        self.take(&session, ev, output, &[a.as_deref().unwrap_or(""), b.as_deref().unwrap_or("")], digest);
        Some(())
    }
}

/// How a line is read: the hot types in place, every other one as a whole [`Event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Reasoning,
    ToolOutput,
    ToolEnded(Outcome),
    Whole,
}

impl Kind {
    fn of(type_name: &str) -> Kind {
        match type_name {
            "text" => Kind::Text,
            "reasoning" => Kind::Reasoning,
            "tool.output" => Kind::ToolOutput,
            t => match t.strip_prefix("tool.").and_then(|s| Outcome::ALL.into_iter().find(|o| o.as_str() == s)) {
                Some(o) => Kind::ToolEnded(o),
                None => Kind::Whole,
            },
        }
    }
}

/// A payload: read in the same pass as the envelope when the type came first (as it does in
/// canonical output), else kept to be read once the type is known.
// `Read` is the common case: boxing its body would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
enum Payload<'a> {
    /// The body without its texts, the facts of a tool's output, and the texts left out (in
    /// the order [`Event::for_each_text_mut`] visits them).
    Read(Body, Option<OutputFacts>, [Option<JsonStr<'a>>; 2]),
    Later(&'a RawValue),
    Skipped,
}

/// Reads a payload of a kind, with the tool output cut from its line in place of the
/// emptied strings.
struct PayloadSeed<'c, 'a>(Kind, &'c [CutOutput<'a>]);

impl<'a> PayloadSeed<'_, 'a> {
    /// The string cut from `field`, else `read`.
    fn restore(&self, field: OutputField, read: JsonStr<'a>) -> JsonStr<'a> {
        self.1.iter().find(|c| c.field == field).map_or(read, |c| JsonStr {
            literal: c.literal,
            len: c.len as u64,
            unicode: false,
        })
    }
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_, 'de> {
    type Value = Payload<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Payload<'de>, D::Error> {
        Ok(match self.0 {
            Kind::Text => {
                let t = TextView::deserialize(d)?;
                Payload::Read(
                    Body::Text(Text { delta: String::new(), role: t.role, piece: Piece::Next }),
                    None,
                    [Some(t.delta), None],
                )
            }
            Kind::Reasoning => {
                let t = DeltaView::deserialize(d)?;
                Payload::Read(
                    Body::Reasoning(Reasoning { delta: String::new(), piece: Piece::Next }),
                    None,
                    [Some(t.delta), None],
                )
            }
            Kind::ToolOutput => {
                let t = ToolOutputView::deserialize(d)?;
                let delta = self.restore(OutputField::Delta, t.delta);
                Payload::Read(
                    Body::ToolOutput(ToolOutput {
                        tool_call_id: String::new(),
                        stream: t.stream,
                        delta: String::new(),
                    }),
                    None,
                    [Some(delta), None],
                )
            }
            Kind::ToolEnded(outcome) => {
                let mut view = ToolEndedView::deserialize(d)?;
                if let Some(o) = &mut view.output {
                    o.stdout = o.stdout.map(|s| self.restore(OutputField::Stdout, s));
                    o.stderr = o.stderr.map(|s| self.restore(OutputField::Stderr, s));
                }
                let bodies = view.output.as_ref().map_or([None, None], |o| [o.stdout, o.stderr]);
                let (body, facts) = view.into_body(outcome);
                Payload::Read(body, facts, bodies)
            }
            Kind::Whole => {
                IgnoredAny::deserialize(d)?;
                Payload::Skipped
            }
        })
    }
}

/// The fast way's reader of event objects: the hot types' payloads read into views, with the
/// tool output cut from the line in place of the emptied strings; a repeated `type` or
/// `payload` (whose last one counts in the typed way) is left to the typed way.
struct Fast<'c, 'a>(&'c [CutOutput<'a>]);

impl<'de> EventReader<'de> for Fast<'_, 'de> {
    type Payload = Payload<'de>;
    type Output = Fields<'de, Payload<'de>>;
    const ONCE: bool = true;

    fn payload<A: MapAccess<'de>>(&self, type_name: Option<&str>, map: &mut A) -> Result<Payload<'de>, A::Error> {
        match type_name {
            Some(t) => map.next_value_seed(PayloadSeed(Kind::of(t), self.0)),
            None => Ok(Payload::Later(map.next_value()?)),
        }
    }

    fn bound(_: &Payload<'de>) -> bool {
        true
    }

    fn finish<E: de::Error>(&self, fields: Fields<'de, Payload<'de>>) -> Result<Self::Output, E> {
        Ok(fields)
    }
}

#[derive(Deserialize)]
struct TextView<'a> {
    #[serde(borrow)]
    #[allow(dead_code)]
    delta: JsonStr<'a>,
    role: Role,
}

#[derive(Deserialize)]
struct DeltaView<'a> {
    #[serde(borrow)]
    #[allow(dead_code)]
    delta: JsonStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolOutputView<'a> {
    #[serde(borrow)]
    #[allow(dead_code)]
    tool_call_id: JsonStr<'a>,
    stream: Stream,
    #[serde(borrow)]
    #[allow(dead_code)]
    delta: JsonStr<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolEndedView<'a> {
    tool_call_id: String,
    name: String,
    kind: ToolKind,
    #[serde(default)]
    duration_ms: Option<u64>,
    #[serde(default, borrow)]
    output: Option<OutputView<'a>>,
    #[serde(default)]
    error: Option<ErrorInfo>,
}

#[derive(Deserialize)]
struct OutputView<'a> {
    #[serde(default)]
    exit_code: Option<i64>,
    #[serde(default, borrow)]
    stdout: Option<JsonStr<'a>>,
    #[serde(default, borrow)]
    stderr: Option<JsonStr<'a>>,
    #[serde(default)]
    truncated: bool,
}

impl ToolEndedView<'_> {
    fn into_body(self, outcome: Outcome) -> (Body, Option<OutputFacts>) {
        let facts = self.output.as_ref().map_or_else(OutputFacts::default, |o| OutputFacts {
            stdout_bytes: o.stdout.map_or(0, |s| s.len),
            stderr_bytes: o.stderr.map_or(0, |s| s.len),
            // Only a call that did not complete shows the end of its output.
            excerpt: (outcome != Outcome::Completed).then(|| o.excerpt()).flatten(),
        });
        let output = self.output.map(|o| ShellResult {
            exit_code: o.exit_code,
            stdout: None,
            stderr: None,
            truncated: o.truncated,
        });
        let body = Body::ToolEnded(ToolEnded {
            outcome,
            tool_call_id: self.tool_call_id,
            name: self.name,
            kind: self.kind,
            duration_ms: self.duration_ms,
            output,
            error: self.error,
        });
        (body, Some(facts))
    }
}

impl OutputView<'_> {
    /// The end of stderr when it has any, else of stdout.
    fn excerpt(&self) -> Option<String> {
        [self.stderr, self.stdout].into_iter().flatten().find_map(|s| {
            let text: String = serde_json::from_str(s.literal).ok()?;
            let text = text.trim_end();
            (!text.is_empty()).then(|| tail_to_clip(text, limits::EXCERPT))
        })
    }
}

/// A JSON string left where it lies in the line: checked and measured (its unescaped UTF-8
/// length) without being copied; read only when its text is needed.
#[derive(Clone, Copy)]
struct JsonStr<'a> {
    /// The string as written, quotes included.
    literal: &'a str,
    len: u64,
    /// Whether it has a `\u` escape, the only one that can stand for a character of a
    /// redaction marker (`[REDACTED:kind]`).
    unicode: bool,
}

impl<'a> JsonStr<'a> {
    /// The text as far as redaction markers go: the literal between its quotes when no `\u`
    /// escape can hide a marker's character (the short escapes stand for none and are none),
    /// else the string read.
    fn text(self) -> Cow<'a, str> {
        let literal = self.literal;
        match self.unicode {
            false => Cow::Borrowed(&literal[1..literal.len() - 1]),
            true => Cow::Owned(serde_json::from_str(literal).unwrap_or_default()),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'a RawValue>::deserialize(d)?;
        match unescaped_len(raw.get()) {
            Some((len, unicode)) => Ok(JsonStr { literal: raw.get(), len, unicode }),
            None => Err(de::Error::invalid_type(de::Unexpected::Other(raw.get().get(..1).unwrap_or("")), &"a string")),
        }
    }
}

/// The UTF-8 length of a JSON string literal once unescaped and whether it has a `\u`
/// escape, or `None` when it is not a string (or pairs its surrogates wrongly, which
/// serde_json rejects as well). The literal has been scanned by serde_json already, so every
/// escape in it is well formed.
fn unescaped_len(raw: &str) -> Option<(u64, bool)> {
    let body = raw.as_bytes().strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let hex = |at: usize| {
        body.get(at..at + 4).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    // `len` counts `body[..i]` unescaped; backslashes before `i` were inside an escape.
    let (mut len, mut i, mut unicode) = (0u64, 0usize, false);
    for j in Positions::new(body, 0, |v| scan::mask(scan::eq(v, b'\\'))) {
        if j < i {
            continue;
        }
        len += (j - i) as u64;
        i = j;
        if body.get(i + 1) != Some(&b'u') {
            len += 1;
            i += 2;
            continue;
        }
        let c = hex(i + 2)?;
        unicode = true;
        i += 6;
        len += match c {
            0xd800..=0xdbff => {
                let low = body.get(i..i + 2).filter(|p| *p == b"\\u").and_then(|_| hex(i + 2))?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return None;
                }
                i += 6;
                4
            }
            0xdc00..=0xdfff => return None,
            0..=0x7f => 1,
            0x80..=0x7ff => 2,
            _ => 3,
        };
    }
    Some((len + (body.len() - i) as u64, unicode))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::unescaped_len;

    /// `s` as a JSON literal with every character outside printable ASCII, and `\` and `"`,
    /// as `\u` escapes (surrogate pairs beyond the BMP).
    fn ascii_literal(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            if (' '..='~').contains(&c) && c != '\\' && c != '"' {
                out.push(c);
            } else {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units).iter().for_each(|u| out.push_str(&format!("\\u{u:04x}")));
            }
        }
        out + "\""
    }

    proptest! {
        #[test]
        fn unescaped_lengths_of_any_string(s in ".*", t in "[\\\\\"\n\tau0\u{1}\u{e9}\u{1f389}]{0,40}") {
            for s in [s.as_str(), t.as_str()] {
                // serde_json writes a `\u` escape for the controls without a short one.
                let controls = s.chars().any(|c| c < ' ' && !matches!(c, '\x08' | '\t' | '\n' | '\x0c' | '\r'));
                let all_ascii = s.chars().all(|c| (' '..='~').contains(&c) && c != '\\' && c != '"');
                for (lit, unicode) in [(serde_json::to_string(s).unwrap(), controls), (ascii_literal(s), !all_ascii)] {
                    prop_assert_eq!(serde_json::from_str::<String>(&lit).unwrap(), s);
                    prop_assert_eq!(unescaped_len(&lit), Some((s.len() as u64, unicode)), "{}", lit);
                }
            }
        }
    }

    #[test]
    fn unescaped_lengths_are_those_of_the_parsed_strings() {
        for lit in [r#""""#, r#""abc""#, r#""a\nb\"c\\""#, r#""\u00e9\u20ac\ud83c\udf89é✓""#, r#""\/\b\f\r\t""#] {
            let parsed: String = serde_json::from_str(lit).unwrap();
            assert_eq!(unescaped_len(lit).map(|(n, _)| n), Some(parsed.len() as u64), "{lit}");
            assert_eq!(unescaped_len(lit).map(|(_, u)| u), Some(lit.contains("\\u")), "{lit}");
        }
        for bad in [r#""\ud800""#, r#""\udc00""#, r#""\ud800\u0041""#, "5", "null"] {
            assert!(serde_json::from_str::<String>(bad).is_err(), "{bad}");
            assert_eq!(unescaped_len(bad), None, "{bad}");
        }
    }
}
