//! The soak run (issue #8): kapi over a real etcd under a steady mixed load for a fixed
//! time, reporting each minute's throughput, errors, p50/p99 latency and kapi's
//! resident memory, so that a leak or a slow drift shows as a trend.
//!
//! First the capacity is measured: the same mix, closed-loop, as fast as it goes. Then
//! each worker paces its calls so that all together run at `utilisation` of that
//! capacity. The mix is Kubernetes-shaped: on each worker's own ConfigMaps, 75% updates
//! with resourceVersion preconditions, 15% deletes and 10% creates, with a list of the
//! namespace every tenth call, while watchers follow the namespace.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::client::{Client, Transport};
use crate::server::{KapiProcess, Storage};
use crate::stats::{Millis, Recorder};

/// The soak's settings.
#[derive(Clone, Debug)]
pub struct SoakConfig {
    /// The kapi binary (built with the `etcd` feature).
    pub kapi: std::path::PathBuf,
    /// How long the paced load runs.
    pub duration: Duration,
    /// How long the capacity is measured.
    pub capacity_time: Duration,
    /// Concurrent writers.
    pub workers: usize,
    /// Watchers of the namespace.
    pub watchers: usize,
    /// The share of the capacity the paced load runs at.
    pub utilisation: f64,
    /// How long each reported interval is.
    pub interval: Duration,
}

/// One reported interval.
#[derive(Clone, Debug)]
pub struct Interval {
    /// Its end, from the start of the paced load.
    pub at: Duration,
    /// Successful calls per second.
    pub ops_per_sec: f64,
    /// Failed calls.
    pub errors: u64,
    /// Median latency.
    pub p50: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
    /// kapi's resident memory at its end, in bytes.
    pub rss: u64,
    /// Watch events received in it.
    pub watch_events: u64,
}

/// What a soak measured.
#[derive(Clone, Debug)]
pub struct Soaked {
    /// The capacity, calls per second.
    pub capacity: f64,
    /// The paced rate aimed at.
    pub target: f64,
    /// Every interval.
    pub intervals: Vec<Interval>,
}

impl Soaked {
    /// The Markdown table of the intervals, with the capacity and a verdict on memory:
    /// flat when the last interval's RSS is within 10% of the first after warm-up.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "capacity {:.0} calls/s, paced at {:.0} calls/s\n\n| minute | calls/s | errors | p50 | p99 | watch events | kapi RSS MiB |\n|---:|---:|---:|---:|---:|---:|---:|\n",
            self.capacity, self.target
        );
        for i in &self.intervals {
            out.push_str(&format!(
                "| {:.1} | {:.0} | {} | {} | {} | {} | {:.1} |\n",
                i.at.as_secs_f64() / 60.0,
                i.ops_per_sec,
                i.errors,
                Millis(i.p50),
                Millis(i.p99),
                i.watch_events,
                i.rss as f64 / (1 << 20) as f64,
            ));
        }
        if let Some(verdict) = self.memory_verdict() {
            out.push_str(&format!("\n{verdict}\n"));
        }
        out
    }

    /// Whether memory stayed flat after the first interval (the warm-up).
    pub fn memory_verdict(&self) -> Option<String> {
        let warm = self.intervals.get(1)?.rss as f64;
        let last = self.intervals.last()?.rss as f64;
        let growth = (last - warm) / warm;
        Some(format!(
            "memory after warm-up: {:.1} MiB → {:.1} MiB ({:+.1}%): {}",
            warm / (1 << 20) as f64,
            last / (1 << 20) as f64,
            growth * 100.0,
            if growth.abs() <= 0.10 {
                "flat"
            } else {
                "NOT flat"
            }
        ))
    }
}

/// Runs the soak: etcd and kapi are started here and stopped at the end.
pub async fn run(config: &SoakConfig) -> Result<Soaked, String> {
    let etcd = kapi_testing::EtcdProcess::start();
    let kapi = KapiProcess::start(
        &config.kapi,
        Storage {
            etcd_endpoint: Some(etcd.endpoint()),
            ..Storage::default()
        },
    )
    .await?;
    let addr = kapi.addr();
    let setup = Client::connect(addr, Transport::Http1).await?;
    setup
        .send(
            Method::POST,
            "/api/v1/namespaces",
            Some(json_body(
                &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "soak"}}),
            )),
        )
        .await?
        .expect("creating the namespace", StatusCode::CREATED)?;

    let events = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut watchers = Vec::new();
    for _ in 0..config.watchers {
        let events = events.clone();
        watchers.push(tokio::spawn(watch(addr, events)));
    }

    // Capacity: closed loop.
    let recorder = Arc::new(Mutex::new(Recorder::new()));
    let started = Instant::now();
    run_workers(
        addr,
        config.workers,
        started + config.capacity_time,
        &recorder,
    )
    .await?;
    let capacity = recorder.lock().unwrap().ops() as f64 / started.elapsed().as_secs_f64();
    let target = capacity * config.utilisation;
    eprintln!(
        "kapi-bench soak: capacity {capacity:.0} calls/s; pacing at {target:.0} calls/s for {:?}",
        config.duration
    );

    // The paced run, one recorder per interval.
    let pace = Duration::from_secs_f64(config.workers as f64 / target.max(1.0));
    let started = Instant::now();
    let end = started + config.duration;
    let recorders: Arc<Mutex<Vec<Recorder>>> = Arc::new(Mutex::new(Vec::new()));
    let interval = config.interval;
    let paced = {
        let recorders = recorders.clone();
        let workers = config.workers;
        tokio::spawn(async move {
            let per_interval = Arc::new(Mutex::new(Recorder::new()));
            let mut handles = Vec::new();
            for w in 0..workers {
                let recorder = per_interval.clone();
                handles.push(tokio::spawn(async move {
                    worker(addr, w, Some(pace), end, &recorder, 1).await
                }));
            }
            // Every interval, the recorder is swapped for a fresh one.
            let mut next = started + interval;
            while next <= end + Duration::from_millis(1) {
                tokio::time::sleep_until(next).await;
                let done = std::mem::take(&mut *per_interval.lock().unwrap());
                recorders.lock().unwrap().push(done);
                next += interval;
            }
            for h in handles {
                h.await.map_err(|e| e.to_string())??;
            }
            Ok::<_, String>(())
        })
    };
    let mut intervals = Vec::new();
    let mut last_events = 0;
    let mut seen = 0;
    let mut at = Duration::ZERO;
    while seen < (config.duration.as_secs_f64() / interval.as_secs_f64()).floor() as usize {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let done: Vec<Recorder> = recorders.lock().unwrap().drain(..).collect();
        for r in done {
            seen += 1;
            at += interval;
            let s = r.summary(interval);
            let rss = kapi.memory().map(|m| m.rss).unwrap_or(0);
            let total = events.load(std::sync::atomic::Ordering::Relaxed);
            let row = Interval {
                at,
                ops_per_sec: s.ops_per_sec,
                errors: s.errors,
                p50: s.p50,
                p99: s.p99,
                rss,
                watch_events: total - last_events,
            };
            last_events = total;
            eprintln!(
                "kapi-bench soak: {:>5.1} min {:>6.0} calls/s, {} errors, p50 {}, p99 {}, {} watch events, RSS {:.1} MiB",
                at.as_secs_f64() / 60.0,
                row.ops_per_sec,
                row.errors,
                Millis(row.p50),
                Millis(row.p99),
                row.watch_events,
                row.rss as f64 / (1 << 20) as f64
            );
            if let Some(e) = r.first_errors().first() {
                eprintln!("kapi-bench soak:   first error: {e}");
            }
            intervals.push(row);
        }
    }
    paced.await.map_err(|e| e.to_string())??;
    for w in watchers {
        w.abort();
    }
    drop(kapi);
    drop(etcd);
    Ok(Soaked {
        capacity,
        target,
        intervals,
    })
}

/// The capacity measurement: every worker as fast as it goes.
async fn run_workers(
    addr: std::net::SocketAddr,
    workers: usize,
    end: Instant,
    recorder: &Arc<Mutex<Recorder>>,
) -> Result<(), String> {
    let mut handles = Vec::new();
    for w in 0..workers {
        let recorder = recorder.clone();
        handles.push(tokio::spawn(async move {
            worker(addr, w, None, end, &recorder, 0).await
        }));
    }
    for h in handles {
        h.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// One worker: calls on its own ConfigMaps (named after `generation`, so the paced
/// run does not meet the capacity run's) until `end`, every `pace` when given.
async fn worker(
    addr: std::net::SocketAddr,
    w: usize,
    pace: Option<Duration>,
    end: Instant,
    recorder: &Mutex<Recorder>,
    generation: usize,
) -> Result<(), String> {
    let client = Client::connect(addr, Transport::Http1).await?;
    // Each worker's keys are its own, so its view of their resourceVersions is exact.
    let mut versions: HashMap<String, String> = HashMap::new();
    let mut next = Instant::now();
    let mut call = 0u64;
    let collection = "/api/v1/namespaces/soak/configmaps";
    while Instant::now() < end {
        if let Some(pace) = pace {
            tokio::time::sleep_until(next).await;
            next += pace;
            // A worker that fell behind does not burst to catch up.
            next = next.max(Instant::now());
        }
        call += 1;
        let key = format!("g{generation}-w{w}-k{}", call % 8);
        let begun = Instant::now();
        let outcome = if call.is_multiple_of(10) {
            client
                .send(Method::GET, &format!("{collection}?limit=100"), None)
                .await
                .and_then(|r| r.expect("list", StatusCode::OK))
                .map(|_| ())
        } else {
            let value = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": key}, "data": {"v": call.to_string()}});
            match versions.get(&key).cloned() {
                None => client
                    .send(Method::POST, collection, Some(json_body(&value)))
                    .await
                    .and_then(|r| r.expect("create", StatusCode::CREATED))
                    .map(|r| remember(&mut versions, &key, &r.body)),
                Some(rv) if call % 20 < 3 => {
                    let options = json!({"apiVersion": "v1", "kind": "DeleteOptions",
                        "preconditions": {"resourceVersion": rv}});
                    versions.remove(&key);
                    client
                        .send(
                            Method::DELETE,
                            &format!("{collection}/{key}"),
                            Some(json_body(&options)),
                        )
                        .await
                        .and_then(|r| r.expect("delete", StatusCode::OK))
                        .map(|_| ())
                }
                Some(rv) => {
                    let mut value = value;
                    value["metadata"]["resourceVersion"] = json!(rv);
                    client
                        .send(
                            Method::PUT,
                            &format!("{collection}/{key}"),
                            Some(json_body(&value)),
                        )
                        .await
                        .and_then(|r| r.expect("update", StatusCode::OK))
                        .map(|r| remember(&mut versions, &key, &r.body))
                }
            }
        };
        let mut recorder = recorder.lock().unwrap();
        match outcome {
            Ok(()) => recorder.record(begun.elapsed()),
            Err(e) => {
                // The key's state is unknown now: read it again next time.
                versions.remove(&key);
                recorder.record_error(e);
            }
        }
    }
    Ok(())
}

fn remember(versions: &mut HashMap<String, String>, key: &str, body: &Bytes) {
    if let Ok(obj) = serde_json::from_slice::<Value>(body) {
        if let Some(rv) = obj["metadata"]["resourceVersion"].as_str() {
            versions.insert(key.to_string(), rv.to_string());
        }
    }
}

fn json_body(value: &Value) -> (&'static str, Bytes) {
    (
        "application/json",
        Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
    )
}

/// A watcher of the namespace, counting events, reconnecting when a watch ends.
async fn watch(addr: std::net::SocketAddr, events: Arc<std::sync::atomic::AtomicU64>) {
    loop {
        let Ok(io) = crate::client::tcp(addr).await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let Ok((mut sender, connection)) = hyper::client::conn::http1::handshake(io).await else {
            continue;
        };
        tokio::spawn(connection);
        let request = http::Request::builder()
            .uri(format!(
                "http://{addr}/api/v1/namespaces/soak/configmaps?watch=true&timeoutSeconds=60"
            ))
            .header(http::header::HOST, addr.to_string())
            .body(http_body_util::Full::new(Bytes::new()));
        let Ok(request) = request else { return };
        let Ok(response) = sender.send_request(request).await else {
            continue;
        };
        let mut body = response.into_body();
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(data) = frame.data_ref() {
                let lines = data.iter().filter(|b| **b == b'\n').count() as u64;
                events.fetch_add(lines, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }
}
