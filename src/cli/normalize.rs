//! `normalize`: provider output in, canonical `minicode.output.v1` JSONL out, scrubbed
//! and bounded, with the summary as the last line.
//!
//! Two threads share the work, about half each: one reads lines and turns them into events,
//! the other scrubs, bounds and writes them, in the same order. While the writing thread is
//! behind, the reading one scrubs and bounds the events that are no delta of a stream (tool
//! output is most of that work) before it hands them over.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;

use super::{Command, CommonArgs, Diagnostics, Outcome};
use crate::engine::clock::Clock;
use crate::engine::DEFAULT_FIELD_BOUND;
use crate::event::{Body, ErrorCategory, Event, RawReason};
use crate::io::{Line, LineWriter, Source, Sources, Unreadable};
use crate::pipeline::{Finish, Stages};
use crate::provider::{Normalizer, Provider};
use crate::scrub::stream::Pauses;

/// Turn any supported agent's output into canonical minicode.output.v1 JSONL.
///
/// Reads the JSON output of the agents listed under --from, detecting which by default,
/// also where the input changes from one agent's output to another's (runs concatenated,
/// or given as files): each run is then read in its own dialect. A dialect is chosen by
/// the fields only it prints; while the first lines of a run fit several (Kilo Code prints
/// OpenCode's shapes), they wait, a few at most, for the line that decides. JSON no dialect
/// claims is kept in a session whose provider is `unknown`. Every event is scrubbed of
/// terminal control bytes and secrets and bounded; lines it cannot understand are kept as
/// `raw` events, counted, and said on stderr; the last line is always a `summary`.
#[derive(Debug, Parser)]
#[command(name = "normalize", version, after_help = AFTER_HELP)]
pub struct Args {
    /// The provider dialect of the input.
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = FromParser)]
    pub from: From,
    /// Bound of each text field, in bytes (tool output keeps its newest bytes, from the start
    /// of a line when one starts near the cut).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FIELD_BOUND)]
    pub max_bytes: usize,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub line_limit: super::LineLimit,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

const AFTER_HELP: &str = concat!(
    "\
Examples:
  claude -p 'fix the tests' --output-format stream-json --verbose | normalize
  codex exec --json 'fix the tests' | normalize | project --mode verbose
  normalize --from codex run.jsonl > run.events.jsonl
  find runs -name '*.jsonl' -print0 | LC_ALL=C sort -z | normalize --files-from - -0 | summarize

With several input files (or --files-from), every event's rawRef names its file (\"file\":
the path as given) with that file's own line numbers. Input is read as UTF-8 (invalid
bytes become U+FFFD), or as UTF-16 when it starts with a byte order mark (as Windows
PowerShell writes files); a UTF-8 byte order mark is dropped.

Exit status:
  0  the input was normalized (whatever the agent's own outcome)
  1  some input was not understood: empty input, lines that are not JSON, oversized lines,
     JSON of no dialect normalize reads, or lines like tool calls that their dialect's parser
     could not read (all kept as raw events; see stderr)
",
    exit_usage_error!(),
    "\n",
    exit_stopped!(),
    ", the summary last

With SOURCE_DATE_EPOCH set, timestamps the provider does not give are that instant, so
the same input always gives byte-identical output. The last words of a streamed message
then wait for its next delta or the end of its block, not for a pause of the input."
);

/// `--from`: a provider, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct From(pub Option<Provider>);

fn parse_from(s: &str) -> Result<From, String> {
    if s == "auto" {
        return Ok(From(None));
    }
    s.parse().map(|p| From(Some(p)))
}

/// Parses `--from` and lists its values, with what each reads, for `--help`, the man page
/// and the shell completions: the registry of dialects is the one list.
#[derive(Debug, Clone, Copy)]
struct FromParser;

impl clap::builder::TypedValueParser for FromParser {
    type Value = From;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<From, clap::Error> {
        let value = value.to_str().ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8))?;
        parse_from(value).map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{e}\n")))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::builder::PossibleValue;
        let auto = PossibleValue::new("auto").help("detect the dialect of each run");
        let dialects = Provider::ALL.iter().map(|p| PossibleValue::new(p.name()).help(p.about()));
        Some(Box::new(std::iter::once(auto).chain(dialects)))
    }
}

impl Command for Args {
    const NAME: &'static str = "normalize";
    const FORMATS: &'static dyn crate::io::Formats = &crate::provider::SessionFiles;

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run_on<W: Write>(self, sources: &Sources, out: W) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(out);
        let diag = Diagnostics::new(Self::NAME);
        let clock = Clock::from_env();
        let mut stages = Stages::new(self.max_bytes, Pauses::for_clock(clock));
        let norm = Normalizer::new(self.from.0, clock, self.max_bytes);
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUED);
        let (back, written) = std::sync::mpsc::sync_channel(QUEUED + 2);
        let (sources, max_line) = (sources.clone(), self.line_limit.max_line_bytes);
        let finish = Finish::new(self.max_bytes);
        let unwritten = Arc::new(AtomicUsize::new(0));
        let theirs = Arc::clone(&unwritten);
        let reader = std::thread::Builder::new()
            .name("normalize-read".into())
            .spawn(move || read(&sources, max_line, norm, finish, &theirs, &tx, &written))
            .context("cannot start the reading thread")?;
        let mut rejected = false;
        for mut batch in rx {
            for item in batch.drain(..) {
                match item {
                    Item::Event(ev) => {
                        rejected |= say_rejected(&ev, &diag);
                        stages.write(ev, &mut out)?;
                    }
                    Item::Finished(ev) => stages.write_finished(ev, &mut out)?,
                    Item::Note(note) => diag.say(&note),
                    Item::Unreadable(what) => diag.unreadable(what),
                    Item::Flush => {
                        stages.pause(&mut out)?;
                        out.flush()?;
                    }
                }
            }
            unwritten.fetch_sub(1, Ordering::Relaxed);
            batch.extend(stages.take_written().map(Item::Event));
            // Back to be dropped on the reading thread (see `read`), or here if it lags.
            let _ = back.try_send(batch);
        }
        let (mut norm, finish) = match reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)) {
            Ok(read) => read,
            Err(e) => {
                // What the input gave before it failed is written out, as it was read.
                out.flush()?;
                return Err(e);
            }
        };
        // The summary counts every redaction: what is held is decided and written first.
        stages.end(&mut out)?;
        let summary = norm.finish(stages.redactions_with(&finish));
        for note in norm.take_diagnostics() {
            diag.say(&note);
        }
        for ev in norm.drain() {
            rejected |= say_rejected(&ev, &diag);
            stages.write(ev, &mut out)?;
        }
        if let Body::Summary(s) = &summary.body {
            if let Some(e) = s.error.as_ref().filter(|e| e.category == ErrorCategory::InputError) {
                rejected = true;
                diag.say(&e.message);
            }
        }
        stages.write(summary, &mut out)?;
        stages.end(&mut out)?;
        out.flush()?;
        std::io::stderr().flush().ok();
        diag.outcome(rejected)
    }
}

/// What the reading thread hands the writing one, in order.
// Nearly every item is an event: boxing it would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
enum Item {
    Event(Event),
    /// An event scrubbed and bounded already ([`Finish::alone`]).
    Finished(Event),
    /// A diagnostic for stderr.
    Note(String),
    /// An input that could not be read, for stderr and the exit status.
    Unreadable(String),
    /// The input has nothing more buffered: write out what came before, as the next read
    /// may block, so a live pipe sees every event as soon as its line has been read.
    Flush,
}

/// Input bytes whose events travel together. One batch being built, [`QUEUED`] queued, one
/// being written and as many written ones waiting to be dropped: memory grows by a few times
/// this (and the events of as many lines), whatever the input.
const BATCH_BYTES: usize = 128 * 1024;

/// Batches the reading thread may be ahead of the one being written. One is enough to keep
/// the writing thread busy; more let the reading one go on (finishing events, as the writing
/// one is behind) while a batch of large tool output takes long to write, rather than wait:
/// with four, `normalize` takes about 5 % less time on the benchmark stream than with one.
const QUEUED: usize = 4;

/// The reading thread: lines in, events out, some of them scrubbed and bounded by `finish`
/// (see [`Reader::unwritten`]; the rest, and writing, is the other thread's work).
/// Ends early when the writing side has gone; returns the normalizer, whose summary waits
/// for the redaction counts of both sides, and `finish`, with this side's.
fn read(
    sources: &Sources,
    max_line: usize,
    norm: Normalizer,
    finish: Finish,
    unwritten: &AtomicUsize,
    tx: &SyncSender<Vec<Item>>,
    written: &Receiver<Vec<Item>>,
) -> anyhow::Result<(Normalizer, Finish)> {
    let names_files = sources.names_files();
    let mut reader =
        Reader { norm, finish, unwritten, names_files, batch: Vec::new(), bytes: 0, skipped: 0, tx, written };
    let result = crate::io::each_line(sources, max_line, &mut reader);
    if reader.skipped > NAMED_SKIPS {
        let n = reader.skipped;
        reader.batch.push(Item::Note(format!(
            "skipped {n} files in all that are not session files (the first {NAMED_SKIPS} are named above)"
        )));
    }
    if !reader.batch.is_empty() {
        reader.hand_over(false);
    }
    result.map(|()| (reader.norm, reader.finish))
}

/// The reading thread's state: the normalizer, what finishes events here, and the batch
/// being filled.
struct Reader<'a> {
    norm: Normalizer,
    finish: Finish,
    /// Batches handed over and not written yet. While the writing thread has one waiting
    /// behind the one it writes, it is behind: this one then scrubs and bounds the events it
    /// can ([`Finish::alone`]), so that the two share the work whatever the input's mix (tool
    /// output is most of it, and some inputs have none).
    unwritten: &'a AtomicUsize,
    names_files: bool,
    batch: Vec<Item>,
    /// Input bytes behind the batch.
    bytes: usize,
    /// Files found in directories and not read.
    skipped: u64,
    tx: &'a SyncSender<Vec<Item>>,
    written: &'a Receiver<Vec<Item>>,
}

impl Reader<'_> {
    /// Sends the batch to the writing thread, asking it to flush when `flush`; false when that
    /// thread is gone.
    fn hand_over(&mut self, flush: bool) -> bool {
        if flush {
            self.batch.push(Item::Flush);
        }
        self.unwritten.fetch_add(1, Ordering::Relaxed);
        if self.tx.send(std::mem::take(&mut self.batch)).is_err() {
            return false;
        }
        // Written batches come back to be dropped here, where their events were allocated, so
        // the allocator's per-thread caches serve both threads.
        for done in self.written.try_iter() {
            self.batch = done;
            self.batch.clear();
        }
        true
    }
}

impl crate::io::LineSink for Reader<'_> {
    fn begin(&mut self, source: &Source, flush: bool) -> anyhow::Result<bool> {
        if self.names_files {
            self.norm.begin_file(&source.name());
        }
        Ok(!flush || self.hand_over(true))
    }

    fn line(&mut self, line: Line<'_>) -> anyhow::Result<bool> {
        self.bytes += match &line {
            Line::Text(t) => t.len(),
            Line::Oversized { sample, .. } => sample.len(),
        };
        self.norm.line(line);
        let behind = self.unwritten.load(Ordering::Relaxed) >= 2;
        for mut ev in self.norm.drain() {
            // A raw event is said on stderr as it was read (its file as given).
            let finished = behind && !matches!(ev.body, Body::Raw(_)) && self.finish.alone(&mut ev);
            self.batch.push(if finished { Item::Finished(ev) } else { Item::Event(ev) });
        }
        self.batch.extend(self.norm.take_diagnostics().into_iter().map(Item::Note));
        if self.bytes < BATCH_BYTES {
            return Ok(true);
        }
        self.bytes = 0;
        Ok(self.hand_over(false))
    }

    fn idle(&mut self) -> anyhow::Result<bool> {
        self.bytes = 0;
        Ok(self.hand_over(true))
    }

    fn unreadable(&mut self, u: Unreadable) {
        self.norm.count_unreadable();
        self.batch.push(Item::Unreadable(u.to_string()));
    }

    fn skipped(&mut self, source: &Source, why: &'static str) {
        self.norm.count_skipped();
        self.skipped += 1;
        if self.skipped <= NAMED_SKIPS {
            self.batch.push(Item::Note(format!("skipped {}: {why}", source.name())));
        }
    }
}

/// How many skipped files are named on stderr, one line each; past them only their number
/// is said, once, at the end (a home holds thousands of files that are not sessions).
const NAMED_SKIPS: u64 = 10;

/// Says on stderr that a line was kept as a `raw` event because it could not be read;
/// true when `ev` is such an event (the input was then partly rejected).
fn say_rejected(ev: &Event, diag: &Diagnostics) -> bool {
    let Body::Raw(r) = &ev.body else { return false };
    if matches!(r.reason, RawReason::UnknownType | RawReason::UnknownProvider) {
        return false;
    }
    let file = ev.raw_ref.file.as_deref().map_or_else(String::new, |f| format!("{f}: "));
    diag.say(&format!("{file}line {}: kept as a raw event ({})", ev.raw_ref.line, reason_text(r.reason)));
    true
}

fn reason_text(r: RawReason) -> &'static str {
    match r {
        RawReason::NotJson => "not JSON",
        RawReason::UnknownType => "unknown event type",
        RawReason::UnexpectedShape => "a known event type in an unexpected shape",
        RawReason::Oversized => "over the line limit",
        RawReason::UnknownProvider => "no provider recognised it",
    }
}
