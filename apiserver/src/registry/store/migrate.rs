//! Storage version migration: objects stored in another version than the resource's
//! storage version, written again in it, as kube-storage-version-migrator's no-op
//! updates have kube-apiserver write them (the encoding changed, so the write happens).

use kapi_storage::{
    ListRequest, ReadAt, StorageError, Update, UpdateAttempts, UpdateError, Updated,
};

use super::Store;
use crate::registry::codec::is_stored_in;
use crate::status::ApiError;

/// What one page of [`Store::migrate_page`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigratedPage {
    /// Objects it wrote again in the storage version.
    pub rewritten: usize,
    /// The last key it looked at: where the next page goes on; `None` at the end.
    pub next: Option<String>,
}

impl Store {
    /// The `apiVersion` this resource's objects are stored in.
    pub fn storage_api_version(&self) -> String {
        self.storage_version
            .clone()
            .unwrap_or_else(|| self.info().api_version())
    }

    /// Writes again, in the storage version, the objects of up to `limit` keys after
    /// `after` (from the first when `None`) that are stored in another version; nothing
    /// else about them changes. Each rewrite is a compare-and-swap on what was read, so
    /// a write that lands meanwhile wins, and an object deleted meanwhile is skipped.
    pub async fn migrate_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<MigratedPage, ApiError> {
        let target = self.storage_api_version();
        let request = ListRequest {
            prefix: self.prefix.clone(),
            read_at: ReadAt::Latest,
            // The first key after `after`: list start keys are inclusive.
            start_key: after.map(|k| format!("{k}\0")),
            limit: Some(limit),
        };
        let page = self
            .storage
            .list(&request)
            .await
            .map_err(|e| self.storage_error("", &e))?;
        let mut rewritten = 0;
        for kv in &page.items {
            if is_stored_in(&kv.value, &target) {
                continue;
            }
            if self.rewrite(&kv.key, &target).await? {
                rewritten += 1;
            }
        }
        let next = (page.remaining > 0)
            .then(|| page.items.last().map(|kv| kv.key.clone()))
            .flatten();
        Ok(MigratedPage { rewritten, next })
    }

    /// Writes the object at `key` again in `target` if it is stored in another
    /// version; whether it did.
    async fn rewrite(&self, key: &str, target: &str) -> Result<bool, ApiError> {
        let outcome = async {
            let mut attempts = UpdateAttempts::begin(self.storage.as_ref(), key, self.ttl).await?;
            loop {
                let current = attempts.current();
                let decision = if is_stored_in(&current.value, target) {
                    Ok(Update::Keep)
                } else {
                    self.rewritten_in(&current.value, target)
                        .await
                        .map(Update::Write)
                };
                if let Some(done) = attempts.settle(decision).await? {
                    return Ok(done);
                }
            }
        }
        .await;
        match outcome {
            Ok(Updated::Written(_)) => Ok(true),
            Ok(_) | Err(UpdateError::Storage(StorageError::NotFound { .. })) => Ok(false),
            Err(UpdateError::Storage(e)) => Err(self.storage_error("", &e)),
            Err(UpdateError::Rejected(e)) => Err(e),
        }
    }
}
