//! `project`: canonical JSONL in (or provider output, normalized on the way in), one
//! projection out, rendered event by event as the input arrives.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::Write;
use std::ops::Range;
use std::sync::mpsc::{Receiver, SyncSender};
use std::thread::JoinHandle;

use anyhow::Context;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Parser;

use super::canonical::{Canonical, Reader};
use super::{Color, Command, CommonArgs, Diagnostics, Outcome};
use crate::event::Event;
use crate::io::{each_line, is_blank, EventLine, Line, LineWriter, Reading, Sources, Unreadable, DEFAULT_MAX_LINE};
use crate::projection::{AgUiFormat, Mode, Options, Projection};
use crate::scrub::vouch::{Vouch, Vouched};
use crate::scrub::Scrubber;

/// Render canonical minicode.output.v1 events for people or for machines.
///
/// For people: `normal` says what happened, whether action is needed and the result;
/// `verbose` adds tool names, command detail, durations, output excerpts, usage and
/// reasoning; `debug` adds every event's ids, timestamp and redacted payload. For machines:
/// `jsonl` (the canonical events unchanged), `acp` (ACP `session/update` notifications),
/// `sse` (agent-output/v1 frames) and `stream-json` (Claude-Code-shaped JSONL). For the
/// ecosystem: `otlp` (OpenTelemetry traces as OTLP/JSON, one ExportTraceServiceRequest per
/// line, GenAI semantic conventions 1.41.0, schema URL `https://opentelemetry.io/schemas/1.41.0`),
/// `atif` (Harbor's Agent Trajectory Interchange Format ATIF-v1.8: one indented document for
/// one session, a JSON array of documents for several) and `ag-ui` (AG-UI protocol 1.0 events,
/// as SSE `data:` frames or JSON lines).
///
/// Provider output (what `normalize` reads) is normalized first, in process: each input
/// file whose first JSON line is not a canonical event is read as `normalize` would read it: `claude -p … --output-format
/// stream-json --verbose | project --mode verbose` shows what `… | normalize | project`
/// shows. --strict reads canonical events only.
///
/// Every mode but `jsonl` removes terminal control bytes from what it shows and scrubs it of
/// secrets, except the events of a session whose `session.started` says this build's scrub
/// stage scrubbed them (`scrubbedBy`, which `normalize` writes; the writer's word, taken as
/// given), up to the `summary` that ends that output: scrubbing them again would change
/// nothing. For canonical events from elsewhere, `scrub` before `project` also finds secrets
/// split across a stream's events.
#[derive(Debug, Parser)]
#[command(name = "project", version, after_help = AFTER_HELP)]
pub struct Args {
    /// The projection to write.
    #[arg(long, value_name = "MODE", default_value = "normal", value_parser = mode_parser())]
    pub mode: Mode,
    /// When to colour human output: `auto` colours only a terminal, and never with NO_COLOR set.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: Color,
    /// With `--mode sse`: write only the frames after this frame id (`{session}-{seq}`), as
    /// a client's `Last-Event-ID` asks.
    #[arg(long, value_name = "ID")]
    pub after: Option<String>,
    /// With `--mode otlp`: add the prompt, the assistant's text and each tool's input and
    /// output as span attributes (scrubbed, like everything `project` shows). Off by default:
    /// traces often go where content should not.
    #[arg(long)]
    pub with_content: bool,
    /// With `--mode ag-ui`: `sse` writes `data:` frames (AG-UI's HTTP transport), `jsonl`
    /// one event per line.
    #[arg(long, value_name = "FORMAT", default_value = "sse")]
    pub ag_ui_format: AgUiFormat,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub strict: super::Strict,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

const AFTER_HELP: &str = concat!(
    "\
Examples:
  codex exec --json 'fix the tests' | normalize | project
  normalize run.jsonl | project --mode verbose --color always | less -R
  normalize run.jsonl | project --mode stream-json > run.claude.jsonl
  normalize run.jsonl | project --mode sse --after s1-12
  normalize run.jsonl | project --mode otlp > traces.jsonl   # for the Collector's otlpjsonfile receiver
  normalize run.jsonl | project --mode atif > trajectory.json
  normalize run.jsonl | project --mode ag-ui --ag-ui-format jsonl

Exit status:
  0  every input line was a canonical event
  1  some lines were not canonical events (named on stderr and skipped), or --after named
     a frame id the input does not have
",
    exit_usage_error!(),
    "\n",
    exit_stopped!()
);

fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.map(Mode::name)).try_map(|s| s.parse::<Mode>())
}

/// Raised inside the reading loop when the projection asks to stop.
#[derive(Debug, thiserror::Error)]
#[error("the projection stopped reading")]
struct Stopped;

impl Command for Args {
    const NAME: &'static str = "project";
    const FORMATS: &'static dyn crate::io::Formats = &crate::provider::EventsOrSessions;

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run_on<W: Write>(self, sources: &Sources, out: W) -> anyhow::Result<Outcome> {
        if self.after.is_some() && self.mode != Mode::Sse {
            anyhow::bail!("--after resumes an SSE stream; it needs --mode sse");
        }
        if self.with_content && self.mode != Mode::Otlp {
            anyhow::bail!("--with-content adds content to traces; it needs --mode otlp");
        }
        let color = self.mode.is_human() && self.color.enabled();
        let options = Options {
            color,
            after: self.after.clone(),
            with_content: self.with_content,
            ag_ui_format: self.ag_ui_format,
        };
        let projection = self.mode.projection(options);
        // `jsonl` passes every event's line on unchanged; every other mode shows content, so
        // it is scrubbed once more here in case the input skipped `normalize`, unless
        // `normalize` says that this build's scrubbing did it ([`Vouched`]).
        let scrub = self.mode != Mode::Jsonl;
        let how = Reading { clean: scrub, tool_output: projection.shows_tool_output() };
        let diag = Diagnostics::new(Self::NAME);
        let mut sh = Shower {
            projection,
            scrubber: Scrubber::new(),
            scrub,
            vouched: Vouched::default(),
            how,
            pending: Pending::default(),
            batching: Readers::wanted(how),
            readers: None,
            out: LineWriter::new(out),
            rejected: false,
            diag: &diag,
        };
        if sh.projection.begin(sh.out.line_buf())?.is_continue() {
            // Provider output is normalized here first; `--strict` reads only canonical
            // events, as before.
            let mut reader = Reader::new(sh, self.strict.strict, sources, &diag);
            let read = each_line(sources, DEFAULT_MAX_LINE, &mut reader).and_then(|()| reader.finish());
            sh = reader.into_filter();
            if let Err(e) = read.and_then(|()| sh.settle()) {
                if !e.is::<Stopped>() {
                    return Err(e);
                }
            }
        }
        let Shower { mut projection, mut out, mut rejected, .. } = sh;
        projection.finish(out.line_buf())?;
        out.flush()?;
        for problem in projection.take_problems() {
            rejected = true;
            diag.say(&problem);
        }
        diag.outcome(rejected)
    }
}

/// The projection and what it needs for each event.
struct Shower<'a, W: Write> {
    projection: Box<dyn Projection>,
    scrubber: Scrubber,
    scrub: bool,
    /// The sessions `normalize` scrubbed as this build would.
    vouched: Vouched,
    how: Reading,
    pending: Pending,
    /// Lines are gathered into batches for [`Readers`] (see [`Readers::wanted`]); without
    /// them each line is read as it comes, not copied first.
    batching: bool,
    /// Started at the first full batch.
    readers: Option<Readers>,
    out: LineWriter<W>,
    /// Some input line was not a canonical event.
    rejected: bool,
    diag: &'a Diagnostics,
}

/// Canonical lines read but not shown yet, in a batch. Reading a line into an event and
/// scrubbing it is most of a projection's work and needs nothing of the lines before, so
/// full batches are read by two [`Readers`] while this thread reads the next lines and shows
/// the batches before, in order. The batch being filled is read here and shown whenever the
/// input pauses, so a live pipe sees each event as it comes.
#[derive(Default)]
struct Pending {
    /// The lines, one after another.
    text: String,
    entries: Vec<Entry>,
}

enum Entry {
    /// A line of `text`, with its number, and its vouch when its event is vouched for as
    /// scrubbed ([`Vouched::line`]).
    Line(u64, Range<usize>, Option<Vouch>),
    /// An input that could not be read, said in its place among the lines.
    Unreadable(Unreadable),
}

/// What reading an entry gave: for a line, its event (scrubbed) or why it is none.
type Read = Option<Result<Event, String>>;

impl Pending {
    /// A batch is handed to the readers once it holds this much.
    const FULL: usize = 256 * 1024;
    /// The largest line a batch takes. A line as large as a batch went through this thread
    /// and stopped the readers' pipeline while it did (tool output up to its 256 KiB bound
    /// makes many such lines, a canonical event rarely more than a few); past this size a
    /// line is still read here, so the batches in flight never hold more than a few
    /// megabytes however large the input's lines.
    const LARGEST: usize = 4 * Pending::FULL;

    /// Reads every entry, scrubbing the events when `scrub`.
    fn read(&self, how: Reading, scrub: bool, scrubber: &mut Scrubber) -> Vec<Read> {
        let mut read = |range: &Range<usize>, vouch: &Option<Vouch>| match how
            .event_line(Line::Text(Cow::Borrowed(&self.text[range.clone()])))
        {
            Some(EventLine::Event { mut event, text }) => {
                if scrub && !vouch.as_ref().is_some_and(|v| v.covers(&event, &text)) {
                    scrubber.scrub_event(&mut event);
                }
                Ok(event)
            }
            Some(EventLine::Bad { error, .. }) => Err(error),
            None => Err("a blank line".into()),
        };
        self.entries.iter().map(|e| if let Entry::Line(_, r, v) = e { Some(read(r, v)) } else { None }).collect()
    }
}

/// Two threads reading full batches; a batch goes to each in turn, so taking their results
/// in turn keeps the input's order.
struct Readers {
    batches: [SyncSender<Pending>; 2],
    reads: [Receiver<(Pending, Vec<Read>)>; 2],
    threads: [Option<JoinHandle<()>>; 2],
    /// The readers holding a batch, the one given it first first.
    busy: VecDeque<usize>,
    next: usize,
}

impl Readers {
    /// Whether readers pay off: on a machine with one core they could only take turns, and
    /// where tool output is skipped unread (`normal`, `otlp`) a line costs little more to
    /// read than to hand over (measured on two cores: a fifth to a half more CPU time for at
    /// most a seventh less wall time).
    fn wanted(how: Reading) -> bool {
        how.tool_output && std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2
    }

    /// The two readers.
    fn start(how: Reading, scrub: bool) -> anyhow::Result<Readers> {
        let start = |i: usize| {
            let (batches, their_batches) = std::sync::mpsc::sync_channel::<Pending>(1);
            let (their_reads, reads) = std::sync::mpsc::sync_channel(1);
            let thread = std::thread::Builder::new().name(format!("project-read-{i}")).spawn(move || {
                let mut scrubber = Scrubber::new();
                for batch in their_batches {
                    let read = batch.read(how, scrub, &mut scrubber);
                    if their_reads.send((batch, read)).is_err() {
                        break;
                    }
                }
            });
            thread.map(|t| (batches, reads, t)).context("cannot start a reading thread")
        };
        let ((b0, r0, t0), (b1, r1, t1)) = (start(0)?, start(1)?);
        Ok(Readers {
            batches: [b0, b1],
            reads: [r0, r1],
            threads: [Some(t0), Some(t1)],
            busy: VecDeque::new(),
            next: 0,
        })
    }

    /// Gives `batch` to the next reader.
    fn send(&mut self, batch: Pending) -> anyhow::Result<()> {
        let i = self.next;
        self.batches[i].send(batch).map_err(|_| anyhow::anyhow!("a reading thread has stopped"))?;
        self.busy.push_back(i);
        self.next = 1 - i;
        Ok(())
    }

    /// The oldest batch given and what its reader read of it.
    fn oldest(&mut self) -> Option<(Pending, Vec<Read>)> {
        let i = self.busy.pop_front()?;
        match self.reads[i].recv() {
            Ok(read) => Some(read),
            // The reader is gone only by a panic, which goes on here.
            Err(_) => match self.threads[i].take().map(JoinHandle::join) {
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                _ => unreachable!("a reader ends only when its batches do"),
            },
        }
    }
}

impl<W: Write> Shower<'_, W> {
    /// Renders one canonical event, read from `text`; `scrubbed` when it needs no scrubbing
    /// here (this process's own normalizing stages scrubbed it, or a reader did, or it is
    /// vouched for).
    fn show(&mut self, event: &mut Event, text: &str, scrubbed: bool) -> anyhow::Result<()> {
        if self.scrub && !scrubbed {
            self.scrubber.scrub_event(event);
        }
        if self.projection.event_line(event, text, self.out.line_buf())?.is_break() {
            return Err(Stopped.into());
        }
        if self.out.line_buf().len() >= OUTPUT_CHUNK {
            self.out.flush()?;
        }
        Ok(())
    }

    fn bad_line(&mut self, n: u64, error: &str) {
        self.rejected = true;
        self.diag.say(&format!("{}: not a canonical event: {error}", self.diag.line(n)));
    }

    /// The vouch of the next line, `line`, when its event is vouched for as scrubbed.
    fn vouched(&mut self, line: &str) -> Option<Vouch> {
        let how = self.how;
        let read = |line: &str| match how.event_line(Line::Text(Cow::Borrowed(line))) {
            Some(EventLine::Event { event, .. }) => Some(event),
            _ => None,
        };
        self.scrub.then(|| self.vouched.line(line, read)).flatten()
    }

    /// Shows a batch that has been read, leaving it empty.
    fn show_batch(&mut self, batch: &mut Pending, reads: Vec<Read>) -> anyhow::Result<()> {
        let Pending { text, entries } = batch;
        for (entry, read) in entries.drain(..).zip(reads) {
            match (entry, read) {
                (Entry::Line(_, range, _), Some(Ok(mut event))) => self.show(&mut event, &text[range], true)?,
                (Entry::Line(n, _, _), Some(Err(error))) => self.bad_line(n, &error),
                (Entry::Unreadable(u), _) => self.diag.unreadable(u),
                (Entry::Line(..), None) => unreachable!("every line is read"),
            }
        }
        text.clear();
        if text.capacity() > 2 * Pending::FULL {
            // A large line grew it: the buffer goes round again at a batch's size.
            text.shrink_to(Pending::FULL);
        }
        Ok(())
    }

    /// Hands the full batch to the readers. Once they hold four, two each (one read or being
    /// read, one waiting, so that neither waits for this thread), shows the oldest, whose
    /// buffers the next batch reuses.
    fn hand_over(&mut self) -> anyhow::Result<()> {
        let readers = match &mut self.readers {
            Some(readers) => readers,
            None => self.readers.insert(Readers::start(self.how, self.scrub)?),
        };
        readers.send(std::mem::take(&mut self.pending))?;
        if readers.busy.len() > 3 {
            if let Some((mut batch, reads)) = readers.oldest() {
                self.show_batch(&mut batch, reads)?;
                self.pending = batch;
            }
        }
        Ok(())
    }

    /// Shows every line read so far: the batches the readers hold, then the one being filled.
    fn settle(&mut self) -> anyhow::Result<()> {
        while let Some((mut batch, reads)) = self.readers.as_mut().and_then(Readers::oldest) {
            self.show_batch(&mut batch, reads)?;
        }
        if self.pending.entries.is_empty() {
            return Ok(());
        }
        let reads = self.pending.read(self.how, self.scrub, &mut self.scrubber);
        let mut batch = std::mem::take(&mut self.pending);
        self.show_batch(&mut batch, reads)?;
        self.pending = batch;
        Ok(())
    }
}

impl<W: Write> Canonical for Shower<'_, W> {
    fn line(&mut self, n: u64, line: Line<'_>) -> anyhow::Result<()> {
        match line {
            Line::Text(t) if is_blank(&t) => Ok(()),
            Line::Text(t) if self.batching && t.len() <= Pending::LARGEST => {
                let vouched = self.vouched(&t);
                let at = self.pending.text.len();
                self.pending.text.push_str(&t);
                self.pending.entries.push(Entry::Line(n, at..self.pending.text.len(), vouched));
                match self.pending.text.len() >= Pending::FULL {
                    true => self.hand_over(),
                    false => Ok(()),
                }
            }
            // Without batches, or a line larger than a batch may hold, or over the line
            // limit: read here, not copied.
            line => {
                self.settle()?;
                let vouched = match &line {
                    Line::Text(t) => self.vouched(t),
                    Line::Oversized { .. } => None,
                };
                match self.how.event_line(line) {
                    Some(EventLine::Event { mut event, text }) => {
                        let scrubbed = vouched.is_some_and(|v| v.covers(&event, &text));
                        self.show(&mut event, &text, scrubbed)
                    }
                    Some(EventLine::Bad { error, .. }) => {
                        self.bad_line(n, &error);
                        Ok(())
                    }
                    None => Ok(()),
                }
            }
        }
    }

    fn normalized(&mut self, mut event: Event, line: &str) -> anyhow::Result<()> {
        self.settle()?;
        if !self.how.tool_output {
            event.clear_tool_output();
        }
        // The stages that normalized it scrubbed it, across its stream's deltas too.
        self.show(&mut event, line, true)
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        self.settle()?;
        Ok(self.out.flush()?)
    }

    fn unreadable(&mut self, u: Unreadable, _counted: bool) {
        match self.pending.entries.is_empty() {
            true => self.diag.unreadable(u),
            false => self.pending.entries.push(Entry::Unreadable(u)),
        }
    }
}

/// Output is written out at least this often, so memory stays small on large inputs.
const OUTPUT_CHUNK: usize = 64 * 1024;
