//! The watch cache's memory is bounded by bytes and released by compaction and by time
//! (issue #17).
//!
//! - A 1 MB ConfigMap patched over and over, with a watcher open so that every event
//!   is encoded, keeps the server's resident memory within its start, the watch cache's
//!   per-resource budget (`--watch-cache-budget-bytes`) and an allowance; once the
//!   writes stop and the history is compacted (`--compaction-interval 2s`), the window
//!   is empty and the memory goes back down. On both backends.
//! - With a short `--watch-cache-event-horizon` and no compaction, the window (read in
//!   `/metrics`, `kapi_watch_cache_bytes`) shrinks to its newest 100 events without
//!   any write.
//!
//! Debug builds take a third of a second or more per patch of 1 MB, so the churn is
//! short by default: 25 patches (15 on etcd) against a 16 MiB budget, which holds 5 of
//! these events. The figures in RELIABILITY.md are of `KAPI_CHURN_PATCHES=1000
//! KAPI_CHURN_BUDGET_BYTES=67108864` (the server's default budget);
//! `KAPI_CHURN_UNBOUNDED=1` runs the churn with budgets and a horizon too large to
//! matter and no compaction, as the cache was before, and prints the figures instead of
//! checking them.

use std::io::{BufRead, BufReader};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, EtcdProcess, Kapi, rss_bytes};
use serde_json::{Value, json};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const JSON: &str = "application/json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const MIB: u64 = 1024 * 1024;
/// The churned ConfigMap's payload.
const OBJECT_BYTES: usize = 1_000_000;
/// The per-resource budget of the churn, unless `KAPI_CHURN_BUDGET_BYTES` says.
const BUDGET: u64 = 16 * MIB;
/// What the server may hold beyond its start and the window's budget while it churns:
/// the requests in flight and their copies of the object (each patch decodes, merges,
/// validates and encodes 1 MB several times over), the embedded store's page cache
/// filling with the new history, and the allocator's slack. Measured on 2026-12-02
/// with 25 patches on the embedded store: +67 to +75 MiB at the end of issue #18's
/// first session, +76 to +95 MiB with its second (the window itself 14.3 MiB of it);
/// 64 MiB had been enough at +40 MiB before protobuf. On 2026-12-05: +89 to +94 MiB
/// run alone (three runs), +97 and +113 MiB within the whole suite on a busy machine
/// (two of five runs printed it), so 96 MiB became 128. The unbounded window this
/// guards against took +4,126 MiB.
const CHURN_ALLOWANCE: u64 = 128 * MIB;
/// What may stay above the start once the window is released, beyond the budget: the
/// store's page cache. The budget itself may stay too: mimalloc purges freed pages
/// lazily (`purge_delay`, 10 ms, is checked when the allocator next touches that
/// memory), so the window's pages freed by an idle server can stay resident until
/// the server allocates again; `MIMALLOC_PURGE_DELAY=0` in the environment of the test
/// (and so of the server) returns them at once. The same holds for the requests'
/// transient copies of the object: +0 to +33 MiB idle in the runs of 2026-12-02.
const IDLE_ALLOWANCE: u64 = 24 * MIB;
/// What the other resources' windows may hold once the churned one is released (the
/// bootstrap objects' events, until they are compacted too).
const OTHER_WINDOWS: u64 = MIB;

/// `kapi_watch_cache_bytes`: what the watch caches' windows hold.
fn window_bytes(kapi: &Kapi) -> u64 {
    let metrics = kapi.exchange("GET", "/metrics", "text/plain", None, None);
    assert_eq!(metrics.code, 200);
    metrics
        .body
        .lines()
        .find_map(|l| l.strip_prefix("kapi_watch_cache_bytes "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no kapi_watch_cache_bytes in /metrics:\n{}", metrics.body))
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// How many patches: `KAPI_CHURN_PATCHES`, or `default`.
fn patches(default: usize) -> usize {
    env("KAPI_CHURN_PATCHES").unwrap_or(default)
}

/// The per-resource budget: `KAPI_CHURN_BUDGET_BYTES`, or [`BUDGET`].
fn budget() -> u64 {
    env("KAPI_CHURN_BUDGET_BYTES").unwrap_or(BUDGET)
}

fn unbounded() -> bool {
    std::env::var("KAPI_CHURN_UNBOUNDED").is_ok_and(|v| v == "1")
}

/// Samples the server's memory every 20 ms in a thread; `stop` returns the peak.
struct Sampler {
    running: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    fn start(pid: u32) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let peak = Arc::new(AtomicU64::new(0));
        let thread = {
            let (running, peak) = (running.clone(), peak.clone());
            std::thread::spawn(move || {
                while running.load(Ordering::Acquire) {
                    peak.fetch_max(rss_bytes(pid), Ordering::AcqRel);
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        Self {
            running,
            peak,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> u64 {
        self.running.store(false, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.peak.load(Ordering::Acquire)
    }
}

/// What one churn measured.
struct Figures {
    patches: usize,
    took: Duration,
    /// Resident memory before the patches, at their peak, and once they were done.
    start: u64,
    peak: u64,
    end: u64,
    /// `kapi_watch_cache_bytes` before the patches and once they were done.
    window_before: u64,
    window_end: u64,
}

/// Creates a ConfigMap with `size` bytes of data, opens a watch of it that reads every
/// event (so the server encodes each one, and memoises the encoding in its window),
/// and patches one small field of it `patches` times.
fn churn(kapi: &Kapi, size: usize, patches: usize) -> Figures {
    let pid = kapi.pid().expect("the server runs");
    let configmap = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "big"}, "data": {"big": "x".repeat(size), "counter": "0"}});
    let body = serde_json::to_vec(&configmap).expect("JSON");
    let created = kapi.exchange("POST", CONFIGMAPS, JSON, None, Some(&body));
    let head = |body: &str| body.chars().take(300).collect::<String>();
    assert_eq!(created.code, 201, "{}", head(&created.body));
    let rv =
        serde_json::from_str::<Value>(&created.body).expect("JSON")["metadata"]["resourceVersion"]
            .as_str()
            .expect("a resourceVersion")
            .to_string();

    let events = Arc::new(AtomicU64::new(0));
    let watch = kapi
        .streaming_agent()
        .get(&format!(
            "{}{CONFIGMAPS}?watch=true&resourceVersion={rv}&timeoutSeconds=1200",
            kapi.url()
        ))
        .call()
        .expect("the watch starts");
    assert_eq!(watch.status().as_u16(), 200);
    {
        let events = events.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(watch.into_body().into_reader()).lines() {
                let Ok(line) = line else { return };
                if !line.trim().is_empty() {
                    assert!(line.starts_with(r#"{"type":"MODIFIED""#), "{}", head(&line));
                    events.fetch_add(1, Ordering::AcqRel);
                }
            }
        });
    }

    let window_before = window_bytes(kapi);
    let start = rss_bytes(pid);
    let sampler = Sampler::start(pid);
    let began = Instant::now();
    for n in 1..=patches {
        let patch = json!({"data": {"counter": n.to_string()}}).to_string();
        let res = kapi.exchange(
            "PATCH",
            &format!("{CONFIGMAPS}/big"),
            MERGE_PATCH,
            None,
            Some(patch.as_bytes()),
        );
        assert_eq!(res.code, 200, "patch {n}: {}", head(&res.body));
    }
    let took = began.elapsed();
    // The watcher got every event: the budget costs watchers nothing.
    let deadline = Instant::now() + Duration::from_secs(30);
    while events.load(Ordering::Acquire) < patches as u64 {
        assert!(
            Instant::now() < deadline,
            "the watcher has {} of {patches} events",
            events.load(Ordering::Acquire)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let end = rss_bytes(pid);
    let peak = sampler.stop().max(end);
    Figures {
        patches,
        took,
        start,
        peak,
        end,
        window_before,
        window_end: window_bytes(kapi),
    }
}

/// What the memory did once the writes stopped.
struct Idle {
    /// How long until the windows were (nearly) empty, if they were.
    released_after: Option<Duration>,
    window: u64,
    /// The lowest resident memory in the second after that.
    rss: u64,
}

/// Waits, with no writes, at most `bound` for the windows to hold under
/// [`OTHER_WINDOWS`] (the history is compacted); then the lowest memory over a second.
fn idle(kapi: &Kapi, bound: Duration) -> Idle {
    let pid = kapi.pid().expect("the server runs");
    let began = Instant::now();
    let mut window = window_bytes(kapi);
    while window > OTHER_WINDOWS && began.elapsed() < bound {
        std::thread::sleep(Duration::from_millis(100));
        window = window_bytes(kapi);
    }
    let released_after = (window <= OTHER_WINDOWS).then(|| began.elapsed());
    let mut rss = rss_bytes(pid);
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(100));
        rss = rss.min(rss_bytes(pid));
    }
    Idle {
        released_after,
        window,
        rss,
    }
}

/// Server arguments: the churn's budget and a short compaction interval, so that an
/// idle history is compacted in seconds (or, with `KAPI_CHURN_UNBOUNDED=1`, budgets and
/// a horizon too large to matter and no compaction).
fn start(backend: Backend) -> Kapi {
    let budget = budget().to_string();
    let args: Vec<&str> = if unbounded() {
        vec![
            "--compaction-interval",
            "0",
            "--watch-cache-budget-bytes",
            "1000000000000",
            "--watch-cache-total-budget-bytes",
            "1000000000000",
            "--watch-cache-event-horizon",
            "1h",
        ]
    } else {
        vec![
            "--compaction-interval",
            "2s",
            "--watch-cache-budget-bytes",
            &budget,
        ]
    };
    Kapi::start_with(backend, &args)
}

/// Churns a 1 MB ConfigMap, then idles; checks both against the budget.
fn churn_and_release(backend: Backend, what: &str, default_patches: usize) {
    let kapi = start(backend);
    let f = churn(&kapi, OBJECT_BYTES, patches(default_patches));
    let idle = if unbounded() {
        None
    } else {
        Some(idle(&kapi, Duration::from_secs(20)))
    };
    eprintln!(
        "watch cache churn ({what}): {} patches of a 1 MB ConfigMap in {:.1?} ({:.1?} each); window {} after the writes; RSS {} at the start, peak {} (+{}), {} after the writes (+{}){}",
        f.patches,
        f.took,
        f.took / f.patches.max(1) as u32,
        mib(f.window_end),
        mib(f.start),
        mib(f.peak),
        mib(f.peak.saturating_sub(f.start)),
        mib(f.end),
        mib(f.end.saturating_sub(f.start)),
        match &idle {
            Some(idle) => format!(
                "; idle: window {} after {:.1?}, RSS {} (+{})",
                mib(idle.window),
                idle.released_after.unwrap_or_default(),
                mib(idle.rss),
                mib(idle.rss.saturating_sub(f.start)),
            ),
            None => String::new(),
        }
    );
    let Some(idle) = idle else { return };
    let budget = budget();
    assert!(
        f.window_end <= f.window_before + budget,
        "{what}: the window holds {} over its {} budget",
        mib(f.window_end - f.window_before),
        mib(budget)
    );
    assert!(
        f.peak <= f.start + budget + CHURN_ALLOWANCE,
        "{what}: RSS peaked at {} from {}: more than the watch cache's {} budget and {} allowance",
        mib(f.peak),
        mib(f.start),
        mib(budget),
        mib(CHURN_ALLOWANCE)
    );
    assert!(
        idle.released_after.is_some(),
        "{what}: the windows still hold {} 20 s after the writes, with compaction every 2 s",
        mib(idle.window)
    );
    assert!(
        idle.rss <= f.start + budget + IDLE_ALLOWANCE,
        "{what}: RSS still {} (from {}) with the window released",
        mib(idle.rss),
        mib(f.start)
    );
}

#[test]
fn a_churning_large_configmap_stays_within_the_budget_and_compaction_releases_it_embedded() {
    churn_and_release(Backend::Embedded, "embedded", 25);
}

#[test]
fn a_churning_large_configmap_stays_within_the_budget_and_compaction_releases_it_etcd() {
    churn_and_release(Backend::Etcd(EtcdProcess::start()), "etcd", 15);
}

#[test]
fn the_event_horizon_releases_the_window_without_writes() {
    const PATCHES: u64 = 150;
    const SIZE: usize = 5_000;
    const HORIZON: Duration = Duration::from_secs(10);
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &[
            "--compaction-interval",
            "0",
            "--watch-cache-event-horizon",
            "10s",
        ],
    );
    // Events of 5 kB objects: 150 of them fit the default budget, and are written
    // within the horizon.
    let f = churn(&kapi, SIZE, PATCHES as usize);
    let full = f.window_end.saturating_sub(f.window_before);
    eprintln!(
        "watch cache horizon: {PATCHES} patches of a 5 kB ConfigMap in {:.1?}; window {} after the writes",
        f.took,
        mib(full),
    );
    if f.took + Duration::from_secs(1) < HORIZON {
        // Each event holds the object, the one before and the encoding.
        assert!(
            full > PATCHES * 3 * SIZE as u64,
            "the window holds only {}",
            mib(full)
        );
    } else {
        eprintln!("the writes took longer than the horizon: only the end is checked");
    }
    // No writes: within the horizon and a sweep or two, the newest 100 events are all
    // that is left (nothing is compacted).
    let kept = full * 100 / PATCHES;
    let target = kept + kept / 5;
    let deadline = Instant::now() + HORIZON + Duration::from_secs(10);
    let mut now = full;
    while now > target {
        assert!(
            Instant::now() < deadline,
            "the window still holds {} of {} 10 s past the horizon (expected about {})",
            mib(now),
            mib(full),
            mib(kept)
        );
        std::thread::sleep(Duration::from_millis(200));
        now = window_bytes(&kapi).saturating_sub(f.window_before);
    }
    eprintln!(
        "watch cache horizon: window {} once past the horizon",
        mib(now)
    );
}
