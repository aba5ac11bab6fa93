//! Group commit: one thread owns every redb write transaction.
//!
//! Callers queue [`Request`]s on a channel; the writer takes whatever is queued (up to
//! `max_batch`), applies the requests in order inside one write transaction, commits it
//! once (one fsync for the whole batch), then publishes the events and answers each
//! caller with its own outcome. A failed precondition only fails its own request: it is
//! checked against the transaction's state and writes nothing. While an fsync runs, new
//! requests queue up and form the next batch, so throughput grows with concurrency.
//!
//! The same thread runs the scheduled compaction, so compaction never races a write.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use bytes::Bytes;
use redb::{Database, ReadableTable, Table};
use tokio::sync::{broadcast, oneshot};

use super::CompactionPolicy;
use super::history::Record;
use super::tables::{HISTORY, KV, META, META_COMPACTED, META_REVISION, decode_value, encode_value};
use crate::error::StorageError;
use crate::interface::{Deleted, Event, EventKind, KeyValue, Revision};

/// One write asked of the writer.
#[derive(Debug)]
pub(super) enum Op {
    /// [`crate::Storage::create`].
    Create { key: String, value: Bytes },
    /// [`crate::Storage::update`].
    Update {
        key: String,
        value: Bytes,
        expected: Revision,
    },
    /// [`crate::Storage::delete`].
    Delete {
        key: String,
        expected: Option<Revision>,
    },
    /// [`crate::Storage::compact`].
    Compact { revision: Revision },
}

/// What a successful [`Op`] did.
#[derive(Debug)]
pub(super) enum Outcome {
    /// The key's new state.
    Written(KeyValue),
    /// The key was deleted.
    Deleted(Deleted),
    /// History was compacted (or already was).
    Compacted,
}

/// An [`Op`] with the channel its outcome goes back on.
pub(super) struct Request {
    pub op: Op,
    pub reply: oneshot::Sender<Result<Outcome, StorageError>>,
}

/// Counters the writer keeps up to date for readers that need no transaction.
#[derive(Debug, Default)]
pub(super) struct Counters {
    /// The revision of the latest committed write.
    pub revision: AtomicI64,
    /// The highest compacted revision.
    pub compacted: AtomicI64,
    /// Write transactions committed since open.
    pub commits: AtomicU64,
}

/// The writer thread's state.
pub(super) struct Writer {
    pub db: Arc<Database>,
    pub requests: mpsc::Receiver<Request>,
    pub events: broadcast::Sender<Arc<Event>>,
    pub counters: Arc<Counters>,
    pub compaction: Option<CompactionPolicy>,
    pub max_batch: usize,
}

impl Writer {
    /// Serves requests until every sender is gone, then returns (dropping the event
    /// sender, which ends the live part of every watch).
    pub fn run(self) {
        let mut next_compaction = self.compaction.map(|p| Instant::now() + p.interval);
        loop {
            // Checked on every turn, not only when the queue is idle: under a steady
            // write load `recv_timeout` would never time out.
            if let Some(due) = next_compaction
                && Instant::now() >= due
            {
                self.scheduled_compaction();
                next_compaction = self.compaction.map(|p| Instant::now() + p.interval);
            }
            let first = match next_compaction {
                Some(due) => match self
                    .requests
                    .recv_timeout(due.saturating_duration_since(Instant::now()))
                {
                    Ok(request) => request,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                },
                None => match self.requests.recv() {
                    Ok(request) => request,
                    Err(mpsc::RecvError) => break,
                },
            };
            let mut batch = vec![first];
            while batch.len() < self.max_batch {
                match self.requests.try_recv() {
                    Ok(request) => batch.push(request),
                    Err(_) => break,
                }
            }
            self.commit(batch);
        }
        tracing::debug!("embedded storage writer stopped");
    }

    /// Compacts to `retain_revisions` below the current revision, if that is newer than
    /// the last compaction.
    fn scheduled_compaction(&self) {
        let Some(policy) = self.compaction else {
            return;
        };
        let target = self.counters.revision.load(Ordering::Acquire) - policy.retain_revisions;
        if target <= self.counters.compacted.load(Ordering::Acquire) {
            return;
        }
        let (reply, _ignored) = oneshot::channel();
        tracing::debug!(
            revision = target,
            "scheduled compaction of the embedded storage"
        );
        self.commit(vec![Request {
            op: Op::Compact { revision: target },
            reply,
        }]);
    }

    /// Applies a batch in one transaction and answers every request in it.
    fn commit(&self, batch: Vec<Request>) {
        match self.apply_batch(&batch) {
            Ok(applied) => {
                self.counters.commits.fetch_add(1, Ordering::AcqRel);
                self.counters
                    .compacted
                    .store(applied.compacted, Ordering::Release);
                // Readers of the counter may rely on seeing every event up to it, so the
                // revision moves before the events go out and before callers hear back.
                self.counters
                    .revision
                    .store(applied.revision, Ordering::Release);
                for event in applied.events {
                    // No receivers is fine: nobody watches.
                    let _ = self.events.send(Arc::new(event));
                }
                for (request, outcome) in batch.into_iter().zip(applied.outcomes) {
                    let _ = request.reply.send(outcome);
                }
            }
            Err(error) => {
                tracing::error!(%error, "embedded storage write transaction failed");
                for request in batch {
                    let _ = request.reply.send(Err(StorageError::Internal {
                        message: format!("embedded storage write failed: {error}"),
                        source: None,
                    }));
                }
            }
        }
    }

    fn apply_batch(&self, batch: &[Request]) -> Result<Applied, redb::Error> {
        let txn = self.db.begin_write()?;
        let applied = {
            let mut tables = Tables {
                kv: txn.open_table(KV)?,
                history: txn.open_table(HISTORY)?,
                meta: txn.open_table(META)?,
            };
            let mut applied = Applied {
                revision: counter(&tables.meta, META_REVISION)?,
                compacted: counter(&tables.meta, META_COMPACTED)?,
                events: Vec::new(),
                outcomes: Vec::with_capacity(batch.len()),
            };
            for request in batch {
                let outcome = tables.apply(&request.op, &mut applied)?;
                applied.outcomes.push(outcome);
            }
            tables.meta.insert(META_REVISION, applied.revision)?;
            tables.meta.insert(META_COMPACTED, applied.compacted)?;
            applied
        };
        txn.commit()?;
        Ok(applied)
    }
}

/// What a batch did, before it is published.
struct Applied {
    revision: Revision,
    compacted: Revision,
    events: Vec<Event>,
    outcomes: Vec<Result<Outcome, StorageError>>,
}

/// The tables of one write transaction.
struct Tables<'txn> {
    kv: Table<'txn, &'static str, &'static [u8]>,
    history: Table<'txn, i64, &'static [u8]>,
    meta: Table<'txn, &'static str, i64>,
}

/// Reads a counter, with redb's error type (the batch fails as a whole on it).
fn counter(meta: &Table<'_, &'static str, i64>, name: &str) -> Result<i64, redb::Error> {
    Ok(meta.get(name)?.map(|v| v.value()).unwrap_or(0))
}

impl Tables<'_> {
    /// Applies one op. The outer error fails the whole transaction; the inner one is
    /// this op's own outcome (a failed precondition writes nothing).
    fn apply(
        &mut self,
        op: &Op,
        applied: &mut Applied,
    ) -> Result<Result<Outcome, StorageError>, redb::Error> {
        match op {
            Op::Create { key, value } => {
                if self.kv.get(key.as_str())?.is_some() {
                    return Ok(Err(StorageError::AlreadyExists { key: key.clone() }));
                }
                let revision = applied.revision + 1;
                let stored = KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                    create_revision: revision,
                    mod_revision: revision,
                };
                self.record(applied, EventKind::Created, stored.clone(), None)?;
                Ok(Ok(Outcome::Written(stored)))
            }
            Op::Update {
                key,
                value,
                expected,
            } => {
                let current = match self.current(key)? {
                    Ok(current) => current,
                    Err(error) => return Ok(Err(error)),
                };
                if current.mod_revision != *expected {
                    return Ok(Err(conflict(current)));
                }
                let stored = KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                    create_revision: current.create_revision,
                    mod_revision: applied.revision + 1,
                };
                self.record(applied, EventKind::Modified, stored.clone(), Some(current))?;
                Ok(Ok(Outcome::Written(stored)))
            }
            Op::Delete { key, expected } => {
                let current = match self.current(key)? {
                    Ok(current) => current,
                    Err(error) => return Ok(Err(error)),
                };
                if expected.is_some_and(|expected| expected != current.mod_revision) {
                    return Ok(Err(conflict(current)));
                }
                let revision = applied.revision + 1;
                self.record(
                    applied,
                    EventKind::Deleted,
                    current.clone(),
                    Some(current.clone()),
                )?;
                Ok(Ok(Outcome::Deleted(Deleted {
                    prev: current,
                    revision,
                })))
            }
            Op::Compact { revision } => {
                let revision = *revision;
                if revision > applied.revision {
                    return Ok(Err(StorageError::TooLargeRevision {
                        requested: revision,
                        current: applied.revision,
                    }));
                }
                if revision > applied.compacted {
                    self.history.retain_in(..=revision, |_, _| false)?;
                    applied.compacted = revision;
                }
                Ok(Ok(Outcome::Compacted))
            }
        }
    }

    /// The key's current state, or `NotFound`.
    fn current(&self, key: &str) -> Result<Result<KeyValue, StorageError>, redb::Error> {
        Ok(match self.kv.get(key)? {
            None => Err(StorageError::NotFound {
                key: key.to_string(),
            }),
            Some(bytes) => decode_value(key, bytes.value()),
        })
    }

    /// Writes `state` (removes the key for a delete) at the next revision, with its
    /// history record and event.
    fn record(
        &mut self,
        applied: &mut Applied,
        kind: EventKind,
        state: KeyValue,
        prev: Option<KeyValue>,
    ) -> Result<(), redb::Error> {
        applied.revision += 1;
        let revision = applied.revision;
        match kind {
            EventKind::Deleted => {
                self.kv.remove(state.key.as_str())?;
            }
            EventKind::Created | EventKind::Modified => {
                let stored = encode_value(state.create_revision, revision, &state.value);
                self.kv.insert(state.key.as_str(), stored.as_slice())?;
            }
        }
        let record = Record {
            kind,
            key: state.key,
            value: state.value,
            prev,
        };
        self.history.insert(revision, record.encode().as_slice())?;
        applied.events.push(record.into_event(revision));
        Ok(())
    }
}

fn conflict(current: KeyValue) -> StorageError {
    StorageError::Conflict {
        key: current.key.clone(),
        current: Some(Box::new(current)),
    }
}
