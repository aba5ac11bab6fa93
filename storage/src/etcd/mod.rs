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

mod error;
mod watch;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use etcd_client::{
    Client, CompactionOptions, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions,
    GetResponse, KvClient, PutOptions, Txn, TxnOp, TxnOpResponse, TxnResponse, WatchOptions,
};
use futures_util::stream;
use tokio::time::Instant;

use self::error::{Kind, bad_key, closed, kind, map};
use self::watch::EtcdWatch;
use crate::error::StorageError;
use crate::interface::{
    Deleted, KeyValue, ListRequest, ListResponse, ReadAt, Result, Revision, Storage, WatchStream,
};

/// How many times a request whose connection was refused is sent again at once
/// before [`EtcdStorage::call`] backs off: with one endpoint of several down, each try
/// may reach a live one.
const IMMEDIATE_REPICKS: u32 = 8;

/// The largest reply read from etcd: etcd-client's default of 4 MB made an unpaged list
/// of more than 4 MB of objects (or a cache page of large ones) fail; kube-apiserver
/// sets `MaxCallRecvMsgSize` to the same `math.MaxInt32`.
const MAX_REPLY: usize = i32::MAX as usize;

/// Settings of an [`EtcdStorage`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdConfig {
    /// Deadline of one etcd request (watch streams excepted). Default: 5 seconds.
    pub request_timeout: Duration,
    /// Deadline of one connection attempt to an endpoint. Default: 2 seconds.
    pub connect_timeout: Duration,
    /// How many times [`EtcdStorage::connect_with`] tries to reach the cluster before it
    /// fails. Default: 5.
    pub connect_attempts: u32,
    /// The first pause between retries; it doubles up to [`EtcdConfig::max_backoff`].
    /// Default: 100 ms.
    pub initial_backoff: Duration,
    /// The longest pause between retries. Default: 2 seconds.
    pub max_backoff: Duration,
    /// How long a watch may stay silent before it asks etcd for a progress
    /// notification. Default: 5 seconds.
    pub progress_interval: Duration,
    /// Where the compacted revision is recorded. Default: `compact_rev_key`, the key
    /// kube-apiserver uses.
    pub compacted_revision_key: String,
}

impl Default for EtcdConfig {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            connect_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            progress_interval: Duration::from_secs(5),
            compacted_revision_key: "compact_rev_key".to_string(),
        }
    }
}

impl EtcdConfig {
    /// Sets [`EtcdConfig::request_timeout`].
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`EtcdConfig::connect_attempts`].
    pub fn with_connect_attempts(mut self, attempts: u32) -> Self {
        self.connect_attempts = attempts;
        self
    }

    /// Sets [`EtcdConfig::progress_interval`].
    pub fn with_progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }

    /// Sets [`EtcdConfig::compacted_revision_key`].
    pub fn with_compacted_revision_key(mut self, key: impl Into<String>) -> Self {
        self.compacted_revision_key = key.into();
        self
    }
}

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
        Ok(storage)
    }

    /// Shuts down: every watch stream ends and later calls fail with
    /// [`StorageError::Unavailable`]. Requests in flight finish on their own.
    pub async fn close(&self) -> Result<()> {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.shutdown.send_replace(true);
        Ok(())
    }

    fn kv(&self) -> Result<KvClient> {
        if self.shared.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        Ok(self
            .shared
            .client
            .kv_client()
            .max_decoding_message_size(MAX_REPLY))
    }

    /// Runs a request, retrying with backoff until the request timeout passes: any
    /// request whose connection failed (it was never sent; with several endpoints the
    /// client may pick a dead one), and idempotent ones (reads) on any unavailability.
    async fn call<T, F, Fut>(
        &self,
        idempotent: bool,
        mut request: F,
    ) -> std::result::Result<T, etcd_client::Error>
    where
        F: FnMut(KvClient) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        let deadline = Instant::now() + self.shared.config.request_timeout;
        let mut backoff = self.shared.config.initial_backoff;
        let mut repicks = 0;
        loop {
            match request(
                self.shared
                    .client
                    .kv_client()
                    .max_decoding_message_size(MAX_REPLY),
            )
            .await
            {
                // A refused connection fails at once, and the balancer may pick a live
                // endpoint next time: try again without waiting, a few times, before
                // backing off (as clientv3 moves on to the next endpoint).
                Err(error) if kind(&error) == Kind::NotSent && repicks < IMMEDIATE_REPICKS => {
                    tracing::debug!(%error, "etcd endpoint unreachable; trying another");
                    repicks += 1;
                }
                Err(error)
                    if (kind(&error) == Kind::NotSent
                        || (idempotent && kind(&error) == Kind::Unavailable))
                        && Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(%error, "etcd request failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.shared.config.max_backoff);
                }
                result => return result,
            }
        }
    }

    /// An idempotent read: see [`EtcdStorage::call`].
    async fn read<T, F, Fut>(&self, request: F) -> std::result::Result<T, etcd_client::Error>
    where
        F: FnMut(KvClient) -> Fut,
        Fut: Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        self.call(true, request).await
    }

    /// Grants a lease of `ttl`, in whole seconds rounded up (at least one), retried like
    /// a read: a lease granted twice only leaves one unused, and it expires.
    async fn grant_lease(&self, ttl: Duration) -> Result<i64> {
        self.kv()?;
        let seconds = lease_seconds(ttl);
        let deadline = Instant::now() + self.shared.config.request_timeout;
        let mut backoff = self.shared.config.initial_backoff;
        loop {
            let mut client = self.shared.client.lease_client();
            match client.grant(seconds, None).await {
                Err(error)
                    if matches!(kind(&error), Kind::NotSent | Kind::Unavailable)
                        && Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(%error, "granting an etcd lease failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.shared.config.max_backoff);
                }
                result => return result.map(|granted| granted.id()).map_err(map),
            }
        }
    }

    /// Revokes a lease that no key uses (its write's compare failed). Best effort:
    /// unrevoked, it expires on its own. Never after a write that may have been applied
    /// (its answer lost): revoking deletes the keys attached.
    async fn revoke_unused(&self, lease: i64) {
        let mut client = self.shared.client.lease_client();
        if let Err(error) = client.revoke(lease).await {
            tracing::debug!(%error, lease, "revoking an unused etcd lease failed");
        }
    }

    /// Creates `key`, attached to `lease` when there is one.
    async fn put_new(&self, key: &str, value: Bytes, lease: Option<i64>) -> Result<KeyValue> {
        let options = lease.map(|lease| PutOptions::new().with_lease(lease));
        let txn = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, value.to_vec(), options)]);
        let response = self.txn(txn).await?;
        if !response.succeeded() {
            return Err(StorageError::AlreadyExists {
                key: key.to_string(),
            });
        }
        let revision = txn_revision(&response);
        Ok(KeyValue {
            key: key.to_string(),
            value,
            create_revision: revision,
            mod_revision: revision,
            memo: crate::ValueMemo::default(),
        })
    }

    /// Replaces `key`'s value if its `mod_revision` is `expected`, attached to `lease`
    /// when there is one and to none otherwise.
    async fn put_existing(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        lease: Option<i64>,
    ) -> Result<KeyValue> {
        let mut options = PutOptions::new().with_prev_key();
        if let Some(lease) = lease {
            options = options.with_lease(lease);
        }
        let txn = Txn::new()
            .when([
                Compare::create_revision(key, CompareOp::Greater, 0),
                Compare::mod_revision(key, CompareOp::Equal, expected),
            ])
            .and_then([TxnOp::put(key, value.to_vec(), Some(options))])
            .or_else([TxnOp::get(key, None)]);
        let response = self.txn(txn).await?;
        if !response.succeeded() {
            return Err(conflict_or_not_found(key, &response));
        }
        let revision = txn_revision(&response);
        let create_revision = response
            .op_responses()
            .into_iter()
            .find_map(|op| match op {
                TxnOpResponse::Put(put) => put.prev_key().map(|prev| prev.create_revision()),
                _ => None,
            })
            .unwrap_or(revision);
        Ok(KeyValue {
            key: key.to_string(),
            value,
            create_revision,
            mod_revision: revision,
            memo: crate::ValueMemo::default(),
        })
    }

    /// Opens an etcd watch stream, retrying like a read (opening a watch changes
    /// nothing).
    async fn open_watch(
        &self,
        key: Vec<u8>,
        options: WatchOptions,
    ) -> Result<etcd_client::WatchStream> {
        let deadline = Instant::now() + self.shared.config.request_timeout;
        let mut backoff = self.shared.config.initial_backoff;
        loop {
            let mut client = self
                .shared
                .client
                .watch_client()
                .max_decoding_message_size(MAX_REPLY);
            match client.watch(key.clone(), Some(options.clone())).await {
                Err(error)
                    if matches!(kind(&error), Kind::NotSent | Kind::Unavailable)
                        && Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(%error, "opening an etcd watch failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.shared.config.max_backoff);
                }
                result => return result.map_err(map),
            }
        }
    }

    /// A range read, with revision errors turned into `Expired`/`TooLargeRevision`.
    async fn range(
        &self,
        key: Vec<u8>,
        options: GetOptions,
        read_at: ReadAt,
    ) -> Result<GetResponse> {
        self.kv()?;
        let options = match read_at {
            ReadAt::Exact(revision) => options.with_revision(revision),
            ReadAt::Any => options.with_serializable(),
            ReadAt::Latest | ReadAt::NotOlderThan(_) => options,
        };
        let response = match self
            .read(|mut kv| {
                let (key, options) = (key.clone(), options.clone());
                async move { kv.get(key, Some(options)).await }
            })
            .await
        {
            Ok(response) => response,
            Err(error) => {
                let requested = match read_at {
                    ReadAt::Exact(revision) => revision,
                    _ => 0,
                };
                return Err(self.revision_error(error, requested).await);
            }
        };
        if let ReadAt::NotOlderThan(requested) = read_at {
            let current = revision_of(&response);
            if current < requested {
                return Err(StorageError::TooLargeRevision { requested, current });
            }
        }
        Ok(response)
    }

    /// Maps an error of a read at `requested`.
    async fn revision_error(&self, error: etcd_client::Error, requested: Revision) -> StorageError {
        match kind(&error) {
            Kind::Compacted => {
                // At least `requested + 1` was compacted, whatever this process knew.
                let known = self.compacted_revision().await.unwrap_or(0);
                let compacted = known.max(requested + 1);
                self.shared.compacted.fetch_max(compacted, Ordering::AcqRel);
                StorageError::Expired {
                    requested,
                    compacted,
                }
            }
            Kind::FutureRevision => StorageError::TooLargeRevision {
                requested,
                current: self.current_revision().await.unwrap_or(0),
            },
            _ => map(error),
        }
    }

    /// Runs a write transaction (retried only when it was never sent: a write whose
    /// answer was lost may have been applied).
    async fn txn(&self, txn: Txn) -> Result<TxnResponse> {
        self.kv()?;
        self.call(false, |mut kv| {
            let txn = txn.clone();
            async move { kv.txn(txn).await }
        })
        .await
        .map_err(map)
    }

    /// The recorded compacted revision and the key's `mod_revision` (0 when absent).
    async fn recorded_compaction(&self) -> Result<(Revision, Revision)> {
        let key = self.shared.config.compacted_revision_key.clone();
        let response = self
            .range(key.into_bytes(), GetOptions::new(), ReadAt::Latest)
            .await?;
        Ok(match response.kvs().first() {
            None => (0, 0),
            Some(kv) => {
                let recorded = std::str::from_utf8(kv.value())
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| StorageError::Internal {
                        message: format!(
                            "{} does not hold a revision",
                            self.shared.config.compacted_revision_key
                        ),
                        source: None,
                    })?;
                (recorded, kv.mod_revision())
            }
        })
    }

    /// Raises the recorded compacted revision to `revision` (compare-and-swap, so
    /// concurrent compactions from other replicas never lower it).
    async fn record_compaction(&self, revision: Revision) -> Result<()> {
        let key = self.shared.config.compacted_revision_key.clone();
        loop {
            let (recorded, mod_revision) = self.recorded_compaction().await?;
            if recorded >= revision {
                return Ok(());
            }
            let txn = Txn::new()
                .when([Compare::mod_revision(
                    key.clone(),
                    CompareOp::Equal,
                    mod_revision,
                )])
                .and_then([TxnOp::put(key.clone(), revision.to_string(), None)]);
            if self.txn(txn).await?.succeeded() {
                return Ok(());
            }
        }
    }
}

/// The revision an etcd response was served at.
fn revision_of(response: &GetResponse) -> Revision {
    response.header().map_or(0, |h| h.revision())
}

/// The revision a transaction committed at.
fn txn_revision(response: &TxnResponse) -> Revision {
    response.header().map_or(0, |h| h.revision())
}

/// The first key after every key that starts with `prefix`: the end of its range
/// (`\0`, meaning "to the end", when there is none).
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// etcd's key-value as kapi's.
fn convert(kv: &etcd_client::KeyValue) -> Result<KeyValue> {
    Ok(KeyValue {
        key: kv.key_str().map_err(|_| bad_key(kv.key()))?.to_string(),
        value: Bytes::copy_from_slice(kv.value()),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
        memo: crate::ValueMemo::default(),
    })
}

/// The state a failed compare found, read by the transaction's else branch.
fn found_state(response: &TxnResponse) -> Result<Option<KeyValue>> {
    for op in response.op_responses() {
        if let TxnOpResponse::Get(get) = op {
            return get.kvs().first().map(convert).transpose();
        }
    }
    Ok(None)
}

/// A TTL in etcd's unit, whole seconds: rounded up (a key never expires early), at
/// least one.
fn lease_seconds(ttl: Duration) -> i64 {
    let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i64::try_from(seconds.max(1)).unwrap_or(i64::MAX)
}

/// Whether a write failed on its compare, so it certainly wrote nothing.
fn compare_failed(error: &StorageError) -> bool {
    matches!(
        error,
        StorageError::AlreadyExists { .. }
            | StorageError::Conflict { .. }
            | StorageError::NotFound { .. }
    )
}

/// A failed compare on an existing key: `Conflict`, else `NotFound`.
fn conflict_or_not_found(key: &str, response: &TxnResponse) -> StorageError {
    match found_state(response) {
        Ok(Some(current)) => StorageError::Conflict {
            key: key.to_string(),
            current: Some(Box::new(current)),
        },
        Ok(None) => StorageError::NotFound {
            key: key.to_string(),
        },
        Err(error) => error,
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
            done: false,
        };
        Ok(Box::pin(stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        })))
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

impl EtcdStorage {
    /// For an `Exact` read at or below revision 0: `Ok` (empty) unless compacted.
    async fn empty_past(&self, requested: Revision) -> Result<()> {
        let compacted = self.compacted_revision().await?;
        if requested < compacted {
            return Err(StorageError::Expired {
                requested,
                compacted,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{lease_seconds, prefix_end};

    #[test]
    fn lease_ttls_round_up_to_whole_seconds() {
        assert_eq!(lease_seconds(Duration::ZERO), 1);
        assert_eq!(lease_seconds(Duration::from_millis(1)), 1);
        assert_eq!(lease_seconds(Duration::from_secs(1)), 1);
        assert_eq!(lease_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(lease_seconds(Duration::from_secs(3600)), 3600);
    }

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"/a/"), b"/a0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff\xff"), b"\0");
        assert_eq!(prefix_end(b""), b"\0");
    }
}
