//! Range reads: a read at a [`ReadAt`], its revision errors as `Expired` or
//! `TooLargeRevision`, key ranges of a prefix, and etcd's key-values as kapi's.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use etcd_client::{GetOptions, GetResponse};

use super::EtcdStorage;
use super::error::{Kind, bad_key, kind, map};
use crate::interface::StorageError;
use crate::interface::{KeyValue, ReadAt, Result, Revision, Storage};

impl EtcdStorage {
    /// A range read, with revision errors turned into `Expired`/`TooLargeRevision`.
    pub(super) async fn range(
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
    pub(super) async fn revision_error(
        &self,
        error: etcd_client::Error,
        requested: Revision,
    ) -> StorageError {
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

    /// For an `Exact` read at or below revision 0: `Ok` (empty) unless compacted.
    pub(super) async fn empty_past(&self, requested: Revision) -> Result<()> {
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

/// The revision an etcd response was served at.
pub(super) fn revision_of(response: &GetResponse) -> Revision {
    response.header().map_or(0, |h| h.revision())
}

/// The first key after every key that starts with `prefix`: the end of its range
/// (`\0`, meaning "to the end", when there is none).
pub(super) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
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
pub(super) fn convert(kv: &etcd_client::KeyValue) -> Result<KeyValue> {
    Ok(KeyValue {
        key: kv.key_str().map_err(|_| bad_key(kv.key()))?.to_string(),
        value: Bytes::copy_from_slice(kv.value()),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
        memo: crate::ValueMemo::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"/a/"), b"/a0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff\xff"), b"\0");
        assert_eq!(prefix_end(b""), b"\0");
    }
}
