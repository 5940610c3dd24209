//! `project`: canonical JSONL in, one projection out (to be completed).

use clap::Parser;

use super::{Command, CommonArgs, Outcome};
use crate::event::Event;
use crate::io::{LineReader, LineWriter, Source, DEFAULT_MAX_LINE};

/// Render canonical events for people or machines.
#[derive(Debug, Parser)]
#[command(name = "project", version)]
pub struct Args {
    /// The projection.
    #[arg(long, default_value = "jsonl", value_parser = ["jsonl"])]
    pub mode: String,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
}

impl Command for Args {
    const NAME: &'static str = "project";

    fn run(self) -> anyhow::Result<Outcome> {
        let mut out = LineWriter::new(std::io::stdout().lock());
        let mut rejected = false;
        for source in Source::from_operands(&self.common.files) {
            let mut lines = LineReader::new(source.open()?, DEFAULT_MAX_LINE);
            let mut n = 0;
            while let Some(line) = lines.next_line()? {
                n += 1;
                let crate::io::Line::Text(text) = line else { continue };
                if text.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Event>(&text) {
                    Ok(ev) => out.write_json(&ev)?,
                    Err(e) => {
                        rejected = true;
                        eprintln!("project: line {n}: not a canonical event: {e}");
                    }
                }
                if !lines.has_buffered_line() {
                    out.flush()?;
                }
            }
        }
        out.flush()?;
        Ok(if rejected { Outcome::Rejected } else { Outcome::Success })
    }
}
