//! The storage limit: the shapes of kapi's writes and reads sent straight to etcd with
//! etcd-client, over one shared gRPC connection — put, transactional create-if-absent
//! (what a create is), transactional compare-mod-revision update (what an update with
//! `resourceVersion` is), range of one key (linearizable, as kapi's consistent get),
//! and range of a prefix of pre-loaded keys (100, 1,000 or 10,000, as kapi's lists).
//! Values are 1 KiB.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use etcd_client::{Client, Compare, CompareOp, GetOptions, KvClient, Txn, TxnOp};

use crate::driver::{OpFuture, Sample, Worker};
use crate::targets::OBJECT_SIZE;

/// The key prefix of single-key operations.
const PREFIX: &str = "/kapi-bench/objects/";

/// Puts per transaction when keys are pre-loaded (etcd allows 128 operations).
const PRELOAD_BATCH: usize = 100;

/// The largest reply the client decodes: a range of 10,000 values of 1 KiB is over
/// 10 MB, and gRPC's default limit is 4 MB.
const MAX_REPLY: usize = 64 << 20;

/// Transactions in flight while keys are pre-loaded.
const PRELOAD_CONCURRENCY: usize = 8;

/// One raw etcd operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// Put a new key.
    Put,
    /// A transaction putting a key only if it has never been created.
    TxnCreate,
    /// A transaction putting a key only if its mod revision is the last one written.
    TxnUpdate,
    /// A range of one key.
    RangeKey,
    /// A range of this many pre-loaded keys under one prefix.
    RangePrefix(usize),
}

impl Operation {
    /// The single-key operations, in the order the report shows them.
    pub const SINGLE: [Operation; 4] = [
        Operation::Put,
        Operation::TxnCreate,
        Operation::TxnUpdate,
        Operation::RangeKey,
    ];
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Put => f.write_str("put"),
            Operation::TxnCreate => f.write_str("txn create-if-absent"),
            Operation::TxnUpdate => f.write_str("txn CAS update"),
            Operation::RangeKey => f.write_str("range key"),
            Operation::RangePrefix(keys) => write!(f, "range prefix of {keys}"),
        }
    }
}

/// An etcd reached over one client connection.
pub struct RawEtcd {
    client: KvClient,
    cells: AtomicU64,
    listed: Mutex<BTreeSet<usize>>,
}

impl RawEtcd {
    /// Connects to etcd at `endpoint`.
    pub async fn connect(endpoint: &str) -> Result<Self, String> {
        let client = Client::connect([endpoint], None)
            .await
            .map_err(|e| format!("connecting to etcd at {endpoint}: {e}"))?;
        Ok(Self {
            client: client.kv_client().max_decoding_message_size(MAX_REPLY),
            cells: AtomicU64::new(0),
            listed: Mutex::new(BTreeSet::new()),
        })
    }

    /// Puts, for each size, that many keys under a prefix of its own, in batched
    /// transactions; sizes already loaded are skipped.
    pub async fn preload_lists(&self, sizes: &[usize]) -> Result<(), String> {
        for &keys in sizes {
            if self.listed.lock().expect("not poisoned").contains(&keys) {
                continue;
            }
            let batches: Vec<Vec<usize>> = (0..keys)
                .collect::<Vec<_>>()
                .chunks(PRELOAD_BATCH)
                .map(<[usize]>::to_vec)
                .collect();
            let batches = Arc::new(Mutex::new(batches));
            let tasks: Vec<_> = (0..PRELOAD_CONCURRENCY)
                .map(|_| {
                    let mut client = self.client.clone();
                    let batches = batches.clone();
                    tokio::spawn(async move {
                        loop {
                            let Some(batch) = batches.lock().expect("not poisoned").pop() else {
                                return Ok::<_, String>(());
                            };
                            let puts: Vec<TxnOp> = batch
                                .iter()
                                .map(|i| {
                                    TxnOp::put(format!("{}{i}", list_prefix(keys)), value(), None)
                                })
                                .collect();
                            client
                                .txn(Txn::new().and_then(puts))
                                .await
                                .map_err(|e| format!("preloading etcd: {e}"))?;
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await
                    .map_err(|e| format!("an etcd preload task: {e}"))??;
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
            let mut client = self.client.clone();
            let worker = match operation {
                Operation::Put => putter(client, key),
                Operation::TxnCreate => creator(client, key),
                Operation::TxnUpdate => {
                    let put = client
                        .put(key.as_str(), value(), None)
                        .await
                        .map_err(|e| format!("etcd put: {e}"))?;
                    let revision = put.header().map_or(0, |h| h.revision());
                    updater(client, key, revision)
                }
                Operation::RangeKey => {
                    client
                        .put(key.as_str(), value(), None)
                        .await
                        .map_err(|e| format!("etcd put: {e}"))?;
                    ranger(client, key, None)
                }
                Operation::RangePrefix(keys) => {
                    if !self.listed.lock().expect("not poisoned").contains(&keys) {
                        return Err(format!("a range of {keys} before preload_lists"));
                    }
                    ranger(client, list_prefix(keys), Some(keys))
                }
            };
            workers.push(worker);
        }
        Ok(workers)
    }
}

fn putter(client: KvClient, prefix: String) -> Worker {
    Box::new(move |seq| -> OpFuture {
        let mut client = client.clone();
        let key = format!("{prefix}-{seq}");
        Box::pin(async move {
            client
                .put(key, value(), None)
                .await
                .map_err(|e| format!("etcd put: {e}"))?;
            Ok(Sample::Whole)
        })
    })
}

fn creator(client: KvClient, prefix: String) -> Worker {
    Box::new(move |seq| -> OpFuture {
        let mut client = client.clone();
        let key = format!("{prefix}-{seq}");
        Box::pin(async move {
            let txn = Txn::new()
                .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
                .and_then([TxnOp::put(key.as_str(), value(), None)]);
            let reply = client
                .txn(txn)
                .await
                .map_err(|e| format!("etcd txn: {e}"))?;
            if reply.succeeded() {
                Ok(Sample::Whole)
            } else {
                Err(format!("{key} already exists"))
            }
        })
    })
}

fn updater(client: KvClient, key: String, revision: i64) -> Worker {
    let last_revision = Arc::new(Mutex::new(revision));
    Box::new(move |_seq| -> OpFuture {
        let mut client = client.clone();
        let key = key.clone();
        let last_revision = last_revision.clone();
        Box::pin(async move {
            let revision = *last_revision.lock().expect("not poisoned");
            let txn = Txn::new()
                .when([Compare::mod_revision(
                    key.as_str(),
                    CompareOp::Equal,
                    revision,
                )])
                .and_then([TxnOp::put(key.as_str(), value(), None)]);
            let reply = client
                .txn(txn)
                .await
                .map_err(|e| format!("etcd txn: {e}"))?;
            if !reply.succeeded() {
                return Err(format!("{key} changed since revision {revision}"));
            }
            let revision = reply
                .header()
                .map(|h| h.revision())
                .ok_or("etcd txn reply without a header")?;
            *last_revision.lock().expect("not poisoned") = revision;
            Ok(Sample::Whole)
        })
    })
}

/// Ranges `key`, or with `Some(count)` every key under the prefix `key` (which must
/// be `count` keys).
fn ranger(client: KvClient, key: String, prefix_count: Option<usize>) -> Worker {
    Box::new(move |_seq| -> OpFuture {
        let mut client = client.clone();
        let key = key.clone();
        Box::pin(async move {
            let options = prefix_count.map(|_| GetOptions::new().with_prefix());
            let reply = client
                .get(key.as_str(), options)
                .await
                .map_err(|e| format!("etcd range: {e}"))?;
            let expected = prefix_count.unwrap_or(1);
            if reply.kvs().len() == expected {
                Ok(Sample::Whole)
            } else {
                Err(format!(
                    "{key}: {} keys, expected {expected}",
                    reply.kvs().len()
                ))
            }
        })
    })
}

/// The prefix of the `keys` pre-loaded keys.
fn list_prefix(keys: usize) -> String {
    format!("/kapi-bench/listed-{keys}/")
}

/// A value of [`OBJECT_SIZE`] bytes.
pub(crate) fn value() -> Vec<u8> {
    vec![b'x'; OBJECT_SIZE]
}
