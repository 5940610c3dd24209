//! Records written twice. A session file whose every record carries its own id or time never
//! holds one line twice, so a line read before (a record a retried write or a copy repeated,
//! or two copies of one file joined) is that record again, and says nothing new: counted
//! once, its usage is not doubled and its prompt opens no second turn. A dialect whose
//! records are so registers its parser wrapped in [`ReadOnce`].

use super::{LineError, Parse};
use crate::engine::{Engine, Recent};

/// How many of the latest lines are remembered: a repeat further back is read again.
const REMEMBERED: usize = 4096;

/// Parser `P`, given each line once: a line it was given lately is skipped.
pub(super) struct ReadOnce<P> {
    parser: P,
    seen: Recent,
}

impl<P: Default> Default for ReadOnce<P> {
    fn default() -> ReadOnce<P> {
        ReadOnce { parser: P::default(), seen: Recent::new(REMEMBERED) }
    }
}

impl<P: Parse> Parse for ReadOnce<P> {
    fn line(&mut self, line: &str, engine: &mut Engine) -> Result<(), LineError> {
        if !self.seen.insert(line) {
            return Ok(());
        }
        self.parser.line(line, engine)
    }

    fn finish(&mut self, engine: &mut Engine) {
        self.parser.finish(engine);
    }
}
