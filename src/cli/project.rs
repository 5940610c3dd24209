//! `project`: canonical JSONL in (or provider output, normalized on the way in), one
//! projection out, rendered event by event as the input arrives.

use std::io::Write;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Parser;

use super::canonical::{Canonical, Reader};
use super::{Color, Command, CommonArgs, Diagnostics, Outcome};
use crate::event::Event;
use crate::io::{each_line, EventLine, Line, LineWriter, Reading, Sources, Unreadable, DEFAULT_MAX_LINE};
use crate::projection::{AgUiFormat, Mode, Options, Projection};
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
/// Provider output (what `normalize` reads) is normalized first, in process, when the
/// first line that is not blank is not a canonical event: `claude -p … --output-format
/// stream-json --verbose | project --mode verbose` shows what `… | normalize | project`
/// shows. --strict reads canonical events only.
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
        // it is scrubbed once more here in case the input skipped `normalize`/`scrub`.
        let scrub = self.mode != Mode::Jsonl;
        let how = Reading { clean: scrub, tool_output: projection.shows_tool_output() };
        let diag = Diagnostics::new(Self::NAME);
        let mut sh = Shower {
            projection,
            scrubber: Scrubber::new(),
            scrub,
            how,
            out: LineWriter::new(out),
            rejected: false,
            diag: &diag,
        };
        if sh.projection.begin(sh.out.line_buf())?.is_continue() {
            // Provider output is normalized here first; `--strict` reads only canonical
            // events, as before.
            let mut reader = Reader::new(sh, self.strict.strict, sources, &diag);
            match each_line(sources, DEFAULT_MAX_LINE, &mut reader).and_then(|()| reader.finish()) {
                Err(e) if !e.is::<Stopped>() => return Err(e),
                _ => sh = reader.into_filter(),
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
    how: Reading,
    out: LineWriter<W>,
    /// Some input line was not a canonical event.
    rejected: bool,
    diag: &'a Diagnostics,
}

impl<W: Write> Shower<'_, W> {
    /// Renders one canonical event, read from `text`; `scrubbed` when this process's own
    /// normalizing stages scrubbed it already.
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
}

impl<W: Write> Canonical for Shower<'_, W> {
    fn line(&mut self, n: u64, line: Line<'_>) -> anyhow::Result<()> {
        match self.how.event_line(line) {
            Some(EventLine::Event { mut event, text }) => self.show(&mut event, &text, false),
            Some(EventLine::Bad { error, .. }) => {
                self.rejected = true;
                self.diag.say(&format!("line {n}: not a canonical event: {error}"));
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn normalized(&mut self, mut event: Event, line: &str) -> anyhow::Result<()> {
        if !self.how.tool_output {
            event.clear_tool_output();
        }
        // The stages that normalized it scrubbed it, across its stream's deltas too.
        self.show(&mut event, line, true)
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        Ok(self.out.flush()?)
    }

    fn unreadable(&mut self, u: Unreadable, _counted: bool) {
        self.diag.unreadable(u);
    }
}

/// Output is written out at least this often, so memory stays small on large inputs.
const OUTPUT_CHUNK: usize = 64 * 1024;
