//! The order the sources are read in: the order given, except that a session file that is
//! part of another session (a subagent's, whose file names its parent's) waits until the
//! file holding that session has been read. Its events are linked to the call that spawned
//! them only when that call has been read first, and OpenCode names its sessions by ids
//! that sort newest first, so a child's export sorts before its parent's.

use std::collections::{HashMap, HashSet, VecDeque};

use super::{Source, SourceIter};

/// A session a file holds, and the session it is part of, if any: the file is read after
/// the one holding that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The session.
    pub id: String,
    /// The session it is part of, whose file is read first when it is given.
    pub parent: Option<String>,
}

/// The sources of a run in the order they are read (see the module doc). What waits is held
/// by path, not read: memory grows with the number of files that wait, not with their size.
pub(super) struct Order {
    sources: SourceIter,
    /// The sessions of the files read so far.
    read: HashSet<String>,
    /// The files waiting, by the session each waits for, with their place in the given order.
    waiting: HashMap<String, Vec<Waiting>>,
    /// The files whose session has been read, to be read next.
    ready: VecDeque<Source>,
    /// The files still waiting once every source was given, read whatever they wait for.
    leftover: VecDeque<Source>,
    given: usize,
    ended: bool,
}

struct Waiting {
    seq: usize,
    ids: Vec<String>,
    source: Source,
}

impl Order {
    pub(super) fn new(sources: SourceIter) -> Order {
        Order {
            sources,
            read: HashSet::new(),
            waiting: HashMap::new(),
            ready: VecDeque::new(),
            leftover: VecDeque::new(),
            given: 0,
            ended: false,
        }
    }

    /// Whether a file that is part of session `parent` is read now: when that session's
    /// file has been read, and also once every source was given (it is not, or it waits
    /// for one that waits in turn).
    pub(super) fn may_read(&self, parent: &str) -> bool {
        self.ended || self.read.contains(parent)
    }

    /// The file `source`, holding sessions `ids`, waits for the file holding session
    /// `parent` ([`Order::may_read`] was false).
    pub(super) fn wait(&mut self, source: Source, ids: Vec<String>, parent: String) {
        self.waiting.entry(parent).or_default().push(Waiting { seq: self.given, ids, source });
    }

    /// A file holding session `id` has been read: the files waiting for it are next.
    pub(super) fn read(&mut self, id: String) {
        let released = self.waiting.remove(&id).unwrap_or_default();
        self.ready.extend(released.into_iter().map(|w| w.source));
        self.read.insert(id);
    }

    /// Once every source was given, what still waits is read in the order given, each
    /// after the one it waits for when that one waits too (a cycle, which only a damaged
    /// archive has, in the order given).
    fn end(&mut self) {
        self.ended = true;
        let mut left: Vec<(String, Waiting)> =
            self.waiting.drain().flat_map(|(parent, ws)| ws.into_iter().map(move |w| (parent.clone(), w))).collect();
        left.sort_unstable_by_key(|(_, w)| w.seq);
        // The sessions of the files still waiting: one that waits for one of them waits on.
        let held: HashSet<String> = left.iter().flat_map(|(_, w)| w.ids.iter().cloned()).collect();
        let (roots, rest): (Vec<_>, Vec<_>) = left.into_iter().partition(|(parent, _)| !held.contains(parent));
        self.leftover.extend(roots.into_iter().map(|(_, w)| w.source));
        // Each waits again, now for a file read in the pass over the roots above.
        for (parent, w) in rest {
            self.waiting.entry(parent).or_default().push(w);
        }
    }
}

impl Iterator for Order {
    type Item = std::io::Result<Source>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(s) = self.ready.pop_front() {
                return Some(Ok(s));
            }
            if !self.ended {
                match self.sources.next() {
                    Some(s) => {
                        self.given += 1;
                        return Some(s);
                    }
                    None => self.end(),
                }
            }
            if let Some(s) = self.leftover.pop_front() {
                return Some(Ok(s));
            }
            // A cycle: what is left waits only for itself.
            let mut left: Vec<Waiting> = self.waiting.drain().flat_map(|(_, ws)| ws).collect();
            if left.is_empty() {
                return None;
            }
            left.sort_unstable_by_key(|w| w.seq);
            self.leftover.extend(left.into_iter().map(|w| w.source));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::io::Sources;

    /// Files named by the session each holds and the one it is part of: each is read after
    /// its parent's, a chain in turn, and what waits for a file not given (or for itself,
    /// in a cycle) at the end, in the order given.
    #[test]
    fn a_part_of_a_session_is_read_after_it() {
        let files = [
            ("c", Some("a")),
            ("a", Some("b")),
            ("d", Some("x")),
            ("f", Some("g")),
            ("b", None),
            ("e", None),
            ("g", Some("f")),
        ];
        let paths: Vec<PathBuf> = files.iter().map(|(id, _)| PathBuf::from(id)).collect();
        let mut order = Order::new(Sources::from_operands(&paths).iter().unwrap());
        let mut read = Vec::new();
        while let Some(source) = order.next() {
            let name = source.unwrap().name();
            let (id, parent) = *files.iter().find(|(id, _)| *id == name).unwrap();
            if let Some(p) = parent.filter(|p| !order.may_read(p)) {
                order.wait(Source::File(name.into()), vec![id.into()], p.into());
                continue;
            }
            read.push(id);
            order.read(id.into());
        }
        assert_eq!(read, ["b", "a", "c", "e", "d", "f", "g"]);
    }
}
