//! Unit tests of the cacher: its bounds (count, bytes, the shared budget, age,
//! compaction) and what a watch from before the window gets.

use std::future::Future;

use futures_util::StreamExt;

use super::*;
use crate::embedded::{EmbeddedConfig, EmbeddedStorage};
use crate::interface::{Event, EventKind, WatchItem};

const STEP: Duration = Duration::from_secs(15);

fn store() -> (Arc<EmbeddedStorage>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = EmbeddedConfig::default().without_compaction();
    let inner = EmbeddedStorage::open_with(dir.path(), config).unwrap();
    (Arc::new(inner), dir)
}

fn config() -> CacherConfig {
    CacherConfig::default()
        .with_backoff(Duration::from_millis(10), Duration::from_millis(200))
        .with_sweep_interval(Duration::from_millis(20))
}

async fn ready(inner: &Arc<EmbeddedStorage>, prefix: &str, config: CacherConfig) -> Cacher {
    let cacher = Cacher::new(inner.clone(), prefix, config);
    assert!(
        cacher.wait_ready(STEP).await,
        "the cache never became ready"
    );
    cacher
}

/// Waits (polling, bounded) until `done` holds.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + STEP;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn caught_up(cacher: &Cacher, revision: Revision) {
    eventually("the cache caught up", || cacher.revision() >= revision).await;
}

fn value(size: usize, n: usize) -> Bytes {
    let mut v = format!("{n:08}").into_bytes();
    v.resize(size, b'x');
    Bytes::from(v)
}

/// Creates `key` and updates it until `writes` writes were made; the last revision.
async fn churn(storage: &dyn Storage, key: &str, size: usize, writes: usize) -> Revision {
    let mut kv = storage.create(key, value(size, 0)).await.unwrap();
    for n in 1..writes {
        kv = storage
            .update(key, value(size, n), kv.mod_revision)
            .await
            .unwrap();
    }
    kv.mod_revision
}

/// The revisions of the next `n` events of `stream`.
async fn next_revisions(stream: &mut WatchStream, n: usize) -> Vec<Revision> {
    let mut out = Vec::new();
    while out.len() < n {
        let item = tokio::time::timeout(STEP, stream.next())
            .await
            .expect("no watch item in time")
            .expect("the watch ended")
            .expect("a watch error");
        if let WatchItem::Event(event) = item {
            assert_ne!(event.kind, EventKind::Deleted, "{event:?}");
            out.push(event.revision);
        }
    }
    out
}

fn run<F: Future>(test: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), test).await })
        .expect("test timed out")
}

#[test]
fn the_byte_budget_bounds_the_window_and_watches_from_before_it_go_to_the_inner_storage() {
    run(async {
        let (inner, _dir) = store();
        let size = 100_000;
        // Room for about three events of two 100 kB values each.
        let cacher = ready(&inner, "/w/", config().with_budget_bytes(700_000)).await;
        let first = cacher.create("/w/a", value(size, 0)).await.unwrap();
        let mut last = first.mod_revision;
        for n in 1..20 {
            last = cacher
                .update("/w/a", value(size, n), last)
                .await
                .unwrap()
                .mod_revision;
        }
        caught_up(&cacher, last).await;
        assert!(
            cacher.window_bytes() <= 700_000,
            "{}",
            cacher.window_bytes()
        );
        assert_eq!(cacher.window_events(), 3);
        assert!(
            cacher.stats().evicted_by_bytes >= 16,
            "{:?}",
            cacher.stats()
        );
        // From the window: the last two.
        let start = cacher.window_start();
        assert_eq!(start, last - 3);
        let mut recent = cacher.watch("/w/", last - 2).await.unwrap();
        assert_eq!(next_revisions(&mut recent, 2).await, [last - 1, last]);
        assert_eq!(cacher.stats().watches_from_cache, 1);
        // From before the window: the inner storage replays all of it, in order.
        let mut old = cacher.watch("/w/", first.mod_revision).await.unwrap();
        let expected: Vec<_> = (first.mod_revision + 1..=last).collect();
        assert_eq!(next_revisions(&mut old, expected.len()).await, expected);
        assert_eq!(cacher.stats().watches_delegated, 1);
        // Compacted past it: Expired, as the backends answer (410 in the API).
        inner.compact(last - 5).await.unwrap();
        let error = match cacher.watch("/w/", first.mod_revision).await {
            Err(error) => error,
            Ok(_) => panic!("a watch from a compacted revision started"),
        };
        assert!(matches!(error, StorageError::Expired { .. }), "{error:?}");
        cacher.close().await.unwrap();
    });
}

#[test]
fn time_releases_the_window_without_writes() {
    run(async {
        let (inner, _dir) = store();
        let config = config()
            .with_event_horizon(Duration::from_millis(300))
            .with_min_events(2);
        let cacher = ready(&inner, "/w/", config).await;
        let last = churn(&cacher, "/w/a", 10_000, 10).await;
        caught_up(&cacher, last).await;
        assert_eq!(cacher.window_events(), 10);
        let full = cacher.window_bytes();
        // No more writes: the sweeper evicts all but the newest two.
        eventually("the horizon evicted", || cacher.window_events() == 2).await;
        assert!(
            cacher.window_bytes() < full / 4,
            "{}",
            cacher.window_bytes()
        );
        assert_eq!(cacher.stats().evicted_by_age, 8);
        assert_eq!(cacher.window_start(), last - 2);
        // A watch from before the window still gets everything (from the inner
        // storage); one from inside it, from the window.
        let mut old = cacher.watch("/w/", last - 5).await.unwrap();
        assert_eq!(
            next_revisions(&mut old, 5).await,
            (last - 4..=last).collect::<Vec<_>>()
        );
        let mut recent = cacher.watch("/w/", last - 2).await.unwrap();
        assert_eq!(next_revisions(&mut recent, 2).await, [last - 1, last]);
        let stats = cacher.stats();
        assert_eq!((stats.watches_delegated, stats.watches_from_cache), (1, 1));
        cacher.close().await.unwrap();
    });
}

#[test]
fn compaction_of_the_inner_storage_releases_the_window() {
    run(async {
        let (inner, _dir) = store();
        let config = config().with_compaction_check_interval(Duration::from_millis(50));
        let cacher = ready(&inner, "/w/", config).await;
        let last = churn(&cacher, "/w/a", 10_000, 10).await;
        caught_up(&cacher, last).await;
        assert_eq!(cacher.window_events(), 10);
        // Compacted behind the cacher's back (as the server's compactor does): the
        // sweeper learns it and drops what it covers.
        inner.compact(last - 3).await.unwrap();
        eventually("the compaction released events", || {
            cacher.window_events() == 3
        })
        .await;
        assert_eq!(cacher.stats().evicted_by_compaction, 7);
        // The oldest watch the backends allow is still served from memory.
        let mut watch = cacher.watch("/w/", last - 3).await.unwrap();
        assert_eq!(
            next_revisions(&mut watch, 3).await,
            [last - 2, last - 1, last]
        );
        assert_eq!(cacher.stats().watches_from_cache, 1);
        // Compacted through the cacher: at once.
        cacher.compact(last - 1).await.unwrap();
        assert_eq!(cacher.window_events(), 1);
        cacher.close().await.unwrap();
    });
}

#[test]
fn cachers_share_the_total_budget_and_give_it_back_when_closed() {
    run(async {
        let (inner, _dir) = store();
        let size = 50_000;
        let one = budget::event_bytes(&Event::new(
            EventKind::Modified,
            "/a/x".to_string(),
            1,
            value(size, 0),
            Some(value(size, 0)),
        ));
        let total = Arc::new(WatchCacheBudget::new(6 * one));
        let config = config().with_total_budget(total.clone());
        let a = ready(&inner, "/a/", config.clone()).await;
        let b = ready(&inner, "/b/", config).await;
        let last = churn(&a, "/a/x", size, 5).await;
        caught_up(&a, last).await;
        assert_eq!(a.window_events(), 5);
        assert_eq!(total.used(), a.window_bytes());
        let last = churn(&b, "/b/x", size, 5).await;
        caught_up(&b, last).await;
        // b took what a left and then its own oldest events made room.
        assert!(total.used() <= total.limit(), "{}", total.used());
        assert_eq!(total.used(), a.window_bytes() + b.window_bytes());
        assert_eq!(a.window_events(), 5);
        assert!(b.window_events() < 5, "{}", b.window_events());
        assert!(b.stats().evicted_by_bytes > 0);
        assert_eq!(a.stats().evicted_by_bytes, 0);
        a.close().await.unwrap();
        assert_eq!(total.used(), b.window_bytes());
        b.close().await.unwrap();
        assert_eq!(total.used(), 0);
    });
}

#[test]
fn an_encoding_over_the_budget_wakes_the_sweeper() {
    run(async {
        let (inner, _dir) = store();
        let size = 10_000;
        // A long sweep interval: only the budget's wake-up can trim in time.
        let config = config()
            .with_budget_bytes(5 * (2 * size + 1000))
            .with_sweep_interval(Duration::from_secs(3600));
        let cacher = ready(&inner, "/w/", config).await;
        let mut watch = cacher.watch("/w/", cacher.revision()).await.unwrap();
        let last = churn(&cacher, "/w/a", size, 4).await;
        caught_up(&cacher, last).await;
        assert_eq!(cacher.window_events(), 4);
        // The watcher encodes what it gets, as the API's watch does: four large
        // encodings take the window over its budget.
        for _ in 0..4 {
            let item = tokio::time::timeout(STEP, watch.next()).await.unwrap();
            let Some(Ok(WatchItem::Event(event))) = item else {
                panic!("{item:?}")
            };
            event
                .encodings
                .get_or_insert_with(1, || Bytes::from(vec![b'e'; 2 * size]));
        }
        eventually("the sweeper trimmed", || {
            cacher.window_bytes() <= cacher.config().budget_bytes
        })
        .await;
        assert!(cacher.window_events() < 4);
        assert!(cacher.stats().evicted_by_bytes > 0);
        cacher.close().await.unwrap();
    });
}

#[test]
fn a_watcher_that_stops_reading_is_cut_off_by_the_bytes_it_holds() {
    run(async {
        let (inner, _dir) = store();
        let size = 10_000;
        let one = 2 * size + 1000;
        let cacher = ready(&inner, "/w/", config().with_watcher_buffer_bytes(3 * one)).await;
        let from = cacher.revision();
        let mut stuck = cacher.watch("/w/", from).await.unwrap();
        let mut reader = cacher.watch("/w/", from).await.unwrap();
        let mut kv = cacher.create("/w/a", value(size, 0)).await.unwrap();
        let mut seen = vec![kv.mod_revision];
        assert_eq!(next_revisions(&mut reader, 1).await, seen);
        for n in 1..8 {
            kv = cacher
                .update("/w/a", value(size, n), kv.mod_revision)
                .await
                .unwrap();
            seen.push(kv.mod_revision);
            assert_eq!(next_revisions(&mut reader, 1).await, [kv.mod_revision]);
        }
        // The one that did not read has what fitted (the create holds one value,
        // the updates two each), then the error to resume from.
        assert_eq!(next_revisions(&mut stuck, 3).await, seen[..3]);
        let end = tokio::time::timeout(STEP, stuck.next()).await.unwrap();
        match end {
            Some(Err(StorageError::Unavailable { message, .. })) => {
                assert!(message.contains("bytes waiting"), "{message}");
                assert!(
                    message.contains(&format!("resume from revision {}", seen[2])),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(cacher.stats().watchers_cut_off, 1);
        // One event always fits, however large.
        let tiny = config().with_watcher_buffer_bytes(1);
        let cacher = ready(&inner, "/v/", tiny).await;
        let mut watch = cacher.watch("/v/", cacher.revision()).await.unwrap();
        let created = cacher.create("/v/a", value(size, 0)).await.unwrap();
        assert_eq!(next_revisions(&mut watch, 1).await, [created.mod_revision]);
        cacher.close().await.unwrap();
    });
}

/// Every read of one state of a key from the cache shares one memo (what one list
/// encoded, the next list, a get and a consistent list find); a new state starts with
/// an empty one, and reads from the inner storage carry none.
#[test]
fn reads_of_one_state_share_its_memo_and_a_new_state_starts_empty() {
    run(async {
        let (inner, _dir) = store();
        let prefix = "/registry/memo/";
        let created = inner
            .create("/registry/memo/a", value(64, 0))
            .await
            .unwrap();
        assert!(
            created.memo.encodings().is_none(),
            "a backend's value has no memo"
        );
        let cacher = ready(&inner, prefix, config()).await;
        let list = |read_at| ListRequest {
            prefix: prefix.to_string(),
            read_at,
            ..ListRequest::default()
        };
        let first = cacher.list(&list(ReadAt::Any)).await.unwrap();
        let memo = first.items[0]
            .memo
            .encodings()
            .expect("a cached value's memo");
        memo.get_or_insert_with(7, || Bytes::from_static(b"encoded"));
        let second = cacher.list(&list(ReadAt::Any)).await.unwrap();
        let shared = second.items[0].memo.encodings().unwrap();
        assert_eq!(shared.get_or_insert_with(7, || unreachable!()), "encoded");
        let got = cacher
            .get("/registry/memo/a", ReadAt::Any)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.memo.encodings().unwrap().len(), 1);
        let latest = cacher.list(&list(ReadAt::Latest)).await.unwrap();
        assert_eq!(
            latest.items[0].memo.encodings().unwrap().len(),
            1,
            "consistent reads come from the cache too"
        );
        let exact = cacher
            .list(&list(ReadAt::Exact(first.revision)))
            .await
            .unwrap();
        assert_eq!(
            exact.items[0].memo.encodings().unwrap().len(),
            1,
            "an exact read of the state's own revision comes from the cache too"
        );

        let updated = cacher
            .update("/registry/memo/a", value(64, 1), created.mod_revision)
            .await
            .unwrap();
        caught_up(&cacher, updated.mod_revision).await;
        let after = cacher.list(&list(ReadAt::Any)).await.unwrap();
        assert_eq!(after.items[0].mod_revision, updated.mod_revision);
        assert!(after.items[0].memo.encodings().unwrap().is_empty());
        // A failed encoding is not memoised.
        let memo = after.items[0].memo.encodings().unwrap();
        assert_eq!(
            memo.try_get_or_insert_with(1, || Err::<Bytes, _>("no")),
            Err("no")
        );
        assert!(memo.is_empty());
        cacher.close().await.unwrap();
    });
}

#[test]
fn pages_at_a_revision_nothing_changed_after_are_read_from_memory() {
    run(async {
        let (inner, _dir) = store();
        let cacher = ready(&inner, "/w/", config()).await;
        let mut last = 0;
        for n in 0..5 {
            last = cacher
                .create(&format!("/w/{n}"), value(10, n))
                .await
                .unwrap()
                .mod_revision;
        }
        caught_up(&cacher, last).await;
        let page = |read_at, start: &str| ListRequest {
            prefix: "/w/".to_string(),
            read_at,
            start_key: Some(start.to_string()),
            limit: Some(2),
        };
        let keys = |page: &ListResponse| {
            let keys = page.items.iter().map(|kv| kv.key.clone());
            keys.collect::<Vec<_>>()
        };

        // The second page of a list at `last`: from memory, as the inner storage has it.
        let from_memory = cacher
            .list(&page(ReadAt::Exact(last), "/w/2"))
            .await
            .unwrap();
        let stored = inner
            .list(&page(ReadAt::Exact(last), "/w/2"))
            .await
            .unwrap();
        assert_eq!(keys(&from_memory), ["/w/2", "/w/3"]);
        assert_eq!(keys(&from_memory), keys(&stored));
        assert_eq!((from_memory.revision, from_memory.remaining), (last, 1));
        let got = cacher.get("/w/4", ReadAt::Exact(last)).await.unwrap();
        assert_eq!(got.map(|kv| kv.mod_revision), Some(last));
        assert_eq!(cacher.stats().exact_reads_from_cache, 2);

        // A change after it: the state is no longer the one at `last`, so the inner
        // storage answers, with the key as it was.
        let changed = cacher.update("/w/2", value(10, 9), last - 2).await.unwrap();
        caught_up(&cacher, changed.mod_revision).await;
        let delegated = cacher.stats().reads_delegated;
        let then = cacher
            .list(&page(ReadAt::Exact(last), "/w/2"))
            .await
            .unwrap();
        assert_eq!(then.items[0].mod_revision, last - 2);
        assert_eq!(then.revision, last);
        assert_eq!(cacher.stats().exact_reads_from_cache, 2);
        assert_eq!(cacher.stats().reads_delegated, delegated + 1);

        // The new revision is served from memory again; an older one (the first
        // create) and a compacted one are the inner storage's.
        let now = changed.mod_revision;
        let again = cacher
            .list(&page(ReadAt::Exact(now), "/w/2"))
            .await
            .unwrap();
        assert_eq!(again.items[0].mod_revision, now);
        assert_eq!(cacher.stats().exact_reads_from_cache, 3);
        let first = cacher.list(&page(ReadAt::Exact(1), "/w/")).await.unwrap();
        assert_eq!(keys(&first), ["/w/0"]);
        cacher.compact(now).await.unwrap();
        let compacted = cacher.list(&page(ReadAt::Exact(now - 1), "/w/")).await;
        assert!(
            matches!(compacted, Err(StorageError::Expired { .. })),
            "{compacted:?}"
        );
        assert_eq!(cacher.stats().exact_reads_from_cache, 3);
    });
}
