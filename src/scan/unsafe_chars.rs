//! The characters that could drive a terminal, which `scrub` removes and the readers that
//! cut text out of a line unread test for: C0 controls (the callers allow `\n` and `\t`),
//! DEL, C1 controls, bidi controls and the byte-order mark. Every one is a byte below 0x20,
//! DEL, or starts with 0xc2 (C1), 0xe2 (bidi) or 0xef (U+FEFF), so only those bytes, found
//! sixteen at a time, need a closer look.

use super::{eq, u8x16};

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
