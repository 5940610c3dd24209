//! Merging reports: `a ⊕ b` is the report of input `a` followed by input `b`. The merge is
//! associative, so runs can be summarized in parallel and combined in any grouping: counts
//! add, unknowns stay unknown unless a part knows them, "first" facts (the first failure,
//! prompt, provider) come from the earlier part, the latest plan from the later one, and
//! bounded lists keep their first items.

use std::collections::HashMap;

use super::figures::{add_cost, add_opt, add_tokens};
use super::model::{limits, Input, Report, SessionReport, Shell};

impl Report {
    /// Adds the report of input that came after this one.
    pub fn merge(&mut self, other: Report) {
        let index = self.sessions.iter().enumerate().map(|(i, s)| (s.session_id.clone(), i)).collect();
        let mut m = Merger { report: std::mem::take(self), index };
        m.add(other);
        *self = m.finish();
    }
}

/// Merges many reports, one after another, keeping its index of sessions between them
/// (so that merging n reports costs n merges, not n index rebuilds).
#[derive(Debug, Default)]
pub struct Merger {
    report: Report,
    index: HashMap<String, usize>,
}

impl Merger {
    /// An empty merger: its report is the identity of the merge.
    pub fn new() -> Merger {
        Merger::default()
    }

    /// Adds the report of the input that came next.
    pub fn add(&mut self, other: Report) {
        let r = &mut self.report;
        r.runs.total += other.runs.total;
        r.runs.failed += other.runs.failed;
        r.runs.incomplete += other.runs.incomplete;
        if r.failure.is_none() {
            r.failure = other.failure;
        }
        r.input.merge(&other.input);
        for s in other.sessions {
            match self.index.get(&s.session_id) {
                Some(&i) => r.sessions[i].merge(s),
                None => {
                    self.index.insert(s.session_id.clone(), r.sessions.len());
                    r.sessions.push(s);
                }
            }
        }
    }

    /// Counts an input line or document that could not be read.
    pub fn count_invalid(&mut self) {
        self.report.input.invalid += 1;
    }

    /// The merged report.
    pub fn finish(self) -> Report {
        self.report
    }
}

impl Input {
    /// Adds another input's health.
    pub fn merge(&mut self, o: &Input) {
        self.lines += o.lines;
        self.events += o.events;
        self.raw += o.raw;
        self.unknown_types += o.unknown_types;
        self.oversized += o.oversized;
        self.redactions.merge(&o.redactions);
        self.invalid += o.invalid;
    }
}

impl SessionReport {
    /// Adds what the same session did later.
    pub fn merge(&mut self, o: SessionReport) {
        first(&mut self.provider, o.provider);
        first(&mut self.model, o.model);
        first(&mut self.prompt, o.prompt);
        if self.ok && !o.ok {
            self.ok = false;
            self.status = o.status;
            self.error = o.error;
            self.during = o.during;
        }
        self.turns += o.turns;
        add_opt(&mut self.duration_ms, o.duration_ms);
        self.tools.merge(&o.tools);
        self.tools_by_kind.merge(&o.tools_by_kind);
        extend_bounded(&mut self.failing_tools, o.failing_tools, limits::FAILING_TOOLS);
        self.shell.merge(o.shell);
        self.files.merge(&o.files);
        if o.plan.is_some() {
            self.plan = o.plan;
        }
        add_tokens(&mut self.usage, &o.usage);
        add_cost(&mut self.cost, o.cost);
        self.context.reasons.merge(&o.context.reasons);
        self.budget = self.budget.max(o.budget);
        self.warnings += o.warnings;
    }
}

impl Shell {
    /// Adds the counts of another set of commands, the listed ones up to the bound.
    pub fn merge(&mut self, o: Shell) {
        self.add_counts(&o);
        extend_bounded(&mut self.commands, o.commands, limits::SHELL_COMMANDS);
    }

    /// Adds the counts of another set of commands, without listing any.
    pub fn add_counts(&mut self, o: &Shell) {
        self.count += o.count;
        self.exit_zero += o.exit_zero;
        self.exit_non_zero += o.exit_non_zero;
        self.exit_unknown += o.exit_unknown;
        self.truncated += o.truncated;
        self.with_output += o.with_output;
        self.stdout_bytes += o.stdout_bytes;
        self.stderr_bytes += o.stderr_bytes;
    }
}

fn first<T>(a: &mut Option<T>, b: Option<T>) {
    if a.is_none() {
        *a = b;
    }
}

/// Appends `more` to `list` while it is shorter than `max`: keeping the first `max` items
/// of a concatenation is associative.
pub fn extend_bounded<T>(list: &mut Vec<T>, more: Vec<T>, max: usize) {
    let room = max.saturating_sub(list.len());
    list.extend(more.into_iter().take(room));
}
