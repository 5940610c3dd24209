//! What projections remember about tool calls between `tool.started` and the terminal event:
//! a terminal event names the call but not its target or command, and a child agent's
//! tools need their parent's nesting depth.

use std::collections::HashMap;

use crate::event::{Event, ToolStarted};

/// One open tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The `tool.started` payload.
    pub started: ToolStarted,
    /// The call that spawned this one's agent (`parentId`), when any.
    pub parent: Option<String>,
    /// 0 for a root call, 1 for a child agent's call, and so on.
    pub depth: usize,
    /// Start order, so open calls can be listed as they began.
    order: u64,
}

impl Call {
    /// What the call works on, for a receipt: the command, else the target, else the name.
    pub fn subject(&self) -> &str {
        self.started.command.as_deref().or(self.started.target.as_deref()).unwrap_or(&self.started.name)
    }
}

/// Open calls, keyed by session and call id (ids such as `item_1` repeat across sessions).
#[derive(Debug, Default)]
pub struct Calls {
    open: HashMap<(String, String), Call>,
    started: u64,
}

impl Calls {
    /// Records a started call and returns it.
    pub fn start(&mut self, event: &Event, started: &ToolStarted) -> &Call {
        let depth = self.depth_under(&event.session_id, event.parent_id.as_deref());
        self.started += 1;
        let call = Call { started: started.clone(), parent: event.parent_id.clone(), depth, order: self.started };
        let key = (event.session_id.clone(), started.tool_call_id.clone());
        self.open.insert(key.clone(), call);
        &self.open[&key]
    }

    /// The open call, if it was announced.
    pub fn get(&self, session: &str, id: &str) -> Option<&Call> {
        self.open.get(&(session.to_owned(), id.to_owned()))
    }

    /// Forgets a call that ended, returning what was known about it.
    pub fn end(&mut self, session: &str, id: &str) -> Option<Call> {
        self.open.remove(&(session.to_owned(), id.to_owned()))
    }

    /// The nesting depth of an event whose `parentId` is `parent`: one below its parent call.
    pub fn depth_under(&self, session: &str, parent: Option<&str>) -> usize {
        match parent {
            None => 0,
            Some(p) => self.get(session, p).map_or(1, |c| c.depth + 1),
        }
    }

    /// The root call of `session` that started last and is still open.
    pub fn last_open_root(&self, session: &str) -> Option<&Call> {
        self.open.iter().filter(|((s, _), c)| s == session && c.depth == 0).map(|(_, c)| c).max_by_key(|c| c.order)
    }

    /// Takes the calls still open, in the order they started.
    pub fn drain_in_order(&mut self) -> Vec<(String, Call)> {
        let mut v: Vec<_> = self.open.drain().map(|((s, _), c)| (s, c)).collect();
        v.sort_by_key(|(_, c)| c.order);
        v
    }
}
