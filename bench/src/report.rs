//! What a run prints: one Markdown table row per cell (operation, transport, clients,
//! ops/s, p50, p99, max, errors) and, for kapi's operations that have a limit measured
//! in the same run, the ratio to it.

use std::fmt::Write as _;

use crate::client::Transport;
use crate::run::Backend;
use crate::stats::{Millis, Summary};

/// What served a cell's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    /// kapi over HTTP on a backend.
    Kapi(Backend),
    /// The bare hyper server.
    Baseline,
    /// etcd, through etcd-client.
    Etcd,
}

impl std::fmt::Display for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            System::Kapi(backend) => write!(f, "kapi ({backend})"),
            System::Baseline => f.write_str("bare hyper"),
            System::Etcd => f.write_str("etcd"),
        }
    }
}

/// A limit kapi's operations are compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The bare hyper server's GET over a transport.
    BaselineGet(Transport),
    /// etcd's transactional create-if-absent.
    EtcdTxnCreate,
    /// etcd's transactional compare-mod-revision update.
    EtcdTxnUpdate,
}

impl Limit {
    fn name(self) -> &'static str {
        match self {
            Limit::BaselineGet(_) => "bare hyper GET",
            Limit::EtcdTxnCreate => "etcd txn create",
            Limit::EtcdTxnUpdate => "etcd txn CAS",
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
    /// How requests travelled.
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
            "{:<12} {:<28} {:<8} c={:<3} {:>9.0} ops/s  p50 {}  p99 {}  max {}  errors {}",
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

/// The ratio of `row` to its limit among `rows` (same limit, same clients), as text.
pub fn ratio(row: &Row, rows: &[Row]) -> Option<String> {
    let limit = row.cell.compare_with?;
    let reference = rows
        .iter()
        .find(|r| r.cell.is_limit == Some(limit) && r.cell.clients == row.cell.clients)?;
    let (ours, theirs) = (&row.summary, &reference.summary);
    if theirs.ops_per_sec <= 0.0 || theirs.p99.is_zero() {
        return None;
    }
    Some(format!(
        "{:.0}% of {} ops/s, p99 {:.1}×",
        100.0 * ours.ops_per_sec / theirs.ops_per_sec,
        limit.name(),
        ours.p99.as_secs_f64() / theirs.p99.as_secs_f64(),
    ))
}

/// The Markdown table of every row.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str(
        "| system | operation | transport | clients | ops/s | p50 | p99 | max | errors | vs limit |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    for row in rows {
        let s = &row.summary;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} |",
            row.cell.system,
            row.cell.operation,
            row.cell.transport,
            row.cell.clients,
            s.ops_per_sec,
            Millis(s.p50),
            Millis(s.p99),
            Millis(s.max),
            s.errors,
            ratio(row, rows).unwrap_or_default(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

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
            Some("50% of bare hyper GET ops/s, p99 2.0×")
        );
        assert_eq!(ratio(&rows[3], &rows), None);
        assert_eq!(ratio(&rows[0], &rows), None);
        let table = markdown(&rows);
        assert_eq!(table.lines().count(), 2 + rows.len());
        assert!(table.contains("| kapi (embedded) | get | HTTP/1.1 | 16 | 500 |"));
    }
}
