//! A set of ids that remembers only the most recent ones, so that state kept to absorb late
//! or repeated events (ended tool calls, settled approvals, streamed messages) stays bounded
//! however long the stream runs.

use std::collections::{HashSet, VecDeque};

/// The last `capacity` distinct ids inserted; the oldest is forgotten first.
#[derive(Debug, Clone)]
pub struct Recent {
    set: HashSet<String>,
    order: VecDeque<String>,
    capacity: usize,
}

impl Recent {
    /// An empty set remembering at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Recent {
        Recent { set: HashSet::new(), order: VecDeque::new(), capacity: capacity.max(1) }
    }

    /// True when `id` is among the remembered ids.
    pub fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }

    /// Remembers `id`, forgetting the oldest id when full. Returns false when it was
    /// already remembered; its place in the order is then kept.
    pub fn insert(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() == self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        self.set.insert(id.to_owned());
        self.order.push_back(id.to_owned());
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
