//! The etcd backend: [`EtcdStorage`], for several kapi replicas over one etcd cluster.
//!
//! Keys are stored as given (the API server adds its `/registry` prefix itself) and
//! revisions are etcd's own. Writes are transactions with a compare: create on
//! `create_revision == 0`, update and delete on `mod_revision == expected`, and the
//! failure branch reads the key so a [`StorageError::Conflict`] carries the current
//! state.
//!
//! **Time-to-live.** A write with a TTL grants an etcd lease of that many seconds
//! (rounded up, at least one) and attaches it to the put, inside the same transaction as
//! the write's compare; etcd deletes the key when the lease expires, and its watch
//! reports that delete like any other. A plain put carries no lease, which detaches the
//! key from the one it had. Each TTL write grants its own lease (a lease whose write
//! failed is revoked).
//!
//! **Compacted revision.** etcd does not report its compacted revision to a client, so
//! [`EtcdStorage`] records it where kube-apiserver does: after compacting, it writes the
//! revision (in decimal) to the key [`EtcdConfig::compacted_revision_key`]
//! (`compact_rev_key` by default, outside any `/registry` prefix), with a
//! compare-and-swap so it only grows. Like kube-apiserver's, that write takes a
//! revision. [`Storage::compacted_revision`] answers the larger of that key and what this
//! process learned from etcd itself (its own compactions and compaction notices on
//! watches). A compaction made by another tool is only seen through the latter.
//!
//! **Connection.** The client balances over every endpoint and reconnects on its own;
//! [`EtcdStorage::connect_with`] retries the first contact with exponential backoff.
//! Within [`EtcdConfig::request_timeout`], reads (and compactions, which are idempotent)
//! retry with backoff while etcd is unavailable, and writes only when their connection
//! failed before anything was sent (a write whose answer was lost may have been
//! applied, so it is not repeated). A call that still cannot reach etcd fails with
//! [`StorageError::Unavailable`].

mod compaction;
mod config;
mod error;
mod lease;
mod progress;
mod range;
mod retry;
mod watch;
mod write;

pub use self::config::EtcdConfig;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use etcd_client::{
    Client, CompactionOptions, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, Txn,
    TxnOp, TxnOpResponse, WatchOptions,
};
use futures_util::stream;
use tokio::time::Instant;

use self::error::{Kind, kind, map};
use self::range::{convert, prefix_end, revision_of};
use self::watch::EtcdWatch;
use self::write::{compare_failed, conflict_or_not_found, txn_revision};
use crate::interface::StorageError;
use crate::interface::{
    Deleted, KeyValue, ListRequest, ListResponse, ProgressListener, ProgressRequests, ReadAt,
    Result, Revision, Storage, WatchStream,
};

/// The etcd backend. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct EtcdStorage {
    shared: Arc<Shared>,
}

/// What every clone and every watch shares.
pub(super) struct Shared {
    client: Client,
    config: EtcdConfig,
    /// The highest compacted revision this process knows of.
    compacted: AtomicI64,
    closed: AtomicBool,
    /// Whether requested progress notifications come in order with events.
    ordered_progress: AtomicBool,
    /// Flips to `true` on close; watches end when it does.
    shutdown: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for EtcdStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStorage")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl EtcdStorage {
    /// Connects to the etcd cluster at `endpoints` (`http://host:port` or `host:port`)
    /// with the default [`EtcdConfig`].
    pub async fn connect(endpoints: &[String]) -> Result<Self> {
        Self::connect_with(endpoints, EtcdConfig::default()).await
    }

    /// Connects with `config`, and checks that the cluster answers, retrying with
    /// backoff; fails with [`StorageError::Unavailable`] when it never does.
    pub async fn connect_with(endpoints: &[String], config: EtcdConfig) -> Result<Self> {
        let options = ConnectOptions::new()
            .with_timeout(config.request_timeout)
            .with_connect_timeout(config.connect_timeout)
            .with_keep_alive(Duration::from_secs(10), config.request_timeout)
            .with_keep_alive_while_idle(true);
        let client = Client::connect(endpoints, Some(options))
            .await
            .map_err(|e| {
                StorageError::internal(format!("invalid etcd endpoints {endpoints:?}"), e)
            })?;
        let (shutdown, _) = tokio::sync::watch::channel(false);
        let storage = Self {
            shared: Arc::new(Shared {
                client,
                config,
                compacted: AtomicI64::new(0),
                closed: AtomicBool::new(false),
                ordered_progress: AtomicBool::new(false),
                shutdown,
            }),
        };
        let mut backoff = storage.shared.config.initial_backoff;
        let mut attempt = 1;
        loop {
            match storage.current_revision().await {
                Ok(_) => break,
                Err(error) if attempt >= storage.shared.config.connect_attempts.max(1) => {
                    return Err(error);
                }
                Err(error) => {
                    tracing::warn!(%error, attempt, "etcd is not answering yet; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(storage.shared.config.max_backoff);
                    attempt += 1;
                }
            }
        }
        let ordered = match storage.shared.config.ordered_progress {
            Some(ordered) => ordered,
            None => progress::detect(&storage.shared.client).await,
        };
        storage
            .shared
            .ordered_progress
            .store(ordered, Ordering::Release);
        Ok(storage)
    }

    /// A watch of `prefix` after `after`, passing the consumer's progress requests on
    /// to etcd when there are any.
    async fn watch_from(
        &self,
        prefix: &str,
        after: Revision,
        progress_requests: Option<ProgressListener>,
    ) -> Result<WatchStream> {
        self.kv()?;
        let known = self.shared.compacted.load(Ordering::Acquire);
        if after < known {
            return Err(StorageError::Expired {
                requested: after,
                compacted: known,
            });
        }
        // etcd accepts a watch from the compacted revision itself, the trait does not:
        // a read at `after` fails exactly when `after` is below the compacted revision.
        if after > 0 {
            let probe = self
                .read(|mut kv| {
                    let key = prefix.as_bytes().to_vec();
                    async move {
                        let options = GetOptions::new().with_count_only().with_revision(after);
                        kv.get(key, Some(options)).await
                    }
                })
                .await;
            match probe {
                Ok(_) => {}
                Err(error) if kind(&error) == Kind::FutureRevision => {}
                Err(error) => return Err(self.revision_error(error, after).await),
            }
        }
        let start = if prefix.is_empty() {
            vec![0]
        } else {
            prefix.as_bytes().to_vec()
        };
        let options = WatchOptions::new()
            .with_range(prefix_end(prefix.as_bytes()))
            .with_prev_key()
            .with_progress_notify()
            .with_start_revision(after + 1);
        let (requests, responses) = self.open_watch(start, options).await?.split();
        let progress_interval = self.shared.config.progress_interval;
        let state = EtcdWatch {
            requests,
            responses,
            shared: self.shared.clone(),
            shutdown: self.shared.shutdown.subscribe(),
            sequence: watch::Sequence::after(after),
            buffer: VecDeque::new(),
            progress_interval,
            idle_deadline: Instant::now() + progress_interval,
            progress_requests,
            done: false,
        };
        Ok(Box::pin(stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        })))
    }

    /// Shuts down: every watch stream ends and later calls fail with
    /// [`StorageError::Unavailable`]. Requests in flight finish on their own.
    pub async fn close(&self) -> Result<()> {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.shutdown.send_replace(true);
        Ok(())
    }
}

#[async_trait]
impl Storage for EtcdStorage {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.put_new(key, value, None).await
    }

    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        let lease = self.grant_lease(ttl).await?;
        let created = self.put_new(key, value, Some(lease)).await;
        if created.as_ref().is_err_and(compare_failed) {
            self.revoke_unused(lease).await;
        }
        created
    }

    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        if let ReadAt::Exact(revision) = read_at
            && revision <= 0
        {
            // etcd reads "revision 0" as "latest"; the state before the first write
            // is empty.
            return self.empty_past(revision).await.map(|_| None);
        }
        let response = self
            .range(key.as_bytes().to_vec(), GetOptions::new(), read_at)
            .await?;
        response.kvs().first().map(convert).transpose()
    }

    async fn list(&self, request: &ListRequest) -> Result<ListResponse> {
        if let ReadAt::Exact(revision) = request.read_at
            && revision <= 0
        {
            self.empty_past(revision).await?;
            return Ok(ListResponse {
                items: Vec::new(),
                revision,
                remaining: 0,
            });
        }
        let prefix = request.prefix.as_bytes();
        let end = prefix_end(prefix);
        let start = match &request.start_key {
            Some(start) if start.as_bytes() > prefix => start.as_bytes().to_vec(),
            _ if prefix.is_empty() => vec![0],
            _ => prefix.to_vec(),
        };
        if end != [0] && start >= end {
            // The start key is past the prefix: an empty page, read at the state asked
            // for (so revision checks still apply).
            let options = GetOptions::new().with_count_only();
            let response = self.range(start, options, request.read_at).await?;
            let revision = match request.read_at {
                ReadAt::Exact(revision) => revision,
                _ => revision_of(&response),
            };
            return Ok(ListResponse {
                items: Vec::new(),
                revision,
                remaining: 0,
            });
        }
        let mut options = GetOptions::new().with_range(end);
        if let Some(limit) = request.limit.filter(|&l| l > 0) {
            options = options.with_limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        let response = self.range(start, options, request.read_at).await?;
        let items = response
            .kvs()
            .iter()
            .map(convert)
            .collect::<Result<Vec<_>>>()?;
        let count = u64::try_from(response.count()).unwrap_or(0);
        Ok(ListResponse {
            remaining: count.saturating_sub(items.len() as u64),
            revision: match request.read_at {
                ReadAt::Exact(revision) => revision,
                _ => revision_of(&response),
            },
            items,
        })
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        self.put_existing(key, value, expected, None).await
    }

    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue> {
        let lease = self.grant_lease(ttl).await?;
        let updated = self.put_existing(key, value, expected, Some(lease)).await;
        if updated.as_ref().is_err_and(compare_failed) {
            self.revoke_unused(lease).await;
        }
        updated
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        let mut compares = vec![Compare::create_revision(key, CompareOp::Greater, 0)];
        if let Some(expected) = expected {
            compares.push(Compare::mod_revision(key, CompareOp::Equal, expected));
        }
        let txn = Txn::new()
            .when(compares)
            .and_then([TxnOp::delete(
                key,
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let response = self.txn(txn).await?;
        if !response.succeeded() {
            return Err(conflict_or_not_found(key, &response));
        }
        let prev = response
            .op_responses()
            .into_iter()
            .find_map(|op| match op {
                TxnOpResponse::Delete(delete) => delete.prev_kvs().first().map(convert),
                _ => None,
            })
            .transpose()?
            .ok_or_else(|| StorageError::Internal {
                message: format!("etcd deleted {key} without returning its last state"),
                source: None,
            })?;
        Ok(Deleted {
            prev,
            revision: txn_revision(&response),
        })
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

    /// Only where etcd sends requested progress in order with events (see
    /// [`EtcdConfig::ordered_progress`]); older releases may answer before the events
    /// up to the revision they name were sent.
    fn answers_progress_requests(&self) -> bool {
        self.shared.ordered_progress.load(Ordering::Acquire)
    }

    async fn current_revision(&self) -> Result<Revision> {
        let response = self
            .range(vec![0], GetOptions::new().with_count_only(), ReadAt::Latest)
            .await?;
        Ok(revision_of(&response))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        let current = self.current_revision().await?;
        if revision > current {
            return Err(StorageError::TooLargeRevision {
                requested: revision,
                current,
            });
        }
        if revision <= self.compacted_revision().await? {
            return Ok(());
        }
        let options = CompactionOptions::new().with_physical();
        self.kv()?;
        let compacted = self
            .call(true, |mut kv| {
                let options = options.clone();
                async move { kv.compact(revision, Some(options)).await }
            })
            .await;
        match compacted {
            Ok(_) => {}
            // Someone compacted further already: the history is gone either way.
            Err(error) if kind(&error) == Kind::Compacted => {}
            Err(error) if kind(&error) == Kind::FutureRevision => {
                return Err(StorageError::TooLargeRevision {
                    requested: revision,
                    current,
                });
            }
            Err(error) => return Err(map(error)),
        }
        self.shared.compacted.fetch_max(revision, Ordering::AcqRel);
        // Recorded after compacting, so the record never claims more than etcd did.
        self.record_compaction(revision).await
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        let (recorded, _) = self.recorded_compaction().await?;
        let known = self.shared.compacted.fetch_max(recorded, Ordering::AcqRel);
        Ok(known.max(recorded))
    }

    async fn close(&self) -> Result<()> {
        EtcdStorage::close(self).await
    }
}
