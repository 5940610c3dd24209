//! `scrub`: canonical JSONL in, one scrubion out (to be completed).

use clap::Parser;

use super::{Command, CommonArgs, Diagnostics, Outcome};
use crate::io::{read_events, EventLine, LineWriter, Source, DEFAULT_MAX_LINE};

/// Render canonical events for people or machines.
#[derive(Debug, Parser)]
#[command(name = "scrub", version)]
pub struct Args {
    /// The scrubion.
    #[arg(long, default_value = "jsonl", value_parser = ["jsonl"])]
    pub mode: String,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

impl Command for Args {
    const NAME: &'static str = "scrub";

    fn run(self) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(std::io::stdout().lock());
        let mut diag = Diagnostics::new(Self::NAME);
        let mut rejected = false;
        read_events(&Source::from_operands(&self.common.files), DEFAULT_MAX_LINE, &mut out, |n, line, out| {
            match line {
                EventLine::Event(ev) => out.write_json(&ev)?,
                EventLine::Bad { error, .. } => {
                    rejected = true;
                    diag.say(&format!("line {n}: not a canonical event: {error}"));
                }
            }
            Ok(())
        })?;
        Ok(if rejected { Outcome::Rejected } else { Outcome::Success })
    }
}
