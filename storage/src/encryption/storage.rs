//! [`EncryptedStorage`]: a [`Storage`] that encrypts the values of some key prefixes
//! on their way into another store and decrypts them on every way out.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::StreamExt;

use super::providers::{Decrypted, TransformError, Transformer};
use crate::interface::StorageError;
use crate::interface::{
    Deleted, Event, KeyValue, ListRequest, ListResponse, ProgressRequests, ReadAt, Result,
    Revision, Storage, WatchItem, WatchStream,
};

/// Encryption at rest in front of a backend: values of keys under the configured
/// prefixes are encrypted by that prefix's [`Transformer`] before the backend sees
/// them, and every value coming back (reads, lists, deletes, conflicts, watch events)
/// is decrypted, so callers see plaintext and the backend (etcd, the embedded file)
/// holds ciphertext. Keys under no prefix pass through as they are.
///
/// It belongs directly on the backend, below any watch cache, so that the cache holds
/// plaintext and decrypts nothing per watcher.
pub struct EncryptedStorage {
    inner: Arc<dyn Storage>,
    prefixes: Arc<Prefixes>,
}

/// The encrypted key prefixes, longest first so that the most specific one wins;
/// shared with the watch streams.
struct Prefixes(Vec<(String, Arc<Transformer>)>);

impl Prefixes {
    fn transformer(&self, key: &str) -> Option<&Transformer> {
        self.0
            .iter()
            .find(|(prefix, _)| key.starts_with(prefix.as_str()))
            .map(|(_, t)| t.as_ref())
    }

    fn decrypt_event(&self, event: Event) -> Result<Event> {
        let Some(t) = self.transformer(&event.key) else {
            return Ok(event);
        };
        let value = t
            .decrypt(&event.key, &event.value)
            .map_err(transform_error)?;
        let prev_value = match &event.prev_value {
            Some(prev) => Some(t.decrypt(&event.key, prev).map_err(transform_error)?.value),
            None => None,
        };
        // A fresh event: the backend's encodings memo (if any) was made of ciphertext.
        Ok(Event::new(
            event.kind,
            event.key,
            event.revision,
            value.value,
            prev_value,
        ))
    }
}

impl EncryptedStorage {
    /// Wraps `inner`, encrypting keys that start with one of `prefixes` (e.g.
    /// `/registry/secrets/`) with its transformer; the longest matching prefix wins.
    pub fn new(inner: Arc<dyn Storage>, mut prefixes: Vec<(String, Arc<Transformer>)>) -> Self {
        prefixes.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        prefixes.dedup_by(|a, b| a.0 == b.0);
        Self {
            inner,
            prefixes: Arc::new(Prefixes(prefixes)),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &Arc<dyn Storage> {
        &self.inner
    }

    /// The prefixes encrypted, longest first.
    pub fn prefixes(&self) -> impl Iterator<Item = &str> {
        self.prefixes.0.iter().map(|(p, _)| p.as_str())
    }

    fn transformer(&self, key: &str) -> Option<&Transformer> {
        self.prefixes.transformer(key)
    }

    fn encrypt(&self, key: &str, value: &Bytes) -> Result<Bytes> {
        match self.transformer(key) {
            None => Ok(value.clone()),
            Some(t) => t.encrypt(key, value).map_err(transform_error),
        }
    }

    fn decrypt_value(&self, key: &str, value: Bytes) -> Result<Decrypted> {
        match self.transformer(key) {
            None => Ok(Decrypted {
                value,
                stale: false,
            }),
            Some(t) => t.decrypt(key, &value).map_err(transform_error),
        }
    }

    fn decrypt(&self, mut kv: KeyValue) -> Result<KeyValue> {
        kv.value = self.decrypt_value(&kv.key, kv.value)?.value;
        Ok(kv)
    }

    /// A write's result carries the plaintext the caller gave, not the ciphertext.
    fn written(kv: Result<KeyValue>, plaintext: Bytes, this: &Self) -> Result<KeyValue> {
        match kv {
            Ok(mut kv) => {
                kv.value = plaintext;
                Ok(kv)
            }
            Err(e) => Err(this.decrypt_error(e)),
        }
    }

    /// Errors carrying a stored state (a conflict) carry it decrypted. A state that does
    /// not decrypt is dropped: the caller then reads it, and sees why.
    fn decrypt_error(&self, error: StorageError) -> StorageError {
        match error {
            StorageError::Conflict {
                key,
                current: Some(current),
            } => StorageError::Conflict {
                key,
                current: self.decrypt(*current).ok().map(Box::new),
            },
            other => other,
        }
    }

    /// Rewrites every value under `prefix` that was written by a provider other than
    /// the current first one (a key rotated away from, or identity before encryption
    /// was turned on), so that the old key can then be dropped from the configuration.
    /// Each rewrite is a compare-and-swap on the revision read; a key written in the
    /// meantime is already current and is skipped. Returns how many were rewritten.
    pub async fn rewrite_stale(&self, prefix: &str) -> Result<usize> {
        let mut rewritten = 0;
        let mut request = ListRequest {
            prefix: prefix.to_string(),
            read_at: ReadAt::Latest,
            start_key: None,
            limit: Some(500),
        };
        loop {
            let page = self.inner.list(&request).await?;
            for kv in &page.items {
                let Some(t) = self.transformer(&kv.key) else {
                    continue;
                };
                let plain = t.decrypt(&kv.key, &kv.value).map_err(transform_error)?;
                if !plain.stale {
                    continue;
                }
                let stored = t.encrypt(&kv.key, &plain.value).map_err(transform_error)?;
                match self.inner.update(&kv.key, stored, kv.mod_revision).await {
                    Ok(_) => rewritten += 1,
                    Err(StorageError::Conflict { .. } | StorageError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            let Some(last) = page.items.last() else { break };
            if page.remaining == 0 {
                break;
            }
            request.start_key = Some(format!("{}\0", last.key));
            request.read_at = ReadAt::Exact(page.revision);
        }
        Ok(rewritten)
    }

    /// `stream` with every event's value decrypted.
    fn decrypting(&self, stream: WatchStream) -> WatchStream {
        if self.prefixes.0.is_empty() {
            return stream;
        }
        let prefixes = self.prefixes.clone();
        // A value that does not decrypt ends the stream after its error, as the
        // contract says of every failure: the consumer resumes from the last revision.
        let stream = stream.scan(false, move |failed, item| {
            let out = if *failed {
                None
            } else {
                let item = match item {
                    Ok(WatchItem::Event(event)) => {
                        prefixes.decrypt_event(event).map(WatchItem::Event)
                    }
                    other => other,
                };
                *failed = item.is_err();
                Some(item)
            };
            std::future::ready(out)
        });
        Box::pin(stream)
    }
}

/// A value that cannot be encrypted or decrypted: an internal error (a 500, as in
/// kube-apiserver) whose message says which key and why, for the log and the client.
fn transform_error(e: TransformError) -> StorageError {
    StorageError::internal(format!("encryption at rest: {e}"), e)
}

#[async_trait]
impl Storage for EncryptedStorage {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        let stored = self.encrypt(key, &value)?;
        Self::written(self.inner.create(key, stored).await, value, self)
    }

    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        let stored = self.encrypt(key, &value)?;
        Self::written(
            self.inner.create_with_ttl(key, stored, ttl).await,
            value,
            self,
        )
    }

    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        match self.inner.get(key, read_at).await? {
            Some(kv) => self.decrypt(kv).map(Some),
            None => Ok(None),
        }
    }

    async fn list(&self, request: &ListRequest) -> Result<ListResponse> {
        let mut response = self.inner.list(request).await?;
        if !self.prefixes.0.is_empty() {
            response.items = response
                .items
                .into_iter()
                .map(|kv| self.decrypt(kv))
                .collect::<Result<_>>()?;
        }
        Ok(response)
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        let stored = self.encrypt(key, &value)?;
        Self::written(self.inner.update(key, stored, expected).await, value, self)
    }

    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue> {
        let stored = self.encrypt(key, &value)?;
        Self::written(
            self.inner.update_with_ttl(key, stored, expected, ttl).await,
            value,
            self,
        )
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        let deleted = self
            .inner
            .delete(key, expected)
            .await
            .map_err(|e| self.decrypt_error(e))?;
        Ok(Deleted {
            prev: self.decrypt(deleted.prev)?,
            revision: deleted.revision,
        })
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        let stream = self.inner.watch(prefix, after).await?;
        Ok(self.decrypting(stream))
    }

    async fn watch_with_progress(
        &self,
        prefix: &str,
        after: Revision,
        requests: &ProgressRequests,
    ) -> Result<WatchStream> {
        let stream = self
            .inner
            .watch_with_progress(prefix, after, requests)
            .await?;
        Ok(self.decrypting(stream))
    }

    fn answers_progress_requests(&self) -> bool {
        self.inner.answers_progress_requests()
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.inner.current_revision().await
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.inner.compact(revision).await
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        self.inner.compacted_revision().await
    }

    async fn close(&self) -> Result<()> {
        self.inner.close().await
    }
}
