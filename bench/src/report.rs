//! What a run measured ([`Results`]) and its Markdown tables: one row per cell
//! (operation, transport, clients, ops/s, p50, p99, max, errors) with, for kapi's
//! operations that have a limit measured in the same run, the ratio to it; one row per
//! watch fan-out; one row per backend's memory and restart.

use std::fmt::Write as _;
use std::time::Duration;

use crate::client::Transport;
use crate::fanout::FanOutMeasured;
use crate::reference::Serialization;
use crate::run::Backend;
use crate::server::Memory;
use crate::stats::{Millis, Summary};
use crate::targets::kapi_http::Operation;
use crate::targets::wire::{self, Encoding};

/// What served a cell's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    /// kapi over HTTP on a backend.
    Kapi(Backend),
    /// The bare hyper server.
    Baseline,
    /// etcd, through etcd-client.
    Etcd,
    /// The embedded store's own API, in this process.
    Store,
}

impl std::fmt::Display for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            System::Kapi(backend) => write!(f, "kapi ({backend})"),
            System::Baseline => f.write_str("bare hyper"),
            System::Etcd => f.write_str("etcd"),
            System::Store => f.write_str("embedded store API"),
        }
    }
}

/// A limit kapi's operations are compared with: one operation of one limit system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The bare hyper server's GET of a 1 KiB object over a transport.
    BaselineGet(Transport),
    /// The bare hyper server's GET of a copy of kapi's list of this many objects.
    BaselineList(Transport, usize),
    /// etcd's put.
    EtcdPut,
    /// etcd's transactional create-if-absent.
    EtcdTxnCreate,
    /// etcd's transactional compare-mod-revision update.
    EtcdTxnUpdate,
    /// etcd's (linearizable) range of one key.
    EtcdRangeKey,
    /// etcd's range of a prefix of this many keys.
    EtcdRangePrefix(usize),
    /// The embedded store's create.
    StoreCreate,
    /// The embedded store's get of the latest state.
    StoreGet,
    /// The embedded store's compare-and-swap update.
    StoreUpdate,
    /// The embedded store's list of a prefix of this many keys.
    StoreList(usize),
}

impl Limit {
    /// How the ratio column names it.
    pub fn name(self) -> String {
        match self {
            Limit::BaselineGet(_) => "bare hyper 1 KiB GET".to_string(),
            Limit::BaselineList(_, n) => format!("bare hyper GET of the same {n}-item list"),
            Limit::EtcdPut => "etcd put".to_string(),
            Limit::EtcdTxnCreate => "etcd txn create".to_string(),
            Limit::EtcdTxnUpdate => "etcd txn CAS".to_string(),
            Limit::EtcdRangeKey => "etcd range key".to_string(),
            Limit::EtcdRangePrefix(n) => format!("etcd range of {n}"),
            Limit::StoreCreate => "store create".to_string(),
            Limit::StoreGet => "store get".to_string(),
            Limit::StoreUpdate => "store CAS".to_string(),
            Limit::StoreList(n) => format!("store list of {n}"),
        }
    }
}

/// What a cell measures.
#[derive(Clone, Debug)]
pub struct Cell {
    /// What served it.
    pub system: System,
    /// The operation, as the table names it.
    pub operation: String,
    /// kapi's operation, for kapi's cells.
    pub kapi: Option<Operation>,
    /// How requests travelled (`HTTP/1.1`, `HTTP/2`, `gRPC`, `in-process`).
    pub transport: String,
    /// Concurrent clients.
    pub clients: usize,
    /// The limit this cell is compared with, if any.
    pub compare_with: Option<Limit>,
    /// The limit this cell is, if any.
    pub is_limit: Option<Limit>,
}

/// A measured cell.
#[derive(Clone, Debug)]
pub struct Row {
    /// What was measured.
    pub cell: Cell,
    /// Its figures.
    pub summary: Summary,
    /// The first error messages, if any.
    pub first_errors: Vec<String>,
}

impl Row {
    /// One line for the progress log.
    pub fn progress_line(&self) -> String {
        let s = &self.summary;
        let mut line = format!(
            "{:<18} {:<34} {:<10} c={:<3} {:>9.0} ops/s  p50 {}  p99 {}  max {}  errors {}",
            self.cell.system.to_string(),
            self.cell.operation,
            self.cell.transport,
            self.cell.clients,
            s.ops_per_sec,
            Millis(s.p50),
            Millis(s.p99),
            Millis(s.max),
            s.errors,
        );
        if let Some(first) = self.first_errors.first() {
            let _ = write!(line, " (first: {first})");
        }
        line
    }
}

/// One watch fan-out and what served it.
#[derive(Clone, Debug)]
pub struct FanOutRow {
    /// What served the watches.
    pub system: System,
    /// What was measured.
    pub measured: FanOutMeasured,
}

impl FanOutRow {
    /// One line for the progress log.
    pub fn progress_line(&self) -> String {
        let m = &self.measured;
        let s = m.summary();
        let mut line = format!(
            "{:<18} watch fan-out W={:<6} opened in {:.1} s, writes {}/s nominal, {:.1}/s acked  {:>9.0} events/s  p50 {}  p99 {}  max {}  missed {}  errors {}",
            self.system.to_string(),
            m.spec.watchers,
            m.opened_in.as_secs_f64(),
            m.spec.rate,
            m.acked_rate,
            s.ops_per_sec,
            Millis(s.p50),
            Millis(s.p99),
            Millis(s.max),
            m.missed,
            s.errors,
        );
        if let Some(first) = m.recorder.first_errors().first() {
            let _ = write!(line, " (first: {first})");
        }
        line
    }
}

/// One cell of the wire formats' comparison: an operation on ConfigMaps in one format.
#[derive(Clone, Debug)]
pub struct WireRow {
    /// The backend kapi ran on.
    pub backend: Backend,
    /// What was measured.
    pub operation: wire::Operation,
    /// The format requests and answers were in.
    pub encoding: Encoding,
    /// How requests travelled.
    pub transport: Transport,
    /// Concurrent clients.
    pub clients: usize,
    /// Its figures.
    pub summary: Summary,
    /// kapi's CPU time (user and system, from `/proc`) over the measured time, per
    /// operation completed in it.
    pub server_cpu_per_op: Option<Duration>,
    /// The first error messages, if any.
    pub first_errors: Vec<String>,
}

impl WireRow {
    /// One line for the progress log.
    pub fn progress_line(&self) -> String {
        let s = &self.summary;
        let mut line = format!(
            "kapi ({}) {:<8} {:<18} {:<10} c={:<3} {:>9.0} ops/s  p50 {}  p99 {}  max {}  kapi CPU/op {}  errors {}",
            self.backend,
            self.encoding.to_string(),
            self.operation.to_string(),
            self.transport.to_string(),
            self.clients,
            s.ops_per_sec,
            Millis(s.p50),
            Millis(s.p99),
            Millis(s.max),
            self.server_cpu_per_op
                .map_or_else(|| "?".to_string(), |c| Micros(c).to_string()),
            s.errors,
        );
        if let Some(first) = self.first_errors.first() {
            let _ = write!(line, " (first: {first})");
        }
        line
    }
}

/// A duration in microseconds, whole.
struct Micros(Duration);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.0} µs", self.0.as_secs_f64() * 1e6)
    }
}

/// A watch fan-out of the wire formats' comparison.
#[derive(Clone, Debug)]
pub struct WireFanOut {
    /// The format the watchers read and the writer wrote.
    pub encoding: Encoding,
    /// What was measured.
    pub row: FanOutRow,
}

/// The JSON row and the protobuf row of each cell of `rows`, in the order measured.
pub fn wire_pairs(rows: &[WireRow]) -> Vec<(&WireRow, &WireRow)> {
    rows.iter()
        .filter(|r| r.encoding == Encoding::Json)
        .filter_map(|json| {
            let protobuf = rows.iter().find(|r| {
                r.encoding == Encoding::Protobuf
                    && r.backend == json.backend
                    && r.operation == json.operation
                    && r.transport == json.transport
                    && r.clients == json.clients
            })?;
            Some((json, protobuf))
        })
        .collect()
}

/// The Markdown table of the wire formats' cells, JSON and protobuf side by side;
/// `sizes` are the list bodies' sizes per list length and format.
pub fn wire_markdown(rows: &[WireRow], sizes: &[(usize, Encoding, usize)]) -> String {
    let body = |operation: wire::Operation| {
        let wire::Operation::List(n) = operation else {
            return "—".to_string();
        };
        let size = |encoding: Encoding| {
            sizes
                .iter()
                .find(|(objects, e, _)| *objects == n && *e == encoding)
                .map_or_else(
                    || "?".to_string(),
                    |(_, _, bytes)| format!("{} KiB", bytes / 1024),
                )
        };
        format!("{} / {}", size(Encoding::Json), size(Encoding::Protobuf))
    };
    let mut out = String::new();
    let cpu = |row: &WireRow| {
        row.server_cpu_per_op
            .map_or_else(|| "?".to_string(), |c| Micros(c).to_string())
    };
    out.push_str("| operation | transport | clients | JSON ops/s | protobuf ops/s | protobuf / JSON | JSON p50 / p99 | protobuf p50 / p99 | kapi CPU per request, JSON / protobuf | body JSON / protobuf | errors |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (json, protobuf) in wire_pairs(rows) {
        let (j, p) = (&json.summary, &protobuf.summary);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} | {:.0} | {:.2}× | {} / {} | {} / {} | {} / {} | {} | {} |",
            json.operation,
            json.transport,
            json.clients,
            j.ops_per_sec,
            p.ops_per_sec,
            p.ops_per_sec / j.ops_per_sec.max(1e-9),
            Millis(j.p50),
            Millis(j.p99),
            Millis(p.p50),
            Millis(p.p99),
            cpu(json),
            cpu(protobuf),
            body(json.operation),
            j.errors + p.errors,
        );
    }
    out
}

/// The Markdown table of the wire formats' watch fan-outs, named by format.
pub fn wire_fan_out_markdown(fan_outs: &[WireFanOut]) -> String {
    let rows = fan_outs
        .iter()
        .map(|f| (f.encoding.to_string(), &f.row.measured));
    fan_out_table("format", rows)
}

/// kapi's memory with many objects cached, and (embedded) its restart on them.
#[derive(Clone, Debug)]
pub struct MemoryRow {
    /// The backend kapi ran on.
    pub backend: Backend,
    /// Widgets loaded.
    pub objects: usize,
    /// One widget's JSON as kapi serves it, in bytes.
    pub object_json: usize,
    /// After start, before the load.
    pub idle: Memory,
    /// With the first half of the widgets loaded.
    pub half: Memory,
    /// With every widget loaded (and read back once from the watch cache).
    pub loaded: Memory,
    /// How long the load took.
    pub load_time: Duration,
    /// The restart on the same data (embedded store only).
    pub restart: Option<Restart>,
}

impl MemoryRow {
    /// Resident bytes per object: the growth of the resident set over the whole load,
    /// fixed costs that come with the first objects included (the embedded store's
    /// page cache, 16 MiB when full).
    pub fn per_object(&self) -> f64 {
        self.loaded.rss.saturating_sub(self.idle.rss) as f64 / self.objects.max(1) as f64
    }

    /// [`MemoryRow::per_object`] over the object's JSON size.
    pub fn per_object_ratio(&self) -> f64 {
        self.per_object() / self.object_json.max(1) as f64
    }

    /// Resident bytes one more cached object costs: the growth over the second half
    /// of the load, when the fixed costs are paid.
    pub fn per_cached_object(&self) -> f64 {
        let second_half = self.objects - self.objects / 2;
        self.loaded.rss.saturating_sub(self.half.rss) as f64 / second_half.max(1) as f64
    }

    /// [`MemoryRow::per_cached_object`] over the object's JSON size.
    pub fn per_cached_object_ratio(&self) -> f64 {
        self.per_cached_object() / self.object_json.max(1) as f64
    }

    /// One line for the progress log.
    pub fn progress_line(&self) -> String {
        let mut line = format!(
            "kapi ({}) memory: idle RSS {}, with {} objects {} (peak {}), {:.0} B/object = {:.2}× the {} B JSON ({:.0} B = {:.2}× over the second half); loaded in {:.1} s",
            self.backend,
            mib(self.idle.rss),
            self.objects,
            mib(self.loaded.rss),
            mib(self.loaded.peak),
            self.per_object(),
            self.per_object_ratio(),
            self.object_json,
            self.per_cached_object(),
            self.per_cached_object_ratio(),
            self.load_time.as_secs_f64(),
        );
        if let Some(r) = &self.restart {
            let _ = write!(
                line,
                "; restart: stopped in {}, ready in {}, first rv=0 list in {}",
                Millis(r.stop),
                Millis(r.ready),
                Millis(r.first_read)
            );
        }
        line
    }
}

/// A restart of kapi on the data it already holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Restart {
    /// From SIGTERM until the old process exited.
    pub stop: Duration,
    /// From starting the new process until `/readyz` answered 200.
    pub ready: Duration,
    /// From starting the new process until a list with `resourceVersion=0` answered.
    pub first_read: Duration,
}

/// Everything one run measured.
#[derive(Clone, Debug, Default)]
pub struct Results {
    /// Every cell.
    pub rows: Vec<Row>,
    /// Every watch fan-out.
    pub fan_outs: Vec<FanOutRow>,
    /// Memory and restart, per backend.
    pub memory: Vec<MemoryRow>,
    /// The serialisation reference of the largest list, per backend.
    pub serialization: Vec<(Backend, Serialization)>,
    /// The memory of the kapi that served each backend's matrix, at its end (its peak
    /// covers every cell and fan-out).
    pub matrix_memory: Vec<(Backend, Memory)>,
    /// The wire formats' cells, JSON and protobuf of each one after the other.
    pub wire: Vec<WireRow>,
    /// The sizes of the wire formats' list bodies: objects, format, bytes.
    pub wire_sizes: Vec<(usize, Encoding, usize)>,
    /// The wire formats' watch fan-outs.
    pub wire_fan_outs: Vec<WireFanOut>,
}

impl Results {
    /// Whether anything failed (errors in a cell, missed events).
    pub fn has_errors(&self) -> bool {
        self.rows.iter().any(|r| r.summary.errors > 0)
            || self.wire.iter().any(|r| r.summary.errors > 0)
            || self
                .fan_outs
                .iter()
                .chain(self.wire_fan_outs.iter().map(|w| &w.row))
                .any(|f| f.measured.recorder.errors() > 0)
    }

    /// The rows of `system`, in the order measured.
    pub fn rows_of(&self, system: System) -> Vec<Row> {
        self.rows
            .iter()
            .filter(|r| r.cell.system == system)
            .cloned()
            .collect()
    }

    /// The row of limit `limit` at `clients`.
    pub fn limit(&self, limit: Limit, clients: usize) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.cell.is_limit == Some(limit) && r.cell.clients == clients)
    }

    /// kapi's row for `operation` on `backend` over `transport` at `clients`.
    pub fn kapi(
        &self,
        backend: Backend,
        operation: Operation,
        transport: Transport,
        clients: usize,
    ) -> Option<&Row> {
        let transport = transport.to_string();
        self.rows.iter().find(|r| {
            r.cell.system == System::Kapi(backend)
                && r.cell.kapi == Some(operation)
                && r.cell.transport == transport
                && r.cell.clients == clients
        })
    }
}

/// How `ours` compares with `theirs`: the throughput ratio and the p99 ratio.
pub fn ratios(ours: &Summary, theirs: &Summary) -> Option<(f64, f64)> {
    if theirs.ops_per_sec <= 0.0 || theirs.p99.is_zero() {
        return None;
    }
    Some((
        ours.ops_per_sec / theirs.ops_per_sec,
        ours.p99.as_secs_f64() / theirs.p99.as_secs_f64(),
    ))
}

/// The ratio of `row` to its limit among `rows` (same limit, same clients), as text.
pub fn ratio(row: &Row, rows: &[Row]) -> Option<String> {
    let limit = row.cell.compare_with?;
    let reference = rows
        .iter()
        .find(|r| r.cell.is_limit == Some(limit) && r.cell.clients == row.cell.clients)?;
    let (ops, p99) = ratios(&row.summary, &reference.summary)?;
    Some(format!(
        "{:.0}% of {} ops/s, p99 {:.1}×",
        100.0 * ops,
        limit.name(),
        p99,
    ))
}

/// The Markdown table of `rows`, with ratios to the limits found among `all`.
pub fn markdown(rows: &[Row], all: &[Row]) -> String {
    let mut out = String::new();
    out.push_str(
        "| system | operation | transport | clients | ops/s | p50 | p99 | max | n | errors | vs limit |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for row in rows {
        let s = &row.summary;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} |",
            row.cell.system,
            row.cell.operation,
            row.cell.transport,
            row.cell.clients,
            s.ops_per_sec,
            Millis(s.p50),
            Millis(s.p99),
            Millis(s.max),
            s.ops,
            s.errors,
            ratio(row, all).unwrap_or_default(),
        );
    }
    out
}

/// The Markdown table of the watch fan-outs.
pub fn fan_out_markdown(fan_outs: &[FanOutRow]) -> String {
    let rows = fan_outs.iter().map(|f| (f.system.to_string(), &f.measured));
    fan_out_table("system", rows)
}

/// One row per fan-out, `first` naming the first column.
fn fan_out_table<'a>(
    first: &str,
    rows: impl Iterator<Item = (String, &'a FanOutMeasured)>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| {first} | watchers | writes/s nominal | writes/s acked | write p50 | events read | events/s | p50 | p99 | max | missed | errors |"
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (name, m) in rows {
        let s = m.summary();
        let write = m.write_latency.summary(Duration::from_secs(1));
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {:.1} | {} | {} | {:.0} | {} | {} | {} | {} | {} |",
            m.spec.watchers,
            m.spec.rate,
            m.acked_rate,
            Millis(write.p50),
            m.delivered,
            s.ops_per_sec,
            Millis(s.p50),
            Millis(s.p99),
            Millis(s.max),
            m.missed,
            s.errors,
        );
    }
    out
}

/// The Markdown table of memory and restarts.
pub fn memory_markdown(memory: &[MemoryRow]) -> String {
    let mut out = String::new();
    out.push_str("| kapi on | objects | object JSON | idle RSS | RSS half loaded | RSS loaded | peak RSS | per object, whole load | / JSON | per object, second half | / JSON | load | restart: stop | restart: ready | restart: first rv=0 list |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in memory {
        let restart = |f: fn(&Restart) -> Duration| {
            row.restart
                .as_ref()
                .map_or_else(|| "—".to_string(), |r| Millis(f(r)).to_string())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} B | {} | {} | {} | {} | {:.0} B | {:.2}× | {:.0} B | {:.2}× | {:.1} s ({:.0}/s) | {} | {} | {} |",
            row.backend,
            row.objects,
            row.object_json,
            mib(row.idle.rss),
            mib(row.half.rss),
            mib(row.loaded.rss),
            mib(row.loaded.peak),
            row.per_object(),
            row.per_object_ratio(),
            row.per_cached_object(),
            row.per_cached_object_ratio(),
            row.load_time.as_secs_f64(),
            row.objects as f64 / row.load_time.as_secs_f64().max(1e-9),
            restart(|r| r.stop),
            restart(|r| r.ready),
            restart(|r| r.first_read),
        );
    }
    out
}

/// Bytes as MiB, one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Recorder;

    fn row(system: System, clients: usize, latency_ms: u64, ops: u64) -> Row {
        let mut recorder = Recorder::new();
        for _ in 0..ops {
            recorder.record(Duration::from_millis(latency_ms));
        }
        let limit = Limit::BaselineGet(Transport::Http1);
        Row {
            cell: Cell {
                system,
                operation: "get".to_string(),
                kapi: (system != System::Baseline).then_some(Operation::GetCached),
                transport: Transport::Http1.to_string(),
                clients,
                compare_with: (system != System::Baseline).then_some(limit),
                is_limit: (system == System::Baseline).then_some(limit),
            },
            summary: recorder.summary(Duration::from_secs(1)),
            first_errors: Vec::new(),
        }
    }

    #[test]
    fn ratios_match_the_limit_at_the_same_concurrency() {
        let rows = vec![
            row(System::Baseline, 1, 1, 100),
            row(System::Baseline, 16, 1, 1000),
            row(System::Kapi(Backend::Embedded), 16, 2, 500),
            row(System::Kapi(Backend::Embedded), 64, 2, 500),
        ];
        assert_eq!(
            ratio(&rows[2], &rows).as_deref(),
            Some("50% of bare hyper 1 KiB GET ops/s, p99 2.0×")
        );
        assert_eq!(ratio(&rows[3], &rows), None);
        assert_eq!(ratio(&rows[0], &rows), None);
        let table = markdown(&rows, &rows);
        assert_eq!(table.lines().count(), 2 + rows.len());
        assert!(table.contains("| kapi (embedded) | get | HTTP/1.1 | 16 | 500 |"));
        let results = Results {
            rows,
            ..Results::default()
        };
        assert!(
            results
                .kapi(
                    Backend::Embedded,
                    Operation::GetCached,
                    Transport::Http1,
                    64
                )
                .is_some()
        );
        assert!(
            results
                .limit(Limit::BaselineGet(Transport::Http1), 16)
                .is_some()
        );
    }
}
