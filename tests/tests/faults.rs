//! Faults under load, each with nothing lost: two `kapi serve` replicas over a 3-member
//! etcd cluster carry a mixed load (8 writers on 16 ConfigMaps: 75% updates and 15%
//! deletes with resourceVersion preconditions, 10% creates; list clients; watchers
//! from random recent resourceVersions that reconnect from their last one) while the
//! harness kills an etcd follower, kills the etcd leader, freezes the leader past the
//! election timeout, kills a replica, restarts every replica at once, and compacts
//! etcd while watches are open (a watch from before the compaction then gets 410 and
//! the watchers re-list). After each,
//! [`kapi_tests::load::check`] compares every answer with the store's history.
//!
//! `KAPI_FAULT_SECONDS` sets the load's length around each fault (default 4: 2 before,
//! 2 after) and `KAPI_FAULT_SEEDS` how many seeds each fault runs with (default 1);
//! RELIABILITY.md records a longer run.

use std::time::Duration;

use kapi_tests::cluster::{Cluster, FAST_LEADER_ELECTION};
use kapi_tests::load::{self, Collection, Endpoints, Load, LoadConfig, Outcome};
use serde_json::json;

const JSON: &str = "application/json";

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A fault: what breaks, and how it heals.
struct Fault {
    name: &'static str,
    inject: fn(&mut Cluster) -> usize,
    heal: fn(&mut Cluster, usize),
    /// How long the fault lasts.
    window: Duration,
    /// Whether the history is compacted away by the end, so it must be recorded as it
    /// happens rather than replayed.
    compacts: bool,
}

fn faults() -> Vec<Fault> {
    vec![
        Fault {
            name: "etcd-follower-sigkill",
            inject: |c| {
                let leader = c.etcd.wait_leader();
                let follower = (leader + 1) % c.etcd.size();
                c.etcd.kill(follower);
                follower
            },
            heal: |c, m| c.etcd.restart(m),
            window: Duration::from_secs(2),
            compacts: false,
        },
        Fault {
            name: "etcd-leader-sigkill",
            inject: |c| {
                let leader = c.etcd.wait_leader();
                c.etcd.kill(leader);
                leader
            },
            heal: |c, m| c.etcd.restart(m),
            window: Duration::from_secs(2),
            compacts: false,
        },
        Fault {
            name: "etcd-leader-sigstop",
            inject: |c| {
                let leader = c.etcd.wait_leader();
                c.etcd.pause(leader);
                leader
            },
            // Past etcd's 1 s election timeout.
            heal: |c, m| c.etcd.resume(m),
            window: Duration::from_millis(2500),
            compacts: false,
        },
        Fault {
            name: "replica-sigkill",
            inject: |c| {
                c.kill_replica(1);
                1
            },
            heal: |c, r| c.restart_replica(r),
            window: Duration::from_secs(1),
            compacts: false,
        },
        Fault {
            name: "every-replica-restart",
            inject: |c| {
                for r in c.replicas.iter_mut() {
                    assert!(r.stop(), "a clean exit");
                }
                0
            },
            heal: |c, _| {
                for i in 0..c.replicas.len() {
                    c.restart_replica(i);
                }
            },
            window: Duration::from_millis(500),
            compacts: false,
        },
        Fault {
            name: "etcd-compaction",
            inject: |c| {
                // Everything up to now: watches and continue tokens from before it are
                // too old.
                let (_, list) = c
                    .replica(0)
                    .request("GET", "/api/v1/namespaces", JSON, None);
                let current: i64 = list["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|v| v.parse().ok())
                    .expect("a resourceVersion");
                let leader = c.etcd.wait_leader();
                let answer = c.etcd.compact(leader, current);
                assert!(
                    answer.is_some_and(|a| a.get("header").is_some()),
                    "compaction"
                );
                current as usize
            },
            heal: |_, _| {},
            window: Duration::from_millis(500),
            compacts: true,
        },
    ]
}

#[test]
fn nothing_is_lost_under_faults() {
    let around = Duration::from_secs(env_number("KAPI_FAULT_SECONDS", 4));
    let seeds = env_number("KAPI_FAULT_SEEDS", 1);
    let mut cluster = Cluster::start(3, 2, &FAST_LEADER_ELECTION);
    let endpoints = Endpoints::of(&cluster.replicas);
    let mut report = Vec::new();
    for seed in 0..seeds {
        for (f, fault) in faults().into_iter().enumerate() {
            let namespace = format!("fault-{}-{seed}", fault.name);
            let (code, body) = cluster.replica(0).request(
                "POST",
                "/api/v1/namespaces",
                JSON,
                Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})),
            );
            assert_eq!(code, 201, "{body}");
            let collection = format!("/api/v1/namespaces/{namespace}/configmaps");
            let (_, list) = cluster.replica(0).request("GET", &collection, JSON, None);
            let from: u64 = list["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|v| v.parse().ok())
                .expect("a list resourceVersion");

            let recording = fault.compacts.then(|| {
                let endpoints = endpoints.clone();
                let collection = collection.clone();
                std::thread::spawn(move || load::replay(&endpoints, 0, &collection, from))
            });
            let mut load = Load::start(
                endpoints.clone(),
                LoadConfig {
                    collection: Collection::config_maps(),
                    namespace: namespace.clone(),
                    writers: 8,
                    keys: 16,
                    listers: 2,
                    watchers: 3,
                    seed: seed * 1000 + f as u64 + 1,
                },
            );
            std::thread::sleep(around / 4);
            load.start_watchers();
            std::thread::sleep(around / 4);
            let before = load.acked();
            let fault_at = load.elapsed();
            let rate = before as f64 / fault_at.as_secs_f64();
            let target = (fault.inject)(&mut cluster);
            std::thread::sleep(fault.window);
            let healing_at = load.elapsed();
            (fault.heal)(&mut cluster, target);
            endpoints.refresh(&cluster.replicas);
            let healed_at = load.elapsed();
            std::thread::sleep(around / 2);
            let recorded = load.stop("sentinel");

            let history = match recording {
                Some(thread) => {
                    // A watch from before the compaction, and older than the watch
                    // cache's window (which still serves what it holds, as kube's
                    // does), is refused with 410.
                    let res = cluster.replica(1).exchange(
                        "GET",
                        &format!("{collection}?watch=true&resourceVersion=2&timeoutSeconds=5"),
                        JSON,
                        None,
                        None,
                    );
                    assert!(
                        res.body.contains("\"code\":410") && res.body.contains("Expired"),
                        "a watch from before the compaction: {} {}",
                        res.code,
                        res.body
                    );
                    // A re-list, and a watch from it, work.
                    let (code, list) = cluster.replica(1).request("GET", &collection, JSON, None);
                    assert_eq!(code, 200, "{list}");
                    let rv = list["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or_default();
                    let res = cluster.replica(1).exchange(
                        "GET",
                        &format!("{collection}?watch=true&resourceVersion={rv}&timeoutSeconds=1"),
                        JSON,
                        None,
                        None,
                    );
                    assert_eq!(res.code, 200, "{}", res.body);
                    assert!(!res.body.contains("ERROR"), "{}", res.body);
                    thread.join().expect("the recording watch")
                }
                None => load::replay(&endpoints, 0, &collection, from),
            };
            let (_, final_state) = cluster.replica(1).request("GET", &collection, JSON, None);
            let (figures, problems) = load::check(&recorded, &history, &final_state);
            assert!(
                problems.is_empty(),
                "{} (seed {seed}): {} problems:\n{}\n{}",
                fault.name,
                problems.len(),
                problems.join("\n"),
                cluster.logs()
            );
            // Errors only while the fault lasts, and for a bounded time after.
            let last_error = recorded.errors.iter().map(|(t, _)| *t).max();
            let recovery = last_error.map_or(Duration::ZERO, |t| t.saturating_sub(healed_at));
            let early: Vec<_> = recorded
                .errors
                .iter()
                .filter(|(t, _)| *t < fault_at)
                .collect();
            assert!(
                early.is_empty(),
                "{}: errors before the fault: {early:?}",
                fault.name
            );
            assert!(
                recovery < Duration::from_secs(15),
                "{}: errors {recovery:?} after the fault healed: {:?}",
                fault.name,
                recorded.errors.last()
            );
            let unknown = recorded
                .ops
                .iter()
                .filter(|op| matches!(op.outcome, Outcome::Unknown(_)))
                .count();
            let late: Vec<&String> = recorded
                .errors
                .iter()
                .filter(|(t, _)| *t > healed_at)
                .map(|(_, e)| e)
                .collect();
            if !late.is_empty() {
                eprintln!("{}: errors after healing: {late:?}", fault.name);
            }
            report.push(format!(
                "{:<24} seed {seed}: {:>5.0} writes/s before, fault {:?} + healing {:?}, {} ops ({} acked, {} refused, {} unknown of which {} applied), {} changes, {} watched events ({} reconnects, {} re-lists), {} reads, {} errors, last {:?} after healing",
                fault.name,
                rate,
                healing_at - fault_at,
                healed_at - healing_at,
                recorded.ops.len(),
                figures.acked,
                figures.refused,
                unknown,
                figures.unknown_applied,
                figures.changes,
                figures.watched_events,
                recorded.watched.iter().map(|w| w.reconnects).sum::<usize>(),
                recorded.watched.iter().map(|w| w.relists).sum::<usize>(),
                recorded.reads,
                recorded.errors.len(),
                recovery,
            ));
        }
    }
    eprintln!("{}", report.join("\n"));
}
