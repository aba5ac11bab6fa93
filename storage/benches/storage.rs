//! Storage benchmarks: write throughput (with the group-commit effect), get latency, list
//! time and watch fan-out of the [`Storage`] backends, on loopback and temporary
//! directories only.
//!
//! - `cargo bench -p kapi-storage --bench storage`: the embedded backend
//!   ([`EmbeddedStorage`] on redb) and a [`Cacher`] in front of it;
//! - `cargo bench -p kapi-storage --bench storage --features etcd`: also the etcd backend,
//!   against a real etcd that [`kapi_testing::EtcdProcess`] starts on loopback ports.
//!
//! Every figure is the median of `KAPI_BENCH_RUNS` runs (default 5) after one warm-up
//! run; the table also shows the lowest and highest run. Every run does a fixed amount
//! of work and every wait is bounded, so the whole benchmark finishes in a few minutes.
//! Without `--bench` (as `cargo test --all-targets` runs it) it is a quick smoke run
//! with tiny sizes whose figures mean nothing.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use kapi_storage::{
    Cacher, CacherConfig, EmbeddedConfig, EmbeddedStorage, ListRequest, ReadAt, Storage, WatchItem,
};
use kapi_testing::bench::{Report, median, quantile, runs_from_env};

/// A stored object about the size of a widget as the server stores it (~270 bytes).
const VALUE: &str = r#"{"apiVersion":"example.kapi.dev/v1","kind":"Widget","metadata":{"name":"w-0","namespace":"default","uid":"3f1c2a4e-9d7b-4c1e-8a55-0b6f2d9e7c10","generation":1,"creationTimestamp":"2026-11-30T10:00:00Z"},"spec":{"color":"red","size":"medium","replicas":1},"status":{}}"#;

/// How long a watcher may wait for its events before the run fails.
const WATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// Sizes of one benchmark run.
struct Settings {
    /// Measured runs per figure (after one warm-up run).
    runs: usize,
    /// Creates of the sequential (1 writer) benchmark.
    sequential_creates: usize,
    /// Writer counts of the concurrent-create benchmark.
    writers: Vec<usize>,
    /// Fewest creates per concurrent run (each writer does at least 4).
    min_concurrent_creates: usize,
    /// Gets per get-latency run.
    gets: usize,
    /// Key counts of the list benchmark, with the lists timed per run.
    lists: Vec<(usize, usize)>,
    /// Watcher counts of the fan-out benchmark.
    watchers: Vec<usize>,
    /// Events written per fan-out run.
    events: usize,
    /// Concurrent writers producing the fan-out events.
    event_writers: usize,
}

impl Settings {
    fn full() -> Self {
        let runs = runs_from_env();
        Self {
            runs,
            sequential_creates: 300,
            writers: vec![1, 8, 64, 256],
            min_concurrent_creates: 400,
            gets: 2000,
            lists: vec![(1_000, 20), (10_000, 5)],
            watchers: vec![1, 10, 100],
            events: 2000,
            event_writers: 64,
        }
    }

    fn smoke() -> Self {
        Self {
            runs: 1,
            sequential_creates: 5,
            writers: vec![1, 8],
            min_concurrent_creates: 16,
            gets: 20,
            lists: vec![(50, 2)],
            watchers: vec![1, 3],
            events: 20,
            event_writers: 4,
        }
    }
}

/// Runs `run` once to warm up, then `settings.runs` times; each run returns its figures.
async fn measure<F, Fut>(settings: &Settings, mut run: F) -> Vec<Vec<f64>>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Vec<f64>>,
{
    let _ = run(0).await;
    let mut samples = Vec::with_capacity(settings.runs);
    for i in 1..=settings.runs {
        samples.push(run(i).await);
    }
    samples
}

/// Counts commits of an embedded store; `None` for backends without group commit.
type CommitCounter = Option<EmbeddedStorage>;

fn commits(counter: &CommitCounter) -> u64 {
    counter.as_ref().map_or(0, EmbeddedStorage::commit_count)
}

/// `writers` tasks create `total` keys under `prefix` (writer `w` the keys `w`,
/// `w + writers`, ...), each writer one create at a time; returns the elapsed time.
async fn create_concurrently(
    storage: &Arc<dyn Storage>,
    prefix: &str,
    writers: usize,
    total: usize,
) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let storage = storage.clone();
            let prefix = prefix.to_string();
            tokio::spawn(async move {
                for i in (w..total).step_by(writers) {
                    storage
                        .create(
                            &format!("{prefix}{i:06}"),
                            Bytes::from_static(VALUE.as_bytes()),
                        )
                        .await
                        .expect("create");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("writer task");
    }
    start.elapsed()
}

/// Sequential and concurrent creates.
async fn bench_creates(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    storage: &Arc<dyn Storage>,
    counter: &CommitCounter,
) {
    let n = settings.sequential_creates;
    let samples = measure(settings, |run| async move {
        let before = commits(counter);
        let start = Instant::now();
        for i in 0..n {
            storage
                .create(
                    &format!("/registry/creates/seq/{run}/{i}"),
                    Bytes::from_static(VALUE.as_bytes()),
                )
                .await
                .expect("create");
        }
        let secs = start.elapsed().as_secs_f64();
        vec![
            n as f64 / secs,
            secs * 1e3 / n as f64,
            writes_per_commit(counter, before, n),
        ]
    })
    .await;
    let mut figures = vec![
        ("sequential creates (1 writer)", "writes/s"),
        ("sequential creates: latency (mean)", "ms"),
    ];
    if counter.is_some() {
        figures.push(("sequential creates: writes per commit (fsync)", "writes"));
    }
    report.add(backend, &figures, &samples);

    for &writers in &settings.writers {
        let per_writer = settings.min_concurrent_creates.div_ceil(writers).max(4);
        let total = writers * per_writer;
        let samples = measure(settings, |run| async move {
            let before = commits(counter);
            let elapsed = create_concurrently(
                storage,
                &format!("/registry/creates/w{writers}/{run}/"),
                writers,
                total,
            )
            .await;
            vec![
                total as f64 / elapsed.as_secs_f64(),
                writes_per_commit(counter, before, total),
            ]
        })
        .await;
        let throughput = format!("concurrent creates, {writers} writers ({total} per run)");
        let per_commit = format!("concurrent creates, {writers} writers: writes per commit");
        let mut figures = vec![(throughput.as_str(), "writes/s")];
        if counter.is_some() {
            figures.push((per_commit.as_str(), "writes"));
        }
        report.add(backend, &figures, &samples);
    }
}

fn writes_per_commit(counter: &CommitCounter, before: u64, writes: usize) -> f64 {
    let commits = commits(counter).saturating_sub(before).max(1);
    writes as f64 / commits as f64
}

/// Fills `/registry/lists/{n}/` with `n` keys, 64 writers at a time.
async fn fill(storage: &Arc<dyn Storage>, n: usize) -> String {
    let prefix = format!("/registry/lists/{n}/");
    create_concurrently(storage, &prefix, 64, n).await;
    prefix
}

/// Sequential gets of pseudo-random keys of a filled prefix.
async fn bench_gets(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    label: &str,
    storage: &Arc<dyn Storage>,
    keys: &[String],
    read_at: ReadAt,
) {
    let gets = settings.gets;
    let samples = measure(settings, |run| async move {
        let mut latencies = Vec::with_capacity(gets);
        let mut x = 0x9e37_79b9_u64.wrapping_mul(run as u64 + 1);
        let start = Instant::now();
        for _ in 0..gets {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let key = &keys[(x >> 33) as usize % keys.len()];
            let t = Instant::now();
            let found = storage.get(key, read_at).await.expect("get");
            latencies.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(found.is_some(), "{key} is missing");
        }
        let secs = start.elapsed().as_secs_f64();
        latencies.sort_by(f64::total_cmp);
        vec![
            median(&latencies),
            quantile(&latencies, 0.99),
            gets as f64 / secs,
        ]
    })
    .await;
    let p50 = format!("get {label}: latency p50");
    let p99 = format!("get {label}: latency p99");
    let rate = format!("get {label}: 1 reader");
    report.add(
        backend,
        &[(&p50, "µs"), (&p99, "µs"), (&rate, "gets/s")],
        &samples,
    );
}

/// Full lists of a filled prefix.
async fn bench_list(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    storage: &Arc<dyn Storage>,
    prefix: &str,
    (n, lists): (usize, usize),
    read_at: ReadAt,
) {
    let samples = measure(settings, |_| async move {
        let mut times = Vec::with_capacity(lists);
        for _ in 0..lists {
            let request = ListRequest {
                prefix: prefix.to_string(),
                read_at,
                ..ListRequest::default()
            };
            let t = Instant::now();
            let page = storage.list(&request).await.expect("list");
            times.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(page.items.len(), n, "list of {prefix}");
        }
        times.sort_by(f64::total_cmp);
        vec![median(&times)]
    })
    .await;
    let what = format!("list {n} keys ({read_at:?})");
    report.add(backend, &[(&what, "ms")], &samples);
}

/// `watchers` watches of one prefix receive the `events` creates that
/// `settings.event_writers` writers make under it; returns the figures of the run.
async fn fan_out(
    settings: &Settings,
    storage: &Arc<dyn Storage>,
    prefix: &str,
    watchers: usize,
) -> Vec<f64> {
    let events = settings.events;
    let after = storage.current_revision().await.expect("revision");
    let mut tasks = Vec::with_capacity(watchers);
    for _ in 0..watchers {
        let mut stream = storage.watch(prefix, after).await.expect("watch");
        tasks.push(tokio::spawn(async move {
            let mut seen = 0;
            let deadline = tokio::time::Instant::now() + WATCH_TIMEOUT;
            while seen < events {
                match tokio::time::timeout_at(deadline, stream.next()).await {
                    Ok(Some(Ok(WatchItem::Event(_)))) => seen += 1,
                    Ok(Some(Ok(WatchItem::Progress(_)))) => {}
                    Ok(Some(Err(e))) => panic!("watch failed after {seen} events: {e}"),
                    Ok(None) => panic!("watch ended after {seen} events"),
                    Err(_) => panic!("watch saw {seen} of {events} events in {WATCH_TIMEOUT:?}"),
                }
            }
            Instant::now()
        }));
    }
    let writers = settings.event_writers;
    let start = Instant::now();
    let written = create_concurrently(storage, prefix, writers, events).await;
    let mut last = start;
    for task in tasks {
        last = last.max(task.await.expect("watcher task"));
    }
    let all = last.duration_since(start).as_secs_f64();
    vec![
        (watchers * events) as f64 / all,
        events as f64 / written.as_secs_f64(),
        (all - written.as_secs_f64()).max(0.0) * 1e3,
    ]
}

async fn bench_fan_out(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    storage: &Arc<dyn Storage>,
    watch_prefix: &str,
) {
    let events = settings.events;
    for &watchers in &settings.watchers {
        let samples = measure(settings, |run| async move {
            fan_out(
                settings,
                storage,
                &format!("{watch_prefix}{watchers}-{run}/"),
                watchers,
            )
            .await
        })
        .await;
        let delivered = format!("watch fan-out: {watchers} watchers × {events} events");
        let writes = format!("watch fan-out: {watchers} watchers, write rate");
        let drain = format!("watch fan-out: {watchers} watchers, lag after last write");
        report.add(
            backend,
            &[
                (&delivered, "events/s delivered"),
                (&writes, "writes/s"),
                (&drain, "ms"),
            ],
            &samples,
        );
    }
}

/// Every benchmark on the embedded backend, then the reads and watches of a `Cacher`.
async fn embedded(settings: &Settings, report: &mut Report) {
    let dir = tempfile::Builder::new()
        .prefix("kapi-bench-")
        .tempdir()
        .expect("temporary directory");
    // The watch buffer holds a whole fan-out run, so that slow watchers are measured,
    // not cut off; background compaction stays off during the runs.
    let config = EmbeddedConfig::default()
        .without_compaction()
        .with_watch_buffer(settings.events.max(4096) * 2);
    let store = EmbeddedStorage::open_with(dir.path(), config).expect("open");
    let storage: Arc<dyn Storage> = Arc::new(store.clone());
    let backend = "embedded";
    eprintln!("embedded (redb) in {}", dir.path().display());

    bench_creates(settings, report, backend, &storage, &Some(store.clone())).await;
    read_benchmarks(settings, report, backend, &storage).await;
    bench_fan_out(settings, report, backend, &storage, "/registry/watch/").await;

    // Each watcher may queue a whole fan-out run, so that slow watchers are measured,
    // not cut off.
    let cacher_config = CacherConfig::default().with_watcher_buffer(settings.events * 2);
    let lists_cache = Arc::new(Cacher::new(
        storage.clone(),
        "/registry/lists/",
        cacher_config.clone(),
    ));
    let watch_cache = Arc::new(Cacher::new(
        storage.clone(),
        "/registry/cached-watch/",
        cacher_config,
    ));
    for cache in [&lists_cache, &watch_cache] {
        assert!(
            cache.wait_ready(Duration::from_secs(30)).await,
            "cacher not ready"
        );
    }
    let backend = "embedded + Cacher";
    let cache: Arc<dyn Storage> = lists_cache.clone();
    cached_reads(settings, report, backend, &cache).await;
    let cache: Arc<dyn Storage> = watch_cache.clone();
    bench_fan_out(settings, report, backend, &cache, "/registry/cached-watch/").await;
    for cache in [&lists_cache, &watch_cache] {
        let stats = cache.stats();
        eprintln!("  cacher {}: {stats:?}", cache.prefix());
        assert_eq!(stats.watchers_cut_off, 0, "a cached watcher was cut off");
        cache.close().await.expect("close");
    }
    storage.close().await.expect("close");
}

/// Gets and lists (`ReadAt::Latest`) of prefixes it fills first.
async fn read_benchmarks(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    storage: &Arc<dyn Storage>,
) {
    let mut prefixes = Vec::new();
    for &(n, lists) in &settings.lists {
        prefixes.push((fill(storage, n).await, (n, lists)));
    }
    let (largest, (n, _)) = prefixes.last().expect("a list size");
    let keys = all_keys(storage, largest).await;
    assert_eq!(keys.len(), *n);
    let label = format!("(Latest, {n} keys)");
    bench_gets(
        settings,
        report,
        backend,
        &label,
        storage,
        &keys,
        ReadAt::Latest,
    )
    .await;
    for (prefix, size) in &prefixes {
        bench_list(
            settings,
            report,
            backend,
            storage,
            prefix,
            *size,
            ReadAt::Latest,
        )
        .await;
    }
}

/// Gets and lists with `ReadAt::Any` through a cacher of the filled prefixes.
async fn cached_reads(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    cache: &Arc<dyn Storage>,
) {
    let (n, _) = *settings.lists.last().expect("a list size");
    let largest = format!("/registry/lists/{n}/");
    let keys = all_keys(cache, &largest).await;
    let label = format!("(Any, {n} keys)");
    bench_gets(settings, report, backend, &label, cache, &keys, ReadAt::Any).await;
    for &(n, lists) in &settings.lists {
        let prefix = format!("/registry/lists/{n}/");
        bench_list(
            settings,
            report,
            backend,
            cache,
            &prefix,
            (n, lists),
            ReadAt::Any,
        )
        .await;
    }
}

async fn all_keys(storage: &Arc<dyn Storage>, prefix: &str) -> Vec<String> {
    let request = ListRequest {
        prefix: prefix.to_string(),
        read_at: ReadAt::Any,
        ..ListRequest::default()
    };
    let page = storage.list(&request).await.expect("list");
    page.items.into_iter().map(|kv| kv.key).collect()
}

/// Creates, gets and lists on a real etcd on loopback.
#[cfg(feature = "etcd")]
async fn etcd(settings: &Settings, report: &mut Report) {
    let process = kapi_testing::EtcdProcess::start();
    eprintln!("etcd at {}", process.endpoint());
    let store = kapi_storage::EtcdStorage::connect(&[process.endpoint()])
        .await
        .expect("connect to etcd");
    let storage: Arc<dyn Storage> = Arc::new(store);
    let backend = "etcd";
    bench_creates(settings, report, backend, &storage, &None).await;
    read_benchmarks(settings, report, backend, &storage).await;
    storage.close().await.expect("close");
    drop(process);
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let settings = if bench {
        Settings::full()
    } else {
        Settings::smoke()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut report = Report::default();
    let start = Instant::now();
    runtime.block_on(embedded(&settings, &mut report));
    #[cfg(feature = "etcd")]
    runtime.block_on(etcd(&settings, &mut report));
    report.print(settings.runs);
    eprintln!("storage benchmarks took {:.0?}", start.elapsed());
}
