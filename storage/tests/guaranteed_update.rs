//! `guaranteed_update` starts from a state that may be stale (a watch cache's `Any`
//! read) and still decides on the latest one: a refusal or a no-op computed from the
//! stale state is computed again from the latest, and a write from it loses the
//! compare-and-swap and is retried. The stale reads come from a wrapper around the
//! embedded store that answers them with a state frozen earlier.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use kapi_storage::{
    Deleted, EmbeddedStorage, KeyValue, ListRequest, ListResponse, ReadAt, Result, Revision,
    Storage, Update, UpdateError, Updated, WatchStream, guaranteed_update,
};

/// The embedded store, except that reads of one key that accept any state answer a
/// frozen one.
struct StaleAny {
    inner: EmbeddedStorage,
    frozen: Mutex<Option<KeyValue>>,
}

impl StaleAny {
    fn freeze(&self, kv: KeyValue) {
        *self.frozen.lock().unwrap_or_else(PoisonError::into_inner) = Some(kv);
    }
}

#[async_trait]
impl Storage for StaleAny {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.inner.create(key, value).await
    }
    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        self.inner.create_with_ttl(key, value, ttl).await
    }
    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        let frozen = self
            .frozen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match frozen {
            Some(kv)
                if matches!(read_at, ReadAt::Any | ReadAt::NotOlderThan(0)) && kv.key == key =>
            {
                Ok(Some(kv))
            }
            _ => self.inner.get(key, read_at).await,
        }
    }
    async fn list(&self, request: &ListRequest) -> Result<ListResponse> {
        self.inner.list(request).await
    }
    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        self.inner.update(key, value, expected).await
    }
    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue> {
        self.inner.update_with_ttl(key, value, expected, ttl).await
    }
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        self.inner.delete(key, expected).await
    }
    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        self.inner.watch(prefix, after).await
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
}

/// A store where `/k` holds "v2" and reads that accept any state still see "v1".
async fn stale_store() -> (StaleAny, KeyValue, KeyValue, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = StaleAny {
        inner: EmbeddedStorage::open(dir.path()).unwrap(),
        frozen: Mutex::new(None),
    };
    let v1 = store.create("/k", Bytes::from_static(b"v1")).await.unwrap();
    let v2 = store
        .update("/k", Bytes::from_static(b"v2"), v1.mod_revision)
        .await
        .unwrap();
    store.freeze(v1.clone());
    assert_eq!(
        store.get("/k", ReadAt::Any).await.unwrap(),
        Some(v1.clone())
    );
    (store, v1, v2, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_from_a_stale_state_is_retried_on_the_latest() {
    let (store, _v1, v2, _dir) = stale_store().await;
    let mut seen = Vec::new();
    let updated = guaranteed_update(&store, "/k", |kv| {
        seen.push(kv.value.clone());
        Ok::<_, ()>(Update::Write(Bytes::from(
            [kv.value.as_ref(), b"+"].concat(),
        )))
    })
    .await
    .unwrap();
    assert_eq!(seen, [Bytes::from_static(b"v1"), Bytes::from_static(b"v2")]);
    let Updated::Written(kv) = updated else {
        panic!("expected a write, got {updated:?}");
    };
    assert_eq!(kv.value, Bytes::from_static(b"v2+"));
    assert!(kv.mod_revision > v2.mod_revision);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_from_a_stale_state_is_decided_again_on_the_latest() {
    let (store, _v1, v2, _dir) = stale_store().await;
    // A precondition on the latest revision (a client's resourceVersion): the stale
    // state fails it, the latest passes it.
    let mut calls = 0;
    let updated = guaranteed_update(&store, "/k", |kv| {
        calls += 1;
        if kv.mod_revision != v2.mod_revision {
            return Err("stale resourceVersion");
        }
        Ok(Update::Write(Bytes::from_static(b"v3")))
    })
    .await
    .unwrap();
    assert_eq!(calls, 2);
    assert!(matches!(updated, Updated::Written(kv) if kv.value == Bytes::from_static(b"v3")));
    // A refusal on the latest state is final.
    match guaranteed_update(&store, "/k", |_| Err::<Update, _>("no")).await {
        Err(UpdateError::Rejected("no")) => {}
        other => panic!("expected the refusal, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_op_from_a_stale_state_reports_the_latest() {
    let (store, _v1, v2, _dir) = stale_store().await;
    let kept = guaranteed_update(&store, "/k", |_| Ok::<_, ()>(Update::Keep))
        .await
        .unwrap();
    assert_eq!(kept, Updated::Kept(v2));
}
