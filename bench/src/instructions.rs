//! Instructions per request, JSON beside protobuf (issue #18): kapi runs under
//! valgrind's callgrind, which counts the instructions kapi executes in user space, on
//! every thread. The count does not depend on what else the machine is doing, so two
//! runs of the same binary agree to a fraction of a percent where requests per second
//! on two shared cores move by tens of percent (BENCHMARKS.md, "JSON and protobuf").
//! That makes it the figure that tells whether one format costs kapi more than the
//! other, on single-object operations whose throughput differs by less than the noise.
//!
//! Each cell is a fixed number of sequential requests over one connection, the
//! same ConfigMaps as `kapi-bench wire` sends ([`crate::targets::wire`]). Two more rows,
//! in JSON only, are the writes that record `managedFields` beside the create (issue
//! #20): a merge patch of one ConfigMap and a server-side apply to another, each
//! changing a value every time; run against two builds, they give the field manager's
//! cost. The counters
//! are zeroed before a cell and dumped after it (`callgrind_control`), so startup,
//! preloading and warm-up (which fills the watch cache's memos of both formats) are
//! left out. Rounds alternate which format goes first. What a count leaves out is the
//! kernel's work (sockets, copies: larger bodies cost more there) and the client's.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::Bytes;
use http::{Method, StatusCode};

use crate::client::{Client, Transport};
use crate::driver::{OpFuture, Sample, Worker};
use crate::server::{KapiProcess, Storage};
use crate::targets::kapi_http::Loader;
use crate::targets::wire::{Encoding, Operation, Wire};

/// What to measure.
#[derive(Clone, Debug)]
pub struct InstructionsConfig {
    /// The kapi binary.
    pub kapi: PathBuf,
    /// Rounds of every cell in each format.
    pub rounds: usize,
    /// Creates per cell (and merge patches, and applies).
    pub creates: u64,
    /// GETs (`resourceVersion=0`) per cell.
    pub gets: u64,
    /// LISTs per cell.
    pub lists: u64,
    /// ConfigMaps in the listed namespace.
    pub list_objects: usize,
    /// How the requests travel.
    pub transport: Transport,
}

impl InstructionsConfig {
    /// The defaults: two rounds of 300 creates, 2,000 GETs and 30 LISTs of 1,000 over
    /// HTTP/2, about three minutes under callgrind on a two-core machine.
    pub fn new(kapi: PathBuf) -> Self {
        Self {
            kapi,
            rounds: 2,
            creates: 300,
            gets: 2000,
            lists: 30,
            list_objects: 1000,
            transport: Transport::Http2,
        }
    }
}

/// What a row measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// An operation of `kapi-bench wire`, in both formats.
    Wire(Operation),
    /// A JSON merge patch changing one value of a ConfigMap.
    MergePatch,
    /// A server-side apply changing one value of a ConfigMap.
    Apply,
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Wire(operation) => write!(f, "{operation}"),
            Cell::MergePatch => f.write_str("update (merge patch)"),
            Cell::Apply => f.write_str("server-side apply"),
        }
    }
}

/// One operation's counts.
#[derive(Clone, Debug, PartialEq)]
pub struct InstructionsRow {
    /// What was measured.
    pub operation: Cell,
    /// Requests per cell.
    pub requests: u64,
    /// Instructions per request in JSON, one figure per round.
    pub json: Vec<u64>,
    /// Instructions per request in protobuf, one figure per round (none for the
    /// JSON-only writes).
    pub protobuf: Vec<u64>,
}

impl InstructionsRow {
    /// The rounds' mean, protobuf over JSON; `None` without protobuf figures.
    pub fn ratio(&self) -> Option<f64> {
        (!self.protobuf.is_empty()).then(|| mean(&self.protobuf) / mean(&self.json).max(1.0))
    }
}

fn mean(values: &[u64]) -> f64 {
    values.iter().sum::<u64>() as f64 / values.len().max(1) as f64
}

/// Starts kapi under callgrind and counts every cell.
pub async fn measure(config: &InstructionsConfig) -> Result<Vec<InstructionsRow>, String> {
    for tool in ["valgrind", "callgrind_control"] {
        which(tool)?;
    }
    let out = tempfile::Builder::new()
        .prefix("kapi-bench-callgrind-")
        .tempdir()
        .map_err(|e| format!("a temporary directory: {e}"))?;
    let wrapper: Vec<OsString> = vec![
        "valgrind".into(),
        "--tool=callgrind".into(),
        // Nothing is counted until the first cell asks.
        "--instr-atstart=no".into(),
        format!(
            "--callgrind-out-file={}/callgrind.out.%p",
            out.path().display()
        )
        .into(),
    ];
    let kapi = KapiProcess::start_under(wrapper, &config.kapi, Storage::default()).await?;
    let mut dumps = Dumps {
        dir: out.path().to_path_buf(),
        pid: kapi.pid(),
        taken: 0,
    };
    let wire = Wire::new(kapi.addr());
    let loader = Loader {
        clients: 4,
        transport: Transport::Http2,
    };
    wire.preload_lists(&[config.list_objects], loader).await?;
    let cells = [
        (Operation::Create, config.creates),
        (Operation::GetCached, config.gets),
        (Operation::List(config.list_objects), config.lists),
    ];
    let mut rows = Vec::new();
    for (operation, requests) in cells {
        let mut workers = Vec::new();
        for encoding in Encoding::ALL {
            let mut worker = wire
                .workers(operation, encoding, config.transport, 1)
                .await?
                .pop()
                .ok_or("no worker")?;
            // Warm-up, uncounted: the memos of both formats, the connection.
            call(&mut worker, 0, 20).await?;
            workers.push((encoding, worker));
        }
        dumps.control(&["-i", "on"])?;
        let mut row = InstructionsRow {
            operation: Cell::Wire(operation),
            requests,
            json: Vec::new(),
            protobuf: Vec::new(),
        };
        for round in 0..config.rounds {
            // ABBA: each format goes first in every other round.
            let order: Vec<usize> = if round % 2 == 0 {
                vec![0, 1]
            } else {
                vec![1, 0]
            };
            for index in order {
                let (encoding, worker) = &mut workers[index];
                dumps.control(&["-z"])?;
                let first = 20 + round as u64 * requests;
                call(worker, first, requests).await?;
                let total = dumps.take()?;
                let figures = match encoding {
                    Encoding::Json => &mut row.json,
                    Encoding::Protobuf => &mut row.protobuf,
                };
                figures.push(total / requests.max(1));
            }
        }
        dumps.control(&["-i", "off"])?;
        eprintln!(
            "kapi-bench instructions: {operation}: JSON {:?}, protobuf {:?} per request",
            row.json, row.protobuf
        );
        rows.push(row);
    }
    for cell in [Cell::MergePatch, Cell::Apply] {
        let client = Client::connect(kapi.addr(), config.transport).await?;
        let mut worker = writer(kapi.addr(), client, cell).await?;
        call(&mut worker, 0, 20).await?;
        dumps.control(&["-i", "on"])?;
        let mut json = Vec::new();
        for round in 0..config.rounds {
            dumps.control(&["-z"])?;
            call(
                &mut worker,
                20 + round as u64 * config.creates,
                config.creates,
            )
            .await?;
            json.push(dumps.take()? / config.creates.max(1));
        }
        dumps.control(&["-i", "off"])?;
        eprintln!("kapi-bench instructions: {cell}: {json:?} per request");
        rows.push(InstructionsRow {
            operation: cell,
            requests: config.creates,
            json,
            protobuf: Vec::new(),
        });
    }
    Ok(rows)
}

/// A worker writing one new value into a ConfigMap of its own per call, by `cell`'s
/// kind of write; the ConfigMap is created first.
async fn writer(addr: SocketAddr, client: Client, cell: Cell) -> Result<Worker, String> {
    let name = match cell {
        Cell::MergePatch => "merged",
        _ => "applied",
    };
    let path = format!("/api/v1/namespaces/default/configmaps/{name}?fieldManager=bench");
    let body = move |seq: u64| {
        let config = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": name},
                                        "data": {"value": seq.to_string(), "padding": "x".repeat(800)}});
        Bytes::from(config.to_string())
    };
    let content_type = match cell {
        Cell::MergePatch => "application/merge-patch+json",
        _ => "application/apply-patch+yaml",
    };
    // The object to patch: made by an apply, which creates.
    let first = Client::connect(addr, Transport::Http1).await?;
    let reply = first
        .send(
            Method::PATCH,
            &path,
            Some(("application/apply-patch+yaml", body(0))),
        )
        .await?;
    if !reply.status.is_success() {
        return Err(format!("creating {name}: {}", reply.status));
    }
    Ok(Box::new(move |seq| -> OpFuture {
        let client = client.clone();
        let path = path.clone();
        let bytes = body(seq + 1);
        Box::pin(async move {
            client
                .send(Method::PATCH, &path, Some((content_type, bytes)))
                .await?
                .expect("PATCH", StatusCode::OK)?;
            Ok(Sample::Whole)
        })
    }))
}

/// Calls `worker` `count` times in a row, from sequence number `first`.
async fn call(worker: &mut Worker, first: u64, count: u64) -> Result<(), String> {
    for seq in first..first + count {
        worker(seq).await?;
    }
    Ok(())
}

/// The dumps callgrind writes for one kapi: `callgrind.out.<pid>.<n>`, one per dump.
struct Dumps {
    dir: PathBuf,
    pid: u32,
    taken: usize,
}

impl Dumps {
    /// Runs `callgrind_control` with `args` on kapi.
    fn control(&self, args: &[&str]) -> Result<(), String> {
        let output = Command::new("callgrind_control")
            .args(args)
            .arg(self.pid.to_string())
            .output()
            .map_err(|e| format!("callgrind_control: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "callgrind_control {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }

    /// Dumps the counters (which zeroes them) and reads the instructions they held,
    /// from the dump file that names the dump (callgrind numbers its files itself, and
    /// switching instrumentation on and off can write one too). Labels are plain
    /// words: callgrind_control passes others on mangled.
    fn take(&mut self) -> Result<u64, String> {
        self.taken += 1;
        let label = format!("cell{}", self.taken);
        self.control(&["-d", &label])?;
        let trigger = format!("desc: Trigger: dump {label}");
        let entries =
            std::fs::read_dir(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("{}: {e}", self.dir.display()))?
                .path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if text.lines().any(|line| line == trigger) {
                // Read once: the next dump with another label is found among fewer files.
                let _ = std::fs::remove_file(&path);
                return totals(&text).ok_or_else(|| format!("no totals in {}", path.display()));
            }
        }
        Err(format!(
            "no callgrind dump for {label:?} in {}",
            self.dir.display()
        ))
    }
}

/// The `totals:` (or `summary:`) line of a callgrind dump.
fn totals(dump: &str) -> Option<u64> {
    dump.lines().find_map(|line| {
        let rest = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// That `tool` runs, with a word on how to get it.
fn which(tool: &str) -> Result<(), String> {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| Path::new(&dir).join(tool).is_file()))
        .unwrap_or(false);
    if found {
        Ok(())
    } else {
        Err(format!(
            "{tool} is not on PATH: install valgrind (Debian: apt-get install valgrind)"
        ))
    }
}

/// The table of `rows`.
pub fn markdown(rows: &[InstructionsRow]) -> String {
    let mut out = String::from(
        "| operation | requests per cell | JSON instructions / request | protobuf instructions / request | protobuf / JSON |\n|---|---:|---:|---:|---:|\n",
    );
    let list = |values: &[u64]| {
        values
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for row in rows {
        let (protobuf, ratio) = match row.ratio() {
            Some(ratio) => (list(&row.protobuf), format!("{ratio:.3}×")),
            None => ("—".to_string(), "—".to_string()),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {protobuf} | {ratio} |\n",
            row.operation,
            row.requests,
            list(&row.json),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_dumps_totals_and_tabulates_rows() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\ndesc: Trigger: dump get\nevents: Ir\nsummary: 86154836\ntotals: 86154836\n";
        assert_eq!(totals(dump), Some(86_154_836));
        assert_eq!(totals("events: Ir\n"), None);
        let row = InstructionsRow {
            operation: Cell::Wire(Operation::GetCached),
            requests: 2000,
            json: vec![43_000, 43_200],
            protobuf: vec![43_100, 43_100],
        };
        assert!((row.ratio().unwrap() - 1.0).abs() < 0.01);
        let writes = InstructionsRow {
            operation: Cell::Apply,
            requests: 300,
            json: vec![900_000],
            protobuf: Vec::new(),
        };
        assert_eq!(writes.ratio(), None);
        let table = markdown(&[row, writes]);
        assert!(
            table.contains("| server-side apply | 300 | 900000 | — | — |"),
            "{table}"
        );
        assert!(
            table.contains("| get rv=0 | 2000 | 43000, 43200 | 43100, 43100 | 1.000× |"),
            "{table}"
        );
    }
}
