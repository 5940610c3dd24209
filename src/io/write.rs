//! Output written in whole lines only.

use std::io::{self, Write};

use super::line::CHUNK;

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
