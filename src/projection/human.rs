//! The human projections. `normal` says what happened, whether action is needed and the
//! result; `verbose` adds tool names, command detail, durations, output excerpts, usage and
//! reasoning; `debug` adds every event's ids, timestamp and redacted payload. An event is
//! shown in a mode when its `visibility` names that mode.

mod debug;
mod layout;
mod outcome;
mod tool;

use std::collections::HashMap;
use std::io::{self, Write};
use std::ops::ControlFlow;

use self::layout::{Block, Layout, RunKey, RunStyle};
use super::calls::Calls;
use super::{Flow, Projection};
use crate::event::{Approval, ApprovalKind, Body, Event, Outcome, Plan, Role, Usage, Visibility};
use crate::vocabulary::grammar::readable;
use crate::vocabulary::style::{clean, one_line, Mark, Paint, Tone};

/// How much a human projection shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `normal`.
    Normal,
    /// `verbose`.
    Verbose,
    /// `debug`.
    Debug,
}

impl Level {
    fn visibility(self) -> Visibility {
        match self {
            Level::Normal => Visibility::NORMAL,
            Level::Verbose => Visibility::VERBOSE,
            Level::Debug => Visibility::DEBUG,
        }
    }
}

/// Live output kept per call for a verbose excerpt when the terminal event has none.
const LIVE_BYTES: usize = 16 * 1024;

/// A human projection.
#[derive(Debug)]
pub struct Human {
    level: Level,
    paint: Paint,
    page: Layout,
    calls: Calls,
    live: HashMap<(String, String), String>,
    cwd: Option<String>,
    prompt: Option<String>,
    plan: Option<Plan>,
    /// Sessions in the order their turns began, and turns begun in the latest.
    sessions: Vec<String>,
    session_turns: u64,
    /// Warnings shown in the current turn, so its error report need not repeat one.
    warnings: Vec<String>,
    reported: Option<String>,
}

impl Human {
    /// A projection at `level`, coloured or not.
    pub fn new(level: Level, color: bool) -> Human {
        let paint = Paint::new(color);
        Human {
            level,
            paint,
            page: Layout::new(paint, level != Level::Debug),
            calls: Calls::default(),
            live: HashMap::new(),
            cwd: None,
            prompt: None,
            plan: None,
            warnings: Vec::new(),
            sessions: Vec::new(),
            session_turns: 0,
            reported: None,
        }
    }

    fn view(&self) -> tool::View<'_> {
        tool::View { paint: self.paint, level: self.level, cwd: self.cwd.as_deref() }
    }

    fn verbose(&self) -> bool {
        self.level >= Level::Verbose
    }

    /// Indent of an event of a child agent (two spaces per level), 0 for the root agent.
    fn indent_of(&self, ev: &Event) -> usize {
        2 * self.calls.depth_under(&ev.session_id, ev.parent_id.as_deref())
    }

    /// A muted line; a child agent's notes stay inside its parent's block of tool lines.
    fn note(&mut self, out: &mut dyn Write, ev: &Event, text: &str) -> io::Result<()> {
        let line = self.paint.paint(Tone::Muted, text);
        self.page.line(out, self.block_of(ev, Block::Note), self.indent_of(ev), line)
    }

    fn block_of(&self, ev: &Event, root: Block) -> Block {
        if ev.parent_id.is_some() {
            Block::Tools
        } else {
            root
        }
    }

    fn render(&mut self, ev: &Event, out: &mut dyn Write) -> io::Result<()> {
        let key = |id: &str| (ev.session_id.clone(), id.to_owned());
        match &ev.body {
            Body::SessionStarted(p) => {
                let mut parts = vec![p.provider.clone()];
                parts.extend(p.provider_version.iter().cloned());
                parts.extend(p.model.iter().map(|m| format!("· {m}")));
                parts.extend(p.cwd.iter().map(|c| format!("· {c}")));
                if self.verbose() {
                    let line = format!("{} {}", self.paint.paint(Tone::Strong, "●"), clean(&parts.join(" ")));
                    self.page.line(out, Block::Note, 0, line)?;
                }
            }
            Body::TurnStarted(p) => {
                // A second session gets a heading even in normal mode, so runs do not blur.
                let new_session = self.sessions.len() > 1 && self.sessions.last() == Some(&ev.session_id);
                let mut place = format!("turn {}", ev.turn_id);
                if new_session && self.session_turns == 1 {
                    place = format!("session {} · {place}", self.sessions.len());
                }
                let place = self.paint.paint(Tone::Muted, &place);
                let line = match (&p.prompt, self.verbose()) {
                    (Some(pr), false) if !new_session || self.session_turns > 1 => format!("› {}", one_line(pr, 200)),
                    (Some(pr), _) => format!("› {place}  {}", one_line(pr, 200)),
                    (None, false) if ev.turn_id <= 1 && !new_session => return Ok(()),
                    (None, _) => format!("› {place}"),
                };
                self.page.line(out, Block::Note, 0, line)?;
            }
            Body::Text(t) => match t.role {
                Role::Assistant if ev.parent_id.is_none() || self.verbose() => {
                    let indent = self.indent_of(ev);
                    let run = RunKey { thought: false, session: ev.session_id.clone(), parent: ev.parent_id.clone() };
                    let style =
                        RunStyle { block: Some(self.block_of(ev, Block::Text)), indent, tone: None, lead: None };
                    self.page.text(out, run, style, &t.delta)?;
                }
                Role::Assistant => {}
                Role::User => self.note(out, ev, &format!("› {}", one_line(&t.delta, 200)))?,
                Role::System => self.note(out, ev, &format!("· {}", one_line(&t.delta, 200)))?,
            },
            Body::Reasoning(r) if self.verbose() => {
                let indent = self.indent_of(ev) + 2;
                let run = RunKey { thought: true, session: ev.session_id.clone(), parent: ev.parent_id.clone() };
                let lead = if ev.parent_id.is_some() { None } else { Some("∴ ") };
                let style = RunStyle {
                    block: Some(self.block_of(ev, Block::Thought)),
                    indent,
                    tone: Some(Tone::Thought),
                    lead,
                };
                self.page.text(out, run, style, &r.delta)?;
            }
            Body::Reasoning(_) => {}
            Body::ToolStarted(p) => {
                // Recorded in `event` whatever the visibility; here only drawn.
                if let Some(call) = self.calls.get(&ev.session_id, &p.tool_call_id) {
                    let (lines, indent) = (self.view().started(call), 2 * call.depth);
                    self.page.lines(out, Block::Tools, indent, &lines)?;
                    self.page.owner = Some(key(&p.tool_call_id));
                }
            }
            Body::ToolOutput(o) if self.level == Level::Debug => {
                let text = self.paint.paint(Tone::Muted, &format!("│ {}", one_line(&o.delta, 200)));
                let call = self.calls.get(&ev.session_id, &o.tool_call_id);
                let indent = call.map_or_else(|| self.indent_of(ev), |c| 2 * c.depth + 2);
                self.page.line(out, Block::Tools, indent, text)?;
            }
            Body::ToolOutput(_) => {}
            Body::ToolEnded(p) => {
                let k = key(&p.tool_call_id);
                let call = self.calls.end(&k.0, &k.1);
                let live = self.live.remove(&k).unwrap_or_default();
                let adjacent = self.page.owner.as_ref() == Some(&k);
                let depth = call.as_ref().map_or_else(|| self.indent_of(ev) / 2, |c| c.depth);
                let lines = self.view().receipt(call.as_ref(), p, adjacent, &live);
                self.page.lines(out, Block::Tools, 2 * depth + 2, &lines)?;
            }
            Body::ApprovalRequested(a) | Body::ApprovalSettled(a) => self.approval(ev, a, out)?,
            Body::Plan(p) if self.plan.as_ref() != Some(p) => {
                self.plan = Some(p.clone());
                let mut lines = vec![self.paint.paint(Tone::Strong, "Plan")];
                for e in &p.entries {
                    let mark = Mark::plan(e.status);
                    let word = format!("{} {:<11}", mark.glyph, mark.word);
                    lines.push(format!("  {}  {}", self.paint.paint(mark.tone, &word), one_line(&e.content, 200)));
                }
                let (block, indent) = (self.block_of(ev, Block::Note), self.indent_of(ev));
                self.page.lines(out, block, indent, &lines)?;
            }
            Body::Plan(_) => {}
            Body::FileChanged(f) => {
                let owner = f.tool_call_id.as_deref().map(key);
                let call_depth = owner.as_ref().and_then(|k| self.calls.get(&k.0, &k.1)).map(|c| c.depth);
                let indent = call_depth.map_or_else(|| self.indent_of(ev), |d| 2 * d + 2);
                let keep = owner.is_some() && self.page.owner == owner;
                let call_target =
                    owner.as_ref().and_then(|k| self.calls.get(&k.0, &k.1)).and_then(|c| c.started.target.as_deref());
                let mut line = String::new();
                Mark::file(f.change).push(self.paint, &mut line);
                // Right under its own edit call, the same path need not be said twice.
                if !(keep && call_target == Some(f.path.as_str())) {
                    line.push_str("  ");
                    line.push_str(&self.view().path(&f.path));
                }
                self.page.line(out, Block::Tools, indent, line)?;
                if keep {
                    self.page.owner = owner;
                }
            }
            Body::Usage(u) if self.verbose() => {
                if let Some(text) = usage_text(u) {
                    self.note(out, ev, &format!("· {text}"))?;
                }
            }
            Body::Usage(_) => {}
            Body::ContextCompacted(c) => self.note(out, ev, &format!("· context compacted ({})", clean(&c.reason)))?,
            Body::Warning(w) => {
                let mut line = String::new();
                Mark::WARNING.push(self.paint, &mut line);
                line.push_str("  ");
                line.push_str(&one_line(&readable(&w.message), 300));
                if let Some(c) = w.category.as_ref().filter(|_| self.verbose()) {
                    line.push(' ');
                    self.paint.push(&mut line, Tone::Muted, &format!("[{}]", clean(c)));
                }
                let (block, indent) = (self.block_of(ev, Block::Note), self.indent_of(ev));
                self.page.line(out, block, indent, line)?;
                self.warnings.push(w.message.clone());
            }
            Body::Raw(r) if self.verbose() => {
                let reason = serde_json::to_value(r.reason).ok().and_then(|v| v.as_str().map(str::to_owned));
                let text = format!("? not understood ({})  {}", reason.unwrap_or_default(), one_line(&r.line, 160));
                self.note(out, ev, &text)?;
            }
            Body::Raw(_) => {}
            Body::TurnEnded(t) => self.turn_ended(ev, t, out)?,
            Body::Summary(s) => self.summary(ev, s, out)?,
            Body::Other(o) if self.verbose() => self.note(out, ev, &format!("· {}", clean(&o.type_name)))?,
            _ => {}
        }
        Ok(())
    }

    fn approval(&mut self, ev: &Event, a: &Approval, out: &mut dyn Write) -> io::Result<()> {
        let owner = a.tool_call_id.as_ref().map(|id| (ev.session_id.clone(), id.clone()));
        let call = owner.as_ref().and_then(|k| self.calls.get(&k.0, &k.1));
        let indent = call.map_or_else(|| self.indent_of(ev), |c| 2 * c.depth + 2);
        let settled = matches!(ev.body, Body::ApprovalSettled(_));
        let mark = match (settled, a.kind) {
            (true, _) => Mark::decision(a.decision),
            (false, Some(ApprovalKind::Question)) => Mark::QUESTION,
            (false, _) => Mark::APPROVAL,
        };
        let adjacent = owner.is_some() && self.page.owner == owner;
        let subject = match (&a.title, call) {
            (Some(t), _) => Some(one_line(t, 200)),
            (None, Some(c)) if !adjacent => Some(one_line(c.subject(), 120)),
            _ => None,
        };
        let mut line = String::new();
        mark.push(self.paint, &mut line);
        if let Some(s) = subject {
            line.push_str("  ");
            line.push_str(&s);
        }
        self.page.line(out, Block::Tools, indent, line)?;
        if adjacent {
            self.page.owner = owner;
        }
        Ok(())
    }
}

/// `tokens 19176 in, 24 out · $0.19`; `None` when nothing is known.
fn usage_text(u: &Usage) -> Option<String> {
    let tokens: Vec<String> = [
        u.input_tokens.map(|n| format!("{n} in")),
        u.output_tokens.map(|n| format!("{n} out")),
        u.cache_read.filter(|&n| n > 0).map(|n| format!("{n} cache read")),
        u.cache_write.filter(|&n| n > 0).map(|n| format!("{n} cache write")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut parts = Vec::new();
    if !tokens.is_empty() {
        parts.push(format!("tokens {}", tokens.join(", ")));
    }
    parts.extend(u.cost_usd.map(|c| format!("${c:.2}")));
    (!parts.is_empty()).then(|| parts.join(" · "))
}

impl Projection for Human {
    fn shows_tool_output(&self) -> bool {
        self.level != Level::Normal
    }

    fn event(&mut self, ev: &Event, out: &mut dyn Write) -> Flow {
        match &ev.body {
            Body::SessionStarted(p) => self.cwd = p.cwd.clone(),
            Body::TurnStarted(p) => {
                self.prompt = p.prompt.clone();
                self.warnings.clear();
                if self.sessions.last() != Some(&ev.session_id) {
                    self.sessions.push(ev.session_id.clone());
                    self.session_turns = 0;
                }
                self.session_turns += 1;
            }
            Body::ToolStarted(p) => {
                self.calls.start(ev, p);
            }
            Body::ToolOutput(o) if self.verbose() => {
                let live = self.live.entry((ev.session_id.clone(), o.tool_call_id.clone())).or_default();
                live.push_str(&o.delta);
                if live.len() > LIVE_BYTES {
                    let mut cut = live.len() - LIVE_BYTES;
                    while !live.is_char_boundary(cut) {
                        cut += 1;
                    }
                    live.drain(..cut);
                }
            }
            _ => {}
        }
        if ev.visibility.contains(self.level.visibility()) {
            if self.level == Level::Debug {
                self.debug_header(ev, out)?;
            }
            self.render(ev, out)?;
            if self.level == Level::Debug {
                self.debug_payload(ev, out)?;
            }
        } else if let Body::ToolEnded(t) = &ev.body {
            // Hidden, but the call is over all the same.
            self.calls.end(&ev.session_id, &t.tool_call_id);
            self.live.remove(&(ev.session_id.clone(), t.tool_call_id.clone()));
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        for (_, call) in self.calls.drain_in_order() {
            let mut line = String::new();
            Mark::outcome(Outcome::Interrupted).push(self.paint, &mut line);
            line.push_str(&format!("  {}", one_line(call.subject(), 120)));
            let note = self.paint.paint(Tone::Muted, "the input ended before this call did");
            self.page.lines(out, Block::Tools, 2 * call.depth + 2, &[line, format!("  {note}")])?;
        }
        self.page.close_run(out)
    }
}
