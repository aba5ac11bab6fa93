//! The embedded backend: [`EmbeddedStorage`], persistent and crash-safe on redb.
//!
//! One file, `kapi.redb`, holds the current state, one global revision counter and the
//! event history (see `tables`). Every write goes through a single writer thread that
//! batches concurrent writes into one durable redb transaction (`writer`: group
//! commit). Reads run on tokio's blocking pool in redb read transactions, so they see one
//! consistent snapshot and never block the async runtime; past states are rebuilt from
//! the history (`snapshot`). Watches replay the history and then follow the events the
//! writer sends to each watch they concern (`hub`, `watch`).
//!
//! Keys written with a time-to-live keep their deadline in the file too, so a restart
//! keeps it; the writer thread deletes them when it passes (at once on open for those
//! whose deadline passed while the store was closed).
//!
//! ```no_run
//! # async fn demo() -> Result<(), kapi_storage::StorageError> {
//! use kapi_storage::{EmbeddedStorage, ReadAt, Storage};
//!
//! let storage = EmbeddedStorage::open(std::path::Path::new("/var/lib/kapi"))?;
//! let created = storage.create("/registry/widgets/default/w1", "{}".into()).await?;
//! let read = storage.get("/registry/widgets/default/w1", ReadAt::Latest).await?;
//! assert_eq!(read, Some(created));
//! storage.close().await?;
//! # Ok(()) }
//! ```

mod history;
mod hub;
mod private;
mod snapshot;
mod tables;
mod watch;
mod writer;

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use redb::Database;
use tokio::sync::oneshot;

use self::tables::{
    EXPIRY, EXPIRY_QUEUE, HISTORY, KV, META, closed, earliest_deadline, redb_error,
};
use self::writer::{Counters, Op, Outcome, Request, Writer};
use crate::interface::StorageError;
use crate::interface::{
    Deleted, KeyValue, ListRequest, ListResponse, ProgressListener, ProgressRequests, ReadAt,
    Result, Revision, Storage, WatchStream,
};

/// The file [`EmbeddedStorage::open`] keeps its data in, inside the directory it is given.
pub const DATABASE_FILE: &str = "kapi.redb";

/// When the embedded backend compacts its history on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionPolicy {
    /// How often to compact.
    pub interval: Duration,
    /// How many revisions of history to keep below the current one: each run compacts
    /// to `current_revision - retain_revisions`.
    pub retain_revisions: i64,
}

impl Default for CompactionPolicy {
    /// Every five minutes (kube-apiserver's default interval), keeping 10 000 revisions.
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(300),
            retain_revisions: 10_000,
        }
    }
}

/// Settings of an [`EmbeddedStorage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddedConfig {
    /// How long a watch may stay silent before it yields a
    /// [`crate::WatchItem::Progress`]. Default: 5 seconds.
    pub progress_interval: Duration,
    /// How many events under its prefix a watch may fall behind the writer before it is
    /// ended with an error. Default: 4096.
    pub watch_buffer: usize,
    /// The most writes committed in one transaction. Default: 512.
    pub max_batch: usize,
    /// Background compaction; `None` keeps all history until [`Storage::compact`] is
    /// called. Default: [`CompactionPolicy::default`].
    pub compaction: Option<CompactionPolicy>,
    /// Bytes of redb's own page cache. Default: 8 MiB — reads the API can answer from
    /// memory come from the watch cache, so redb's default (1 GiB) only held a second
    /// copy of every object (issue #6's memory measurement); 64 MiB still cost 625 B an
    /// object at 100,000 objects and 16 MiB 168 B, with writes no faster (issue #25,
    /// BENCHMARKS.md). What writers read from it is the path through the tree.
    pub cache_size: usize,
}

impl Default for EmbeddedConfig {
    fn default() -> Self {
        Self {
            progress_interval: Duration::from_secs(5),
            watch_buffer: 4096,
            max_batch: 512,
            compaction: Some(CompactionPolicy::default()),
            cache_size: 8 * 1024 * 1024,
        }
    }
}

impl EmbeddedConfig {
    /// Sets [`EmbeddedConfig::cache_size`].
    pub fn with_cache_size(mut self, bytes: usize) -> Self {
        self.cache_size = bytes;
        self
    }

    /// Sets [`EmbeddedConfig::progress_interval`].
    pub fn with_progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }

    /// Sets [`EmbeddedConfig::watch_buffer`].
    pub fn with_watch_buffer(mut self, events: usize) -> Self {
        self.watch_buffer = events;
        self
    }

    /// Sets [`EmbeddedConfig::max_batch`].
    pub fn with_max_batch(mut self, writes: usize) -> Self {
        self.max_batch = writes;
        self
    }

    /// Compacts every `interval`, keeping `retain_revisions` revisions of history.
    pub fn with_compaction(mut self, interval: Duration, retain_revisions: i64) -> Self {
        self.compaction = Some(CompactionPolicy {
            interval,
            retain_revisions,
        });
        self
    }

    /// Turns background compaction off.
    pub fn without_compaction(mut self) -> Self {
        self.compaction = None;
        self
    }
}

/// The default backend: persistent and crash-safe on redb.
///
/// Cheap to clone: clones share the database, the writer and the watches. Call
/// [`EmbeddedStorage::close`] before dropping the last clone to finish queued writes and
/// end watches in order; the database file is released when the last clone (and the
/// last watch) is gone.
#[derive(Clone)]
pub struct EmbeddedStorage {
    inner: Arc<Inner>,
}

struct Inner {
    db: Arc<Database>,
    /// `None` once closed.
    requests: Mutex<Option<mpsc::Sender<Request>>>,
    /// Fires when the writer thread has stopped; taken by the first `close`.
    writer_stopped: tokio::sync::Mutex<Option<oneshot::Receiver<()>>>,
    hub: Arc<hub::Hub>,
    counters: Arc<Counters>,
    config: EmbeddedConfig,
}

impl std::fmt::Debug for EmbeddedStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStorage")
            .field(
                "revision",
                &self.inner.counters.revision.load(Ordering::Relaxed),
            )
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl EmbeddedStorage {
    /// Opens (or creates) the store in `dir`, in the file [`DATABASE_FILE`], with the
    /// default [`EmbeddedConfig`].
    pub fn open(dir: &Path) -> Result<Self> {
        Self::open_with(dir, EmbeddedConfig::default())
    }

    /// Opens (or creates) the store in `dir` with `config`. Blocks while redb opens the
    /// file (and repairs it after a crash), so async callers may want `spawn_blocking`.
    pub fn open_with(dir: &Path, config: EmbeddedConfig) -> Result<Self> {
        private::create_dir(dir)
            .map_err(|e| StorageError::internal(format!("cannot create {}", dir.display()), e))?;
        let path = dir.join(DATABASE_FILE);
        private::restrict_file(&path).map_err(|e| {
            StorageError::internal(format!("cannot restrict {}", path.display()), e)
        })?;
        let db = Database::builder()
            .set_cache_size(config.cache_size)
            .create(&path)
            .map_err(redb_error)?;
        // Create the tables so read transactions always find them.
        let txn = db.begin_write().map_err(redb_error)?;
        txn.open_table(KV).map_err(redb_error)?;
        txn.open_table(HISTORY).map_err(redb_error)?;
        txn.open_table(META).map_err(redb_error)?;
        txn.open_table(EXPIRY).map_err(redb_error)?;
        let next_expiry = earliest_deadline(&txn.open_table(EXPIRY_QUEUE).map_err(redb_error)?)
            .map_err(redb_error)?;
        txn.commit().map_err(redb_error)?;
        let db = Arc::new(db);

        let (current, compacted) = history::revisions(&db)?;
        let counters = Arc::new(Counters::default());
        counters.revision.store(current, Ordering::Release);
        counters.compacted.store(compacted, Ordering::Release);

        let hub = Arc::new(hub::Hub::new(current, config.watch_buffer));
        let (requests, receiver) = mpsc::channel();
        let (stopped_tx, stopped_rx) = oneshot::channel();
        let writer = Writer {
            db: db.clone(),
            requests: receiver,
            hub: hub.clone(),
            counters: counters.clone(),
            compaction: config.compaction,
            max_batch: config.max_batch.max(1),
            next_expiry: Cell::new(next_expiry),
        };
        let finished = hub.clone();
        std::thread::Builder::new()
            .name("kapi-redb-writer".to_string())
            .spawn(move || {
                writer.run();
                // Every write is in; the watches end after what they were sent.
                finished.finish();
                let _ = stopped_tx.send(());
            })
            .map_err(|e| StorageError::internal("cannot start the writer thread", e))?;

        Ok(Self {
            inner: Arc::new(Inner {
                db,
                requests: Mutex::new(Some(requests)),
                writer_stopped: tokio::sync::Mutex::new(Some(stopped_rx)),
                hub,
                counters,
                config,
            }),
        })
    }

    /// Shuts the store down: writes already queued are committed, later calls fail with
    /// [`StorageError::Unavailable`], and every watch stream ends (after the events
    /// committed before). Returns once the writer has stopped. Calling it again is a
    /// no-op.
    pub async fn close(&self) -> Result<()> {
        self.inner
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        self.inner.hub.close();
        let stopped = self.inner.writer_stopped.lock().await.take();
        if let Some(stopped) = stopped {
            // An error means the writer thread ended without signalling (it panicked):
            // it has stopped all the same.
            let _ = stopped.await;
        }
        Ok(())
    }

    /// How many write transactions were committed since the store was opened. Each
    /// holds one or more writes (group commit); for tests and metrics.
    pub fn commit_count(&self) -> u64 {
        self.inner.counters.commits.load(Ordering::Acquire)
    }

    /// The settings the store was opened with.
    pub fn config(&self) -> &EmbeddedConfig {
        &self.inner.config
    }

    /// Queues a write for the writer and waits for its own outcome.
    async fn submit(&self, op: Op) -> Result<Outcome> {
        let sender = self
            .inner
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(closed)?;
        let (reply, outcome) = oneshot::channel();
        sender.send(Request { op, reply }).map_err(|_| closed())?;
        drop(sender);
        outcome.await.map_err(|_| StorageError::Internal {
            message: "the embedded storage writer stopped before answering".to_string(),
            source: None,
        })?
    }

    /// Submits a create or update and returns the key's new state.
    async fn write(&self, op: Op) -> Result<KeyValue> {
        match self.submit(op).await? {
            Outcome::Written(kv) => Ok(kv),
            other => Err(unexpected(other)),
        }
    }

    /// Runs a read on the blocking pool.
    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Database) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let db = self.inner.db.clone();
        tokio::task::spawn_blocking(move || read(&db))
            .await
            .map_err(|e| StorageError::internal("embedded storage read task failed", e))?
    }

    /// A watch of `prefix` after `after`, answering `requests` when given.
    async fn watch_from(
        &self,
        prefix: &str,
        after: Revision,
        requests: Option<ProgressListener>,
    ) -> Result<WatchStream> {
        watch::watch(
            self.inner.db.clone(),
            &self.inner.hub,
            prefix,
            after,
            self.inner.config.progress_interval,
            requests,
        )
        .await
    }
}

fn unexpected(outcome: Outcome) -> StorageError {
    StorageError::Internal {
        message: format!("embedded storage writer answered {outcome:?} to another request"),
        source: None,
    }
}

#[async_trait]
impl Storage for EmbeddedStorage {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.write(Op::Create {
            key: key.to_string(),
            value,
            ttl: None,
        })
        .await
    }

    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        self.write(Op::Create {
            key: key.to_string(),
            value,
            ttl: Some(ttl),
        })
        .await
    }

    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        let key = key.to_string();
        self.read(move |db| snapshot::get(db, &key, read_at)).await
    }

    async fn list(&self, request: &ListRequest) -> Result<ListResponse> {
        let request = request.clone();
        self.read(move |db| snapshot::list(db, &request)).await
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        self.write(Op::Update {
            key: key.to_string(),
            value,
            expected,
            ttl: None,
        })
        .await
    }

    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue> {
        self.write(Op::Update {
            key: key.to_string(),
            value,
            expected,
            ttl: Some(ttl),
        })
        .await
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        match self
            .submit(Op::Delete {
                key: key.to_string(),
                expected,
            })
            .await?
        {
            Outcome::Deleted(deleted) => Ok(deleted),
            other => Err(unexpected(other)),
        }
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        self.watch_from(prefix, after, None).await
    }

    async fn watch_with_progress(
        &self,
        prefix: &str,
        after: Revision,
        requests: &ProgressRequests,
    ) -> Result<WatchStream> {
        self.watch_from(prefix, after, Some(requests.subscribe()))
            .await
    }

    /// Yes: the writer publishes each batch's revision after sending its events to
    /// every watch they concern, in revision order.
    fn answers_progress_requests(&self) -> bool {
        true
    }

    async fn current_revision(&self) -> Result<Revision> {
        Ok(self.inner.counters.revision.load(Ordering::Acquire))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        match self.submit(Op::Compact { revision }).await? {
            Outcome::Compacted => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        Ok(self.inner.counters.compacted.load(Ordering::Acquire))
    }

    async fn close(&self) -> Result<()> {
        EmbeddedStorage::close(self).await
    }
}
