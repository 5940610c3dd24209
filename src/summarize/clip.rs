//! Bounded excerpts: the start of a command or message, the end of a tool's output. A cut
//! never splits a character, is marked with `…`, and stays within the bound including the
//! mark, so clipping twice gives what clipping once gave. What is cut is scrubbed first,
//! around the cut: a secret the cut parted would no longer be recognised when the report is
//! scrubbed ([`super::Report::scrub`]), and what is kept of it would show.

use crate::bound::{ceil_boundary, floor_boundary, head_end, tail_start, SCRUB_REACH as REACH};
use crate::scrub::Scrubber;

const MARK: &str = "…";

/// The first bytes of `s`, at most `max` in all.
pub fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let near = &s[..floor_boundary(s, max + REACH)];
    let whole = near.len() == s.len();
    let near = Scrubber::new().scrub_str(near);
    if whole && near.len() <= max {
        return near.into_owned();
    }
    let end = head_end(&near, floor_boundary(&near, max.saturating_sub(MARK.len())));
    format!("{}{MARK}", &near[..end])
}

/// The last bytes of `s`, at most `max` in all.
pub fn clip_tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let near = &s[ceil_boundary(s, s.len().saturating_sub(max + REACH))..];
    let whole = near.len() == s.len();
    let near = Scrubber::new().scrub_str(near);
    if whole && near.len() <= max {
        return near.into_owned();
    }
    let start = tail_start(&near, ceil_boundary(&near, near.len().saturating_sub(max.saturating_sub(MARK.len()))));
    format!("{MARK}{}", &near[start..])
}

/// What [`clip_tail`] of `s` depends on, to clip later: `s` itself, or its last bytes behind
/// the mark (clipping them gives what clipping `s` gives). Copying them is cheap; clipping
/// scrubs them, which is left until the excerpt is known to be kept.
pub fn tail_to_clip(s: &str, max: usize) -> String {
    match s.len().checked_sub(max + REACH) {
        None | Some(0) => s.to_owned(),
        Some(cut) => format!("{MARK}{}", &s[ceil_boundary(s, cut)..]),
    }
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

    #[test]
    fn a_tail_kept_to_clip_later_clips_as_the_whole() {
        let token = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5";
        for len in [10, 200, REACH, REACH + 150, REACH + 250, 3 * REACH] {
            for s in
                ["é".repeat(len / 2), format!("{token} {}", "x".repeat(len)), format!("{}{token}", "y".repeat(len))]
            {
                assert_eq!(clip_tail(&tail_to_clip(&s, 200), 200), clip_tail(&s, 200), "{len}");
            }
        }
    }
}
