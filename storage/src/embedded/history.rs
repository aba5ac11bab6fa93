//! The event history: one [`Record`] per revision, enough both to replay the write as an
//! [`Event`] and to undo it (it keeps the key's whole previous state, revisions included).
//!
//! Record layout: kind (u8), key length (u32) + key, value length (u32) + value, then a
//! flag (u8) and, when set, the previous state: `create_revision` (i64), `mod_revision`
//! (i64), value length (u32) + value. A delete does not repeat the value: it is the
//! previous one. Integers are little-endian.

use bytes::Bytes;
use redb::{Database, ReadableDatabase};

use super::tables::{
    HISTORY, META, META_COMPACTED, META_REVISION, corrupt, read_counter, redb_error,
};
use crate::interface::StorageError;
use crate::interface::{Event, EventKind, KeyValue, Revision};

/// One write as the history keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Record {
    /// What the write did.
    pub kind: EventKind,
    /// The key written.
    pub key: String,
    /// The value after the write (for a delete, the value the key last had).
    pub value: Bytes,
    /// The key's state before the write (`None` for a create).
    pub prev: Option<KeyValue>,
}

impl Record {
    /// The record as a watch event at `revision`.
    pub fn into_event(self, revision: Revision) -> Event {
        Event::new(
            self.kind,
            self.key,
            revision,
            self.value,
            self.prev.map(|prev| prev.value),
        )
    }

    /// Encodes the record.
    pub fn encode(&self) -> Vec<u8> {
        let value: &[u8] = match self.kind {
            EventKind::Deleted => &[],
            _ => &self.value,
        };
        let prev_len = self.prev.as_ref().map_or(0, |p| 20 + p.value.len());
        let mut out = Vec::with_capacity(10 + self.key.len() + value.len() + prev_len);
        out.push(match self.kind {
            EventKind::Created => 0,
            EventKind::Modified => 1,
            EventKind::Deleted => 2,
        });
        put_bytes(&mut out, self.key.as_bytes());
        put_bytes(&mut out, value);
        match &self.prev {
            None => out.push(0),
            Some(prev) => {
                out.push(1);
                out.extend_from_slice(&prev.create_revision.to_le_bytes());
                out.extend_from_slice(&prev.mod_revision.to_le_bytes());
                put_bytes(&mut out, &prev.value);
            }
        }
        out
    }

    /// Decodes what [`Record::encode`] wrote.
    pub fn decode(bytes: &[u8]) -> Result<Self, StorageError> {
        let mut reader = Reader(bytes);
        let kind = match reader.u8()? {
            0 => EventKind::Created,
            1 => EventKind::Modified,
            2 => EventKind::Deleted,
            other => return Err(corrupt(format!("unknown history record kind {other}"))),
        };
        let key = std::str::from_utf8(reader.bytes()?)
            .map_err(|_| corrupt("history record key is not UTF-8".to_string()))?
            .to_string();
        let value = Bytes::copy_from_slice(reader.bytes()?);
        let prev = match reader.u8()? {
            0 => None,
            _ => Some(KeyValue {
                key: key.clone(),
                create_revision: reader.i64()?,
                mod_revision: reader.i64()?,
                memo: crate::ValueMemo::default(),
                value: Bytes::copy_from_slice(reader.bytes()?),
            }),
        };
        let value = match (kind, &prev) {
            (EventKind::Deleted, Some(prev)) => prev.value.clone(),
            _ => value,
        };
        Ok(Self {
            kind,
            key,
            value,
            prev,
        })
    }

    /// The key of an encoded record, without decoding the values: history scans filter
    /// by key first.
    pub fn key_of(bytes: &[u8]) -> Result<&str, StorageError> {
        let mut reader = Reader(bytes);
        reader.u8()?;
        std::str::from_utf8(reader.bytes()?)
            .map_err(|_| corrupt("history record key is not UTF-8".to_string()))
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).expect("keys and values are far below 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A cursor over an encoded record.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StorageError> {
        if self.0.len() < n {
            return Err(corrupt("history record is truncated".to_string()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, StorageError> {
        Ok(self.take(1)?[0])
    }

    fn i64(&mut self) -> Result<i64, StorageError> {
        Ok(i64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn bytes(&mut self) -> Result<&'a [u8], StorageError> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes"));
        self.take(len as usize)
    }
}

/// A chunk of history read for a watch's replay.
pub(super) struct Chunk {
    /// The events under the prefix, in revision order.
    pub events: Vec<Event>,
    /// The first revision not scanned yet.
    pub next: Revision,
}

/// Reads the events under `prefix` with revisions in `from..=until`, scanning at most
/// `max_scan` records so one call stays short. Fails with `Expired` when history
/// before `from` was compacted away (the watch would miss events).
pub(super) fn read_chunk(
    db: &Database,
    prefix: &str,
    from: Revision,
    until: Revision,
    max_scan: usize,
) -> Result<Chunk, StorageError> {
    let txn = db.begin_read().map_err(redb_error)?;
    let meta = txn.open_table(META).map_err(redb_error)?;
    let compacted = read_counter(&meta, META_COMPACTED)?;
    if from - 1 < compacted {
        return Err(StorageError::Expired {
            requested: from - 1,
            compacted,
        });
    }
    let history = txn.open_table(HISTORY).map_err(redb_error)?;
    let mut events = Vec::new();
    let mut scanned = 0;
    let mut next = until + 1;
    for entry in history.range(from..=until).map_err(redb_error)? {
        if scanned == max_scan {
            break;
        }
        scanned += 1;
        let (revision, bytes) = entry.map_err(redb_error)?;
        let revision = revision.value();
        if scanned == max_scan {
            // The window goes on: the next chunk starts after this record.
            next = revision + 1;
        }
        if Record::key_of(bytes.value())?.starts_with(prefix) {
            events.push(Record::decode(bytes.value())?.into_event(revision));
        }
    }
    Ok(Chunk { events, next })
}

/// The current and compacted revisions, read together.
pub(super) fn revisions(db: &Database) -> Result<(Revision, Revision), StorageError> {
    let txn = db.begin_read().map_err(redb_error)?;
    let meta = txn.open_table(META).map_err(redb_error)?;
    Ok((
        read_counter(&meta, META_REVISION)?,
        read_counter(&meta, META_COMPACTED)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(value: &'static [u8], create: i64, modified: i64) -> KeyValue {
        KeyValue {
            key: "/a/k".to_string(),
            value: Bytes::from_static(value),
            create_revision: create,
            mod_revision: modified,
            memo: crate::ValueMemo::default(),
        }
    }

    #[test]
    fn records_round_trip() {
        let records = [
            Record {
                kind: EventKind::Created,
                key: "/a/k".to_string(),
                value: Bytes::from_static(b"one"),
                prev: None,
            },
            Record {
                kind: EventKind::Modified,
                key: "/a/k".to_string(),
                value: Bytes::from_static(b"two"),
                prev: Some(kv(b"one", 3, 3)),
            },
            Record {
                kind: EventKind::Deleted,
                key: "/a/k".to_string(),
                value: Bytes::from_static(b"two"),
                prev: Some(kv(b"two", 3, 4)),
            },
        ];
        for record in records {
            let bytes = record.encode();
            assert_eq!(Record::key_of(&bytes).unwrap(), "/a/k");
            assert_eq!(Record::decode(&bytes).unwrap(), record);
        }
    }

    #[test]
    fn truncated_records_are_corrupt() {
        let bytes = Record {
            kind: EventKind::Created,
            key: "/a/k".to_string(),
            value: Bytes::from_static(b"one"),
            prev: None,
        }
        .encode();
        for len in 0..bytes.len() {
            assert!(matches!(
                Record::decode(&bytes[..len]),
                Err(StorageError::Internal { .. })
            ));
        }
    }
}
