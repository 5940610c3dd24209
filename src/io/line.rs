//! Splitting input into lines: `memchr` splitting with a line-length limit, lossy UTF-8
//! decoding, and UTF-16 (detected by its byte order mark) decoded as it is read.

use std::borrow::Cow;
use std::io::{self, Read};

use super::{Input, BOM};

pub(super) const CHUNK: usize = 64 * 1024;
/// How much of an oversized line is kept as a sample.
const SAMPLE: usize = 4096;

/// One input line, without its line terminator.
#[derive(Debug)]
pub enum Line<'a> {
    /// A line within the limit, decoded (lossily when it was not UTF-8).
    Text(Cow<'a, str>),
    /// A line over the limit: its length and its first bytes, decoded.
    Oversized {
        /// Total length in bytes.
        bytes: u64,
        /// The first few KiB, without the last word, which the cut may have parted from the
        /// rest of a secret.
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

/// The first [`SAMPLE`] bytes of an oversized line (`line`, or the start of it when it
/// `goes_on`), decoded. Where that cuts the line, the last run of bytes that could be part
/// of a secret (a token, a password, a key's body) is left out: the rest of it is never
/// read with it, so the scrub could not tell it for one.
fn sample(line: &[u8], goes_on: bool) -> String {
    let mut kept = &line[..line.len().min(SAMPLE)];
    if goes_on || kept.len() < line.len() {
        let end = kept.iter().rposition(|b| b.is_ascii_whitespace() || b"\"'<>".contains(b));
        kept = &kept[..end.map_or(0, |i| i + 1)];
    }
    String::from_utf8_lossy(kept).into_owned()
}

/// Splits a byte stream into lines with `memchr`, holding at most one line plus a chunk.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
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
        LineReader { inner, buf, start: 0, end: 0, eof: false, max_line: max_line.max(1) }
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
        // Byte order marks start a line, not only the input, where files were concatenated.
        let text = without_bom(&self.buf[begin..end]);
        Line::Text(decode(text))
    }

    fn oversized_from(&mut self, begin: usize, end: usize, bytes: u64) -> Line<'_> {
        Line::Oversized { bytes, sample: sample(&self.buf[begin..end], false) }
    }

    /// Consumes the rest of a line already longer than the limit, keeping only a sample.
    fn skip_oversized(&mut self) -> io::Result<Line<'static>> {
        let sample = sample(&self.buf[self.start..self.end], true);
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

/// `bytes` without the UTF-8 byte order marks that start it.
pub fn without_bom(mut bytes: &[u8]) -> &[u8] {
    while let Some(rest) = bytes.strip_prefix(BOM) {
        bytes = rest;
    }
    bytes
}

/// The file at `path`, decoded as [`decoding`] does: what a reader of a whole document
/// (or of a file it was handed by path) reads, as the line reader would.
pub fn open_decoded(path: &std::path::Path) -> io::Result<Box<dyn Input>> {
    decoding(std::fs::File::open(path)?)
}

/// Wraps a reader so that UTF-16 input (with a BOM) arrives as UTF-8, without its BOM, as
/// does UTF-8 input that starts with one; anything else passes through untouched.
pub fn decoding<'a, R: Input + 'a>(mut inner: R) -> io::Result<Box<dyn Input + 'a>> {
    let mut head = [0u8; 3];
    let mut got = 0;
    while got < head.len() {
        match inner.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let head = &head[..got];
    let encoding = match head {
        [0xff, 0xfe, ..] => Some(encoding_rs::UTF_16LE),
        [0xfe, 0xff, ..] => Some(encoding_rs::UTF_16BE),
        _ => None,
    };
    let prefix = io::Cursor::new(head.strip_prefix(BOM).unwrap_or(head).to_vec());
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
