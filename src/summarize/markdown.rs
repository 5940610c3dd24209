//! The report as GitHub-flavoured Markdown, for CI step summaries (`$GITHUB_STEP_SUMMARY`):
//! a heading with the outcome, the error grammar as a list, then tables. Every cell is
//! escaped so that it cannot break its table: `|` and Markdown punctuation become
//! character references, newlines `<br>`; the same goes for text outside tables, and an
//! `@mention` is broken so that it pings no one. Every table is bounded in rows and bytes
//! (with a note of how many rows it left out), so the report stays under the 1 MiB GitHub
//! accepts of a step summary however many runs it covers.

use std::fmt::Write;

use super::figures::{Budget, Cost, Tokens};
use super::model::{limits, Report, SessionReport};
use super::words::{self, count, readable, safe, Mark};
use crate::event::{Status, ToolKind, Verdict};

/// Renders a report as Markdown.
pub fn to_markdown(r: &Report) -> String {
    let mut out = String::new();
    let t = r.totals();
    let head = r.headline();
    let status = head.as_ref().map_or(Status::Completed, |f| f.status);
    let _ = writeln!(out, "## Agent run: {}\n", words::status(status));
    let runs = r.runs();
    let mut facts = vec![count(runs.total, "run", "runs")];
    if runs.success != runs.total {
        facts.push(super::text::verdicts(&runs));
    }
    facts.push(count(t.turns, "turn", "turns"));
    facts.extend(t.duration_ms.map(words::duration));
    let _ = writeln!(out, "{}\n", cell(&facts.join(" · ")));
    if let Some(f) = &head {
        if let Some(e) = &f.error {
            let what = format!("{} ({})", words::what_happened(&e.category), e.category.as_str());
            let _ = writeln!(out, "- **What happened:** {}", cell(&what));
            if let Some(d) = &f.during {
                let _ = writeln!(out, "- **While:** {}", cell(d));
            }
            let _ = writeln!(out, "- **Why:** {}", cell(&readable(&e.message)));
            if let Some(a) = &e.action {
                let _ = writeln!(out, "- **Next:** {}", cell(a));
            }
            out.push('\n');
        }
    }
    // Runs that need a look come first, so that a cut table still shows them.
    let order: Vec<&SessionReport> = r
        .sessions
        .iter()
        .filter(|s| s.verdict != Verdict::Success)
        .chain(r.sessions.iter().filter(|s| s.verdict == Verdict::Success))
        .collect();
    let mut sessions = Table::new(&[
        "Session",
        "Agent",
        "Verdict",
        "Status",
        "Turns>",
        "Duration>",
        "Tool calls>",
        "Not completed>",
        "File changes>",
    ]);
    for s in &order {
        sessions.row(vec![
            cell(&s.session_id),
            cell(&[s.provider.as_deref(), s.model.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" · ")),
            s.verdict.as_str().into(),
            cell(&words::status(s.status)),
            s.turns.to_string(),
            s.duration_ms.map_or_else(|| "unknown".into(), words::duration),
            s.tools.total.to_string(),
            s.tools.total.saturating_sub(s.tools.completed).to_string(),
            s.files.changes.to_string(),
        ]);
    }
    if r.sessions.len() > 1 {
        sessions.last_row(vec![
            "**Total**".into(),
            String::new(),
            r.verdict().as_str().into(),
            cell(&words::status(status)),
            t.turns.to_string(),
            t.duration_ms.map_or_else(|| "unknown".into(), words::duration),
            t.tools.total.to_string(),
            t.tools.total.saturating_sub(t.tools.completed).to_string(),
            t.files_changed.to_string(),
        ]);
    }
    sessions.write(&mut out, "Sessions");
    failing_tools(&mut out, &order);
    shell_commands(&mut out, &order);
    files(&mut out, &order);
    plans(&mut out, &order);
    let mut usage = Table::new(&[
        "Session",
        "Input tokens>",
        "Output tokens>",
        "Cache read>",
        "Cache write>",
        "Cost (estimated)>",
        "Context window",
        "Compactions",
        "Budget",
    ]);
    for s in &order {
        usage.row(usage_row(cell(&s.session_id), &s.usage, s.cost, &words::tally(&s.context.reasons), s.budget));
    }
    if r.sessions.len() > 1 {
        usage.last_row(usage_row("**Total**".into(), &t.usage, t.cost, &words::tally(&t.context.reasons), t.budget));
    }
    usage.write(&mut out, "Usage, cost, context and budget");
    if r.sessions.len() > 1 && t.sessions_without_usage > 0 && !t.usage.is_empty() {
        let _ = writeln!(
            out,
            "_The totals count only the sessions that report usage; {} report none._\n",
            count(t.sessions_without_usage, "session", "sessions")
        );
    }
    let i = &r.input();
    let mut health = Table::new(&[
        "Runs>",
        "Success>",
        "Failed>",
        "Incomplete>",
        "Unknown>",
        "Lines>",
        "Events>",
        "Raw>",
        "Unknown types>",
        "Oversized>",
        "Redactions",
        "Not canonical>",
        "Unreadable files>",
    ]);
    let n = [runs.total, runs.success, runs.failed, runs.incomplete, runs.unknown];
    let n = n.into_iter().chain([i.lines, i.events, i.raw, i.unknown_types, i.oversized]);
    let mut row: Vec<String> = n.map(|n| n.to_string()).collect();
    row.push(cell(&words::tally(&i.redactions)));
    row.push(i.invalid.to_string());
    row.push(i.unreadable.to_string());
    health.row(row);
    health.write(&mut out, "Input health");
    out
}

fn failing_tools(out: &mut String, sessions: &[&SessionReport]) {
    let mut table = Table::new(&["Session", "Tool", "Status", "Exit>", "Command or target", "Why", "Output (end)"]);
    let mut unlisted = 0;
    for s in sessions {
        for t in &s.failing_tools {
            let exit = match (t.exit_code, t.kind) {
                (Some(c), _) => c.to_string(),
                (None, ToolKind::Shell) => "unknown".into(),
                (None, _) => String::new(),
            };
            table.row(vec![
                cell(&s.session_id),
                cell(&t.name),
                cell(&words::status(t.status)),
                exit,
                code(t.command.as_deref().or(t.target.as_deref())),
                t.error.as_ref().map_or_else(String::new, |e| cell(&readable(&e.message))),
                code(t.excerpt.as_deref()),
            ]);
        }
        unlisted += s.tools.total.saturating_sub(s.tools.completed).saturating_sub(s.failing_tools.len() as u64);
    }
    table.write(out, "Tool calls that did not complete");
    more(out, unlisted, &format!("the first {} per session are listed", limits::FAILING_TOOLS));
}

fn shell_commands(out: &mut String, sessions: &[&SessionReport]) {
    let mut table = Table::new(&["Session", "Command", "Status", "Exit>", "Output", "Truncated"]);
    let mut unlisted = 0;
    for s in sessions {
        for c in &s.shell.commands {
            let output = if c.has_output {
                format!("{} stdout, {} stderr", words::bytes(c.stdout_bytes), words::bytes(c.stderr_bytes))
            } else {
                "none".into()
            };
            table.row(vec![
                cell(&s.session_id),
                code(c.command.as_deref()),
                cell(&words::status(c.status)),
                c.exit_code.map_or_else(|| "unknown".into(), |e| e.to_string()),
                output,
                if c.truncated { "yes" } else { "no" }.into(),
            ]);
        }
        unlisted += s.shell.count.saturating_sub(s.shell.commands.len() as u64);
    }
    table.write(out, "Shell commands");
    more(out, unlisted, &format!("the first {} per session are listed", limits::SHELL_COMMANDS));
}

fn files(out: &mut String, sessions: &[&SessionReport]) {
    let mut table = Table::new(&["Session", "Path", "Change"]);
    let mut unlisted = false;
    for s in sessions {
        for (path, changes) in s.files.iter() {
            let kinds: Vec<&str> = changes.iter().map(|c| Mark::file(*c).word).collect();
            table.row(vec![cell(&s.session_id), code(Some(path)), kinds.join(", ")]);
        }
        unlisted |= s.files.has_more();
    }
    table.write(out, "Files changed");
    if unlisted {
        let _ =
            writeln!(out, "_More files changed; the alphabetically first {} per session are listed._\n", limits::FILES);
    }
}

fn plans(out: &mut String, sessions: &[&SessionReport]) {
    let mut table = Table::new(&["Session", "Step", "Status"]);
    for s in sessions {
        for e in s.plan.iter().flat_map(|p| &p.entries) {
            let m = Mark::plan(e.status);
            let status = format!("{} {}", m.glyph, m.word);
            table.row(vec![cell(&s.session_id), cell(&e.content), status]);
        }
    }
    table.write(out, "Plan");
}

fn usage_row(who: String, t: &Tokens, cost: Option<Cost>, compactions: &str, budget: Budget) -> Vec<String> {
    let n = |v: Option<u64>| v.map_or_else(|| "unknown".into(), |v| v.to_string());
    vec![
        who,
        n(t.input_tokens),
        n(t.output_tokens),
        n(t.cache_read),
        n(t.cache_write),
        cost.map_or_else(|| "unknown".into(), |c| cell(&words::cost(Some(c)))),
        "not reported".into(),
        cell(compactions),
        match budget {
            Budget::Unknown => "unknown",
            Budget::Over => "**exceeded**",
        }
        .into(),
    ]
}

fn more(out: &mut String, n: u64, which: &str) {
    if n > 0 {
        let _ = writeln!(out, "_… and {n} more; {which}._\n");
    }
}

/// A GitHub table; a header ending in `>` is a right-aligned column. It keeps at most
/// [`ROWS`] rows and [`TABLE_BYTES`] bytes of them, and says how many it left out, so that
/// the whole report stays under [`LIMIT`].
struct Table {
    headers: Vec<(String, bool)>,
    body: String,
    rows: usize,
    left_out: u64,
}

/// What GitHub accepts of a step summary (`$GITHUB_STEP_SUMMARY`): 1 MiB.
pub const LIMIT: usize = 1024 * 1024;
/// Rows a table lists.
const ROWS: usize = 200;
/// Bytes of rows a table lists: seven tables of them, with the headings and the error
/// grammar (each message bounded), stay well under [`LIMIT`].
const TABLE_BYTES: usize = 120 * 1024;

impl Table {
    fn new(headers: &[&str]) -> Table {
        let headers = headers.iter().map(|h| (h.trim_end_matches('>').to_owned(), h.ends_with('>'))).collect();
        Table { headers, body: String::new(), rows: 0, left_out: 0 }
    }

    /// Adds a row of cells that are already escaped, unless the table is full.
    fn row(&mut self, cells: Vec<String>) {
        let line = self.line(cells.iter().map(String::as_str));
        if self.rows >= ROWS || self.body.len() + line.len() > TABLE_BYTES {
            self.left_out += 1;
        } else {
            self.rows += 1;
            self.body.push_str(&line);
        }
    }

    /// Adds the last row (a total), which is always shown.
    fn last_row(&mut self, cells: Vec<String>) {
        let line = self.line(cells.iter().map(String::as_str));
        self.rows += 1;
        self.body.push_str(&line);
    }

    fn line<'a>(&self, cells: impl Iterator<Item = &'a str>) -> String {
        let mut cells: Vec<&str> = cells.take(self.headers.len()).collect();
        cells.resize(self.headers.len(), "");
        format!("| {} |\n", cells.join(" | "))
    }

    /// Writes the table under a heading, unless it has no rows, and says how many rows it
    /// left out.
    fn write(&self, out: &mut String, title: &str) {
        if self.rows == 0 && self.left_out == 0 {
            return;
        }
        let _ = writeln!(out, "### {title}\n");
        out.push_str(&self.line(self.headers.iter().map(|(h, _)| h.as_str())));
        out.push_str(&self.line(self.headers.iter().map(|(_, right)| if *right { "---:" } else { "---" })));
        out.push_str(&self.body);
        out.push('\n');
        if self.left_out > 0 {
            let _ = writeln!(
                out,
                "_{} left out to keep the summary small; `summarize --format json` lists them all._\n",
                count(self.left_out, "more row", "more rows")
            );
        }
    }
}

/// Text made literal in Markdown: special characters as character references, line
/// breaks as `<br>`, control bytes removed.
fn cell(s: &str) -> String {
    let s = safe(s);
    let mut out = String::with_capacity(s.len());
    let mut prev = ' ';
    let mut chars = s.trim_end().chars().peekable();
    while let Some(ch) = chars.next() {
        // `_` inside a word never starts emphasis, so `TOOL_ERROR` can stay as it is.
        let inside_word = prev.is_alphanumeric() && chars.peek().is_some_and(|c| c.is_alphanumeric());
        prev = ch;
        match ch {
            '_' if inside_word => out.push('_'),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("<br>"),
            '\t' => out.push(' '),
            // A report posted as a comment must not ping anyone: a zero-width space keeps
            // `@name` from being read as a mention.
            '@' if chars.peek().is_some_and(|c| c.is_alphanumeric() || *c == '-' || *c == '_') => {
                out.push_str("@&#8203;")
            }
            '|' | '\\' | '*' | '_' | '`' | '[' | ']' | '~' | '#' | '!' | '$' => {
                let _ = write!(out, "&#{};", ch as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn code(s: Option<&str>) -> String {
    s.filter(|s| !s.trim().is_empty()).map_or_else(String::new, |s| format!("<code>{}</code>", cell(s)))
}
