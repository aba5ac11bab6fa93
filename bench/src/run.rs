//! The matrix: which cells a run measures and in what order, on one etcd started for
//! the run.
//!
//! 1. The storage limits: raw etcd's operations and watch fan-out (with the `etcd`
//!    feature), and the embedded store's own API.
//! 2. For each backend, one `kapi serve`: lists pre-loaded (their bodies kept for the
//!    bare server and the serialisation reference), every single-object operation
//!    over both transports at every client count, each list size at its own client
//!    counts, and the watch fan-outs; then, on a fresh kapi, memory and restart.
//! 3. The wire formats (issue #18): ConfigMaps created, read, listed and watched in
//!    JSON and in protobuf on a kapi of their own, each cell in both formats back to
//!    back.
//! 4. The bare hyper server: a 1 KiB GET, and GETs of copies of kapi's list bodies at
//!    the list sizes' client counts.
//!
//! The order does not matter to the ratios (each is computed at report time between
//! cells of the same run); it lets the bare server answer kapi's own list bytes.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;

use crate::client::Transport;
use crate::driver::{self, Load, Worker};
use crate::fanout::FanOut;
use crate::memory;
use crate::reference;
use crate::report::{Cell, FanOutRow, Limit, Results, Row, System, WireFanOut, WireRow};
use crate::server::{self, KapiProcess};
use crate::stats::Recorder;
use crate::targets::kapi_http::{KapiHttp, Loader, Operation};
use crate::targets::watch;
use crate::targets::wire::{self, Encoding, Wire};

mod limits;

#[cfg(feature = "etcd")]
use limits::raw_etcd;
use limits::{baseline, kapi_limit, raw_store};

/// The storage kapi runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Backend {
    /// The embedded store (redb) in a temporary data directory.
    Embedded,
    /// A real etcd started on loopback ports for the run (needs the `etcd` feature,
    /// and a kapi built with its own `etcd` feature).
    Etcd,
}

impl Backend {
    /// The backends this build can run kapi on.
    pub fn available() -> Vec<Backend> {
        if cfg!(feature = "etcd") {
            vec![Backend::Embedded, Backend::Etcd]
        } else {
            vec![Backend::Embedded]
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Embedded => "embedded",
            Backend::Etcd => "etcd",
        })
    }
}

/// One list size and the client counts it is read at (large lists at high
/// concurrency would take longer than a cell to answer once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListPlan {
    /// Objects in the list.
    pub objects: usize,
    /// Client counts.
    pub clients: Vec<usize>,
    /// The measured time of its cells, when not the run's (a few lists of 10,000 take
    /// a second; their median needs more of them).
    pub duration: Option<Duration>,
}

/// The wire formats' comparison (issue #18): ConfigMaps in JSON and in protobuf on a
/// kapi of its own, over HTTP/2 (what kubectl and client-go speak). Each cell runs in
/// rounds that alternate the formats (JSON then protobuf, protobuf then JSON, …), and
/// each format's rounds are merged, so drift on a shared machine falls on both alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WirePlan {
    /// The backend that kapi runs on.
    pub backend: Backend,
    /// Rounds per cell and format.
    pub rounds: usize,
    /// How each round is driven (a list's own duration, if it has one, replaces
    /// this one's).
    pub load: Load,
    /// The client counts of create and get.
    pub clients: Vec<usize>,
    /// The list sizes.
    pub lists: Vec<ListPlan>,
    /// Watcher counts of its fan-outs.
    pub watchers: Vec<usize>,
}

/// What one run measures.
#[derive(Clone, Debug)]
pub struct Config {
    /// The `kapi` binary.
    pub kapi: PathBuf,
    /// The backends kapi runs on, one after the other.
    pub backends: Vec<Backend>,
    /// The client counts of the single-object operations, each a row.
    pub clients: Vec<usize>,
    /// Single-object operations measured over HTTP/1.1 only (the others run over both
    /// transports).
    pub http1_only: Vec<Operation>,
    /// Warm-up, duration and per-call timeout of each cell.
    pub load: Load,
    /// The list sizes.
    pub lists: Vec<ListPlan>,
    /// Watcher counts of the watch fan-outs, each a row.
    pub watchers: Vec<usize>,
    /// Writes per second of the fan-out's writer.
    pub watch_rate: u32,
    /// How long the fan-out's writer writes.
    pub watch_duration: Duration,
    /// How long watchers may lag behind the last write before their missing events
    /// count as missed.
    pub watch_drain: Duration,
    /// Watches opened at once.
    pub watch_open_concurrency: usize,
    /// Whether raw etcd is measured too (only with the `etcd` feature).
    pub etcd_limits: bool,
    /// Whether the embedded store's own API is measured.
    pub store_limits: bool,
    /// Whether the bare hyper server is measured.
    pub baseline: bool,
    /// Objects the memory measurement loads (`None`: no memory measurement).
    pub memory_objects: Option<usize>,
    /// How kapi is filled (lists, memory).
    pub loader: Loader,
    /// Serialisations the serialisation reference is the median of.
    pub serialization_runs: usize,
    /// Whether kapi's own matrix (every operation on widgets, the fan-outs, memory)
    /// is measured on the backends.
    pub kapi_matrix: bool,
    /// The wire formats' comparison, if measured.
    pub wire: Option<WirePlan>,
    /// More `kapi serve` flags for every kapi of the matrix (`--kapi-arg`).
    pub kapi_args: Vec<String>,
    /// The single-object operations measured, when not all of them (`--only`); the
    /// limits measured are then those these compare with.
    pub only: Option<Vec<Operation>>,
    /// The `kapi-bench` binary that runs the bare hyper server's process
    /// ([`Baseline::start`]): this executable, unless a test names the built one.
    pub bench: PathBuf,
}

impl Config {
    /// The matrix, sized to finish in under 10 minutes on two cores: 1, 16 and
    /// 64 clients, 1.5 s per cell after 0.5 s of warm-up, patch and delete over
    /// HTTP/1.1 only; lists of 100 (1, 16, 64 clients), 1,000 (1, 16) and 10,000 (1,
    /// 3 s); 100 and 10,000 watchers at 100 writes/s for 2 s, 10 s to drain; 100,000
    /// objects for memory and restart; every backend this build has.
    pub fn full(kapi: PathBuf) -> Self {
        Self {
            kapi,
            backends: Backend::available(),
            clients: vec![1, 16, 64],
            // Writes are bound by the storage, not the transport; the targets'
            // writes (create, update) and every read still run over both.
            http1_only: vec![Operation::Patch, Operation::Delete],
            load: Load {
                warmup: Duration::from_millis(500),
                duration: Duration::from_millis(1500),
                timeout: Duration::from_secs(10),
            },
            lists: vec![
                ListPlan {
                    objects: 100,
                    clients: vec![1, 16, 64],
                    duration: None,
                },
                ListPlan {
                    objects: 1000,
                    clients: vec![1, 16],
                    duration: None,
                },
                ListPlan {
                    objects: 10_000,
                    clients: vec![1],
                    duration: Some(Duration::from_secs(3)),
                },
            ],
            watchers: vec![100, 10_000],
            watch_rate: 100,
            watch_duration: Duration::from_secs(2),
            watch_drain: Duration::from_secs(10),
            watch_open_concurrency: 64,
            etcd_limits: cfg!(feature = "etcd"),
            store_limits: true,
            baseline: true,
            memory_objects: Some(100_000),
            loader: Loader {
                clients: 64,
                transport: Transport::Http2,
            },
            serialization_runs: 20,
            kapi_matrix: true,
            kapi_args: Vec::new(),
            only: None,
            bench: crate::targets::baseline::this_executable(),
            // Eight short rounds a format: the two formats cost the same to within a
            // few per cent, and drift on two shared cores moves a cell by more (two
            // columns doing the same work measured 1.21-1.47x apart in four rounds of
            // a second); more, shorter rounds spread it over both formats alike.
            wire: Some(WirePlan {
                backend: Backend::Embedded,
                rounds: 8,
                load: Load {
                    warmup: Duration::from_millis(250),
                    duration: Duration::from_millis(500),
                    timeout: Duration::from_secs(10),
                },
                clients: vec![1, 16],
                lists: vec![
                    ListPlan {
                        objects: 1000,
                        clients: vec![1, 16],
                        duration: None,
                    },
                    ListPlan {
                        objects: 10_000,
                        clients: vec![1],
                        duration: Some(Duration::from_secs(1)),
                    },
                ],
                watchers: vec![1000],
            }),
        }
    }

    /// Only this configuration's wire formats' comparison: no limits, no widgets.
    pub fn wire_only(self) -> Self {
        Self {
            etcd_limits: false,
            store_limits: false,
            baseline: false,
            memory_objects: None,
            kapi_matrix: false,
            kapi_args: Vec::new(),
            ..self
        }
    }

    /// A few seconds with tiny sizes, to show that every path runs: 2 clients,
    /// 300 ms per cell, lists of 5 and 20, 3 watchers, 1,000 objects for memory and
    /// restart. Its figures mean nothing.
    pub fn smoke(kapi: PathBuf) -> Self {
        Self {
            clients: vec![2],
            http1_only: Vec::new(),
            load: Load {
                // Long enough that one slow request (an etcd update has been seen to
                // stall for a few hundred ms under the full suite's load) still leaves
                // completed operations in every cell.
                warmup: Duration::from_millis(200),
                duration: Duration::from_millis(1000),
                timeout: Duration::from_secs(10),
            },
            lists: vec![
                ListPlan {
                    objects: 5,
                    clients: vec![2],
                    duration: None,
                },
                ListPlan {
                    objects: 20,
                    clients: vec![1],
                    duration: None,
                },
            ],
            watchers: vec![3],
            watch_rate: 20,
            watch_duration: Duration::from_millis(300),
            watch_drain: Duration::from_secs(5),
            memory_objects: Some(1000),
            loader: Loader {
                clients: 16,
                transport: Transport::Http2,
            },
            serialization_runs: 3,
            wire: Some(WirePlan {
                backend: Backend::Embedded,
                rounds: 2,
                load: Load {
                    warmup: Duration::from_millis(100),
                    duration: Duration::from_millis(300),
                    timeout: Duration::from_secs(10),
                },
                clients: vec![2],
                lists: vec![ListPlan {
                    objects: 5,
                    clients: vec![1],
                    duration: None,
                }],
                watchers: vec![3],
            }),
            ..Self::full(kapi)
        }
    }

    /// The single-object operations measured.
    fn operations(&self) -> Vec<Operation> {
        Operation::SINGLE
            .into_iter()
            .filter(|op| self.only.as_ref().is_none_or(|only| only.contains(op)))
            .collect()
    }

    /// Whether a cell of `limit` is measured: always, unless `--only` chose operations
    /// that no cell compares with it (lists compare with their limits whenever listed).
    fn wants_limit(&self, limit: Limit) -> bool {
        let Some(only) = &self.only else {
            return true;
        };
        let listed = self.lists.iter().any(|plan| {
            matches!(limit, Limit::BaselineList(_, n) | Limit::EtcdRangePrefix(n)
                | Limit::StoreList(n) if n == plan.objects)
        });
        listed
            || only.iter().any(|&op| {
                Backend::available().into_iter().any(|backend| {
                    Transport::ALL
                        .into_iter()
                        .any(|transport| kapi_limit(backend, op, transport) == Some(limit))
                })
            })
    }

    /// The transports `operation` runs over.
    fn transports(&self, operation: Operation) -> Vec<Transport> {
        if self.http1_only.contains(&operation) {
            vec![Transport::Http1]
        } else {
            Transport::ALL.to_vec()
        }
    }

    /// How the cells of `plan` are driven.
    fn list_load(&self, plan: &ListPlan) -> Load {
        Load {
            duration: plan.duration.unwrap_or(self.load.duration),
            ..self.load
        }
    }

    fn list_sizes(&self) -> Vec<usize> {
        self.lists.iter().map(|l| l.objects).collect()
    }

    fn fan_out(&self, watchers: usize) -> FanOut {
        FanOut {
            watchers,
            rate: self.watch_rate,
            duration: self.watch_duration,
            drain: self.watch_drain,
            open_concurrency: self.watch_open_concurrency,
        }
    }
}

/// Runs everything `config` asks for, reporting progress on stderr.
pub async fn run(config: &Config) -> Result<Results, String> {
    let mut results = Results::default();
    let etcd = start_etcd(config).await?;
    let endpoint = etcd_endpoint(etcd.as_ref());

    #[cfg(feature = "etcd")]
    if config.etcd_limits {
        let endpoint = endpoint.as_deref().ok_or("the etcd limits without etcd")?;
        raw_etcd(config, endpoint, &mut results).await?;
    }
    if config.store_limits {
        raw_store(config, &mut results).await?;
    }

    let mut list_bodies: Vec<(usize, Bytes)> = Vec::new();
    let backends = if config.kapi_matrix {
        config.backends.as_slice()
    } else {
        &[]
    };
    for &backend in backends {
        let endpoint = endpoint.as_deref().filter(|_| backend == Backend::Etcd);
        if backend == Backend::Etcd && endpoint.is_none() {
            return Err(
                "kapi-bench was built without the `etcd` feature: rebuild with `--features etcd`"
                    .to_string(),
            );
        }
        let bodies = kapi_matrix(config, backend, endpoint, &mut results).await?;
        if list_bodies.is_empty() {
            list_bodies = bodies;
        }
        if let Some(objects) = config.memory_objects {
            eprintln!("kapi ({backend}): loading {objects} objects for the memory measurement");
            let row =
                memory::measure(&config.kapi, backend, endpoint, objects, config.loader).await?;
            eprintln!("{}", row.progress_line());
            results.memory.push(row);
        }
    }

    if let Some(plan) = &config.wire {
        let endpoint = endpoint
            .as_deref()
            .filter(|_| plan.backend == Backend::Etcd);
        if plan.backend == Backend::Etcd && endpoint.is_none() {
            return Err("the wire formats on etcd need the `etcd` feature".to_string());
        }
        wire_formats(config, plan, endpoint, &mut results).await?;
    }
    if config.baseline {
        baseline(config, list_bodies, &mut results).await?;
    }
    // etcd stops (dropped here) after every kapi that used it.
    Ok(results)
}

/// kapi on `backend`: every operation, the fan-outs and the serialisation
/// reference; the bodies of its lists.
async fn kapi_matrix(
    config: &Config,
    backend: Backend,
    etcd_endpoint: Option<&str>,
    results: &mut Results,
) -> Result<Vec<(usize, Bytes)>, String> {
    let storage = server::Storage {
        etcd_endpoint: etcd_endpoint.map(str::to_string),
        prefix: None,
        flags: config.kapi_args.clone(),
    };
    let kapi = KapiProcess::start(&config.kapi, storage).await?;
    let target = KapiHttp::new(kapi.addr());
    eprintln!(
        "kapi ({backend}): pre-loading lists of {:?}",
        config.list_sizes()
    );
    target
        .preload_lists(&config.list_sizes(), config.loader)
        .await?;
    let mut bodies = Vec::new();
    for objects in config.list_sizes() {
        bodies.push((objects, target.list_body(objects).await?));
    }
    if let Some((objects, body)) = bodies.iter().max_by_key(|(objects, _)| *objects) {
        let measured =
            reference::measure(body.clone(), *objects, config.serialization_runs).await?;
        eprintln!(
            "serde_json::to_vec of kapi's list of {objects} ({} bytes): median {:?} of {}",
            measured.bytes, measured.median, measured.runs
        );
        results.serialization.push((backend, measured));
    }

    let system = System::Kapi(backend);
    let mut cells: Vec<(Operation, Transport, usize, Load)> = Vec::new();
    for operation in config.operations() {
        for transport in config.transports(operation) {
            for &clients in &config.clients {
                cells.push((operation, transport, clients, config.load));
            }
        }
    }
    for plan in &config.lists {
        for transport in Transport::ALL {
            for &clients in &plan.clients {
                let operation = Operation::List(plan.objects);
                cells.push((operation, transport, clients, config.list_load(plan)));
            }
        }
    }
    for (operation, transport, clients, load) in cells {
        let workers = target.workers(operation, transport, clients).await?;
        let cell = Cell {
            system,
            operation: operation.to_string(),
            kapi: Some(operation),
            transport: transport.to_string(),
            clients,
            compare_with: kapi_limit(backend, operation, transport),
            is_limit: None,
        };
        results.rows.push(measure(load, workers, cell).await);
    }

    for (round, &watchers) in config.watchers.iter().enumerate() {
        let measured = watch::fan_out(kapi.addr(), config.fan_out(watchers), round).await?;
        let row = FanOutRow { system, measured };
        eprintln!("{}", row.progress_line());
        results.fan_outs.push(row);
    }
    let memory = kapi.memory()?;
    eprintln!(
        "kapi ({backend}): RSS {} after the matrix, peak {}",
        crate::report::mib(memory.rss),
        crate::report::mib(memory.peak)
    );
    results.matrix_memory.push((backend, memory));
    if let Some(summary) = kapi.log_summary() {
        eprintln!("kapi ({backend}): {summary}");
    }
    Ok(bodies)
}

/// The wire formats' comparison on a kapi of its own: every cell in JSON, then at once
/// in protobuf, then the fan-outs in each format.
async fn wire_formats(
    config: &Config,
    plan: &WirePlan,
    etcd_endpoint: Option<&str>,
    results: &mut Results,
) -> Result<(), String> {
    let backend = plan.backend;
    let storage = server::Storage {
        etcd_endpoint: etcd_endpoint.map(str::to_string),
        prefix: None,
        flags: config.kapi_args.clone(),
    };
    let kapi = KapiProcess::start(&config.kapi, storage).await?;
    let target = Wire::new(kapi.addr());
    let sizes: Vec<usize> = plan.lists.iter().map(|l| l.objects).collect();
    eprintln!("kapi ({backend}), JSON and protobuf: pre-loading ConfigMap lists of {sizes:?}");
    target.preload_lists(&sizes, config.loader).await?;
    for &objects in &sizes {
        for encoding in Encoding::ALL {
            let bytes = target.list_size(objects, encoding).await?;
            results.wire_sizes.push((objects, encoding, bytes));
        }
    }
    let mut cells: Vec<(wire::Operation, usize, Load)> = Vec::new();
    for operation in [wire::Operation::Create, wire::Operation::GetCached] {
        for &clients in &plan.clients {
            cells.push((operation, clients, plan.load));
        }
    }
    for list in &plan.lists {
        for &clients in &list.clients {
            let operation = wire::Operation::List(list.objects);
            let load = Load {
                duration: list.duration.unwrap_or(plan.load.duration),
                ..plan.load
            };
            cells.push((operation, clients, load));
        }
    }
    let transport = Transport::Http2;
    for (operation, clients, load) in cells {
        // Per format: what the clients saw, for how long, and kapi's CPU time meanwhile.
        let mut merged = [
            (Recorder::new(), Duration::ZERO, Duration::ZERO),
            (Recorder::new(), Duration::ZERO, Duration::ZERO),
        ];
        for round in 0..plan.rounds.max(1) {
            let mut order = Encoding::ALL;
            if round % 2 == 1 {
                order.reverse();
            }
            for encoding in order {
                let workers = target
                    .workers(operation, encoding, transport, clients)
                    .await?;
                let pid = kapi.pid();
                // kapi's CPU clock is read when the warm-up ends and when the cell does.
                let at_start = tokio::spawn(async move {
                    tokio::time::sleep(load.warmup).await;
                    server::cpu_time(pid)
                });
                let measured = driver::drive(load, workers).await;
                let cpu = server::cpu_time(pid)?
                    .saturating_sub(at_start.await.map_err(|e| e.to_string())??);
                let (recorder, elapsed, cpu_total) = &mut merged[encoding as usize];
                recorder.merge(&measured.recorder);
                *elapsed += measured.elapsed;
                *cpu_total += cpu;
            }
        }
        for (encoding, (recorder, elapsed, cpu)) in Encoding::ALL.into_iter().zip(merged) {
            let ops = u32::try_from(recorder.ops()).unwrap_or(u32::MAX);
            let row = WireRow {
                backend,
                operation,
                encoding,
                transport,
                clients,
                summary: recorder.summary(elapsed),
                server_cpu_per_op: (ops > 0).then(|| cpu / ops),
                first_errors: recorder.first_errors().to_vec(),
            };
            eprintln!("{}", row.progress_line());
            results.wire.push(row);
        }
    }
    let mut round = 0;
    for &watchers in &plan.watchers {
        for encoding in Encoding::ALL {
            let measured = target
                .fan_out(config.fan_out(watchers), round, encoding)
                .await?;
            round += 1;
            let row = FanOutRow {
                system: System::Kapi(backend),
                measured,
            };
            eprintln!("{encoding}: {}", row.progress_line());
            results.wire_fan_outs.push(WireFanOut { encoding, row });
        }
    }
    Ok(())
}

/// Drives one cell; one progress line on stderr.
async fn measure(load: Load, workers: Vec<Worker>, cell: Cell) -> Row {
    let measured = driver::drive(load, workers).await;
    let row = Row {
        cell,
        summary: measured.summary(),
        first_errors: measured.recorder.first_errors().to_vec(),
    };
    eprintln!("{}", row.progress_line());
    row
}

#[cfg(feature = "etcd")]
type Etcd = kapi_testing::EtcdProcess;
#[cfg(not(feature = "etcd"))]
type Etcd = std::convert::Infallible;

/// Starts etcd when a backend or the limits need it.
async fn start_etcd(config: &Config) -> Result<Option<Etcd>, String> {
    #[cfg(feature = "etcd")]
    {
        if config.backends.contains(&Backend::Etcd) || config.etcd_limits {
            return tokio::task::spawn_blocking(kapi_testing::EtcdProcess::start)
                .await
                .map(Some)
                .map_err(|e| format!("starting etcd: {e}"));
        }
        Ok(None)
    }
    #[cfg(not(feature = "etcd"))]
    {
        let _ = config;
        Ok(None)
    }
}

/// etcd's client endpoint.
fn etcd_endpoint(etcd: Option<&Etcd>) -> Option<String> {
    #[cfg(feature = "etcd")]
    {
        etcd.map(|e| e.endpoint())
    }
    #[cfg(not(feature = "etcd"))]
    {
        etcd.map(|never| match *never {})
    }
}
