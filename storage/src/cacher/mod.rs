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
//!   [`CacherConfig::freshness_timeout`]). `Latest` (a consistent read) is served from
//!   memory once the cache has caught up with the inner storage's current revision, as
//!   kube-apiserver's `ConsistentListFromCache` (`revisions`: one revision read shared
//!   by the callers waiting for it, then a progress request to the feed's watch), where
//!   the inner storage [answers progress requests](Storage::answers_progress_requests);
//!   elsewhere, or when the cache does not catch up in time, it goes to the inner
//!   storage. `Exact` is served from memory only when nothing under the prefix changed
//!   after that revision (the next pages of a list read while the collection is
//!   quiet); otherwise the inner storage answers, so pagination stays exact.
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
mod config;
mod feed;
mod revisions;
mod shared;
mod state;
mod stats;
mod watchers;

pub use self::budget::WatchCacheBudget;
pub use self::config::{
    CacherConfig, DEFAULT_BUDGET_BYTES, DEFAULT_EVENT_HORIZON, DEFAULT_TOTAL_BUDGET_BYTES,
    DEFAULT_WATCHER_BUFFER_BYTES,
};
pub use self::stats::CacherStats;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use self::budget::Account;
use self::shared::{Core, Freshness, Shared, closed_error};
use self::state::{Limits, State};
use self::stats::{Counters, bump};
use self::watchers::{QueueLimits, Watchers};
use crate::interface::StorageError;
use crate::interface::{
    Deleted, KeyValue, ListRequest, ListResponse, ProgressRequests, ReadAt, Result, Revision,
    Storage, WatchStream,
};

/// The watch cache: a [`Storage`] that serves reads and watches of one prefix from
/// memory and passes everything else to the inner storage it wraps.
///
/// Which calls are served from memory:
/// - `get`/`list` under the prefix with [`ReadAt::Latest`], once the cache has caught up
///   with the inner storage's current revision, read after the call began (see
///   [`CacherConfig::consistent_reads`]);
/// - `get`/`list` under the prefix with [`ReadAt::Any`], once the cache is ready and
///   has seen every write made through this `Cacher` (read-your-writes; it waits at
///   most [`CacherConfig::freshness_timeout`], then asks the inner storage);
/// - `get`/`list` under the prefix with [`ReadAt::NotOlderThan`], once the cache has
///   seen that revision (same bound; a revision the inner storage has not reached by
///   then is its to answer, `TooLargeRevision`);
/// - `get`/`list` under the prefix with [`ReadAt::Exact`], when the event window
///   reaches back to that revision and holds no event after it: the state is then
///   the state at that revision (kube-apiserver serves such pages from its cache's
///   snapshots);
/// - `watch` of the prefix or any prefix under it from a revision the event window
///   still covers. An older revision is watched on the inner storage, which replays
///   its history (the embedded backend keeps it until compaction) or answers
///   `Expired`. A revision below the inner storage's compacted one is `Expired` in
///   both cases, as the backends promise.
///
/// While the cache is not ready (before its first list, or while the feed has no live
/// inner watch) reads are passed to the inner storage. Listed revisions are the cache's
/// revision: continuing a cached page with `Exact(revision)` reads the same snapshot,
/// from memory while nothing changed and from the inner storage after a change.
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
                state: State::new(prefix, limits, account.clone()),
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
            progress: ProgressRequests::new(),
            revisions: Arc::default(),
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
        self.shared.stats.snapshot()
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
            ReadAt::Exact(_) => return false,
            ReadAt::Latest => return self.caught_up_with_inner().await,
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

    /// For an `Exact` read: the cache, locked, when its state is the state at that
    /// revision ([`State::is_state_at`]).
    fn state_at(&self, read_at: ReadAt) -> Option<(RwLockReadGuard<'_, Core>, Revision)> {
        let ReadAt::Exact(revision) = read_at else {
            return None;
        };
        if !self.shared.freshness.borrow().ready {
            return None;
        }
        let core = self.shared.read();
        if !core.state.is_state_at(revision) {
            return None;
        }
        bump(&self.shared.stats.reads_from_cache, 1);
        bump(&self.shared.stats.exact_reads_from_cache, 1);
        Some((core, revision))
    }

    /// For a `Latest` read: whether the cache has caught up with the inner storage's
    /// current revision, read after this call began. While it has not, the feed's watch
    /// is asked for progress (again every [`PROGRESS_RETRY`]: a member of an etcd
    /// cluster may answer below it), for at most [`CacherConfig::freshness_timeout`].
    async fn caught_up_with_inner(&self) -> bool {
        let shared = &self.shared;
        if !shared.config.consistent_reads
            || !shared.inner.answers_progress_requests()
            || !shared.freshness.borrow().ready
        {
            return false;
        }
        let Some(wanted) = shared.revisions.current(&shared.inner).await else {
            return false;
        };
        let mut freshness = shared.freshness.subscribe();
        {
            let now = freshness.borrow_and_update();
            if !now.ready {
                return false;
            }
            if now.revision >= wanted {
                return true;
            }
        }
        let deadline = tokio::time::Instant::now() + shared.config.freshness_timeout;
        let settled = |f: &Freshness| !f.ready || f.revision >= wanted;
        loop {
            shared.progress.request(wanted);
            let retry = (tokio::time::Instant::now() + PROGRESS_RETRY).min(deadline);
            match tokio::time::timeout_at(retry, freshness.wait_for(settled)).await {
                Ok(Ok(now)) if now.ready => return true,
                // The feed lost its inner watch, or the cacher closed.
                Ok(_) => break,
                Err(_) if tokio::time::Instant::now() >= deadline => break,
                Err(_) => {}
            }
        }
        bump(&shared.stats.consistent_read_fallbacks, 1);
        false
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

/// How long a consistent read waits for the progress it asked for before asking again.
const PROGRESS_RETRY: Duration = Duration::from_millis(25);

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
        if let Some((core, _)) = self.state_at(read_at) {
            return Ok(core.state.get(key));
        }
        if self.fresh_enough(read_at).await {
            let core = self.shared.read();
            if core.state.is_initialised() {
                bump(&self.shared.stats.reads_from_cache, 1);
                if read_at == ReadAt::Latest {
                    bump(&self.shared.stats.consistent_reads_from_cache, 1);
                }
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
        if let Some((core, revision)) = self.state_at(request.read_at) {
            // The same state, at the revision asked for: the pages of one list carry one.
            let page = core.state.list(request);
            return Ok(ListResponse { revision, ..page });
        }
        if self.fresh_enough(request.read_at).await {
            let core = self.shared.read();
            if core.state.is_initialised() {
                bump(&self.shared.stats.reads_from_cache, 1);
                if request.read_at == ReadAt::Latest {
                    bump(&self.shared.stats.consistent_reads_from_cache, 1);
                }
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
