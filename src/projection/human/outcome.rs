//! How turns and runs end, for people: an error report in the protocol's grammar for a
//! turn that did not complete, and the run's result line from the summary.

use std::io::{self, Write};

use super::layout::Block;
use super::{usage_text, Human};
use crate::event::{Event, Outcome, Status, Summary, TurnEnded};
use crate::vocabulary::grammar::Report;
use crate::vocabulary::style::{clean, count, duration, one_line, Mark, Tone};

impl Human {
    pub(super) fn turn_ended(&mut self, ev: &Event, t: &TurnEnded, out: &mut dyn Write) -> io::Result<()> {
        let indent = self.indent_of(ev);
        if t.outcome == Outcome::Completed {
            if self.verbose() {
                let mut line = String::new();
                Mark::outcome(Outcome::Completed).push(self.paint, &mut line);
                line.push_str(&format!("  turn {}", ev.turn_id));
                let extra: Vec<String> = t
                    .duration_ms
                    .map(duration)
                    .into_iter()
                    .chain(t.stop_reason.iter().map(|s| clean(s).into_owned()))
                    .collect();
                if !extra.is_empty() {
                    self.paint.push(&mut line, Tone::Muted, &format!(" · {}", extra.join(" · ")));
                }
                self.page.line(out, Block::Note, indent, line)?;
            }
            return Ok(());
        }
        let doing = match self.calls.last_open_root(&ev.session_id) {
            Some(c) => Some(format!("running {}", one_line(c.subject(), 120))),
            None => self.prompt.as_ref().map(|p| format!("working on “{}”", one_line(p, 80))),
        };
        // A warning of this turn that says the same thing need not be repeated as the why.
        let mut error = t.error.clone();
        if let Some(e) = error.as_mut().filter(|e| self.warnings.contains(&e.message)) {
            e.message.clear();
        }
        let what = format!("turn {}", ev.turn_id);
        let report = Report {
            mark: Mark::outcome(t.outcome),
            what,
            doing,
            error: error.as_ref(),
            show_category: self.verbose(),
        };
        let lines = report.lines(self.paint);
        self.page.lines(out, Block::Outcome, indent, &lines)?;
        self.reported = t.error.as_ref().map(|e| e.message.clone());
        Ok(())
    }

    pub(super) fn summary(&mut self, ev: &Event, s: &Summary, out: &mut dyn Write) -> io::Result<()> {
        let status = ev.status.unwrap_or(if s.ok { Status::Completed } else { Status::Failed });
        let figures = self.figures(s);
        let unreported = s.error.as_ref().filter(|e| !s.ok && self.reported.as_deref() != Some(e.message.as_str()));
        let lines = match unreported {
            Some(e) => {
                let report = Report {
                    mark: Mark::status(status),
                    what: String::new(),
                    doing: None,
                    error: Some(e),
                    show_category: self.verbose(),
                };
                let mut lines = report.lines(self.paint);
                lines.push(format!("  {}", self.paint.paint(Tone::Muted, &figures)));
                lines
            }
            None => {
                let mut line = String::new();
                Mark::status(status).push(self.paint, &mut line);
                line.push_str("  ");
                line.push_str(&figures);
                vec![line]
            }
        };
        self.page.lines(out, Block::Outcome, 0, &lines)
    }

    /// `1 turn · 2 tools (1 failed) · 3.4s`, plus tokens and input health in verbose.
    fn figures(&self, s: &Summary) -> String {
        let f = &s.figures;
        let mut parts = Vec::new();
        if f.sessions.len() > 1 {
            parts.push(count(f.sessions.len() as u64, "session", "sessions"));
        }
        parts.push(count(f.turns, "turn", "turns"));
        let mut tools = if f.tools.total == 0 { "no tools".to_owned() } else { count(f.tools.total, "tool", "tools") };
        let bad: Vec<String> = Outcome::ALL[1..]
            .iter()
            .filter(|&&o| f.tools.get(o) > 0)
            .map(|&o| format!("{} {}", f.tools.get(o), Mark::outcome(o).word))
            .collect();
        if !bad.is_empty() {
            tools.push_str(&format!(" ({})", bad.join(", ")));
        }
        parts.push(tools);
        parts.extend(f.duration_ms.map(duration));
        if self.verbose() {
            parts.extend(usage_text(&f.usage));
            let not_understood = f.input.raw.saturating_add(f.input.unknown_types);
            if not_understood > 0 {
                parts.push(format!("{not_understood} input lines not understood"));
            }
        }
        parts.join(" · ")
    }
}
