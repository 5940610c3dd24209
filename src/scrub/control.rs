//! Terminal control bytes: ANSI CSI/OSC/DCS/APC/PM/SOS sequences (an OSC 52 clipboard write
//! goes whole, payload included), C0/C1 controls other than `\n` and `\t`, bidi overrides.
//! A backspace erases the character before it, a `\r` progress line keeps only its final
//! state, CRLF becomes LF. Visible text stays.

use std::borrow::Cow;

use crate::scan::unsafe_chars::{look_at, suspects_in, unsafe_at, unsafe_len};
use crate::scan::{self, eq, u8x16, Block, Escapes};

/// True when the JSON text `b` spells no unsafe character, raw or escaped: every escape is
/// `\n`, `\t`, `\"` or `\\` and no raw character is unsafe. Each decoded string then also
/// holds the same printable ASCII runs as the raw text, so a keyword scan of the raw line
/// sees everything a scan of its strings would. One pass: this is the check every written
/// or read line gets, and almost every line passes it.
pub fn json_is_clean(b: &[u8]) -> bool {
    let mut escaped_by = Escapes::default();
    let mut at = 0;
    while let Some(block) = Block::at(b, at) {
        let escaped = escaped_by.next(block.mask(|v| eq(v, b'\\')));
        let found = look_at(b, at, &block, escaped, u64::MAX);
        if found.rare_escapes != 0 || found.unsafe_char {
            return false;
        }
        at += 64;
    }
    // A backslash at the very end escapes nothing.
    !escaped_by.pending()
}

/// The index of the first unsafe character of `b` (valid UTF-8). Every unsafe character is
/// a byte below 0x20, DEL, or starts with 0xc2 (C1 controls), 0xe2 (bidi controls) or 0xef
/// (U+FEFF); only those bytes need a closer look.
fn first_unsafe(b: &[u8]) -> Option<usize> {
    suspects(b, 0).find(|&i| unsafe_at(b, i))
}

/// The indices, in order, of the bytes of `b` (from `from` on) that may begin an unsafe
/// character: below 0x20, DEL, 0xc2, 0xe2, 0xef.
fn suspects(b: &[u8], from: usize) -> impl Iterator<Item = usize> + '_ {
    scan::Positions::new(b, from, suspect_mask)
}

/// Bit `k` is set when byte `k` of `v` is one [`suspects`] gives.
fn suspect_mask(v: u8x16) -> u32 {
    scan::mask(suspects_in(v))
}

/// Removes control sequences and bytes; see the module docs.
pub fn clean(s: &str) -> Cow<'_, str> {
    match first_unsafe(s.as_bytes()) {
        None => Cow::Borrowed(s),
        Some(at) => Cow::Owned(resolve_carriage_returns(strip_sequences(s, at))),
    }
}

/// `s` without its escape sequences and control characters, a backspace taking back the
/// character before it; `\r` stays. Nothing before `from` needs a change. Runs of safe text
/// are copied whole; only the suspect bytes between them are looked at one by one.
fn strip_sequences(s: &str, from: usize) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    // `s[copied..i]` is safe text not yet in `out`; `i` is always at a character boundary.
    let (mut copied, mut i) = (0, from);
    for k in suspects(b, from) {
        if k < i {
            continue;
        }
        i = k;
        let c = b[i];
        if matches!(c, b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let Some(len) = unsafe_len(b, i) else {
            // A safe character that merely begins with a suspect byte (é is 0xc3, not
            // suspect, but U+00A0 is 0xc2 0xa0).
            i += if c < 0xe0 { 2 } else { 3 };
            continue;
        };
        out.push_str(&s[copied..i]);
        i = match (c, b.get(i + 1).copied()) {
            (0x1b, Some(b'[')) => skip_csi(b, i + 2),
            (0x1b, Some(b']' | b'P' | b'_' | b'^' | b'X')) => skip_string(b, i + 2),
            // nF escapes (ESC ( B, ESC # 8 …): intermediates, then one final byte.
            (0x1b, Some(b' '..=b'/')) => {
                let mut j = i + 2;
                while matches!(b.get(j), Some(b' '..=b'/')) {
                    j += 1;
                }
                j + usize::from(matches!(b.get(j), Some(b'0'..=b'~')))
            }
            // Two-byte escapes (ESC 7, ESC M, ESC c …).
            (0x1b, Some(b'0'..=b'~')) => i + 2,
            // C1 CSI, and C1 DCS/SOS/OSC/PM/APC.
            (0xc2, Some(0x9b)) => skip_csi(b, i + 2),
            (0xc2, Some(0x90 | 0x98 | 0x9d | 0x9e | 0x9f)) => skip_string(b, i + 2),
            // A backspace moves back over the character before it on the same line, as
            // overstruck `man` output does ("N\bN" is a bold N).
            (0x08, _) => {
                if out.ends_with(|p: char| p != '\n') {
                    out.pop();
                }
                i + 1
            }
            // Any other control or bidi character (a lone ESC too) goes alone.
            _ => i + len,
        };
        copied = i;
    }
    out.push_str(&s[copied..]);
    out
}

/// CSI from `b[i]`: parameter and intermediate bytes, then one final byte in `@`..=`~`. A
/// malformed sequence ends at the first other character, which is kept. Returns where it ends.
fn skip_csi(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' '..=b'?')) {
        i += 1;
    }
    i + usize::from(matches!(b.get(i), Some(b'@'..=b'~')))
}

/// OSC/DCS/APC/PM/SOS from `b[i]`: everything up to BEL or ST (`ESC \` or U+009C); CAN and
/// SUB abort it. An unterminated one ends at the end of its line, so it cannot swallow later
/// text. Returns where it ends (a character boundary: every stop is ASCII or U+009C's lead).
fn skip_string(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        match c {
            b'\n' => return i,
            0x07 | 0x18 | 0x1a => return i + 1,
            0xc2 if b.get(i + 1) == Some(&0x9c) => return i + 2,
            0x1b => return i + 1 + usize::from(b.get(i + 1) == Some(&b'\\')),
            _ => i += 1,
        }
    }
    i
}

/// Each line keeps the last segment after a `\r` that shows anything, as a terminal
/// would leave a progress line. Without a `\r`, `s` comes back as it is.
fn resolve_carriage_returns(s: String) -> String {
    if memchr::memchr(b'\r', s.as_bytes()).is_none() {
        return s;
    }
    let mut out = String::with_capacity(s.len());
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.contains('\r') {
            out.push_str(line.rsplit('\r').find(|seg| !seg.trim().is_empty()).unwrap_or(""));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::clean;

    /// The char-by-char implementation this module had, kept as the reference.
    mod reference {
        use std::iter::Peekable;
        use std::str::Chars;

        pub(super) fn has_only_plain_escapes(s: &str) -> bool {
            let mut chars = s.chars();
            while let Some(c) = chars.next() {
                if c == '\\' && !matches!(chars.next(), Some('n' | 't' | '"' | '\\')) {
                    return false;
                }
            }
            true
        }

        pub(super) fn is_unsafe_char(c: char) -> bool {
            matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
        }

        pub(super) fn clean(s: &str) -> String {
            resolve_carriage_returns(&strip_sequences(s))
        }

        fn strip_sequences(s: &str) -> String {
            let mut out = String::with_capacity(s.len());
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\x1b' => match chars.peek() {
                        Some('[') => {
                            chars.next();
                            skip_csi(&mut chars);
                        }
                        Some(']' | 'P' | '_' | '^' | 'X') => {
                            chars.next();
                            skip_string(&mut chars);
                        }
                        // nF escapes (ESC ( B, ESC # 8 …): intermediates, then one final byte.
                        Some(' '..='/') => {
                            while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                            chars.next_if(|c| ('0'..='~').contains(c));
                        }
                        // Two-byte escapes (ESC 7, ESC M, ESC c …).
                        Some('0'..='~') => {
                            chars.next();
                        }
                        _ => {}
                    },
                    '\u{9b}' => skip_csi(&mut chars),
                    '\u{9d}' | '\u{90}' | '\u{9f}' | '\u{9e}' | '\u{98}' => skip_string(&mut chars),
                    // A backspace moves back over the character before it on the same line, as
                    // overstruck `man` output does ("N\bN" is a bold N).
                    '\x08' => {
                        if out.ends_with(|p: char| p != '\n') {
                            out.pop();
                        }
                    }
                    '\r' | '\n' | '\t' => out.push(c),
                    c if is_unsafe_char(c) => {}
                    c => out.push(c),
                }
            }
            out
        }

        /// CSI: parameter and intermediate bytes, then one final byte in `@`..=`~`. A malformed
        /// sequence ends at the first other character, which is kept.
        fn skip_csi(chars: &mut Peekable<Chars<'_>>) {
            while chars.next_if(|c| (' '..='?').contains(c)).is_some() {}
            chars.next_if(|c| ('@'..='~').contains(c));
        }

        /// OSC/DCS/APC/PM/SOS: everything up to BEL or ST (`ESC \` or U+009C); CAN and SUB abort
        /// it. An unterminated one ends at the end of its line, so it cannot swallow later text.
        fn skip_string(chars: &mut Peekable<Chars<'_>>) {
            while let Some(&c) = chars.peek() {
                match c {
                    '\n' => return,
                    '\x07' | '\u{9c}' | '\x18' | '\x1a' => {
                        chars.next();
                        return;
                    }
                    '\x1b' => {
                        chars.next();
                        chars.next_if_eq(&'\\');
                        return;
                    }
                    _ => {
                        chars.next();
                    }
                }
            }
        }

        /// Each line keeps the last segment after a `\r` that shows anything, as a terminal
        /// would leave a progress line.
        fn resolve_carriage_returns(s: &str) -> String {
            if !s.contains('\r') {
                return s.to_owned();
            }
            let mut out = String::with_capacity(s.len());
            for (i, line) in s.split('\n').enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                if line.contains('\r') {
                    out.push_str(line.rsplit('\r').find(|seg| !seg.trim().is_empty()).unwrap_or(""));
                } else {
                    out.push_str(line);
                }
            }
            out
        }
    }

    use proptest::prelude::*;

    /// Characters that matter to [`clean`], often: escapes and what follows them, C0/C1,
    /// bidi, `\r`/`\x08`, multi-byte text whose first byte is a suspect one, and plain text.
    fn piece() -> impl Strategy<Value = String> {
        const CHARS: &[char] = &[
            '\x1b', '\x1b', '\x1b', '[', '[', ']', 'P', '_', '^', 'X', '\\', ' ', '!', '(', '#', '/', '0', '1', '7',
            '8', ';', '?', '@', 'A', 'B', 'M', 'c', 'm', 'K', '~', '\x7f', '\x07', '\x18', '\x1a', '\0', '\x01',
            '\x0b', '\x0c', '\x1f', '\r', '\r', '\n', '\n', '\t', '\x08', '\x08', '\u{80}', '\u{85}', '\u{90}',
            '\u{98}', '\u{9b}', '\u{9c}', '\u{9d}', '\u{9e}', '\u{9f}', '\u{a0}', '\u{bf}', '\u{202a}', '\u{202e}',
            '\u{202f}', '\u{2066}', '\u{2069}', '\u{2000}', '\u{2014}', '\u{2713}', '\u{feff}', '\u{fffd}', '\u{ef00}',
            'é', '日', '🎉', 'a', 'z', ' ',
        ];
        prop_oneof![
            4 => prop::sample::select(CHARS).prop_map(String::from),
            1 => "[a-z ]{1,20}",
            1 => any::<String>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn the_byte_wise_clean_is_the_char_wise_one(pieces in prop::collection::vec(piece(), 0..80)) {
            let s = pieces.concat();
            prop_assert_eq!(clean(&s).into_owned(), reference::clean(&s), "{:?}", s);
        }

        #[test]
        fn the_fast_check_agrees_with_the_reference(pieces in prop::collection::vec(piece(), 0..20)) {
            let s = pieces.concat();
            prop_assert_eq!(super::first_unsafe(s.as_bytes()).is_none(), !s.chars().any(reference::is_unsafe_char), "{:?}", s);
        }

        #[test]
        fn the_one_pass_json_check_is_the_two_checks(pieces in prop::collection::vec(prop_oneof![piece(), prop::sample::select(&["\\", "\\n", "\\t", "\\\"", "\\\\", "\\u00", "\\r"][..]).prop_map(String::from)], 0..60)) {
            let raw = pieces.concat();
            for s in [raw.clone(), serde_json::to_string(&raw).expect("a string serializes")] {
                let two = reference::has_only_plain_escapes(&s) && super::first_unsafe(s.as_bytes()).is_none();
                prop_assert_eq!(super::json_is_clean(s.as_bytes()), two, "{:?}", s);
            }
        }

        /// The skim that cuts tool output out of a line finds this in the same pass.
        #[test]
        fn a_cut_tool_output_is_clean_where_json_is_clean_says(pieces in prop::collection::vec(prop_oneof![
            piece().prop_map(|p| p.replace(|c: char| c < ' ' || c == '"' || c == '\\', "")),
            prop::sample::select(&["\\n", "\\t", "\\\"", "\\\\", "\\r", "\\/", "\\b"][..]).prop_map(String::from),
        ], 0..60)) {
            let stdout = pieces.concat();
            let line = format!(r#"{{"type":"tool.completed","payload":{{"toolCallId":"c","output":{{"stdout":"{stdout}"}}}}}}"#);
            let cut = crate::event::Event::cut_tool_output(&line).expect("plain tool output is cut");
            prop_assert_eq!(cut.cut[0].clean, super::json_is_clean(cut.cut[0].literal.as_bytes()), "{:?}", stdout);
        }

        #[test]
        fn suspects_are_the_suspect_bytes_in_order(b in prop::collection::vec(prop_oneof![Just(b'a'), Just(b'\\'), Just(0x1b), any::<u8>()], 0..70), from in 0usize..80) {
            let want: Vec<usize> = (from..b.len()).filter(|&i| is_suspect(b[i])).collect();
            prop_assert_eq!(super::suspects(&b, from).collect::<Vec<_>>(), want);
        }
    }

    fn is_suspect(c: u8) -> bool {
        c < 0x20 || matches!(c, 0x7f | 0xc2 | 0xe2 | 0xef)
    }

    #[test]
    fn every_byte_is_classified_in_every_lane() {
        for c in 0..=255u8 {
            for lane in 0..16 {
                let mut chunk = [b'a'; 16];
                chunk[lane] = c;
                let want = |suspect: bool| u32::from(suspect) << lane;
                assert_eq!(super::suspect_mask(wide::u8x16::new(chunk)), want(is_suspect(c)), "{c:#x} in lane {lane}");
            }
        }
    }

    #[test]
    fn sgr_colours_are_removed_and_text_kept() {
        assert_eq!(clean("\x1b[31mred\x1b[0m \x1b[1;32mgreen bold\x1b[0m"), "red green bold");
    }

    #[test]
    fn progress_line_keeps_its_final_state() {
        assert_eq!(clean("progress 20%\rprogress 100%\ndone\r\n"), "progress 100%\ndone\n");
        assert_eq!(clean("50%\r100%\r   \r"), "100%");
    }

    #[test]
    fn osc52_clipboard_write_goes_whole() {
        assert_eq!(clean("a\x1b]52;c;c2VjcmV0\x07b"), "ab");
        assert_eq!(clean("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b"), "alinkb");
    }

    #[test]
    fn an_unterminated_osc_stops_at_the_end_of_its_line() {
        assert_eq!(clean("a\x1b]52;c;c2VjcmV0\nnext line"), "a\nnext line");
    }

    #[test]
    fn controls_and_bidi_are_removed_tabs_and_newlines_kept() {
        assert_eq!(clean("a\0b\x07c\td\u{202e}e\u{85}f\n"), "abc\tdef\n");
    }

    #[test]
    fn escapes_drop_their_final_byte_but_not_following_text() {
        assert_eq!(clean("\x1b7saved\x1b8 \x1b(Bascii \x1b\nline"), "saved ascii \nline");
        assert_eq!(clean("\x1b[12\nx"), "\nx");
    }

    #[test]
    fn backspace_overstrike_keeps_one_character() {
        assert_eq!(clean("N\x08NA\x08AM\x08ME\x08E _\x08x"), "NAME x");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(clean("héllo ✓ 日本語 — “quoted” ¡sí!\tend\n"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn the_fast_check_agrees_with_a_char_by_char_one() {
        for c in ('\0'..='\u{3000}').chain(['\u{feff}', '\u{fffd}', '🎉']) {
            let s = format!("a{c}b");
            assert_eq!(super::first_unsafe(s.as_bytes()).is_none(), !reference::is_unsafe_char(c), "{c:?}");
        }
    }

    #[test]
    fn idempotent() {
        let once = clean("\x1b[2K\rx\x1b[1A\ry\u{2066}z").into_owned();
        assert_eq!(clean(&once), once);
    }
}
