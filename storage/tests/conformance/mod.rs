//! The storage conformance suite: one set of tests over `Arc<dyn Storage>`, run against
//! every backend. Each test gets a fresh, empty store from the backend's setup function
//! (see [`conformance_suite!`]) and keeps to its own key prefix.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_storage::{
    Event, EventKind, KeyValue, ListRequest, ReadAt, Revision, Storage, StorageError, Update,
    UpdateError, Updated, WatchItem, WatchStream, guaranteed_update, guaranteed_update_with_ttl,
};

/// Bound on one whole test.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// Bound on one awaited step (a watch item, a background task).
const STEP: Duration = Duration::from_secs(15);

/// How long a key with a time-to-live may outlive its deadline in these tests: expiry
/// comes within about a second, etcd's lease granularity and minimum TTL add a little.
pub const EXPIRY_BOUND: Duration = Duration::from_secs(10);

/// The progress interval the setups configure, so idle watches report quickly.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(300);

/// Generates one `#[tokio::test]` per conformance test. `$setup` is an async fn
/// returning `(Arc<dyn Storage>, guard)`; the guard (a temp dir, an etcd process) lives
/// until the test ends.
macro_rules! conformance_suite {
    ($setup:path) => {
        conformance_suite!(@tests $setup;
            create_and_already_exists,
            get_at_revisions,
            list_prefix_isolation,
            list_pagination_at_fixed_revision,
            list_exact_rebuilds_past_state,
            update_cas_and_conflict,
            guaranteed_update_under_concurrent_writers,
            guaranteed_update_keep_delete_reject,
            delete_with_and_without_precondition,
            watch_replays_then_follows_live,
            watch_reports_progress_while_idle,
            watch_after_compaction_is_expired,
            exact_read_after_compaction_is_expired,
            current_revision_is_monotonic,
            close_ends_watches_and_refuses_calls,
            key_with_ttl_expires_as_a_delete,
            write_with_ttl_renews_the_deadline,
            plain_update_clears_the_ttl,
        );
    };
    (@tests $setup:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let (storage, guard) = $setup().await;
                tokio::time::timeout(conformance::TEST_TIMEOUT, conformance::$name(storage))
                    .await
                    .expect("test timed out");
                drop(guard);
            }
        )*
    };
}

pub fn bytes(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// The next item of a watch; panics when it fails, ends or takes too long.
async fn next_item(stream: &mut WatchStream) -> WatchItem {
    tokio::time::timeout(STEP, stream.next())
        .await
        .expect("no watch item in time")
        .expect("watch ended")
        .expect("watch failed")
}

/// The next event of a watch, skipping progress notifications.
pub async fn next_event(stream: &mut WatchStream) -> Event {
    loop {
        if let WatchItem::Event(event) = next_item(stream).await {
            return event;
        }
    }
}

pub fn list_at(prefix: &str, read_at: ReadAt) -> ListRequest {
    ListRequest {
        prefix: prefix.to_string(),
        read_at,
        ..ListRequest::default()
    }
}

fn keys(items: &[KeyValue]) -> Vec<&str> {
    items.iter().map(|kv| kv.key.as_str()).collect()
}

pub async fn create_and_already_exists(s: Arc<dyn Storage>) {
    let before = s.current_revision().await.unwrap();
    let created = s.create("/t/create/a", bytes("one")).await.unwrap();
    assert_eq!(created.key, "/t/create/a");
    assert_eq!(created.value, bytes("one"));
    assert!(created.mod_revision > before);
    assert_eq!(created.create_revision, created.mod_revision);

    match s.create("/t/create/a", bytes("two")).await {
        Err(StorageError::AlreadyExists { key }) => assert_eq!(key, "/t/create/a"),
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    // The failed create changed nothing.
    assert_eq!(
        s.get("/t/create/a", ReadAt::Latest).await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(s.current_revision().await.unwrap(), created.mod_revision);
    assert_eq!(s.get("/t/create/b", ReadAt::Latest).await.unwrap(), None);
}

pub async fn get_at_revisions(s: Arc<dyn Storage>) {
    let v1 = s.create("/t/get/k", bytes("v1")).await.unwrap();
    let v2 = s
        .update("/t/get/k", bytes("v2"), v1.mod_revision)
        .await
        .unwrap();

    assert_eq!(
        s.get("/t/get/k", ReadAt::Latest).await.unwrap(),
        Some(v2.clone())
    );
    let any = s.get("/t/get/k", ReadAt::Any).await.unwrap().unwrap();
    assert!(any.mod_revision >= v1.mod_revision);
    assert_eq!(
        s.get("/t/get/k", ReadAt::Exact(v1.mod_revision))
            .await
            .unwrap(),
        Some(v1.clone())
    );
    assert_eq!(
        s.get("/t/get/k", ReadAt::Exact(v2.mod_revision))
            .await
            .unwrap(),
        Some(v2.clone())
    );
    assert_eq!(
        s.get("/t/get/k", ReadAt::Exact(v1.mod_revision - 1))
            .await
            .unwrap(),
        None,
        "the key did not exist before its create"
    );
    assert_eq!(
        s.get("/t/get/k", ReadAt::NotOlderThan(v2.mod_revision))
            .await
            .unwrap(),
        Some(v2.clone())
    );
    let current = s.current_revision().await.unwrap();
    match s.get("/t/get/k", ReadAt::NotOlderThan(current + 100)).await {
        Err(StorageError::TooLargeRevision {
            requested,
            current: at,
        }) => {
            assert_eq!(requested, current + 100);
            assert!(at >= current);
        }
        other => panic!("expected TooLargeRevision, got {other:?}"),
    }
    match s.get("/t/get/k", ReadAt::Exact(current + 100)).await {
        Err(StorageError::TooLargeRevision { .. }) => {}
        other => panic!("expected TooLargeRevision, got {other:?}"),
    }

    let deleted = s.delete("/t/get/k", None).await.unwrap();
    assert_eq!(s.get("/t/get/k", ReadAt::Latest).await.unwrap(), None);
    assert_eq!(
        s.get("/t/get/k", ReadAt::Exact(deleted.revision - 1))
            .await
            .unwrap(),
        Some(v2)
    );
    assert_eq!(
        s.get("/t/get/k", ReadAt::Exact(deleted.revision))
            .await
            .unwrap(),
        None
    );
}

pub async fn list_prefix_isolation(s: Arc<dyn Storage>) {
    for key in [
        "/t/list/a/2",
        "/t/list/a/1",
        "/t/list/ab/1",
        "/t/list/a",
        "/t/list/b/1",
    ] {
        s.create(key, bytes(key)).await.unwrap();
    }
    let current = s.current_revision().await.unwrap();

    let a = s
        .list(&list_at("/t/list/a/", ReadAt::Latest))
        .await
        .unwrap();
    assert_eq!(keys(&a.items), ["/t/list/a/1", "/t/list/a/2"]);
    assert_eq!(a.remaining, 0);
    assert_eq!(a.revision, current);
    assert_eq!(a.items[0].value, bytes("/t/list/a/1"));

    let ab = s
        .list(&list_at("/t/list/ab/", ReadAt::Latest))
        .await
        .unwrap();
    assert_eq!(keys(&ab.items), ["/t/list/ab/1"]);

    let all = s.list(&list_at("/t/list/", ReadAt::Latest)).await.unwrap();
    assert_eq!(
        keys(&all.items),
        [
            "/t/list/a",
            "/t/list/a/1",
            "/t/list/a/2",
            "/t/list/ab/1",
            "/t/list/b/1"
        ]
    );
    let none = s
        .list(&list_at("/t/list/c/", ReadAt::Latest))
        .await
        .unwrap();
    assert!(none.items.is_empty());
    assert_eq!(none.remaining, 0);

    let past_prefix = s
        .list(&ListRequest {
            start_key: Some("/t/list/b".to_string()),
            ..list_at("/t/list/a/", ReadAt::Latest)
        })
        .await
        .unwrap();
    assert!(past_prefix.items.is_empty());
    assert_eq!(past_prefix.remaining, 0);
    let before_prefix = s
        .list(&ListRequest {
            start_key: Some("/t/a".to_string()),
            ..list_at("/t/list/a/", ReadAt::Latest)
        })
        .await
        .unwrap();
    assert_eq!(keys(&before_prefix.items), ["/t/list/a/1", "/t/list/a/2"]);
    let zero_limit = s
        .list(&ListRequest {
            limit: Some(0),
            ..list_at("/t/list/", ReadAt::Latest)
        })
        .await
        .unwrap();
    assert_eq!(zero_limit.items.len(), 5, "a zero limit means no limit");
    let limited = s
        .list(&ListRequest {
            limit: Some(2),
            ..list_at("/t/list/", ReadAt::Latest)
        })
        .await
        .unwrap();
    assert_eq!(keys(&limited.items), ["/t/list/a", "/t/list/a/1"]);
    assert_eq!(limited.remaining, 3);

    let any = s.list(&list_at("/t/list/a/", ReadAt::Any)).await.unwrap();
    assert_eq!(keys(&any.items), ["/t/list/a/1", "/t/list/a/2"]);
    match s
        .list(&list_at("/t/list/a/", ReadAt::NotOlderThan(current + 50)))
        .await
    {
        Err(StorageError::TooLargeRevision { .. }) => {}
        other => panic!("expected TooLargeRevision, got {other:?}"),
    }
}

pub async fn list_pagination_at_fixed_revision(s: Arc<dyn Storage>) {
    let mut originals = Vec::new();
    for i in 0..10 {
        let key = format!("/t/page/k{i:02}");
        originals.push(s.create(&key, bytes(&format!("v{i}"))).await.unwrap());
    }

    // Writers keep going under the same prefix while the pages are read.
    let background = {
        let s = s.clone();
        tokio::spawn(async move {
            for i in 0..30 {
                s.create(&format!("/t/page/k05-bg{i:02}"), bytes("bg"))
                    .await
                    .unwrap();
                tokio::task::yield_now().await;
            }
        })
    };

    let first = s
        .list(&ListRequest {
            limit: Some(3),
            ..list_at("/t/page/", ReadAt::Latest)
        })
        .await
        .unwrap();
    let at = first.revision;
    let mut seen = first.items.clone();
    let mut remaining = first.remaining;
    assert_eq!(first.items.len(), 3);

    // Changes after the first page must not show in the later ones.
    let k05 = originals[5].clone();
    s.update(&k05.key, bytes("changed"), k05.mod_revision)
        .await
        .unwrap();
    s.delete(&originals[7].key, None).await.unwrap();
    s.create("/t/page/k03a", bytes("new")).await.unwrap();
    s.create("/t/page/k10", bytes("new")).await.unwrap();

    while remaining > 0 {
        let last = seen.last().unwrap().key.clone();
        let page = s
            .list(&ListRequest {
                start_key: Some(format!("{last}\0")),
                limit: Some(3),
                ..list_at("/t/page/", ReadAt::Exact(at))
            })
            .await
            .unwrap();
        assert_eq!(page.revision, at);
        assert!(!page.items.is_empty() && page.items.len() <= 3);
        assert_eq!(
            page.remaining,
            remaining - page.items.len() as u64,
            "remaining counts at the same revision"
        );
        remaining = page.remaining;
        seen.extend(page.items);
    }
    tokio::time::timeout(STEP, background)
        .await
        .expect("background writer finished")
        .unwrap();

    // Every page shows the state at `at`: the originals plus whatever background keys
    // existed then, never the later changes.
    let expected = s
        .list(&list_at("/t/page/", ReadAt::Exact(at)))
        .await
        .unwrap();
    assert_eq!(seen, expected.items);
    for original in &originals {
        assert!(seen.contains(original), "{} missing", original.key);
    }
    assert!(!keys(&seen).contains(&"/t/page/k03a"));
    assert!(!keys(&seen).contains(&"/t/page/k10"));

    let latest = s.list(&list_at("/t/page/", ReadAt::Latest)).await.unwrap();
    assert!(keys(&latest.items).contains(&"/t/page/k03a"));
    assert!(!keys(&latest.items).contains(&"/t/page/k07"));
    assert_eq!(latest.items.len(), 10 + 30 + 2 - 1);
}

pub async fn list_exact_rebuilds_past_state(s: Arc<dyn Storage>) {
    let a = s.create("/t/past/a", bytes("a1")).await.unwrap();
    let b = s.create("/t/past/b", bytes("b1")).await.unwrap();
    let at = b.mod_revision;
    s.update("/t/past/a", bytes("a2"), a.mod_revision)
        .await
        .unwrap();
    s.delete("/t/past/b", None).await.unwrap();
    s.create("/t/past/c", bytes("c1")).await.unwrap();
    s.create("/t/pastx/d", bytes("d1")).await.unwrap();

    let past = s
        .list(&list_at("/t/past/", ReadAt::Exact(at)))
        .await
        .unwrap();
    assert_eq!(past.items, vec![a.clone(), b.clone()]);
    assert_eq!(past.revision, at);
    assert_eq!(past.remaining, 0);

    let limited = s
        .list(&ListRequest {
            limit: Some(1),
            ..list_at("/t/past/", ReadAt::Exact(at))
        })
        .await
        .unwrap();
    assert_eq!(limited.items, vec![a]);
    assert_eq!(limited.remaining, 1);

    let latest = s.list(&list_at("/t/past/", ReadAt::Latest)).await.unwrap();
    assert_eq!(keys(&latest.items), ["/t/past/a", "/t/past/c"]);
    assert_eq!(latest.items[0].value, bytes("a2"));
}

pub async fn update_cas_and_conflict(s: Arc<dyn Storage>) {
    let v1 = s.create("/t/cas/k", bytes("v1")).await.unwrap();
    let v2 = s
        .update("/t/cas/k", bytes("v2"), v1.mod_revision)
        .await
        .unwrap();
    assert_eq!(v2.create_revision, v1.create_revision);
    assert!(v2.mod_revision > v1.mod_revision);
    assert_eq!(v2.value, bytes("v2"));

    match s.update("/t/cas/k", bytes("v3"), v1.mod_revision).await {
        Err(StorageError::Conflict { key, current }) => {
            assert_eq!(key, "/t/cas/k");
            assert_eq!(
                current.as_deref(),
                Some(&v2),
                "conflict carries the current state"
            );
        }
        other => panic!("expected Conflict, got {other:?}"),
    }
    assert_eq!(s.get("/t/cas/k", ReadAt::Latest).await.unwrap(), Some(v2));

    match s
        .update("/t/cas/missing", bytes("x"), v1.mod_revision)
        .await
    {
        Err(StorageError::NotFound { key }) => assert_eq!(key, "/t/cas/missing"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    match s.update("/t/cas/missing", bytes("x"), 0).await {
        Err(StorageError::NotFound { .. }) => {}
        other => panic!("an update never creates, got {other:?}"),
    }
}

pub async fn guaranteed_update_under_concurrent_writers(s: Arc<dyn Storage>) {
    s.create("/t/counter/c", bytes("0")).await.unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            tokio::spawn(async move {
                for _ in 0..20 {
                    let updated = guaranteed_update(&*s, "/t/counter/c", |kv| {
                        let n: u64 = std::str::from_utf8(&kv.value).unwrap().parse().unwrap();
                        Ok::<_, ()>(Update::Write(bytes(&(n + 1).to_string())))
                    })
                    .await
                    .unwrap();
                    assert!(matches!(updated, Updated::Written(_)));
                }
            })
        })
        .collect();
    for task in tasks {
        tokio::time::timeout(TEST_TIMEOUT, task)
            .await
            .unwrap()
            .unwrap();
    }
    let counter = s
        .get("/t/counter/c", ReadAt::Latest)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counter.value, bytes("160"));
}

pub async fn guaranteed_update_keep_delete_reject(s: Arc<dyn Storage>) {
    let created = s.create("/t/gu/k", bytes("v")).await.unwrap();
    let kept = guaranteed_update(&*s, "/t/gu/k", |_| Ok::<_, ()>(Update::Keep))
        .await
        .unwrap();
    assert_eq!(kept, Updated::Kept(created.clone()));
    assert_eq!(s.current_revision().await.unwrap(), created.mod_revision);

    match guaranteed_update(&*s, "/t/gu/k", |_| Err::<Update, _>("no")).await {
        Err(UpdateError::Rejected("no")) => {}
        other => panic!("expected Rejected, got {other:?}"),
    }

    match guaranteed_update(&*s, "/t/gu/k", |_| Ok::<_, ()>(Update::Delete)).await {
        Ok(Updated::Deleted(deleted)) => {
            assert_eq!(deleted.prev, created);
            assert!(deleted.revision > created.mod_revision);
        }
        other => panic!("expected Deleted, got {other:?}"),
    }
    match guaranteed_update(&*s, "/t/gu/k", |_| Ok::<_, ()>(Update::Keep)).await {
        Err(UpdateError::Storage(StorageError::NotFound { .. })) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

pub async fn delete_with_and_without_precondition(s: Arc<dyn Storage>) {
    let v1 = s.create("/t/del/a", bytes("v1")).await.unwrap();
    let v2 = s
        .update("/t/del/a", bytes("v2"), v1.mod_revision)
        .await
        .unwrap();

    match s.delete("/t/del/a", Some(v1.mod_revision)).await {
        Err(StorageError::Conflict { current, .. }) => {
            assert_eq!(current.as_deref(), Some(&v2));
        }
        other => panic!("expected Conflict, got {other:?}"),
    }
    let deleted = s.delete("/t/del/a", Some(v2.mod_revision)).await.unwrap();
    assert_eq!(deleted.prev, v2);
    assert!(deleted.revision > v2.mod_revision);
    assert_eq!(s.current_revision().await.unwrap(), deleted.revision);
    assert_eq!(s.get("/t/del/a", ReadAt::Latest).await.unwrap(), None);

    match s.delete("/t/del/a", None).await {
        Err(StorageError::NotFound { key }) => assert_eq!(key, "/t/del/a"),
        other => panic!("expected NotFound, got {other:?}"),
    }
    match s.delete("/t/del/a", Some(v2.mod_revision)).await {
        Err(StorageError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }

    let b = s.create("/t/del/b", bytes("b")).await.unwrap();
    let deleted = s.delete("/t/del/b", None).await.unwrap();
    assert_eq!(deleted.prev, b);
    // A key created again starts a new life.
    let again = s.create("/t/del/b", bytes("b2")).await.unwrap();
    assert!(again.create_revision > deleted.revision);
}

pub async fn watch_replays_then_follows_live(s: Arc<dyn Storage>) {
    let start = s.current_revision().await.unwrap();
    let a1 = s.create("/t/watch/a", bytes("a1")).await.unwrap();
    let a2 = s
        .update("/t/watch/a", bytes("a2"), a1.mod_revision)
        .await
        .unwrap();
    s.create("/t/watchx/other", bytes("x")).await.unwrap();
    let deleted = s.delete("/t/watch/a", None).await.unwrap();

    let mut watch = s.watch("/t/watch/", start).await.unwrap();
    // Replay, in order, with previous values.
    let created = next_event(&mut watch).await;
    assert_eq!(
        created,
        Event::new(
            EventKind::Created,
            "/t/watch/a".to_string(),
            a1.mod_revision,
            bytes("a1"),
            None,
        )
    );
    let modified = next_event(&mut watch).await;
    assert_eq!(modified.kind, EventKind::Modified);
    assert_eq!(modified.revision, a2.mod_revision);
    assert_eq!(modified.value, bytes("a2"));
    assert_eq!(modified.prev_value, Some(bytes("a1")));
    let gone = next_event(&mut watch).await;
    assert_eq!(gone.kind, EventKind::Deleted);
    assert_eq!(gone.revision, deleted.revision);
    assert_eq!(gone.value, bytes("a2"));
    assert_eq!(gone.prev_value, Some(bytes("a2")));

    // Then live: writes made after the watch started, with no gap and no duplicate.
    let writer = {
        let s = s.clone();
        tokio::spawn(async move {
            let mut revisions = Vec::new();
            for i in 0..20 {
                let key = format!("/t/watch/live{i:02}");
                let kv = s.create(&key, bytes("1")).await.unwrap();
                s.create(&format!("/t/watchx/noise{i:02}"), bytes("n"))
                    .await
                    .unwrap();
                let kv = s.update(&key, bytes("2"), kv.mod_revision).await.unwrap();
                revisions.push(kv.mod_revision);
            }
            revisions
        })
    };
    let mut last = deleted.revision;
    for i in 0..20 {
        let created = next_event(&mut watch).await;
        assert_eq!(created.kind, EventKind::Created);
        assert_eq!(created.key, format!("/t/watch/live{i:02}"));
        assert!(created.revision > last);
        let modified = next_event(&mut watch).await;
        assert_eq!(modified.kind, EventKind::Modified);
        assert_eq!(modified.key, created.key);
        assert_eq!(modified.prev_value, Some(bytes("1")));
        assert!(modified.revision > created.revision);
        last = modified.revision;
    }
    let revisions = tokio::time::timeout(STEP, writer).await.unwrap().unwrap();
    assert_eq!(*revisions.last().unwrap(), last);

    // Nothing else is pending: the next event is the next write.
    let sentinel = s.create("/t/watch/zz", bytes("z")).await.unwrap();
    let next = next_event(&mut watch).await;
    assert_eq!(next.key, "/t/watch/zz");
    assert_eq!(next.revision, sentinel.mod_revision);

    // A watch from the middle starts right after it.
    let mut middle = s.watch("/t/watch/", a1.mod_revision).await.unwrap();
    assert_eq!(next_event(&mut middle).await.revision, a2.mod_revision);
    assert_eq!(next_event(&mut middle).await.revision, deleted.revision);
}

pub async fn watch_reports_progress_while_idle(s: Arc<dyn Storage>) {
    s.create("/t/progress/a", bytes("a")).await.unwrap();
    let start = s.current_revision().await.unwrap();
    let mut watch = s.watch("/t/progress/", start).await.unwrap();
    match next_item(&mut watch).await {
        WatchItem::Progress(revision) => assert!(revision >= start),
        other => panic!("expected Progress while idle, got {other:?}"),
    }
    // Writes elsewhere move the reported revision without events.
    let other = s.create("/t/progressx/b", bytes("b")).await.unwrap();
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        match next_item(&mut watch).await {
            WatchItem::Progress(revision) if revision >= other.mod_revision => break,
            WatchItem::Progress(_) => {}
            WatchItem::Event(event) => panic!("unexpected event {event:?}"),
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "progress never caught up"
        );
    }
}

/// Whether a watch from `after` fails with `Expired`, at its start or as its first item.
async fn watch_is_expired(s: &dyn Storage, prefix: &str, after: Revision) -> bool {
    match s.watch(prefix, after).await {
        Err(StorageError::Expired { requested, .. }) => {
            assert_eq!(requested, after);
            true
        }
        Err(other) => panic!("expected Expired, got {other:?}"),
        Ok(mut stream) => matches!(
            tokio::time::timeout(STEP, stream.next()).await,
            Ok(Some(Err(StorageError::Expired { .. })))
        ),
    }
}

pub async fn watch_after_compaction_is_expired(s: Arc<dyn Storage>) {
    let r1 = s.create("/t/wc/k", bytes("1")).await.unwrap();
    let r2 = s
        .update("/t/wc/k", bytes("2"), r1.mod_revision)
        .await
        .unwrap();
    let r3 = s
        .update("/t/wc/k", bytes("3"), r2.mod_revision)
        .await
        .unwrap();
    s.compact(r2.mod_revision).await.unwrap();
    assert!(s.compacted_revision().await.unwrap() >= r2.mod_revision);

    assert!(watch_is_expired(&*s, "/t/wc/", r1.mod_revision).await);
    // From the compacted revision itself, history is still complete.
    let mut watch = s.watch("/t/wc/", r2.mod_revision).await.unwrap();
    let event = next_event(&mut watch).await;
    assert_eq!(event.revision, r3.mod_revision);
    assert_eq!(event.prev_value, Some(bytes("2")));
}

pub async fn exact_read_after_compaction_is_expired(s: Arc<dyn Storage>) {
    let r1 = s.create("/t/ec/k", bytes("1")).await.unwrap();
    let r2 = s
        .update("/t/ec/k", bytes("2"), r1.mod_revision)
        .await
        .unwrap();
    s.update("/t/ec/k", bytes("3"), r2.mod_revision)
        .await
        .unwrap();
    assert_eq!(s.compacted_revision().await.unwrap(), 0);
    s.compact(r2.mod_revision).await.unwrap();
    let compacted = s.compacted_revision().await.unwrap();
    assert_eq!(compacted, r2.mod_revision);

    match s.get("/t/ec/k", ReadAt::Exact(r1.mod_revision)).await {
        Err(StorageError::Expired {
            requested,
            compacted,
        }) => {
            assert_eq!(requested, r1.mod_revision);
            assert_eq!(compacted, r2.mod_revision);
        }
        other => panic!("expected Expired, got {other:?}"),
    }
    match s
        .list(&list_at("/t/ec/", ReadAt::Exact(r1.mod_revision)))
        .await
    {
        Err(StorageError::Expired { .. }) => {}
        other => panic!("expected Expired, got {other:?}"),
    }
    // The state at the compacted revision itself is kept.
    assert_eq!(
        s.get("/t/ec/k", ReadAt::Exact(r2.mod_revision))
            .await
            .unwrap(),
        Some(r2.clone())
    );
    // Latest reads are unaffected.
    assert_eq!(
        s.get("/t/ec/k", ReadAt::Latest)
            .await
            .unwrap()
            .unwrap()
            .value,
        bytes("3")
    );

    // Compacting again below is a no-op; beyond the current revision is refused.
    s.compact(r1.mod_revision).await.unwrap();
    assert_eq!(s.compacted_revision().await.unwrap(), r2.mod_revision);
    let current = s.current_revision().await.unwrap();
    match s.compact(current + 10).await {
        Err(StorageError::TooLargeRevision { .. }) => {}
        other => panic!("expected TooLargeRevision, got {other:?}"),
    }
}

pub async fn current_revision_is_monotonic(s: Arc<dyn Storage>) {
    let mut last = s.current_revision().await.unwrap();
    for i in 0..5 {
        let kv = s
            .create(&format!("/t/rev/seq{i}"), bytes("x"))
            .await
            .unwrap();
        assert!(kv.mod_revision > last);
        let current = s.current_revision().await.unwrap();
        assert!(current >= kv.mod_revision);
        last = current;
    }

    let tasks: Vec<_> = (0..4)
        .map(|t| {
            let s = s.clone();
            tokio::spawn(async move {
                let mut revisions = Vec::new();
                let mut seen = 0;
                for i in 0..10 {
                    let kv = s
                        .create(&format!("/t/rev/t{t}-{i}"), bytes("x"))
                        .await
                        .unwrap();
                    revisions.push(kv.mod_revision);
                    let current = s.current_revision().await.unwrap();
                    assert!(current >= seen && current >= kv.mod_revision);
                    seen = current;
                }
                revisions
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(tokio::time::timeout(STEP, task).await.unwrap().unwrap());
    }
    let count = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), count, "every write has its own revision");
    assert!(all[0] > last);
    assert!(s.current_revision().await.unwrap() >= *all.last().unwrap());
}

pub async fn close_ends_watches_and_refuses_calls(s: Arc<dyn Storage>) {
    let start = s.current_revision().await.unwrap();
    let mut watch = s.watch("/t/close/", start).await.unwrap();
    let kv = s.create("/t/close/a", bytes("a")).await.unwrap();
    assert_eq!(next_event(&mut watch).await.revision, kv.mod_revision);

    s.close().await.unwrap();
    s.close().await.unwrap();
    // The stream ends (progress items may come first, events may not).
    loop {
        match tokio::time::timeout(STEP, watch.next())
            .await
            .expect("watch did not end after close")
        {
            None => break,
            Some(Ok(WatchItem::Progress(_))) => {}
            other => panic!("unexpected item after close: {other:?}"),
        }
    }
    match s.create("/t/close/b", bytes("b")).await {
        Err(StorageError::Unavailable { .. }) => {}
        other => panic!("expected Unavailable after close, got {other:?}"),
    }
    match s.watch("/t/close/", start).await {
        Err(StorageError::Unavailable { .. }) => {}
        Err(other) => panic!("expected Unavailable after close, got {other:?}"),
        Ok(_) => panic!("a watch started after close"),
    }
}

/// Polls until `key` is gone (from reads and lists), at most [`EXPIRY_BOUND`].
pub async fn wait_until_gone(s: &dyn Storage, key: &str) {
    let prefix = &key[..=key.rfind('/').expect("a key with a prefix")];
    let deadline = tokio::time::Instant::now() + EXPIRY_BOUND;
    loop {
        let read = s.get(key, ReadAt::Latest).await.unwrap();
        let listed = s.list(&list_at(prefix, ReadAt::Latest)).await.unwrap();
        if read.is_none() && listed.items.iter().all(|kv| kv.key != key) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{key} has not expired after {EXPIRY_BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub async fn key_with_ttl_expires_as_a_delete(s: Arc<dyn Storage>) {
    let start = s.current_revision().await.unwrap();
    let mut watch = s.watch("/t/ttl/", start).await.unwrap();
    let created = s
        .create_with_ttl("/t/ttl/a", bytes("a"), Duration::from_secs(1))
        .await
        .unwrap();
    let forever = s.create("/t/ttl/b", bytes("b")).await.unwrap();
    assert_eq!(
        s.get("/t/ttl/a", ReadAt::Latest).await.unwrap(),
        Some(created.clone())
    );
    wait_until_gone(s.as_ref(), "/t/ttl/a").await;
    // Only the key with a TTL went.
    assert_eq!(
        s.get("/t/ttl/b", ReadAt::Latest).await.unwrap(),
        Some(forever.clone())
    );

    let added = next_event(&mut watch).await;
    assert_eq!(added.kind, EventKind::Created);
    assert_eq!(added.revision, created.mod_revision);
    assert_eq!(next_event(&mut watch).await.key, "/t/ttl/b");
    let expired = next_event(&mut watch).await;
    assert_eq!(expired.kind, EventKind::Deleted);
    assert_eq!(expired.key, "/t/ttl/a");
    assert_eq!(expired.value, bytes("a"));
    assert_eq!(expired.prev_value, Some(bytes("a")));
    assert!(expired.revision > forever.mod_revision);
    // An ordinary delete: the state before it is still readable at its revision.
    assert_eq!(
        s.get("/t/ttl/a", ReadAt::Exact(expired.revision - 1))
            .await
            .unwrap(),
        Some(created)
    );
    assert!(s.current_revision().await.unwrap() >= expired.revision);
    // The key can be created again, without a TTL this time.
    s.create("/t/ttl/a", bytes("again")).await.unwrap();
}

pub async fn write_with_ttl_renews_the_deadline(s: Arc<dyn Storage>) {
    let started = tokio::time::Instant::now();
    let created = s
        .create_with_ttl("/t/ttlrenew/a", bytes("1"), Duration::from_secs(2))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Renewed through guaranteed_update_with_ttl (an update_with_ttl underneath).
    let renewed = guaranteed_update_with_ttl(
        s.as_ref(),
        "/t/ttlrenew/a",
        Some(Duration::from_secs(5)),
        |_| Ok::<_, ()>(Update::Write(bytes("2"))),
    )
    .await
    .expect("renewed before the first deadline");
    let Updated::Written(renewed) = renewed else {
        panic!("expected a write, got {renewed:?}");
    };
    assert_eq!(renewed.create_revision, created.create_revision);
    // Well past the first deadline (etcd included: its leases last at least 2 s and
    // expire within half a second), well before the renewed one.
    tokio::time::sleep_until(started + Duration::from_millis(3500)).await;
    assert_eq!(
        s.get("/t/ttlrenew/a", ReadAt::Latest).await.unwrap(),
        Some(renewed)
    );
    wait_until_gone(s.as_ref(), "/t/ttlrenew/a").await;
}

pub async fn plain_update_clears_the_ttl(s: Arc<dyn Storage>) {
    let created = s
        .create_with_ttl("/t/ttlclear/a", bytes("1"), Duration::from_secs(1))
        .await
        .unwrap();
    let updated = s
        .update("/t/ttlclear/a", bytes("2"), created.mod_revision)
        .await
        .unwrap();
    let b = s
        .create_with_ttl("/t/ttlclear/b", bytes("1"), Duration::from_secs(1))
        .await
        .unwrap();
    // guaranteed_update without a TTL clears it too.
    let Updated::Written(kept) = guaranteed_update(s.as_ref(), "/t/ttlclear/b", |_| {
        Ok::<_, ()>(Update::Write(bytes("2")))
    })
    .await
    .unwrap() else {
        panic!("expected a write");
    };
    assert_eq!(kept.create_revision, b.create_revision);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        s.get("/t/ttlclear/a", ReadAt::Latest).await.unwrap(),
        Some(updated)
    );
    assert_eq!(
        s.get("/t/ttlclear/b", ReadAt::Latest).await.unwrap(),
        Some(kept.clone())
    );
    assert_eq!(s.current_revision().await.unwrap(), kept.mod_revision);
}
