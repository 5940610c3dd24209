//! `normalize`: provider output in, canonical `minicode.output.v1` JSONL out, scrubbed
//! and bounded, with the summary as the last line.

use std::io::Write;

use anyhow::Context;
use clap::Parser;

use super::{Command, CommonArgs, Diagnostics, Outcome};
use crate::engine::clock::Clock;
use crate::engine::DEFAULT_FIELD_BOUND;
use crate::event::{Body, ErrorCategory, RawReason};
use crate::io::{LineReader, LineWriter, Source, DEFAULT_MAX_LINE};
use crate::pipeline::Stages;
use crate::provider::{Normalizer, Provider};

/// Turn any supported agent's output into canonical minicode.output.v1 JSONL.
///
/// Reads Claude Code stream-json, Codex `exec --json`, OpenCode `run --format json`,
/// Gemini CLI stream-json and ACP JSON-RPC traffic (Auggie's included), detecting which
/// by default. Every event is scrubbed of terminal control bytes and secrets and bounded;
/// lines it cannot understand are kept as `raw` events; the last line is always a
/// `summary`.
#[derive(Debug, Parser)]
#[command(name = "normalize", version, after_help = AFTER_HELP)]
pub struct Args {
    /// The provider dialect of the input.
    #[arg(long, value_name = "PROVIDER", default_value = "auto", value_parser = parse_from)]
    pub from: From,
    /// Bound of each text field, in bytes (tool output keeps its newest bytes).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_FIELD_BOUND)]
    pub max_bytes: usize,
    /// Lines longer than this become a `raw` event holding their start.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LINE)]
    pub max_line_bytes: usize,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

const AFTER_HELP: &str = "\
Examples:
  claude -p 'fix the tests' --output-format stream-json --verbose | normalize
  codex exec --json 'fix the tests' | normalize | project --mode verbose
  normalize --from codex run.jsonl > run.events.jsonl

Exit status:
  0  the input was normalized (whatever the agent's own outcome)
  1  some input was not understood: empty input, lines that are not JSON, oversized lines
     (all kept as raw events; see stderr)
  2  usage error, or a file could not be read
  130, 143  stopped by SIGINT or SIGTERM: the output so far is whole lines, the summary last

With SOURCE_DATE_EPOCH set, timestamps the provider does not give are that instant, so
the same input always gives byte-identical output.";

/// `--from`: a provider, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct From(pub Option<Provider>);

fn parse_from(s: &str) -> Result<From, String> {
    if s == "auto" {
        return Ok(From(None));
    }
    s.parse().map(|p| From(Some(p)))
}

impl Command for Args {
    const NAME: &'static str = "normalize";

    fn files(&self) -> &[std::path::PathBuf] {
        &self.common.files
    }

    fn run_on<W: Write>(self, sources: &[Source], out: W) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(out);
        let mut diag = Diagnostics::new(Self::NAME);
        let mut norm = Normalizer::new(self.from.0, Clock::from_env(), self.max_bytes);
        let mut stages = Stages::new(self.max_bytes);
        let mut rejected = false;
        for source in sources {
            let input = source.open().with_context(|| format!("cannot read {}", source.name()))?;
            let mut lines = LineReader::new(input, self.max_line_bytes);
            while let Some(line) = lines.next_line().with_context(|| format!("reading {}", source.name()))? {
                norm.line(line);
                for mut ev in norm.drain() {
                    if let Body::Raw(r) = &ev.body {
                        if r.reason != RawReason::UnknownType && r.reason != RawReason::UnknownProvider {
                            rejected = true;
                            diag.say(&format!("line {}: kept as a raw event ({})", ev.raw_ref.line, reason_text(r.reason)));
                        }
                    }
                    stages.write(&mut ev, &mut out)?;
                }
                for d in norm.take_diagnostics() {
                    diag.say(&d);
                }
                // Flush before the next read could block, so a live pipe sees every event
                // as soon as the line that caused it has been read.
                if !lines.has_buffered_line() {
                    out.flush()?;
                }
                if crate::io::stop_requested().is_some() {
                    break;
                }
            }
            if crate::io::stop_requested().is_some() {
                break;
            }
        }
        if let Some(sig) = crate::io::stop_requested() {
            diag.say(&format!("stopped by signal {sig}; closing what is open and writing the summary"));
        }
        let mut summary = norm.finish(stages.redactions().clone());
        for mut ev in norm.drain() {
            stages.write(&mut ev, &mut out)?;
        }
        stages.write(&mut summary, &mut out)?;
        out.flush()?;
        if let Body::Summary(s) = &summary.body {
            if let Some(e) = s.error.as_ref().filter(|e| e.category == ErrorCategory::InputError) {
                rejected = true;
                diag.say(&e.message);
            }
        }
        drop(diag);
        std::io::stderr().flush().ok();
        Ok(if rejected { Outcome::Rejected } else { Outcome::Success })
    }
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
