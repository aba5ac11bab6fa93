//! The conformance suite against the embedded backend, and what only it promises:
//! persistence across close and reopen, resumable watches, group commit.

#[macro_use]
mod conformance;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_storage::embedded::EmbeddedConfig;
use kapi_storage::{
    EmbeddedStorage, EventKind, ListRequest, ReadAt, Revision, Storage, StorageError, WatchItem,
    WatchStream,
};
use tempfile::TempDir;

const STEP: Duration = Duration::from_secs(15);

fn config() -> EmbeddedConfig {
    EmbeddedConfig::default()
        .with_progress_interval(conformance::PROGRESS_INTERVAL)
        .without_compaction()
}

/// A fresh store in a temp dir; the dir is the guard.
async fn setup() -> (Arc<dyn Storage>, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    (Arc::new(storage), dir)
}

conformance_suite!(setup);

fn bytes(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// The events of a watch until it ends, with the revision of the last one.
async fn drain(stream: &mut WatchStream) -> Vec<kapi_storage::Event> {
    let mut events = Vec::new();
    while let Some(item) = tokio::time::timeout(STEP, stream.next())
        .await
        .expect("watch ended in time")
    {
        if let WatchItem::Event(event) = item.expect("watch failed") {
            events.push(event);
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_revision_and_history_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let a1 = storage.create("/p/a", bytes("a1")).await.unwrap();
    let a2 = storage
        .update("/p/a", bytes("a2"), a1.mod_revision)
        .await
        .unwrap();
    let b = storage.create("/p/b", bytes("b")).await.unwrap();
    storage.compact(a1.mod_revision).await.unwrap();
    let deleted = storage.delete("/p/b", None).await.unwrap();
    storage.close().await.unwrap();
    drop(storage);

    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    assert_eq!(storage.current_revision().await.unwrap(), deleted.revision);
    assert_eq!(storage.compacted_revision().await.unwrap(), a1.mod_revision);
    assert_eq!(
        storage.get("/p/a", ReadAt::Latest).await.unwrap(),
        Some(a2.clone())
    );
    assert_eq!(storage.get("/p/b", ReadAt::Latest).await.unwrap(), None);
    assert_eq!(
        storage
            .get("/p/b", ReadAt::Exact(b.mod_revision))
            .await
            .unwrap(),
        Some(b.clone())
    );
    let past = storage
        .list(&ListRequest {
            prefix: "/p/".to_string(),
            read_at: ReadAt::Exact(b.mod_revision),
            ..ListRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(past.items, vec![a2.clone(), b.clone()]);

    // History after the compacted revision replays after reopen.
    let mut watch = storage.watch("/p/", a1.mod_revision).await.unwrap();
    let mut replayed = Vec::new();
    while replayed.len() < 3 {
        if let WatchItem::Event(event) = tokio::time::timeout(STEP, watch.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            replayed.push((event.kind, event.revision));
        }
    }
    assert_eq!(
        replayed,
        [
            (EventKind::Modified, a2.mod_revision),
            (EventKind::Created, b.mod_revision),
            (EventKind::Deleted, deleted.revision)
        ]
    );
    // The counter continues where it stopped.
    let next = storage.create("/p/c", bytes("c")).await.unwrap();
    assert_eq!(next.mod_revision, deleted.revision + 1);
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_resumed_after_reopen_misses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let mut watch = storage.watch("/r/", 0).await.unwrap();
    let mut written: Vec<Revision> = Vec::new();
    for i in 0..50 {
        written.push(
            storage
                .create(&format!("/r/k{i:02}"), bytes("v"))
                .await
                .unwrap()
                .mod_revision,
        );
    }
    // Closing ends the watch after the events committed before it.
    storage.close().await.unwrap();
    let seen: Vec<Revision> = drain(&mut watch).await.iter().map(|e| e.revision).collect();
    assert_eq!(seen, written);
    let last_seen = *seen.last().unwrap();
    drop(storage);

    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let mut more = Vec::new();
    for i in 50..80 {
        more.push(
            storage
                .create(&format!("/r/k{i:02}"), bytes("v"))
                .await
                .unwrap()
                .mod_revision,
        );
    }
    let mut resumed = storage.watch("/r/", last_seen).await.unwrap();
    let mut got = Vec::new();
    while got.len() < more.len() {
        if let WatchItem::Event(event) = tokio::time::timeout(STEP, resumed.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            got.push(event.revision);
        }
    }
    assert_eq!(got, more);
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_share_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let before = storage.commit_count();
    let writes = 200;
    let tasks: Vec<_> = (0..writes)
        .map(|i| {
            let storage = storage.clone();
            tokio::spawn(async move {
                // Half of the writes fail their precondition: that fails only them.
                if i % 2 == 0 {
                    storage
                        .create(&format!("/g/k{i}"), bytes("v"))
                        .await
                        .map(|_| ())
                } else {
                    storage
                        .update(&format!("/g/k{i}"), bytes("v"), 1)
                        .await
                        .map(|_| ())
                }
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let result = tokio::time::timeout(STEP, task).await.unwrap().unwrap();
        if i % 2 == 0 {
            result.unwrap();
        } else {
            assert!(matches!(result, Err(StorageError::NotFound { .. })));
        }
    }
    let commits = storage.commit_count() - before;
    assert!(
        commits < writes / 2,
        "{writes} concurrent writes took {commits} transactions"
    );
    assert_eq!(
        storage.current_revision().await.unwrap(),
        i64::try_from(writes / 2).unwrap()
    );
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lagging_watch_ends_with_an_error_without_blocking_writers() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config().with_watch_buffer(8)).unwrap();
    let mut watch = storage.watch("/l/", 0).await.unwrap();
    for i in 0..40 {
        tokio::time::timeout(STEP, storage.create(&format!("/l/k{i:02}"), bytes("v")))
            .await
            .expect("writers never wait for watchers")
            .unwrap();
    }
    let mut last = 0;
    let error = loop {
        match tokio::time::timeout(STEP, watch.next()).await.unwrap() {
            Some(Ok(WatchItem::Event(event))) => last = event.revision,
            Some(Ok(WatchItem::Progress(_))) => {}
            Some(Err(error)) => break error,
            None => panic!("the watch ended without an error"),
        }
    };
    assert!(
        matches!(error, StorageError::Unavailable { .. }),
        "{error:?}"
    );
    assert!(watch.next().await.is_none());
    // The consumer resumes from the last revision it saw and misses nothing.
    let mut resumed = storage.watch("/l/", last).await.unwrap();
    let mut expected = last + 1;
    while expected <= 40 {
        if let WatchItem::Event(event) = tokio::time::timeout(STEP, resumed.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            assert_eq!(event.revision, expected);
            expected += 1;
        }
    }
    storage.close().await.unwrap();
}

/// A watch let go for lagging never claims, in a progress notification, a revision
/// whose events it did not pass on: a watch cache would serve reads at it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_watch_claims_no_progress_past_what_it_passed_on() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config().with_watch_buffer(8)).unwrap();
    let requests = kapi_storage::ProgressRequests::new();
    let mut watch = storage
        .watch_with_progress("/l/", 0, &requests)
        .await
        .unwrap();
    for i in 0..40 {
        storage
            .create(&format!("/l/k{i:02}"), bytes("v"))
            .await
            .unwrap();
    }
    // The store moves on outside the prefix, and the consumer asks how far it came.
    let other = storage.create("/other/k", bytes("v")).await.unwrap();
    requests.request(other.mod_revision);
    let mut passed_on = 0;
    loop {
        match tokio::time::timeout(STEP, watch.next()).await.unwrap() {
            Some(Ok(WatchItem::Event(event))) => passed_on = event.revision,
            Some(Ok(WatchItem::Progress(at))) => {
                assert!(
                    at <= passed_on,
                    "progress at {at} after events up to {passed_on}"
                )
            }
            Some(Err(error)) => {
                assert!(
                    matches!(error, StorageError::Unavailable { .. }),
                    "{error:?}"
                );
                break;
            }
            None => panic!("the watch ended without an error"),
        }
    }
    assert!(passed_on < 40, "the watch lagged, so not every event came");
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_compaction_bounds_history() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(
        dir.path(),
        config().with_compaction(Duration::from_millis(50), 5),
    )
    .unwrap();
    // Compaction keeps up while writes never stop.
    let deadline = tokio::time::Instant::now() + STEP;
    let mut written = 0;
    while storage.compacted_revision().await.unwrap() < 20 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no compaction happened"
        );
        storage
            .create(&format!("/c/k{written:04}"), bytes("v"))
            .await
            .unwrap();
        written += 1;
    }
    let compacted = storage.compacted_revision().await.unwrap();
    let current = storage.current_revision().await.unwrap();
    assert!(
        compacted <= current - 5,
        "{compacted} keeps 5 revisions below {current}"
    );
    assert!(matches!(
        storage.get("/c/k0000", ReadAt::Exact(compacted - 1)).await,
        Err(StorageError::Expired { .. })
    ));
    assert_eq!(
        storage
            .list(&ListRequest::default())
            .await
            .unwrap()
            .items
            .len(),
        written
    );
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_commits_queued_writes() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let storage = storage.clone();
            tokio::spawn(async move { storage.create(&format!("/q/k{i:03}"), bytes("v")).await })
        })
        .collect();
    storage.close().await.unwrap();
    let mut accepted = Vec::new();
    for task in tasks {
        match tokio::time::timeout(STEP, task).await.unwrap().unwrap() {
            Ok(kv) => accepted.push(kv),
            Err(StorageError::Unavailable { .. }) => {}
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }
    drop(storage);
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let listed = storage
        .list(&ListRequest {
            prefix: "/q/".to_string(),
            ..ListRequest::default()
        })
        .await
        .unwrap();
    accepted.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(
        listed.items, accepted,
        "every acknowledged write is durable"
    );
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_open_of_the_same_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    match EmbeddedStorage::open_with(dir.path(), config()) {
        Err(StorageError::Internal { .. }) => {}
        other => panic!("expected an error, got {other:?}"),
    }
    storage.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlines_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let soon = storage
        .create_with_ttl("/ttl/soon", bytes("s"), Duration::from_millis(500))
        .await
        .unwrap();
    let later = storage
        .create_with_ttl("/ttl/later", bytes("l"), Duration::from_secs(4))
        .await
        .unwrap();
    storage.close().await.unwrap();
    drop(storage);
    // `soon` passes its deadline while the store is closed.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let storage = EmbeddedStorage::open_with(dir.path(), config()).unwrap();
    let mut watch = storage.watch("/ttl/", later.mod_revision).await.unwrap();
    conformance::wait_until_gone(&storage, "/ttl/soon").await;
    assert_eq!(
        storage.get("/ttl/later", ReadAt::Latest).await.unwrap(),
        Some(later.clone()),
        "a deadline four seconds away is still ahead"
    );
    conformance::wait_until_gone(&storage, "/ttl/later").await;

    let expired = conformance::next_event(&mut watch).await;
    assert_eq!(
        (expired.kind, expired.key.as_str(), expired.value.clone()),
        (EventKind::Deleted, "/ttl/soon", soon.value)
    );
    let expired = conformance::next_event(&mut watch).await;
    assert_eq!(
        (expired.kind, expired.key.as_str(), expired.value.clone()),
        (EventKind::Deleted, "/ttl/later", later.value)
    );
    storage.close().await.unwrap();
}
