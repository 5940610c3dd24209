//! What the `normalize` binary does, as a library call: provider output in, canonical events
//! out, each scrubbed and bounded, the summary last; whole ([`normalize()`]) or line by line
//! inside another filter ([`Inline`]: `project` and `summarize` given provider output). It
//! joins the provider parsers and the stages; projections and the command line are not its
//! business.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::rc::Rc;

use serde_json::Value;

use crate::engine::clock::Clock;
use crate::engine::DEFAULT_FIELD_BOUND;
use crate::event::{Body, Event};
use crate::io::{decoding, Line, LineReader, LineWriter, Opaque, DEFAULT_MAX_LINE};
use crate::provider::{Normalizer, Probe, Provider, Verdict};
use crate::scrub::stream::{is_delta, Delta, Ends, Holder, Pauses, StreamKey};
use crate::scrub::Scrubber;
use crate::truncate::Truncator;

/// The stages `normalize` runs on every event before writing it: the tails of delta
/// streams held back until they are decided ([`Holder`]), then scrub, then bound.
pub struct Stages {
    finish: Finish,
    streams: Holder<Staged>,
    ready: Vec<Staged>,
    written: Vec<Event>,
}

/// Scrubbing and bounding an event. Done to an event that is no delta of a stream, it needs
/// nothing of the events before it (the [`Holder`] passes such an event on as it is), so
/// another thread may do it ahead of the [`Stages`] ([`Stages::write_finished`]).
pub struct Finish {
    scrub: Scrubber,
    truncate: Truncator,
}

impl Finish {
    /// Bounds every text field to `max_bytes`.
    pub fn new(max_bytes: usize) -> Finish {
        Finish { scrub: Scrubber::new(), truncate: Truncator::new(max_bytes, None).after_engine() }
    }

    /// Scrubs and bounds `event`. Every event of the output comes through here, so a
    /// session's start says which scrubbing they all had.
    fn event(&mut self, event: &mut Event) {
        self.scrub.scrub_event(event);
        if let Body::SessionStarted(started) = &mut event.body {
            started.scrubbed_by = Some(crate::scrub::REVISION.to_owned());
        }
        self.truncate.truncate_scrubbed(event, &mut self.scrub);
    }

    /// Scrubs and bounds `event` when it is no delta of a stream; true when it did.
    pub fn alone(&mut self, event: &mut Event) -> bool {
        let alone = !is_delta(event);
        if alone {
            self.event(event);
        }
        alone
    }

    /// The event of `staged`, scrubbed and bounded unless that is done.
    fn staged(&mut self, mut staged: Staged) -> Event {
        if !staged.finished {
            self.event(&mut staged.event);
        }
        staged.event
    }

    /// The secrets redacted so far, by kind.
    pub fn redactions(&self) -> &BTreeMap<String, u64> {
        self.scrub.counts()
    }
}

/// An event in the stages, and whether it is scrubbed and bounded already.
struct Staged {
    event: Event,
    finished: bool,
}

impl Delta for Staged {
    fn stream(&self) -> Option<StreamKey> {
        self.event.stream()
    }
    fn ends_blocks(&self) -> Ends<'_> {
        self.event.ends_blocks()
    }
    fn delta_mut(&mut self) -> &mut String {
        self.event.delta_mut()
    }
    fn take_first_piece(&mut self) -> bool {
        self.event.take_first_piece()
    }
    fn touched(&mut self) {
        self.event.touched()
    }
    fn weight(&mut self) -> usize {
        self.event.weight()
    }
}

impl Stages {
    /// Stages that bound every text field to `max_bytes`, whose [`Stages::pause`] does as
    /// `pauses` says.
    pub fn new(max_bytes: usize, pauses: Pauses) -> Stages {
        Stages { finish: Finish::new(max_bytes), streams: Holder::new(pauses), ready: Vec::new(), written: Vec::new() }
    }

    /// Takes the next event; appends to `done` the events now decided, scrubbed and bounded,
    /// in order (none while a stream's tail is held, see [`Holder`]).
    pub fn apply(&mut self, event: Event, done: &mut Vec<Event>) {
        self.hold(Staged { event, finished: false });
        self.finish_ready(done);
    }

    /// Decides every held tail (the input ends): appends the events that waited, scrubbed
    /// and bounded, to `done`.
    pub fn decide(&mut self, done: &mut Vec<Event>) {
        self.streams.decide_all(&mut self.ready, |tail, seal| self.finish.scrub.seal(tail, seal));
        self.finish_ready(done);
    }

    fn finish_ready(&mut self, done: &mut Vec<Event>) {
        done.extend(self.ready.drain(..).map(|staged| self.finish.staged(staged)));
    }

    /// Takes the next event and writes those now decided, each as one line.
    pub fn write<W: Write>(&mut self, event: Event, out: &mut LineWriter<W>) -> io::Result<()> {
        self.hold(Staged { event, finished: false });
        self.write_ready(out)
    }

    /// [`Stages::write`] for an event a [`Finish`] has scrubbed and bounded ([`Finish::alone`]).
    pub fn write_finished<W: Write>(&mut self, event: Event, out: &mut LineWriter<W>) -> io::Result<()> {
        self.hold(Staged { event, finished: true });
        self.write_ready(out)
    }

    /// Gives `staged` to the holder; a held tail that ended its block is scrubbed there, as
    /// the end of its text.
    fn hold(&mut self, staged: Staged) {
        self.streams.push_sealing(staged, &mut self.ready, |tail, seal| self.finish.scrub.seal(tail, seal));
    }

    /// The input pauses: decides every held tail, unless the output must be reproducible
    /// ([`Pauses::Wait`]), and writes the events that waited.
    pub fn pause<W: Write>(&mut self, out: &mut LineWriter<W>) -> io::Result<()> {
        self.streams.pause(&mut self.ready, |tail, seal| self.finish.scrub.seal(tail, seal));
        self.write_ready(out)
    }

    /// The input ends: decides every held tail and writes the events that waited (before
    /// the summary, so that it counts every redaction).
    pub fn end<W: Write>(&mut self, out: &mut LineWriter<W>) -> io::Result<()> {
        self.streams.decide_all(&mut self.ready, |tail, seal| self.finish.scrub.seal(tail, seal));
        self.write_ready(out)
    }

    /// The events written so far, to be dropped where the caller likes.
    pub fn take_written(&mut self) -> std::vec::Drain<'_, Event> {
        self.written.drain(..)
    }

    /// Writes each decided event as one line, scrubbed and bounded unless that is done.
    /// Scrubbing reaches every string the event writes (ids, names and keys too), so the
    /// line needs no second look.
    fn write_ready<W: Write>(&mut self, out: &mut LineWriter<W>) -> io::Result<()> {
        let mut ready = std::mem::take(&mut self.ready);
        for staged in ready.drain(..) {
            let event = self.finish.staged(staged);
            serde_json::to_writer(out.line_buf(), &event)?;
            out.end_line()?;
            self.written.push(event);
        }
        self.ready = ready;
        Ok(())
    }

    /// The secrets these stages redacted so far, by kind, for the summary.
    pub fn redactions(&self) -> &BTreeMap<String, u64> {
        self.finish.redactions()
    }

    /// [`Stages::redactions`] and those of `ahead`, which finished events ahead of them.
    pub fn redactions_with(&self, ahead: &Finish) -> BTreeMap<String, u64> {
        let mut all = self.redactions().clone();
        for (kind, n) in ahead.redactions() {
            *all.entry(kind.clone()).or_insert(0) += n;
        }
        all
    }
}

/// Normalizes a whole provider stream in memory, as `normalize` does with the default bounds:
/// `from` names the dialect (`None` detects it), and timestamps the provider does not give
/// come from `clock` (`Clock::from_env()` honours `SOURCE_DATE_EPOCH`, as the binary does).
/// Lines no parser understood are kept as `raw` events; the last event is the summary.
///
/// It holds every event until the input ends: to stream, drive a
/// [`Normalizer`] and [`Stages`] line by line, as `normalize` does. The engine cleans ids
/// of control bytes as they come in (ids that differ only in them are one); secrets in ids,
/// names and keys are redacted with the rest when events are scrubbed ([`Stages::write`]).
///
/// ```
/// use minicode_output::engine::clock::Clock;
/// use minicode_output::event::Body;
///
/// let codex = br#"{"type":"thread.started","thread_id":"t1"}
/// {"type":"turn.started"}
/// {"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"Done."}}
/// {"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}
/// "#;
/// let events = minicode_output::normalize(&codex[..], None, Clock::Fixed(0))?;
/// let types: Vec<&str> = events.iter().map(|e| e.type_name()).collect();
/// assert_eq!(types, ["session.started", "turn.started", "text", "usage", "turn.completed", "summary"]);
/// assert!(matches!(&events[5].body, Body::Summary(s) if s.ok));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn normalize(input: impl Read, from: Option<Provider>, clock: Clock) -> io::Result<Vec<Event>> {
    let mut norm = Normalizer::new(from, clock, DEFAULT_FIELD_BOUND);
    // Read from memory, the input never pauses.
    let mut stages = Stages::new(DEFAULT_FIELD_BOUND, Pauses::Wait);
    let mut lines = LineReader::new(decoding(Opaque(input))?, DEFAULT_MAX_LINE);
    let mut events = Vec::new();
    let take = |norm: &mut Normalizer, stages: &mut Stages, events: &mut Vec<Event>| {
        norm.drain().for_each(|ev| stages.apply(ev, events));
    };
    while let Some(line) = lines.next_line()? {
        norm.line(line);
        take(&mut norm, &mut stages, &mut events);
    }
    // As in the binary, the summary counts the redactions made before the input ended.
    stages.decide(&mut events);
    let summary = norm.finish(stages.redactions().clone());
    take(&mut norm, &mut stages, &mut events);
    stages.apply(summary, &mut events);
    Ok(events)
}

/// `normalize` inside another filter: provider output in, line by line, and out the canonical
/// events the binary would write for it (the same parsers, stages and summary, with the
/// default bounds and `--from auto`), each with its JSONL line. The filter takes the events
/// as they are instead of parsing the lines again: each is what its line reads as (the
/// stages make it so when they clean a line; the few events that could read back otherwise
/// are read from their lines).
pub struct Inline {
    norm: Normalizer,
    stages: Stages,
    out: LineWriter<Tap>,
    lines: Rc<RefCell<Vec<u8>>>,
}

/// Where [`Inline`]'s lines are written, for it to hand them on.
struct Tap(Rc<RefCell<Vec<u8>>>);

impl Write for Tap {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Inline {
    /// True when `line` is provider output: a JSON object that some dialect claims and that
    /// does not say it is a canonical event. A filter of canonical events that reads such a
    /// first line normalizes its input first.
    pub fn is_provider_output(line: &str) -> bool {
        Probe::parse(line).is_some_and(|p| {
            p.str("schema") != Some(crate::event::SCHEMA) && !matches!(Provider::detect(&p), Verdict::None)
        })
    }

    /// A normalizer whose timestamps the provider does not give come from `clock`.
    pub fn new(clock: Clock) -> Inline {
        let lines = Rc::new(RefCell::new(Vec::new()));
        Inline {
            norm: Normalizer::new(None, clock, DEFAULT_FIELD_BOUND),
            stages: Stages::new(DEFAULT_FIELD_BOUND, crate::scrub::stream::Pauses::for_clock(clock)),
            out: LineWriter::new(Tap(Rc::clone(&lines))),
            lines,
        }
    }

    /// The next input file begins: a new run, whose events' `rawRef` names `name`, as
    /// `normalize` does when it reads several files.
    pub fn begin_file(&mut self, name: &str) {
        self.norm.begin_file(name);
    }

    /// An input could not be read, for the summary.
    pub fn count_unreadable(&mut self) {
        self.norm.count_unreadable();
    }

    /// Takes the next input line (blank ones too: they count for provenance; an oversized
    /// one as [`Line::Oversized`], as `normalize` reads it).
    pub fn line(&mut self, line: Line<'_>) -> io::Result<()> {
        self.norm.line(line);
        for ev in self.norm.drain() {
            self.stages.write(ev, &mut self.out)?;
        }
        Ok(())
    }

    /// The input pauses: what the stages hold back is decided and written.
    pub fn pause(&mut self) -> io::Result<()> {
        self.stages.pause(&mut self.out)
    }

    /// The input ended: what is open is closed, and the summary written last.
    pub fn finish(&mut self) -> io::Result<()> {
        // As in the binary, the summary counts the redactions made before the input ended.
        self.stages.end(&mut self.out)?;
        let summary = self.norm.finish(self.stages.redactions().clone());
        for ev in self.norm.drain() {
            self.stages.write(ev, &mut self.out)?;
        }
        self.stages.write(summary, &mut self.out)?;
        self.stages.end(&mut self.out)
    }

    /// Hands each canonical event written so far to `on` with its line (without the
    /// newline), in order; returns what the normalizer had to say about the input, for stderr.
    pub fn take_events<E: From<io::Error>>(
        &mut self,
        mut on: impl FnMut(Event, &str) -> Result<(), E>,
    ) -> Result<Vec<String>, E> {
        self.out.flush()?;
        let mut lines = std::mem::take(&mut *self.lines.borrow_mut());
        // The stages write JSON, one event a line: valid UTF-8, and no newline inside a line.
        let text = String::from_utf8_lossy(&lines);
        for (event, line) in self.stages.take_written().zip(text.split_terminator('\n')) {
            let event = match reads_back_otherwise(&event).then(|| Event::from_json(line, true)) {
                Some(Ok(read)) => read,
                _ => event,
            };
            on(event, line)?;
        }
        drop(text);
        // The buffer goes back, emptied, so that its room is not allocated again each line.
        lines.clear();
        *self.lines.borrow_mut() = lines;
        Ok(self.norm.take_diagnostics())
    }
}

/// True when `event` may differ from what its line reads as, so that the line is read: a
/// null tool input (not written), or the payload of a type this version does not know.
/// Those are few: summaries, some tool calls. (Floats read back as written: serde_json's
/// `float_roundtrip` parses them exactly.)
fn reads_back_otherwise(event: &Event) -> bool {
    match &event.body {
        Body::ToolStarted(t) => t.input.as_ref().is_some_and(Value::is_null),
        Body::Summary(_) | Body::Other(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `normalize` gives what the binary's goldens hold, line for line.
    #[test]
    fn matches_the_binary_goldens() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for case in
            ["codex/exit4", "codex/write", "claude/exit4", "claude/deny", "opencode/exit4", "acp/codex-acp-exit4"]
        {
            let input = std::fs::read(root.join(format!("{case}.input.jsonl"))).unwrap();
            let expected = std::fs::read_to_string(root.join(format!("{case}.events.jsonl"))).unwrap();
            let events = normalize(&input[..], None, Clock::Fixed(1_767_225_600_000)).unwrap();
            let actual: String = events.iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect();
            assert!(actual == expected, "{case}: normalize() differs from the golden");
        }
    }

    /// What [`Inline`] hands on is what its lines read as, for every capture in the
    /// fixtures: a filter given provider output shows what it shows of `normalize`'s.
    #[test]
    fn inline_events_are_their_lines_read_back() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut inputs = Vec::new();
        for dir in std::fs::read_dir(&root).unwrap() {
            let Ok(files) = std::fs::read_dir(dir.unwrap().path()) else { continue };
            let names = files.map(|f| f.unwrap().path());
            inputs.extend(names.filter(|p| p.to_string_lossy().ends_with(".input.jsonl")));
        }
        assert!(inputs.len() > 50, "only {} captures found", inputs.len());
        let mut events = 0;
        for path in inputs {
            let input = std::fs::read(&path).unwrap();
            let mut inline = Inline::new(Clock::Fixed(1_767_225_600_000));
            let mut check = |event: Event, line: &str| -> io::Result<()> {
                let read = Event::from_json(line, true).unwrap();
                assert!(event == read, "{}: {line}\nis handed on as {event:?}", path.display());
                events += 1;
                Ok(())
            };
            for line in String::from_utf8_lossy(&input).lines() {
                inline.line(Line::Text(line.into())).unwrap();
                inline.take_events(&mut check).unwrap();
            }
            inline.finish().unwrap();
            inline.take_events(&mut check).unwrap();
        }
        assert!(events > 1000, "only {events} events checked");
    }

    /// Events a [`Finish`] scrubbed and bounded ahead of the stages (as `normalize`'s reading
    /// thread does while the writing one is behind) are written as the stages would have
    /// written them, and their redactions are counted there: for captures of several agents
    /// (and a secret in a tool's output), with every event it can finish finished ahead,
    /// with every other one, and with none.
    #[test]
    fn events_finished_ahead_are_written_as_the_stages_write_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let token = "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";
        let exit4 = std::fs::read_to_string(root.join("claude/exit4.input.jsonl")).unwrap();
        let mut inputs = vec![exit4.replace("line1\\nline2", &format!("line1 {token}\\nline2"))];
        assert!(inputs[0].contains(token));
        for case in ["claude/text-partial", "claude/subagent", "codex/write", "opencode/exit4", "acp/codex-acp-exit4"] {
            inputs.push(std::fs::read_to_string(root.join(format!("{case}.input.jsonl"))).unwrap());
        }
        let written = |input: &str, ahead: &dyn Fn(usize) -> bool| {
            let mut norm = Normalizer::new(None, Clock::Fixed(0), DEFAULT_FIELD_BOUND);
            let (mut finish, mut stages) = (Finish::new(64), Stages::new(64, Pauses::Wait));
            let lines = Rc::new(RefCell::new(Vec::new()));
            let mut out = LineWriter::new(Tap(Rc::clone(&lines)));
            let mut n = 0;
            for line in input.lines() {
                norm.line(Line::Text(line.into()));
                for mut ev in norm.drain() {
                    n += 1;
                    match ahead(n) && finish.alone(&mut ev) {
                        true => stages.write_finished(ev, &mut out).unwrap(),
                        false => stages.write(ev, &mut out).unwrap(),
                    }
                }
            }
            stages.end(&mut out).unwrap();
            out.flush().unwrap();
            let redactions = stages.redactions_with(&finish);
            let lines = String::from_utf8(lines.take()).unwrap();
            (lines, redactions)
        };
        for input in &inputs {
            let (lines, redactions) = written(input, &|_| false);
            assert_eq!(written(input, &|_| true), (lines.clone(), redactions.clone()));
            assert_eq!(written(input, &|n| n % 2 == 0), (lines.clone(), redactions));
            assert!(!lines.contains(token));
        }
        assert!(written(&inputs[0], &|_| true).1["github-token"] > 0);
    }
}
