//! API benchmarks: the `kapi` binary cargo builds with this benchmark (release, for
//! `cargo bench`), started on a loopback port and driven over HTTP/1.1 by blocking
//! client threads, each with its own keep-alive connection.
//!
//! - `cargo bench -p kapi-server --bench api`: the embedded store;
//! - `cargo bench -p kapi-server --bench api --features etcd`: also etcd, a real one
//!   that [`kapi_testing::EtcdProcess`] starts on loopback ports.
//!
//! Measured per backend: create throughput (POST widgets, 1 and 32 clients), GET by
//! name, LIST of 1000 widgets (JSON from the store, JSON with `resourceVersion=0` from
//! the watch cache, and Table), watch delivery latency (from a create's response to its
//! ADDED event on another connection, for creates back to back and 50 ms apart) and, on
//! a fresh server, the resident memory (`VmRSS`) before and after loading 10 000
//! widgets. Each figure is the median of `KAPI_BENCH_RUNS` runs (default 5) after one
//! warm-up run; every read from the server has a timeout and every watch a
//! `timeoutSeconds`, so the benchmark is bounded. The clients share the machine's cores
//! with the server. Without `--bench` (as `cargo test --all-targets` runs it) it is a
//! quick smoke run with tiny sizes whose figures mean nothing.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kapi_testing::bench::{Report, median, quantile, runs_from_env};
use serde_json::Value;

/// Where widgets live.
const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";

/// What `kubectl get` asks for.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// Bound on each read from the server, and on the server's start.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Sizes of one benchmark run.
struct Settings {
    runs: usize,
    /// Creates per run with 1 client, and with 32.
    creates: (usize, usize),
    /// Widgets listed (and read by name).
    listed: usize,
    /// Lists timed per run.
    lists: usize,
    /// Gets per run with 1 client, and with 32.
    gets: (usize, usize),
    /// Creates (and so events) per watch-latency run: back to back, and 50 ms apart.
    watched: usize,
    watched_paced: usize,
    /// Widgets loaded before reading the memory.
    loaded: usize,
}

impl Settings {
    fn full() -> Self {
        let runs = runs_from_env();
        Self {
            runs,
            creates: (300, 640),
            listed: 1000,
            lists: 20,
            gets: (2000, 6400),
            watched: 200,
            watched_paced: 40,
            loaded: 10_000,
        }
    }

    fn smoke() -> Self {
        Self {
            runs: 1,
            creates: (4, 32),
            listed: 20,
            lists: 2,
            gets: (10, 32),
            watched: 5,
            watched_paced: 2,
            loaded: 50,
        }
    }
}

fn widget(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"example.kapi.dev/v1","kind":"Widget","metadata":{{"name":"{name}"}},"spec":{{"color":"red"}}}}"#
    )
}

/// A running `kapi serve`, killed when dropped.
struct Server {
    child: Child,
    url: String,
    log: PathBuf,
    dir: tempfile::TempDir,
}

impl Server {
    /// Starts the server on a free loopback port, on `etcd` (under the key prefix
    /// `etcd_prefix`) or the embedded store.
    fn start(etcd: Option<&str>, etcd_prefix: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("kapi-bench-")
            .tempdir()
            .expect("temporary directory");
        let log = dir.path().join("kapi.log");
        let mut command = Command::new(env!("CARGO_BIN_EXE_kapi"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .env("KAPI_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"));
        if let Some(endpoint) = etcd {
            command.args(["--etcd-servers", endpoint, "--etcd-prefix", etcd_prefix]);
        }
        let child = command.spawn().expect("starting kapi");
        let mut server = Self {
            child,
            url: String::new(),
            log,
            dir,
        };
        server.wait_ready();
        server
    }

    fn wait_ready(&mut self) {
        let kubeconfig = self.dir.path().join("kubeconfig");
        let deadline = Instant::now() + TIMEOUT;
        let agent = agent();
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("kapi exited with {status}:\n{}", self.log_text());
            }
            let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
            if let Some(url) = text.lines().find_map(|l| l.trim().strip_prefix("server: ")) {
                if get(&agent, &format!("{url}/readyz"), "*/*").0 == 200 {
                    self.url = url.to_string();
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("kapi was not ready in {TIMEOUT:?}:\n{}", self.log_text());
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The server's resident memory, in MiB.
    fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/<pid>/status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kib / 1024.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client with one keep-alive connection at a time.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        // Per read, not global: a global timeout made each request several ms slower
        // in a trial (ureq 3.5).
        .timeout_connect(Some(Duration::from_secs(10)))
        .timeout_per_read(Some(TIMEOUT))
        .build()
        .into()
}

/// GET with an `Accept` header; the status and the body.
fn get(agent: &ureq::Agent, url: &str, accept: &str) -> (u16, String) {
    match agent.get(url).header("accept", accept).call() {
        Ok(response) => {
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .into_with_config()
                .limit(256 << 20)
                .read_to_string()
                .expect("reading a response");
            (status, body)
        }
        Err(_) => (0, String::new()),
    }
}

/// Creates the widget `name`; panics unless the server answers 201.
fn create(agent: &ureq::Agent, server: &Server, name: &str) {
    let response = agent
        .post(&format!("{}{WIDGETS}", server.url))
        .header("content-type", "application/json")
        .send(widget(name).as_bytes())
        .expect("POST");
    let status = response.status().as_u16();
    let body = response.into_body().read_to_string().unwrap_or_default();
    assert_eq!(status, 201, "creating {name}: {body}");
}

/// `clients` threads, each with its own connection, run `total` operations between them
/// (client `c` runs `c`, `c + clients`, ...); returns the elapsed time and every
/// operation's latency in ms, sorted.
fn drive(
    clients: usize,
    total: usize,
    op: impl Fn(&ureq::Agent, usize) + Sync,
) -> (Duration, Vec<f64>) {
    let start = Instant::now();
    let mut latencies: Vec<f64> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..clients)
            .map(|c| {
                let op = &op;
                scope.spawn(move || {
                    let agent = agent();
                    let mut latencies = Vec::new();
                    for i in (c..total).step_by(clients) {
                        let t = Instant::now();
                        op(&agent, i);
                        latencies.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    latencies
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().expect("client thread"))
            .collect()
    });
    let elapsed = start.elapsed();
    latencies.sort_by(f64::total_cmp);
    (elapsed, latencies)
}

/// Runs `run` once to warm up, then `settings.runs` times; each run returns its figures.
fn measure(settings: &Settings, mut run: impl FnMut(usize) -> Vec<f64>) -> Vec<Vec<f64>> {
    let _ = run(0);
    (1..=settings.runs).map(run).collect()
}

/// Every benchmark on one server.
fn bench_server(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    etcd: Option<&str>,
) {
    let server = Server::start(etcd, "/registry");
    eprintln!("{backend}: kapi at {}", server.url);

    // The listed widgets first, so that the namespace holds exactly `listed` of them
    // while lists and gets run.
    let listed = settings.listed;
    drive(32, listed, |agent, i| {
        create(agent, &server, &format!("w-{i}"))
    });
    bench_lists(settings, report, backend, &server);
    bench_gets(settings, report, backend, &server);

    for (clients, total) in [(1, settings.creates.0), (32, settings.creates.1)] {
        let samples = measure(settings, |run| {
            let (elapsed, latencies) = drive(clients, total, |agent, i| {
                create(agent, &server, &format!("w-c{clients}-r{run}-{i}"));
            });
            vec![
                total as f64 / elapsed.as_secs_f64(),
                median(&latencies),
                quantile(&latencies, 0.99),
            ]
        });
        let rate = format!("POST widget, {clients} clients ({total} per run)");
        let p50 = format!("POST widget, {clients} clients: latency p50");
        let p99 = format!("POST widget, {clients} clients: latency p99");
        report.add(
            backend,
            &[(&rate, "creates/s"), (&p50, "ms"), (&p99, "ms")],
            &samples,
        );
    }

    bench_watch(
        settings,
        report,
        backend,
        &server,
        settings.watched,
        Duration::ZERO,
    );
    bench_watch(
        settings,
        report,
        backend,
        &server,
        settings.watched_paced,
        Duration::from_millis(50),
    );
    drop(server);

    // Memory: a fresh server (on etcd: under another key prefix), idle, then with
    // `loaded` widgets.
    let server = Server::start(etcd, "/registry-memory");
    let loaded = settings.loaded;
    let idle = server.rss_mib();
    let (elapsed, _) = drive(32, loaded, |agent, i| {
        create(agent, &server, &format!("w-{i}"))
    });
    std::thread::sleep(Duration::from_secs(1));
    let full = server.rss_mib();
    let (status, body) = get(
        &agent(),
        &format!("{}{WIDGETS}", server.url),
        "application/json",
    );
    assert_eq!(status, 200);
    let count = serde_json::from_str::<Value>(&body).expect("a list")["items"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(count, loaded);
    let after_list = server.rss_mib();
    let load = format!("load {loaded} widgets, 32 clients (one run)");
    let idle_what = "RSS of a fresh server, idle".to_string();
    let full_what = format!("RSS with {loaded} widgets");
    let list_what = format!("RSS with {loaded} widgets, after one LIST of all");
    report.add(
        backend,
        &[
            (&load, "creates/s"),
            (&idle_what, "MiB"),
            (&full_what, "MiB"),
            (&list_what, "MiB"),
        ],
        &[vec![
            loaded as f64 / elapsed.as_secs_f64(),
            idle,
            full,
            after_list,
        ]],
    );
}

/// LIST of the namespace's `listed` widgets, as JSON (from the store and from the
/// watch cache) and as a Table.
fn bench_lists(settings: &Settings, report: &mut Report, backend: &'static str, server: &Server) {
    let listed = settings.listed;
    let variants = [
        ("JSON", "", "application/json"),
        (
            "JSON, resourceVersion=0 (watch cache)",
            "?resourceVersion=0",
            "application/json",
        ),
        ("Table", "", TABLE),
    ];
    for (label, query, accept) in variants {
        let url = format!("{}{WIDGETS}{query}", server.url);
        let agent = agent();
        let mut size = 0;
        let samples = measure(settings, |_| {
            let mut times = Vec::with_capacity(settings.lists);
            for _ in 0..settings.lists {
                let t = Instant::now();
                let (status, body) = get(&agent, &url, accept);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                assert_eq!(status, 200, "{body}");
                size = body.len();
            }
            times.sort_by(f64::total_cmp);
            vec![median(&times)]
        });
        let body: Value = serde_json::from_str(&get(&agent, &url, accept).1).expect("JSON");
        let count = body["items"]
            .as_array()
            .or_else(|| body["rows"].as_array())
            .map_or(0, Vec::len);
        assert_eq!(count, listed, "{label}");
        let what = format!("LIST {listed} widgets, {label} ({} KiB)", size / 1024);
        report.add(backend, &[(&what, "ms")], &samples);
    }
}

/// GET by name of the listed widgets, 1 client (latency) and 32 (throughput).
fn bench_gets(settings: &Settings, report: &mut Report, backend: &'static str, server: &Server) {
    let listed = settings.listed;
    for (clients, total) in [(1, settings.gets.0), (32, settings.gets.1)] {
        let samples = measure(settings, |run| {
            let (elapsed, latencies) = drive(clients, total, |agent, i| {
                let name = (i * 7919 + run * 31) % listed;
                let (status, _) = get(
                    agent,
                    &format!("{}{WIDGETS}/w-{name}", server.url),
                    "application/json",
                );
                assert_eq!(status, 200);
            });
            vec![
                total as f64 / elapsed.as_secs_f64(),
                median(&latencies),
                quantile(&latencies, 0.99),
            ]
        });
        let rate = format!("GET widget by name, {clients} clients");
        let p50 = format!("GET widget by name, {clients} clients: latency p50");
        let p99 = format!("GET widget by name, {clients} clients: latency p99");
        report.add(
            backend,
            &[(&rate, "gets/s"), (&p50, "ms"), (&p99, "ms")],
            &samples,
        );
    }
}

/// One client creates widgets one after the other while a watch on another connection
/// receives them: the delay from each create's response (and from its request) to its
/// ADDED event.
fn bench_watch(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    server: &Server,
    watched: usize,
    pause: Duration,
) {
    let samples = measure(settings, |run| {
        let client = agent();
        let (status, body) = get(
            &client,
            &format!("{}{WIDGETS}?limit=1", server.url),
            "application/json",
        );
        assert_eq!(status, 200);
        let list: Value = serde_json::from_str(&body).expect("a list");
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .expect("resourceVersion")
            .to_string();
        let url = format!(
            "{}{WIDGETS}?watch=true&resourceVersion={rv}&timeoutSeconds=60",
            server.url
        );
        let response = client.get(&url).call().expect("a watch starts");
        let prefix = format!("w-watch{}-r{run}-", pause.as_millis());
        let (sent, received) = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                let mut received = HashMap::new();
                let reader = BufReader::new(response.into_body().into_reader());
                for line in reader.lines() {
                    let Ok(line) = line else { break };
                    let now = Instant::now();
                    let Ok(event) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if event["type"] != "ADDED" {
                        continue;
                    }
                    if let Some(name) = event["object"]["metadata"]["name"].as_str() {
                        if name.starts_with(&prefix) {
                            received.insert(name.to_string(), now);
                        }
                    }
                    if received.len() == watched {
                        break;
                    }
                }
                received
            });
            let writer = agent();
            let sent: Vec<(String, Instant, Instant)> = (0..watched)
                .map(|i| {
                    let name = format!("{prefix}{i}");
                    std::thread::sleep(pause);
                    let t = Instant::now();
                    create(&writer, server, &name);
                    (name, t, Instant::now())
                })
                .collect();
            (sent, watcher.join().expect("watch thread"))
        });
        assert_eq!(received.len(), watched, "the watch missed events");
        let ms = |a: Instant, b: Instant| {
            if b >= a {
                b.duration_since(a).as_secs_f64() * 1e3
            } else {
                -(a.duration_since(b).as_secs_f64() * 1e3)
            }
        };
        let mut from_response: Vec<f64> = sent
            .iter()
            .map(|(n, _, done)| ms(*done, received[n]))
            .collect();
        let mut from_request: Vec<f64> = sent
            .iter()
            .map(|(n, start, _)| ms(*start, received[n]))
            .collect();
        from_response.sort_by(f64::total_cmp);
        from_request.sort_by(f64::total_cmp);
        vec![
            median(&from_response),
            quantile(&from_response, 0.99),
            median(&from_request),
            quantile(&from_request, 0.99),
        ]
    });
    let how = if pause.is_zero() {
        format!("{watched} creates back to back")
    } else {
        format!("{watched} creates {} ms apart", pause.as_millis())
    };
    let figures = [
        format!("watch delivery ({how}), create response → event: p50"),
        format!("watch delivery ({how}), create response → event: p99"),
        format!("watch delivery ({how}), create request → event: p50"),
        format!("watch delivery ({how}), create request → event: p99"),
    ];
    let figures: Vec<(&str, &'static str)> = figures.iter().map(|f| (f.as_str(), "ms")).collect();
    report.add(backend, &figures, &samples);
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let settings = if bench {
        Settings::full()
    } else {
        Settings::smoke()
    };
    let start = Instant::now();
    let mut report = Report::default();
    bench_server(&settings, &mut report, "embedded", None);
    #[cfg(feature = "etcd")]
    {
        let etcd = kapi_testing::EtcdProcess::start();
        bench_server(&settings, &mut report, "etcd", Some(&etcd.endpoint()));
    }
    report.print(settings.runs);
    eprintln!("API benchmarks took {:.0?}", start.elapsed());
}
