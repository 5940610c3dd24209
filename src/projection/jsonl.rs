//! `jsonl`: every canonical event unchanged, one per line: the line it was read from, or,
//! for an event built in memory, its serialization (byte-identical to what `normalize`
//! writes).

use std::io::Write;
use std::ops::ControlFlow;

use super::{Flow, Projection};
use crate::event::Event;

/// The pass-through projection.
#[derive(Debug, Default)]
pub struct Jsonl;

impl Projection for Jsonl {
    fn event(&mut self, event: &Event, out: &mut dyn Write) -> Flow {
        serde_json::to_writer(&mut *out, event)?;
        out.write_all(b"\n")?;
        Ok(ControlFlow::Continue(()))
    }

    fn event_line(&mut self, _event: &Event, line: &str, out: &mut dyn Write) -> Flow {
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(ControlFlow::Continue(()))
    }
}
