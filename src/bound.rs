//! UTF-8-safe bounding of text: the cut primitives that the engine (tool output) and the
//! `truncate` stage share. A cut never splits a character and never grows a string, and it
//! keeps a redaction marker whole or not at all: a piece of one (`admin:[RE`) would read
//! as a value of its own. A tail kept begins at a line when one begins near the cut: a cut
//! inside a line can part a value from the word that makes it a secret (`pass|word: …`) or
//! a token from its prefix. What is cut is scrubbed first, with [`SCRUB_REACH`] bytes beyond
//! the cut, so that such a secret is found whole even in a line too long for that.

use std::ops::Range;

use crate::scrub::MARK;

/// How far past a tail's cut its first line may begin and still be where the tail begins:
/// as far as the secret rules look for a value after its word.
const LINE_REACH: usize = 4096;

/// Bytes beyond a cut that are kept until they are scrubbed with what stays: more than any
/// secret a rule finds (a PEM key) and than a rule looks for a value after its word, so
/// that a secret the cut parts is found whole, and the cut keeps its marker or nothing.
pub const SCRUB_REACH: usize = 8 * 1024;

/// How much of the newest text is kept for tool output bounded to `max` bytes before it is
/// scrubbed: the stages scrub it, then cut it to `max` ([`crate::pipeline::Finish`]), so a
/// secret the cut would part from its word is found with it, however long its line.
pub fn before_scrub(max: usize) -> usize {
    max.saturating_add(SCRUB_REACH)
}

/// Cuts `s` in the middle as [`bound`] with [`Keep::HeadTail`] would to `max` bytes, but
/// keeping [`SCRUB_REACH`] bytes more on each side of the cut, for a text that is scrubbed
/// before it is bounded (a line kept `raw`): the scrub then sees whole each secret that the
/// cut to `max` would part, and that cut ([`bound_cut_before`]) states the bytes of both
/// cuts in its marker. Returns true when anything was cut.
pub fn head_tail_before_scrub(s: &mut String, max: usize) -> bool {
    if s.len() <= max.saturating_add(2 * SCRUB_REACH) {
        return false;
    }
    let room = max.saturating_sub(marker(s.len()).len());
    let cut = middle(s, room, SCRUB_REACH);
    let marker = marker(cut.len());
    s.replace_range(cut, &marker);
    true
}

/// What a cut to `room` bytes, 70 % head and 30 % tail, takes from the middle of `s`, with
/// `margin` bytes more kept on each side. The tail gets the room the head leaves, so what
/// is kept is `room` bytes and the two margins.
fn middle(s: &str, room: usize, margin: usize) -> Range<usize> {
    let head = head_end(s, floor_boundary(s, room * 7 / 10 + margin));
    let tail = tail_start(s, ceil_boundary(s, s.len() - (room - head.saturating_sub(margin)) - margin));
    head..tail
}

/// The longest redaction marker, `[REDACTED:kind]`.
const MARKER_REACH: usize = 64;

/// How a bounded string keeps its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// The newest bytes (tool output: the end of a log is what matters).
    #[default]
    Tail,
    /// The oldest bytes.
    Head,
    /// 70 % head and 30 % tail around a visible marker stating the bytes cut.
    HeadTail,
}

impl std::str::FromStr for Keep {
    type Err = String;
    fn from_str(s: &str) -> Result<Keep, String> {
        match s {
            "tail" => Ok(Keep::Tail),
            "head" => Ok(Keep::Head),
            "head-tail" => Ok(Keep::HeadTail),
            _ => Err(format!("unknown keep mode {s:?} (expected tail, head or head-tail)")),
        }
    }
}

/// The largest index `<= i` that is a char boundary of `s`.
pub fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    // A UTF-8 character is at most 4 bytes, so a boundary is at most 3 bytes back.
    (i.saturating_sub(3)..=i).rev().find(|&j| s.is_char_boundary(j)).unwrap_or(0)
}

/// The smallest index `>= i` that is a char boundary of `s`.
pub fn ceil_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    (i..=(i + 3).min(s.len())).find(|&j| s.is_char_boundary(j)).unwrap_or(s.len())
}

/// The redaction marker that the cut at `at` would part, if any.
fn marker_around(s: &str, at: usize) -> Option<Range<usize>> {
    let lo = floor_boundary(s, at.saturating_sub(MARKER_REACH));
    let hi = floor_boundary(s, at + MARK.len());
    let start = lo + s[lo..hi].rmatch_indices(MARK).map(|(i, _)| i).find(|&i| lo + i < at)?;
    let end = start + s[start..].find(']')? + 1;
    (end > at && end - start <= MARKER_REACH).then_some(start..end)
}

/// The end of a head kept up to `at`: before the marker `at` would part.
pub(crate) fn head_end(s: &str, at: usize) -> usize {
    marker_around(s, at).map_or(at, |m| m.start)
}

/// The start of a tail kept from `at`: after the marker `at` would part.
pub(crate) fn tail_start(s: &str, at: usize) -> usize {
    marker_around(s, at).map_or(at, |m| m.end)
}

/// The start of the tail kept from `at` ([`tail_start`]), moved to the line after it when
/// `at` is inside a line and the next begins within [`LINE_REACH`] and is not the end.
fn tail_line_start(s: &str, at: usize) -> usize {
    let at = tail_start(s, at);
    if at == 0 || s.as_bytes()[at - 1] == b'\n' {
        return at;
    }
    let reach = &s.as_bytes()[at..s.len().min(at + LINE_REACH)];
    match memchr::memchr(b'\n', reach) {
        Some(i) if at + i + 1 < s.len() => at + i + 1,
        _ => at,
    }
}

/// The marker a head-tail cut leaves between the two halves.
pub fn marker(cut: usize) -> String {
    format!("\n[… {cut} bytes truncated …]\n")
}

/// True when `s` already carries a head-tail marker, so a second pass leaves it alone.
pub fn has_marker(s: &str) -> bool {
    s.contains(MARKER_END)
}

/// What a head-tail marker ends with, after its count.
const MARKER_END: &str = " bytes truncated …]\n";

/// The head-tail markers in `s`: where each is and the bytes it says were cut.
fn markers(s: &str) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
    const START: &str = "\n[… ";
    memchr::memmem::find_iter(s.as_bytes(), MARKER_END).filter_map(move |at| {
        let digits = s[..at].bytes().rev().take_while(u8::is_ascii_digit).count();
        let start = (at - digits).checked_sub(START.len())?;
        let cut = s[at - digits..at].parse().ok()?;
        (&s[start..at - digits] == START).then_some((start..at + MARKER_END.len(), cut))
    })
}

/// Bounds `s` to at most `max` bytes in place. Returns true when anything was cut.
pub fn bound(s: &mut String, max: usize, keep: Keep) -> bool {
    if s.len() <= max {
        return false;
    }
    match keep {
        Keep::Tail => {
            let start = tail_line_start(s, ceil_boundary(s, s.len() - max));
            s.drain(..start);
        }
        Keep::Head => {
            let end = head_end(s, floor_boundary(s, max));
            s.truncate(end);
        }
        Keep::HeadTail => head_tail(s, max, false),
    }
    true
}

/// Bounds with [`Keep::HeadTail`] a text that [`head_tail_before_scrub`] cut (and that was
/// scrubbed since): a marker this cut takes away counts for the bytes it stood for, so the
/// marker left states every byte cut from the original. Returns true when anything was cut.
pub fn bound_cut_before(s: &mut String, max: usize) -> bool {
    s.len() > max && {
        head_tail(s, max, true);
        true
    }
}

/// Cuts `s`, longer than `max`, to 70 % head and 30 % tail around a marker stating the
/// bytes cut, those that markers in the cut stood for included when `folds`.
fn head_tail(s: &mut String, max: usize, folds: bool) {
    let stood_for = |s: &str, n: usize| {
        if folds {
            markers(s).fold(n, |n, (at, cut)| (n - at.len()).saturating_add(cut))
        } else {
            n
        }
    };
    // The marker's own length is paid out of the budget, so the result stays within `max`
    // and a second pass finds nothing to cut.
    let probe = marker(stood_for(s, s.len())).len();
    if max <= probe {
        let end = head_end(s, floor_boundary(s, max));
        s.truncate(end);
        return;
    }
    let cut = middle(s, max - probe, 0);
    let stood = stood_for(&s[cut.clone()], cut.len());
    s.replace_range(cut, &marker(stood));
}

/// Text that is appended to and replaced, holding at most about twice its bound so that
/// memory stays bounded however long a tool streams; [`BoundedText::finish`] cuts to the
/// bound, keeping the newest bytes.
#[derive(Debug, Clone, Default)]
pub struct BoundedText {
    text: String,
    dropped: bool,
}

impl BoundedText {
    /// Appends a delta.
    pub fn push(&mut self, delta: &str, max: usize) {
        // A delta longer than the bound replaces everything: copy only its tail, so a huge
        // output costs its bound here, not its size.
        if delta.len() > max {
            self.text.clear();
            self.dropped = true;
            self.text.push_str(&delta[tail_line_start(delta, ceil_boundary(delta, delta.len() - max))..]);
            return;
        }
        self.text.push_str(delta);
        if self.text.len() > max.saturating_mul(2) {
            self.dropped |= bound(&mut self.text, max, Keep::Tail);
        }
    }

    /// Replaces the whole text with a snapshot.
    pub fn replace(&mut self, snapshot: &str, max: usize) {
        self.text.clear();
        self.dropped = false;
        self.push(snapshot, max);
    }

    /// The text so far (possibly above the bound until finished).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when nothing has been received.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The bounded text and whether anything was cut.
    pub fn finish(mut self, max: usize) -> (String, bool) {
        let cut = bound(&mut self.text, max, Keep::Tail);
        (self.text, self.dropped || cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_cut_before_the_scrub_then_to_the_bound_is_the_cut_to_the_bound(
            text in "[ab\n é🎉]{0,200}",
            repeat in 1usize..300,
            max in 0usize..3000,
        ) {
            let text = text.repeat(repeat);
            let mut direct = text.clone();
            let cut = bound(&mut direct, max, Keep::HeadTail);
            let mut twice = text.clone();
            head_tail_before_scrub(&mut twice, max);
            proptest::prop_assert!(twice.len() <= max + 2 * SCRUB_REACH + 64 || twice == text);
            proptest::prop_assert_eq!(bound_cut_before(&mut twice, max), cut);
            proptest::prop_assert_eq!(twice, direct);
        }
    }

    #[test]
    fn a_cut_after_the_cut_before_the_scrub_states_the_bytes_of_both() {
        let text: String = (0..40_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let mut s = text.clone();
        assert!(head_tail_before_scrub(&mut s, 500));
        let (before, mut plain) = (s.clone(), s.clone());
        assert!(bound_cut_before(&mut s, 500));
        let (at, cut) = markers(&s).next().expect("one marker");
        assert_eq!(markers(&s).count(), 1, "{s}");
        assert_eq!(cut, text.len() - (s.len() - at.len()), "{s}");
        assert!(s.len() <= 500 && text.starts_with(&s[..at.start]) && text.ends_with(&s[at.end..]));
        // Any other cut counts the bytes of the text it is given, markers and all.
        bound(&mut plain, 500, Keep::HeadTail);
        let (at, cut) = markers(&plain).next().expect("one marker");
        assert_eq!(cut, before.len() - (plain.len() - at.len()), "{plain}");
    }

    #[test]
    fn tail_cut_never_splits_a_four_byte_char() {
        // "🎉" is 4 bytes; a cut at 5 bytes from the end lands inside it.
        let mut s = String::from("ab🎉cd");
        assert!(bound(&mut s, 5, Keep::Tail));
        assert_eq!(s, "cd");
        let mut s = String::from("ab🎉cd");
        assert!(bound(&mut s, 6, Keep::Tail));
        assert_eq!(s, "🎉cd");
    }

    #[test]
    fn a_cut_keeps_a_redaction_marker_whole_or_not_at_all() {
        let text = "curl -u admin:[REDACTED:password] https://x and then [REDACTED:github-token] end";
        for keep in [Keep::Head, Keep::Tail, Keep::HeadTail] {
            for max in 0..text.len() {
                let mut s = text.to_owned();
                bound(&mut s, max, keep);
                assert!(s.len() <= max, "{keep:?} {max}: {s:?}");
                for (i, _) in s.match_indices('[').filter(|(i, _)| !s[*i..].starts_with("[… ")) {
                    let rest = &s[i..];
                    assert!(
                        rest.starts_with("[REDACTED:password]") || rest.starts_with("[REDACTED:github-token]"),
                        "{keep:?} {max}: {s:?}"
                    );
                }
                assert!(!s.ends_with("[REDACTED") && !s.starts_with("DACTED"), "{keep:?} {max}: {s:?}");
            }
        }
    }

    #[test]
    fn every_redaction_marker_is_within_reach() {
        for rule in crate::scrub::rules::RULES {
            assert!(MARK.len() + rule.kind.len() < MARKER_REACH, "{} and its brackets", rule.kind);
        }
    }

    #[test]
    fn a_tail_begins_at_a_line_when_one_begins_near_the_cut() {
        let mut s = String::from("export PASSWORD=hunter2hunter2\nsecond line\nthird");
        assert!(bound(&mut s, 40, Keep::Tail));
        assert_eq!(s, "second line\nthird", "the value is not kept without its word");
        // A cut at a line's start keeps that line.
        let mut s = String::from("first\nsecond\nthird");
        assert!(bound(&mut s, 12, Keep::Tail));
        assert_eq!(s, "second\nthird");
        // A last line alone, or one too far past the cut, is cut where the bound says.
        let mut s = format!("{}\n", "x".repeat(100));
        assert!(bound(&mut s, 10, Keep::Tail));
        assert_eq!(s, "xxxxxxxxx\n");
        let mut s = format!("{}\nend", "y".repeat(LINE_REACH + 100));
        assert!(bound(&mut s, LINE_REACH + 10, Keep::Tail));
        assert_eq!(s.len(), LINE_REACH + 10);
    }

    #[test]
    fn head_cut_never_splits_a_four_byte_char() {
        let mut s = String::from("ab🎉cd");
        assert!(bound(&mut s, 4, Keep::Head));
        assert_eq!(s, "ab");
    }

    #[test]
    fn under_budget_is_unchanged() {
        let mut s = String::from("héllo");
        assert!(!bound(&mut s, 6, Keep::HeadTail));
        assert_eq!(s, "héllo");
    }

    #[test]
    fn head_tail_states_the_cut_and_stays_within_budget() {
        let mut s = "x".repeat(1000) + &"y".repeat(1000);
        assert!(bound(&mut s, 200, Keep::HeadTail));
        assert!(s.len() <= 200, "{} bytes", s.len());
        assert!(s.starts_with('x') && s.ends_with('y'));
        let cut: usize = s.split("[… ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert_eq!(s.len() - marker(cut).len() + cut, 2000);
        let again = s.clone();
        assert!(!bound(&mut s, 200, Keep::HeadTail));
        assert_eq!(s, again);
    }

    #[test]
    fn bounded_text_keeps_the_newest_bytes() {
        let mut b = BoundedText::default();
        for i in 0..1000 {
            b.push(&format!("{i:04}🎉\n"), 64);
        }
        let (text, cut) = b.finish(64);
        assert!(cut);
        assert!(text.len() <= 64);
        assert!(text.ends_with("0999🎉\n"));
    }
}
