//! Terminal control bytes: ANSI CSI/OSC/DCS/APC/PM/SOS sequences (an OSC 52 clipboard write
//! goes whole, payload included), C0/C1 controls other than `\n` and `\t`, bidi overrides.
//! A backspace erases the character before it, a `\r` progress line keeps only its final
//! state, CRLF becomes LF. Visible text stays.

use std::borrow::Cow;
use std::iter::Peekable;
use std::str::Chars;

/// True when `s` has nothing [`clean`] would change: the common case, checked fast.
pub fn is_clean(s: &str) -> bool {
    let b = s.as_bytes();
    // Every unsafe character is a byte below 0x20, DEL, or starts with 0xc2 (C1 controls),
    // 0xe2 (bidi controls) or 0xef (U+FEFF); only those bytes need a closer look.
    let mut i = 0;
    while let Some(k) = next_suspect(&b[i..]) {
        i += k;
        let unsafe_here = match b[i] {
            b'\n' | b'\t' => false,
            0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)),
            0xe2 => matches!((b.get(i + 1), b.get(i + 2)), (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9))),
            0xef => b.get(i + 1..i + 3) == Some(&[0xbb, 0xbf]),
            _ => true,
        };
        if unsafe_here {
            return false;
        }
        i += 1;
    }
    true
}

/// The index of the first byte of `b` that may begin an unsafe character. Eight bytes at a
/// time are skipped when word arithmetic shows them printable ASCII (no byte below 0x20, at
/// or above 0x7f), or when a table shows none of them suspect.
fn next_suspect(b: &[u8]) -> Option<usize> {
    const LOW: u64 = 0x2020_2020_2020_2020;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut i = 0;
    while i + 8 <= b.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&b[i..i + 8]);
        let w = u64::from_le_bytes(word);
        // A byte below 0x20 borrows in `w - LOW`; a byte >= 0x80 has its top bit; 0x7f
        // becomes 0x80 in `w + ONES`.
        if ((w.wrapping_sub(LOW) | w | w.wrapping_add(ONES)) & HIGH) != 0 {
            if let Some(k) = b[i..i + 8].iter().position(|&c| SUSPECT[c as usize]) {
                return Some(i + k);
            }
        }
        i += 8;
    }
    b[i..].iter().position(|&c| SUSPECT[c as usize]).map(|k| i + k)
}

/// Bytes that may begin an unsafe character (see [`is_clean`]).
static SUSPECT: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[0x7f] = true;
    t[0xc2] = true;
    t[0xe2] = true;
    t[0xef] = true;
    t
};

fn is_unsafe_char(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// Removes control sequences and bytes; see the module docs.
pub fn clean(s: &str) -> Cow<'_, str> {
    if is_clean(s) {
        return Cow::Borrowed(s);
    }
    let stripped = strip_sequences(s);
    Cow::Owned(resolve_carriage_returns(&stripped))
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

#[cfg(test)]
mod tests {
    use super::clean;

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
            assert_eq!(super::is_clean(&s), !super::is_unsafe_char(c), "{:?}", c);
        }
    }

    #[test]
    fn idempotent() {
        let once = clean("\x1b[2K\rx\x1b[1A\ry\u{2066}z").into_owned();
        assert_eq!(clean(&once), once);
    }
}
