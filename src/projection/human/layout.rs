//! Where human output goes on the page: lines grouped in blocks with one blank line between
//! blocks of different kinds, and streamed text runs that can stop mid-line and go on with
//! the next delta. Everything written passes through here, so the spacing rules live once.

use std::io::{self, Write};

use crate::vocabulary::style::{clean, Paint, Tone};

/// The kind of a group of lines; a blank line separates groups of different kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    /// The assistant's answer.
    Text,
    /// Reasoning.
    Thought,
    /// Tool calls, their receipts and what hangs off them.
    Tools,
    /// Session, turn and usage notes, warnings, plans.
    Note,
    /// Error reports and the run's result: always a paragraph of their own.
    Outcome,
}

/// What makes consecutive text deltas one run: same kind, session and parent agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunKey {
    /// Reasoning rather than answer text.
    pub thought: bool,
    /// The session.
    pub session: String,
    /// The child agent's parent call, if any.
    pub parent: Option<String>,
}

/// How a text run looks.
#[derive(Debug, Clone, Default)]
pub struct RunStyle {
    /// Its block.
    pub block: Option<Block>,
    /// Spaces before each line.
    pub indent: usize,
    /// Its colour, if any.
    pub tone: Option<Tone>,
    /// Written instead of the indent before the run's first line (e.g. `∴ `).
    pub lead: Option<&'static str>,
}

#[derive(Debug)]
struct OpenRun {
    key: RunKey,
    style: RunStyle,
    /// Something has been written on the current line.
    mid_line: bool,
    /// Trailing newlines held back until more text comes, so runs never end in blank lines.
    pending: usize,
    started: bool,
}

/// The page: block spacing, the open text run, and which call wrote the last lines.
#[derive(Debug)]
pub struct Layout {
    paint: Paint,
    separate: bool,
    block: Option<Block>,
    run: Option<OpenRun>,
    /// The call (session, id) whose lines are the last on the page, if any.
    pub owner: Option<(String, String)>,
}

impl Layout {
    /// A page; `separate` puts blank lines between blocks.
    pub fn new(paint: Paint, separate: bool) -> Layout {
        Layout { paint, separate, block: None, run: None, owner: None }
    }

    /// Writes whole lines as (part of) a block, each indented by `indent` spaces.
    pub fn lines(&mut self, out: &mut dyn Write, block: Block, indent: usize, lines: &[String]) -> io::Result<()> {
        self.close_run(out)?;
        self.enter(out, block)?;
        let pad = " ".repeat(indent);
        let mut buf = String::new();
        for l in lines {
            if !l.is_empty() {
                buf.push_str(&pad);
                buf.push_str(l);
            }
            buf.push('\n');
        }
        self.owner = None;
        out.write_all(buf.as_bytes())
    }

    /// Writes one line.
    pub fn line(&mut self, out: &mut dyn Write, block: Block, indent: usize, line: String) -> io::Result<()> {
        self.lines(out, block, indent, &[line])
    }

    /// Appends a text delta to the run `key`, starting a new run (and block) when the last
    /// thing written was anything else.
    pub fn text(&mut self, out: &mut dyn Write, key: RunKey, style: RunStyle, delta: &str) -> io::Result<()> {
        if !matches!(&self.run, Some(r) if r.key == key) {
            self.close_run(out)?;
            self.enter(out, style.block.unwrap_or(Block::Text))?;
            self.owner = None;
            self.run = Some(OpenRun { key, style, mid_line: false, pending: 0, started: false });
        }
        let paint = self.paint;
        // Invariant: the run was opened just above when there was none.
        let Some(run) = self.run.as_mut() else { return Ok(()) };
        let delta = clean(delta);
        let mut body: &str = &delta;
        if !run.started {
            body = body.trim_start_matches('\n');
        }
        let content = body.trim_end_matches('\n');
        if content.is_empty() {
            run.pending += body.len();
            return Ok(());
        }
        let mut buf = "\n".repeat(run.pending);
        if run.pending > 0 {
            run.mid_line = false;
        }
        run.pending = body.len() - content.len();
        for (i, seg) in content.split('\n').enumerate() {
            if i > 0 {
                buf.push('\n');
                run.mid_line = false;
            }
            if seg.is_empty() {
                continue;
            }
            if !run.mid_line {
                match run.style.lead.filter(|_| !run.started) {
                    Some(lead) => buf.push_str(lead),
                    None => buf.push_str(&" ".repeat(run.style.indent)),
                }
                run.started = true;
            }
            match run.style.tone {
                Some(t) => paint.push(&mut buf, t, seg),
                None => buf.push_str(seg),
            }
            run.mid_line = true;
        }
        out.write_all(buf.as_bytes())
    }

    /// Ends the open text run, if any, with exactly one newline.
    pub fn close_run(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if let Some(run) = self.run.take() {
            self.block = Some(run.style.block.unwrap_or(Block::Text));
            if run.mid_line {
                out.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    fn enter(&mut self, out: &mut dyn Write, block: Block) -> io::Result<()> {
        if self.separate && self.block.is_some_and(|b| b != block || block == Block::Outcome) {
            out.write_all(b"\n")?;
        }
        self.block = Some(block);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(thought: bool) -> RunKey {
        RunKey { thought, session: "s".into(), parent: None }
    }

    #[test]
    fn deltas_join_and_trailing_newlines_never_make_blank_lines() {
        let mut out = Vec::new();
        let mut l = Layout::new(Paint::new(false), true);
        for d in ["\nHel", "lo\n", "\n", "world\n\n"] {
            l.text(&mut out, key(false), RunStyle::default(), d).unwrap();
        }
        l.line(&mut out, Block::Tools, 0, "▸ running  ls".into()).unwrap();
        l.line(&mut out, Block::Tools, 2, "✓ done".into()).unwrap();
        let thought = RunStyle { block: Some(Block::Thought), indent: 2, tone: None, lead: Some("∴ ") };
        l.text(&mut out, key(true), thought, "a\nb").unwrap();
        l.close_run(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "Hello\n\nworld\n\n▸ running  ls\n  ✓ done\n\n∴ a\n  b\n");
    }

    #[test]
    fn outcome_blocks_are_always_their_own_paragraph() {
        let mut out = Vec::new();
        let mut l = Layout::new(Paint::new(false), true);
        l.line(&mut out, Block::Outcome, 0, "a".into()).unwrap();
        l.line(&mut out, Block::Outcome, 0, "b".into()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a\n\nb\n");
    }
}
