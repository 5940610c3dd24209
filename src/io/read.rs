//! The one input loop every filter uses ([`each_line`] and its [`LineSink`]), with the two
//! ways the filters drive it: raw lines ([`read_lines`]) and canonical events, a line at a
//! time ([`Reading::event_line`]).

use std::borrow::Cow;
use std::io::Write;

use super::order::Order;
use super::{is_blank, stop_requested, Line, LineReader, LineWriter, Opened, Source, Sources, Unreadable};
use crate::event::Event;

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
    /// A file found in a directory is not read: it is not of a format the filter reads.
    fn skipped(&mut self, _source: &Source, _why: &'static str) {}
}

/// The one input loop, shared by every filter: reads the lines of every source in order
/// into `sink`, until the sources end, a stop is requested or the sink says so.
pub fn each_line(sources: &Sources, max_line: usize, sink: &mut impl LineSink) -> anyhow::Result<()> {
    let mut buf = Vec::new();
    let mut order = Order::new(sources.iter()?);
    let mut i = 0;
    while let Some(source) = order.next() {
        let source = source?;
        i += 1;
        if stop_requested().is_some() {
            return Ok(());
        }
        // A file is looked at first, unless opening it may wait (a FIFO): one that is
        // skipped or waits for another begins nothing. (Opening it never waits, so nothing
        // need be flushed before.)
        let may_wait = source.may_wait();
        let opened = (!may_wait).then(|| sources.open(&source, &|parent| order.may_read(parent)));
        match opened {
            Some(Ok(Opened::Skipped(why))) => {
                sink.skipped(&source, why);
                continue;
            }
            Some(Ok(Opened::WithAnother)) => continue,
            Some(Ok(Opened::Waits { ids, parent })) => {
                order.wait(source, ids, parent);
                continue;
            }
            _ => {}
        }
        if !sink.begin(&source, i > 1 && may_wait)? {
            return Ok(());
        }
        let (input, sessions) = match opened.unwrap_or_else(|| sources.open(&source, &|_| true)) {
            Ok(Opened::Lines(input)) => (input, Vec::new()),
            Ok(Opened::Sessions(input, ids)) => (input, ids),
            Ok(Opened::Skipped(why)) => {
                sink.skipped(&source, why);
                continue;
            }
            Ok(Opened::WithAnother | Opened::Waits { .. }) => continue,
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
        for id in sessions {
            order.read(id);
        }
        buf = lines.into_buffer();
    }
    Ok(())
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

/// How a filter of canonical events reads each line.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// Remove control bytes from every string value first (ids and names too), for output
    /// meant for people.
    pub clean: bool,
    /// Keep tool output; without it, it is checked but left empty (see [`Event::from_json`]).
    pub tool_output: bool,
}

impl Reading {
    /// Reads one input line as canonical JSONL: `None` for a [blank](is_blank) one, which
    /// holds no event and is no error.
    pub fn event_line(self, line: Line<'_>) -> Option<EventLine<'_>> {
        Some(match line {
            Line::Text(t) if is_blank(&t) => return None,
            Line::Text(t) => match self.read(&t) {
                Ok(event) => EventLine::Event { event, text: t },
                Err(e) => EventLine::Bad { error: crate::event::line_error(&e), text: t },
            },
            Line::Oversized { bytes, sample } => {
                EventLine::Bad { text: Cow::Owned(sample), error: format!("{bytes} bytes is over the line limit") }
            }
        })
    }

    pub(super) fn read(self, line: &str) -> serde_json::Result<Event> {
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

/// What [`read_lines`] tells of its sources, besides their lines.
pub trait SourceNotes {
    /// The file `name` begins after line `before` of the whole input (said only when the
    /// input names its files).
    fn begin(&mut self, before: u64, name: &str);
    /// A source could not be read; the others still are.
    fn unreadable(&mut self, u: Unreadable);
}

/// Reads the lines of `sources` in order ([`each_line`]), calling `on` for every line
/// (blank ones too) with its 1-based number (counted across sources), telling `notes` where
/// each file begins and which could not be read, and flushing `output` whenever the next
/// read could block. Returns the number of lines.
pub fn read_lines<W: Write, N: SourceNotes, F>(
    sources: &Sources,
    max_line: usize,
    output: &mut LineWriter<W>,
    notes: N,
    on: F,
) -> anyhow::Result<u64>
where
    F: FnMut(u64, Line<'_>, &mut LineWriter<W>) -> anyhow::Result<()>,
{
    struct Sink<'a, W: Write, N, F> {
        n: u64,
        names_files: bool,
        output: &'a mut LineWriter<W>,
        notes: N,
        on: F,
    }
    impl<W: Write, N: SourceNotes, F> LineSink for Sink<'_, W, N, F>
    where
        F: FnMut(u64, Line<'_>, &mut LineWriter<W>) -> anyhow::Result<()>,
    {
        fn begin(&mut self, source: &Source, flush: bool) -> anyhow::Result<bool> {
            if self.names_files {
                self.notes.begin(self.n, &source.name());
            }
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
            self.notes.unreadable(u);
        }
    }
    let mut sink = Sink { n: 0, names_files: sources.names_files(), output, notes, on };
    each_line(sources, max_line, &mut sink)?;
    sink.output.flush()?;
    Ok(sink.n)
}
