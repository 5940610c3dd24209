//! The `scrub` stage: terminal control bytes out of every string of an event (and secrets,
//! once the rule table lands). Keys and ids are left alone; counts of redactions by kind
//! feed the summary.

pub mod control;

use std::collections::BTreeMap;

use crate::event::Event;

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

    /// Scrubs one string in place.
    pub fn scrub_text(&mut self, s: &mut String) {
        if let std::borrow::Cow::Owned(c) = control::clean(s) {
            *s = c;
        }
    }

    /// Scrubs every content string of an event.
    pub fn scrub_event(&mut self, event: &mut Event) {
        event.for_each_text_mut(|_, s| self.scrub_text(s));
    }

    /// Redactions so far, by kind.
    pub fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }
}
