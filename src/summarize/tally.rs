//! Bounded, mergeable sets: [`Tally`] (counts by key) and [`Files`] (changed paths). Both
//! keep the alphabetically first keys and fold the rest away, which makes a merge
//! associative and commutative, and equal to having seen every key in one pass: a key that
//! is among the first N of the whole is among the first N of every part that holds it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::clip::clip;
use super::model::limits;
use crate::event::FileChange;

/// The key that holds the counts folded away when a tally is over its bound.
pub const OTHER: &str = "…";

/// Counts by key, at most [`limits::TALLY_KEYS`] keys; the rest are summed under the key `…`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    counts: BTreeMap<String, u64>,
    other: u64,
}

impl Tally {
    /// Adds `n` to `key` (bounded to [`limits::DETAIL`] bytes).
    pub fn add(&mut self, key: &str, n: u64) {
        if key == OTHER {
            self.other = self.other.saturating_add(n);
            return;
        }
        let count = self.counts.entry(clip(key, limits::DETAIL)).or_default();
        *count = count.saturating_add(n);
        while self.counts.len() > limits::TALLY_KEYS {
            if let Some((_, v)) = self.counts.pop_last() {
                self.other = self.other.saturating_add(v);
            }
        }
    }

    /// Adds every count of another tally.
    pub fn merge(&mut self, o: &Tally) {
        o.counts.iter().for_each(|(k, v)| self.add(k, *v));
        self.other = self.other.saturating_add(o.other);
    }

    /// The sum of all counts.
    pub fn total(&self) -> u64 {
        self.counts.values().fold(self.other, |sum, n| sum.saturating_add(*n))
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The counts by key, then the folded rest (under `…`) when there is any.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        let other = (self.other > 0).then_some((OTHER, self.other));
        self.counts.iter().map(|(k, v)| (k.as_str(), *v)).chain(other)
    }
}

impl Serialize for Tally {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Tally {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut t = Tally::default();
        BTreeMap::<String, u64>::deserialize(d)?.iter().for_each(|(k, v)| t.add(k, *v));
        Ok(t)
    }
}

/// Changed files: how many changes, and the alphabetically first [`limits::FILES`] paths
/// with every kind of change each saw.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Files {
    /// `file.changed` events.
    pub changes: u64,
    paths: BTreeMap<String, u8>,
    more: bool,
}

const CHANGES: [FileChange; 3] = [FileChange::Add, FileChange::Update, FileChange::Delete];

fn bit(c: FileChange) -> u8 {
    1 << CHANGES.iter().position(|x| *x == c).unwrap_or(1)
}

impl Files {
    /// Records one change.
    pub fn add(&mut self, path: &str, change: FileChange) {
        self.changes = self.changes.saturating_add(1);
        self.insert(clip(path, limits::DETAIL), bit(change));
    }

    fn insert(&mut self, path: String, bits: u8) {
        *self.paths.entry(path).or_default() |= bits;
        while self.paths.len() > limits::FILES {
            self.paths.pop_last();
            self.more = true;
        }
    }

    /// Adds another set.
    pub fn merge(&mut self, o: &Files) {
        self.changes = self.changes.saturating_add(o.changes);
        self.more |= o.more;
        o.paths.iter().for_each(|(p, b)| self.insert(p.clone(), *b));
    }

    /// The listed paths, sorted, each with its kinds of change.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Vec<FileChange>)> {
        self.paths.iter().map(|(p, b)| (p.as_str(), CHANGES.into_iter().filter(|c| b & bit(*c) != 0).collect()))
    }

    /// True when more paths changed than are listed.
    pub fn has_more(&self) -> bool {
        self.more
    }
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct FilesWire {
    changes: u64,
    paths: Vec<PathWire>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    more: bool,
}

#[derive(Serialize, Deserialize)]
struct PathWire {
    path: String,
    changes: Vec<FileChange>,
}

impl Serialize for Files {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let paths = self.iter().map(|(p, c)| PathWire { path: p.to_owned(), changes: c }).collect();
        FilesWire { changes: self.changes, paths, more: self.more }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Files {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = FilesWire::deserialize(d)?;
        let mut f = Files { changes: w.changes, paths: BTreeMap::new(), more: w.more };
        for p in w.paths {
            f.insert(clip(&p.path, limits::DETAIL), p.changes.into_iter().fold(0, |b, c| b | bit(c)));
        }
        Ok(f)
    }
}
