//! The settings of a [`Cacher`]: [`CacherConfig`], its builder methods,
//! and the defaults of its byte budgets and event horizon.

use std::sync::Arc;
use std::time::Duration;

#[cfg(doc)]
use super::Cacher;

use super::budget::WatchCacheBudget;
use super::feed;

/// The default of [`CacherConfig::budget_bytes`]: 64 MiB per resource.
pub const DEFAULT_BUDGET_BYTES: usize = 64 * 1024 * 1024;

/// The default total budget of a server's cachers (what kapi's registry gives the
/// [`WatchCacheBudget`] it shares): 512 MiB.
pub const DEFAULT_TOTAL_BUDGET_BYTES: usize = 512 * 1024 * 1024;

/// The default of [`CacherConfig::watcher_buffer_bytes`]: 16 MiB.
pub const DEFAULT_WATCHER_BUFFER_BYTES: usize = 16 * 1024 * 1024;

/// The default of [`CacherConfig::event_horizon`]: kube-apiserver's `eventFreshDuration`.
pub const DEFAULT_EVENT_HORIZON: Duration = Duration::from_secs(75);

/// Settings of a [`Cacher`].
///
/// The event window, from which watches of a recent revision start without asking the
/// inner storage, keeps the latest events within every one of these bounds, evicting the
/// oldest first: at most [`event_window`](Self::event_window) events, at most
/// [`budget_bytes`](Self::budget_bytes) bytes, within the shared
/// [`total_budget`](Self::total_budget), nothing at or below the inner storage's
/// compacted revision, and nothing older than [`event_horizon`](Self::event_horizon)
/// beyond the newest [`min_events`](Self::min_events). The byte budgets are hard: they
/// win over `min_events`, down to an empty window. A watch from a revision the window
/// no longer covers is served by the inner storage, which replays its history or
/// answers `Expired` (410 in the API), as before.
///
/// An event is charged for its key, value and previous value, a fixed overhead of a
/// few hundred bytes, and every encoding memoised on it ([`crate::Encodings`]), billed
/// as it is made. The current objects themselves (what lists are served from) are not
/// counted: the cache must hold them whatever the budget; nor are the encodings readers
/// memoise beside each of them ([`crate::ValueMemo`]), which live as long as the
/// object's state and exist only for the formats that were asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacherConfig {
    /// The most events under the prefix the window keeps. Default: 1024.
    pub event_window: usize,
    /// The most bytes this cacher's window holds (`--watch-cache-budget-bytes`).
    /// Default: [`DEFAULT_BUDGET_BYTES`], 64 MiB.
    pub budget_bytes: usize,
    /// A budget shared with other cachers (`--watch-cache-total-budget-bytes`): when
    /// the windows sharing it hold more, the cacher adding to them evicts its own
    /// oldest events, down to none. Default: `None`, no shared budget (kapi's registry
    /// shares one of [`DEFAULT_TOTAL_BUDGET_BYTES`] among all its cachers).
    pub total_budget: Option<Arc<WatchCacheBudget>>,
    /// How long an event stays in the window once there are more than
    /// [`CacherConfig::min_events`] (`--watch-cache-event-horizon`). Default:
    /// [`DEFAULT_EVENT_HORIZON`], 75 s, as kube-apiserver's `eventFreshDuration`.
    pub event_horizon: Duration,
    /// How many of the newest events the horizon leaves in the window, whatever their
    /// age (not the byte budgets). Default: 100, kube-apiserver's lower bound.
    pub min_events: usize,
    /// How often the feed task sweeps the window for events past the horizon.
    /// Default: 1 second.
    pub sweep_interval: Duration,
    /// How often, at most, a sweep asks the inner storage for its compacted revision
    /// (a quorum read on etcd), and only while the window holds events. Default: 5
    /// seconds.
    pub compaction_check_interval: Duration,
    /// How many events one watcher may have waiting before it is cut off with an
    /// `Unavailable` error (its replay from the window does not count). Default: 256.
    pub watcher_buffer: usize,
    /// How many bytes of events one watcher may have waiting (counted as the window
    /// counts them, without encodings) before it is cut off likewise; one event always
    /// fits. Events a watcher has not sent stay alive after the window evicted them:
    /// this bounds what watchers that stop reading hold. Default:
    /// [`DEFAULT_WATCHER_BUFFER_BYTES`], 16 MiB.
    pub watcher_buffer_bytes: usize,
    /// How long a cached watch may stay silent before it yields a
    /// [`crate::WatchItem::Progress`]. Default: 5 seconds.
    pub progress_interval: Duration,
    /// How long a `NotOlderThan` read (or an `Any` read after a write through this
    /// cacher) waits for the cache to catch up before it goes to the inner storage.
    /// Default: 3 seconds, as kube-apiserver's cacher.
    pub freshness_timeout: Duration,
    /// Whether `Latest` reads (no `resourceVersion` in the API) are served from memory
    /// once the cache has caught up with the inner storage's current revision, as
    /// kube-apiserver's `ConsistentListFromCache`; only where the inner storage
    /// [answers progress requests](crate::Storage::answers_progress_requests). Otherwise,
    /// or when the cache does not catch up within
    /// [`freshness_timeout`](Self::freshness_timeout), they go to the inner storage.
    /// Default: `true`.
    pub consistent_reads: bool,
    /// How many keys each page of the feed's list asks for. Default: 1000.
    pub list_page_size: usize,
    /// The first wait before the feed watches (or lists) again after a failure; it
    /// doubles up to [`CacherConfig::max_backoff`]. Default: 100 ms.
    pub min_backoff: Duration,
    /// The longest wait between two attempts of the feed. Default: 5 seconds.
    pub max_backoff: Duration,
}

impl Default for CacherConfig {
    fn default() -> Self {
        Self {
            event_window: 1024,
            budget_bytes: DEFAULT_BUDGET_BYTES,
            total_budget: None,
            event_horizon: DEFAULT_EVENT_HORIZON,
            min_events: 100,
            sweep_interval: Duration::from_secs(1),
            compaction_check_interval: Duration::from_secs(5),
            watcher_buffer: 256,
            watcher_buffer_bytes: DEFAULT_WATCHER_BUFFER_BYTES,
            progress_interval: Duration::from_secs(5),
            freshness_timeout: Duration::from_secs(3),
            consistent_reads: true,
            list_page_size: 1000,
            min_backoff: feed::MIN_BACKOFF,
            max_backoff: feed::MAX_BACKOFF,
        }
    }
}

impl CacherConfig {
    /// Sets [`CacherConfig::event_window`].
    pub fn with_event_window(mut self, events: usize) -> Self {
        self.event_window = events;
        self
    }

    /// Sets [`CacherConfig::budget_bytes`].
    pub fn with_budget_bytes(mut self, bytes: usize) -> Self {
        self.budget_bytes = bytes;
        self
    }

    /// Sets [`CacherConfig::total_budget`]: give every cacher that is to share it a
    /// clone of the same `Arc`.
    pub fn with_total_budget(mut self, budget: Arc<WatchCacheBudget>) -> Self {
        self.total_budget = Some(budget);
        self
    }

    /// Sets [`CacherConfig::event_horizon`].
    pub fn with_event_horizon(mut self, horizon: Duration) -> Self {
        self.event_horizon = horizon;
        self
    }

    /// Sets [`CacherConfig::min_events`].
    pub fn with_min_events(mut self, events: usize) -> Self {
        self.min_events = events;
        self
    }

    /// Sets [`CacherConfig::sweep_interval`].
    pub fn with_sweep_interval(mut self, interval: Duration) -> Self {
        self.sweep_interval = interval;
        self
    }

    /// Sets [`CacherConfig::compaction_check_interval`].
    pub fn with_compaction_check_interval(mut self, interval: Duration) -> Self {
        self.compaction_check_interval = interval;
        self
    }

    /// Sets [`CacherConfig::watcher_buffer`].
    pub fn with_watcher_buffer(mut self, events: usize) -> Self {
        self.watcher_buffer = events;
        self
    }

    /// Sets [`CacherConfig::watcher_buffer_bytes`].
    pub fn with_watcher_buffer_bytes(mut self, bytes: usize) -> Self {
        self.watcher_buffer_bytes = bytes;
        self
    }

    /// Sets [`CacherConfig::progress_interval`].
    pub fn with_progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }

    /// Sets [`CacherConfig::freshness_timeout`].
    pub fn with_freshness_timeout(mut self, timeout: Duration) -> Self {
        self.freshness_timeout = timeout;
        self
    }

    /// Sets [`CacherConfig::consistent_reads`].
    pub fn with_consistent_reads(mut self, from_memory: bool) -> Self {
        self.consistent_reads = from_memory;
        self
    }

    /// Sets [`CacherConfig::list_page_size`].
    pub fn with_list_page_size(mut self, keys: usize) -> Self {
        self.list_page_size = keys;
        self
    }

    /// Sets [`CacherConfig::min_backoff`] and [`CacherConfig::max_backoff`].
    pub fn with_backoff(mut self, min: Duration, max: Duration) -> Self {
        self.min_backoff = min;
        self.max_backoff = max;
        self
    }
}
