//! Reads at a state: the latest one straight from [`KV`], a past one by undoing the
//! history written after it.
//!
//! The state at revision `r` is the current state with every write after `r` undone: for
//! each key written after `r`, its first such write's record holds the key's state at
//! `r` (absent for a create). Each read runs in one redb read transaction, so it sees
//! one consistent snapshot however many writes commit meanwhile.

use std::collections::BTreeMap;

use redb::{Database, ReadOnlyTable, ReadableDatabase};

use super::history::Record;
use super::tables::{
    HISTORY, KV, META, META_COMPACTED, META_REVISION, decode_value, read_counter, redb_error,
};
use crate::interface::StorageError;
use crate::interface::{KeyValue, ListRequest, ListResponse, ReadAt, Revision};

/// One read transaction with the revisions it sees.
struct Snapshot {
    txn: redb::ReadTransaction,
    current: Revision,
    compacted: Revision,
}

impl Snapshot {
    fn begin(db: &Database) -> Result<Self, StorageError> {
        let txn = db.begin_read().map_err(redb_error)?;
        let meta = txn.open_table(META).map_err(redb_error)?;
        let current = read_counter(&meta, META_REVISION)?;
        let compacted = read_counter(&meta, META_COMPACTED)?;
        Ok(Self {
            txn,
            current,
            compacted,
        })
    }

    /// The revision `read_at` asks for, checked against this snapshot.
    fn resolve(&self, read_at: ReadAt) -> Result<Revision, StorageError> {
        match read_at {
            ReadAt::Latest | ReadAt::Any => Ok(self.current),
            ReadAt::NotOlderThan(requested) if requested > self.current => {
                Err(StorageError::TooLargeRevision {
                    requested,
                    current: self.current,
                })
            }
            ReadAt::NotOlderThan(_) => Ok(self.current),
            ReadAt::Exact(requested) if requested > self.current => {
                Err(StorageError::TooLargeRevision {
                    requested,
                    current: self.current,
                })
            }
            ReadAt::Exact(requested) if requested < self.compacted => Err(StorageError::Expired {
                requested,
                compacted: self.compacted,
            }),
            ReadAt::Exact(requested) => Ok(requested),
        }
    }

    fn kv(&self) -> Result<ReadOnlyTable<&'static str, &'static [u8]>, StorageError> {
        self.txn.open_table(KV).map_err(redb_error)
    }

    /// The state at `at` of the keys accepted by `wanted` that were written after `at`:
    /// key → its state then (`None`: absent).
    fn undone_after(
        &self,
        at: Revision,
        wanted: impl Fn(&str) -> bool,
        first_only: bool,
    ) -> Result<BTreeMap<String, Option<KeyValue>>, StorageError> {
        let mut states = BTreeMap::new();
        if at >= self.current {
            return Ok(states);
        }
        let history = self.txn.open_table(HISTORY).map_err(redb_error)?;
        for entry in history.range(at + 1..).map_err(redb_error)? {
            let (_, bytes) = entry.map_err(redb_error)?;
            let key = Record::key_of(bytes.value())?;
            if !wanted(key) || states.contains_key(key) {
                continue;
            }
            let record = Record::decode(bytes.value())?;
            states.insert(record.key, record.prev);
            if first_only {
                break;
            }
        }
        Ok(states)
    }
}

/// [`crate::Storage::get`].
pub(super) fn get(
    db: &Database,
    key: &str,
    read_at: ReadAt,
) -> Result<Option<KeyValue>, StorageError> {
    let snapshot = Snapshot::begin(db)?;
    let at = snapshot.resolve(read_at)?;
    if let Some((_, state)) = snapshot
        .undone_after(at, |k| k == key, true)?
        .into_iter()
        .next()
    {
        return Ok(state);
    }
    let kv = snapshot.kv()?;
    let stored = kv.get(key).map_err(redb_error)?;
    stored
        .map(|bytes| decode_value(key, bytes.value()))
        .transpose()
}

/// [`crate::Storage::list`].
pub(super) fn list(db: &Database, request: &ListRequest) -> Result<ListResponse, StorageError> {
    let snapshot = Snapshot::begin(db)?;
    let at = snapshot.resolve(request.read_at)?;
    let prefix = request.prefix.as_str();
    let start = match &request.start_key {
        Some(start) if start.as_str() > prefix => start.as_str(),
        _ => prefix,
    };
    // Zero means no limit, as in etcd.
    let limit = request.limit.filter(|&l| l > 0).unwrap_or(usize::MAX);

    let mut page = Page {
        items: Vec::new(),
        remaining: 0,
        limit,
    };
    let mut undone = snapshot
        .undone_after(at, |k| k.starts_with(prefix) && k >= start, false)?
        .into_iter()
        .peekable();
    let kv = snapshot.kv()?;
    for entry in kv.range(start..).map_err(redb_error)? {
        let (key, bytes) = entry.map_err(redb_error)?;
        let key = key.value();
        if !key.starts_with(prefix) {
            break;
        }
        // Keys that only existed in the past come before this one in key order.
        while let Some((past, _)) = undone.peek() {
            if past.as_str() >= key {
                break;
            }
            let (_, state) = undone.next().expect("peeked");
            page.push_past(state);
        }
        match undone.peek() {
            Some((past, _)) if past == key => {
                let (_, state) = undone.next().expect("peeked");
                page.push_past(state);
            }
            _ if page.is_full() => page.remaining += 1,
            _ => page.items.push(decode_value(key, bytes.value())?),
        }
    }
    for (_, state) in undone {
        page.push_past(state);
    }
    Ok(ListResponse {
        items: page.items,
        revision: at,
        remaining: page.remaining,
    })
}

/// A list page being filled: items up to the limit, then a count.
struct Page {
    items: Vec<KeyValue>,
    remaining: u64,
    limit: usize,
}

impl Page {
    fn is_full(&self) -> bool {
        self.items.len() >= self.limit
    }

    /// Adds a key's past state, if it existed then.
    fn push_past(&mut self, state: Option<KeyValue>) {
        let Some(state) = state else { return };
        if self.is_full() {
            self.remaining += 1;
        } else {
            self.items.push(state);
        }
    }
}
