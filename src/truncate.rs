//! The `truncate` stage: text fields of an event bounded, UTF-8-safe, never grown. Tool
//! output keeps its newest bytes and is marked `truncated: true`; other text keeps 70 %
//! head and 30 % tail around a marker stating the bytes cut. Bounding twice equals
//! bounding once. [`TextTruncator`] bounds a whole plain-text stream the same way, in
//! memory bounded by about three times the budget, and [`bound_text`] reads one from
//! input sources.

use crate::bound::{
    bound, bound_cut_before, ceil_boundary, floor_boundary, head_end, marker, tail_start, BoundedText, Keep,
};
use crate::event::{Event, TextField};
use crate::io::{stop_requested, Sources, Unreadable};
use crate::scrub::Scrubber;
use std::io::Read;

/// Which text fields to bound, by role (see [`TextField`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSet(u8);

impl FieldSet {
    /// Every role.
    pub const ALL: FieldSet = FieldSet(0b11111);

    /// No role; add some with [`FieldSet::with`].
    pub const NONE: FieldSet = FieldSet(0);

    fn bit(field: TextField) -> u8 {
        match field {
            TextField::ToolOutput => 1,
            TextField::Input => 2,
            TextField::Text => 4,
            TextField::Raw => 8,
            TextField::Other => 16,
        }
    }

    /// This set and `field`.
    pub fn with(self, field: TextField) -> FieldSet {
        FieldSet(self.0 | Self::bit(field))
    }

    /// True when `field` is in the set.
    pub fn contains(self, field: TextField) -> bool {
        self.0 & Self::bit(field) != 0
    }
}

/// Bounds the text fields of events.
#[derive(Debug, Clone)]
pub struct Truncator {
    max: usize,
    keep: Option<Keep>,
    fields: FieldSet,
    /// Raw lines come cut by the engine ([`crate::bound::head_tail_before_scrub`]).
    raw_cut_before: bool,
}

impl Truncator {
    /// Bounds every field to `max` bytes; `keep` overrides the per-field default (tool
    /// output: [`Keep::Tail`]; everything else: [`Keep::HeadTail`]).
    pub fn new(max: usize, keep: Option<Keep>) -> Truncator {
        Truncator { max, keep, fields: FieldSet::ALL, raw_cut_before: false }
    }

    /// Bounds only the fields in `fields`.
    pub fn with_fields(mut self, fields: FieldSet) -> Truncator {
        self.fields = fields;
        self
    }

    /// Bounds events straight from the engine, whose raw lines it cut before they were
    /// scrubbed: the marker of a raw line's cut states the bytes of both cuts.
    pub fn after_engine(mut self) -> Truncator {
        self.raw_cut_before = true;
        self
    }

    /// The byte budget of one field.
    pub fn max(&self) -> usize {
        self.max
    }

    /// How a field of this role is kept.
    pub fn keep_for(&self, field: TextField) -> Keep {
        self.keep.unwrap_or(if field == TextField::ToolOutput { Keep::Tail } else { Keep::HeadTail })
    }

    /// Bounds one string of the given role in place; true when it was cut.
    pub fn truncate_str(&self, field: TextField, s: &mut String) -> bool {
        if !self.fields.contains(field) {
            return false;
        }
        match self.keep_for(field) {
            Keep::HeadTail if self.raw_cut_before && field == TextField::Raw => bound_cut_before(s, self.max),
            keep => bound(s, self.max, keep),
        }
    }

    /// Bounds `event` as [`Truncator::truncate_event`] does, and scrubs what a cut left
    /// with `scrubber`, so that an event that was scrubbed stays so: a cut can leave what
    /// reads as a secret at its edge (`AKIA` and 16 characters, of a run that went on and
    /// was no key). Its marker may take the field a few bytes over the bound, which is then
    /// bounded again; each pass only redacts or cuts, and a few settle it. Returns true when
    /// anything was cut.
    pub fn truncate_scrubbed(&self, event: &mut Event, scrubber: &mut Scrubber) -> bool {
        if !self.truncate_event(event) {
            return false;
        }
        for _ in 0..3 {
            let before = scrubber.redactions();
            scrubber.scrub_event(event);
            if scrubber.redactions() == before || !self.truncate_event(event) {
                break;
            }
        }
        true
    }

    /// Bounds one event's fields; tool output that was cut is marked `truncated: true`.
    /// Returns true when anything was cut.
    pub fn truncate_event(&self, event: &mut Event) -> bool {
        let (mut any, mut output_cut) = (false, false);
        event.for_each_text_mut(|field, s| {
            if self.truncate_str(field, s) {
                any = true;
                output_cut |= field == TextField::ToolOutput;
            }
        });
        if output_cut {
            event.mark_truncated();
        }
        any
    }
}

/// Bounds a whole stream of text to `max` bytes as it is read: the head is kept as it
/// arrives, the newest bytes in a [`BoundedText`], and the result is what [`bound`] would
/// give for the whole text, except where `--keep head` ends inside a redaction marker that
/// goes on past the bound (the head is cut before the rest is read).
#[derive(Debug)]
pub struct TextTruncator {
    max: usize,
    keep: Keep,
    head: String,
    tail: BoundedText,
    total: usize,
}

impl TextTruncator {
    /// A truncator keeping `max` bytes in the `keep` way.
    pub fn new(max: usize, keep: Keep) -> TextTruncator {
        TextTruncator { max, keep, head: String::new(), tail: BoundedText::default(), total: 0 }
    }

    /// Takes the next piece of text.
    pub fn push(&mut self, text: &str) {
        self.total += text.len();
        let room = self.max.saturating_sub(self.head.len());
        let split = if self.tail.is_empty() { floor_boundary(text, room.min(text.len())) } else { 0 };
        // A char that straddles the head's end goes to the tail, so head and tail are each
        // whole characters and, in order, are the text with a gap between them.
        if split > 0 && self.keep != Keep::Tail {
            self.head.push_str(&text[..split]);
        } else if split > 0 {
            self.tail.push(&text[..split], self.max);
        }
        if split < text.len() {
            self.tail.push(&text[split..], self.max);
        }
    }

    /// The bounded text and whether anything was cut.
    pub fn finish(self) -> (String, bool) {
        let TextTruncator { max, keep, head, tail, total } = self;
        let kept = head.len() + tail.as_str().len();
        if kept == total {
            let mut all = head;
            all.push_str(tail.as_str());
            let cut = bound(&mut all, max, keep);
            return (all, cut);
        }
        // Bytes were dropped between the head and the newest bytes: cut as `bound` would
        // cut the whole text, taking the tail from the newest bytes.
        match keep {
            Keep::Head => (head, true),
            Keep::Tail => tail.finish(max),
            Keep::HeadTail => {
                let probe = marker(total).len();
                if max <= probe {
                    let end = floor_boundary(&head, max);
                    return (head[..end].to_owned(), true);
                }
                let room = max - probe;
                let head_end = head_end(&head, floor_boundary(&head, room * 7 / 10));
                let newest = tail.as_str();
                let start = tail_start(newest, ceil_boundary(newest, newest.len().saturating_sub(room - head_end)));
                let cut = total - head_end - (newest.len() - start);
                let mut out = String::with_capacity(max);
                out.push_str(&head[..head_end]);
                out.push_str(&marker(cut));
                out.push_str(&newest[start..]);
                (out, true)
            }
        }
    }
}

/// Bounds the whole text of `sources`, read in order as one stream (`truncate --text`):
/// bytes as they are (invalid UTF-8 decodes to U+FFFD), line endings and all, so the input
/// is read in chunks rather than lines. A source that cannot be read is handed to
/// `unreadable` and the next is read; a stop request ends the input as an end of file
/// would. Returns the bounded text and whether anything was cut.
pub fn bound_text(
    sources: &Sources,
    mut t: TextTruncator,
    mut unreadable: impl FnMut(Unreadable),
) -> anyhow::Result<(String, bool)> {
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    for source in sources.iter()? {
        let source = source?;
        if stop_requested().is_some() {
            break;
        }
        let mut input = match source.open() {
            Ok(input) => input,
            Err(error) => {
                unreadable(Unreadable { name: source.name(), error, part_way: false });
                continue;
            }
        };
        while stop_requested().is_none() {
            let n = match input.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    unreadable(Unreadable { name: source.name(), error, part_way: true });
                    break;
                }
            };
            pending.extend_from_slice(&chunk[..n]);
            let whole = complete_utf8(&pending);
            t.push(&String::from_utf8_lossy(&pending[..whole]));
            pending.drain(..whole);
        }
    }
    t.push(&String::from_utf8_lossy(&pending));
    Ok(t.finish())
}

/// The length of the longest prefix of `b` that does not end inside a UTF-8 character
/// (invalid bytes count as whole; they decode to U+FFFD).
fn complete_utf8(b: &[u8]) -> usize {
    match std::str::from_utf8(b) {
        Ok(_) => b.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => {
            // Invalid bytes inside: hold back at most the last 3 bytes if they start a char.
            let tail = b.len().saturating_sub(3);
            (tail..b.len()).find(|&i| b[i] >= 0xc0).unwrap_or(b.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(pieces: &[&str], max: usize, keep: Keep) -> String {
        let mut t = TextTruncator::new(max, keep);
        pieces.iter().for_each(|p| t.push(p));
        t.finish().0
    }

    #[test]
    fn streaming_equals_bounding_the_whole_text() {
        let text: String = (0..5000).map(|i| format!("line {i} héllo 🎉\n")).collect();
        let pieces: Vec<&str> = text.split_inclusive('\n').collect();
        for keep in [Keep::Tail, Keep::Head, Keep::HeadTail] {
            for max in [0, 10, 64, 1000, 100_000, 1_000_000] {
                let mut whole = text.clone();
                bound(&mut whole, max, keep);
                assert_eq!(streamed(&pieces, max, keep), whole, "{keep:?} {max}");
            }
        }
    }

    #[test]
    fn fields_outside_the_set_are_left_alone() {
        let t = Truncator::new(4, None).with_fields(FieldSet::NONE.with(TextField::Text));
        let mut s = "0123456789".to_owned();
        assert!(!t.truncate_str(TextField::ToolOutput, &mut s));
        assert!(t.truncate_str(TextField::Text, &mut s));
        assert_eq!(s, "0123");
    }
}
