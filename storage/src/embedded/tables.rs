//! The redb tables of the embedded backend and the byte layout of what they store.
//!
//! - [`KV`]: the current state, key → `create_revision`, `mod_revision`, value;
//! - [`HISTORY`]: revision → the write at that revision, with the key's state before it
//!   (see [`super::history`]), so watches can replay it and past states can be rebuilt;
//! - [`META`]: the revision counter and the compacted revision;
//! - [`EXPIRY`] and [`EXPIRY_QUEUE`]: the deadlines of keys written with a time-to-live,
//!   by key (to replace or drop a key's deadline) and by deadline (to find the next one).

use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use redb::{ReadableTable, TableDefinition};

use crate::interface::StorageError;
use crate::interface::{KeyValue, Revision};

/// The current state: key → [`encode_value`] bytes.
pub(super) const KV: TableDefinition<&str, &[u8]> = TableDefinition::new("kv");

/// The event history: revision → [`super::history::Record`] bytes.
pub(super) const HISTORY: TableDefinition<i64, &[u8]> = TableDefinition::new("history");

/// Counters: [`META_REVISION`] and [`META_COMPACTED`].
pub(super) const META: TableDefinition<&str, i64> = TableDefinition::new("meta");

/// The deadline of each key written with a time-to-live: key → unix time in
/// milliseconds. A key has an entry here exactly when it has one in [`EXPIRY_QUEUE`].
pub(super) const EXPIRY: TableDefinition<&str, u64> = TableDefinition::new("expiry");

/// The same deadlines ordered by time: (unix time in milliseconds, key) → nothing.
pub(super) const EXPIRY_QUEUE: TableDefinition<(u64, &str), ()> =
    TableDefinition::new("expiry_queue");

/// The revision of the latest write.
pub(super) const META_REVISION: &str = "revision";

/// The highest compacted revision.
pub(super) const META_COMPACTED: &str = "compacted";

/// Width of the two revisions in front of a stored value.
const VALUE_HEADER: usize = 16;

/// Encodes a stored key's revisions and value.
pub(super) fn encode_value(
    create_revision: Revision,
    mod_revision: Revision,
    value: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(VALUE_HEADER + value.len());
    out.extend_from_slice(&create_revision.to_le_bytes());
    out.extend_from_slice(&mod_revision.to_le_bytes());
    out.extend_from_slice(value);
    out
}

/// Decodes what [`encode_value`] wrote, for `key`.
pub(super) fn decode_value(key: &str, bytes: &[u8]) -> Result<KeyValue, StorageError> {
    if bytes.len() < VALUE_HEADER {
        return Err(corrupt(format!("stored value of {key} is truncated")));
    }
    let (create, rest) = bytes.split_at(8);
    let (modified, value) = rest.split_at(8);
    Ok(KeyValue {
        key: key.to_string(),
        value: Bytes::copy_from_slice(value),
        create_revision: i64::from_le_bytes(create.try_into().expect("8 bytes")),
        mod_revision: i64::from_le_bytes(modified.try_into().expect("8 bytes")),
        memo: crate::ValueMemo::default(),
    })
}

/// Reads a counter of [`META`], 0 when it was never written.
pub(super) fn read_counter(
    meta: &impl ReadableTable<&'static str, i64>,
    name: &str,
) -> Result<i64, StorageError> {
    Ok(meta
        .get(name)
        .map_err(redb_error)?
        .map(|v| v.value())
        .unwrap_or(0))
}

/// `at` as unix time in milliseconds, the unit of [`EXPIRY`].
pub(super) fn unix_millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

/// The first deadline of [`EXPIRY_QUEUE`], if any.
pub(super) fn earliest_deadline(
    queue: &impl ReadableTable<(u64, &'static str), ()>,
) -> Result<Option<u64>, redb::StorageError> {
    Ok(queue.first()?.map(|(entry, _)| entry.value().0))
}

/// A redb failure: nothing the caller can fix by retrying.
pub(super) fn redb_error(error: impl Into<redb::Error>) -> StorageError {
    StorageError::internal("embedded storage (redb) failed", error.into())
}

/// Stored bytes that do not decode.
pub(super) fn corrupt(message: String) -> StorageError {
    StorageError::Internal {
        message: format!("embedded storage is corrupt: {message}"),
        source: None,
    }
}

/// The error for calls after [`super::EmbeddedStorage::close`].
pub(super) fn closed() -> StorageError {
    StorageError::Unavailable {
        message: "embedded storage is closed".to_string(),
        source: None,
    }
}
