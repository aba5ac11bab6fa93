//! What a [`Cacher`] has done: the public [`CacherStats`] and the atomic
//! counters behind them.

use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(doc)]
use super::{Cacher, CacherConfig};

/// What a [`Cacher`] has done since it started, for tests and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacherStats {
    /// Reads (get and list) of the prefix answered from memory.
    pub reads_from_cache: u64,
    /// Reads of the prefix passed to the inner storage (`Latest`, `Exact` at a revision
    /// the state is not at, a cache not ready or not caught up in time).
    pub reads_delegated: u64,
    /// `Latest` reads answered from memory after the cache caught up with the inner
    /// storage's current revision (counted in `reads_from_cache` too).
    pub consistent_reads_from_cache: u64,
    /// `Exact` reads answered from memory because nothing under the prefix changed
    /// after their revision (counted in `reads_from_cache` too).
    pub exact_reads_from_cache: u64,
    /// `Latest` reads that waited for the cache to catch up and, when it did not in
    /// time, went to the inner storage (counted in `reads_delegated` too).
    pub consistent_read_fallbacks: u64,
    /// Watches of the prefix served from the event window.
    pub watches_from_cache: u64,
    /// Watches of the prefix passed to the inner storage (from before the window).
    pub watches_delegated: u64,
    /// Cached watchers cut off because they fell behind or the cache re-listed.
    pub watchers_cut_off: u64,
    /// Lists of the prefix by the feed, the first one included.
    pub lists: u64,
    /// Inner watches started again from the cache's revision, without a list.
    pub rewatches: u64,
    /// Events evicted from the window because it held [`CacherConfig::event_window`].
    pub evicted_by_count: u64,
    /// Events evicted from the window to keep within the byte budgets.
    pub evicted_by_bytes: u64,
    /// Events evicted from the window because the inner storage compacted them.
    pub evicted_by_compaction: u64,
    /// Events evicted from the window because they were older than the horizon.
    pub evicted_by_age: u64,
}

/// The atomic counters behind [`CacherStats`].
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) reads_from_cache: AtomicU64,
    pub(super) reads_delegated: AtomicU64,
    pub(super) consistent_reads_from_cache: AtomicU64,
    pub(super) exact_reads_from_cache: AtomicU64,
    pub(super) consistent_read_fallbacks: AtomicU64,
    pub(super) watches_from_cache: AtomicU64,
    pub(super) watches_delegated: AtomicU64,
    pub(super) watchers_cut_off: AtomicU64,
    pub(super) lists: AtomicU64,
    pub(super) rewatches: AtomicU64,
    pub(super) evicted_by_count: AtomicU64,
    pub(super) evicted_by_bytes: AtomicU64,
    pub(super) evicted_by_compaction: AtomicU64,
    pub(super) evicted_by_age: AtomicU64,
}

impl Counters {
    /// What the counters hold now.
    pub(super) fn snapshot(&self) -> CacherStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacherStats {
            reads_from_cache: load(&self.reads_from_cache),
            reads_delegated: load(&self.reads_delegated),
            consistent_reads_from_cache: load(&self.consistent_reads_from_cache),
            exact_reads_from_cache: load(&self.exact_reads_from_cache),
            consistent_read_fallbacks: load(&self.consistent_read_fallbacks),
            watches_from_cache: load(&self.watches_from_cache),
            watches_delegated: load(&self.watches_delegated),
            watchers_cut_off: load(&self.watchers_cut_off),
            lists: load(&self.lists),
            rewatches: load(&self.rewatches),
            evicted_by_count: load(&self.evicted_by_count),
            evicted_by_bytes: load(&self.evicted_by_bytes),
            evicted_by_compaction: load(&self.evicted_by_compaction),
            evicted_by_age: load(&self.evicted_by_age),
        }
    }
}

pub(super) fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}
