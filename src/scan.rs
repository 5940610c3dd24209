//! Byte scans sixteen bytes at a time: a classifier marks the bytes of a chunk it looks for
//! (through `wide`: SSE2 on x86_64, NEON on aarch64, plain arrays elsewhere, all safe code)
//! and [`Positions`] gives their indices in order, classifying each chunk once however many
//! marked bytes it holds. [`Escapes`] marks the bytes of JSON text that a backslash escapes,
//! a [`Block`] of 64 bytes at a time.

pub(crate) use wide::u8x16;

pub(crate) mod unsafe_chars;

/// The indices, in order, of the bytes of `b` (from `from` on) that `classify` marks: bit
/// `k` of `classify(chunk)` stands for byte `k` of the chunk. The last chunk is padded with
/// spaces, which `classify` must leave unmarked.
pub(crate) struct Positions<'a, C> {
    b: &'a [u8],
    classify: C,
    /// Where the chunk of `mask` starts.
    base: usize,
    /// Where the next chunk starts.
    next: usize,
    /// The marked bytes of the chunk at `base` not yet given.
    mask: u32,
}

impl<'a, C: Fn(u8x16) -> u32> Positions<'a, C> {
    pub(crate) fn new(b: &'a [u8], from: usize, classify: C) -> Self {
        Positions { b, classify, base: from, next: from, mask: 0 }
    }
}

impl<C: Fn(u8x16) -> u32> Iterator for Positions<'_, C> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.mask = (self.classify)(chunk_at(self.b, self.next)?);
            self.base = self.next;
            self.next += 16;
        }
        let k = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(self.base + k)
    }
}

/// The index of the quote that closes the JSON string whose inside starts at `b[from]`,
/// passing over each byte a backslash escapes; `None` when `b` ends first. Sixteen bytes
/// at a time: most strings of a line are short ids and names, too short for a general
/// search to pay for setting itself up.
pub(crate) fn string_end(b: &[u8], from: usize) -> Option<usize> {
    let mut escaped_to = 0;
    for j in Positions::new(b, from, |v| mask(eq(v, b'"') | eq(v, b'\\'))) {
        if j < escaped_to {
            continue;
        }
        if b[j] == b'"' {
            return Some(j);
        }
        escaped_to = j + 2;
    }
    None
}

/// The sixteen bytes of `b` from `at`, padded with spaces past its end; `None` from the end.
pub(crate) fn chunk_at(b: &[u8], at: usize) -> Option<u8x16> {
    let rest = b.get(at..)?;
    // Returned from here, the whole chunk is one load rather than a call to `memcpy`.
    if let Some(c) = rest.first_chunk::<16>() {
        return Some(u8x16::new(*c));
    }
    if rest.is_empty() {
        return None;
    }
    let mut c = [b' '; 16];
    c[..rest.len()].copy_from_slice(rest);
    Some(u8x16::new(c))
}

/// The bytes of `v` equal to `c`, as lanes of all ones.
pub(crate) fn eq(v: u8x16, c: u8) -> u8x16 {
    v.cmp_eq(u8x16::splat(c))
}

/// The mask [`Positions`] takes: bit `k` set when lane `k` of `lanes` is all ones.
pub(crate) fn mask(lanes: u8x16) -> u32 {
    lanes.move_mask() as u32
}

/// Sixteen-byte chunks four at a time: 64 bytes, whose masks fill a `u64`, so a scan that
/// must look at every byte (a long string dense with escapes) does the work that follows the
/// comparisons once per 64 bytes.
#[derive(Clone, Copy)]
pub(crate) struct Block([u8x16; 4]);

impl Block {
    /// The 64 bytes of `b` from `at`, padded with spaces past its end; `None` from the end.
    #[inline]
    pub(crate) fn at(b: &[u8], at: usize) -> Option<Block> {
        let rest = b.get(at..)?;
        match rest.first_chunk::<64>() {
            Some(c) => Some(Block::of(c)),
            None => Block::padded(rest),
        }
    }

    /// Four whole chunks: four loads.
    #[inline]
    fn of(c: &[u8; 64]) -> Block {
        let (chunks, _) = c.as_chunks::<16>();
        Block([0, 1, 2, 3].map(|k| u8x16::new(chunks[k])))
    }

    /// The last, short block, kept out of the way of the whole ones, so [`Block::at`] inlines.
    #[cold]
    fn padded(rest: &[u8]) -> Option<Block> {
        if rest.is_empty() {
            return None;
        }
        let mut c = [b' '; 64];
        c[..rest.len()].copy_from_slice(rest);
        Some(Block::of(&c))
    }

    /// Bit `k` is set when `classify` marks byte `k` (all ones in its lane).
    pub(crate) fn mask(&self, classify: impl Fn(u8x16) -> u8x16) -> u64 {
        self.0.iter().rev().fold(0, |m, &v| m << 16 | u64::from(mask(classify(v))))
    }
}

/// Which bytes of JSON text, read a [`Block`] at a time, a backslash escapes. A run of
/// backslashes may cross from one block into the next, so the state carries over. Without
/// a branch per escape (simdjson's method): tool output holds an escape every few bytes.
#[derive(Default)]
pub(crate) struct Escapes {
    /// 1 when the last block's final backslash escapes the next block's first byte.
    carry: u64,
}

impl Escapes {
    /// The bytes of the next block that a backslash escapes (the byte after each escaping
    /// backslash, itself a backslash in `\\`), given the block's backslashes `bs`.
    pub(crate) fn next(&mut self, bs: u64) -> u64 {
        const EVEN: u64 = 0x5555_5555_5555_5555;
        // A backslash escaped from the last block escapes nothing itself.
        let bs = bs & !self.carry;
        let follows = (bs << 1) | self.carry;
        // A run of backslashes that starts at an odd place, added to its first bit, is
        // cleared and carries past its end (into the next block from the last place); the
        // escaped bytes are then the odd places after a run that starts at an even one,
        // and the even places after one that started at an odd one.
        let odd_starts = bs & !EVEN & !follows;
        let (sum, over) = odd_starts.overflowing_add(bs);
        self.carry = u64::from(over);
        (EVEN ^ (sum << 1)) & follows
    }

    /// True when the text read so far ends in a backslash that escapes what comes next.
    pub(crate) fn pending(&self) -> bool {
        self.carry != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn positions_are_the_marked_bytes_in_order(b in prop::collection::vec(prop_oneof![Just(b'a'), Just(b'\\'), any::<u8>()], 0..70), from in 0usize..80) {
            let want: Vec<usize> = (from..b.len()).filter(|&i| b[i] == b'\\').collect();
            prop_assert_eq!(Positions::new(&b, from, |v| mask(eq(v, b'\\'))).collect::<Vec<_>>(), want);
        }

        #[test]
        fn a_string_ends_where_a_byte_by_byte_reading_ends_it(b in prop::collection::vec(prop_oneof![Just(b'a'), Just(b'"'), Just(b'\\'), Just(b' '), Just(0xc3)], 0..80), from in 0usize..40) {
            let slow = || {
                let mut j = from;
                loop {
                    match *b.get(j)? {
                        b'"' => return Some(j),
                        b'\\' => j += 2,
                        _ => j += 1,
                    }
                }
            };
            prop_assert_eq!(string_end(&b, from), slow());
        }

        #[test]
        fn the_escaped_bytes_are_those_a_reading_from_the_start_finds(b in prop::collection::vec(prop_oneof![Just(b'a'), Just(b'\\'), Just(b'n')], 0..200)) {
            let mut want = vec![false; b.len() + 1];
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'\\' {
                    want[i + 1] = true;
                    i += 1;
                }
                i += 1;
            }
            let mut escapes = Escapes::default();
            let mut got = Vec::new();
            let mut at = 0;
            while let Some(block) = Block::at(&b, at) {
                let m = escapes.next(block.mask(|v| eq(v, b'\\')));
                got.extend((0..64).map(|k| m & (1 << k) != 0));
                at += 64;
            }
            // Past the end: the padding's first byte, or what the next chunk would begin with.
            let past = if b.len() % 64 != 0 { got[b.len()] } else { escapes.pending() };
            got.truncate(b.len());
            got.push(past);
            prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&b));
        }
    }
}
