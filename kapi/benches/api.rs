//! API benchmarks: the `kapi` binary cargo builds with this benchmark (release, for
//! `cargo bench`), started on a loopback port and driven over HTTP/1.1 by blocking
//! client threads, each with its own keep-alive connection.
//!
//! - `cargo bench -p kapi --bench api`: the embedded store;
//! - `cargo bench -p kapi --bench api --features etcd`: also etcd, a real one
//!   that [`kapi_testing::EtcdProcess`] starts on loopback ports.
//!
//! Measured per backend: create throughput (POST widgets, 1 and 32 clients), GET by
//! name, LIST of 1000 widgets (JSON from the store, JSON with `resourceVersion=0` from
//! the watch cache, and Table), watch delivery latency (from a create's response to its
//! ADDED event on another connection, for creates back to back and 50 ms apart) and, on
//! a fresh server, the resident memory (`VmRSS`) before and after loading 10 000
//! widgets. Then, on another fresh server, the compiled `Widget` against the same CRD
//! (`schemas/widget.yaml`) created at run time under the group `runtime.kapi.dev`,
//! served by the generic `SchemaStrategy`: create throughput, GET by name and LIST,
//! both resources measured in every run, so that both see the same machine load, with
//! the ratio run-time/compiled of each run. Each figure is the median of
//! `KAPI_BENCH_RUNS` runs (default 5) after one
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

/// A resource served with the `Widget` schema: where its objects live, and the
/// `apiVersion` their bodies carry.
#[derive(Clone, Copy)]
struct Widgets {
    path: &'static str,
    api_version: &'static str,
}

/// The compiled example resource (typed strategy).
const COMPILED: Widgets = Widgets {
    path: "/apis/example.kapi.dev/v1/namespaces/default/widgets",
    api_version: "example.kapi.dev/v1",
};

/// The same CRD under another group, created at run time (`SchemaStrategy`).
const RUNTIME: Widgets = Widgets {
    path: "/apis/runtime.kapi.dev/v1/namespaces/default/widgets",
    api_version: "runtime.kapi.dev/v1",
};

/// Where widgets live.
const WIDGETS: &str = COMPILED.path;

/// Where CustomResourceDefinitions live.
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// Bound on a created CRD becoming `Established`.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

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

fn widget(api_version: &str, name: &str) -> String {
    format!(
        r#"{{"apiVersion":"{api_version}","kind":"Widget","metadata":{{"name":"{name}"}},"spec":{{"color":"red"}}}}"#
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
            // Plain HTTP on loopback: the figures are the server's, without TLS (BENCHMARKS.md).
            .arg("--insecure-http")
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

/// POSTs the JSON `body` to `path`; panics unless the server answers 201.
fn post(agent: &ureq::Agent, server: &Server, path: &str, body: &str) {
    let response = agent
        .post(&format!("{}{path}", server.url))
        .header("content-type", "application/json")
        .send(body.as_bytes())
        .expect("POST");
    let status = response.status().as_u16();
    let answer = response.into_body().read_to_string().unwrap_or_default();
    assert_eq!(status, 201, "POST {path}: {answer}");
}

/// Creates the widget `name` of `widgets`; panics unless the server answers 201.
fn create(agent: &ureq::Agent, server: &Server, widgets: Widgets, name: &str) {
    post(
        agent,
        server,
        widgets.path,
        &widget(widgets.api_version, name),
    );
}

/// Creates `count` widgets `w-0`, `w-1`, ... of `widgets` from 32 clients; the time it
/// took.
fn load(server: &Server, widgets: Widgets, count: usize) -> Duration {
    drive(32, count, |agent, i| {
        create(agent, server, widgets, &format!("w-{i}"))
    })
    .0
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
    load(&server, COMPILED, settings.listed);
    bench_lists(settings, report, backend, &server);
    bench_gets(settings, report, backend, &server);

    for (clients, total) in [(1, settings.creates.0), (32, settings.creates.1)] {
        let samples = measure(settings, |run| {
            creates_run(&server, COMPILED, clients, total, run)
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
    let elapsed = load(&server, COMPILED, loaded);
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
    drop(server);

    // The compiled resource against the same CRD created at run time, on a fresh server
    // (on etcd: under another key prefix).
    let server = Server::start(etcd, "/registry-crd");
    bench_compiled_vs_crd(settings, report, backend, &server);
}

/// The compiled `Widget` (typed strategy) against the same CRD created at run time
/// under another group (`SchemaStrategy`): LIST of the `listed` widgets (JSON), GET by
/// name and creates, 32 clients. In each run both are measured, one after the other
/// (which goes first alternates between runs), so that both see the same load; each
/// run also gives the ratio run-time/compiled, whose median is reported.
fn bench_compiled_vs_crd(
    settings: &Settings,
    report: &mut Report,
    backend: &'static str,
    server: &Server,
) {
    create_runtime_crd(server);
    for widgets in [COMPILED, RUNTIME] {
        load(server, widgets, settings.listed);
    }
    let listed = settings.listed;
    let agent = agent();
    let lists = compare(settings, |widgets, _| {
        let url = format!("{}{}", server.url, widgets.path);
        lists_run(settings, &agent, &url, "application/json").0
    });
    let what = format!("LIST {listed} widgets, JSON");
    report_comparison(report, backend, &what, "ms", &lists);
    let gets = settings.gets.1;
    let samples = compare(settings, |widgets, run| {
        gets_run(settings, server, widgets, 32, gets, run)[0]
    });
    let what = format!("GET by name, 32 clients ({gets} per run)");
    report_comparison(report, backend, &what, "gets/s", &samples);
    let creates = settings.creates.1;
    let samples = compare(settings, |widgets, run| {
        creates_run(server, widgets, 32, creates, run)[0]
    });
    let what = format!("POST, 32 clients ({creates} per run)");
    report_comparison(report, backend, &what, "creates/s", &samples);
}

/// Runs `op` on the compiled widgets and on the run-time ones in every run (the order
/// alternating between runs); each run's figures: compiled, run-time, and the ratio
/// run-time/compiled.
fn compare(settings: &Settings, mut op: impl FnMut(Widgets, usize) -> f64) -> Vec<Vec<f64>> {
    measure(settings, |run| {
        let (compiled, runtime) = if run % 2 == 0 {
            let compiled = op(COMPILED, run);
            (compiled, op(RUNTIME, run))
        } else {
            let runtime = op(RUNTIME, run);
            (op(COMPILED, run), runtime)
        };
        vec![compiled, runtime, runtime / compiled]
    })
}

/// The three rows of one comparison.
fn report_comparison(
    report: &mut Report,
    backend: &'static str,
    what: &str,
    unit: &'static str,
    samples: &[Vec<f64>],
) {
    let compiled = format!("compiled vs CRD: {what}, compiled");
    let runtime = format!("compiled vs CRD: {what}, run-time CRD");
    let ratio = format!("compiled vs CRD: {what}, ratio run-time/compiled");
    report.add(
        backend,
        &[(&compiled, unit), (&runtime, unit), (&ratio, "×")],
        samples,
    );
}

/// Creates `schemas/widget.yaml` under the group `runtime.kapi.dev` through the API and
/// waits until it is `Established`.
fn create_runtime_crd(server: &Server) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas/widget.yaml");
    let mut crd = kapi_testing::yaml_documents(&file)
        .into_iter()
        .next()
        .expect("schemas/widget.yaml holds a CRD");
    crd["spec"]["group"] = "runtime.kapi.dev".into();
    crd["metadata"]["name"] = "widgets.runtime.kapi.dev".into();
    let agent = agent();
    post(&agent, server, CRDS, &crd.to_string());
    let url = format!("{}{CRDS}/widgets.runtime.kapi.dev", server.url);
    let deadline = Instant::now() + ESTABLISH_TIMEOUT;
    loop {
        let (status, body) = get(&agent, &url, "application/json");
        let crd: Value = serde_json::from_str(&body).unwrap_or_default();
        let established = crd["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if established {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "the CRD widgets.runtime.kapi.dev was not Established within \
                 {ESTABLISH_TIMEOUT:?}; last GET answered {status}: {body}\n{}",
                server.log_text()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
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
            let (ms, bytes) = lists_run(settings, &agent, &url, accept);
            size = bytes;
            vec![ms]
        });
        let what = format!("LIST {listed} widgets, {label} ({} KiB)", size / 1024);
        report.add(backend, &[(&what, "ms")], &samples);
    }
}

/// One run of `settings.lists` LISTs of `url`, each expected to hold the `listed`
/// widgets: the median time in ms, and the size of a response.
fn lists_run(settings: &Settings, agent: &ureq::Agent, url: &str, accept: &str) -> (f64, usize) {
    let mut times = Vec::with_capacity(settings.lists);
    let mut last = String::new();
    for _ in 0..settings.lists {
        let t = Instant::now();
        let (status, body) = get(agent, url, accept);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(status, 200, "{body}");
        last = body;
    }
    let body: Value = serde_json::from_str(&last).expect("JSON");
    let count = body["items"]
        .as_array()
        .or_else(|| body["rows"].as_array())
        .map_or(0, Vec::len);
    assert_eq!(count, settings.listed, "LIST {url} as {accept}");
    times.sort_by(f64::total_cmp);
    (median(&times), last.len())
}

/// One run of `total` creates of `widgets` from `clients` clients: creates/s, and the
/// latency p50 and p99 in ms.
fn creates_run(
    server: &Server,
    widgets: Widgets,
    clients: usize,
    total: usize,
    run: usize,
) -> Vec<f64> {
    let (elapsed, latencies) = drive(clients, total, |agent, i| {
        create(agent, server, widgets, &format!("w-c{clients}-r{run}-{i}"));
    });
    rate_and_latencies(total, elapsed, &latencies)
}

/// One run of `total` GETs by name among the `listed` widgets of `widgets` from
/// `clients` clients: gets/s, and the latency p50 and p99 in ms.
fn gets_run(
    settings: &Settings,
    server: &Server,
    widgets: Widgets,
    clients: usize,
    total: usize,
    run: usize,
) -> Vec<f64> {
    let listed = settings.listed;
    let (elapsed, latencies) = drive(clients, total, |agent, i| {
        let name = (i * 7919 + run * 31) % listed;
        let url = format!("{}{}/w-{name}", server.url, widgets.path);
        let (status, _) = get(agent, &url, "application/json");
        assert_eq!(status, 200);
    });
    rate_and_latencies(total, elapsed, &latencies)
}

/// Operations per second, and the p50 and p99 of the sorted `latencies`.
fn rate_and_latencies(total: usize, elapsed: Duration, latencies: &[f64]) -> Vec<f64> {
    vec![
        total as f64 / elapsed.as_secs_f64(),
        median(latencies),
        quantile(latencies, 0.99),
    ]
}

/// GET by name of the listed widgets, 1 client (latency) and 32 (throughput).
fn bench_gets(settings: &Settings, report: &mut Report, backend: &'static str, server: &Server) {
    for (clients, total) in [(1, settings.gets.0), (32, settings.gets.1)] {
        let samples = measure(settings, |run| {
            gets_run(settings, server, COMPILED, clients, total, run)
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
                    create(&writer, server, COMPILED, &name);
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
