//! What the cache holds: the current state of every key under its prefix and a bounded
//! window of the latest events, both at one revision.
//!
//! The state is rebuilt from one list and then kept up to date by applying the inner
//! watch's events in revision order. The window lets a watch start from a recent
//! revision without asking the inner storage to replay its history.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use crate::interface::{Event, EventKind, KeyValue, ListRequest, ListResponse, Revision};

/// A key's state without the key.
#[derive(Clone, Debug)]
struct Cached {
    value: bytes::Bytes,
    create_revision: Revision,
    mod_revision: Revision,
}

impl Cached {
    fn with_key(&self, key: &str) -> KeyValue {
        KeyValue {
            key: key.to_string(),
            value: self.value.clone(),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
        }
    }
}

/// The cached keys and the event window.
#[derive(Debug, Default)]
pub(super) struct State {
    /// Whether a list has filled the state at least once (before that, nothing can be
    /// served from memory).
    initialised: bool,
    /// Key → current state, for every key under the cached prefix (the key is kept
    /// once, as the map's).
    items: BTreeMap<String, Cached>,
    /// The latest events under the cached prefix, in revision order.
    window: VecDeque<Arc<Event>>,
    /// The most events `window` keeps.
    window_size: usize,
    /// The oldest `after` a watch can be served from: every event after it is in
    /// `window` (or is still to come).
    window_start: Revision,
    /// The revision the state is at: every change up to it has been applied.
    revision: Revision,
}

impl State {
    /// An empty, uninitialised state whose window keeps up to `window_size` events.
    pub fn new(window_size: usize) -> Self {
        Self {
            window_size: window_size.max(1),
            ..Self::default()
        }
    }

    /// Whether the state was filled by a list.
    pub fn is_initialised(&self) -> bool {
        self.initialised
    }

    /// The revision every change up to which has been applied.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The oldest revision a watch can start after from the window.
    pub fn window_start(&self) -> Revision {
        self.window_start
    }

    /// How many events the window holds.
    #[cfg(test)]
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    /// Replaces everything with a fresh list taken at `revision`. The window starts
    /// empty: nothing before `revision` can be replayed from memory any more.
    pub fn reset(&mut self, items: Vec<KeyValue>, revision: Revision) {
        self.items = items
            .into_iter()
            .map(|kv| {
                let cached = Cached {
                    value: kv.value,
                    create_revision: kv.create_revision,
                    mod_revision: kv.mod_revision,
                };
                (kv.key, cached)
            })
            .collect();
        self.window.clear();
        self.window_start = revision;
        self.revision = revision;
        self.initialised = true;
    }

    /// Applies one event of the inner watch. Returns `false` (and changes nothing) for
    /// an event at or below the state's revision: already applied.
    pub fn apply(&mut self, event: &Arc<Event>) -> bool {
        if event.revision <= self.revision {
            return false;
        }
        match event.kind {
            EventKind::Deleted => {
                self.items.remove(&event.key);
            }
            EventKind::Created | EventKind::Modified => {
                // Events carry no create_revision: a key keeps the one it had, and a key
                // the map does not know was created by this event.
                let create_revision = match (event.kind, self.items.get(&event.key)) {
                    (EventKind::Modified, Some(old)) => old.create_revision,
                    _ => event.revision,
                };
                self.items.insert(
                    event.key.clone(),
                    Cached {
                        value: event.value.clone(),
                        create_revision,
                        mod_revision: event.revision,
                    },
                );
            }
        }
        self.window.push_back(event.clone());
        while self.window.len() > self.window_size {
            if let Some(evicted) = self.window.pop_front() {
                // Events after the evicted one are all still in the window.
                self.window_start = evicted.revision;
            }
        }
        self.revision = event.revision;
        true
    }

    /// Moves the revision forward without a change (a progress notification). Returns
    /// whether it moved.
    pub fn advance(&mut self, revision: Revision) -> bool {
        if revision <= self.revision {
            return false;
        }
        self.revision = revision;
        true
    }

    /// The window's events after `after` for keys under `prefix`, in revision order.
    /// The caller checked that `after >= window_start`.
    pub fn events_after(&self, prefix: &str, after: Revision) -> VecDeque<Arc<Event>> {
        let first = self.window.partition_point(|event| event.revision <= after);
        self.window
            .range(first..)
            .filter(|event| event.key.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// The current state of `key`.
    pub fn get(&self, key: &str) -> Option<KeyValue> {
        self.items.get(key).map(|cached| cached.with_key(key))
    }

    /// A list at the state's revision, with the same prefix, `start_key`, `limit` and
    /// `remaining` rules as the backends.
    pub fn list(&self, request: &ListRequest) -> ListResponse {
        let prefix = request.prefix.as_str();
        let start = match &request.start_key {
            Some(start) if start.as_str() > prefix => start.as_str(),
            _ => prefix,
        };
        // Zero means no limit, as in etcd.
        let limit = request.limit.filter(|&l| l > 0).unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut remaining = 0;
        for (key, kv) in self
            .items
            .range::<str, _>((Bound::Included(start), Bound::Unbounded))
        {
            if !key.starts_with(prefix) {
                break;
            }
            if items.len() < limit {
                items.push(kv.with_key(key));
            } else {
                remaining += 1;
            }
        }
        ListResponse {
            items,
            revision: self.revision,
            remaining,
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn event(kind: EventKind, key: &str, revision: Revision, value: &'static str) -> Arc<Event> {
        Arc::new(Event::new(
            kind,
            key.to_string(),
            revision,
            Bytes::from_static(value.as_bytes()),
            None,
        ))
    }

    fn list(prefix: &str, start: Option<&str>, limit: Option<usize>) -> ListRequest {
        ListRequest {
            prefix: prefix.to_string(),
            start_key: start.map(str::to_string),
            limit,
            ..ListRequest::default()
        }
    }

    #[test]
    fn events_keep_create_revision_and_window_bounds() {
        let mut state = State::new(2);
        state.reset(Vec::new(), 4);
        assert!(state.apply(&event(EventKind::Created, "/p/a", 5, "1")));
        assert!(state.apply(&event(EventKind::Modified, "/p/a", 6, "2")));
        assert!(!state.apply(&event(EventKind::Modified, "/p/a", 6, "2")));
        let a = state.get("/p/a").unwrap();
        assert_eq!((a.create_revision, a.mod_revision), (5, 6));
        assert_eq!(state.window_start(), 4);
        assert!(state.apply(&event(EventKind::Created, "/p/b", 7, "b")));
        // The create at 5 was evicted: watches can start after 5, not before.
        assert_eq!(state.window_start(), 5);
        assert_eq!(state.window_len(), 2);
        let after: Vec<_> = state
            .events_after("/p/", 5)
            .iter()
            .map(|e| e.revision)
            .collect();
        assert_eq!(after, [6, 7]);
        assert!(state.apply(&event(EventKind::Deleted, "/p/a", 8, "2")));
        assert_eq!(state.get("/p/a"), None);
        assert_eq!(state.revision(), 8);
        assert!(state.advance(10));
        assert!(!state.advance(9));
        assert_eq!(state.revision(), 10);
    }

    #[test]
    fn lists_page_like_the_backends() {
        let mut state = State::new(10);
        let kv = |key: &str| KeyValue {
            key: key.to_string(),
            value: Bytes::new(),
            create_revision: 1,
            mod_revision: 1,
        };
        state.reset(
            ["/p/a", "/p/a/1", "/p/a/2", "/p/ab/1", "/p/b/1", "/q/1"]
                .into_iter()
                .map(kv)
                .collect(),
            3,
        );
        let keys = |r: &ListResponse| r.items.iter().map(|kv| kv.key.clone()).collect::<Vec<_>>();
        let page = state.list(&list("/p/", None, Some(2)));
        assert_eq!(keys(&page), ["/p/a", "/p/a/1"]);
        assert_eq!((page.remaining, page.revision), (3, 3));
        let next = state.list(&list("/p/", Some("/p/a/1\0"), Some(2)));
        assert_eq!(keys(&next), ["/p/a/2", "/p/ab/1"]);
        assert_eq!(next.remaining, 1);
        assert_eq!(state.list(&list("/p/", None, Some(0))).items.len(), 5);
        assert_eq!(keys(&state.list(&list("/p/a/", None, None))).len(), 2);
        assert!(
            state
                .list(&list("/p/a/", Some("/p/b"), None))
                .items
                .is_empty()
        );
        assert_eq!(state.list(&list("/p/a/", Some("/a"), None)).items.len(), 2);
    }
}
