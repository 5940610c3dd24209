//! The `scrub` stage: terminal control bytes out of every string ([`control`]), then secrets
//! replaced by typed markers (`[REDACTED:github-token]`) following the rule table
//! ([`rules`]). Keys and ids are left alone; counts of redactions by kind feed the summary.
//!
//! Scrubbing is idempotent: a marker never matches a rule, and a text is scrubbed until
//! nothing changes, so a second pass finds nothing to do.
//!
//! ```
//! use minicode_output::scrub::Scrubber;
//! let mut s = Scrubber::new();
//! let out = s.scrub_str("export GITHUB_TOKEN=\x1b[1m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\x1b[0m");
//! assert_eq!(out, "export GITHUB_TOKEN=[REDACTED:github-token]");
//! assert_eq!(s.scrub_str(&out), out);
//! ```

pub mod check;
pub mod control;
pub mod detect;
pub mod json;
pub mod lead;
pub mod rules;
pub mod stream;
pub mod text;
pub mod view;

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::event::Event;
use detect::Detector;

/// Text without its terminal control sequences and bytes: what other layers (the engine's
/// ids) use of this stage, so that they depend on its face and not on its modules.
pub use control::clean as without_controls;

/// Scrubs events and text, counting what it redacted.
#[derive(Debug, Default)]
pub struct Scrubber {
    counts: BTreeMap<String, u64>,
}

impl Scrubber {
    /// A scrubber with the built-in rules.
    pub fn new() -> Scrubber {
        Scrubber::default()
    }

    /// Scrubs one string: borrowed when nothing changed, the common case.
    pub fn scrub_str<'a>(&mut self, s: &'a str) -> Cow<'a, str> {
        let mut text = control::clean(s);
        let detector = Detector::global();
        // A redaction can complete a pattern around it only in contrived input; looping
        // until nothing changes makes a second pass a no-op whatever the input.
        for _ in 0..4 {
            let found = detector.find(&text);
            if found.is_empty() {
                break;
            }
            let mut out = String::with_capacity(text.len());
            let mut at = 0;
            for f in &found {
                let kind = detector.rule(f).kind;
                out.push_str(&text[at..f.range.start]);
                out.push_str("[REDACTED:");
                out.push_str(kind);
                out.push(']');
                at = f.range.end;
                *self.counts.entry(kind.to_owned()).or_insert(0) += 1;
            }
            out.push_str(&text[at..]);
            text = Cow::Owned(out);
        }
        text
    }

    /// Scrubs one string in place.
    pub fn scrub_text(&mut self, s: &mut String) {
        if let Cow::Owned(c) = self.scrub_str(s) {
            *s = c;
        }
    }

    /// Scrubs every content string of an event.
    pub fn scrub_event(&mut self, event: &mut Event) {
        event.for_each_text_mut(|_, s| self.scrub_text(s));
    }

    /// True when scrubbing the string values of the JSON line `line` could change it: it
    /// holds an unsafe character or an escape other than `\n`, `\t`, `\"`, `\\` (which could
    /// hide one, or a secret's keyword), or what may be a secret, in the line or in its
    /// strings decoded (a string may itself hold escaped text: `https:\\/\\/…`).
    pub fn may_change_json(&self, line: &str) -> bool {
        let detector = Detector::global();
        !control::json_is_clean(line.as_bytes())
            || detector.may_match(line)
            || view::View::of(line).is_some_and(|v| detector.may_match(&v.text))
    }

    /// Appends the JSON line `line` to `out` with every string value scrubbed (keys kept),
    /// and each `\r` between its tokens, white space to JSON but a carriage return to a
    /// terminal, made a space. Returns true when anything changed.
    pub fn scrub_json_values(&mut self, line: &str, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let changed = json::rewrite_values(line, out, |s| match self.scrub_str(s) {
            Cow::Owned(new) => Some(new),
            Cow::Borrowed(_) => None,
        });
        // JSON allows no raw control character inside a string, so every `\r` is between
        // tokens.
        let written = &mut out[start..];
        let returns = memchr::memchr(b'\r', written).is_some();
        if returns {
            written.iter_mut().filter(|b| **b == b'\r').for_each(|b| *b = b' ');
        }
        changed || returns
    }

    /// Redactions so far, by kind.
    pub fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }
}

/// A JSON line with the terminal control bytes removed from every string value (keys kept),
/// borrowed when there are none, which is checked cheaply. [`Scrubber::scrub_event`] cleans
/// content; this also reaches ids and names, which a hostile provider spells as it likes.
pub fn clean_json_line(line: &str) -> Cow<'_, str> {
    if control::json_is_clean(line.as_bytes()) {
        return Cow::Borrowed(line);
    }
    let mut out = Vec::with_capacity(line.len());
    if !json::rewrite_values(line, &mut out, |s| match control::clean(s) {
        Cow::Owned(clean) => Some(clean),
        Cow::Borrowed(_) => None,
    }) {
        return Cow::Borrowed(line);
    }
    // rewrite_values copies `line` and writes whole strings, so the result is UTF-8.
    String::from_utf8(out).map_or(Cow::Borrowed(line), Cow::Owned)
}
