//! The watch cache: [`Cacher`], a [`Storage`] in front of another one that answers
//! stale-tolerant reads and watches of one prefix from memory, as kube-apiserver's
//! `pkg/storage/cacher` does in front of etcd.
//!
//! - **Feed** (`feed`): one list of the prefix at one revision, then one inner watch
//!   from that revision, applied in order. A failed inner watch is resumed from the
//!   cache's revision (the state stays valid); only `Expired` forces a re-list.
//! - **State** (`state`): the current [`KeyValue`] of every key under the prefix (each
//!   with a [`crate::ValueMemo`] that every read of that state shares) and a
//!   window of the latest events, bounded by count ([`CacherConfig::event_window`]), by
//!   bytes (the cacher's own [`CacherConfig::budget_bytes`] and a
//!   [`WatchCacheBudget`] shared by all the cachers of a server), by age
//!   ([`CacherConfig::event_horizon`], keeping [`CacherConfig::min_events`]) and by
//!   the inner storage's compaction. The oldest events go first; the feed task sweeps
//!   the window on a timer, so time and compaction release memory without new writes.
//! - **Reads**: `ReadAt::Any` and `ReadAt::NotOlderThan` are served from memory, the
//!   latter once the cache has caught up (waiting at most
//!   [`CacherConfig::freshness_timeout`]); `Latest` and `Exact` go to the inner storage,
//!   so consistent reads and pagination stay exact.
//! - **Watches** (`watchers`): served from the window when it reaches back far enough,
//!   otherwise by the inner storage (which replays its own history or says `Expired`);
//!   every cached watcher has a queue bounded by count and by bytes, and is cut off,
//!   never waited for, when
//!   it falls behind.
//!
//! Everything outside the prefix, every write, and the revision queries go straight to
//! the inner storage, so the API layer cannot tell a `Cacher` from the storage itself.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kapi_storage::StorageError> {
//! use std::sync::Arc;
//! use kapi_storage::{Cacher, CacherConfig, EmbeddedStorage, ListRequest, ReadAt, Storage};
//!
//! let inner: Arc<dyn Storage> =
//!     Arc::new(EmbeddedStorage::open(std::path::Path::new("/var/lib/kapi"))?);
//! let widgets = Cacher::new(
//!     inner.clone(),
//!     "/registry/example.kapi.dev/widgets/",
//!     CacherConfig::default(),
//! );
//! let page = widgets
//!     .list(&ListRequest {
//!         prefix: "/registry/example.kapi.dev/widgets/default/".to_string(),
//!         read_at: ReadAt::Any,
//!         ..ListRequest::default()
//!     })
//!     .await?;
//! # let _ = page;
//! widgets.close().await?;
//! inner.close().await?;
//! # Ok(()) }
//! ```

mod budget;
mod feed;
mod state;
mod watchers;

pub use self::budget::WatchCacheBudget;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use self::budget::Account;
use self::state::{Evicted, Limits, State};
use self::watchers::{CutOffReason, QueueLimits, Watchers};
use crate::error::StorageError;
use crate::interface::{
    Deleted, Event, KeyValue, ListRequest, ListResponse, ReadAt, Result, Revision, Storage,
    WatchStream,
};

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

/// What a [`Cacher`] has done since it started, for tests and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacherStats {
    /// Reads (get and list) of the prefix answered from memory.
    pub reads_from_cache: u64,
    /// Reads of the prefix passed to the inner storage (`Latest`, `Exact`, a cache not
    /// ready or not caught up in time).
    pub reads_delegated: u64,
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
struct Counters {
    reads_from_cache: AtomicU64,
    reads_delegated: AtomicU64,
    watches_from_cache: AtomicU64,
    watches_delegated: AtomicU64,
    watchers_cut_off: AtomicU64,
    lists: AtomicU64,
    rewatches: AtomicU64,
    evicted_by_count: AtomicU64,
    evicted_by_bytes: AtomicU64,
    evicted_by_compaction: AtomicU64,
    evicted_by_age: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// What readers wait on: whether the feed is live, and the revision the cache is at.
#[derive(Clone, Copy, Debug, Default)]
struct Freshness {
    ready: bool,
    revision: Revision,
}

/// The cache's state and its watchers, under one lock so that a watch's replay and its
/// registration see the same revision as the feed's fan-out (no gap, no duplicate).
#[derive(Debug)]
struct Core {
    state: State,
    watchers: Watchers,
    /// The feed saw `Expired`: the state must be rebuilt by a list before it serves
    /// new watches.
    relist: bool,
    /// The cacher was closed: no new watchers.
    closed: bool,
}

/// What the [`Cacher`], its feed task and nothing else share.
struct Shared {
    inner: Arc<dyn Storage>,
    prefix: String,
    config: CacherConfig,
    core: RwLock<Core>,
    freshness: watch::Sender<Freshness>,
    closed: watch::Sender<bool>,
    /// The highest revision written through this cacher under its prefix: `Any` reads
    /// wait for the cache to reach it, so a client reads its own writes.
    written: AtomicI64,
    stats: Counters,
    /// What the window holds in bytes (the state charges it; encodings bill it).
    account: Arc<Account>,
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, Core> {
        self.core.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Core> {
        self.core.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where the feed's next inner watch starts: the cache's revision, or `None` when it
    /// must list first.
    fn resume_revision(&self) -> Option<Revision> {
        let core = self.read();
        (core.state.is_initialised() && !core.relist).then(|| core.state.revision())
    }

    /// The state can no longer be continued: the next feed run lists.
    fn needs_relist(&self) {
        self.write().relist = true;
    }

    /// Replaces the state with a fresh list. Watchers of the old state are cut off:
    /// events between its revision and the list's may be lost to them.
    fn reset(&self, items: Vec<KeyValue>, revision: Revision) {
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
    fn apply(&self, event: Event) {
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
    fn trim(&self, now: tokio::time::Instant, compacted: Option<Revision>) {
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
    fn advance(&self, revision: Revision) {
        let mut core = self.write();
        if core.state.advance(revision) {
            core.watchers.advance(revision);
            drop(core);
            self.freshness.send_modify(|f| f.revision = revision);
        }
    }

    fn set_ready(&self, ready: bool) {
        self.freshness.send_if_modified(|f| {
            let changed = f.ready != ready;
            f.ready = ready;
            changed
        });
    }

    /// Stops the feed and ends every cached watch; later calls are refused.
    fn shutdown(&self) {
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

fn closed_error() -> StorageError {
    StorageError::Unavailable {
        message: "the watch cache is closed".to_string(),
        source: None,
    }
}

/// The watch cache: a [`Storage`] that serves reads and watches of one prefix from
/// memory and passes everything else to the inner storage it wraps.
///
/// Which calls are served from memory:
/// - `get`/`list` under the prefix with [`ReadAt::Any`], once the cache is ready and
///   has seen every write made through this `Cacher` (read-your-writes; it waits at
///   most [`CacherConfig::freshness_timeout`], then asks the inner storage);
/// - `get`/`list` under the prefix with [`ReadAt::NotOlderThan`], once the cache has
///   seen that revision (same bound; a revision the inner storage has not reached by
///   then is its to answer, `TooLargeRevision`);
/// - `watch` of the prefix or any prefix under it from a revision the event window
///   still covers. An older revision is watched on the inner storage, which replays
///   its history (the embedded backend keeps it until compaction) or answers
///   `Expired`. A revision below the inner storage's compacted one is `Expired` in
///   both cases, as the backends promise.
///
/// While the cache is not ready (before its first list, or while the feed has no live
/// inner watch) reads are passed to the inner storage. Listed revisions are the cache's
/// revision: continuing a cached page with `Exact(revision)` reads the same snapshot
/// from the inner storage.
///
/// [`Cacher::close`] (or dropping the `Cacher`) stops the feed, ends every watch it
/// returned and refuses later calls with `Unavailable`; it does not close the inner
/// storage, which its owner closes.
pub struct Cacher {
    shared: Arc<Shared>,
    feed: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Cacher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let freshness = *self.shared.freshness.borrow();
        f.debug_struct("Cacher")
            .field("prefix", &self.shared.prefix)
            .field("ready", &freshness.ready)
            .field("revision", &freshness.revision)
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Cacher {
    /// Caches the keys under `prefix` (end it with `/`) of `inner` and starts the feed
    /// task, which lists and then watches the prefix. The cache is ready once the first
    /// list is done and the inner watch runs; until then reads are passed to `inner`.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (the feed is a tokio task).
    pub fn new(inner: Arc<dyn Storage>, prefix: &str, config: CacherConfig) -> Self {
        let account = Arc::new(Account::new(
            config.budget_bytes,
            config.total_budget.clone(),
        ));
        let limits = Limits {
            max_events: config.event_window,
            horizon: config.event_horizon,
            min_events: config.min_events,
        };
        let shared = Arc::new(Shared {
            inner,
            prefix: prefix.to_string(),
            core: RwLock::new(Core {
                state: State::new(limits, account.clone()),
                watchers: Watchers::default(),
                relist: false,
                closed: false,
            }),
            config,
            freshness: watch::Sender::new(Freshness::default()),
            closed: watch::Sender::new(false),
            written: AtomicI64::new(0),
            stats: Counters::default(),
            account,
        });
        let feed = tokio::spawn(feed::run(shared.clone()));
        Self {
            shared,
            feed: Mutex::new(Some(feed)),
        }
    }

    /// The cached prefix.
    pub fn prefix(&self) -> &str {
        &self.shared.prefix
    }

    /// The settings the cacher was created with.
    pub fn config(&self) -> &CacherConfig {
        &self.shared.config
    }

    /// Whether the cache has listed and its inner watch is live.
    pub fn is_ready(&self) -> bool {
        self.shared.freshness.borrow().ready
    }

    /// The revision the cache has caught up to (0 before its first list).
    pub fn revision(&self) -> Revision {
        self.shared.freshness.borrow().revision
    }

    /// Waits until the cache is ready, at most `timeout`; returns whether it is.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let mut freshness = self.shared.freshness.subscribe();
        matches!(
            tokio::time::timeout(timeout, freshness.wait_for(|f| f.ready)).await,
            Ok(Ok(_))
        )
    }

    /// What the cacher has done so far.
    pub fn stats(&self) -> CacherStats {
        let c = &self.shared.stats;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacherStats {
            reads_from_cache: load(&c.reads_from_cache),
            reads_delegated: load(&c.reads_delegated),
            watches_from_cache: load(&c.watches_from_cache),
            watches_delegated: load(&c.watches_delegated),
            watchers_cut_off: load(&c.watchers_cut_off),
            lists: load(&c.lists),
            rewatches: load(&c.rewatches),
            evicted_by_count: load(&c.evicted_by_count),
            evicted_by_bytes: load(&c.evicted_by_bytes),
            evicted_by_compaction: load(&c.evicted_by_compaction),
            evicted_by_age: load(&c.evicted_by_age),
        }
    }

    /// How many events the window holds.
    pub fn window_events(&self) -> usize {
        self.shared.read().state.window_len()
    }

    /// How many bytes the window holds, as charged against the budgets.
    pub fn window_bytes(&self) -> usize {
        self.shared.account.used()
    }

    /// The oldest revision a watch is served from memory after (older ones go to the
    /// inner storage).
    pub fn window_start(&self) -> Revision {
        self.shared.read().state.window_start()
    }

    /// How many watches are currently served from the cache.
    pub fn cached_watchers(&self) -> usize {
        self.shared.read().watchers.live()
    }

    /// Stops the feed and ends every watch; the inner storage stays open. Idempotent.
    pub async fn close(&self) -> Result<()> {
        self.shared.shutdown();
        let feed = self
            .feed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(feed) = feed {
            // The feed returns as soon as it sees the close; an error means it panicked,
            // and it has stopped all the same.
            let _ = feed.await;
        }
        Ok(())
    }

    fn check_open(&self) -> Result<()> {
        if *self.shared.closed.borrow() {
            return Err(closed_error());
        }
        Ok(())
    }

    /// Whether a key, or every key under a prefix, is cached.
    fn covers(&self, key_or_prefix: &str) -> bool {
        key_or_prefix.starts_with(&self.shared.prefix)
    }

    /// Records a write through this cacher, for read-your-writes on `Any` reads.
    fn wrote(&self, key: &str, revision: Revision) {
        if self.covers(key) {
            self.shared.written.fetch_max(revision, Ordering::AcqRel);
        }
    }

    /// Whether a read at `read_at` may be answered from memory: the cache is ready and
    /// has caught up to what `read_at` asks for, waiting for it (bounded) if needed.
    async fn fresh_enough(&self, read_at: ReadAt) -> bool {
        let wanted = match read_at {
            ReadAt::Latest | ReadAt::Exact(_) => return false,
            ReadAt::Any => self.shared.written.load(Ordering::Acquire),
            ReadAt::NotOlderThan(revision) => revision,
        };
        let fresh = |f: &Freshness| f.ready && f.revision >= wanted;
        let mut freshness = self.shared.freshness.subscribe();
        {
            let now = freshness.borrow_and_update();
            if !now.ready {
                return false;
            }
            if fresh(&now) {
                return true;
            }
        }
        // Waited for even when the inner storage has not reached it yet, as
        // kube-apiserver's cacher waits: a write may bring it within the bound; if not,
        // the inner storage answers (TooLargeRevision, a 504).
        matches!(
            tokio::time::timeout(
                self.shared.config.freshness_timeout,
                freshness.wait_for(fresh)
            )
            .await,
            Ok(Ok(_))
        )
    }

    /// A watch of the inner storage that also ends when the cacher closes.
    async fn delegated_watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        let stream = self.shared.inner.watch(prefix, after).await?;
        let mut closed = self.shared.closed.subscribe();
        let closing = async move {
            let _ = closed.wait_for(|closed| *closed).await;
        };
        Ok(Box::pin(stream.take_until(closing)))
    }
}

impl Drop for Cacher {
    fn drop(&mut self) {
        // The feed task holds the shared state: stop it, or it would run forever.
        self.shared.shutdown();
    }
}

#[async_trait]
impl Storage for Cacher {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.check_open()?;
        let created = self.shared.inner.create(key, value).await?;
        self.wrote(key, created.mod_revision);
        Ok(created)
    }

    /// Delegated; the cache learns of the expiry from its watch, as of any delete.
    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        self.check_open()?;
        let created = self.shared.inner.create_with_ttl(key, value, ttl).await?;
        self.wrote(key, created.mod_revision);
        Ok(created)
    }

    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        self.check_open()?;
        if !self.covers(key) {
            return self.shared.inner.get(key, read_at).await;
        }
        if self.fresh_enough(read_at).await {
            let core = self.shared.read();
            if core.state.is_initialised() {
                bump(&self.shared.stats.reads_from_cache, 1);
                return Ok(core.state.get(key));
            }
        }
        bump(&self.shared.stats.reads_delegated, 1);
        self.shared.inner.get(key, read_at).await
    }

    async fn list(&self, request: &ListRequest) -> Result<ListResponse> {
        self.check_open()?;
        if !self.covers(&request.prefix) {
            return self.shared.inner.list(request).await;
        }
        if self.fresh_enough(request.read_at).await {
            let core = self.shared.read();
            if core.state.is_initialised() {
                bump(&self.shared.stats.reads_from_cache, 1);
                return Ok(core.state.list(request));
            }
        }
        bump(&self.shared.stats.reads_delegated, 1);
        self.shared.inner.list(request).await
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        self.check_open()?;
        let updated = self.shared.inner.update(key, value, expected).await?;
        self.wrote(key, updated.mod_revision);
        Ok(updated)
    }

    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue> {
        self.check_open()?;
        let updated = self
            .shared
            .inner
            .update_with_ttl(key, value, expected, ttl)
            .await?;
        self.wrote(key, updated.mod_revision);
        Ok(updated)
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        self.check_open()?;
        let deleted = self.shared.inner.delete(key, expected).await?;
        self.wrote(key, deleted.revision);
        Ok(deleted)
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        self.check_open()?;
        if !self.covers(prefix) {
            return self.delegated_watch(prefix, after).await;
        }
        // The window may reach back past the inner storage's compaction: what the
        // backends refuse, the cache refuses too.
        let compacted = self.shared.inner.compacted_revision().await?;
        if after < compacted {
            return Err(StorageError::Expired {
                requested: after,
                compacted,
            });
        }
        {
            let mut core = self.shared.write();
            if core.closed {
                return Err(closed_error());
            }
            // Learnt for free: the next trim drops what it compacted.
            core.state.set_compacted(compacted);
            if core.state.is_initialised() && !core.relist && after >= core.state.window_start() {
                let replay = core.state.events_after(prefix, after);
                let revision = core.state.revision();
                let config = &self.shared.config;
                let limits = QueueLimits {
                    events: config.watcher_buffer,
                    bytes: config.watcher_buffer_bytes,
                    progress_interval: config.progress_interval,
                };
                let stream = core
                    .watchers
                    .register(prefix, after, replay, revision, limits);
                bump(&self.shared.stats.watches_from_cache, 1);
                return Ok(stream);
            }
        }
        // Older than the window (or no state yet): the inner storage may still replay it.
        bump(&self.shared.stats.watches_delegated, 1);
        self.delegated_watch(prefix, after).await
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.check_open()?;
        self.shared.inner.current_revision().await
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.check_open()?;
        self.shared.inner.compact(revision).await?;
        // What the window holds at or below it serves no watch any more.
        self.shared
            .trim(tokio::time::Instant::now(), Some(revision));
        Ok(())
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        self.check_open()?;
        self.shared.inner.compacted_revision().await
    }

    async fn close(&self) -> Result<()> {
        Cacher::close(self).await
    }
}

#[cfg(test)]
mod tests;
