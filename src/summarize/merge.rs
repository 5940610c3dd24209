//! Merging reports: the union of their runs and of their input streams, each known by its
//! key. A union is associative, commutative and idempotent, so parts can be summarized on
//! any number of machines, in any grouping and order, and a part merged twice (or two
//! parts that both hold a run) count each run once.
//!
//! Two entries with the same key are the same run read twice and are normally equal. When
//! they are not, the better-evidenced one is kept: a run whose stream ended in its record
//! (success or failed) over the same events cut before it (incomplete); between equals
//! (a newer toolkit summarized one of them, say), the greater JSON form. Either choice
//! depends on neither order nor grouping.

use std::collections::HashMap;

use super::key::Key;
use super::model::{Input, Report, SessionReport, Shell, StreamInput};
use crate::event::Verdict;

impl Report {
    /// Merges another report into this one.
    pub fn merge(&mut self, other: Report) {
        let mut m = Merger::new();
        m.add(std::mem::take(self));
        m.add(other);
        *self = m.finish();
    }
}

/// Merges many reports, one at a time: memory holds one entry per distinct run and stream
/// (the per-run table, which is what the merged document lists), never the documents.
#[derive(Debug, Default)]
pub struct Merger {
    runs: HashMap<Key, SessionReport>,
    streams: HashMap<Key, Input>,
}

impl Merger {
    /// An empty merger: its report is the identity of the merge.
    pub fn new() -> Merger {
        Merger::default()
    }

    /// Adds a report's runs and streams.
    pub fn add(&mut self, other: Report) {
        for s in other.sessions {
            self.add_run(s);
        }
        for s in other.streams {
            self.add_stream(s);
        }
    }

    /// Adds one run.
    pub fn add_run(&mut self, s: SessionReport) {
        keep(&mut self.runs, s.key, s, |s| matches!(s.verdict, Verdict::Success | Verdict::Failed));
    }

    /// Adds one stream's health.
    pub fn add_stream(&mut self, s: StreamInput) {
        keep(&mut self.streams, s.key, s.input, |_| false);
    }

    /// Counts a document that could not be read, as a stream of its own known by `what`
    /// (where it was and why), so that reading the same bad document twice counts it once.
    pub fn count_invalid(&mut self, what: &str) {
        let key = Key::default().then(super::key::line_digest(what.as_bytes()));
        self.add_stream(StreamInput { key, input: Input { invalid: 1, ..Input::default() } });
    }

    /// Counts an input file that could not be read, as a stream of its own known by `what`
    /// (its name and why), so that merging two reports that both missed it counts it once.
    pub fn count_unreadable(&mut self, what: &str) {
        let key = Key::default().then(super::key::line_digest(format!("unreadable {what}").as_bytes()));
        self.add_stream(StreamInput { key, input: Input { unreadable: 1, ..Input::default() } });
    }

    /// The merged report, runs ordered by session id and key, streams by key.
    pub fn finish(self) -> Report {
        let mut sessions: Vec<SessionReport> = self.runs.into_values().collect();
        sessions.sort_unstable_by(|a, b| (&a.session_id, a.key).cmp(&(&b.session_id, b.key)));
        let mut streams: Vec<StreamInput> =
            self.streams.into_iter().map(|(key, input)| StreamInput { key, input }).collect();
        streams.sort_unstable_by_key(|s| s.key);
        Report { sessions, streams }
    }
}

/// Inserts `v` under `k`; of two different values under one key, the one `settled`
/// says is, then the greater JSON form.
fn keep<T: PartialEq + serde::Serialize>(map: &mut HashMap<Key, T>, k: Key, v: T, settled: fn(&T) -> bool) {
    match map.entry(k) {
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(v);
        }
        std::collections::hash_map::Entry::Occupied(mut e) => {
            let rank = |t: &T| (settled(t), serde_json::to_string(t).ok());
            if *e.get() != v && rank(&v) > rank(e.get()) {
                e.insert(v);
            }
        }
    }
}

impl Input {
    /// Adds another input's health.
    pub fn merge(&mut self, o: &Input) {
        self.lines = self.lines.saturating_add(o.lines);
        self.events = self.events.saturating_add(o.events);
        self.raw = self.raw.saturating_add(o.raw);
        self.unknown_types = self.unknown_types.saturating_add(o.unknown_types);
        self.oversized = self.oversized.saturating_add(o.oversized);
        self.redactions.merge(&o.redactions);
        self.invalid = self.invalid.saturating_add(o.invalid);
        self.unreadable = self.unreadable.saturating_add(o.unreadable);
    }
}

impl Shell {
    /// Adds another set of commands: the counts, and the listed ones up to the bound.
    pub fn merge(&mut self, o: Shell) {
        self.add_counts(&o);
        extend_bounded(&mut self.commands, o.commands, super::model::limits::SHELL_COMMANDS);
    }

    /// Adds the counts of another set of commands, without listing any.
    pub fn add_counts(&mut self, o: &Shell) {
        self.count = self.count.saturating_add(o.count);
        self.exit_zero = self.exit_zero.saturating_add(o.exit_zero);
        self.exit_non_zero = self.exit_non_zero.saturating_add(o.exit_non_zero);
        self.exit_unknown = self.exit_unknown.saturating_add(o.exit_unknown);
        self.truncated = self.truncated.saturating_add(o.truncated);
        self.with_output = self.with_output.saturating_add(o.with_output);
        self.stdout_bytes = self.stdout_bytes.saturating_add(o.stdout_bytes);
        self.stderr_bytes = self.stderr_bytes.saturating_add(o.stderr_bytes);
    }
}

/// Appends `more` to `list` while it is shorter than `max`.
pub fn extend_bounded<T>(list: &mut Vec<T>, more: Vec<T>, max: usize) {
    let room = max.saturating_sub(list.len());
    list.extend(more.into_iter().take(room));
}
