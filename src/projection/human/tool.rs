//! Tool calls for people: the line that says a call is running, and the receipt that says
//! how it ended (glyph + word + target, exit code when not 0, duration), with the reason
//! and next step when it did not complete, and an output excerpt in verbose.

use super::Level;
use crate::event::{ErrorCategory, Outcome, ShellResult, ToolEnded};
use crate::projection::calls::Call;
use crate::projection::output_text;
use crate::vocabulary::grammar::readable;
use crate::vocabulary::style::{clean, duration, one_line, Mark, Paint, Tone};

/// How much of a subject a normal receipt shows.
const SUBJECT_CHARS: usize = 120;
/// Output excerpts: all lines up to this many, else a head and a tail.
const EXCERPT_ALL: usize = 12;
const EXCERPT_HEAD: usize = 4;
const EXCERPT_LINE_CHARS: usize = 200;

/// What tool lines need to know about the page.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// Colours.
    pub paint: Paint,
    /// Detail level.
    pub level: Level,
    /// The session's working directory, to shorten paths inside it in normal mode.
    pub cwd: Option<&'a str>,
}

impl View<'_> {
    /// A path as shown: relative to the session's directory in normal mode, when inside it.
    pub fn path(&self, p: &str) -> String {
        let short = match self.cwd {
            Some(cwd) if self.level == Level::Normal => {
                p.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')).filter(|r| !r.is_empty()).unwrap_or(p)
            }
            _ => p,
        };
        clean(short).into_owned()
    }

    /// The call's subject as a normal receipt shows it: one line, paths relative to cwd.
    fn short_subject(&self, call: &Call) -> String {
        let s = call.subject();
        let s = if call.started.command.is_none() { self.path(s) } else { s.to_owned() };
        one_line(&s, SUBJECT_CHARS)
    }

    /// `subject` (normal) or `name  subject` in full (verbose), as lines.
    fn subject_lines(&self, call: &Call) -> Vec<String> {
        if self.level == Level::Normal {
            return vec![self.short_subject(call)];
        }
        let subject = clean(call.subject()).into_owned();
        let mut lines: Vec<String> = subject.trim_end().lines().map(str::to_owned).collect();
        if lines.is_empty() {
            lines.push(String::new());
        }
        if subject != call.started.name {
            lines[0] = format!("{}  {}", self.paint.paint(Tone::Strong, &call.started.name), lines[0]);
        }
        lines
    }

    /// The lines that say a call began.
    pub fn started(&self, call: &Call) -> Vec<String> {
        let mark = Mark::started(call.started.kind);
        let mut head = String::new();
        mark.push(self.paint, &mut head);
        head.push_str("  ");
        let mut subject = self.subject_lines(call).into_iter();
        // Continuation lines of a multi-line command line up under its first line.
        let name = if self.level == Level::Normal { 0 } else { call.started.name.chars().count() + 2 };
        let pad = " ".repeat(mark.glyph.chars().count() + 1 + mark.word.chars().count() + 2 + name);
        head.push_str(&subject.next().unwrap_or_default());
        let mut lines = vec![head];
        lines.extend(subject.map(|l| format!("{pad}{l}")));
        if self.level != Level::Normal {
            if let Some(cwd) = &call.started.cwd {
                lines.push(format!("  {}", self.paint.paint(Tone::Muted, &format!("in {}", clean(cwd)))));
            }
            if call.started.command.is_none() && call.started.target.is_none() {
                if let Some(input) = call.started.input.as_ref().filter(|v| !v.is_null()) {
                    let args = one_line(&input.to_string(), EXCERPT_LINE_CHARS);
                    lines.push(format!("  {}", self.paint.paint(Tone::Muted, &args)));
                }
            }
        }
        lines
    }

    /// The receipt of an ended call; `adjacent` when its start line is right above, so the
    /// subject need not be repeated. The reason and next step are indented under the word;
    /// the output excerpt (verbose) lines up with the glyph.
    pub fn receipt(&self, call: Option<&Call>, ended: &ToolEnded, adjacent: bool, live: &str) -> Vec<String> {
        let mark = Mark::outcome(ended.outcome);
        let mut head = String::new();
        mark.push(self.paint, &mut head);
        if !adjacent {
            head.push_str("  ");
            match call {
                Some(c) if self.level == Level::Normal => head.push_str(&self.short_subject(c)),
                Some(c) => {
                    let subject = one_line(c.subject(), EXCERPT_LINE_CHARS);
                    head.push_str(&self.paint.paint(Tone::Strong, &c.started.name));
                    if subject != c.started.name {
                        head.push_str("  ");
                        head.push_str(&subject);
                    }
                }
                None => head.push_str(&clean(&ended.name)),
            }
        }
        let output = ended.output.as_ref();
        let exit = output.and_then(|o| o.exit_code);
        let mut details = Vec::new();
        if let Some(code) = exit.filter(|&c| c != 0) {
            details.push(self.paint.paint(Tone::Bad, &format!("exit {code}")));
        }
        if let Some(ms) = ended.duration_ms {
            details.push(self.paint.paint(Tone::Muted, &duration(ms)));
        }
        let truncated = output.is_some_and(|o| o.truncated);
        if self.level != Level::Normal && truncated {
            details.push(self.paint.paint(Tone::Muted, "output truncated"));
        }
        if !details.is_empty() {
            head.push_str(if adjacent { "  " } else { " · " });
            head.push_str(&details.join(" · "));
        }
        let mut lines = vec![head];
        if let Some(e) = ended.error.as_ref().filter(|_| ended.outcome != Outcome::Completed) {
            // "exited with code 4" says no more than the exit code already shown.
            let redundant = exit.is_some() && e.category == ErrorCategory::ToolError;
            if !redundant {
                let why = readable(&e.message);
                lines.extend(clean(&why).lines().filter(|l| !l.trim().is_empty()).map(|l| format!("  {l}")));
            }
            if let Some(next) = &e.action {
                lines.push(format!("  {} {}", self.paint.paint(Tone::Strong, "→"), one_line(next, 300)));
            }
        }
        // A denial's "output" is often its reason, already shown above.
        let said = ended.error.as_ref().map(|e| e.message.trim());
        if self.level != Level::Normal && output.map(output_text).as_deref().map(str::trim) != said {
            lines.extend(self.excerpt(output, live, truncated));
        }
        lines
    }

    /// Up to a dozen lines of output, or its head and tail (only the tail when the start of
    /// the output was already cut off).
    fn excerpt(&self, output: Option<&ShellResult>, live: &str, truncated: bool) -> Vec<String> {
        let mut text = output.map(output_text).unwrap_or_default();
        if text.is_empty() {
            text.push_str(live);
        }
        let text = clean(&text);
        let all: Vec<&str> = text.trim_end_matches('\n').lines().collect();
        if all.iter().all(|l| l.trim().is_empty()) {
            return Vec::new();
        }
        let bar = self.paint.paint(Tone::Muted, "│");
        let show = |l: &&str| {
            let mut s: String = l.chars().take(EXCERPT_LINE_CHARS).collect();
            if s.len() < l.len() {
                s.push_str(" …");
            }
            if s.is_empty() {
                bar.clone()
            } else {
                format!("{bar} {s}")
            }
        };
        if all.len() <= EXCERPT_ALL && !truncated {
            return all.iter().map(show).collect();
        }
        let head = if truncated { 0 } else { EXCERPT_HEAD };
        let tail = (EXCERPT_ALL - head - 1).min(all.len());
        let hidden = all.len() - head - tail;
        let gap = match (hidden, truncated) {
            (0, _) => "⋮ earlier output truncated".to_owned(),
            (n, false) => format!("⋮ {n} more lines"),
            (n, true) => format!("⋮ {n} more lines; earlier output truncated"),
        };
        let mut lines: Vec<String> = all[..head].iter().map(show).collect();
        lines.push(format!("{bar} {}", self.paint.paint(Tone::Muted, &gap)));
        lines.extend(all[all.len() - tail..].iter().map(show));
        lines
    }
}
