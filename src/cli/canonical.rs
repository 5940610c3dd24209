//! What `project` and `summarize` read: canonical events, or provider output that they
//! normalize on the way in ([`Inline`]), decided for each input file by its first JSON line
//! (an agent's plain-text notices before its first event wait for it, a bounded few). The
//! [`Reader`] drives the one input loop ([`each_line`](crate::io::each_line)) as `normalize`
//! does for provider output: a run per file, held stream tails decided when the input
//! pauses, an oversized line read as one, so the filter sees what `normalize | filter` sees.

use super::Diagnostics;
use crate::engine::clock::Clock;
use crate::event::Event;
use crate::io::{Line, LineSink, Source, Sources, Unreadable};
use crate::pipeline::Inline;

/// What a filter of canonical events does with its input.
pub(super) trait Canonical {
    /// The next line of canonical input (blank ones too), `n` its 1-based number counted
    /// across sources.
    fn line(&mut self, n: u64, line: Line<'_>) -> anyhow::Result<()>;
    /// The next event `normalize` wrote for provider input, and its line: `event` is what
    /// the line reads as, tool output included.
    fn normalized(&mut self, event: Event, line: &str) -> anyhow::Result<()>;
    /// The next read may wait: what is ready should be written out.
    fn flush(&mut self) -> anyhow::Result<()>;
    /// An input could not be read; `counted` when the normalized summary counts it already.
    fn unreadable(&mut self, u: Unreadable, counted: bool);
}

/// At most this many lines that are not JSON wait for the line that decides what the input
/// is (an agent's notices before its first event)…
const HOLD_LINES: usize = 64;
/// …and at most this many bytes of them.
const HOLD_BYTES: usize = 1024 * 1024;

/// What the current input file is, decided by its first JSON line (or by the first line
/// once [`HOLD_LINES`] or [`HOLD_BYTES`] are reached). Each file is decided anew: a
/// canonical file beside an agent's own output is read as each is, as `normalize` on the
/// one and `cat` on the other would give them.
enum Input {
    /// No JSON line yet: the sources begun (named when the input names its files), each
    /// with the lines it held, in order.
    Undecided(Vec<Begun>),
    /// Canonical events (or lines that are not provider output: the filter says they are
    /// no events).
    Canonical,
    /// Provider output, normalized on the way in as `normalize | filter` would.
    Provider,
}

/// A source begun while the input is undecided: its name, and its lines so far.
struct Begun {
    name: Option<String>,
    held: Vec<Held>,
}

/// A line held while the input is undecided.
enum Held {
    /// So many blank lines.
    Blanks(u64),
    /// A line that is not JSON, and its number.
    Text(u64, String),
}

/// The [`LineSink`] of a filter of canonical events; see the module doc.
pub(super) struct Reader<'a, C> {
    filter: C,
    input: Input,
    /// The normalizer of the provider files read so far. Consecutive provider files share
    /// it, a run each, as they would in one `normalize`; a canonical file after them ends
    /// it, its summary written before that file's events.
    inline: Option<Box<Inline>>,
    /// Some file has been decided: a file of text alone goes as the one before it went.
    decided: bool,
    strict: bool,
    n: u64,
    names_files: bool,
    diag: &'a Diagnostics,
}

impl<'a, C: Canonical> Reader<'a, C> {
    /// Reads `sources` into `filter`; with `strict`, canonical events only.
    pub(super) fn new(filter: C, strict: bool, sources: &Sources, diag: &'a Diagnostics) -> Self {
        let input = if strict { Input::Canonical } else { Input::Undecided(Vec::new()) };
        Reader { filter, input, inline: None, decided: false, strict, n: 0, names_files: sources.names_files(), diag }
    }

    /// The input ended: what the normalizer holds is written, its summary last.
    pub(super) fn finish(&mut self) -> anyhow::Result<()> {
        if let Input::Undecided(_) = self.input {
            // Only lines that are not JSON: no events, as the filter says of each.
            self.decide(None)?;
        }
        self.end_inline()
    }

    /// Ends the normalizer, if one has begun: what it holds is written, its summary last.
    fn end_inline(&mut self) -> anyhow::Result<()> {
        if let Some(inline) = &mut self.inline {
            inline.finish()?;
            self.normalized()?;
            self.inline = None;
        }
        Ok(())
    }

    /// The filter, done reading.
    pub(super) fn into_filter(self) -> C {
        self.filter
    }

    /// Hands the events the normalizer wrote to the filter, its notes to stderr.
    fn normalized(&mut self) -> anyhow::Result<()> {
        let Some(inline) = &mut self.inline else { return Ok(()) };
        let filter = &mut self.filter;
        let notes = inline.take_events(|event, line| filter.normalized(event, line))?;
        notes.iter().for_each(|n| self.diag.say(n));
        Ok(())
    }

    /// The input pauses: held tails are decided, and everything ready written out.
    fn pause(&mut self) -> anyhow::Result<()> {
        if let Some(inline) = &mut self.inline {
            inline.pause()?;
            self.normalized()?;
        }
        self.filter.flush()
    }

    /// Decides what the input is by `line`, the first JSON line (`None`: the input ended
    /// first, and files of text alone go as the files before them went), and gives the lines
    /// held until then to the normalizer or the filter.
    fn decide(&mut self, line: Option<&Line<'_>>) -> anyhow::Result<()> {
        let Input::Undecided(begun) = std::mem::replace(&mut self.input, Input::Canonical) else { return Ok(()) };
        self.decided = true;
        let provider = match line {
            Some(Line::Text(t)) => Inline::is_provider_output(t),
            Some(Line::Oversized { .. }) => false,
            None => self.inline.is_some(),
        };
        if !provider {
            self.end_inline()?;
            for (n, text) in begun.into_iter().flat_map(|b| b.held).filter_map(|h| match h {
                Held::Text(n, text) => Some((n, text)),
                Held::Blanks(_) => None,
            }) {
                self.filter.line(n, Line::Text(text.into()))?;
            }
            return Ok(());
        }
        let inline = self.inline.get_or_insert_with(|| Box::new(Inline::new(Clock::from_env())));
        for Begun { name, held } in begun {
            if let Some(name) = name {
                inline.begin_file(&name);
            }
            for h in held {
                match h {
                    Held::Blanks(n) => (0..n).try_for_each(|_| inline.line(Line::Text("".into())))?,
                    Held::Text(_, text) => inline.line(Line::Text(text.into()))?,
                }
            }
        }
        self.input = Input::Provider;
        Ok(())
    }

    /// Holds `line` while the input is undecided, when it is blank, or is not JSON and
    /// the bounds allow; false when it decides.
    fn hold(&mut self, line: &Line<'_>) -> bool {
        let Input::Undecided(begun) = &mut self.input else { return false };
        if begun.is_empty() {
            begun.push(Begun { name: None, held: Vec::new() });
        }
        let (lines, bytes) = begun.iter().flat_map(|b| &b.held).fold((0, 0), |(l, b), h| match h {
            Held::Text(_, t) => (l + 1, b + t.len()),
            Held::Blanks(_) => (l, b),
        });
        let held = &mut begun.last_mut().expect("one begun").held;
        match line {
            _ if line.is_blank() => match held.last_mut() {
                Some(Held::Blanks(n)) => *n += 1,
                _ => held.push(Held::Blanks(1)),
            },
            Line::Text(t)
                if !t.trim_start().starts_with('{') && lines < HOLD_LINES && bytes + t.len() <= HOLD_BYTES =>
            {
                held.push(Held::Text(self.n, t.clone().into_owned()));
            }
            _ => return false,
        }
        true
    }
}

impl<C: Canonical> LineSink for Reader<'_, C> {
    fn begin(&mut self, source: &Source, flush: bool) -> anyhow::Result<bool> {
        let name = self.names_files.then(|| source.name());
        if let Some(name) = &name {
            self.diag.begin_file(self.n, name);
        }
        if let Input::Undecided(begun) = &self.input {
            // The file before held text alone: it goes as the one before it went.
            if self.decided && begun.iter().any(|b| b.held.iter().any(|h| matches!(h, Held::Text(..)))) {
                self.decide(None)?;
            }
        }
        if !self.strict && !matches!(self.input, Input::Undecided(_)) {
            self.input = Input::Undecided(Vec::new());
        }
        if let Input::Undecided(begun) = &mut self.input {
            begun.push(Begun { name, held: Vec::new() });
        }
        if flush {
            self.pause()?;
        }
        Ok(true)
    }

    fn line(&mut self, line: Line<'_>) -> anyhow::Result<bool> {
        self.n += 1;
        if let Input::Undecided(_) = self.input {
            if self.hold(&line) {
                return Ok(true);
            }
            self.decide(Some(&line))?;
        }
        match (&self.input, &mut self.inline) {
            (Input::Provider, Some(inline)) => {
                inline.line(line)?;
                self.normalized()?;
            }
            _ => self.filter.line(self.n, line)?,
        }
        Ok(true)
    }

    fn idle(&mut self) -> anyhow::Result<bool> {
        self.pause()?;
        Ok(true)
    }

    fn unreadable(&mut self, u: Unreadable) {
        let counted = match &mut self.inline {
            Some(inline) => {
                inline.count_unreadable();
                true
            }
            None => false,
        };
        self.filter.unreadable(u, counted);
    }
}
