//! `kapi-bench aggregation`: what the aggregator's proxy costs. Two `kapi serve`
//! processes over HTTPS, as users run them: B serves `wardle.example.com` (from a CRD)
//! and trusts A's front-proxy CA; A registers B as an APIService. The same cells then
//! run against B directly and through A, alternating, in one run: GET with
//! `resourceVersion=0`, a LIST of every flunder, and watch delivery (W watchers of
//! the flunders while one writer updates them in B as fast as B takes it). The
//! figures that count are the ratios, proxied to direct.
//!
//! The cells run in two placements ([`Placement`]). Shared: every process may use
//! every CPU, so A's work in the proxied cells comes out of the CPU B and the load
//! generator had in the direct ones; the ratio is what a user with one machine sees,
//! and it is bounded near B / (A + B) per request. Split: A runs on CPUs of its own
//! while B and the load generator share the rest, in the direct and the proxied cells
//! alike, as in a cluster where the aggregator (kube-apiserver) and the extension
//! server run in pods of their own; the ratio is what the proxy costs B's clients.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

use crate::https::{Cell, Client, Server, median, p99, requests};
use crate::placement::Cpus;

const GROUP_VERSION: &str = "/apis/wardle.example.com/v1alpha1";
const FLUNDERS: &str = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders";

/// What a run measures.
#[derive(Clone, Debug)]
pub struct AggregationConfig {
    /// The kapi binary.
    pub kapi: PathBuf,
    /// Concurrent clients of the GET and LIST cells (one shared HTTP/2 connection).
    pub clients: usize,
    /// How long each cell runs.
    pub duration: Duration,
    /// Flunders in the listed namespace.
    pub objects: usize,
    /// Watchers of the watch cell.
    pub watchers: usize,
    /// Rounds of every cell per target.
    pub rounds: usize,
    /// Where the processes run; the cells run once per placement.
    pub placements: Vec<Placement>,
}

/// Where the servers and the load generator run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Placement {
    /// Every process on every CPU.
    Shared,
    /// A on the upper half of the CPUs; B and the load generator on the rest.
    Split,
}

impl Placement {
    /// A's CPUs and the CPUs of B and the load generator, out of `all`.
    fn cpus(self, all: &Cpus) -> Result<(Cpus, Cpus), String> {
        match self {
            Placement::Shared => Ok((all.clone(), all.clone())),
            Placement::Split => all
                .split()
                .ok_or_else(|| "the split placement needs two CPUs or more".to_string()),
        }
    }
}

/// One row: a cell, direct and through the proxy (each the median of its rounds).
#[derive(Clone, Debug)]
pub struct Row {
    /// Where the processes ran.
    pub placement: String,
    /// The cell's name.
    pub cell: String,
    /// Straight to B.
    pub direct: Cell,
    /// Through A.
    pub proxied: Cell,
}

/// `watchers` watches of the flunders through `watch_client` while `writer` (on B)
/// updates one flunder as fast as it can for `duration`: events delivered per second
/// over all watchers, and the p99 from a write's answer to each watcher's event.
async fn watch_cell(
    watch_client: &Client,
    writer: &Client,
    watchers: usize,
    duration: Duration,
) -> Cell {
    let written: Arc<std::sync::Mutex<Vec<Instant>>> = Arc::default();
    let delivered = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let (_, current) = writer
        .send(Method::GET, &format!("{FLUNDERS}/w"), None)
        .await
        .unwrap_or_default();
    let rv: Value = serde_json::from_slice(&current).unwrap_or_default();
    let rv = rv["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();
    let mut tasks = Vec::new();
    for _ in 0..watchers {
        let (client, written, delivered, done) = (
            watch_client.clone(),
            written.clone(),
            delivered.clone(),
            done.clone(),
        );
        let path =
            format!("{FLUNDERS}?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3Dw");
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let req = Request::get(format!("https://{}{path}", client.authority))
                .header(header::ACCEPT, "application/json")
                .body(Full::new(Bytes::new()));
            let Ok(req) = req else { return latencies };
            let mut sender = client.sender.clone();
            if sender.ready().await.is_err() {
                return latencies;
            }
            let Ok(res) = sender.send_request(req).await else {
                return latencies;
            };
            let mut body = res.into_body();
            let mut seen = 0usize;
            while !done.load(Ordering::Relaxed) {
                let frame =
                    match tokio::time::timeout(Duration::from_millis(200), body.frame()).await {
                        Err(_) => continue,
                        Ok(Some(Ok(frame))) => frame,
                        // The watch ended or broke: what it delivered counts, the rest is
                        // counted missing.
                        Ok(_) => break,
                    };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let now = Instant::now();
                for _ in data.iter().filter(|b| **b == b'\n') {
                    let at = written.lock().map(|w| w.get(seen).copied()).unwrap_or(None);
                    if let Some(at) = at {
                        latencies.push(now.saturating_duration_since(at).as_secs_f64() * 1e3);
                    }
                    seen += 1;
                    delivered.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }));
    }
    // Every watcher is open before the first write.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stop = Instant::now() + duration;
    let mut i = 0u64;
    while Instant::now() < stop {
        i += 1;
        let patch = json!({"spec": {"reference": format!("r{i}")}});
        let req = Request::builder()
            .method(Method::PATCH)
            .uri(format!("https://{}{FLUNDERS}/w", writer.authority))
            .header(header::CONTENT_TYPE, "application/merge-patch+json")
            .body(Full::new(Bytes::from(patch.to_string())));
        let Ok(req) = req else { break };
        let mut sender = writer.sender.clone();
        if sender.ready().await.is_err() {
            break;
        }
        // The write's time is when its answer came; the event cannot leave before.
        let answered = sender.send_request(req).await;
        if let Ok(res) = answered {
            let _ = res.into_body().collect().await;
            if let Ok(mut w) = written.lock() {
                w.push(Instant::now());
            }
        }
    }
    // The last events get a second to arrive.
    tokio::time::sleep(Duration::from_secs(1)).await;
    done.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap_or_default());
    }
    let expected = written.lock().map(|w| w.len()).unwrap_or(0) * watchers;
    let got = delivered.load(Ordering::Relaxed);
    Cell {
        per_second: got as f64 / duration.as_secs_f64(),
        p99_ms: p99(all),
        errors: (expected as u64).saturating_sub(got),
        cpu_us: 0.0,
    }
}

/// A and B started on their CPUs, B's group registered in A and available; the
/// clients of each.
async fn set_up(
    config: &AggregationConfig,
    a_cpus: &Cpus,
    b_cpus: &Cpus,
) -> Result<(Server, Server, Client, Client), String> {
    let a = Server::start(&config.kapi, &[], a_cpus)?;
    let b = Server::start(
        &config.kapi,
        &[
            "--requestheader-client-ca-file".into(),
            a.path("pki/front-proxy-ca.crt").into(),
            "--requestheader-allowed-names".into(),
            "front-proxy-client".into(),
            "--tls-san".into(),
            "kapi-b.default.svc".into(),
        ],
        b_cpus,
    )?;
    let (ca, cb) = (Client::connect(&a).await?, Client::connect(&b).await?);
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "flunders.wardle.example.com"},
        "spec": {"group": "wardle.example.com", "scope": "Namespaced",
            "names": {"plural": "flunders", "singular": "flunder", "kind": "Flunder"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    cb.expect(
        Method::POST,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        Some(&crd),
        &[201],
    )
    .await?;
    cb.wait(GROUP_VERSION, "B serves flunders", |_| true)
        .await?;
    // About 1 KiB each, as the other benchmarks' objects.
    let filler = "x".repeat(900);
    for i in 0..config.objects {
        let name = if i == 0 {
            "w".to_string()
        } else {
            format!("f{i}")
        };
        let flunder = json!({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
            "metadata": {"name": name}, "spec": {"reference": "r0", "filler": filler}});
        cb.expect(Method::POST, FLUNDERS, Some(&flunder), &[201])
            .await?;
    }
    let port = b.addr.port();
    ca.expect(
        Method::POST,
        "/api/v1/namespaces/default/services",
        Some(&json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "kapi-b"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}})),
        &[201],
    )
    .await?;
    ca.expect(Method::POST, "/api/v1/namespaces/default/endpoints", Some(&json!({
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "kapi-b"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}]})), &[201]).await?;
    let bundle = base64::engine::general_purpose::STANDARD.encode(&b.ca);
    ca.expect(
        Method::POST,
        "/apis/apiregistration.k8s.io/v1/apiservices",
        Some(&json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1alpha1.wardle.example.com"},
        "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000,
                 "versionPriority": 15, "caBundle": bundle,
                 "service": {"namespace": "default", "name": "kapi-b", "port": 443}}})),
        &[201],
    )
    .await?;
    ca.wait(GROUP_VERSION, "B's group through A", |v| {
        v["resources"].is_array()
    })
    .await?;
    Ok((a, b, ca, cb))
}

/// Runs the cells in each placement, with servers started for it; one row each.
pub async fn run(config: &AggregationConfig) -> Result<Vec<Row>, String> {
    let all = Cpus::allowed()?;
    let mut rows = Vec::new();
    for placement in &config.placements {
        let (a_cpus, b_cpus) = placement.cpus(&all)?;
        let placed = match placement {
            Placement::Shared => format!("shared ({all})"),
            Placement::Split => format!("split (A: {a_cpus}; B, load: {b_cpus})"),
        };
        // The load generator runs beside B.
        b_cpus.pin(None)?;
        let (a, b, via_a, direct) = set_up(config, &a_cpus, &b_cpus).await?;
        let cells = cells(config, &a, &b, &via_a, &direct).await;
        rows.extend(cells.into_iter().map(|(cell, direct, proxied)| Row {
            placement: placed.clone(),
            cell,
            direct,
            proxied,
        }));
    }
    all.pin(None)?;
    Ok(rows)
}

/// Every cell, direct and proxied in alternating rounds: name, direct, proxied.
async fn cells(
    config: &AggregationConfig,
    a: &Server,
    b: &Server,
    via_a: &Client,
    direct: &Client,
) -> Vec<(String, Cell, Cell)> {
    let cpu = |servers: &[&Server]| -> Duration {
        servers
            .iter()
            .filter_map(|s| crate::server::cpu_time(s.child.id()).ok())
            .sum()
    };
    let get = format!("{FLUNDERS}/w?resourceVersion=0");
    let list = format!("{FLUNDERS}?resourceVersion=0");
    let cells: [(&str, usize); 3] = [
        ("GET rv=0", config.clients),
        ("LIST", config.clients.min(4)),
        ("watch", config.watchers),
    ];
    let mut rows = Vec::new();
    for (name, width) in cells {
        let (mut directs, mut proxieds) = (Vec::new(), Vec::new());
        for _ in 0..config.rounds {
            for (proxied, target, out) in
                [(false, direct, &mut directs), (true, via_a, &mut proxieds)]
            {
                let involved: Vec<&Server> = if proxied { vec![a, b] } else { vec![b] };
                let before = cpu(&involved);
                let cell = match name {
                    "GET rv=0" => requests(target, &get, width, config.duration).await,
                    "LIST" => requests(target, &list, width, config.duration).await,
                    _ => watch_cell(target, direct, width, config.duration).await,
                };
                out.push(cell.costing(cpu(&involved) - before, config.duration));
            }
        }
        rows.push((
            format!("{name} (C = {width})"),
            median(directs),
            median(proxieds),
        ));
    }
    rows
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| placement | cell | direct to B /s | through A /s | ratio | direct p99 ms | through A p99 ms | CPU µs/op: B | CPU µs/op: A + B | errors |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let ratio = if r.direct.per_second > 0.0 {
            r.proxied.per_second / r.direct.per_second
        } else {
            0.0
        };
        out.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} | {:.0} | {:.0} | {} |\n",
            r.placement,
            r.cell,
            r.direct.per_second,
            r.proxied.per_second,
            ratio,
            r.direct.p99_ms,
            r.proxied.p99_ms,
            r.direct.cpu_us,
            r.proxied.cpu_us,
            r.direct.errors + r.proxied.errors
        ));
    }
    out
}
