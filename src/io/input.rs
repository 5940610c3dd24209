//! Byte sources that can tell whether a read would wait ([`Input`]), and the reader of
//! pipes and terminals that waits in `poll` so a stop request ends a silent input.

use std::fs::File;
use std::io::{self, Read};

use super::{stop_requested, SIGNALS};

/// The size of `f` when it is a regular file; `None` for a pipe, a terminal, a device.
pub(super) fn regular_size(f: &File) -> Option<u64> {
    f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len())
}

/// A byte source that can tell whether a read now would wait for its writer, so that a
/// filter flushes what it wrote before it waits, and only then.
pub trait Input: Read {
    /// True when the next read returns at once: bytes are waiting in memory or in the pipe,
    /// or the input has ended. False when it may wait, or when the source cannot tell.
    fn ready(&self) -> bool;

    /// False for input that never waits for a writer: a regular file, bytes in memory.
    fn may_wait(&self) -> bool {
        true
    }
}

impl<I: Input + ?Sized> Input for Box<I> {
    fn ready(&self) -> bool {
        (**self).ready()
    }

    fn may_wait(&self) -> bool {
        (**self).may_wait()
    }
}

/// A regular file (a pipe or a terminal opened as a file is read through `poll` instead).
impl Input for File {
    fn ready(&self) -> bool {
        true
    }

    fn may_wait(&self) -> bool {
        false
    }
}

impl<T: AsRef<[u8]>> Input for io::Cursor<T> {
    fn ready(&self) -> bool {
        true
    }

    fn may_wait(&self) -> bool {
        false
    }
}

/// The standard input as std reads it, when it could not be read as a file of its own:
/// never polled, so never known to be ready.
impl Input for io::Stdin {
    fn ready(&self) -> bool {
        false
    }
}

impl<R: Input> Input for io::Chain<io::Cursor<Vec<u8>>, R> {
    fn ready(&self) -> bool {
        let (head, rest) = self.get_ref();
        head.position() < head.get_ref().len() as u64 || rest.ready()
    }

    fn may_wait(&self) -> bool {
        self.get_ref().1.may_wait()
    }
}

/// Any reader, for callers that hand one over: nothing is known of when it waits.
pub(crate) struct Opaque<R>(pub R);

impl<R: Read> Read for Opaque<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> Input for Opaque<R> {
    fn ready(&self) -> bool {
        false
    }
}

/// The capacity asked for an input pipe: what the writer may run ahead of the filter.
#[cfg(target_os = "linux")]
const PIPE_SIZE: usize = 1 << 20;

/// How often a reader waiting on a silent pipe looks whether it was asked to stop.
const STOP_POLL: rustix::event::Timespec = rustix::event::Timespec { tv_sec: 0, tv_nsec: 50_000_000 };

/// Input that may block (a pipe, a terminal): read when `poll` says it has something, so a
/// stop request (SIGINT, SIGTERM) ends the input even while the writer upstream is alive and
/// silent (a supervisor's `kill`, `timeout`), and the filter then finishes as if the input had
/// ended there. Reads go straight into the caller's buffer. A descriptor `poll` refuses (a
/// terminal on macOS) is read as it comes, never counts as ready, and a second signal ends
/// the filter.
pub(super) struct Waiting(pub(super) File);

impl Waiting {
    pub(super) fn new(file: File) -> Waiting {
        // Only ever grown: the writer may have made it bigger still.
        #[cfg(target_os = "linux")]
        if rustix::pipe::fcntl_getpipe_size(&file).is_ok_and(|size| size < PIPE_SIZE) {
            let _ = rustix::pipe::fcntl_setpipe_size(&file, PIPE_SIZE);
        }
        Waiting(file)
    }

    /// What `poll` reports within `timeout` (forever with none): nothing when it ran out or
    /// a signal came.
    fn poll(&self, timeout: Option<&rustix::event::Timespec>) -> io::Result<rustix::event::PollFlags> {
        use rustix::event::{poll, PollFd, PollFlags};
        let mut fds = [PollFd::new(&self.0, PollFlags::IN)];
        match poll(&mut fds, timeout) {
            Ok(_) => Ok(fds[0].revents()),
            Err(rustix::io::Errno::INTR) => Ok(PollFlags::empty()),
            Err(e) => Err(e.into()),
        }
    }
}

impl Read for Waiting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Bytes, the end of the input and errors all make the descriptor ready. Without a
        // stop to look for (signals not caught), it simply waits. The stop is looked for
        // before every read too: an input that is always ready (`/dev/zero`, a writer faster
        // than the filter) would otherwise never end a line that never ends.
        let timeout = SIGNALS.get().map(|_| &STOP_POLL);
        loop {
            if stop_requested().is_some() {
                return Ok(0);
            }
            if !self.poll(timeout)?.is_empty() {
                return self.0.read(buf);
            }
        }
    }
}

impl Input for Waiting {
    fn ready(&self) -> bool {
        use rustix::event::PollFlags;
        self.poll(Some(&rustix::event::Timespec { tv_sec: 0, tv_nsec: 0 }))
            .is_ok_and(|got| !got.is_empty() && !got.contains(PollFlags::NVAL))
    }
}

/// Lines made on a thread of their own by a reader that cannot hand out bytes as it goes (a
/// database read through its library, whose rows borrow the connection), read as a file
/// is. At most `QUEUED` chunks of about `CHUNK` bytes wait: the producer waits for the
/// filter, and stops when the filter stops reading.
pub struct Produced {
    rx: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: io::Cursor<Vec<u8>>,
}

const CHUNK: usize = 64 * 1024;
const QUEUED: usize = 4;

/// Where a [`Produced`] producer writes its lines.
pub struct LinesOut {
    tx: std::sync::mpsc::SyncSender<io::Result<Vec<u8>>>,
    buf: Vec<u8>,
}

impl LinesOut {
    /// Adds one line (without its newline). Fails once the filter has stopped reading.
    pub fn line(&mut self, line: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(line);
        self.buf.push(b'\n');
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> io::Result<()> {
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx.send(Ok(chunk)).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

impl Produced {
    /// Runs `produce` on a thread named `name`; an error it returns ends the lines with it.
    pub fn spawn(
        name: &str,
        produce: impl FnOnce(&mut LinesOut) -> io::Result<()> + Send + 'static,
    ) -> io::Result<Produced> {
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUED);
        std::thread::Builder::new().name(name.into()).spawn(move || {
            let mut out = LinesOut { tx, buf: Vec::with_capacity(CHUNK) };
            let result = produce(&mut out).and_then(|()| out.send());
            if let Err(e) = result {
                let _ = out.tx.send(Err(e));
            }
        })?;
        Ok(Produced { rx, chunk: io::Cursor::new(Vec::new()) })
    }
}

impl Read for Produced {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.chunk.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            match self.rx.recv() {
                Ok(chunk) => self.chunk = io::Cursor::new(chunk?),
                Err(_) => return Ok(0),
            }
        }
    }
}

/// Never waits for a writer: the rows are on disk.
impl Input for Produced {
    fn ready(&self) -> bool {
        true
    }

    fn may_wait(&self) -> bool {
        false
    }
}
