//! Records written twice. A session file whose every record carries its own id or time never
//! holds one line twice, so a line read before (a record a retried write or a copy repeated,
//! or two copies of one file joined) is that record again, and says nothing new: counted
//! once, its usage is not doubled and its prompt opens no second turn.

use crate::engine::Recent;

/// How many of the latest lines are remembered: a repeat further back is read again.
const REMEMBERED: usize = 4096;

/// The lines a session reader has read lately.
#[derive(Debug)]
pub(super) struct Repeats(Recent);

impl Default for Repeats {
    fn default() -> Repeats {
        Repeats(Recent::new(REMEMBERED))
    }
}

impl Repeats {
    /// True when `line` was read before, and so is to be skipped.
    pub fn seen(&mut self, line: &str) -> bool {
        !self.0.insert(line)
    }
}
