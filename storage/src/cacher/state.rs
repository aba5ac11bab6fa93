//! What the cache holds: the current state of every key under its prefix and a bounded
//! window of the latest events, both at one revision.
//!
//! The state is rebuilt from one list and then kept up to date by applying the inner
//! watch's events in revision order. The window lets a watch start from a recent
//! revision without asking the inner storage to replay its history.
//!
//! The window is bounded four ways, oldest events first (see [`State::trim`]): by
//! count, by bytes (the cacher's own budget and the total one, both hard), by the
//! inner storage's compaction (events at or below it serve no watch), and by age (past
//! the horizon, but the newest `min_events` stay).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use super::budget::{Account, event_bytes};
use crate::interface::{
    Event, EventKind, KeyValue, ListRequest, ListResponse, Meter, Revision, ValueMemo,
};

/// The bounds of the window other than bytes (those are the [`Account`]'s).
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// The most events it keeps.
    pub max_events: usize,
    /// Events older than this go, down to `min_events`.
    pub horizon: Duration,
    /// How many of the newest events the horizon leaves, whatever their age.
    pub min_events: usize,
}

/// One event of the window.
#[derive(Debug)]
struct Windowed {
    event: Arc<Event>,
    /// When the cache applied it.
    at: Instant,
    /// What it was charged before its encodings (those are billed as they come).
    bytes: usize,
}

/// Why events left the window, and the events themselves, to be dropped (and their
/// memory freed) once the cache's lock is released.
#[derive(Debug, Default)]
pub(super) struct Evicted {
    pub events: Vec<Arc<Event>>,
    /// Over [`Limits::max_events`].
    pub by_count: u64,
    /// Over the cacher's own byte budget or the total one.
    pub by_bytes: u64,
    /// At or below the inner storage's compacted revision.
    pub by_compaction: u64,
    /// Older than the horizon.
    pub by_age: u64,
}

/// A key's state without the key.
#[derive(Clone, Debug)]
struct Cached {
    value: bytes::Bytes,
    create_revision: Revision,
    mod_revision: Revision,
    /// What readers made of this state, shared by every read of it. Made by the first
    /// read: most of a large cache's objects are never read one by one, and an empty
    /// memo costs 80 bytes an object.
    memo: OnceLock<ValueMemo>,
}

impl Cached {
    fn new(value: bytes::Bytes, create_revision: Revision, mod_revision: Revision) -> Self {
        Self {
            value,
            create_revision,
            mod_revision,
            memo: OnceLock::new(),
        }
    }

    /// The key's state as a read returns it, with its full key (`prefix` and the
    /// map's key under it).
    fn with_key(&self, prefix: &str, key: &str) -> KeyValue {
        let mut full = String::with_capacity(prefix.len() + key.len());
        full.push_str(prefix);
        full.push_str(key);
        KeyValue {
            key: full,
            value: self.value.clone(),
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            memo: self.memo.get_or_init(ValueMemo::new).clone(),
        }
    }
}

/// The cached keys and the event window.
#[derive(Debug)]
pub(super) struct State {
    /// Whether a list has filled the state at least once (before that, nothing can be
    /// served from memory).
    initialised: bool,
    /// The cached prefix: every key of `items` is under it.
    prefix: String,
    /// Key → current state, for every key under the cached prefix. Keys are kept once,
    /// as the map's, without the prefix (`namespace/name`, not the 40-odd bytes of
    /// `/registry/<group>/<resource>/` again in each).
    items: BTreeMap<Box<str>, Cached>,
    /// The latest events under the cached prefix, in revision order.
    window: VecDeque<Windowed>,
    limits: Limits,
    /// What the window holds, in bytes, against which budgets.
    account: Arc<Account>,
    /// `account`, as the encodings of its events bill it.
    meter: Arc<dyn Meter>,
    /// The inner storage's compacted revision, as last learnt.
    compacted: Revision,
    /// The oldest `after` a watch can be served from: every event after it is in
    /// `window` (or is still to come).
    window_start: Revision,
    /// The revision the state is at: every change up to it has been applied.
    revision: Revision,
}

impl State {
    /// An empty, uninitialised state of the keys under `prefix`, whose window is
    /// bounded by `limits` and by the budgets of `account`.
    pub fn new(prefix: &str, limits: Limits, account: Arc<Account>) -> Self {
        let meter: Arc<dyn Meter> = account.clone();
        Self {
            initialised: false,
            prefix: prefix.to_string(),
            items: BTreeMap::new(),
            window: VecDeque::new(),
            limits: Limits {
                max_events: limits.max_events.max(1),
                ..limits
            },
            account,
            meter,
            compacted: 0,
            window_start: 0,
            revision: 0,
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

    /// Whether the state is also the state at the earlier (or same) `revision`: the
    /// window holds every event after `revision` (it starts at or before it) and has
    /// none after it, so nothing under the prefix changed since. Reads at that exact
    /// revision (the pages after the first of a paginated list) are then served from
    /// memory, as kube-apiserver serves them from its cache's snapshots. Below the
    /// compacted revision the inner storage's `Expired` stands.
    pub fn is_state_at(&self, revision: Revision) -> bool {
        self.initialised
            && (self.window_start..=self.revision).contains(&revision)
            && revision >= self.compacted
            && self
                .window
                .back()
                .is_none_or(|w| w.event.revision <= revision)
    }

    /// How many events the window holds.
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    /// Records the inner storage's compacted revision; the next [`State::trim`] drops
    /// the events at or below it.
    pub fn set_compacted(&mut self, revision: Revision) {
        self.compacted = self.compacted.max(revision);
    }

    /// Evicts the oldest event, uncharging it. Events after it are all still in the
    /// window, so watches can start after it.
    fn evict_front(&mut self) -> Option<Arc<Event>> {
        let evicted = self.window.pop_front()?;
        let encodings = evicted.event.encodings.stop_billing(&self.meter);
        self.account.sub(evicted.bytes + encodings);
        self.window_start = evicted.event.revision;
        Some(evicted.event)
    }

    /// Empties the window (a new list, or the cacher closing): nothing before the
    /// state's revision can be replayed from memory any more.
    pub fn clear_window(&mut self) -> Vec<Arc<Event>> {
        let mut evicted = Vec::with_capacity(self.window.len());
        while let Some(event) = self.evict_front() {
            evicted.push(event);
        }
        self.window_start = self.revision;
        evicted
    }

    /// Evicts the oldest events until the window is within its bounds: the count, the
    /// byte budgets (hard: down to an empty window), the compaction, then the horizon
    /// (which keeps the newest [`Limits::min_events`]).
    pub fn trim(&mut self, now: Instant) -> Evicted {
        let mut out = Evicted::default();
        while self.window.len() > self.limits.max_events {
            out.events.extend(self.evict_front());
            out.by_count += 1;
        }
        while (self.account.over_own() || self.account.over_total()) && !self.window.is_empty() {
            out.events.extend(self.evict_front());
            out.by_bytes += 1;
        }
        while self
            .window
            .front()
            .is_some_and(|w| w.event.revision <= self.compacted)
        {
            out.events.extend(self.evict_front());
            out.by_compaction += 1;
        }
        while self.window.len() > self.limits.min_events
            && self
                .window
                .front()
                .is_some_and(|w| now.saturating_duration_since(w.at) > self.limits.horizon)
        {
            out.events.extend(self.evict_front());
            out.by_age += 1;
        }
        out
    }

    /// Replaces everything with a fresh list taken at `revision`. The window starts
    /// empty: nothing before `revision` can be replayed from memory any more.
    pub fn reset(&mut self, items: Vec<KeyValue>, revision: Revision) {
        self.items = items
            .into_iter()
            .filter_map(|kv| {
                let key = kv.key.strip_prefix(self.prefix.as_str())?.into();
                let cached = Cached::new(kv.value, kv.create_revision, kv.mod_revision);
                Some((key, cached))
            })
            .collect();
        self.revision = revision;
        // Dropped under the caller's lock: a re-list is rare.
        self.clear_window();
        self.initialised = true;
    }

    /// Applies one event of the inner watch, received at `now`, and adds it to the
    /// window (the caller trims it). Returns `false` (and changes nothing) for an event
    /// at or below the state's revision: already applied.
    pub fn apply(&mut self, event: &Arc<Event>, now: Instant) -> bool {
        if event.revision <= self.revision {
            return false;
        }
        // The inner watch is of the prefix: a key outside it is not the cache's.
        match (event.kind, event.key.strip_prefix(self.prefix.as_str())) {
            (_, None) => {}
            (EventKind::Deleted, Some(key)) => {
                self.items.remove(key);
            }
            (EventKind::Created | EventKind::Modified, Some(key)) => {
                // Events carry no create_revision: a key keeps the one it had, and a key
                // the map does not know was created by this event. A known key is
                // changed in place, so its key is not copied again.
                match self.items.get_mut(key) {
                    Some(cached) => {
                        let create_revision = match event.kind {
                            EventKind::Modified => cached.create_revision,
                            _ => event.revision,
                        };
                        *cached = Cached::new(event.value.clone(), create_revision, event.revision);
                    }
                    None => {
                        let cached =
                            Cached::new(event.value.clone(), event.revision, event.revision);
                        self.items.insert(key.into(), cached);
                    }
                }
            }
        }
        let bytes = event_bytes(event);
        let memoised = event.encodings.bill_to(&self.meter).unwrap_or(0);
        self.account.add(bytes + memoised);
        self.window.push_back(Windowed {
            event: event.clone(),
            at: now,
            bytes,
        });
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
        let first = self.window.partition_point(|w| w.event.revision <= after);
        self.window
            .range(first..)
            .filter(|w| w.event.key.starts_with(prefix))
            .map(|w| w.event.clone())
            .collect()
    }

    /// The current state of `key`.
    pub fn get(&self, key: &str) -> Option<KeyValue> {
        let relative = key.strip_prefix(self.prefix.as_str())?;
        let cached = self.items.get(relative)?;
        Some(cached.with_key(&self.prefix, relative))
    }

    /// A list at the state's revision, with the same prefix, `start_key`, `limit` and
    /// `remaining` rules as the backends.
    pub fn list(&self, request: &ListRequest) -> ListResponse {
        let nothing = || ListResponse {
            items: Vec::new(),
            revision: self.revision,
            remaining: 0,
        };
        // The cacher lists from here only prefixes under its own.
        let Some(prefix) = request.prefix.strip_prefix(self.prefix.as_str()) else {
            return nothing();
        };
        let start = match &request.start_key {
            Some(start) if start.as_str() > request.prefix.as_str() => {
                match start.strip_prefix(self.prefix.as_str()) {
                    Some(relative) => relative,
                    // Past every key under the prefix.
                    None => return nothing(),
                }
            }
            _ => prefix,
        };
        // Zero means no limit, as in etcd.
        let limit = request.limit.filter(|&l| l > 0).unwrap_or(usize::MAX);
        let in_range = || {
            self.items
                .range::<str, _>((Bound::Included(start), Bound::Unbounded))
                .take_while(|(key, _)| key.starts_with(prefix))
        };
        // Counted first, so the page is allocated once rather than grown (and copied)
        // a doubling at a time; counting walks the tree without touching the values.
        let matching = in_range().count();
        let mut items = Vec::with_capacity(matching.min(limit));
        items.extend(
            in_range()
                .take(limit)
                .map(|(key, kv)| kv.with_key(&self.prefix, key)),
        );
        ListResponse {
            items,
            revision: self.revision,
            remaining: matching.saturating_sub(limit) as u64,
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // Give the bytes back to the total budget, which outlives this cacher.
        self.clear_window();
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::cacher::WatchCacheBudget;

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

    /// A state bounded by `max_events` only (no byte budget to speak of, no horizon).
    fn counted(max_events: usize) -> State {
        bounded(max_events, usize::MAX, None, Duration::MAX, 0)
    }

    fn bounded(
        max_events: usize,
        budget: usize,
        total: Option<Arc<WatchCacheBudget>>,
        horizon: Duration,
        min_events: usize,
    ) -> State {
        let limits = Limits {
            max_events,
            horizon,
            min_events,
        };
        State::new("", limits, Arc::new(Account::new(budget, total)))
    }

    /// Applies and trims, as the cacher does; whether it applied.
    fn apply(state: &mut State, event: &Arc<Event>) -> bool {
        apply_at(state, event, Instant::now())
    }

    fn apply_at(state: &mut State, event: &Arc<Event>, now: Instant) -> bool {
        let applied = state.apply(event, now);
        state.trim(now);
        applied
    }

    /// A `Modified` event of `key` at `revision` whose value and previous value are
    /// `size` bytes each.
    fn big(key: &str, revision: Revision, size: usize) -> Arc<Event> {
        Arc::new(Event::new(
            EventKind::Modified,
            key.to_string(),
            revision,
            Bytes::from(vec![b'v'; size]),
            Some(Bytes::from(vec![b'p'; size])),
        ))
    }

    fn revisions(state: &State) -> Vec<Revision> {
        state.window.iter().map(|w| w.event.revision).collect()
    }

    #[test]
    fn events_keep_create_revision_and_window_bounds() {
        let mut state = counted(2);
        state.reset(Vec::new(), 4);
        assert!(apply(
            &mut state,
            &event(EventKind::Created, "/p/a", 5, "1")
        ));
        assert!(apply(
            &mut state,
            &event(EventKind::Modified, "/p/a", 6, "2")
        ));
        assert!(!apply(
            &mut state,
            &event(EventKind::Modified, "/p/a", 6, "2")
        ));
        let a = state.get("/p/a").unwrap();
        assert_eq!((a.create_revision, a.mod_revision), (5, 6));
        assert_eq!(state.window_start(), 4);
        assert!(apply(
            &mut state,
            &event(EventKind::Created, "/p/b", 7, "b")
        ));
        // The create at 5 was evicted: watches can start after 5, not before.
        assert_eq!(state.window_start(), 5);
        assert_eq!(state.window_len(), 2);
        let after: Vec<_> = state
            .events_after("/p/", 5)
            .iter()
            .map(|e| e.revision)
            .collect();
        assert_eq!(after, [6, 7]);
        assert!(apply(
            &mut state,
            &event(EventKind::Deleted, "/p/a", 8, "2")
        ));
        assert_eq!(state.get("/p/a"), None);
        assert_eq!(state.revision(), 8);
        assert!(state.advance(10));
        assert!(!state.advance(9));
        assert_eq!(state.revision(), 10);
    }

    #[test]
    fn lists_page_like_the_backends() {
        // Keys are held under the cached prefix, whatever it is.
        for cached in ["", "/", "/p/"] {
            let limits = Limits {
                max_events: 10,
                horizon: Duration::MAX,
                min_events: 0,
            };
            let mut state = State::new(cached, limits, Arc::new(Account::new(usize::MAX, None)));
            let kv = |key: &str| KeyValue {
                key: key.to_string(),
                value: Bytes::new(),
                create_revision: 1,
                mod_revision: 1,
                memo: ValueMemo::default(),
            };
            state.reset(
                ["/p/a", "/p/a/1", "/p/a/2", "/p/ab/1", "/p/b/1", "/q/1"]
                    .into_iter()
                    .map(kv)
                    .collect(),
                3,
            );
            let keys =
                |r: &ListResponse| r.items.iter().map(|kv| kv.key.clone()).collect::<Vec<_>>();
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
            assert!(state.list(&list("/p/", Some("/q"), None)).items.is_empty());
            assert_eq!(state.list(&list("/p/a/", Some("/a"), None)).items.len(), 2);
            assert_eq!(
                state.get("/p/ab/1").map(|kv| kv.key).as_deref(),
                Some("/p/ab/1")
            );
            assert_eq!(state.get("/p/c"), None);
            // An event under the prefix is applied with its full key.
            assert!(apply(
                &mut state,
                &event(EventKind::Created, "/p/c", 4, "c")
            ));
            assert_eq!(keys(&state.list(&list("/p/c", None, None))), ["/p/c"]);
            // Outside the prefix (never asked of a cacher): nothing, and nothing kept.
            if cached == "/p/" {
                assert!(state.list(&list("/q/", None, None)).items.is_empty());
                assert!(apply(
                    &mut state,
                    &event(EventKind::Created, "/q/2", 5, "q")
                ));
                assert_eq!(state.get("/q/2"), None);
                assert_eq!(state.list(&list("/p/", None, None)).items.len(), 6);
            }
        }
    }

    #[test]
    fn the_byte_budget_evicts_the_oldest_events() {
        let size = 10_000;
        let one = event_bytes(&big("/p/a", 1, size));
        // Room for three events, not four.
        let mut state = bounded(1024, 3 * one + one / 2, None, Duration::MAX, 0);
        state.reset(Vec::new(), 1);
        for revision in 2..=6 {
            assert!(apply(&mut state, &big("/p/a", revision, size)));
        }
        assert_eq!(revisions(&state), [4, 5, 6]);
        assert_eq!(state.window_start(), 3);
        assert_eq!(state.account.used(), 3 * one);
        assert_eq!(state.events_after("/p/", 3).len(), 3);
        // An event bigger than the whole budget does not stay either: the budget is hard.
        assert!(apply(&mut state, &big("/p/a", 7, 4 * size)));
        assert!(state.window.is_empty());
        assert_eq!((state.window_start(), state.revision()), (7, 7));
        assert_eq!(state.account.used(), 0);
        // The state itself still has the latest value.
        assert_eq!(state.get("/p/a").unwrap().value.len(), 4 * size);
    }

    #[test]
    fn encodings_are_billed_as_they_are_made_and_released_with_the_event() {
        let mut state = bounded(1024, usize::MAX, None, Duration::MAX, 0);
        state.reset(Vec::new(), 1);
        let first = big("/p/a", 2, 100);
        assert!(apply(&mut state, &first));
        let fixed = event_bytes(&first);
        assert_eq!(state.account.used(), fixed);
        // A consumer encodes it (a copy of the event shares the memo).
        let copy = Event::clone(&first);
        copy.encodings
            .get_or_insert_with(1, || Bytes::from(vec![b'e'; 5000]));
        let memo = first.encodings.bytes();
        assert!(memo >= 5000, "{memo}");
        assert_eq!(state.account.used(), fixed + memo);
        // Asked again: memoised, not billed twice.
        copy.encodings.get_or_insert_with(1, || unreachable!());
        assert_eq!(state.account.used(), fixed + memo);
        // Evicted: the account is back to zero, and a later encoding by a watcher still
        // holding the event is not billed to it.
        state.clear_window();
        assert_eq!(state.account.used(), 0);
        copy.encodings
            .get_or_insert_with(2, || Bytes::from_static(b"late"));
        assert_eq!(state.account.used(), 0);
    }

    #[test]
    fn encodings_can_take_the_window_over_its_budget_until_the_next_trim() {
        let size = 1000;
        let one = event_bytes(&big("/p/a", 1, size));
        let mut state = bounded(1024, 3 * one, None, Duration::MAX, 0);
        state.reset(Vec::new(), 1);
        for revision in 2..=4 {
            assert!(apply(&mut state, &big("/p/a", revision, size)));
        }
        assert_eq!(revisions(&state), [2, 3, 4]);
        let newest = state.window.back().unwrap().event.clone();
        newest
            .encodings
            .get_or_insert_with(1, || Bytes::from(vec![b'e'; size]));
        assert!(state.account.over_own());
        let evicted = state.trim(Instant::now());
        assert_eq!((evicted.by_bytes, evicted.events.len()), (1, 1));
        assert_eq!(revisions(&state), [3, 4]);
        assert!(!state.account.over_own());
    }

    #[test]
    fn the_total_budget_is_shared_and_evicts_from_the_cacher_that_adds() {
        let size = 10_000;
        let one = event_bytes(&big("/p/a", 1, size));
        let total = Arc::new(WatchCacheBudget::new(4 * one + one / 2));
        let mut a = bounded(1024, usize::MAX, Some(total.clone()), Duration::MAX, 0);
        let mut b = bounded(1024, usize::MAX, Some(total.clone()), Duration::MAX, 0);
        a.reset(Vec::new(), 1);
        b.reset(Vec::new(), 1);
        for revision in 2..=4 {
            assert!(apply(&mut a, &big("/a/x", revision, size)));
        }
        assert_eq!(total.used(), 3 * one);
        assert!(apply(&mut b, &big("/b/x", 5, size)));
        assert_eq!(total.used(), 4 * one);
        // Over the total: b evicts its own oldest event, a keeps all of its own.
        assert!(apply(&mut b, &big("/b/x", 6, size)));
        assert_eq!(revisions(&a), [2, 3, 4]);
        assert_eq!(revisions(&b), [6]);
        assert_eq!(total.used(), 4 * one);
        // ... down to keeping nothing when its own event does not fit.
        assert!(apply(&mut b, &big("/b/x", 7, 2 * size)));
        assert!(b.window.is_empty());
        assert_eq!(b.window_start(), 7);
        assert_eq!(total.used(), 3 * one);
        // A state that goes away gives its bytes back.
        drop(a);
        assert_eq!(total.used(), 0);
    }

    #[test]
    fn the_horizon_evicts_old_events_but_keeps_min_events() {
        let mut state = bounded(1024, usize::MAX, None, Duration::from_secs(75), 3);
        state.reset(Vec::new(), 1);
        let start = Instant::now();
        for revision in 2..=7 {
            let at = start + Duration::from_secs(revision as u64);
            assert!(apply_at(&mut state, &big("/p/a", revision, 10), at));
        }
        // Nothing is old yet.
        assert_eq!(state.window_len(), 6);
        // 80 s later, the events at 2..=4 (applied 2..4 s after start) are past the
        // horizon, those after it are not.
        let evicted = state.trim(start + Duration::from_secs(80));
        assert_eq!(evicted.by_age, 3);
        assert_eq!(revisions(&state), [5, 6, 7]);
        // Much later, everything is old, but the newest three stay.
        let evicted = state.trim(start + Duration::from_secs(1000));
        assert_eq!(evicted.by_age, 0);
        assert_eq!(revisions(&state), [5, 6, 7]);
        assert_eq!(state.window_start(), 4);
    }

    #[test]
    fn the_byte_budget_beats_min_events() {
        let size = 10_000;
        let one = event_bytes(&big("/p/a", 1, size));
        let mut state = bounded(1024, 2 * one, None, Duration::from_secs(75), 100);
        state.reset(Vec::new(), 1);
        for revision in 2..=10 {
            assert!(apply(&mut state, &big("/p/a", revision, size)));
        }
        assert_eq!(revisions(&state), [9, 10]);
        assert_eq!(state.account.used(), 2 * one);
    }

    #[test]
    fn the_count_bound_stays_an_upper_bound() {
        let mut state = bounded(3, usize::MAX, None, Duration::MAX, 100);
        state.reset(Vec::new(), 1);
        for revision in 2..=10 {
            assert!(apply(&mut state, &big("/p/a", revision, 10)));
        }
        assert_eq!(revisions(&state), [8, 9, 10]);
    }

    #[test]
    fn compaction_drops_the_events_it_covers() {
        let mut state = bounded(1024, usize::MAX, None, Duration::MAX, 100);
        state.reset(Vec::new(), 1);
        for revision in 2..=10 {
            assert!(apply(&mut state, &big("/p/a", revision, 10)));
        }
        state.set_compacted(6);
        let evicted = state.trim(Instant::now());
        assert_eq!(evicted.by_compaction, 5);
        assert_eq!(revisions(&state), [7, 8, 9, 10]);
        // A watch from the compacted revision (the oldest the backends allow) is still
        // served whole from the window.
        assert_eq!(state.window_start(), 6);
        assert_eq!(state.events_after("/p/", 6).len(), 4);
        // A lower compacted revision learnt later changes nothing.
        state.set_compacted(3);
        assert_eq!(state.trim(Instant::now()).events.len(), 0);
        // Compacted past everything: the window empties.
        state.set_compacted(20);
        state.trim(Instant::now());
        assert!(state.window.is_empty());
        assert_eq!(state.account.used(), 0);
    }

    #[test]
    fn a_reset_releases_the_window() {
        let mut state = bounded(1024, usize::MAX, None, Duration::MAX, 0);
        state.reset(Vec::new(), 1);
        for revision in 2..=4 {
            assert!(apply(&mut state, &big("/p/a", revision, 100)));
        }
        assert!(state.account.used() > 0);
        state.reset(Vec::new(), 9);
        assert_eq!(state.account.used(), 0);
        assert_eq!((state.window_start(), state.revision()), (9, 9));
    }
}
