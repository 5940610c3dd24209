//! Bounded excerpts: the start of a command or message, the end of a tool's output. A cut
//! never splits a character, is marked with `…`, and stays within the bound including the
//! mark, so clipping twice gives what clipping once gave.

use crate::bound::{ceil_boundary, floor_boundary};

const MARK: &str = "…";

/// The first bytes of `s`, at most `max` in all.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let end = floor_boundary(s, max.saturating_sub(MARK.len()));
    format!("{}{MARK}", &s[..end])
}

/// The last bytes of `s`, at most `max` in all.
pub fn clip_tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let start = ceil_boundary(s, s.len() - max.saturating_sub(MARK.len()));
    format!("{MARK}{}", &s[start..])
}

/// Clips an optional string.
pub fn clip_opt(s: Option<&str>, max: usize) -> Option<String> {
    s.map(|s| clip(s, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_on_char_boundaries_within_the_bound_and_idempotently() {
        let s = "héllo wörld 🎉 done";
        for max in 3..s.len() + 2 {
            let (h, t) = (clip(s, max), clip_tail(s, max));
            assert!(h.len() <= max.max(s.len().min(max)) && t.len() <= max, "{max}: {h:?} {t:?}");
            assert_eq!(clip(&h, max), h);
            assert_eq!(clip_tail(&t, max), t);
        }
        assert_eq!(clip("abcdef", 5), "ab…");
        assert_eq!(clip_tail("abcdef", 5), "…ef");
        assert_eq!(clip("abc", 5), "abc");
    }
}
