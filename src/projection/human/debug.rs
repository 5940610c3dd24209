//! What `debug` adds around every event: a header with its ids, timestamp and provenance,
//! and its redacted payload.

use std::io::{self, Write};

use serde_json::value::RawValue;

use super::layout::Block;
use super::Human;
use crate::event::Event;
use crate::vocabulary::style::{clean, Tone};

/// Debug payloads longer than this are cut (the `jsonl` mode has them whole).
const PAYLOAD_CHARS: usize = 4096;

impl Human {
    pub(super) fn debug_header(&mut self, ev: &Event, out: &mut dyn Write) -> io::Result<()> {
        let mut h = format!("┄ {}  {}  {}", clean(&ev.timestamp), clean(&ev.event_id), clean(ev.type_name()));
        if let Some(s) = ev.status {
            h.push_str(&format!("  status={}", s.as_str()));
        }
        if let Some(c) = &ev.correlation_id {
            h.push_str(&format!("  correlationId={}", clean(c)));
        }
        if let Some(p) = &ev.parent_id {
            h.push_str(&format!("  parentId={}", clean(p)));
        }
        let r = &ev.raw_ref;
        if let Some(file) = &r.file {
            h.push_str(&format!("  {}", clean(file)));
        }
        h.push_str(&match r.end_line {
            Some(end) => format!("  lines {}-{end}", r.line),
            None => format!("  line {}", r.line),
        });
        let line = self.paint.paint(Tone::Muted, &h);
        self.page.line(out, Block::Note, 0, line)
    }

    pub(super) fn debug_payload(&mut self, ev: &Event, out: &mut dyn Write) -> io::Result<()> {
        /// The parts of an event's JSON that are not already in the header, in their order.
        #[derive(serde::Deserialize, serde::Serialize)]
        struct Shown<'a> {
            #[serde(borrow, skip_serializing_if = "Option::is_none")]
            ok: Option<&'a RawValue>,
            #[serde(borrow, skip_serializing_if = "Option::is_none")]
            error: Option<&'a RawValue>,
            #[serde(borrow, skip_serializing_if = "Option::is_none")]
            prompt: Option<&'a RawValue>,
            #[serde(borrow, skip_serializing_if = "Option::is_none")]
            payload: Option<&'a RawValue>,
        }
        let whole = serde_json::to_string(ev)?;
        let json = match serde_json::from_str::<Shown<'_>>(&whole) {
            Ok(shown) => serde_json::to_string(&shown)?,
            Err(_) => whole.clone(),
        };
        let mut text: String = json.chars().take(PAYLOAD_CHARS).collect();
        if text.len() < json.len() {
            text.push_str(&format!(" … ({} more bytes)", json.len() - text.len()));
        }
        let line = self.paint.paint(Tone::Muted, &clean(&text));
        self.page.line(out, Block::Note, 2, line)
    }
}
