//! Group commit: one thread owns every redb write transaction.
//!
//! Callers queue [`Request`]s on a channel; the writer takes whatever is queued (up to
//! `max_batch`), applies the requests in order inside one write transaction, commits it
//! once (one fsync for the whole batch), then publishes the events and answers each
//! caller with its own outcome. A failed precondition only fails its own request: it is
//! checked against the transaction's state and writes nothing. While an fsync runs, new
//! requests queue up and form the next batch, so throughput grows with concurrency.
//!
//! The same thread runs the scheduled compaction, so compaction never races a write,
//! and expires keys whose time-to-live has passed: it keeps the earliest deadline in
//! memory, wakes for it (and at least once a second while any key has one, so a jump of
//! the wall clock is noticed), and deletes the due keys in a transaction of their own,
//! exactly as [`crate::Storage::delete`] would (a revision each, history, events).

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use redb::{Database, ReadableTable, Table};
use tokio::sync::oneshot;

use super::CompactionPolicy;
use super::history::Record;
use super::tables::{
    EXPIRY, EXPIRY_QUEUE, HISTORY, KV, META, META_COMPACTED, META_REVISION, decode_value,
    earliest_deadline, encode_value, unix_millis,
};
use crate::interface::StorageError;
use crate::interface::{Deleted, Event, EventKind, KeyValue, Revision};

/// One write asked of the writer.
#[derive(Debug)]
pub(super) enum Op {
    /// [`crate::Storage::create`], or [`crate::Storage::create_with_ttl`] with a `ttl`.
    Create {
        key: String,
        value: Bytes,
        ttl: Option<Duration>,
    },
    /// [`crate::Storage::update`], or [`crate::Storage::update_with_ttl`] with a `ttl`.
    Update {
        key: String,
        value: Bytes,
        expected: Revision,
        ttl: Option<Duration>,
    },
    /// [`crate::Storage::delete`].
    Delete {
        key: String,
        expected: Option<Revision>,
    },
    /// [`crate::Storage::compact`].
    Compact { revision: Revision },
    /// Deletes up to `limit` keys whose deadline is at or before `now` (unix millis).
    Expire { now: u64, limit: usize },
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
    /// This many keys were expired.
    Expired(usize),
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
    pub hub: Arc<super::hub::Hub>,
    pub counters: Arc<Counters>,
    pub compaction: Option<CompactionPolicy>,
    pub max_batch: usize,
    /// The earliest deadline of a key with a time-to-live (unix millis), or a time to
    /// look again: never later than the real one (earlier only costs a wasted look),
    /// except for the second's pause after a failed expiry transaction.
    pub next_expiry: Cell<Option<u64>>,
}

/// The longest the writer sleeps while some key has a deadline.
const EXPIRY_CHECK: Duration = Duration::from_secs(1);

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
            if let Some(deadline) = self.next_expiry.get()
                && unix_millis(SystemTime::now()) >= deadline
            {
                self.expire();
            }
            let now = Instant::now();
            let expiry_wake = self.next_expiry.get().map(|deadline| {
                let left = deadline.saturating_sub(unix_millis(SystemTime::now()));
                now + Duration::from_millis(left).min(EXPIRY_CHECK)
            });
            let wake = match (next_compaction, expiry_wake) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let first = match wake {
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

    /// Deletes the keys whose deadline has passed (at most a batch of them: the next turn
    /// of the loop takes the rest).
    fn expire(&self) {
        let now = unix_millis(SystemTime::now());
        // Should the transaction fail, look again in a second rather than at once; a
        // successful one sets the real next deadline.
        self.next_expiry
            .set(Some(now.saturating_add(EXPIRY_CHECK.as_millis() as u64)));
        let (reply, mut outcome) = oneshot::channel();
        self.commit(vec![Request {
            op: Op::Expire {
                now,
                limit: self.max_batch,
            },
            reply,
        }]);
        if let Ok(Ok(Outcome::Expired(count))) = outcome.try_recv()
            && count > 0
        {
            tracing::debug!(count, "expired keys of the embedded storage");
        }
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
                if let Some(next) = applied.rescanned_expiry {
                    self.next_expiry.set(next);
                }
                if let Some(deadline) = applied.earliest_new_expiry {
                    let next = self.next_expiry.get().map_or(deadline, |n| n.min(deadline));
                    self.next_expiry.set(Some(next));
                }
                self.hub.publish(applied.events, applied.revision);
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
                expiry: txn.open_table(EXPIRY)?,
                expiry_queue: txn.open_table(EXPIRY_QUEUE)?,
            };
            let mut applied = Applied {
                revision: counter(&tables.meta, META_REVISION)?,
                compacted: counter(&tables.meta, META_COMPACTED)?,
                now: unix_millis(SystemTime::now()),
                earliest_new_expiry: None,
                rescanned_expiry: None,
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
    /// The time of the batch (unix millis): TTLs count from it.
    now: u64,
    /// The earliest deadline the batch set.
    earliest_new_expiry: Option<u64>,
    /// After an expiry pass: the earliest deadline left.
    rescanned_expiry: Option<Option<u64>>,
    events: Vec<Event>,
    outcomes: Vec<Result<Outcome, StorageError>>,
}

/// The tables of one write transaction.
struct Tables<'txn> {
    kv: Table<'txn, &'static str, &'static [u8]>,
    history: Table<'txn, i64, &'static [u8]>,
    meta: Table<'txn, &'static str, i64>,
    expiry: Table<'txn, &'static str, u64>,
    expiry_queue: Table<'txn, (u64, &'static str), ()>,
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
            Op::Create { key, value, ttl } => {
                if self.kv.get(key.as_str())?.is_some() {
                    return Ok(Err(StorageError::AlreadyExists { key: key.clone() }));
                }
                let revision = applied.revision + 1;
                let stored = KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                    create_revision: revision,
                    mod_revision: revision,
                    memo: crate::ValueMemo::default(),
                };
                let deadline = ttl.map(|ttl| deadline(applied.now, ttl));
                self.record(applied, EventKind::Created, stored.clone(), None, deadline)?;
                Ok(Ok(Outcome::Written(stored)))
            }
            Op::Update {
                key,
                value,
                expected,
                ttl,
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
                    memo: crate::ValueMemo::default(),
                };
                let deadline = ttl.map(|ttl| deadline(applied.now, ttl));
                self.record(
                    applied,
                    EventKind::Modified,
                    stored.clone(),
                    Some(current),
                    deadline,
                )?;
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
                    None,
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
            Op::Expire { now, limit } => {
                let due = self
                    .expiry_queue
                    .range(..(now.saturating_add(1), ""))?
                    .take(*limit)
                    .map(|entry| entry.map(|(key, _)| key.value().1.to_string()))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut expired = 0;
                for key in due {
                    match self.current(&key)? {
                        Ok(current) => {
                            self.record(
                                applied,
                                EventKind::Deleted,
                                current.clone(),
                                Some(current),
                                None,
                            )?;
                            expired += 1;
                        }
                        // Cannot happen (a delete drops the deadline): drop it anyway.
                        Err(_) => self.set_deadline(&key, None, applied)?,
                    }
                }
                applied.rescanned_expiry = Some(earliest_deadline(&self.expiry_queue)?);
                Ok(Ok(Outcome::Expired(expired)))
            }
        }
    }

    /// Replaces `key`'s deadline (`None`: it has none).
    fn set_deadline(
        &mut self,
        key: &str,
        deadline: Option<u64>,
        applied: &mut Applied,
    ) -> Result<(), redb::Error> {
        let previous = self.expiry.remove(key)?.map(|d| d.value());
        if let Some(previous) = previous {
            self.expiry_queue.remove((previous, key))?;
        }
        if let Some(deadline) = deadline {
            self.expiry.insert(key, deadline)?;
            self.expiry_queue.insert((deadline, key), ())?;
            applied.earliest_new_expiry = Some(
                applied
                    .earliest_new_expiry
                    .map_or(deadline, |earliest| earliest.min(deadline)),
            );
        }
        Ok(())
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
    /// history record and event, and gives the key `deadline` (a delete: none).
    fn record(
        &mut self,
        applied: &mut Applied,
        kind: EventKind,
        state: KeyValue,
        prev: Option<KeyValue>,
        deadline: Option<u64>,
    ) -> Result<(), redb::Error> {
        self.set_deadline(&state.key, deadline, applied)?;
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

/// The deadline (unix millis) of a write at `now` with `ttl`, rounded up to the
/// millisecond so it is never early.
fn deadline(now: u64, ttl: Duration) -> u64 {
    let millis = u64::try_from(ttl.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
    now.saturating_add(millis)
}

fn conflict(current: KeyValue) -> StorageError {
    StorageError::Conflict {
        key: current.key.clone(),
        current: Some(Box::new(current)),
    }
}
