//! Writes: the compare-and-put transactions of creates and updates, and the errors a
//! failed compare turns into.

use bytes::Bytes;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse, TxnResponse};

use super::EtcdStorage;
use super::error::map;
use super::range::convert;
use crate::interface::StorageError;
use crate::interface::{KeyValue, Result, Revision};

impl EtcdStorage {
    /// Creates `key`, attached to `lease` when there is one.
    pub(super) async fn put_new(
        &self,
        key: &str,
        value: Bytes,
        lease: Option<i64>,
    ) -> Result<KeyValue> {
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
    pub(super) async fn put_existing(
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

    /// Runs a write transaction (retried only when it was never sent: a write whose
    /// answer was lost may have been applied).
    pub(super) async fn txn(&self, txn: Txn) -> Result<TxnResponse> {
        self.kv()?;
        self.call(false, |mut kv| {
            let txn = txn.clone();
            async move { kv.txn(txn).await }
        })
        .await
        .map_err(map)
    }
}

/// The revision a transaction committed at.
pub(super) fn txn_revision(response: &TxnResponse) -> Revision {
    response.header().map_or(0, |h| h.revision())
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

/// Whether a write failed on its compare, so it certainly wrote nothing.
pub(super) fn compare_failed(error: &StorageError) -> bool {
    matches!(
        error,
        StorageError::AlreadyExists { .. }
            | StorageError::Conflict { .. }
            | StorageError::NotFound { .. }
    )
}

/// A failed compare on an existing key: `Conflict`, else `NotFound`.
pub(super) fn conflict_or_not_found(key: &str, response: &TxnResponse) -> StorageError {
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
