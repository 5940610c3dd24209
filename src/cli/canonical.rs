//! What `project` and `summarize` read: canonical events, or provider output that they
//! normalize on the way in ([`Inline`]), decided by the first line that is not blank. The
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

/// What the input is, decided by its first line that is not blank.
enum Input {
    /// Nothing but blank lines yet: the sources begun (named when the input names its
    /// files) and how many blank lines each held, for the normalizer's provenance.
    Undecided(Vec<(Option<String>, u64)>),
    /// Canonical events (or lines that are not provider output: the filter says they are
    /// no events).
    Canonical,
    /// Provider output, normalized on the way in as `normalize | filter` would.
    Provider(Box<Inline>),
}

/// The [`LineSink`] of a filter of canonical events; see the module doc.
pub(super) struct Reader<'a, C> {
    filter: C,
    input: Input,
    n: u64,
    names_files: bool,
    diag: &'a Diagnostics,
}

impl<'a, C: Canonical> Reader<'a, C> {
    /// Reads `sources` into `filter`; with `strict`, canonical events only.
    pub(super) fn new(filter: C, strict: bool, sources: &Sources, diag: &'a Diagnostics) -> Self {
        let input = if strict { Input::Canonical } else { Input::Undecided(Vec::new()) };
        Reader { filter, input, n: 0, names_files: sources.names_files(), diag }
    }

    /// The input ended: what the normalizer holds is written, its summary last.
    pub(super) fn finish(&mut self) -> anyhow::Result<()> {
        if let Input::Provider(inline) = &mut self.input {
            inline.finish()?;
            self.normalized()?;
        }
        Ok(())
    }

    /// The filter, done reading.
    pub(super) fn into_filter(self) -> C {
        self.filter
    }

    /// Hands the events the normalizer wrote to the filter, its notes to stderr.
    fn normalized(&mut self) -> anyhow::Result<()> {
        let Input::Provider(inline) = &mut self.input else { return Ok(()) };
        let filter = &mut self.filter;
        let notes = inline.take_events(|event, line| filter.normalized(event, line))?;
        notes.iter().for_each(|n| self.diag.say(n));
        Ok(())
    }

    /// The input pauses: held tails are decided, and everything ready written out.
    fn pause(&mut self) -> anyhow::Result<()> {
        if let Input::Provider(inline) = &mut self.input {
            inline.pause()?;
            self.normalized()?;
        }
        self.filter.flush()
    }

    /// Decides what the input is by `line`, the first that is not blank.
    fn decide(&mut self, line: &Line<'_>) -> anyhow::Result<()> {
        let Input::Undecided(begun) = std::mem::replace(&mut self.input, Input::Canonical) else { return Ok(()) };
        if !matches!(line, Line::Text(t) if Inline::is_provider_output(t)) {
            return Ok(());
        }
        let mut inline = Box::new(Inline::new(Clock::from_env()));
        for (name, blanks) in begun {
            if let Some(name) = name {
                inline.begin_file(&name);
            }
            for _ in 0..blanks {
                inline.line(Line::Text("".into()))?;
            }
        }
        self.input = Input::Provider(inline);
        Ok(())
    }
}

impl<C: Canonical> LineSink for Reader<'_, C> {
    fn begin(&mut self, source: &Source, flush: bool) -> anyhow::Result<bool> {
        let name = self.names_files.then(|| source.name());
        match &mut self.input {
            Input::Undecided(begun) => begun.push((name, 0)),
            Input::Provider(inline) => name.iter().for_each(|name| inline.begin_file(name)),
            Input::Canonical => {}
        }
        if flush {
            self.pause()?;
        }
        Ok(true)
    }

    fn line(&mut self, line: Line<'_>) -> anyhow::Result<bool> {
        self.n += 1;
        if let Input::Undecided(begun) = &mut self.input {
            if line.is_blank() {
                begun.last_mut().into_iter().for_each(|(_, blanks)| *blanks += 1);
                return Ok(true);
            }
            self.decide(&line)?;
        }
        match &mut self.input {
            Input::Provider(inline) => {
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
        let counted = match &mut self.input {
            Input::Provider(inline) => {
                inline.count_unreadable();
                true
            }
            _ => false,
        };
        self.filter.unreadable(u, counted);
    }
}
