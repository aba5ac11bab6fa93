//! The conformance suite against the watch cache over the embedded backend (every
//! conformance key lives under the cached prefix `/t/`), and what only the cache
//! promises: reads served from memory, fresh enough when asked, a bounded event window,
//! slow watchers cut off without slowing anyone, and a feed that survives its inner
//! watch failing.

#[macro_use]
mod conformance;

use conformance::{bytes, list_at, next_event};

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::{StreamExt, stream};
use kapi_storage::embedded::EmbeddedConfig;
use kapi_storage::{
    Cacher, CacherConfig, Deleted, EmbeddedStorage, EventKind, KeyValue, ListRequest, ListResponse,
    ReadAt, Result, Revision, Storage, StorageError, WatchItem, WatchStream,
};
use tempfile::TempDir;
use tokio::sync::mpsc;
use tokio::time::Instant;

const STEP: Duration = Duration::from_secs(15);

fn embedded_config() -> EmbeddedConfig {
    EmbeddedConfig::default()
        .with_progress_interval(conformance::PROGRESS_INTERVAL)
        .without_compaction()
}

fn cacher_config() -> CacherConfig {
    CacherConfig::default()
        .with_progress_interval(conformance::PROGRESS_INTERVAL)
        .with_backoff(Duration::from_millis(10), Duration::from_millis(200))
}

/// A cacher of `/t/` over a fresh embedded store, ready; the temp dir is the guard.
async fn setup() -> (Arc<dyn Storage>, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let inner = EmbeddedStorage::open_with(dir.path(), embedded_config()).unwrap();
    let cacher = Cacher::new(Arc::new(inner), "/t/", cacher_config());
    assert!(
        cacher.wait_ready(STEP).await,
        "the cache never became ready"
    );
    (Arc::new(cacher), dir)
}

conformance_suite!(setup);

/// The conformance checks above really go through the cache: the same checks with a
/// handle on the cacher, and its counters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_reads_and_watches_are_served_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let inner = EmbeddedStorage::open_with(dir.path(), embedded_config()).unwrap();
    let cacher = Arc::new(Cacher::new(Arc::new(inner), "/t/", cacher_config()));
    assert!(cacher.wait_ready(STEP).await);
    let storage: Arc<dyn Storage> = cacher.clone();
    tokio::time::timeout(conformance::TEST_TIMEOUT, async {
        conformance::get_at_revisions(storage.clone()).await;
        conformance::list_prefix_isolation(storage.clone()).await;
        conformance::watch_replays_then_follows_live(storage.clone()).await;
    })
    .await
    .expect("test timed out");
    let stats = cacher.stats();
    // get_at_revisions: Any and NotOlderThan; list_prefix_isolation: one Any list.
    assert!(stats.reads_from_cache >= 3, "{stats:?}");
    assert_eq!(stats.watches_from_cache, 2, "{stats:?}");
    assert_eq!(stats.watches_delegated, 0, "{stats:?}");
}

/// An embedded store and a ready cacher of `prefix` over it.
async fn cached(
    prefix: &str,
    config: CacherConfig,
) -> (Arc<EmbeddedStorage>, Arc<Cacher>, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let inner = Arc::new(EmbeddedStorage::open_with(dir.path(), embedded_config()).unwrap());
    let cacher = Arc::new(Cacher::new(inner.clone(), prefix, config));
    assert!(
        cacher.wait_ready(STEP).await,
        "the cache never became ready"
    );
    (inner, cacher, dir)
}

/// Waits (polling) until the cache has caught up to `revision`.
async fn caught_up(cacher: &Cacher, revision: Revision) {
    let deadline = Instant::now() + STEP;
    while cacher.revision() < revision {
        assert!(
            Instant::now() < deadline,
            "the cache never reached {revision}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The next item of a watch; panics when it ends or takes too long.
async fn next(stream: &mut WatchStream) -> Result<WatchItem> {
    tokio::time::timeout(STEP, stream.next())
        .await
        .expect("no watch item in time")
        .expect("watch ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_reads_are_served_from_memory() {
    let (_inner, cacher, _dir) = cached("/w/", cacher_config()).await;
    let a = cacher.create("/w/ns1/a", bytes("a")).await.unwrap();
    let b = cacher.create("/w/ns1/b", bytes("b")).await.unwrap();
    cacher.create("/w/ns2/c", bytes("c")).await.unwrap();
    let before = cacher.stats();

    // Read-your-writes: the cache waits for the writes made through it.
    let listed = cacher.list(&list_at("/w/ns1/", ReadAt::Any)).await.unwrap();
    assert_eq!(listed.items, vec![a.clone(), b.clone()]);
    assert!(listed.revision >= b.mod_revision);
    assert_eq!(
        cacher.get("/w/ns1/a", ReadAt::Any).await.unwrap(),
        Some(a.clone())
    );
    assert_eq!(cacher.get("/w/ns1/zz", ReadAt::Any).await.unwrap(), None);
    let after = cacher.stats();
    assert_eq!(after.reads_from_cache, before.reads_from_cache + 3);
    assert_eq!(after.reads_delegated, before.reads_delegated);

    // Exact goes to the inner storage, and agrees with the cache.
    let exact = cacher
        .get("/w/ns1/a", ReadAt::Exact(a.mod_revision))
        .await
        .unwrap();
    assert_eq!(exact, Some(a));
    let last = cacher.stats();
    assert_eq!(last.reads_delegated, after.reads_delegated + 1);
    assert_eq!(last.reads_from_cache, after.reads_from_cache);
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_pages_continue_exactly_on_the_inner_storage() {
    let (inner, cacher, _dir) = cached("/w/", cacher_config()).await;
    for i in 0..10 {
        cacher
            .create(&format!("/w/k{i:02}"), bytes("v"))
            .await
            .unwrap();
    }
    let first = cacher
        .list(&ListRequest {
            limit: Some(4),
            ..list_at("/w/", ReadAt::Any)
        })
        .await
        .unwrap();
    assert_eq!((first.items.len(), first.remaining), (4, 6));
    assert_eq!(cacher.stats().reads_from_cache, 1);
    // Changes after the first page do not show in the next ones.
    inner.delete("/w/k08", None).await.unwrap();
    inner.create("/w/k05a", bytes("new")).await.unwrap();
    let mut seen = first.items.clone();
    let mut remaining = first.remaining;
    while remaining > 0 {
        let page = cacher
            .list(&ListRequest {
                start_key: Some(format!("{}\0", seen.last().unwrap().key)),
                limit: Some(4),
                ..list_at("/w/", ReadAt::Exact(first.revision))
            })
            .await
            .unwrap();
        assert_eq!(page.remaining, remaining - page.items.len() as u64);
        remaining = page.remaining;
        seen.extend(page.items);
    }
    let whole = inner
        .list(&list_at("/w/", ReadAt::Exact(first.revision)))
        .await
        .unwrap();
    assert_eq!(seen, whole.items);
    assert_eq!(seen.len(), 10);
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_older_than_waits_for_the_revision() {
    let (inner, cacher, _dir) = cached(
        "/w/",
        cacher_config().with_freshness_timeout(Duration::from_secs(10)),
    )
    .await;
    // Written behind the cacher's back, so only NotOlderThan makes it wait.
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let inner = inner.clone();
            tokio::spawn(async move { inner.create(&format!("/w/k{i:03}"), bytes("v")).await })
        })
        .collect();
    let mut newest = 0;
    for task in tasks {
        newest = newest.max(task.await.unwrap().unwrap().mod_revision);
    }
    let before = cacher.stats();
    let listed = cacher
        .list(&list_at("/w/", ReadAt::NotOlderThan(newest)))
        .await
        .unwrap();
    assert!(listed.revision >= newest);
    assert_eq!(listed.items.len(), 100);
    let got = cacher
        .get("/w/k099", ReadAt::NotOlderThan(newest))
        .await
        .unwrap();
    assert!(got.is_some());
    assert_eq!(cacher.stats().reads_from_cache, before.reads_from_cache + 2);

    // A revision the store has not reached yet is waited for: a write made meanwhile
    // brings it, and it is served.
    let writer = {
        let inner = inner.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            inner
                .create("/w/late", bytes("v"))
                .await
                .unwrap()
                .mod_revision
        })
    };
    let listed = cacher
        .list(&list_at("/w/", ReadAt::NotOlderThan(newest + 1)))
        .await
        .unwrap();
    let late = writer.await.unwrap();
    assert!(listed.revision >= late, "{} < {late}", listed.revision);
    assert_eq!(listed.items.len(), 101);
    cacher.close().await.unwrap();

    // One no write brings is refused once the wait is over (TooLargeRevision, a 504).
    let (_inner, cacher, _dir) = cached(
        "/w/",
        cacher_config().with_freshness_timeout(Duration::from_millis(500)),
    )
    .await;
    let started = Instant::now();
    match cacher
        .list(&list_at("/w/", ReadAt::NotOlderThan(1000)))
        .await
    {
        Err(StorageError::TooLargeRevision { requested, .. }) => assert_eq!(requested, 1000),
        other => panic!("expected TooLargeRevision, got {other:?}"),
    }
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "refused before the freshness timeout"
    );
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_watcher_is_cut_off_while_a_fast_one_gets_everything() {
    let (_inner, cacher, _dir) = cached("/w/", cacher_config().with_watcher_buffer(8)).await;
    let start = cacher.current_revision().await.unwrap();
    let mut slow = cacher.watch("/w/", start).await.unwrap();
    let mut fast = cacher.watch("/w/", start).await.unwrap();
    assert_eq!(cacher.stats().watches_from_cache, 2);
    assert_eq!(cacher.cached_watchers(), 2);

    // The fast watcher reports each event; the writer waits for it (lockstep), so the
    // fast one never has more than one event queued while the slow one piles up.
    let (seen_tx, mut seen_rx) = mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        let mut revisions = Vec::new();
        while revisions.len() < 40 {
            let event = next_event(&mut fast).await;
            revisions.push(event.revision);
            seen_tx.send(event.revision).unwrap();
        }
        revisions
    });
    let mut written = Vec::new();
    for i in 0..40 {
        let kv = tokio::time::timeout(STEP, cacher.create(&format!("/w/k{i:02}"), bytes("v")))
            .await
            .expect("writes never wait for watchers")
            .unwrap();
        written.push(kv.mod_revision);
        let seen = tokio::time::timeout(STEP, seen_rx.recv())
            .await
            .expect("the fast watcher kept up")
            .unwrap();
        assert_eq!(seen, kv.mod_revision);
    }
    let received = tokio::time::timeout(STEP, reader).await.unwrap().unwrap();
    assert_eq!(received, written, "every event, in order, once");
    assert_eq!(cacher.stats().watchers_cut_off, 1);
    // The fast one was dropped with its task, the slow one is cut off.
    assert_eq!(cacher.cached_watchers(), 0);

    // The slow one gets what was buffered, then the error naming where to resume.
    let mut last = start;
    let error = loop {
        match next(&mut slow).await {
            Ok(WatchItem::Event(event)) => {
                assert!(event.revision > last);
                last = event.revision;
            }
            Ok(WatchItem::Progress(_)) => {}
            Err(error) => break error,
        }
    };
    assert_eq!(last, written[7], "exactly its buffer");
    match &error {
        StorageError::Unavailable { message, .. } => {
            assert!(
                message.contains(&format!("resume from revision {last}")),
                "{message}"
            );
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(
        tokio::time::timeout(STEP, slow.next())
            .await
            .unwrap()
            .is_none()
    );
    // Resuming from there misses nothing (served from the window).
    let mut resumed = cacher.watch("/w/", last).await.unwrap();
    for &revision in &written[8..] {
        assert_eq!(next_event(&mut resumed).await.revision, revision);
    }
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_before_the_window_are_replayed_by_the_inner_storage_or_expired() {
    let (inner, cacher, _dir) = cached("/w/", cacher_config().with_event_window(5)).await;
    let mut written = Vec::new();
    for i in 0..20 {
        written.push(
            cacher
                .create(&format!("/w/k{i:02}"), bytes("v"))
                .await
                .unwrap()
                .mod_revision,
        );
    }
    caught_up(&cacher, written[19]).await;

    // Within the window: from memory.
    let mut recent = cacher.watch("/w/", written[15]).await.unwrap();
    assert_eq!(cacher.stats().watches_from_cache, 1);
    for &revision in &written[16..] {
        assert_eq!(next_event(&mut recent).await.revision, revision);
    }
    // Before it: the embedded backend still has the history and replays it.
    let mut old = cacher.watch("/w/", written[2]).await.unwrap();
    assert_eq!(cacher.stats().watches_delegated, 1);
    for &revision in &written[3..] {
        assert_eq!(next_event(&mut old).await.revision, revision);
    }
    // And goes on live, like any watch.
    let live = cacher.create("/w/live", bytes("v")).await.unwrap();
    assert_eq!(next_event(&mut old).await.revision, live.mod_revision);
    assert_eq!(next_event(&mut recent).await.revision, live.mod_revision);

    // Once the history is compacted, an old revision is Expired, from the window or not.
    inner.compact(written[17]).await.unwrap();
    for after in [written[2], written[16]] {
        match cacher.watch("/w/", after).await {
            Err(StorageError::Expired {
                requested,
                compacted,
            }) => assert_eq!((requested, compacted), (after, written[17])),
            Err(other) => panic!("expected Expired, got {other:?}"),
            Ok(_) => panic!("a watch from compacted revision {after} started"),
        }
    }
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_prefix_watch_sees_only_its_keys() {
    let (_inner, cacher, _dir) = cached("/w/", cacher_config()).await;
    let start = cacher.current_revision().await.unwrap();
    let mut ns1 = cacher.watch("/w/ns1/", start).await.unwrap();
    let mut expected = Vec::new();
    for i in 0..5 {
        expected.push(
            cacher
                .create(&format!("/w/ns1/k{i}"), bytes("v"))
                .await
                .unwrap(),
        );
        cacher
            .create(&format!("/w/ns2/k{i}"), bytes("v"))
            .await
            .unwrap();
        cacher
            .create(&format!("/w/ns10/k{i}"), bytes("v"))
            .await
            .unwrap();
    }
    let deleted = cacher.delete("/w/ns1/k0", None).await.unwrap();
    let noise = cacher.create("/w/ns2/last", bytes("v")).await.unwrap();
    for kv in &expected {
        let event = next_event(&mut ns1).await;
        assert_eq!((event.kind, &event.key), (EventKind::Created, &kv.key));
        assert_eq!(event.revision, kv.mod_revision);
    }
    let event = next_event(&mut ns1).await;
    assert_eq!(
        (event.kind, event.revision),
        (EventKind::Deleted, deleted.revision)
    );
    // Then only progress, which moves past the other namespaces' writes.
    loop {
        match next(&mut ns1).await.unwrap() {
            WatchItem::Progress(revision) if revision >= noise.mod_revision => break,
            WatchItem::Progress(_) => {}
            WatchItem::Event(event) => panic!("unexpected event {event:?}"),
        }
    }
    // A sub-prefix watch from the past replays only its keys from the window too.
    let mut replay = cacher.watch("/w/ns1/", start).await.unwrap();
    assert_eq!(next_event(&mut replay).await.key, "/w/ns1/k0");
    assert_eq!(next_event(&mut replay).await.key, "/w/ns1/k1");
    assert_eq!(cacher.stats().watches_from_cache, 2);
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_outside_the_prefix_go_to_the_inner_storage() {
    let (inner, cacher, _dir) = cached("/w/", cacher_config()).await;
    let other = cacher.create("/x/a", bytes("a")).await.unwrap();
    assert_eq!(
        inner.get("/x/a", ReadAt::Latest).await.unwrap(),
        Some(other.clone())
    );
    assert_eq!(
        cacher.get("/x/a", ReadAt::Any).await.unwrap(),
        Some(other.clone())
    );
    let everything = cacher.list(&list_at("/", ReadAt::Any)).await.unwrap();
    assert_eq!(everything.items, vec![other.clone()]);
    let mut watch = cacher.watch("/x/", 0).await.unwrap();
    assert_eq!(next_event(&mut watch).await.revision, other.mod_revision);
    let stats = cacher.stats();
    assert_eq!(
        (
            stats.reads_from_cache,
            stats.reads_delegated,
            stats.watches_from_cache,
            stats.watches_delegated
        ),
        (0, 0, 0, 0),
        "calls outside the prefix are not the cache's"
    );
    // Closing the cacher ends watches it passed on too, and leaves the inner store open.
    cacher.close().await.unwrap();
    assert!(
        tokio::time::timeout(STEP, watch.next())
            .await
            .unwrap()
            .is_none()
    );
    assert!(inner.create("/w/after", bytes("v")).await.is_ok());
    assert!(matches!(
        cacher.get("/w/after", ReadAt::Latest).await,
        Err(StorageError::Unavailable { .. })
    ));
    inner.close().await.unwrap();
}

/// The embedded backend with a switch that breaks its open watches: the feed's inner
/// watch fails on demand, with the error a real backend would give.
struct Faulty {
    inner: EmbeddedStorage,
    breakers: Mutex<Vec<mpsc::UnboundedSender<StorageError>>>,
}

impl Faulty {
    /// Ends every watch open now with `error()`; returns how many.
    fn break_watches(&self, error: impl Fn() -> StorageError) -> usize {
        let breakers: Vec<_> = self
            .breakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
            .collect();
        breakers
            .iter()
            .filter(|breaker| breaker.send(error()).is_ok())
            .count()
    }
}

#[async_trait]
impl Storage for Faulty {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.inner.create(key, value).await
    }
    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        self.inner.create_with_ttl(key, value, ttl).await
    }
    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        self.inner.get(key, read_at).await
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
        let events = self.inner.watch(prefix, after).await?;
        let (breaker, broken) = mpsc::unbounded_channel();
        self.breakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(breaker);
        Ok(Box::pin(stream::unfold(
            Some((events, broken)),
            |state| async move {
                let (mut events, mut broken) = state?;
                tokio::select! {
                    biased;
                    Some(error) = broken.recv() => Some((Err(error), None)),
                    item = events.next() => item.map(|item| (item, Some((events, broken)))),
                }
            },
        )))
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

async fn faulty_cached() -> (Arc<Faulty>, Cacher, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let faulty = Arc::new(Faulty {
        inner: EmbeddedStorage::open_with(dir.path(), embedded_config()).unwrap(),
        breakers: Mutex::new(Vec::new()),
    });
    let cacher = Cacher::new(faulty.clone(), "/w/", cacher_config());
    assert!(cacher.wait_ready(STEP).await);
    (faulty, cacher, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_inner_watch_is_resumed_without_a_gap() {
    let (faulty, cacher, _dir) = faulty_cached().await;
    let mut watch = cacher.watch("/w/", 0).await.unwrap();
    let mut written = Vec::new();
    for i in 0..10 {
        written.push(
            cacher
                .create(&format!("/w/a{i}"), bytes("v"))
                .await
                .unwrap()
                .mod_revision,
        );
    }
    caught_up(&cacher, written[9]).await;
    let unavailable = || StorageError::Unavailable {
        message: "connection reset".to_string(),
        source: None,
    };
    assert_eq!(faulty.break_watches(unavailable), 1, "the feed's watch");
    // Writes during the outage reach the cache through the resumed watch.
    for i in 0..10 {
        written.push(
            faulty
                .create(&format!("/w/b{i}"), bytes("v"))
                .await
                .unwrap()
                .mod_revision,
        );
    }
    for &revision in &written {
        assert_eq!(next_event(&mut watch).await.revision, revision);
    }
    caught_up(&cacher, written[19]).await;
    assert!(cacher.wait_ready(STEP).await);
    let listed = cacher.list(&list_at("/w/", ReadAt::Any)).await.unwrap();
    assert_eq!(listed.items.len(), 20);
    let stats = cacher.stats();
    assert_eq!((stats.lists, stats.watchers_cut_off), (1, 0));
    assert!(stats.rewatches >= 1);
    cacher.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_inner_watch_makes_the_cache_relist() {
    let (faulty, cacher, _dir) = faulty_cached().await;
    let first = cacher.create("/w/a", bytes("v")).await.unwrap();
    caught_up(&cacher, first.mod_revision).await;
    let mut watch = cacher.watch("/w/", 0).await.unwrap();
    assert_eq!(next_event(&mut watch).await.revision, first.mod_revision);

    let expired = || StorageError::Expired {
        requested: first.mod_revision,
        compacted: first.mod_revision + 1,
    };
    assert_eq!(faulty.break_watches(expired), 1);
    let second = faulty.create("/w/b", bytes("v")).await.unwrap();
    // The watcher cannot be continued across the re-list: it is told where to resume.
    match next(&mut watch).await {
        Err(StorageError::Unavailable { message, .. }) => assert!(
            message.contains(&format!("resume from revision {}", first.mod_revision)),
            "{message}"
        ),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    caught_up(&cacher, second.mod_revision).await;
    assert!(cacher.wait_ready(STEP).await);
    let stats = cacher.stats();
    assert_eq!((stats.lists, stats.watchers_cut_off), (2, 1));
    let listed = cacher.list(&list_at("/w/", ReadAt::Any)).await.unwrap();
    assert_eq!(listed.items, vec![first.clone(), second.clone()]);
    // Resuming from before the new list goes to the inner storage, which replays it.
    let mut resumed = cacher.watch("/w/", first.mod_revision).await.unwrap();
    assert_eq!(next_event(&mut resumed).await.revision, second.mod_revision);
    cacher.close().await.unwrap();
}

/// Every watcher served from the cache receives the same event: an encoding one of
/// them memoises is what the others get, never made again (serialised once, not once
/// per watcher). Replayed events share theirs too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_share_each_event_s_encodings() {
    let (_inner, cacher, _dir) = cached("/e/", cacher_config()).await;
    let start = cacher.current_revision().await.unwrap();
    let mut watches = Vec::new();
    for _ in 0..3 {
        watches.push(cacher.watch("/e/", start).await.unwrap());
    }
    let created = cacher.create("/e/a", bytes("a")).await.unwrap();
    let mut made = 0;
    for watch in &mut watches {
        let WatchItem::Event(event) = next(watch).await.unwrap() else {
            panic!("expected the create");
        };
        assert_eq!(event.revision, created.mod_revision);
        let line = event.encodings.get_or_insert_with(7, || {
            made += 1;
            Bytes::from_static(b"encoded once")
        });
        assert_eq!(line, Bytes::from_static(b"encoded once"));
        // Another key is another encoding (another version or event type).
        assert_eq!(
            event.encodings.get_or_insert_with(8, || bytes("b")),
            bytes("b")
        );
    }
    assert_eq!(made, 1, "each watcher encoded the event again");
    // A watch started after the event replays it from the window, memo included.
    let mut late = cacher.watch("/e/", start).await.unwrap();
    let WatchItem::Event(event) = next(&mut late).await.unwrap() else {
        panic!("expected the replayed create");
    };
    assert_eq!(event.encodings.len(), 2);
    cacher.close().await.unwrap();
}
