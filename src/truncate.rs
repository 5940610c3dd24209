//! The `truncate` stage: every text field of an event bounded, UTF-8-safe. Tool output keeps
//! its newest bytes; other text keeps 70 % head and 30 % tail around a marker.

use crate::bound::{bound, has_marker, Keep};
use crate::event::{Event, TextField};

/// Bounds the text fields of events.
#[derive(Debug, Clone)]
pub struct Truncator {
    max: usize,
    keep: Option<Keep>,
}

impl Truncator {
    /// Bounds every field to `max` bytes; `keep` overrides the per-field default.
    pub fn new(max: usize, keep: Option<Keep>) -> Truncator {
        Truncator { max, keep }
    }

    /// Bounds one event's fields; tool output that was cut is marked `truncated: true`.
    pub fn truncate_event(&self, event: &mut Event) -> bool {
        let mut output_cut = false;
        let mut any = false;
        event.for_each_text_mut(|field, s| {
            let keep = self.keep.unwrap_or(if field == TextField::ToolOutput { Keep::Tail } else { Keep::HeadTail });
            if keep == Keep::HeadTail && has_marker(s) && s.len() <= self.max {
                return;
            }
            if bound(s, self.max, keep) {
                any = true;
                output_cut |= field == TextField::ToolOutput;
            }
        });
        if output_cut {
            event.mark_truncated();
        }
        any
    }
}
