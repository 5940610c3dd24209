//! A set of ids that remembers only the most recent ones, so that state kept to absorb late
//! or repeated events (ended tool calls, settled approvals, streamed messages) stays bounded
//! however long the stream runs.

use std::collections::hash_map::RandomState;
use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasher;

/// The last `capacity` distinct ids inserted; the oldest is forgotten first.
///
/// An id is remembered by a 64-bit hash under keys drawn for this run, not by its text:
/// 4,096 tool call ids then cost about 100 KiB instead of over 1 MiB, so memory stays flat
/// however long the stream. Two ids are confused with a chance of about 2^-52 per lookup
/// when full, and no input can aim for that, since the keys are secret.
#[derive(Debug, Clone)]
pub struct Recent {
    keys: RandomState,
    set: HashSet<u64>,
    order: VecDeque<u64>,
    capacity: usize,
}

impl Recent {
    /// An empty set remembering at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Recent {
        Recent { keys: RandomState::new(), set: HashSet::new(), order: VecDeque::new(), capacity: capacity.max(1) }
    }

    /// True when `id` is among the remembered ids.
    pub fn contains(&self, id: &str) -> bool {
        self.set.contains(&self.keys.hash_one(id))
    }

    /// Remembers `id`, forgetting the oldest id when full. Returns false when it was
    /// already remembered; its place in the order is then kept.
    pub fn insert(&mut self, id: &str) -> bool {
        let key = self.keys.hash_one(id);
        if self.set.contains(&key) {
            return false;
        }
        if self.order.len() == self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.set.insert(key);
        self.order.push_back(key);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn forgets_the_oldest_when_full() {
        let mut r = Recent::new(2);
        assert!(r.insert("a") && r.insert("b"));
        assert!(!r.insert("a"), "a repeat is not a new id");
        assert!(r.insert("c"));
        assert!(!r.contains("a") && r.contains("b") && r.contains("c"));
    }

    #[test]
    fn memory_stays_at_capacity() {
        let mut r = Recent::new(8);
        for i in 0..10_000 {
            r.insert(&format!("tool-{i}"));
        }
        assert_eq!((r.set.len(), r.order.len()), (8, 8));
        assert!(r.contains("tool-9999") && !r.contains("tool-9991"));
    }
}
