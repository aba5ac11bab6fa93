//! What the [`Cacher`] and its feed task share: the cache's state and
//! watchers under one lock, the freshness readers wait on, and the operations the feed
//! applies to them (reset, apply, trim, advance, shutdown).

use std::sync::atomic::AtomicI64;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::watch;

use super::CacherConfig;
use super::budget::Account;
use super::revisions::RevisionReads;
use super::state::{Evicted, State};
use super::stats::{Counters, bump};
use super::watchers::{CutOffReason, Watchers};
use crate::interface::StorageError;
use crate::interface::{Event, KeyValue, ProgressRequests, Revision, Storage};

#[cfg(doc)]
use super::Cacher;

/// What readers wait on: whether the feed is live, and the revision the cache is at.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Freshness {
    pub(super) ready: bool,
    pub(super) revision: Revision,
}

/// The cache's state and its watchers, under one lock so that a watch's replay and its
/// registration see the same revision as the feed's fan-out (no gap, no duplicate).
#[derive(Debug)]
pub(super) struct Core {
    pub(super) state: State,
    pub(super) watchers: Watchers,
    /// The feed saw `Expired`: the state must be rebuilt by a list before it serves
    /// new watches.
    pub(super) relist: bool,
    /// The cacher was closed: no new watchers.
    pub(super) closed: bool,
}

/// What the [`Cacher`], its feed task and nothing else share.
pub(super) struct Shared {
    pub(super) inner: Arc<dyn Storage>,
    pub(super) prefix: String,
    pub(super) config: CacherConfig,
    pub(super) core: RwLock<Core>,
    pub(super) freshness: watch::Sender<Freshness>,
    pub(super) closed: watch::Sender<bool>,
    /// The highest revision written through this cacher under its prefix: `Any` reads
    /// wait for the cache to reach it, so a client reads its own writes.
    pub(super) written: AtomicI64,
    pub(super) stats: Counters,
    /// What the window holds in bytes (the state charges it; encodings bill it).
    pub(super) account: Arc<Account>,
    /// Asks the feed's inner watch how far it has come (consistent reads).
    pub(super) progress: ProgressRequests,
    /// The inner storage's current revision, shared by concurrent consistent reads.
    pub(super) revisions: Arc<RevisionReads>,
}

impl Shared {
    pub(super) fn read(&self) -> RwLockReadGuard<'_, Core> {
        self.core.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn write(&self) -> RwLockWriteGuard<'_, Core> {
        self.core.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where the feed's next inner watch starts: the cache's revision, or `None` when it
    /// must list first.
    pub(super) fn resume_revision(&self) -> Option<Revision> {
        let core = self.read();
        (core.state.is_initialised() && !core.relist).then(|| core.state.revision())
    }

    /// The state can no longer be continued: the next feed run lists.
    pub(super) fn needs_relist(&self) {
        self.write().relist = true;
    }

    /// Replaces the state with a fresh list. Watchers of the old state are cut off:
    /// events between its revision and the list's may be lost to them.
    pub(super) fn reset(&self, items: Vec<KeyValue>, revision: Revision) {
        let mut core = self.write();
        let cut = core.watchers.cut_off_all(CutOffReason::Relisted);
        core.state.reset(items, revision);
        core.relist = false;
        drop(core);
        bump(&self.stats.watchers_cut_off, cut);
        bump(&self.stats.lists, 1);
        self.freshness.send_modify(|f| f.revision = revision);
    }

    /// Applies one event of the inner watch, hands it to the watchers, and trims the
    /// window.
    pub(super) fn apply(&self, event: Event) {
        let event = Arc::new(event);
        let now = tokio::time::Instant::now();
        let mut core = self.write();
        if core.closed || !core.state.apply(&event, now) {
            return;
        }
        let cut = core.watchers.dispatch(&event);
        let revision = core.state.revision();
        let evicted = core.state.trim(now);
        drop(core);
        self.count_evicted(evicted);
        if cut > 0 {
            bump(&self.stats.watchers_cut_off, cut);
            tracing::debug!(prefix = %self.prefix, cut, "cut off slow watchers");
        }
        self.freshness.send_modify(|f| f.revision = revision);
    }

    /// Trims the window at `now`, after learning the inner storage's compacted
    /// revision when `compacted` is given.
    pub(super) fn trim(&self, now: tokio::time::Instant, compacted: Option<Revision>) {
        let mut core = self.write();
        if let Some(compacted) = compacted {
            core.state.set_compacted(compacted);
        }
        let evicted = core.state.trim(now);
        drop(core);
        self.count_evicted(evicted);
    }

    /// Counts evictions; the events are dropped here, outside the lock (the last
    /// reference frees their memory).
    fn count_evicted(&self, evicted: Evicted) {
        let c = &self.stats;
        bump(&c.evicted_by_count, evicted.by_count);
        bump(&c.evicted_by_bytes, evicted.by_bytes);
        bump(&c.evicted_by_compaction, evicted.by_compaction);
        bump(&c.evicted_by_age, evicted.by_age);
        drop(evicted.events);
    }

    /// Moves the cache's revision forward on a progress notification.
    pub(super) fn advance(&self, revision: Revision) {
        let mut core = self.write();
        if core.state.advance(revision) {
            core.watchers.advance(revision);
            drop(core);
            self.freshness.send_modify(|f| f.revision = revision);
        }
    }

    pub(super) fn set_ready(&self, ready: bool) {
        self.freshness.send_if_modified(|f| {
            let changed = f.ready != ready;
            f.ready = ready;
            changed
        });
    }

    /// Stops the feed and ends every cached watch; later calls are refused.
    pub(super) fn shutdown(&self) {
        self.closed.send_replace(true);
        self.set_ready(false);
        let mut core = self.write();
        core.closed = true;
        core.watchers.close_all();
        // A closed cache serves nothing: give its memory (and its share of the total
        // budget) back now.
        let evicted = core.state.clear_window();
        drop(core);
        drop(evicted);
    }
}

pub(super) fn closed_error() -> StorageError {
    StorageError::Unavailable {
        message: "the watch cache is closed".to_string(),
        source: None,
    }
}
