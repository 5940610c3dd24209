//! `jsonl`: every canonical event unchanged, one per line, re-serialized from the typed
//! model (byte-identical to what `normalize` wrote).

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
}
