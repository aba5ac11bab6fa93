//! Scale-out: several `kapi serve` replicas over a 3-member etcd cluster on loopback.
//!
//! - Clients write through every replica at once; a watch on each replica sees every
//!   acknowledged write, in revision order, exactly once, and all watches agree.
//! - The controllers and compaction run in exactly one replica, the holder of the
//!   `kube-system/kapi-controllers` Lease: killing it (SIGKILL), stopping it (SIGTERM)
//!   or freezing it (SIGSTOP) hands the work over within the lease duration, and no
//!   two replicas lead at once.

use std::io::{BufRead, BufReader};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use kapi_tests::Kapi;
use kapi_tests::cluster::{Cluster, FAST_LEADER_ELECTION};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/rep/configmaps";

/// One acknowledged write: what the watch must show for it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Ack {
    kind: &'static str,
    name: String,
    resource_version: u64,
}

fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {obj}"))
}

/// Collects the events of a watch into `into`, line by line, in a thread of its own; it
/// ends with the watch (its `timeoutSeconds`, or the server going away).
fn spawn_watch(kapi: &Kapi, path: &str, into: Arc<Mutex<Vec<Value>>>) {
    let res = kapi
        .agent()
        .get(&format!("{}{path}", kapi.url()))
        .call()
        .expect("the watch starts");
    std::thread::spawn(move || {
        for line in BufReader::new(res.into_body().into_reader()).lines() {
            let Ok(line) = line else { return };
            if !line.trim().is_empty() {
                let event: Value = serde_json::from_str(&line).expect("JSON lines");
                into.lock().unwrap().push(event);
            }
        }
    });
}

#[test]
fn writes_through_every_replica_reach_every_watch_in_order_exactly_once() {
    let cluster = Cluster::start(3, 3, &FAST_LEADER_ELECTION);
    let (code, body) = cluster.replica(0).request(
        "POST",
        "/api/v1/namespaces",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rep"}})),
    );
    assert_eq!(code, 201, "{body}");
    let (_, list) = cluster.replica(1).request("GET", CONFIGMAPS, JSON, None);
    let start = rv_of(&list);

    let watches: Vec<Arc<Mutex<Vec<Value>>>> = cluster
        .replicas
        .iter()
        .map(|replica| {
            let events = Arc::new(Mutex::new(Vec::new()));
            spawn_watch(
                replica,
                &format!("{CONFIGMAPS}?watch=true&resourceVersion={start}&timeoutSeconds=120"),
                events.clone(),
            );
            events
        })
        .collect();

    // Three writers per replica, each on keys of its own: creates, updates with
    // resourceVersion preconditions, a delete.
    let writers_per_replica = 3;
    let writers = cluster.replicas.len() * writers_per_replica;
    let barrier = Arc::new(Barrier::new(writers));
    let acks: Vec<Ack> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let replica = cluster.replica(w % cluster.replicas.len());
                let barrier = barrier.clone();
                scope.spawn(move || {
                    barrier.wait();
                    let mut acks = Vec::new();
                    let mut objects = Vec::new();
                    for k in 0..4 {
                        let name = format!("w{w}-{k}");
                        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": name}, "data": {"v": "0"}});
                        let (code, created) = replica.request("POST", CONFIGMAPS, JSON, Some(&cm));
                        assert_eq!(code, 201, "{created}");
                        acks.push(Ack {
                            kind: "ADDED",
                            name,
                            resource_version: rv_of(&created),
                        });
                        objects.push(created);
                    }
                    for round in 1..=5 {
                        for obj in objects.iter_mut() {
                            obj["data"]["v"] = json!(round.to_string());
                            let name = obj["metadata"]["name"].as_str().unwrap().to_string();
                            let (code, updated) = replica.request(
                                "PUT",
                                &format!("{CONFIGMAPS}/{name}"),
                                JSON,
                                Some(obj),
                            );
                            assert_eq!(code, 200, "{updated}");
                            acks.push(Ack {
                                kind: "MODIFIED",
                                name,
                                resource_version: rv_of(&updated),
                            });
                            *obj = updated;
                        }
                    }
                    let name = format!("w{w}-0");
                    let (code, deleted) =
                        replica.request("DELETE", &format!("{CONFIGMAPS}/{name}"), JSON, None);
                    assert_eq!(code, 200, "{deleted}");
                    // The deletion's own revision is only in the watch event.
                    acks.push(Ack {
                        kind: "DELETED",
                        name,
                        resource_version: 0,
                    });
                    acks
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("writer"))
            .collect()
    });
    assert_eq!(acks.len(), writers * 25);

    let deadline = Instant::now() + Duration::from_secs(60);
    while watches.iter().any(|w| w.lock().unwrap().len() < acks.len()) {
        assert!(
            Instant::now() < deadline,
            "watches saw {:?} of {} events\n{}",
            watches
                .iter()
                .map(|w| w.lock().unwrap().len())
                .collect::<Vec<_>>(),
            acks.len(),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut expected = acks.clone();
    expected.sort();
    let mut first: Option<Vec<(String, String, u64)>> = None;
    for (i, watch) in watches.iter().enumerate() {
        let events = watch.lock().unwrap().clone();
        assert_eq!(events.len(), acks.len(), "watch {i}: extra events");
        let seen: Vec<(String, String, u64)> = events
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap().to_string(),
                    e["object"]["metadata"]["name"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                    rv_of(&e["object"]),
                )
            })
            .collect();
        // Revision order, no duplicates.
        for pair in seen.windows(2) {
            assert!(
                pair[0].2 < pair[1].2,
                "watch {i}: {:?} then {:?}",
                pair[0],
                pair[1]
            );
        }
        // Every acknowledged write, nothing else.
        let mut got: Vec<Ack> = seen
            .iter()
            .map(|(kind, name, rv)| Ack {
                kind: match kind.as_str() {
                    "ADDED" => "ADDED",
                    "MODIFIED" => "MODIFIED",
                    "DELETED" => "DELETED",
                    other => panic!("watch {i}: unexpected {other} event"),
                },
                name: name.clone(),
                resource_version: if kind == "DELETED" { 0 } else { *rv },
            })
            .collect();
        got.sort();
        assert_eq!(got, expected, "watch {i}");
        // Every replica's watch shows the same history.
        match &first {
            None => first = Some(seen),
            Some(f) => assert_eq!(&seen, f, "watch {i} differs from watch 0"),
        }
    }
}

/// Whether `kapi` reports that it leads (`leader_election_master_status 1`).
fn leading(kapi: &Kapi) -> Option<bool> {
    let res = kapi.exchange("GET", "/metrics", JSON, None, None);
    (res.code == 200).then(|| {
        res.body
            .lines()
            .any(|l| l == "leader_election_master_status 1")
    })
}

fn lease(kapi: &Kapi) -> Value {
    let (code, lease) = kapi.request(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kapi-controllers",
        JSON,
        None,
    );
    assert_eq!(code, 200, "{lease}");
    lease
}

/// Polls every 25 ms until exactly one of the running replicas leads; returns which,
/// and how long it took. Panics if two lead at once at any poll.
fn wait_single_leader(
    cluster: &Cluster,
    running: &[usize],
    timeout: Duration,
) -> (usize, Duration) {
    let started = Instant::now();
    loop {
        let leaders: Vec<usize> = running
            .iter()
            .copied()
            .filter(|&i| leading(cluster.replica(i)) == Some(true))
            .collect();
        assert!(
            leaders.len() <= 1,
            "replicas {leaders:?} lead at once\n{}",
            cluster.logs()
        );
        if let [one] = leaders[..] {
            return (one, started.elapsed());
        }
        assert!(
            started.elapsed() < timeout,
            "no leader among {running:?} after {timeout:?}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Watches `running` for `period`: never two leaders, always the same one.
fn steady_leader(cluster: &Cluster, running: &[usize], leader: usize, period: Duration) {
    let until = Instant::now() + period;
    while Instant::now() < until {
        for &i in running {
            let leads = leading(cluster.replica(i));
            assert_eq!(leads, Some(i == leader), "replica {i}\n{}", cluster.logs());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Deletes a namespace with a ConfigMap in it; only a running namespace controller (the
/// leader's) empties it and lets it go.
fn namespace_goes(kapi: &Kapi, name: &str) {
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
    );
    assert_eq!(code, 201, "{body}");
    let (code, body) = kapi.request(
        "POST",
        &format!("/api/v1/namespaces/{name}/configmaps"),
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})),
    );
    assert_eq!(code, 201, "{body}");
    let (code, body) = kapi.request("DELETE", &format!("/api/v1/namespaces/{name}"), JSON, None);
    assert_eq!(code, 200, "{body}");
    kapi.poll(
        &format!("/api/v1/namespaces/{name}"),
        Duration::from_secs(20),
        "the namespace controller finishes the namespace",
        |code, _| code == 404,
    );
}

#[test]
fn one_replica_leads_and_hands_over_on_kill_stop_and_freeze() {
    let lease_duration = Duration::from_secs(3);
    let retry = Duration::from_millis(500);
    // Expiry is judged from the last change a candidate saw, which it sees up to a
    // retry period late, and it tries again a retry period (plus jitter) later.
    let handover_bound = lease_duration + retry * 3 + Duration::from_secs(1);
    let mut cluster = Cluster::start(3, 3, &FAST_LEADER_ELECTION);
    let all = [0, 1, 2];
    let (leader, _) = wait_single_leader(&cluster, &all, Duration::from_secs(15));
    steady_leader(&cluster, &all, leader, Duration::from_secs(2));
    let first = lease(cluster.replica(0));
    let holder = first["spec"]["holderIdentity"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!holder.is_empty(), "{first}");
    assert_eq!(first["spec"]["leaseDurationSeconds"], 3);
    namespace_goes(cluster.replica((leader + 1) % 3), "before");

    // SIGKILL: the Lease expires and another replica takes it.
    let killed_at = Instant::now();
    cluster.kill_replica(leader);
    let running: Vec<usize> = all.iter().copied().filter(|&i| i != leader).collect();
    let (next, _) = wait_single_leader(&cluster, &running, handover_bound * 2);
    let after_kill = killed_at.elapsed();
    assert!(
        after_kill <= handover_bound,
        "handover after SIGKILL took {after_kill:?}"
    );
    let second = lease(cluster.replica(next));
    assert_ne!(
        second["spec"]["holderIdentity"],
        holder.as_str(),
        "{second}"
    );
    assert_eq!(
        second["spec"]["leaseTransitions"].as_i64(),
        first["spec"]["leaseTransitions"].as_i64().map(|t| t + 1),
        "{second}"
    );
    namespace_goes(cluster.replica(next), "after-kill");

    // The killed replica comes back as a follower.
    cluster.restart_replica(leader);
    steady_leader(&cluster, &all, next, Duration::from_secs(2));

    // SIGSTOP past the lease duration: another replica takes over, and the frozen one
    // stands down as soon as it runs again.
    let frozen = next;
    let pid = cluster.replica(frozen).pid().expect("running");
    signal(pid, "STOP");
    let others: Vec<usize> = all.iter().copied().filter(|&i| i != frozen).collect();
    let (thawed_leader, after_freeze) = wait_single_leader(&cluster, &others, handover_bound * 2);
    assert!(
        after_freeze <= handover_bound,
        "handover after SIGSTOP took {after_freeze:?}"
    );
    signal(pid, "CONT");
    let thawed = Instant::now();
    while leading(cluster.replica(frozen)) != Some(false) {
        assert!(
            thawed.elapsed() < Duration::from_secs(5),
            "the thawed replica still leads"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    let stood_down = thawed.elapsed();
    steady_leader(&cluster, &all, thawed_leader, Duration::from_secs(2));

    // SIGTERM: the leader gives the Lease up on its way out, so the next one need not
    // wait for it to expire.
    let stopped_at = Instant::now();
    assert!(cluster.replicas[thawed_leader].stop(), "clean exit");
    let rest: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| i != thawed_leader)
        .collect();
    let (last, after_stop) = wait_single_leader(&cluster, &rest, handover_bound * 2);
    assert!(
        after_stop < lease_duration,
        "handover after SIGTERM took {after_stop:?}"
    );
    namespace_goes(cluster.replica(last), "after-stop");
    eprintln!(
        "handover: SIGKILL {after_kill:?}, SIGSTOP {after_freeze:?} (thawed replica stood down in {stood_down:?}), SIGTERM {after_stop:?}"
    );
}

fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn the_embedded_store_runs_its_controllers_without_a_lease() {
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    assert_eq!(leading(&kapi), Some(false));
    namespace_goes(&kapi, "solo");
    let (code, _) = kapi.request(
        "GET",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kapi-controllers",
        JSON,
        None,
    );
    assert_eq!(code, 404);
}
