//! A bounded map whose entries expire: what kube keeps in its small TTL caches (the
//! authorization webhook's decisions, quota admission's live lookups).
//!
//! Bounded without an LRU: at the bound the expired entries go, and if none had, all
//! of them, which costs the next callers a miss each and never more memory.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// String keys to values, each until its own deadline, at most `capacity` of them.
#[derive(Debug)]
pub struct ExpiringMap<V> {
    entries: Mutex<HashMap<String, (V, Instant)>>,
    capacity: usize,
}

impl<V: Clone> ExpiringMap<V> {
    /// An empty map of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    /// The value under `key`, if it has not expired.
    pub fn get(&self, key: &str) -> Option<V> {
        self.lock()
            .get(key)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(value, _)| value.clone())
    }

    /// Keeps `value` under `key` for `ttl`.
    pub fn insert(&self, key: String, value: V, ttl: Duration) {
        let mut entries = self.lock();
        let now = Instant::now();
        if entries.len() >= self.capacity {
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(key, (value, now + ttl));
    }

    /// How many entries are held, expired ones included.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (V, Instant)>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_bound_holds() {
        let map = ExpiringMap::new(4);
        map.insert("a".into(), 1, Duration::from_secs(60));
        map.insert("gone".into(), 2, Duration::ZERO);
        assert_eq!(map.get("a"), Some(1));
        assert_eq!(map.get("gone"), None);
        assert_eq!(map.get("b"), None);
        for i in 0..10 {
            map.insert(format!("k{i}"), i, Duration::from_secs(60));
            assert!(map.len() <= 4, "{}", map.len());
        }
        assert_eq!(map.get("k9"), Some(9));
    }
}
