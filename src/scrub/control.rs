//! Terminal control bytes: ANSI CSI/OSC/DCS/APC/PM/SOS sequences (an OSC 52 clipboard write
//! goes whole, payload included), C0/C1 controls other than `\n` and `\t`, bidi overrides.
//! A `\r` progress line keeps only its final state; CRLF becomes LF. Visible text stays.

use std::borrow::Cow;

/// True when `s` has nothing [`clean`] would change: the common case, checked fast.
pub fn is_clean(s: &str) -> bool {
    let b = s.as_bytes();
    !b.iter().any(|&c| (c < 0x20 && c != b'\n' && c != b'\t') || c == 0x7f || c == 0xc2 || c == 0xe2 || c == 0xef)
        || !s.chars().any(is_unsafe_char)
}

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
            '\x1b' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | '_' | '^' | 'X') => skip_string(&mut chars),
                // Two-byte escapes (ESC 7, ESC c, ESC ( B …): drop the final byte too.
                Some('(' | ')' | '*' | '+' | '#' | '%') => {
                    chars.next();
                }
                Some(_) | None => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{9f}' | '\u{9e}' | '\u{98}' => skip_string(&mut chars),
            '\r' | '\n' | '\t' => out.push(c),
            c if is_unsafe_char(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// CSI: parameter and intermediate bytes, then one final byte in `@`..=`~`.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) || !(' '..='?').contains(&c) {
            break;
        }
    }
}

/// OSC/DCS/APC/PM/SOS: everything up to BEL or ST (`ESC \` or U+009C).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\x07' | '\u{9c}' => return,
            '\x1b' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

/// Each line keeps the last non-empty segment after a `\r`, as a terminal would show it.
fn resolve_carriage_returns(s: &str) -> String {
    if !s.contains('\r') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let last = line.rsplit('\r').find(|seg| !seg.is_empty()).unwrap_or("");
        out.push_str(last);
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
    }

    #[test]
    fn osc52_clipboard_write_goes_whole() {
        assert_eq!(clean("a\x1b]52;c;c2VjcmV0\x07b"), "ab");
        assert_eq!(clean("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b"), "alinkb");
    }

    #[test]
    fn controls_and_bidi_are_removed_tabs_and_newlines_kept() {
        assert_eq!(clean("a\0b\x07c\td\u{202e}e\u{85}f\n"), "abc\tdef\n");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(clean("héllo ✓ 日本語"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn idempotent() {
        let once = clean("\x1b[2K\rx\x1b[1A\ry\u{2066}z").into_owned();
        assert_eq!(clean(&once), once);
    }
}
