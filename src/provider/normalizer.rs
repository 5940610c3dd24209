//! The [`Normalizer`]: feeds input lines to the right dialect's parser and the engine.
//!
//! It owns the choice of dialect. Without `--from`, every dialect's claim on a run's first
//! line decides; while several dialects still fit (an OpenCode-shaped run could be Kilo
//! Code's until its first `step_finish`), the first lines wait, a bounded few, for the line
//! that decides. A line the current parser cannot read, or that opens a run, may begin
//! another agent's run (outputs concatenated, or given as files): the run before ends as at
//! the end of input and the new dialect takes over. JSON no dialect claims is kept, `raw`,
//! in a session whose provider is `unknown`; what a run's parser could not read is counted
//! and said, on stderr and as a `warning`, and makes the run not `ok` when it looks like
//! tool calls.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::{leading_type, type_of, LineError, Probe, Provider, Verdict};
use crate::engine::clock::Clock;
use crate::engine::Engine;
use crate::event::{ErrorCategory, ErrorInfo, Event, RawReason, RawRef, SessionStarted};
use crate::io::{Files, Line};

/// At most this many lines wait for the line that decides between dialects…
const HOLD_LINES: usize = 16;
/// …and at most this many bytes of them.
const HOLD_BYTES: usize = 1024 * 1024;
/// How many distinct unknown types a run's report names.
const NAMED_TYPES: usize = 6;

/// Feeds input lines to the right parser and the engine, turning whatever no parser
/// understood into `raw` events.
pub struct Normalizer {
    forced: Option<Provider>,
    /// The dialect being read (`forced`, or the last one decided), and its parser.
    parser: Option<(Provider, Box<dyn super::Parse>)>,
    /// Lines waiting while several dialects still fit them.
    held: Option<Held>,
    engine: Engine,
    line_no: u64,
    /// The input files, when provenance names them.
    files: Files,
    checked: bool,
    /// The run being read: what its parser was given and could not read.
    run: Run,
    /// Some line of some run was understood.
    understood: bool,
    /// Some JSON line was no dialect's.
    unclaimed: bool,
    /// The input has ended: the run being reported is the last.
    is_last_run: bool,
    diagnostics: Vec<String>,
}

/// The first lines of a run, held until one decides its dialect.
struct Held {
    candidates: Vec<Provider>,
    lines: Vec<(u64, Line<'static>)>,
    bytes: usize,
    /// Only lines that are not JSON so far (an agent's plain-text notices before its
    /// first event): no dialect is in view yet.
    preamble: bool,
}

/// What one run (one dialect's stretch of the input, or one stretch no dialect claims) gave.
#[derive(Default)]
struct Run {
    /// The dialect read, `None` while no dialect claims the lines.
    dialect: Option<Provider>,
    /// The run's lines are no dialect's (its session's provider is `unknown`).
    unknown: bool,
    /// Non-blank lines read.
    lines: u64,
    /// Lines kept `raw` because the parser could not read them.
    refused: u64,
    first: u64,
    last: u64,
    /// The types of the refused lines, the first few.
    types: Vec<String>,
    /// Refused lines that look like tool events.
    tools: u64,
    /// The first line that is a JSON object cut short (the file was truncated, or was
    /// read while it was written): what it said is not known.
    cut: Option<u64>,
}

impl Normalizer {
    /// A normalizer for `from` (`None` = detect), with the given clock and field bound.
    pub fn new(from: Option<Provider>, clock: Clock, bound: usize) -> Normalizer {
        Normalizer {
            forced: from,
            parser: from.map(|p| (p, p.parser())),
            held: None,
            engine: Engine::new(clock, bound),
            line_no: 0,
            files: Files::default(),
            checked: false,
            run: Run { dialect: from, ..Run::default() },
            understood: false,
            unclaimed: false,
            is_last_run: false,
            diagnostics: Vec::new(),
        }
    }

    /// Says that the next lines come from the file `name`: from now on every event's
    /// provenance names its file, with that file's own line numbers.
    ///
    /// Each file is a run of its own: what the one before left open is closed as at the end
    /// of input, and the next file's dialect is detected afresh (an OpenCode run after a
    /// Kilo run fits Kilo's parser, but is OpenCode's).
    pub fn begin_file(&mut self, name: &str) {
        if self.line_no > 0 {
            if let Some(held) = &self.held {
                let first = (!held.preamble).then(|| held.candidates[0]);
                self.release(first);
            }
            self.end_run();
            if let Some(p) = self.forced {
                self.begin(p);
            }
        }
        self.files.begin(self.line_no, name);
    }

    /// Counts an input file that could not be read, for the summary.
    pub fn count_unreadable(&mut self) {
        self.engine.count_unreadable();
    }

    /// Counts a file found in a directory and not read, for the summary.
    pub fn count_skipped(&mut self) {
        self.engine.count_skipped();
    }

    /// Handles the next input line.
    pub fn line(&mut self, line: Line<'_>) {
        self.line_no += 1;
        self.route(self.line_no, line);
    }

    fn route(&mut self, n: u64, line: Line<'_>) {
        if self.held.is_some() {
            self.hold(n, line);
        } else {
            self.take(n, line);
        }
    }

    /// Hands line `n` to the engine and the current parser, choosing or changing the
    /// dialect first when the line says so.
    fn take(&mut self, n: u64, line: Line<'_>) {
        let text = match &line {
            Line::Text(t) if !line.is_blank() => Some(t.as_ref()),
            _ => None,
        };
        if let (Some(text), None) = (text, self.forced) {
            if self.parser.is_none() {
                match Probe::parse(text) {
                    Some(probe) => match settle(Provider::detect(&probe)) {
                        Verdict::One(p) => self.begin(p),
                        Verdict::Several(c) => return self.start_hold(c, n, line),
                        Verdict::None => {}
                    },
                    // Text before the first event waits for the dialect, whose parser may
                    // read it as the agent's notices.
                    None if !self.run.unknown => return self.start_preamble(n, line),
                    None => {}
                }
            } else if self.opens_another_run(text) {
                if let Some(verdict) = self.other_dialect(text) {
                    self.end_run();
                    match verdict {
                        Verdict::One(p) => self.begin(p),
                        Verdict::Several(c) => return self.start_hold(c, n, line),
                        Verdict::None => {}
                    }
                }
            }
        }
        let blank = line.is_blank();
        self.engine.begin_line(n, blank);
        match line {
            Line::Oversized { bytes, sample } => {
                self.engine.count_oversized();
                self.engine.raw(&sample, RawReason::Oversized);
                self.diagnostics
                    .push(format!("line {n}: {bytes} bytes is over the line limit; kept its start as a raw event"));
            }
            Line::Text(_) if blank => {}
            Line::Text(text) => {
                if let Some(held) = self.parse(n, &text) {
                    // The line begins a run whose dialect a later line decides.
                    return self.start_hold(held, n, Line::Text(Cow::Owned(text.into_owned())));
                }
            }
        }
        self.engine.end_line();
    }

    /// Reads one non-blank line with the current parser. Returns the dialects that fit when
    /// the line begins another agent's run that a later line has to decide.
    fn parse(&mut self, n: u64, text: &str) -> Option<Vec<Provider>> {
        self.check_forced(n, text);
        if self.parser.is_none() {
            self.unknown_line(n, text);
            return None;
        }
        let (_, parser) = self.parser.as_mut().expect("checked");
        let mut result = parser.line(text, &mut self.engine);
        if matches!(result, Err(LineError::UnknownType(_) | LineError::Shape(_))) {
            match self.other_dialect(text) {
                Some(Verdict::One(p)) => {
                    self.end_run();
                    self.begin(p);
                    let (_, parser) = self.parser.as_mut().expect("begun");
                    result = parser.line(text, &mut self.engine);
                }
                Some(Verdict::Several(c)) => {
                    self.end_run();
                    return Some(c);
                }
                Some(Verdict::None) | None => {}
            }
        }
        self.run.lines += 1;
        if matches!(result, Err(LineError::NotJson(_))) && is_damaged_record(text) {
            self.run.cut.get_or_insert(n);
        }
        match result {
            Ok(()) => self.understood = true,
            Err(e) => {
                if !matches!(e, LineError::NotJson(_)) {
                    self.refused(n, text, &e);
                }
                self.engine.raw(text, e.reason());
            }
        }
        None
    }

    /// A line of a run no dialect claims: `raw`, in a session of provider `unknown` when
    /// it is JSON.
    fn unknown_line(&mut self, n: u64, text: &str) {
        let json = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
        if json && !self.run.unknown {
            self.run.unknown = true;
            self.unclaimed = true;
            let info = SessionStarted { provider: crate::engine::UNCLAIMED.into(), ..Default::default() };
            self.engine.session_started(None, info);
        }
        let reason = if json { RawReason::UnknownProvider } else { RawReason::NotJson };
        if json {
            self.run.lines += 1;
            self.refused(n, text, &LineError::unknown_type_of(text));
        }
        self.engine.raw(text, reason);
    }

    /// With `--from`, says once when the first JSON line is not that dialect's.
    fn check_forced(&mut self, n: u64, text: &str) {
        let Some(forced) = self.forced.filter(|_| !self.checked && text.trim_start().starts_with('{')) else {
            return;
        };
        self.checked = true;
        let Some(probe) = Probe::parse(text) else { return };
        if forced.claim(&probe) != super::Claim::No {
            return;
        }
        let seen = match Provider::detect(&probe) {
            Verdict::One(p) => format!("{p} output"),
            Verdict::Several(c) => c.iter().map(|p| format!("{p}")).collect::<Vec<_>>().join(" or ") + " output",
            Verdict::None => "no known dialect".into(),
        };
        self.diagnostics.push(format!("line {n}: --from {forced} was given, but the input looks like {seen}"));
    }

    /// True when, detecting, the line's `type` opens a run of a dialect other than the
    /// current one (a cheap look at the line's start, before any parse).
    fn opens_another_run(&self, text: &str) -> bool {
        let Some((current, _)) = &self.parser else { return false };
        leading_type(text).is_some_and(|t| Provider::ALL.iter().any(|p| p != current && p.opens(t)))
    }

    /// Detecting, whether the line begins another dialect's run: the current dialect does
    /// not print it (or another says it alone does), and other dialects claim it.
    fn other_dialect(&self, text: &str) -> Option<Verdict<Provider>> {
        if self.forced.is_some() {
            return None;
        }
        let (current, _) = self.parser.as_ref()?;
        let probe = Probe::parse(text)?;
        let own = current.claim(&probe);
        if own == super::Claim::Yes {
            return None;
        }
        let others = Provider::ALL.iter().filter(|p| *p != current).map(|&p| (p, p.claim(&probe)));
        let claims: Vec<_> = others.collect();
        let yes = claims.iter().any(|(_, c)| *c == super::Claim::Yes);
        match settle(super::dialect::decide(claims)) {
            Verdict::None => None,
            _ if own == super::Claim::Maybe && !yes => None,
            Verdict::One(p) if p.family() == current.family() && !yes => None,
            verdict => Some(verdict),
        }
    }

    /// Starts reading dialect `p`.
    fn begin(&mut self, p: Provider) {
        self.parser = Some((p, p.parser()));
        self.run.dialect = Some(p);
    }

    /// Ends the run being read, as the input changes to another agent's: the parser emits
    /// what it held back, what it left open is interrupted, and what it could not read is
    /// reported.
    fn end_run(&mut self) {
        self.check_cut();
        if let Some((_, mut parser)) = self.parser.take() {
            parser.finish(&mut self.engine);
        }
        self.report_run();
        self.engine.end_run();
    }

    /// Tells the engine, before the run's parser ends what it read, that a record of the
    /// run was cut short, citing it by its file's own number. A cut record is most often
    /// the last (a truncated file); the mark stays for one earlier in the run too, since
    /// the lost record may have been a call or the answer.
    fn check_cut(&mut self) {
        if let Some(n) = self.run.cut.take() {
            self.engine.input_cut(n - self.files.before_last());
        }
    }

    /// Says what the run's parser could not read: on stderr and as a `warning`, or, when
    /// the lines look like tool calls, as the run's error (its tools cannot be counted).
    fn report_run(&mut self) {
        let run = std::mem::take(&mut self.run);
        if run.refused == 0 {
            return;
        }
        let lines = self.files.cite(run.first, run.last);
        let types = if run.types.is_empty() { String::new() } else { format!(" (types: {})", run.types.join(", ")) };
        let message = if run.unknown {
            format!("{lines}: {} JSON line(s) of no dialect normalize reads{types}; kept as raw events", run.refused)
        } else {
            let dialect = run.dialect.map_or("", Provider::name);
            let provider = self.engine.provider().unwrap_or(dialect).to_owned();
            format!(
                "{lines}: {} of the {} line(s) of the {provider} run were not understood{types}; kept as raw events",
                run.refused, run.lines
            )
        };
        self.diagnostics.push(message.clone());
        if run.unknown && !self.understood && self.is_last_run {
            // Nothing of any run was understood: the summary's input error says it.
            return;
        }
        if run.tools > 0 {
            self.engine.run_error(ErrorInfo {
                category: ErrorCategory::InputError,
                message: format!(
                    "{message}; {} of them look like tool calls, so the run's tools are not known",
                    run.tools
                ),
                action: Some("normalize --from NAME if the dialect was misread, or report the new event types".into()),
            });
        } else {
            self.engine.warning(message, Some(ErrorCategory::InputError.as_str().to_owned()));
        }
    }

    /// Counts a line the run's parser could not read.
    fn refused(&mut self, n: u64, text: &str, e: &LineError) {
        let run = &mut self.run;
        run.refused += 1;
        if run.first == 0 {
            run.first = n;
        }
        run.last = n;
        let kind = match e {
            LineError::UnknownType(t) if !t.is_empty() => Some(Cow::Borrowed(t.as_str())),
            _ => type_of(text),
        };
        if let Some(kind) = &kind {
            if run.types.len() < NAMED_TYPES && !run.types.iter().any(|t| t == kind) {
                run.types.push(kind.clone().into_owned());
            }
        }
        if looks_like_a_tool(kind.as_deref(), text) {
            run.tools += 1;
        }
    }

    /// Holds the line that several dialects fit, waiting for one that decides.
    fn start_hold(&mut self, candidates: Vec<Provider>, n: u64, line: Line<'_>) {
        let mut held = Held { candidates, lines: Vec::new(), bytes: 0, preamble: false };
        held.push(n, line);
        self.held = Some(held);
    }

    /// Holds a line that is not JSON, before any dialect: the first event decides whose
    /// notices it is, or that it is no dialect's.
    fn start_preamble(&mut self, n: u64, line: Line<'_>) {
        let mut held = Held { candidates: Provider::ALL.to_vec(), lines: Vec::new(), bytes: 0, preamble: true };
        held.push(n, line);
        self.held = Some(held);
    }

    /// A line while dialects are undecided: held, and the candidates that do not print it
    /// drop out. One left, or one that says yes, decides; a line of another dialect ends
    /// the held run, read by the first candidate left (in registry order), as the bound
    /// reached does; a line no dialect claims is held and decides nothing.
    fn hold(&mut self, n: u64, line: Line<'_>) {
        let probe = match &line {
            Line::Text(t) => Probe::parse(t),
            Line::Oversized { .. } => None,
        };
        let held = self.held.as_mut().expect("holding");
        let Some(probe) = probe else {
            held.push(n, line);
            return self.hold_bound();
        };
        let claims: Vec<_> = held.candidates.iter().map(|&p| (p, p.claim(&probe))).collect();
        match settle(super::dialect::decide(claims)) {
            Verdict::One(p) => {
                held.push(n, line);
                self.release(Some(p));
            }
            Verdict::Several(c) => {
                held.candidates = c;
                held.preamble = false;
                held.push(n, line);
                self.hold_bound();
            }
            // A line no dialect claims (a type this version does not know) decides nothing.
            Verdict::None if Provider::detect(&probe) == Verdict::None && !held.preamble => {
                held.push(n, line);
                self.hold_bound();
            }
            Verdict::None => {
                // Another dialect's line: the held lines were a run of the first candidate
                // (before any JSON, of none), and this one begins the next run.
                let first = (!held.preamble).then(|| held.candidates[0]);
                self.release(first);
                self.route(n, line);
            }
        }
    }

    fn hold_bound(&mut self) {
        let held = self.held.as_ref().expect("holding");
        if held.lines.len() >= HOLD_LINES || held.bytes >= HOLD_BYTES {
            let first = (!held.preamble).then(|| held.candidates[0]);
            self.release(first);
        }
    }

    /// Ends the hold: the held lines are read in dialect `p`, or kept raw as no dialect's.
    fn release(&mut self, p: Option<Provider>) {
        let held = self.held.take().expect("holding");
        match p {
            Some(p) => {
                self.begin(p);
                for (n, line) in held.lines {
                    self.route(n, line);
                }
            }
            None => {
                for (n, line) in held.lines {
                    self.engine.begin_line(n, line.is_blank());
                    match line {
                        Line::Text(t) if !is_blank(&t) => self.unknown_line(n, &t),
                        Line::Oversized { bytes, sample } => {
                            self.engine.count_oversized();
                            self.engine.raw(&sample, RawReason::Oversized);
                            self.diagnostics.push(format!(
                                "line {n}: {bytes} bytes is over the line limit; kept its start as a raw event"
                            ));
                        }
                        Line::Text(_) => {}
                    }
                    self.engine.end_line();
                }
            }
        }
    }

    /// Ends the input: flushes the parser and closes every open lifecycle. The summary is
    /// returned, not queued, so the caller can finish its stages before writing it.
    ///
    /// Reading stopped by a signal makes the run `interrupted` whatever was open at the line
    /// it stopped at, since what came after was never read. It is checked here, so every
    /// filter that normalizes (`normalize`, and `project` or `summarize` given provider
    /// output) reports it alike.
    pub fn finish(&mut self, redactions: BTreeMap<String, u64>) -> Event {
        if let Some(signal) = crate::io::stop_requested() {
            self.diagnostics.push(format!("stopped by signal {signal}; closing what is open and writing the summary"));
            self.engine.run_error(ErrorInfo {
                category: ErrorCategory::Interrupted,
                message: format!("stopped by signal {signal} before the input ended"),
                action: None,
            });
        }
        if let Some(held) = &self.held {
            let first = (!held.preamble).then(|| held.candidates[0]);
            self.release(first);
        }
        self.check_cut();
        if let Some((_, p)) = self.parser.as_mut() {
            p.finish(&mut self.engine);
        }
        self.is_last_run = true;
        self.report_run();
        if self.unclaimed && !self.understood {
            self.engine.run_error(ErrorInfo {
                category: ErrorCategory::InputError,
                message: format!("no agent dialect was recognised in {} input line(s)", self.line_no),
                action: Some("pipe an agent's JSON output into normalize, or name its dialect with --from".into()),
            });
        }
        let mut summary = self.engine.finish(redactions);
        locate(&self.files, &mut summary.raw_ref);
        summary
    }

    /// Takes the events produced so far.
    pub fn drain(&mut self) -> impl Iterator<Item = Event> + '_ {
        let files = &self.files;
        self.engine.drain().map(move |mut ev| {
            locate(files, &mut ev.raw_ref);
            ev
        })
    }

    /// Takes the human diagnostics produced so far (for stderr).
    pub fn take_diagnostics(&mut self) -> Vec<String> {
        std::mem::take(&mut self.diagnostics)
    }
}

/// True for a line that is not JSON but begins as a JSON object does, after any stray
/// control bytes or undecodable ones (a record cut short, or written over): a plain-text
/// notice is not one.
fn is_damaged_record(text: &str) -> bool {
    text.trim_start_matches(|c: char| c.is_whitespace() || c.is_control() || c == char::REPLACEMENT_CHARACTER)
        .starts_with('{')
}

/// Turns provenance in lines of the whole input into the file and that file's lines. A span
/// that began in an earlier file (lines with no meaning of their own at its end) is cut to
/// the file of its last line.
fn locate(files: &Files, r: &mut RawRef) {
    let last = r.last();
    let Some((name, before)) = files.of(last) else { return };
    *r = RawRef { file: Some(Arc::clone(name)), ..RawRef::span(r.line.saturating_sub(before).max(1), last - before) };
}

impl Held {
    fn push(&mut self, n: u64, line: Line<'_>) {
        let line = match line {
            Line::Text(t) => Line::Text(Cow::Owned(t.into_owned())),
            Line::Oversized { bytes, sample } => Line::Oversized { bytes, sample },
        };
        self.bytes += match &line {
            Line::Text(t) => t.len(),
            Line::Oversized { sample, .. } => sample.len(),
        };
        self.lines.push((n, line));
    }
}

/// Several dialects of one family are read alike: the first of them decides.
fn settle(verdict: Verdict<Provider>) -> Verdict<Provider> {
    match verdict {
        Verdict::Several(c) if c.iter().all(|p| p.family() == c[0].family()) => Verdict::One(c[0]),
        v => v,
    }
}

fn is_blank(text: &str) -> bool {
    crate::io::is_blank(text)
}

/// Whether a line that was not understood looks like a tool event: its type names a tool,
/// a command or an execution, or the line has a `tool…` key or value.
fn looks_like_a_tool(kind: Option<&str>, text: &str) -> bool {
    let named = kind.is_some_and(|k| {
        let k = k.to_ascii_lowercase();
        ["tool", "command", "exec"].iter().any(|w| k.contains(w))
    });
    named
        || memchr::memmem::find_iter(text.as_bytes(), b"\"")
            .any(|i| text[i + 1..].get(..4).is_some_and(|w| w.eq_ignore_ascii_case("tool")))
}
