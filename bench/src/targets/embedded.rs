//! The embedded store's own limit: kapi's `EmbeddedStorage` (redb, group commit) driven
//! through the `Storage` trait in this process, without HTTP, kapi's object handling
//! or its watch cache — create, get (the latest state), compare-and-swap update, and
//! list of a prefix of pre-loaded keys (as kapi's lists). Values are 1 KiB. The store
//! lives in a temporary directory for the run, opened as `kapi serve` opens it (no
//! background compaction).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use bytes::Bytes;
use kapi_storage::{EmbeddedConfig, EmbeddedStorage, ListRequest, ReadAt, Storage};

use crate::driver::{OpFuture, Sample, Worker};
use crate::targets::baseline::fixed_body;

/// The key prefix of single-key operations.
const PREFIX: &str = "/kapi-bench/objects/";

/// Concurrent creates while keys are pre-loaded (the writer batches them).
const PRELOAD_CONCURRENCY: usize = 64;

/// One operation on the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// Create a new key.
    Create,
    /// Read one key's latest state.
    Get,
    /// Replace a key's value if its revision is still the one last written.
    Update,
    /// List this many pre-loaded keys under one prefix (the latest state).
    ListPrefix(usize),
}

impl Operation {
    /// The single-key operations, in the order the report shows them.
    pub const SINGLE: [Operation; 3] = [Operation::Create, Operation::Get, Operation::Update];
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Create => f.write_str("create"),
            Operation::Get => f.write_str("get"),
            Operation::Update => f.write_str("CAS update"),
            Operation::ListPrefix(keys) => write!(f, "list prefix of {keys}"),
        }
    }
}

/// An embedded store in a temporary directory, removed when dropped (after
/// [`RawEmbedded::close`]).
pub struct RawEmbedded {
    storage: EmbeddedStorage,
    cells: AtomicU64,
    listed: Mutex<BTreeSet<usize>>,
    _dir: tempfile::TempDir,
}

impl RawEmbedded {
    /// Opens a fresh store in a temporary directory.
    pub async fn open() -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("kapi-bench-store-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?;
        let path = dir.path().to_path_buf();
        let storage = tokio::task::spawn_blocking(move || {
            EmbeddedStorage::open_with(&path, EmbeddedConfig::default().without_compaction())
        })
        .await
        .map_err(|e| format!("opening the embedded store: {e}"))?
        .map_err(|e| format!("opening the embedded store: {e}"))?;
        Ok(Self {
            storage,
            cells: AtomicU64::new(0),
            listed: Mutex::new(BTreeSet::new()),
            _dir: dir,
        })
    }

    /// Creates, for each size, that many keys under a prefix of its own; sizes already
    /// loaded are skipped.
    pub async fn preload_lists(&self, sizes: &[usize]) -> Result<(), String> {
        for &keys in sizes {
            if self.listed.lock().expect("not poisoned").contains(&keys) {
                continue;
            }
            let tasks: Vec<_> = (0..PRELOAD_CONCURRENCY)
                .map(|task| {
                    let storage = self.storage.clone();
                    tokio::spawn(async move {
                        for i in (task..keys).step_by(PRELOAD_CONCURRENCY) {
                            storage
                                .create(&format!("{}{i}", list_prefix(keys)), value())
                                .await
                                .map_err(|e| format!("preloading the store: {e}"))?;
                        }
                        Ok::<_, String>(())
                    })
                })
                .collect();
            for task in tasks {
                task.await
                    .map_err(|e| format!("a store preload task: {e}"))??;
            }
            self.listed.lock().expect("not poisoned").insert(keys);
        }
        Ok(())
    }

    /// One worker per client for `operation`, after the keys it needs are written.
    pub async fn workers(
        &self,
        operation: Operation,
        clients: usize,
    ) -> Result<Vec<Worker>, String> {
        let cell = self.cells.fetch_add(1, Ordering::Relaxed);
        let mut workers = Vec::with_capacity(clients);
        for i in 0..clients {
            let key = format!("{PREFIX}c{cell}-w{i}");
            let storage = self.storage.clone();
            let worker = match operation {
                Operation::Create => creator(storage, key),
                Operation::Get => {
                    storage
                        .create(&key, value())
                        .await
                        .map_err(|e| format!("create: {e}"))?;
                    getter(storage, key)
                }
                Operation::Update => {
                    let created = storage
                        .create(&key, value())
                        .await
                        .map_err(|e| format!("create: {e}"))?;
                    updater(storage, key, created.mod_revision)
                }
                Operation::ListPrefix(keys) => {
                    if !self.listed.lock().expect("not poisoned").contains(&keys) {
                        return Err(format!("a list of {keys} before preload_lists"));
                    }
                    lister(storage, list_prefix(keys), keys)
                }
            };
            workers.push(worker);
        }
        Ok(workers)
    }

    /// Closes the store: queued writes finish.
    pub async fn close(&self) -> Result<(), String> {
        self.storage
            .close()
            .await
            .map_err(|e| format!("closing the store: {e}"))
    }
}

fn creator(storage: EmbeddedStorage, prefix: String) -> Worker {
    Box::new(move |seq| -> OpFuture {
        let storage = storage.clone();
        let key = format!("{prefix}-{seq}");
        Box::pin(async move {
            storage
                .create(&key, value())
                .await
                .map_err(|e| format!("create: {e}"))?;
            Ok(Sample::Whole)
        })
    })
}

fn getter(storage: EmbeddedStorage, key: String) -> Worker {
    let key = Arc::<str>::from(key);
    Box::new(move |_seq| -> OpFuture {
        let storage = storage.clone();
        let key = key.clone();
        Box::pin(async move {
            match storage.get(&key, ReadAt::Latest).await {
                Ok(Some(_)) => Ok(Sample::Whole),
                Ok(None) => Err(format!("{key} not found")),
                Err(e) => Err(format!("get: {e}")),
            }
        })
    })
}

fn updater(storage: EmbeddedStorage, key: String, revision: i64) -> Worker {
    let key = Arc::<str>::from(key);
    let last_revision = Arc::new(Mutex::new(revision));
    Box::new(move |_seq| -> OpFuture {
        let storage = storage.clone();
        let key = key.clone();
        let last_revision = last_revision.clone();
        Box::pin(async move {
            let expected = *last_revision.lock().expect("not poisoned");
            let updated = storage
                .update(&key, value(), expected)
                .await
                .map_err(|e| format!("update: {e}"))?;
            *last_revision.lock().expect("not poisoned") = updated.mod_revision;
            Ok(Sample::Whole)
        })
    })
}

fn lister(storage: EmbeddedStorage, prefix: String, keys: usize) -> Worker {
    let request = Arc::new(ListRequest {
        prefix,
        read_at: ReadAt::Latest,
        ..ListRequest::default()
    });
    Box::new(move |_seq| -> OpFuture {
        let storage = storage.clone();
        let request = request.clone();
        Box::pin(async move {
            let page = storage
                .list(&request)
                .await
                .map_err(|e| format!("list: {e}"))?;
            if page.items.len() == keys {
                Ok(Sample::Whole)
            } else {
                Err(format!("{} keys listed, expected {keys}", page.items.len()))
            }
        })
    })
}

/// The prefix of the `keys` pre-loaded keys.
fn list_prefix(keys: usize) -> String {
    format!("/kapi-bench/listed-{keys}/")
}

/// A 1 KiB JSON value (made once, shared by every call).
fn value() -> Bytes {
    static VALUE: LazyLock<Bytes> = LazyLock::new(|| Bytes::from(fixed_body()));
    VALUE.clone()
}
