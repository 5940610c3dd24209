//! Byte scans sixteen bytes at a time: a classifier marks the bytes of a chunk it looks for
//! (through `wide`: SSE2 on x86_64, NEON on aarch64, plain arrays elsewhere, all safe code)
//! and [`Positions`] gives their indices in order, classifying each chunk once however many
//! marked bytes it holds.

pub(crate) use wide::u8x16;

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
    }
}
