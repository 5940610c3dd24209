//! The look of human output: status glyphs and words, colours (only when asked for), and
//! the small text helpers that keep every line safe and copyable.

use std::borrow::Cow;

use anstyle::{AnsiColor, Effects, Style};

use crate::event::{Decision, FileChange, Outcome, PlanStatus, Status, ToolKind};

/// The role a piece of text plays, which picks its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Success.
    Good,
    /// Failure.
    Bad,
    /// Needs attention: denied, cancelled, timed out, interrupted, warnings.
    Warn,
    /// Under way.
    Running,
    /// Secondary detail: durations, ids, counters.
    Muted,
    /// Headlines.
    Strong,
    /// Reasoning text.
    Thought,
}

impl Tone {
    fn style(self) -> Style {
        match self {
            Tone::Good => Style::new().fg_color(Some(AnsiColor::Green.into())).bold(),
            Tone::Bad => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            Tone::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())).bold(),
            Tone::Running => Style::new().fg_color(Some(AnsiColor::Cyan.into())),
            Tone::Muted => Style::new().effects(Effects::DIMMED),
            Tone::Strong => Style::new().bold(),
            Tone::Thought => Style::new().effects(Effects::DIMMED | Effects::ITALIC),
        }
    }
}

/// Applies tones when colour is on, and nothing at all when it is off.
#[derive(Debug, Clone, Copy)]
pub struct Paint {
    on: bool,
}

impl Paint {
    /// Colour on or off.
    pub fn new(on: bool) -> Paint {
        Paint { on }
    }

    /// Appends `text` to `buf` in `tone`.
    pub fn push(self, buf: &mut String, tone: Tone, text: &str) {
        if self.on && !text.is_empty() {
            let s = tone.style();
            buf.push_str(&format!("{}{text}{}", s.render(), s.render_reset()));
        } else {
            buf.push_str(text);
        }
    }

    /// `text` in `tone`, as a new string.
    pub fn paint(self, tone: Tone, text: &str) -> String {
        let mut s = String::new();
        self.push(&mut s, tone, text);
        s
    }
}

/// A status as a glyph and a word, never a colour alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// One character.
    pub glyph: &'static str,
    /// One word.
    pub word: &'static str,
    /// Its colour when colour is on.
    pub tone: Tone,
}

impl Mark {
    /// The mark of a terminal outcome.
    pub fn outcome(o: Outcome) -> Mark {
        match o {
            Outcome::Completed => Mark { glyph: "✓", word: "done", tone: Tone::Good },
            Outcome::Failed => Mark { glyph: "✕", word: "failed", tone: Tone::Bad },
            Outcome::Denied => Mark { glyph: "⊘", word: "denied", tone: Tone::Warn },
            Outcome::Cancelled => Mark { glyph: "◌", word: "cancelled", tone: Tone::Warn },
            Outcome::Timeout => Mark { glyph: "⏱", word: "timeout", tone: Tone::Warn },
            Outcome::Interrupted => Mark { glyph: "…", word: "interrupted", tone: Tone::Warn },
        }
    }

    /// The mark of a lifecycle status.
    pub fn status(s: Status) -> Mark {
        match s {
            Status::Started | Status::Running => Mark::RUNNING,
            Status::Completed => Mark::outcome(Outcome::Completed),
            Status::Failed => Mark::outcome(Outcome::Failed),
            Status::Denied => Mark::outcome(Outcome::Denied),
            Status::Cancelled => Mark::outcome(Outcome::Cancelled),
            Status::Timeout => Mark::outcome(Outcome::Timeout),
            Status::Interrupted => Mark::outcome(Outcome::Interrupted),
        }
    }

    /// A tool or task under way.
    pub const RUNNING: Mark = Mark { glyph: "▸", word: "running", tone: Tone::Running };

    /// A tool call under way, with the verb of its kind.
    pub fn started(kind: ToolKind) -> Mark {
        let word = match kind {
            ToolKind::Shell => "running",
            ToolKind::Edit => "editing",
            ToolKind::Read => "reading",
            ToolKind::Search => "searching",
            ToolKind::Fetch => "fetching",
            ToolKind::Agent => "delegating",
            ToolKind::Mcp | ToolKind::Other => "calling",
        };
        Mark { word, ..Mark::RUNNING }
    }
    /// Something that needs the user.
    pub const APPROVAL: Mark = Mark { glyph: "?", word: "approval needed", tone: Tone::Warn };
    /// A question for the user.
    pub const QUESTION: Mark = Mark { glyph: "?", word: "question", tone: Tone::Warn };
    /// A warning.
    pub const WARNING: Mark = Mark { glyph: "⚠", word: "warning", tone: Tone::Warn };

    /// The mark of an approval's answer.
    pub fn decision(d: Option<Decision>) -> Mark {
        match d {
            Some(Decision::AllowOnce) => Mark { glyph: "✓", word: "allowed", tone: Tone::Good },
            Some(Decision::AllowAlways) => Mark { glyph: "✓", word: "allowed always", tone: Tone::Good },
            Some(Decision::RejectOnce) => Mark { glyph: "⊘", word: "rejected", tone: Tone::Warn },
            Some(Decision::RejectAlways) => Mark { glyph: "⊘", word: "rejected always", tone: Tone::Warn },
            Some(Decision::Cancelled) => Mark { glyph: "◌", word: "cancelled", tone: Tone::Warn },
            Some(Decision::Answered) => Mark { glyph: "✓", word: "answered", tone: Tone::Good },
            Some(Decision::Declined) => Mark { glyph: "⊘", word: "declined", tone: Tone::Warn },
            Some(Decision::Unknown) | None => Mark { glyph: "?", word: "unanswered", tone: Tone::Muted },
        }
    }

    /// The mark of a file change.
    pub fn file(c: FileChange) -> Mark {
        match c {
            FileChange::Add => Mark { glyph: "+", word: "added", tone: Tone::Good },
            FileChange::Update => Mark { glyph: "~", word: "updated", tone: Tone::Good },
            FileChange::Delete => Mark { glyph: "-", word: "deleted", tone: Tone::Warn },
        }
    }

    /// The mark of a plan entry.
    pub fn plan(s: PlanStatus) -> Mark {
        match s {
            PlanStatus::Completed => Mark { glyph: "✓", word: "done", tone: Tone::Good },
            PlanStatus::InProgress => Mark { glyph: "▸", word: "in progress", tone: Tone::Running },
            PlanStatus::Pending => Mark { glyph: "○", word: "pending", tone: Tone::Muted },
        }
    }

    /// Appends `glyph word` to `buf`.
    pub fn push(self, paint: Paint, buf: &mut String) {
        paint.push(buf, self.tone, &format!("{} {}", self.glyph, self.word));
    }
}

/// `s` without control characters (other than `\n` and `\t`) or bidi overrides, so data
/// can never move the cursor, recolour the terminal or reorder what is shown.
pub fn clean(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if s.chars().any(bad) {
        Cow::Owned(s.chars().filter(|&c| !bad(c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// The first line of `s`, at most `max` characters, marked with `…` when anything was cut.
pub fn one_line(s: &str, max: usize) -> String {
    let s = s.trim();
    let first = s.lines().next().unwrap_or("");
    let more_lines = first.len() < s.len();
    let mut out: String = first.chars().take(max).collect();
    if out.len() < first.len() || more_lines {
        out.push_str(" …");
    }
    clean(&out).into_owned()
}

/// A duration for people: `850ms`, `1.2s`, `2m 03s`, `1h 02m`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms}ms"),
        1_000..=59_999 => format!("{}.{}s", ms / 1000, ms % 1000 / 100),
        60_000..=3_599_999 => format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h {:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// `1 turn`, `2 turns`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_has_a_glyph_and_a_word() {
        for o in Outcome::ALL {
            let m = Mark::outcome(o);
            assert!(!m.glyph.is_empty() && !m.word.is_empty());
        }
        assert_eq!(Mark::outcome(Outcome::Completed).word, "done");
    }

    #[test]
    fn paint_off_adds_nothing_and_on_adds_escapes() {
        assert_eq!(Paint::new(false).paint(Tone::Bad, "x"), "x");
        let on = Paint::new(true).paint(Tone::Bad, "x");
        assert!(on.starts_with('\x1b') && on.contains('x'));
    }

    #[test]
    fn clean_drops_controls_and_bidi_but_keeps_newlines_and_tabs() {
        assert_eq!(clean("a\x1b[31mb\u{202e}c\n\td\r"), "a[31mbc\n\td");
        assert!(matches!(clean("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_marks_cuts() {
        assert_eq!(one_line("ls\n-la", 10), "ls …");
        assert_eq!(one_line("abcdef", 3), "abc …");
        assert_eq!(one_line("abc", 3), "abc");
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(1250), "1.2s");
        assert_eq!(duration(123_000), "2m 03s");
        assert_eq!(duration(3_720_000), "1h 02m");
    }
}
