//! The targets, each computed from one run's [`Results`] as a ratio with its
//! verdict: met, not met, or not measured in this run. One row per target, backend
//! and transport, with the figure at each client count (a target is met when it is
//! met at every client count measured).

use std::fmt::Write as _;
use std::time::Duration;

use crate::client::Transport;
use crate::report::{Limit, Results, System, ratios};
use crate::run::Backend;
use crate::stats::Millis;
use crate::targets::kapi_http::Operation;

/// Whether a target was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Reached.
    Met,
    /// Measured and missed.
    NotMet,
    /// This run did not measure it (a backend or limit was left out).
    NotMeasured,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Met => "met",
            Verdict::NotMet => "**not met**",
            Verdict::NotMeasured => "not measured",
        })
    }
}

/// One target, as measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Goal {
    /// What is compared.
    pub what: String,
    /// The target.
    pub target: String,
    /// The figures.
    pub measured: String,
    /// Whether it was reached.
    pub verdict: Verdict,
}

/// Every target of the issue, from `results` (`clients`: the run's client counts).
pub fn goals(results: &Results, clients: &[usize]) -> Vec<Goal> {
    let mut goals = Vec::new();
    writes_on_etcd(results, clients, &mut goals);
    cached_reads(results, clients, &mut goals);
    consistent_reads(results, clients, &mut goals);
    list_serialisation(results, &mut goals);
    watch(results, &mut goals);
    embedded_create(results, clients, &mut goals);
    restart(results, &mut goals);
    memory(results, &mut goals);
    wire_formats(results, &mut goals);
    goals
}

/// Accumulates per-client-count figures into one goal.
struct Figures {
    parts: Vec<String>,
    measured: bool,
    met: bool,
}

impl Figures {
    fn new() -> Self {
        Self {
            parts: Vec::new(),
            measured: false,
            met: true,
        }
    }

    fn add(&mut self, part: String, met: bool) {
        self.parts.push(part);
        self.measured = true;
        self.met &= met;
    }

    fn goal(self, what: String, target: &str) -> Goal {
        Goal {
            what,
            target: target.to_string(),
            verdict: match (self.measured, self.met) {
                (false, _) => Verdict::NotMeasured,
                (true, true) => Verdict::Met,
                (true, false) => Verdict::NotMet,
            },
            measured: if self.parts.is_empty() {
                "—".to_string()
            } else {
                self.parts.join("; ")
            },
        }
    }
}

/// Create and update through kapi on etcd: ≥ 80 % of etcd's transaction throughput
/// at the same concurrency, p99 ≤ 1.5× etcd's.
fn writes_on_etcd(results: &Results, clients: &[usize], goals: &mut Vec<Goal>) {
    for (operation, limit) in [
        (Operation::Create, Limit::EtcdTxnCreate),
        (Operation::Update, Limit::EtcdTxnUpdate),
    ] {
        for transport in Transport::ALL {
            let mut figures = Figures::new();
            for &c in clients {
                let (Some(ours), Some(theirs)) = (
                    results.kapi(Backend::Etcd, operation, transport, c),
                    results.limit(limit, c),
                ) else {
                    continue;
                };
                if let Some((ops, p99)) = ratios(&ours.summary, &theirs.summary) {
                    figures.add(
                        format!("c={c}: {:.0} %, p99 {p99:.1}×", 100.0 * ops),
                        ops >= 0.8 && p99 <= 1.5,
                    );
                }
            }
            goals.push(figures.goal(
                format!("kapi (etcd) {operation} / {}, {transport}", limit.name()),
                "≥ 80 % ops/s, p99 ≤ 1.5×",
            ));
        }
    }
}

/// Get by name and lists with `resourceVersion=0`: ≥ 60 % of the bare server's
/// requests/s for the same body size over the same transport.
fn cached_reads(results: &Results, clients: &[usize], goals: &mut Vec<Goal>) {
    let mut operations = vec![Operation::GetCached];
    let mut sizes: Vec<usize> = results
        .rows
        .iter()
        .filter_map(|r| match r.cell.kapi {
            Some(Operation::List(n)) => Some(n),
            _ => None,
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    operations.extend(sizes.into_iter().map(Operation::List));
    for backend in [Backend::Embedded, Backend::Etcd] {
        for &operation in &operations {
            for transport in Transport::ALL {
                let limit = match operation {
                    Operation::List(n) => Limit::BaselineList(transport, n),
                    _ => Limit::BaselineGet(transport),
                };
                let mut figures = Figures::new();
                // Lists run at client counts of their own.
                let mut measured: Vec<usize> = results
                    .rows
                    .iter()
                    .filter(|r| {
                        r.cell.system == System::Kapi(backend) && r.cell.kapi == Some(operation)
                    })
                    .map(|r| r.cell.clients)
                    .chain(clients.iter().copied())
                    .collect();
                measured.sort_unstable();
                measured.dedup();
                for c in measured {
                    let (Some(ours), Some(theirs)) = (
                        results.kapi(backend, operation, transport, c),
                        results.limit(limit, c),
                    ) else {
                        continue;
                    };
                    if let Some((ops, _)) = ratios(&ours.summary, &theirs.summary) {
                        figures.add(format!("c={c}: {:.0} %", 100.0 * ops), ops >= 0.6);
                    }
                }
                goals.push(figures.goal(
                    format!(
                        "kapi ({backend}) {operation} / {}, {transport}",
                        limit.name()
                    ),
                    "≥ 60 % requests/s",
                ));
            }
        }
    }
}

/// Get by name without `resourceVersion` (a consistent read, from the watch cache once
/// it has caught up with the store): ≥ 50 % of a `resourceVersion=0` get's requests/s
/// in the same run, backend, transport and concurrency.
fn consistent_reads(results: &Results, clients: &[usize], goals: &mut Vec<Goal>) {
    for backend in [Backend::Embedded, Backend::Etcd] {
        for transport in Transport::ALL {
            let mut figures = Figures::new();
            for &c in clients {
                let (Some(consistent), Some(cached)) = (
                    results.kapi(backend, Operation::GetConsistent, transport, c),
                    results.kapi(backend, Operation::GetCached, transport, c),
                ) else {
                    continue;
                };
                if let Some((ops, _)) = ratios(&consistent.summary, &cached.summary) {
                    figures.add(format!("c={c}: {:.0} %", 100.0 * ops), ops >= 0.5);
                }
            }
            goals.push(figures.goal(
                format!("kapi ({backend}) get (consistent) / get rv=0, {transport}"),
                "≥ 50 % requests/s",
            ));
        }
    }
}

/// The largest list at one client in under twice the time of serialising it once.
fn list_serialisation(results: &Results, goals: &mut Vec<Goal>) {
    for backend in [Backend::Embedded, Backend::Etcd] {
        let Some((_, reference)) = results.serialization.iter().find(|(b, _)| *b == backend) else {
            goals.push(Figures::new().goal(
                format!(
                    "kapi ({backend}) largest list, p50 at 1 client / one serde_json::to_vec of it"
                ),
                "< 2×",
            ));
            continue;
        };
        for transport in Transport::ALL {
            let mut figures = Figures::new();
            let list = Operation::List(reference.objects);
            let lowest = results
                .rows
                .iter()
                .filter(|r| {
                    r.cell.system == System::Kapi(backend)
                        && r.cell.kapi == Some(list)
                        && r.cell.transport == transport.to_string()
                })
                .min_by_key(|r| r.cell.clients);
            if let Some(row) = lowest {
                let multiple =
                    row.summary.p50.as_secs_f64() / reference.median.as_secs_f64().max(1e-9);
                figures.add(
                    format!(
                        "c={}: p50 {} / {} = {multiple:.1}×",
                        row.cell.clients,
                        Millis(row.summary.p50),
                        Millis(reference.median)
                    ),
                    multiple < 2.0,
                );
            }
            goals.push(figures.goal(
                format!("kapi ({backend}) {list} p50 / one serde_json::to_vec of it, {transport}"),
                "< 2×",
            ));
        }
    }
}

/// 10,000 watchers of one resource, p99 from write acknowledgement to receipt
/// ≤ 50 ms at 100 writes/s: the largest fan-out of each backend, which must also have
/// kept the rate (acknowledged ≥ 95 % of it) and missed nothing.
fn watch(results: &Results, goals: &mut Vec<Goal>) {
    for backend in [Backend::Embedded, Backend::Etcd] {
        let mut figures = Figures::new();
        let largest = results
            .fan_outs
            .iter()
            .filter(|f| f.system == System::Kapi(backend))
            .max_by_key(|f| f.measured.spec.watchers);
        if let Some(row) = largest {
            let m = &row.measured;
            let s = m.summary();
            let kept_rate = m.acked_rate >= 0.95 * f64::from(m.spec.rate);
            figures.add(
                format!(
                    "W={}: p99 {}, {:.1} of {} writes/s acknowledged, {} events missed",
                    m.spec.watchers,
                    Millis(s.p99),
                    m.acked_rate,
                    m.spec.rate,
                    m.missed
                ),
                s.p99 <= Duration::from_millis(50)
                    && kept_rate
                    && s.errors == 0
                    && m.spec.watchers >= 10_000
                    && m.spec.rate >= 100,
            );
        }
        goals.push(figures.goal(
            format!("kapi ({backend}) watch fan-out, write ack → event"),
            "W = 10,000 at 100 writes/s: p99 ≤ 50 ms, none missed",
        ));
    }
}

/// The embedded store: create throughput ≥ 2× etcd's transaction create at the
/// highest client count, through kapi and through the store's own API.
fn embedded_create(results: &Results, clients: &[usize], goals: &mut Vec<Goal>) {
    let Some(&c) = clients.iter().max() else {
        return;
    };
    let etcd = results.limit(Limit::EtcdTxnCreate, c);
    for transport in Transport::ALL {
        let mut figures = Figures::new();
        if let (Some(ours), Some(theirs)) = (
            results.kapi(Backend::Embedded, Operation::Create, transport, c),
            etcd,
        ) {
            if let Some((ops, _)) = ratios(&ours.summary, &theirs.summary) {
                figures.add(format!("c={c}: {ops:.2}×"), ops >= 2.0);
            }
        }
        goals.push(figures.goal(
            format!("kapi (embedded) create / etcd txn create, {transport}"),
            "≥ 2×",
        ));
    }
    let mut figures = Figures::new();
    if let (Some(ours), Some(theirs)) = (results.limit(Limit::StoreCreate, c), etcd) {
        if let Some((ops, _)) = ratios(&ours.summary, &theirs.summary) {
            figures.add(format!("c={c}: {ops:.2}×"), ops >= 2.0);
        }
    }
    goals.push(figures.goal(
        "embedded store API create / etcd txn create".to_string(),
        "≥ 2×",
    ));
}

/// A restart of kapi on the embedded store with 100,000 objects ready to serve in
/// under 2 s.
fn restart(results: &Results, goals: &mut Vec<Goal>) {
    let mut figures = Figures::new();
    let row = results
        .memory
        .iter()
        .find(|m| m.backend == Backend::Embedded);
    if let Some((row, restart)) = row.and_then(|m| m.restart.map(|r| (m, r))) {
        figures.add(
            format!(
                "{} objects: /readyz after {}, first rv=0 list after {} (kapi does not wait \
                 for its watch cache to be ready)",
                row.objects,
                Millis(restart.ready),
                Millis(restart.first_read)
            ),
            restart.first_read < Duration::from_secs(2) && row.objects >= 100_000,
        );
    }
    goals.push(figures.goal(
        "kapi (embedded) restart, ready to serve".to_string(),
        "100,000 objects: < 2 s",
    ));
}

/// The watch cache holds 100,000 objects of 1 KiB in no more than 1.5× their JSON,
/// counted as the growth over the whole load, fixed costs included; what one more
/// cached object costs (the growth over the second half) is shown beside it.
fn memory(results: &Results, goals: &mut Vec<Goal>) {
    for backend in [Backend::Embedded, Backend::Etcd] {
        let mut figures = Figures::new();
        if let Some(row) = results.memory.iter().find(|m| m.backend == backend) {
            figures.add(
                format!(
                    "{} objects: {:.0} B per object / {} B of JSON = {:.2}× (over the second half of the load: {:.0} B = {:.2}×)",
                    row.objects,
                    row.per_object(),
                    row.object_json,
                    row.per_object_ratio(),
                    row.per_cached_object(),
                    row.per_cached_object_ratio()
                ),
                row.per_object_ratio() <= 1.5 && row.objects >= 100_000,
            );
        }
        goals.push(figures.goal(
            format!("kapi ({backend}) memory per cached object / its JSON"),
            "100,000 objects: ≤ 1.5×",
        ));
    }
}

/// Protobuf at least as fast as JSON on every cell of the wire formats' comparison
/// (requests/s), and its fan-outs' p99 no longer than JSON's.
fn wire_formats(results: &Results, goals: &mut Vec<Goal>) {
    let mut figures = Figures::new();
    for (json, protobuf) in crate::report::wire_pairs(&results.wire) {
        let ratio = protobuf.summary.ops_per_sec / json.summary.ops_per_sec.max(1e-9);
        figures.add(
            format!(
                "{} {} c={}: {ratio:.2}×",
                json.operation, json.transport, json.clients
            ),
            ratio >= 1.0,
        );
    }
    goals.push(figures.goal(
        "kapi protobuf / JSON, ConfigMaps".to_string(),
        "≥ 1× requests/s on every cell",
    ));
    // Throughput on two shared cores moves by several per cent between runs; kapi's
    // own CPU time per request is the steadier measure of what each format costs it.
    let mut figures = Figures::new();
    for (json, protobuf) in crate::report::wire_pairs(&results.wire) {
        let (Some(j), Some(p)) = (json.server_cpu_per_op, protobuf.server_cpu_per_op) else {
            continue;
        };
        let ratio = p.as_secs_f64() / j.as_secs_f64().max(1e-12);
        figures.add(
            format!(
                "{} {} c={}: {ratio:.2}×",
                json.operation, json.transport, json.clients
            ),
            ratio <= 1.0,
        );
    }
    goals.push(figures.goal(
        "kapi CPU per request, protobuf / JSON, ConfigMaps".to_string(),
        "≤ 1× on every cell",
    ));
    let mut figures = Figures::new();
    for json in results
        .wire_fan_outs
        .iter()
        .filter(|f| f.encoding == crate::targets::wire::Encoding::Json)
    {
        let watchers = json.row.measured.spec.watchers;
        let Some(protobuf) = results.wire_fan_outs.iter().find(|f| {
            f.encoding == crate::targets::wire::Encoding::Protobuf
                && f.row.measured.spec.watchers == watchers
        }) else {
            continue;
        };
        let (j, p) = (json.row.measured.summary(), protobuf.row.measured.summary());
        figures.add(
            format!(
                "W={watchers}: p99 {} protobuf, {} JSON",
                Millis(p.p99),
                Millis(j.p99)
            ),
            p.p99 <= j.p99 && p.errors == 0,
        );
    }
    goals.push(figures.goal(
        "kapi protobuf / JSON watch fan-out, write ack → event".to_string(),
        "p99 no longer, none missed",
    ));
}

/// The Markdown table of `goals`.
pub fn markdown(goals: &[Goal]) -> String {
    let mut out = String::new();
    out.push_str("| what | target | measured | verdict |\n|---|---|---|---|\n");
    for goal in goals {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            goal.what, goal.target, goal.measured, goal.verdict
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_run_measures_nothing() {
        let goals = goals(&Results::default(), &[1, 16, 64]);
        assert!(!goals.is_empty());
        assert!(goals.iter().all(|g| g.verdict == Verdict::NotMeasured));
        assert_eq!(markdown(&goals).lines().count(), 2 + goals.len());
    }
}
