//! What the event windows may hold: each [`super::Cacher`]'s own byte budget, and one
//! [`WatchCacheBudget`] shared by every cacher of a server.
//!
//! A window event is charged for what it keeps alive: its key, value and previous
//! value, a fixed overhead, and the encodings consumers memoise on it
//! ([`crate::Encodings`]), which are billed to the cacher's [`Account`] as they are
//! made, by whoever makes them. An encoding that takes the window over a budget wakes
//! the cacher's sweeper, which evicts the oldest events until it is within both.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

use crate::interface::{Event, Meter};

/// A memory budget shared by the event windows of several [`super::Cacher`]s (all those
/// of one server): when their events together hold more than [`WatchCacheBudget::limit`]
/// bytes, the cacher that adds to them evicts its own oldest events, down to none.
///
/// Share it with an `Arc` through [`super::CacherConfig::with_total_budget`].
/// [`WatchCacheBudget::used`] is what the windows hold now, for metrics and tests.
/// Two budgets are equal only if they are the same one.
#[derive(Debug)]
pub struct WatchCacheBudget {
    limit: usize,
    used: AtomicUsize,
}

impl WatchCacheBudget {
    /// A budget of `limit` bytes, nothing used yet.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            used: AtomicUsize::new(0),
        }
    }

    /// The most bytes the windows sharing it may hold.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes the windows sharing it hold now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn over(&self) -> bool {
        self.used() > self.limit
    }
}

impl PartialEq for WatchCacheBudget {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for WatchCacheBudget {}

/// The fixed part of what one window event costs beyond its key and values: the
/// `Event` itself, its `Arc`, its memo, and its slot in the window.
const EVENT_OVERHEAD: usize = std::mem::size_of::<Event>() + 128;

/// What an event holds before any encoding: key, value, previous value, overhead.
pub(super) fn event_bytes(event: &Event) -> usize {
    event.key.len()
        + event.value.len()
        + event.prev_value.as_ref().map_or(0, |v| v.len())
        + EVENT_OVERHEAD
}

/// One cacher's share: the bytes its window holds, its own limit, and the total
/// budget it counts against too.
#[derive(Debug)]
pub(super) struct Account {
    used: AtomicUsize,
    limit: usize,
    total: Option<Arc<WatchCacheBudget>>,
    /// Wakes the sweeper when an encoding made outside the feed takes the window over
    /// a budget. One permit is kept while nobody waits: never a busy loop.
    pub over_budget: Notify,
}

impl Account {
    pub fn new(limit: usize, total: Option<Arc<WatchCacheBudget>>) -> Self {
        Self {
            used: AtomicUsize::new(0),
            limit,
            total,
            over_budget: Notify::new(),
        }
    }

    /// The bytes this cacher's window holds.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Whether the window holds more than its own limit.
    pub fn over_own(&self) -> bool {
        self.used() > self.limit
    }

    /// Whether the windows sharing the total budget hold more than it allows.
    pub fn over_total(&self) -> bool {
        self.total.as_ref().is_some_and(|total| total.over())
    }

    pub fn add(&self, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::Relaxed);
        if let Some(total) = &self.total {
            total.used.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    pub fn sub(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        if let Some(total) = &self.total {
            total.used.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        // The window gives its bytes back as it empties; whatever is left still counts
        // against the total budget, which outlives this cacher.
        if let Some(total) = &self.total {
            total.used.fetch_sub(self.used(), Ordering::Relaxed);
        }
    }
}

impl Meter for Account {
    fn charge(&self, bytes: usize) {
        self.add(bytes);
        if self.over_own() || self.over_total() {
            self.over_budget.notify_one();
        }
    }
}
