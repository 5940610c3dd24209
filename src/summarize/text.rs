//! The report as text for a terminal: the outcome first, in the error grammar (what
//! happened, what was being done, why, what to do next), then each session. Colour only
//! when asked for; without it the text says everything (every status has a glyph and a
//! word), and commands and paths are printed as they are, so they can be copied.

use std::fmt::Write;

use super::model::{limits, Failure, Report, Runs, SessionReport};
use super::words::{self, count, readable, safe, Mark, Paint, Tone};
use crate::event::{Status, Verdict};

const INDENT: &str = "  ";
/// Label column width, so values line up.
const LABEL: usize = 15;
/// Output excerpt lines shown under a failing tool.
const EXCERPT_LINES: usize = 5;

/// Renders a report as text; `color` adds ANSI colour (decided by the caller: a terminal
/// and no `NO_COLOR`, or `--color always`).
pub fn to_text(r: &Report, color: bool) -> String {
    let p = Paint::new(color);
    let mut out = String::new();
    let t = r.totals();
    let head = r.headline();
    let runs = r.runs();
    let mut facts = vec![count(runs.total, "run", "runs"), count(t.turns, "turn", "turns")];
    facts.extend(t.duration_ms.map(words::duration));
    let status = head.as_ref().map_or(Status::Completed, |f| f.status);
    let _ = writeln!(out, "{} · {}", mark(p, status, 0), p.paint(Tone::Strong, &facts.join(" · ")));
    if runs.success != runs.total {
        row(&mut out, INDENT, "verdicts", &verdicts(&runs));
    }
    if let Some(f) = &head {
        grammar(&mut out, INDENT, f);
    }
    for s in &r.sessions {
        out.push('\n');
        // The run's own failure was just told; a session that failed the same way says less.
        let told = head.as_ref().is_some_and(|f| f.error == s.error && f.during == s.during);
        session(&mut out, p, s, !told);
    }
    if r.sessions.len() > 1 {
        out.push('\n');
        let _ = writeln!(out, "{}", p.paint(Tone::Strong, "totals"));
        row(&mut out, INDENT, "sessions", &format!("{} · {} not ok", t.sessions, t.failed_sessions));
        row(&mut out, INDENT, "tools", &tools(&t.tools, &t.tools_by_kind));
        row(&mut out, INDENT, "shell", &shell_counts(&t.shell));
        row(&mut out, INDENT, "files", &count(t.files_changed, "change", "changes"));
        let mut usage = words::tokens(&t.usage);
        if t.sessions_without_usage > 0 {
            let _ = write!(usage, " ({} without usage)", count(t.sessions_without_usage, "session", "sessions"));
        }
        row(&mut out, INDENT, "usage", &usage);
        row(&mut out, INDENT, "cost", &words::cost(t.cost));
        row(&mut out, INDENT, "compactions", &words::tally(&t.context.reasons));
        row(&mut out, INDENT, "budget", budget(t.budget));
    }
    out.push('\n');
    let i = &r.input();
    let mut health = format!(
        "{} · {} · {} raw · {} unknown types · {} oversized · redactions: {}",
        count(i.lines, "line", "lines"),
        count(i.events, "event", "events"),
        i.raw,
        i.unknown_types,
        i.oversized,
        words::tally(&i.redactions)
    );
    if i.invalid > 0 {
        let _ = write!(health, " · {} not readable by summarize", i.invalid);
    }
    if i.unreadable > 0 {
        let _ = write!(health, " · {}", count(i.unreadable, "file could not be read", "files could not be read"));
    }
    row(&mut out, "", "input", &health);
    out
}

fn session(out: &mut String, p: Paint, s: &SessionReport, tell_failure: bool) {
    let mut head = vec![format!("session {}", safe(&s.session_id))];
    head.extend(s.provider.as_deref().map(|x| safe(x).into_owned()));
    head.extend(s.model.as_deref().map(|x| safe(x).into_owned()));
    let _ = writeln!(out, "{} · {}", p.paint(Tone::Strong, &head.join(" · ")), mark(p, s.status, 0));
    if let Some(prompt) = &s.prompt {
        row(out, INDENT, "prompt", &one_line(prompt));
    }
    if s.verdict != Verdict::Success {
        row(out, INDENT, "verdict", s.verdict.as_str());
    }
    if !s.ok && tell_failure {
        grammar(out, INDENT, &Failure { status: s.status, error: s.error.clone(), during: s.during.clone() });
    }
    let mut turns = s.turns.to_string();
    if let Some(ms) = s.duration_ms {
        let _ = write!(turns, " · {}", words::duration(ms));
    }
    row(out, INDENT, "turns", &turns);
    row(out, INDENT, "tools", &tools(&s.tools, &s.tools_by_kind));
    for t in &s.failing_tools {
        let what =
            t.command.as_deref().or(t.target.as_deref()).map_or_else(String::new, |d| format!(" `{}`", one_line(d)));
        let mut line = format!("{}{what}", safe(&t.name));
        if t.exit_code.is_some() || t.kind == crate::event::ToolKind::Shell {
            let _ = write!(line, " · {}", words::exit(t.exit_code));
        }
        let _ = writeln!(out, "{INDENT}{}{line}", mark(p, t.status, LABEL));
        let pad = format!("{INDENT}{:LABEL$}", "");
        if let Some(e) = &t.error {
            let _ = writeln!(out, "{pad}why: {}", one_line(&readable(&e.message)));
        }
        let excerpt = t.excerpt.as_deref().map(safe).unwrap_or_default();
        let lines: Vec<&str> = excerpt.lines().collect();
        for l in &lines[lines.len().saturating_sub(EXCERPT_LINES)..] {
            let _ = writeln!(out, "{pad}│ {l}");
        }
    }
    let unlisted = s.tools.total.saturating_sub(s.tools.completed).saturating_sub(s.failing_tools.len() as u64);
    if unlisted > 0 {
        row(
            out,
            INDENT,
            "",
            &format!("… and {unlisted} more not completed (the first {} are listed)", limits::FAILING_TOOLS),
        );
    }
    if s.shell.count > 0 {
        row(out, INDENT, "shell", &shell_counts(&s.shell));
        for c in &s.shell.commands {
            let mut line = format!(
                "$ {}  {} · {}",
                c.command.as_deref().map_or_else(|| "(command unknown)".into(), one_line),
                words::status(c.status),
                words::exit(c.exit_code)
            );
            let _ = write!(
                line,
                " · {}",
                if c.has_output {
                    words::bytes(c.stdout_bytes.saturating_add(c.stderr_bytes)) + " output"
                } else {
                    "no output".into()
                }
            );
            if c.truncated {
                line.push_str(" (truncated)");
            }
            row(out, INDENT, "", &line);
        }
    }
    if s.files.changes > 0 {
        row(out, INDENT, "files", &count(s.files.changes, "change", "changes"));
        for (path, changes) in s.files.iter() {
            let kinds: Vec<&str> = changes.iter().map(|c| Mark::file(*c).word).collect();
            row(out, INDENT, "", &format!("{} ({})", safe(path), kinds.join(", ")));
        }
        if s.files.has_more() {
            row(out, INDENT, "", &format!("… more files (the alphabetically first {} are listed)", limits::FILES));
        }
    }
    if let Some(plan) = &s.plan {
        row(
            out,
            INDENT,
            "plan",
            &format!(
                "{} of {} done · {} in progress · {} pending",
                plan.completed, plan.total, plan.in_progress, plan.pending
            ),
        );
        for e in &plan.entries {
            let mark = Mark::plan(e.status).glyph;
            row(out, INDENT, "", &format!("{mark} {}", one_line(&e.content)));
        }
    }
    row(out, INDENT, "usage", &words::tokens(&s.usage));
    row(out, INDENT, "cost", &words::cost(s.cost));
    row(
        out,
        INDENT,
        "context",
        &format!("window size not reported · compactions: {}", words::tally(&s.context.reasons)),
    );
    row(out, INDENT, "budget", budget(s.budget));
    if s.warnings > 0 {
        row(out, INDENT, "warnings", &s.warnings.to_string());
    }
}

/// The error grammar: what happened, what was being done, why, what to do next.
fn grammar(out: &mut String, indent: &str, f: &Failure) {
    let what = match &f.error {
        Some(e) => format!("{} ({})", words::what_happened(&e.category), safe(e.category.as_str())),
        None => format!("it ended {}", f.status.as_str()),
    };
    row(out, indent, "what happened", &what);
    if let Some(d) = &f.during {
        row(out, indent, "while", &one_line(d));
    }
    if let Some(e) = &f.error {
        row(out, indent, "why", &one_line(&readable(&e.message)));
        if let Some(a) = &e.action {
            row(out, indent, "next", &one_line(a));
        }
    }
}

fn tools(t: &crate::event::ToolCounts, by_kind: &super::figures::ByKind) -> String {
    let outcomes: Vec<String> = crate::event::Outcome::ALL
        .iter()
        .filter(|o| t.get(**o) > 0)
        .map(|o| format!("{} {}", t.get(*o), o.as_str()))
        .collect();
    let kinds: Vec<String> = by_kind.iter().map(|(k, c)| format!("{} {}", k.as_str(), c.total)).collect();
    let mut s = count(t.total, "call", "calls");
    if !outcomes.is_empty() {
        let _ = write!(s, ": {}", outcomes.join(", "));
    }
    if !kinds.is_empty() {
        let _ = write!(s, " · by kind: {}", kinds.join(", "));
    }
    s
}

fn shell_counts(s: &super::model::Shell) -> String {
    let parts = [
        (s.exit_zero, "exit 0"),
        (s.exit_non_zero, "exit non-zero"),
        (s.exit_unknown, "exit unknown"),
        (s.truncated, "truncated"),
    ];
    let mut line = count(s.count, "command", "commands");
    let known: Vec<String> = parts.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{n} {what}")).collect();
    if !known.is_empty() {
        let _ = write!(line, ": {}", known.join(" · "));
    }
    let _ = write!(line, " · {} stdout · {} stderr", words::bytes(s.stdout_bytes), words::bytes(s.stderr_bytes));
    line
}

fn budget(b: super::figures::Budget) -> &'static str {
    match b {
        super::figures::Budget::Unknown => "unknown (the stream does not state one)",
        super::figures::Budget::Over => "exceeded",
    }
}

/// One line of text: newlines shown as `⏎`, control bytes removed.
fn one_line(s: &str) -> String {
    safe(s).trim_end().replace('\n', " ⏎ ").replace('\t', " ")
}

fn row(out: &mut String, indent: &str, label: &str, value: &str) {
    let _ = writeln!(out, "{indent}{label:LABEL$}{value}");
}

/// A status mark padded to `width` before it is coloured, so columns line up either way.
fn mark(p: Paint, s: Status, width: usize) -> String {
    let m = Mark::status(s);
    p.paint(m.tone, &format!("{:width$}", format!("{} {}", m.glyph, m.word)))
}

/// `1 success · 2 failed · 1 incomplete`: the verdicts that occur, best first.
pub(super) fn verdicts(r: &Runs) -> String {
    let n = [(r.success, "success"), (r.unknown, "unknown"), (r.incomplete, "incomplete"), (r.failed, "failed")];
    n.iter().filter(|(n, _)| *n > 0).map(|(n, w)| format!("{n} {w}")).collect::<Vec<_>>().join(" · ")
}
