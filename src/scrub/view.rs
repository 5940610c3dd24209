//! What a text says once its disguises are taken off: invisible format characters (Unicode
//! category Cf: U+200B, U+2060, U+00AD, …) removed, JSON string escapes (`\/`, `\u0067`,
//! `\n`, `\"`) and percent-encoding (`%3A%2F%2F`, `%20`) decoded. A secret hidden by any of
//! them looks the same to a reader (or to a program that decodes the text) as the secret
//! itself, so the detector also searches this view and maps what it finds back to the whole
//! span of the original text, the invisible characters and escapes inside included.
//!
//! One pass, linear in the text, and only for texts that hold a candidate disguise.

use std::ops::Range;

use crate::scan::{self, eq, u8x16, Positions};

/// A decoded text and the way back to the original's offsets.
pub struct View {
    /// The decoded text.
    pub text: String,
    /// `(view offset, original offset)` at the start of every decoded unit and of every
    /// run of copied text after one; between two entries the offsets advance together.
    marks: Vec<(usize, usize)>,
    /// The original's length: where the view's end maps to.
    len: usize,
}

/// True when `text` may hold a disguise: a `\` before a character it escapes, a `%` before
/// two hex digits, or a format character. Most texts with non-ASCII characters hold none
/// (a dash, an arrow, an emoji), so those are decoded and tested, not taken on their first
/// byte: a false "may" costs a whole [`View::of`] pass.
fn may_disguise(text: &str) -> bool {
    let b = text.as_bytes();
    Positions::new(b, 0, disguise_mask).any(|i| match b[i] {
        b'\\' => match b.get(i + 1) {
            Some(b'/' | b'n' | b'r' | b't' | b'"') => true,
            // A Windows path's `\users` is no escape.
            Some(b'u') => hex4(b, i + 2).is_some(),
            _ => false,
        },
        b'%' => b.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
        _ => text[i..].chars().next().is_some_and(is_format_char),
    })
}

/// Bit `k` is set when byte `k` of `v` may start a disguise: a `\`, a `%`, or the first
/// byte of a format character's encoding (a byte from 0xc2 up always starts a character).
fn disguise_mask(v: u8x16) -> u32 {
    let first = [0xc2, 0xd8, 0xdb, 0xdc, 0xe0, 0xe1, 0xe2, 0xef, 0xf0, 0xf3].map(|c| eq(v, c));
    scan::mask(first.into_iter().fold(eq(v, b'\\') | eq(v, b'%'), |m, c| m | c))
}

/// True for the characters of Unicode general category Cf (format), which render as nothing.
pub fn is_format_char(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}' | '\u{890}'..='\u{891}'
        | '\u{8e2}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}' | '\u{110cd}' | '\u{13430}'..='\u{1343f}' | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}' | '\u{e0001}' | '\u{e0020}'..='\u{e007f}')
}

impl View {
    /// The view of `text`, or `None` when it is the text itself.
    pub fn of(text: &str) -> Option<View> {
        if !may_disguise(text) {
            return None;
        }
        let b = text.as_bytes();
        let mut view = View { text: String::with_capacity(text.len()), marks: Vec::new(), len: text.len() };
        // Original bytes before `copied` are in the view. Only a byte the disguise test marks
        // can start a unit that decodes to something else; the bytes between are copied.
        let mut copied = 0;
        for i in Positions::new(b, 0, disguise_mask) {
            if i < copied {
                // Inside the escape before.
                continue;
            }
            let decoded = match b[i] {
                b'\\' => json_escape(b, i),
                b'%' => percent(b, i),
                _ => match text[i..].chars().next() {
                    Some(c) if is_format_char(c) => (Some(None), c.len_utf8()),
                    _ => (None, 1),
                },
            };
            let (Some(decoded), width) = decoded else { continue };
            view.text.push_str(&text[copied..i]);
            view.marks.push((view.text.len(), i));
            if let Some(c) = decoded {
                view.text.push(c);
            }
            copied = i + width;
            view.marks.push((view.text.len(), copied));
        }
        if view.marks.is_empty() {
            return None;
        }
        view.text.push_str(&text[copied..]);
        Some(view)
    }

    /// The original offset of view offset `v`.
    fn original(&self, v: usize) -> usize {
        // The last mark at or before `v`; several marks can share a view offset (a removed
        // character), and the last of them is where copying resumed.
        let at = self.marks.partition_point(|(mv, _)| *mv <= v);
        match at.checked_sub(1) {
            Some(k) => {
                let (mv, mo) = self.marks[k];
                (mo + (v - mv)).min(self.len)
            }
            None => v,
        }
    }

    /// The original span of view range `r`: from the start of its first unit to the end of
    /// its last, so that a character removed inside it, or right after it, goes with it.
    pub fn original_range(&self, r: Range<usize>) -> Range<usize> {
        // The first of the marks at the start: a character removed just before the secret
        // goes with it, as one removed inside or just after it does.
        let start = {
            let at = self.marks.partition_point(|(mv, _)| *mv < r.start);
            match self.marks.get(at) {
                Some((mv, mo)) if *mv == r.start => *mo,
                _ => self.original(r.start),
            }
        };
        start..self.original(r.end).max(start)
    }
}

/// The character a JSON escape at `b[i]` (a `\`) stands for, and the escape's width;
/// `None` for a backslash that starts no escape.
fn json_escape(b: &[u8], i: usize) -> (Option<Option<char>>, usize) {
    let simple = |c: char| (Some(Some(c)), 2);
    match b.get(i + 1) {
        Some(b'/') => simple('/'),
        Some(b'\\') => simple('\\'),
        Some(b'"') => simple('"'),
        Some(b'n') => simple('\n'),
        Some(b'r') => simple('\r'),
        Some(b't') => simple('\t'),
        Some(b'u') => match hex4(b, i + 2) {
            Some(hi @ 0xd800..=0xdbff) => {
                let lo =
                    (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u')).then(|| hex4(b, i + 8)).flatten();
                match lo {
                    Some(lo @ 0xdc00..=0xdfff) => {
                        let c = char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
                        (c.map(|c| (!is_format_char(c)).then_some(c)), 12)
                    }
                    _ => (None, 1),
                }
            }
            Some(u) => match char::from_u32(u) {
                Some(c) => (Some((!is_format_char(c)).then_some(c)), 6),
                None => (None, 1),
            },
            None => (None, 1),
        },
        _ => (None, 1),
    }
}

/// The value of the four hex digits at `b[at..]` (digits only: `from_str_radix` alone would
/// take a sign too).
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let h = b.get(at..at + 4)?;
    h.iter().try_fold(0, |n, &c| Some(n * 16 + char::from(c).to_digit(16)?))
}

/// The ASCII character a `%XX` at `b[i]` encodes; other bytes (parts of UTF-8 sequences)
/// are left encoded.
fn percent(b: &[u8], i: usize) -> (Option<Option<char>>, usize) {
    let byte = b
        .get(i + 1..i + 3)
        .and_then(|h| std::str::from_utf8(h).ok())
        .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
        .and_then(|h| u8::from_str_radix(h, 16).ok());
    match byte {
        Some(c) if c.is_ascii() => (Some(Some(char::from(c))), 3),
        _ => (None, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn back(text: &str, needle: &str) -> String {
        let v = View::of(text).expect("a disguise");
        let at = v.text.find(needle).expect("decoded");
        text[v.original_range(at..at + needle.len())].to_owned()
    }

    #[test]
    fn every_format_character_is_a_possible_disguise() {
        let format = (0..=0x10ffff).filter_map(char::from_u32).filter(|&c| is_format_char(c));
        for c in format {
            // At every place in a chunk, and across a chunk's edge.
            for before in 0..17 {
                assert!(may_disguise(&format!("{}{c}b", "a".repeat(before))), "U+{:04X}", u32::from(c));
            }
        }
        assert!(!may_disguise(r"a — b → ✓ 🚀 µ é 日本語 C:\Users\update"));
        assert!(may_disguise(r"C:\Users\u0041"));
    }

    #[test]
    fn plain_text_has_no_view() {
        assert!(View::of("ghp_abc and 100% done").is_none());
    }

    #[test]
    fn invisible_characters_inside_go_with_the_span() {
        assert_eq!(back("x gh\u{200b}p_ab\u{ad}cd y", "ghp_abcd"), "gh\u{200b}p_ab\u{ad}cd");
        assert_eq!(View::of("a\u{2060}b").unwrap().text, "ab");
    }

    #[test]
    fn escapes_and_percent_encoding_are_decoded() {
        assert_eq!(back(r"url https:\/\/u:p@h", "https://u:p@h"), r"https:\/\/u:p@h");
        assert_eq!(back("pg%3A%2F%2Fu%3Ap%40h", "pg://u:p@h"), "pg%3A%2F%2Fu%3Ap%40h");
        assert_eq!(back(r"x\u0067hp_1 \ud83d\ude00", "ghp_1"), r"\u0067hp_1");
        assert!(View::of(r"\ud83d\ude00").unwrap().text == "😀");
        assert_eq!(View::of(r"a\u200bb \q %zz %e9").unwrap().text, r"ab \q %zz %e9");
        assert_eq!(View::of(r"\u+041 \n").unwrap().text, "\\u+041 \n");
    }

    /// The view built by stepping through every byte, as [`View::of`] once did.
    fn stepped(text: &str) -> (String, Vec<(usize, usize)>) {
        let b = text.as_bytes();
        let (mut out, mut marks, mut copied, mut i) = (String::new(), Vec::new(), 0, 0);
        while i < b.len() {
            let (decoded, width) = match b[i] {
                b'\\' => json_escape(b, i),
                b'%' => percent(b, i),
                c if c >= 0x80 => {
                    let c = text[i..].chars().next().unwrap();
                    (is_format_char(c).then_some(None), c.len_utf8())
                }
                _ => (None, 1),
            };
            if let Some(decoded) = decoded {
                out.push_str(&text[copied..i]);
                marks.push((out.len(), i));
                out.extend(decoded);
                copied = i + width;
                marks.push((out.len(), copied));
            }
            i += width;
        }
        out.push_str(&text[copied..]);
        (out, marks)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        fn the_view_is_the_one_a_step_through_every_byte_gives(pieces in proptest::collection::vec(proptest::sample::select(&[
            "a", "aaaaaaaaaaaaa", "\\", "\\\\", "\\n", "\\u0041", "\\u200b", "\\ud83d\\ude00", "\\ud83d", "\\u+041",
            "%", "%41", "%2F", "%e2", "%zz", "\u{200b}", "\u{ad}", "\u{890}", "\u{e0020}", "\u{2014}", "\u{1f680}", "é", "日",
        ][..]), 0..40)) {
            let text: String = pieces.concat();
            let want = stepped(&text);
            match View::of(&text) {
                Some(v) => proptest::prop_assert_eq!((v.text, v.marks), want, "{:?}", text),
                // Not looked at: nothing it decodes could disguise a secret (`\\` alone).
                None => proptest::prop_assert!(!may_disguise(&text) || want.1.is_empty(), "{:?}", text),
            }
        }
    }
}
