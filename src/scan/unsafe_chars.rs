//! The characters that could drive a terminal, which `scrub` removes and the readers that
//! cut text out of a line unread test for: C0 controls (the callers allow `\n` and `\t`),
//! DEL, C1 controls, bidi controls and the byte-order mark. Every one is a byte below 0x20,
//! DEL, or starts with 0xc2 (C1), 0xe2 (bidi) or 0xef (U+FEFF), so only those bytes, found
//! sixteen at a time, need a closer look. Also the test of a 64-byte block of JSON text
//! that the two readers taking lines a block at a time share ([`look_at`]).

use super::{eq, u8x16, Block};

/// The lanes of `v` that hold a byte that may begin an unsafe character: below 0x20, DEL,
/// 0xc2, 0xe2, 0xef.
pub(crate) fn suspects_in(v: u8x16) -> u8x16 {
    // A byte below 0x20 is the one that `min(v, 0x1f)` leaves as it is.
    v.min(u8x16::splat(0x1f)).cmp_eq(v) | eq(v, 0x7f) | eq(v, 0xc2) | eq(v, 0xe2) | eq(v, 0xef)
}

/// At a byte `b[i]` of valid UTF-8 that [`suspects_in`] marks and that is not `\n` or `\t`:
/// the length of the unsafe character starting there, or `None` when the character is safe.
pub(crate) fn unsafe_len(b: &[u8], i: usize) -> Option<usize> {
    match b[i] {
        0xc2 => matches!(b.get(i + 1), Some(0x80..=0x9f)).then_some(2),
        0xe2 => {
            matches!((b.get(i + 1), b.get(i + 2)), (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9)))
                .then_some(3)
        }
        0xef => (b.get(i + 1..i + 3) == Some(&[0xbb, 0xbf])).then_some(3),
        _ => Some(1),
    }
}

/// Whether `b[i]`, a byte [`suspects_in`] marks, begins an unsafe character other than `\n`
/// and `\t`.
pub(crate) fn unsafe_at(b: &[u8], i: usize) -> bool {
    !matches!(b[i], b'\n' | b'\t') && unsafe_len(b, i).is_some()
}

/// What the bytes of JSON text in a [`Block`] hold that a reader would clean away or refuse.
pub(crate) struct Found {
    /// The escaped bytes that are not `n`, `t`, `"` or `\`: escapes of characters that
    /// may be unsafe (`\u001b`, `\r`, `\b`) or that a reader must judge.
    pub rare_escapes: u64,
    /// A raw byte below 0x20, `\n` and `\t` included: JSON allows none inside a string.
    pub raw_control: bool,
    /// A raw unsafe character other than `\n` and `\t`.
    pub unsafe_char: bool,
}

/// What the bytes `within` marks of `block`, the 64 bytes of `b` from `at`, hold, given the
/// bytes a backslash escapes (`escaped`, already within). The one test of both readers that
/// take a line 64 bytes at a time: `json_is_clean` and the skim that cuts tool output.
#[inline]
pub(crate) fn look_at(b: &[u8], at: usize, block: &Block, escaped: u64, within: u64) -> Found {
    let rare_escapes = match escaped {
        0 => 0,
        _ => escaped & !block.mask(|v| eq(v, b'n') | eq(v, b't') | eq(v, b'"') | eq(v, b'\\')),
    };
    let mut found = Found { rare_escapes, raw_control: false, unsafe_char: false };
    let mut suspects = block.mask(suspects_in) & within;
    while suspects != 0 {
        let i = at + suspects.trailing_zeros() as usize;
        found.raw_control |= b[i] < 0x20;
        found.unsafe_char |= unsafe_at(b, i);
        suspects &= suspects - 1;
    }
    found
}
