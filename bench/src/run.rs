//! The matrix: which cells a run measures and in what order — the bare hyper server's
//! GET, raw etcd's operations (with the `etcd` feature) and every kapi operation over
//! both transports, each at every client count — on one kapi server and one etcd
//! started for the run.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::client::{self, Transport};
use crate::driver::{self, Load, Worker};
use crate::report::{Cell, Limit, Row, System};
use crate::server::KapiProcess;
use crate::targets::baseline::Baseline;
use crate::targets::kapi_http::{KapiHttp, Operation};
use crate::targets::watch::{FanOut, fan_out};

/// The storage kapi runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The embedded store (redb) in a temporary data directory.
    Embedded,
    /// A real etcd started on loopback ports for the run (needs the `etcd` feature,
    /// and a kapi built with its own `etcd` feature).
    Etcd,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Embedded => "embedded",
            Backend::Etcd => "etcd",
        })
    }
}

/// What one run measures.
#[derive(Clone, Debug)]
pub struct Config {
    /// The `kapi` binary.
    pub kapi: PathBuf,
    /// The storage kapi runs on.
    pub backend: Backend,
    /// The client counts, each a column of the matrix.
    pub clients: Vec<usize>,
    /// Warm-up, duration and per-call timeout of each cell.
    pub load: Load,
    /// Objects (and etcd keys) lists read.
    pub list_size: usize,
    /// Watcher counts of the watch fan-out, each a row.
    pub watchers: Vec<usize>,
    /// Writes per second of the fan-out's writer (it writes for `load.duration`).
    pub watch_rate: u32,
    /// Whether raw etcd is measured too (only with the `etcd` feature).
    pub etcd_limits: bool,
}

impl Config {
    /// The full matrix: 1, 16 and 64 clients, 10 s per cell after 1 s of warm-up,
    /// lists of 1,000 objects.
    pub fn full(kapi: PathBuf, backend: Backend) -> Self {
        Self {
            kapi,
            backend,
            clients: vec![1, 16, 64],
            load: Load {
                warmup: Duration::from_secs(1),
                duration: Duration::from_secs(10),
                timeout: Duration::from_secs(10),
            },
            list_size: 1000,
            watchers: vec![10, 1000],
            watch_rate: 100,
            etcd_limits: cfg!(feature = "etcd"),
        }
    }

    /// A few seconds with tiny sizes, to show that everything runs: 2 clients,
    /// 300 ms per cell, lists of 5 objects. Its figures mean nothing.
    pub fn smoke(kapi: PathBuf, backend: Backend) -> Self {
        Self {
            clients: vec![2],
            load: Load {
                warmup: Duration::from_millis(100),
                duration: Duration::from_millis(300),
                timeout: Duration::from_secs(10),
            },
            list_size: 5,
            watchers: vec![2],
            watch_rate: 20,
            ..Self::full(kapi, backend)
        }
    }
}

/// Runs every cell of `config`, reporting progress on stderr; the rows in the order
/// measured.
pub async fn run(config: &Config) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();

    let baseline = Baseline::start().await?;
    for transport in Transport::ALL {
        for &clients in &config.clients {
            let connections = client::clients(baseline.addr(), transport, clients).await?;
            let workers = Baseline::get_workers(connections);
            let cell = Cell {
                system: System::Baseline,
                operation: "get".to_string(),
                transport: transport.to_string(),
                clients,
                compare_with: None,
                is_limit: Some(Limit::BaselineGet(transport)),
            };
            rows.push(measure(config.load, workers, cell).await);
        }
    }
    drop(baseline);

    let etcd = start_etcd(config).await?;
    #[cfg(feature = "etcd")]
    if let Some(etcd) = &etcd {
        rows.extend(raw_etcd(config, &etcd.endpoint()).await?);
    }

    let endpoint = etcd_endpoint(etcd.as_ref()).filter(|_| config.backend == Backend::Etcd);
    let kapi = KapiProcess::start(&config.kapi, endpoint.as_deref()).await?;
    let target = KapiHttp::new(kapi.addr());
    target.preload_list(config.list_size).await?;
    for operation in Operation::ALL {
        for transport in Transport::ALL {
            for &clients in &config.clients {
                let workers = target.workers(operation, transport, clients).await?;
                let cell = Cell {
                    system: System::Kapi(config.backend),
                    operation: kapi_operation_name(operation, config.list_size),
                    transport: transport.to_string(),
                    clients,
                    compare_with: match operation {
                        Operation::Get => Some(Limit::BaselineGet(transport)),
                        Operation::Create => Some(Limit::EtcdTxnCreate),
                        Operation::Update => Some(Limit::EtcdTxnUpdate),
                        _ => None,
                    },
                    is_limit: None,
                };
                rows.push(measure(config.load, workers, cell).await);
            }
        }
    }
    for (round, &watchers) in config.watchers.iter().enumerate() {
        let spec = FanOut {
            watchers,
            rate: config.watch_rate,
            duration: config.load.duration,
        };
        let measured = fan_out(kapi.addr(), spec, round).await?;
        let row = Row {
            cell: Cell {
                system: System::Kapi(config.backend),
                operation: format!(
                    "watch fan-out, {} writes/s (latency: write ack → event)",
                    config.watch_rate
                ),
                transport: Transport::Http1.to_string(),
                clients: watchers,
                compare_with: None,
                is_limit: None,
            },
            summary: measured.recorder.summary(measured.elapsed),
            first_errors: measured.recorder.first_errors().to_vec(),
        };
        eprintln!("{}", row.progress_line());
        rows.push(row);
    }
    // kapi stops (dropped) before the etcd it may use.
    Ok(rows)
}

fn kapi_operation_name(operation: Operation, list_size: usize) -> String {
    match operation {
        Operation::List => format!("list {list_size} (rv=0)"),
        other => other.to_string(),
    }
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

/// Starts etcd when the backend or the limits need it.
async fn start_etcd(config: &Config) -> Result<Option<Etcd>, String> {
    #[cfg(feature = "etcd")]
    {
        if config.backend == Backend::Etcd || config.etcd_limits {
            return tokio::task::spawn_blocking(kapi_testing::EtcdProcess::start)
                .await
                .map(Some)
                .map_err(|e| format!("starting etcd: {e}"));
        }
        Ok(None)
    }
    #[cfg(not(feature = "etcd"))]
    {
        if config.backend == Backend::Etcd {
            return Err(
                "kapi-bench was built without the `etcd` feature: rebuild with `--features etcd`"
                    .to_string(),
            );
        }
        Ok(None)
    }
}

/// The endpoint kapi should use, on the etcd backend.
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

#[cfg(feature = "etcd")]
async fn raw_etcd(config: &Config, endpoint: &str) -> Result<Vec<Row>, String> {
    use crate::targets::etcd::{Operation as EtcdOperation, RawEtcd};
    let etcd = RawEtcd::connect(endpoint).await?;
    etcd.preload_list(config.list_size).await?;
    let mut rows = Vec::new();
    for operation in EtcdOperation::ALL {
        for &clients in &config.clients {
            let workers = etcd.workers(operation, clients).await?;
            let cell = Cell {
                system: System::Etcd,
                operation: match operation {
                    EtcdOperation::RangePrefix => format!("{operation} of {}", config.list_size),
                    other => other.to_string(),
                },
                transport: "gRPC".to_string(),
                clients,
                compare_with: None,
                is_limit: match operation {
                    EtcdOperation::TxnCreate => Some(Limit::EtcdTxnCreate),
                    EtcdOperation::TxnUpdate => Some(Limit::EtcdTxnUpdate),
                    _ => None,
                },
            };
            rows.push(measure(config.load, workers, cell).await);
        }
    }
    Ok(rows)
}
