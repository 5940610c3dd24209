//! Line input and line output shared by every binary: stdin-or-files, `memchr` line
//! splitting with a line-length limit, lossy UTF-8 (and UTF-16 with a BOM) decoding, and an
//! output buffer that only ever writes whole lines and flushes before input would block.
//! This file owns the signals that ask a filter to stop; the rest is in its submodules.

mod files;
mod input;
mod line;
mod order;
mod read;
mod source;
mod walk;
mod write;

pub use files::Files;
pub(crate) use input::Opaque;
pub use input::{Input, LinesOut, Produced};
pub use line::{decoding, is_blank, open_decoded, without_bom, Line, LineReader};
pub use order::Place;
pub use read::{each_line, read_lines, EventLine, LineSink, Reading, SourceNotes};
pub use source::{
    DecodeText, Decoded, Formats, JsonLines, Opened, Source, SourceIter, Sources, Unreadable, DOCUMENT_BYTES,
    HEAD_BYTES,
};
pub use write::LineWriter;

use std::io;

/// The default `--max-line-bytes`: 64 MiB.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;
/// U+FEFF in UTF-8: a byte order mark when it starts a stream.
pub const BOM: &[u8] = b"\xef\xbb\xbf";

static SIGNALS: std::sync::OnceLock<[(i32, std::sync::Arc<std::sync::atomic::AtomicBool>); 2]> =
    std::sync::OnceLock::new();

/// From now on SIGINT and SIGTERM only ask the filter to stop at the next line boundary, so
/// what it has written stays whole lines (and `normalize` still writes its summary). A
/// second signal of the same kind terminates at once, as usual.
pub fn stop_on_signals() -> io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    use std::sync::{atomic::AtomicBool, Arc};
    if SIGNALS.get().is_some() {
        return Ok(());
    }
    let flags = [(SIGINT, Arc::new(AtomicBool::new(false))), (SIGTERM, Arc::new(AtomicBool::new(false)))];
    for (sig, f) in &flags {
        flag::register_conditional_default(*sig, Arc::clone(f))?;
        flag::register(*sig, Arc::clone(f))?;
    }
    let _ = SIGNALS.set(flags);
    Ok(())
}

/// The signal that asked the filter to stop, if one did.
pub fn stop_requested() -> Option<i32> {
    SIGNALS.get()?.iter().find(|(_, f)| f.load(std::sync::atomic::Ordering::Relaxed)).map(|(s, _)| *s)
}

/// True when the error means the reader of our output went away (`| head`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests;
