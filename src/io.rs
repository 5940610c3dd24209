//! Line input and line output shared by every binary: stdin-or-files, `memchr` line
//! splitting with a line-length limit, lossy UTF-8 (and UTF-16 with a BOM) decoding, and an
//! output buffer that only ever writes whole lines and flushes before input would block.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use crate::event::Event;

/// The default `--max-line-bytes`: 64 MiB.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

const CHUNK: usize = 64 * 1024;
/// How much of an oversized line is kept as a sample.
const SAMPLE: usize = 4096;

/// U+FEFF in UTF-8: a byte order mark when it starts a stream.
pub const BOM: &[u8] = b"\xef\xbb\xbf";

/// One input line, without its line terminator.
#[derive(Debug)]
pub enum Line<'a> {
    /// A line within the limit, decoded (lossily when it was not UTF-8).
    Text(Cow<'a, str>),
    /// A line over the limit: its length and its first bytes, decoded.
    Oversized {
        /// Total length in bytes.
        bytes: u64,
        /// The first few KiB.
        sample: String,
    },
}

/// True for a line that holds nothing: empty, or only spaces and tabs, the white space JSON
/// allows besides the line ending the reader has taken. Every filter skips blank lines (or
/// passes them on, as they are); anything else, a form feed or U+3000 too, is content.
pub fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| matches!(b, b' ' | b'\t'))
}

impl<'a> Line<'a> {
    /// True for a [blank](is_blank) line within the limit.
    pub fn is_blank(&self) -> bool {
        matches!(self, Line::Text(t) if is_blank(t))
    }

    /// The line's text (the sample, for an oversized line) and, for an oversized line, its
    /// full length in bytes.
    pub fn into_text(self) -> (Cow<'a, str>, Option<u64>) {
        match self {
            Line::Text(t) => (t, None),
            Line::Oversized { bytes, sample } => (Cow::Owned(sample), Some(bytes)),
        }
    }
}

/// Splits a byte stream into lines with `memchr`, holding at most one line plus a chunk.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    first: bool,
    max_line: usize,
}

impl<R: Read> LineReader<R> {
    /// A reader that turns lines longer than `max_line` bytes into [`Line::Oversized`].
    pub fn new(inner: R, max_line: usize) -> LineReader<R> {
        LineReader::reusing(inner, max_line, Vec::new())
    }

    /// [`new`](Self::new), reading into `buf` (what [`into_buffer`](Self::into_buffer) gave
    /// back), so many small inputs in a row do not each zero a new buffer.
    pub fn reusing(inner: R, max_line: usize, mut buf: Vec<u8>) -> LineReader<R> {
        if buf.len() < CHUNK {
            buf.resize(CHUNK, 0);
        }
        LineReader { inner, buf, start: 0, end: 0, eof: false, first: true, max_line: max_line.max(1) }
    }

    /// The buffer, for the next reader.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// True when a whole line is already buffered, so the next call will not read.
    pub fn has_buffered_line(&self) -> bool {
        memchr::memchr(b'\n', &self.buf[self.start..self.end]).is_some()
    }

    /// True when the next [`next_line`](Self::next_line) may wait for the writer: the input
    /// can wait at all, no whole line is buffered and the input has none ready. To find out
    /// it reads once, and only when the input has bytes ready, so it never waits itself; a
    /// line still incomplete after that read counts as waiting (a flush too many, never one
    /// too few).
    pub fn would_wait(&mut self) -> io::Result<bool>
    where
        R: Input,
    {
        if !self.inner.may_wait() || self.eof || self.has_buffered_line() {
            return Ok(false);
        }
        if self.end - self.start > self.max_line || !self.inner.ready() {
            return Ok(true);
        }
        self.fill()?;
        Ok(!self.eof && !self.has_buffered_line())
    }

    fn fill(&mut self) -> io::Result<usize> {
        if self.start > 0 && self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                // Grow the readable length a chunk at a time (the Vec still doubles its
                // capacity): `resize` writes zeros, and zeroed pages count in the resident
                // set, so a doubled length would cost up to twice a huge line.
                let len = (self.buf.len() + CHUNK.max(self.buf.len() / 8))
                    .min(self.max_line + CHUNK + 1)
                    .max(self.buf.len() + 1);
                self.buf.resize(len, 0);
            }
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(0);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line, or `None` at end of input. A final line without a newline counts.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        let mut scanned = 0;
        loop {
            let window = &self.buf[self.start + scanned..self.end];
            if let Some(i) = memchr::memchr(b'\n', window) {
                let line_end = self.start + scanned + i;
                let begin = self.start;
                self.start = line_end + 1;
                if line_end - begin > self.max_line {
                    return Ok(Some(self.oversized_from(begin, line_end, (line_end - begin) as u64)));
                }
                return Ok(Some(self.text(begin, line_end)));
            }
            scanned = self.end - self.start;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let (begin, end) = (self.start, self.end);
                self.start = self.end;
                return Ok(Some(self.text(begin, end)));
            }
            if scanned > self.max_line {
                return self.skip_oversized().map(Some);
            }
            self.fill()?;
        }
    }

    fn text(&mut self, begin: usize, mut end: usize) -> Line<'_> {
        // Every trailing `\r` goes with the line ending: one written back before a newline
        // would be read as part of that ending, so keeping any would not survive a re-read.
        while end > begin && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let mut begin = begin;
        if std::mem::take(&mut self.first) && self.buf[begin..end].starts_with(BOM) {
            begin += BOM.len();
        }
        Line::Text(decode(&self.buf[begin..end]))
    }

    fn oversized_from(&mut self, begin: usize, end: usize, bytes: u64) -> Line<'_> {
        self.first = false;
        let cut = (begin + SAMPLE).min(end);
        Line::Oversized { bytes, sample: String::from_utf8_lossy(&self.buf[begin..cut]).into_owned() }
    }

    /// Consumes the rest of a line already longer than the limit, keeping only a sample.
    fn skip_oversized(&mut self) -> io::Result<Line<'static>> {
        self.first = false;
        let sample = String::from_utf8_lossy(&self.buf[self.start..(self.start + SAMPLE).min(self.end)]).into_owned();
        let mut bytes = (self.end - self.start) as u64;
        self.start = 0;
        self.end = 0;
        self.buf.truncate(CHUNK);
        self.buf.shrink_to_fit();
        loop {
            if self.fill()? == 0 {
                return Ok(Line::Oversized { bytes, sample });
            }
            if let Some(i) = memchr::memchr(b'\n', &self.buf[..self.end]) {
                bytes += i as u64;
                self.start = i + 1;
                return Ok(Line::Oversized { bytes, sample });
            }
            bytes += self.end as u64;
            self.end = 0;
        }
    }
}

/// UTF-8 text as is (validated with SIMD: this runs on every input byte), anything else
/// decoded lossily.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Decodes UTF-16 (detected by its byte-order mark) to UTF-8 as it is read.
struct Utf16Reader<R> {
    inner: R,
    decoder: encoding_rs::Decoder,
    pending: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    eof: bool,
}

/// Ready only with decoded text in hand: bytes waiting upstream may be half a code unit.
impl<R: Input> Input for Utf16Reader<R> {
    fn ready(&self) -> bool {
        self.out_pos < self.out.len() || self.eof
    }

    fn may_wait(&self) -> bool {
        self.inner.may_wait()
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.out_pos == self.out.len() {
            if self.eof {
                return Ok(0);
            }
            let mut raw = [0u8; CHUNK];
            let n = self.inner.read(&mut raw)?;
            self.eof = n == 0;
            self.pending.extend_from_slice(&raw[..n]);
            self.out.clear();
            self.out_pos = 0;
            let cap = self.decoder.max_utf8_buffer_length(self.pending.len()).unwrap_or(self.pending.len() * 3 + 16);
            self.out.resize(cap, 0);
            let (_, read, written, _) = self.decoder.decode_to_utf8(&self.pending, &mut self.out, self.eof);
            self.pending.drain(..read);
            self.out.truncate(written);
        }
        let n = buf.len().min(self.out.len() - self.out_pos);
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}

/// Wraps a reader so that UTF-16 input (with a BOM) arrives as UTF-8; anything else passes
/// through untouched.
pub fn decoding<'a, R: Input + 'a>(mut inner: R) -> io::Result<Box<dyn Input + 'a>> {
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match inner.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let encoding = match &head[..got] {
        [0xff, 0xfe] => Some(encoding_rs::UTF_16LE),
        [0xfe, 0xff] => Some(encoding_rs::UTF_16BE),
        _ => None,
    };
    let prefix = io::Cursor::new(head[..got].to_vec());
    Ok(match encoding {
        Some(enc) => Box::new(Utf16Reader {
            inner: prefix.chain(inner),
            decoder: enc.new_decoder_with_bom_removal(),
            pending: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            eof: false,
        }),
        None => Box::new(prefix.chain(inner)),
    })
}

fn is_regular(f: &File) -> bool {
    f.metadata().is_ok_and(|m| m.is_file())
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
struct Waiting(File);

impl Waiting {
    fn new(file: File) -> Waiting {
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

/// Where input comes from: stdin (`-` or no operands) or files, in order.
#[derive(Debug, Clone)]
pub enum Source {
    /// Standard input.
    Stdin,
    /// A file.
    File(PathBuf),
    /// Bytes already in memory (for embedding the filters, and for the fuzz targets).
    Bytes(std::sync::Arc<[u8]>),
}

impl Source {
    /// The operands as sources; none means stdin.
    pub fn from_operands(paths: &[PathBuf]) -> Vec<Source> {
        if paths.is_empty() {
            return vec![Source::Stdin];
        }
        paths.iter().map(|p| if p == Path::new("-") { Source::Stdin } else { Source::File(p.clone()) }).collect()
    }

    /// Opens the source, decoding UTF-16 when it starts with a BOM.
    pub fn open(&self) -> io::Result<Box<dyn Input>> {
        let file = |f: File| if is_regular(&f) { decoding(f) } else { decoding(Waiting::new(f)) };
        match self {
            // Read as a file of its own, not through std's buffer, which `poll` cannot see.
            Source::Stdin => match io::stdin().as_fd().try_clone_to_owned() {
                Ok(fd) => file(File::from(fd)),
                Err(_) => decoding(io::stdin()),
            },
            Source::File(p) => file(File::open(p)?),
            Source::Bytes(b) => decoding(io::Cursor::new(std::sync::Arc::clone(b))),
        }
    }

    /// False when opening and reading the source never waits for a writer (a regular file,
    /// bytes in memory), so output need not be flushed before it is opened.
    pub fn may_wait(&self) -> bool {
        match self {
            Source::Stdin => true,
            Source::File(p) => !std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Source::Bytes(_) => false,
        }
    }

    /// A name for messages.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".into(),
            Source::File(p) => p.display().to_string(),
            Source::Bytes(_) => "<memory>".into(),
        }
    }
}

/// The inputs of one run: the operands in order, or the paths a list names
/// (`--files-from`), read one at a time so a list of any length takes no more memory than
/// its longest path.
#[derive(Debug, Clone)]
pub struct Sources {
    given: Vec<Source>,
    /// The list, and what ends each of its paths (`\n`, or NUL with `-0`).
    list: Option<(Source, u8)>,
}

impl Sources {
    /// The operands; none means stdin.
    pub fn from_operands(paths: &[PathBuf]) -> Sources {
        Sources { given: Source::from_operands(paths), list: None }
    }

    /// The paths listed in `list` (`-` is stdin), one per line, or NUL-separated with `nul`.
    pub fn listed_in(list: &Path, nul: bool) -> Sources {
        let list = if list == Path::new("-") { Source::Stdin } else { Source::File(list.to_path_buf()) };
        Sources { given: Vec::new(), list: Some((list, if nul { 0 } else { b'\n' })) }
    }

    /// True when the input may be several files, so provenance names the file of each line.
    pub fn names_files(&self) -> bool {
        self.list.is_some() || self.given.len() > 1
    }

    /// The sources in order; an error reading the list itself ends the iteration with it.
    pub fn iter(&self) -> io::Result<SourceIter> {
        let list = match &self.list {
            Some((source, end)) => {
                Some(List { reader: io::BufReader::new(source.open()?), end: *end, name: source.name() })
            }
            None => None,
        };
        Ok(SourceIter { given: self.given.clone().into_iter(), list, path: Vec::new() })
    }
}

impl From<Vec<Source>> for Sources {
    fn from(given: Vec<Source>) -> Sources {
        Sources { given, list: None }
    }
}

/// The sources of a [`Sources`], in order.
pub struct SourceIter {
    given: std::vec::IntoIter<Source>,
    list: Option<List>,
    path: Vec<u8>,
}

/// A list of paths being read: the reader, what ends each path, and the list's name.
struct List {
    reader: io::BufReader<Box<dyn Input>>,
    end: u8,
    name: String,
}

impl Iterator for SourceIter {
    type Item = io::Result<Source>;

    fn next(&mut self) -> Option<io::Result<Source>> {
        use std::io::BufRead;
        use std::os::unix::ffi::OsStrExt;
        if let Some(s) = self.given.next() {
            return Some(Ok(s));
        }
        let List { reader, end, name } = self.list.as_mut()?;
        loop {
            self.path.clear();
            match reader.read_until(*end, &mut self.path) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(io::Error::new(e.kind(), format!("reading the list {name}: {e}")))),
            }
            if self.path.last() == Some(end) {
                self.path.pop();
            }
            // `find -print` lists end with a newline; a blank entry names no file.
            if !self.path.is_empty() {
                let path = Path::new(std::ffi::OsStr::from_bytes(&self.path));
                return Some(Ok(Source::File(path.to_path_buf())));
            }
        }
    }
}

/// Why a source gave less than all its lines: it could not be opened, or reading it failed
/// part way. Either is said and counted by the caller, and the next source is read.
#[derive(Debug)]
pub struct Unreadable {
    /// The source, as named in messages.
    pub name: String,
    /// What went wrong.
    pub error: io::Error,
    /// True when it failed part way, after some of its lines were read.
    pub part_way: bool,
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.part_way {
            false => write!(f, "cannot read {}: {}", self.name, self.error),
            true => write!(f, "reading {} stopped part way: {}", self.name, self.error),
        }
    }
}

/// What the one input loop ([`each_line`]) hands its lines to. Each method but
/// `unreadable` may end the loop early by returning `Ok(false)`.
pub trait LineSink {
    /// The next source is about to be opened. `flush` when opening or reading it may wait (a
    /// pipe, a FIFO) and sources came before it: their output should go out now.
    fn begin(&mut self, source: &Source, flush: bool) -> anyhow::Result<bool>;
    /// The next line of the current source (blank ones too).
    fn line(&mut self, line: Line<'_>) -> anyhow::Result<bool>;
    /// The next read may block: what was written should be flushed now, so a filter stays
    /// live in a pipe.
    fn idle(&mut self) -> anyhow::Result<bool>;
    /// A source could not be read, or reading it failed part way; the next is read.
    fn unreadable(&mut self, u: Unreadable);
}

/// The one input loop, shared by every filter: reads the lines of every source in order
/// into `sink`, until the sources end, a stop is requested or the sink says so.
pub fn each_line(sources: &Sources, max_line: usize, sink: &mut impl LineSink) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    for (i, source) in sources.iter()?.enumerate() {
        let source = source?;
        if stop_requested().is_some() || !sink.begin(&source, i > 0 && source.may_wait())? {
            return Ok(());
        }
        let input = match source.open() {
            Ok(input) => input,
            Err(error) => {
                sink.unreadable(Unreadable { name: source.name(), error, part_way: false });
                continue;
            }
        };
        let mut lines = LineReader::reusing(input, max_line, buf);
        let mut part_way = false;
        let failed = loop {
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break None,
                Err(e) => break Some(e),
            };
            part_way = true;
            if !sink.line(line)? {
                return Ok(());
            }
            match lines.would_wait() {
                Ok(true) if !sink.idle()? => return Ok(()),
                Ok(_) => {}
                Err(e) => break Some(e),
            }
            if stop_requested().is_some() {
                return Ok(());
            }
        };
        if let Some(error) = failed {
            sink.unreadable(Unreadable { name: source.name(), error, part_way });
        }
        buf = lines.into_buffer();
    }
    Ok(())
}

/// Output that is written in whole lines only, so a reader never sees half a JSON line.
pub struct LineWriter<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: Write> LineWriter<W> {
    /// A writer over `inner`.
    pub fn new(inner: W) -> LineWriter<W> {
        LineWriter { inner, buf: Vec::with_capacity(CHUNK * 2) }
    }

    /// The buffer to append one line to; call [`LineWriter::end_line`] after it.
    pub fn line_buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Ends the line being written, writing out complete lines when the buffer is large.
    pub fn end_line(&mut self) -> io::Result<()> {
        self.buf.push(b'\n');
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes one serialisable value as a JSON line.
    pub fn write_json<T: serde::Serialize>(&mut self, value: &T) -> io::Result<()> {
        serde_json::to_writer(&mut self.buf, value).map_err(io::Error::other)?;
        self.end_line()
    }

    /// Writes a whole line of text.
    pub fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.buf.extend_from_slice(line.as_bytes());
        self.end_line()
    }

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        self.inner.flush()
    }
}

/// One line of canonical JSONL input.
// Nearly every line is an event: boxing it would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum EventLine<'a> {
    /// A canonical event, and the line it was read from.
    Event {
        /// The event.
        event: Event,
        /// Its line as read (without the line ending).
        text: Cow<'a, str>,
    },
    /// A line that is not one (not JSON, not an event, or over the line limit), with why.
    Bad {
        /// The line as read (lossily decoded; only the start of an oversized line).
        text: Cow<'a, str>,
        /// Why it is not an event.
        error: String,
    },
}

/// How [`read_events`] reads each line.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// Remove control bytes from every string value first (ids and names too), for output
    /// meant for people.
    pub clean: bool,
    /// Keep tool output; without it, it is checked but left empty (see [`Event::from_json`]).
    pub tool_output: bool,
}

impl Reading {
    fn read(self, line: &str) -> serde_json::Result<Event> {
        let parse = |line: &str| match self.clean {
            true => Event::from_json(&crate::scrub::clean_json_line(line), self.tool_output),
            false => Event::from_json(line, self.tool_output),
        };
        // Cut before it is cleaned, tool output is not looked at twice; a line that fails
        // cut is read whole, so its error is the whole line's.
        if !self.tool_output {
            if let Some(Ok(event)) = Event::cut_tool_output(line).map(|cut| parse(&cut.rest)) {
                return Ok(event);
            }
        }
        parse(line)
    }
}

/// Reads canonical JSONL from `sources` in order, as `how` says, calling `on` for every
/// non-blank line with its 1-based number (counted across sources); see [`read_lines`].
pub fn read_events<W: Write>(
    sources: &Sources,
    max_line: usize,
    how: Reading,
    output: &mut LineWriter<W>,
    unreadable: impl FnMut(Unreadable),
    mut on: impl FnMut(u64, EventLine<'_>, &mut LineWriter<W>) -> anyhow::Result<()>,
) -> anyhow::Result<u64> {
    read_lines(sources, max_line, output, unreadable, |n, line, output| {
        let item = match line {
            Line::Text(t) if is_blank(&t) => return Ok(()),
            Line::Text(t) => match how.read(&t) {
                Ok(event) => EventLine::Event { event, text: t },
                Err(e) => EventLine::Bad { error: e.to_string(), text: t },
            },
            Line::Oversized { bytes, sample } => {
                EventLine::Bad { text: Cow::Owned(sample), error: format!("{bytes} bytes is over the line limit") }
            }
        };
        on(n, item, output)
    })
}

/// Reads the lines of `sources` in order ([`each_line`]), calling `on` for every line
/// (blank ones too) with its 1-based number (counted across sources), and flushing `output`
/// whenever the next read could block. Returns the number of lines.
pub fn read_lines<W: Write, U: FnMut(Unreadable), F>(
    sources: &Sources,
    max_line: usize,
    output: &mut LineWriter<W>,
    unreadable: U,
    on: F,
) -> anyhow::Result<u64>
where
    F: FnMut(u64, Line<'_>, &mut LineWriter<W>) -> anyhow::Result<()>,
{
    struct Sink<'a, W: Write, U, F> {
        n: u64,
        output: &'a mut LineWriter<W>,
        unreadable: U,
        on: F,
    }
    impl<W: Write, U: FnMut(Unreadable), F> LineSink for Sink<'_, W, U, F>
    where
        F: FnMut(u64, Line<'_>, &mut LineWriter<W>) -> anyhow::Result<()>,
    {
        fn begin(&mut self, _: &Source, flush: bool) -> anyhow::Result<bool> {
            if flush {
                self.output.flush()?;
            }
            Ok(true)
        }
        fn line(&mut self, line: Line<'_>) -> anyhow::Result<bool> {
            self.n += 1;
            (self.on)(self.n, line, self.output)?;
            Ok(true)
        }
        fn idle(&mut self) -> anyhow::Result<bool> {
            self.output.flush()?;
            Ok(true)
        }
        fn unreadable(&mut self, u: Unreadable) {
            (self.unreadable)(u);
        }
    }
    let mut sink = Sink { n: 0, output, unreadable, on };
    each_line(sources, max_line, &mut sink)?;
    sink.output.flush()?;
    Ok(sink.n)
}

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
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(match l {
                Line::Text(t) => t.into_owned(),
                Line::Oversized { bytes, .. } => format!("<{bytes}>"),
            });
        }
        out
    }

    #[test]
    fn blank_is_spaces_and_tabs_only() {
        assert!(["", " ", "\t \t"].iter().all(|l| is_blank(l)));
        assert!(!["\x0c", "\u{a0}", "\u{3000}", " \r ", "x"].iter().any(|l| is_blank(l)));
    }

    #[test]
    fn a_line_read_without_tool_output_is_cleaned_and_fails_as_a_whole_line() {
        let line = |kind: &str| {
            format!(
                r#"{{"schema":"minicode.output.v1","eventId":"s:1:2","type":"tool.completed","sessionId":"s\u001b[31m","turnId":1,"payload":{{"toolCallId":"c","name":"ls","output":{{"stdout":"a\nb"}},"kind":"{kind}"}}}}"#
            )
        };
        let how = |tool_output| Reading { clean: true, tool_output };
        assert!(Event::cut_tool_output(&line("shell")).is_some(), "the line is cut");
        let ev = how(false).read(&line("shell")).unwrap();
        assert_eq!(ev.session_id, "s");
        assert_eq!(ev, Event { body: ev.body.clone(), ..how(true).read(&line("shell")).unwrap() });
        let crate::event::Body::ToolEnded(t) = &ev.body else { panic!("{ev:?}") };
        assert_eq!(t.output.as_ref().and_then(|o| o.stdout.as_deref()), Some(""));
        // Read cut, the error would be four columns sooner.
        let error = |tool_output| how(tool_output).read(&line("spade")).unwrap_err().to_string();
        assert_eq!(error(false), error(true));
    }

    #[test]
    fn splits_crlf_bom_and_a_final_line_without_newline() {
        assert_eq!(lines(b"\xef\xbb\xbfa\r\nb\n\nc", 100), ["a", "b", "", "c"]);
    }

    #[test]
    fn every_trailing_carriage_return_goes_with_the_line_ending() {
        assert_eq!(lines(b"a\r\r\nb\rc\r\r\r\n\r\n\r\r", 100), ["a", "b\rc", "", ""]);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        assert_eq!(lines(b"caf\xe9\n", 100), ["caf\u{fffd}"]);
    }

    #[test]
    fn long_lines_become_oversized_and_reading_goes_on() {
        let mut input = vec![b'x'; 300_000];
        input.extend_from_slice(b"\nnext\n");
        assert_eq!(lines(&input, 1000), ["<300000>", "next"]);
        let mut input = b"short\n".to_vec();
        input.extend(std::iter::repeat_n(b'y', 2000));
        input.extend_from_slice(b"\nlast");
        assert_eq!(lines(&input, 1000), ["short", "<2000>", "last"]);
    }

    #[test]
    fn lines_across_chunk_boundaries_are_whole() {
        let input: Vec<u8> = (0..50_000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let got = lines(&input, DEFAULT_MAX_LINE);
        assert_eq!(got.len(), 50_000);
        assert_eq!(got[49_999], "line 49999");
    }

    #[test]
    fn utf16_with_bom_is_decoded() {
        let mut bytes = vec![0xff, 0xfe];
        for u in "héllo\nwörld\n".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let r = decoding(io::Cursor::new(bytes)).unwrap();
        let mut lr = LineReader::new(r, 100);
        let mut got = Vec::new();
        while let Some(Line::Text(t)) = lr.next_line().unwrap() {
            got.push(t.into_owned());
        }
        assert_eq!(got, ["héllo", "wörld"]);
    }

    /// Input handed over in pieces, of which the first `ready` are waiting; reading past
    /// them is where a pipe would wait, and fails the test instead.
    struct Script {
        pieces: std::collections::VecDeque<&'static [u8]>,
        ready: usize,
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            assert!(self.ready > 0, "read an input that had nothing ready");
            self.ready -= 1;
            let piece = self.pieces.pop_front().unwrap_or_default();
            buf[..piece.len()].copy_from_slice(piece);
            Ok(piece.len())
        }
    }

    impl Input for Script {
        fn ready(&self) -> bool {
            self.ready > 0
        }
    }

    fn script(pieces: &[&'static [u8]], ready: usize, max_line: usize) -> LineReader<Script> {
        LineReader::new(Script { pieces: pieces.iter().copied().collect(), ready }, max_line)
    }

    fn text(line: Option<Line<'_>>) -> String {
        match line {
            Some(Line::Text(t)) => t.into_owned(),
            other => panic!("expected a line, got {other:?}"),
        }
    }

    #[test]
    fn input_waits_when_no_whole_line_is_buffered_or_ready() {
        // Half a line buffered and nothing ready: the reader must flush before it waits.
        let mut r = script(&[b"a\nb"], 1, 100);
        assert_eq!(text(r.next_line().unwrap()), "a");
        assert!(r.would_wait().unwrap());

        // The rest of the line is ready: it is read, and the next line needs no wait.
        let mut r = script(&[b"a\nb", b"c\nd"], 2, 100);
        assert_eq!(text(r.next_line().unwrap()), "a");
        assert!(!r.would_wait().unwrap());
        assert_eq!(text(r.next_line().unwrap()), "bc");

        // What was ready still ends mid-line: that counts as waiting.
        let mut r = script(&[b"a\nb", b"c"], 2, 100);
        assert_eq!(text(r.next_line().unwrap()), "a");
        assert!(r.would_wait().unwrap());

        // The end of the input is ready too: the last line without a newline follows at once.
        let mut r = script(&[b"a\nb"], 2, 100);
        assert_eq!(text(r.next_line().unwrap()), "a");
        assert!(!r.would_wait().unwrap());
        assert_eq!(text(r.next_line().unwrap()), "b");
        assert!(r.next_line().unwrap().is_none());

        // A line already past the limit is skipped by reading on, which may wait.
        let mut r = script(&[b"a\nbbbbbbbbbb", b"\n"], 2, 4);
        assert_eq!(text(r.next_line().unwrap()), "a");
        assert!(r.would_wait().unwrap());

        // Input that never waits (a file, bytes in memory) never asks for a flush, even with
        // a line longer than one read.
        let long = [&b"a\n"[..], &[b'b'; 3 * CHUNK], b"\nc\n"].concat();
        let mut r = LineReader::new(decoding(io::Cursor::new(long)).unwrap(), DEFAULT_MAX_LINE);
        assert_eq!(text(r.next_line().unwrap()), "a");
        assert!(!r.would_wait().unwrap());
    }

    #[test]
    fn a_pipe_is_ready_once_its_writer_wrote_or_closed() {
        let (reader, mut writer) = io::pipe().unwrap();
        let mut pipe = Waiting(File::from(std::os::fd::OwnedFd::from(reader)));
        assert!(!pipe.ready());
        writer.write_all(b"x\n").unwrap();
        assert!(pipe.ready());
        let mut buf = [0; 8];
        assert_eq!(pipe.read(&mut buf).unwrap(), 2);
        assert!(!pipe.ready());
        drop(writer);
        assert!(pipe.ready());
        assert_eq!(pipe.read(&mut buf).unwrap(), 0);
    }
}
