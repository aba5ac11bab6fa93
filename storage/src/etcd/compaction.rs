//! The compacted revision's record: the key [`EtcdConfig::compacted_revision_key`]
//! holds the highest revision compacted, raised with a compare-and-swap.

use etcd_client::{Compare, CompareOp, GetOptions, Txn, TxnOp};

#[cfg(doc)]
use super::EtcdConfig;
use super::EtcdStorage;
use crate::interface::StorageError;
use crate::interface::{ReadAt, Result, Revision};

impl EtcdStorage {
    /// The recorded compacted revision and the key's `mod_revision` (0 when absent).
    pub(super) async fn recorded_compaction(&self) -> Result<(Revision, Revision)> {
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
    pub(super) async fn record_compaction(&self, revision: Revision) -> Result<()> {
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
