//! Nothing lost (issue #8): the server under crashes and storage maintenance.
//!
//! - The embedded store is killed (SIGKILL) in the middle of a concurrent write load,
//!   fifty times over on one data directory: every acknowledged write survives each
//!   restart and the store's revision never goes backwards.
//! - Defragmenting the etcd leader (`etcdctl defrag`) under a write load through a
//!   replica: clients see only retriable errors, and no acknowledged write is lost.
//! - An etcd compaction under open watches and paginated lists: old continue tokens and
//!   watches from compacted revisions get 410 Expired, garbage tokens 400, a
//!   resourceVersion from the future a 504 Timeout, and open watches go on.
//! - Watchers that never read: the server stops feeding them once their buffers fill,
//!   its memory stays bounded, and a watcher that reads keeps up.
//!
//! Measured figures (restart times, latencies, memory) are printed, not asserted.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use kapi_tests::cluster::Cluster;
use kapi_tests::{Backend, Kapi, rss_bytes};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A small deterministic PRNG (SplitMix64), so that a failing run can be repeated with
/// its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Sets a flag when dropped: a scope whose closure panics still stops the threads it
/// waits for (`std::thread::scope` joins them before it unwinds).
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// The seed of this run: `KAPI_DURABILITY_SEED` or a fixed default, printed.
fn seed() -> u64 {
    let seed = std::env::var("KAPI_DURABILITY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6b61_7069);
    eprintln!("seed {seed} (set KAPI_DURABILITY_SEED to repeat another run)");
    seed
}

fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {obj}"))
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"v": value}})
}

/// One request to `url` + `path` ([`kapi_tests::load::call`]): `Err` is an
/// indeterminate outcome (the server killed under it).
fn send(
    agent: &ureq::Agent,
    url: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    kapi_tests::load::call(agent, method, &format!("{url}{path}"), body)
}

/// The highest acknowledged write of a key: its resourceVersion and value.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ack {
    resource_version: u64,
    value: String,
}

/// Keeps, per key, the acknowledged write with the highest resourceVersion.
fn record(acked: &mut BTreeMap<String, Ack>, key: String, ack: Ack) {
    match acked.get(&key) {
        Some(a) if a.resource_version >= ack.resource_version => {}
        _ => {
            acked.insert(key, ack);
        }
    }
}

/// Checks that every acknowledged write is in `items` (name → object): the stored
/// resourceVersion is at least the acknowledged one (a later write, acknowledged or
/// in flight, may have superseded it) and, when equal, so is the value.
fn check_acked(acked: &BTreeMap<String, Ack>, items: &HashMap<String, Value>, when: &str) {
    for (key, ack) in acked {
        let obj = items
            .get(key)
            .unwrap_or_else(|| panic!("{when}: acknowledged {key} {ack:?} is missing"));
        let rv = rv_of(obj);
        assert!(
            rv >= ack.resource_version,
            "{when}: {key} went back from acknowledged {ack:?} to {obj}"
        );
        if rv == ack.resource_version {
            assert_eq!(
                obj["data"]["v"].as_str(),
                Some(ack.value.as_str()),
                "{when}: {key} at its acknowledged resourceVersion has another value"
            );
        }
    }
}

/// The ConfigMaps of `default` by name, and the list's resourceVersion.
fn configmaps(kapi: &Kapi) -> (HashMap<String, Value>, u64) {
    let (code, list) = kapi.request("GET", CONFIGMAPS, JSON, None);
    assert_eq!(code, 200, "{list}");
    let items = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_string(),
                i.clone(),
            )
        })
        .collect();
    (items, rv_of(&list))
}

/// What one crash-loop writer saw.
#[derive(Default)]
struct WriterLog {
    acked: Vec<(String, Ack)>,
    indeterminate: usize,
    /// Answers that no write may get from a healthy server.
    unexpected: Vec<String>,
}

/// Writes `keys` (create, then unconditional updates, each with a fresh value) as fast
/// as the server answers, until `stop` or the first broken connection (a write in
/// flight when the server was killed: indeterminate).
fn crash_loop_writer(
    agent: &ureq::Agent,
    url: &str,
    keys: &[String],
    tag: &str,
    killing: &AtomicBool,
    stop: &AtomicBool,
) -> WriterLog {
    let mut log = WriterLog::default();
    // Whether each key exists, when known: after an indeterminate create it is not.
    let mut exists: Vec<Option<bool>> = vec![None; keys.len()];
    let mut n = 0usize;
    while !stop.load(Ordering::Acquire) {
        let i = n % keys.len();
        let key = &keys[i];
        let value = format!("{tag}-{n}");
        n += 1;
        let body = configmap(key, &value);
        let answer = if exists[i] == Some(true) {
            send(
                agent,
                url,
                "PUT",
                &format!("{CONFIGMAPS}/{key}"),
                Some(&body),
            )
        } else {
            send(agent, url, "POST", CONFIGMAPS, Some(&body))
        };
        match answer {
            Ok((200 | 201, obj)) => {
                exists[i] = Some(true);
                log.acked.push((
                    key.clone(),
                    Ack {
                        resource_version: rv_of(&obj),
                        value,
                    },
                ));
            }
            Ok((409, obj)) if obj["reason"] == "AlreadyExists" => exists[i] = Some(true),
            Ok((404, obj)) if obj["reason"] == "NotFound" => exists[i] = Some(false),
            Ok((code, obj)) => log.unexpected.push(format!("{key}: {code} {obj}")),
            Err(e) => {
                // Only the kill may break a connection; after it the server is gone.
                if !killing.load(Ordering::Acquire) {
                    log.unexpected.push(format!("{key}: {e} before the kill"));
                }
                log.indeterminate += 1;
                break;
            }
        }
    }
    log
}

fn summary(durations: &mut [Duration]) -> String {
    durations.sort();
    let at = |q: f64| durations[((durations.len() - 1) as f64 * q).round() as usize];
    format!(
        "min {:?}, median {:?}, p90 {:?}, max {:?}",
        at(0.0),
        at(0.5),
        at(0.9),
        at(1.0)
    )
}

#[test]
fn the_embedded_store_keeps_every_acknowledged_write_through_fifty_sigkills() {
    const ROUNDS: usize = 50;
    const WRITERS: usize = 4;
    const KEYS_PER_WRITER: usize = 5;
    let mut rng = SplitMix64(seed());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut kapi = Kapi::start_in_dir(dir.path());
    let mut acked: BTreeMap<String, Ack> = BTreeMap::new();
    let mut revision = 0;
    let (mut restarts, mut total_acked, mut total_indeterminate) = (Vec::new(), 0, 0);
    let started = Instant::now();
    for round in 0..ROUNDS {
        // Killed 100-400 ms into the load: within a write's fsync, or between two.
        let kill_after = Duration::from_millis(100 + rng.below(300));
        let (killing, stop) = (AtomicBool::new(false), AtomicBool::new(false));
        let url = kapi.url().to_string();
        let logs: Vec<WriterLog> = std::thread::scope(|scope| {
            let _stop = SetOnDrop(&stop);
            let handles: Vec<_> = (0..WRITERS)
                .map(|w| {
                    let agent = kapi.agent();
                    let (url, killing, stop) = (url.as_str(), &killing, &stop);
                    let keys: Vec<String> = (0..KEYS_PER_WRITER)
                        .map(|k| format!("crash-{w}-{k}"))
                        .collect();
                    scope.spawn(move || {
                        crash_loop_writer(
                            &agent,
                            url,
                            &keys,
                            &format!("r{round}w{w}"),
                            killing,
                            stop,
                        )
                    })
                })
                .collect();
            std::thread::sleep(kill_after);
            killing.store(true, Ordering::Release);
            kapi.kill();
            stop.store(true, Ordering::Release);
            handles
                .into_iter()
                .map(|h| h.join().expect("a writer"))
                .collect()
        });
        for log in logs {
            assert!(
                log.unexpected.is_empty(),
                "round {round}: unexpected answers {:?}\n{}",
                log.unexpected,
                kapi.log_text()
            );
            total_acked += log.acked.len();
            total_indeterminate += log.indeterminate;
            for (key, ack) in log.acked {
                record(&mut acked, key, ack);
            }
        }
        let restart = Instant::now();
        kapi.restart(&[]);
        restarts.push(restart.elapsed());
        let (items, now) = configmaps(&kapi);
        check_acked(&acked, &items, &format!("after kill {}", round + 1));
        let highest = acked.values().map(|a| a.resource_version).max();
        assert!(
            now >= revision && Some(now) >= highest,
            "round {round}: the revision went back to {now} (was {revision}, highest acknowledged {highest:?})"
        );
        revision = now;
    }
    assert!(
        total_acked > ROUNDS * WRITERS,
        "the load barely ran: {total_acked} acknowledged writes"
    );
    eprintln!(
        "crash loop: {ROUNDS} SIGKILLs in {:?}; {total_acked} writes acknowledged, {total_indeterminate} indeterminate, final revision {revision}; restart to ready: {}",
        started.elapsed(),
        summary(&mut restarts)
    );
}

/// A JSON POST to etcd's gRPC gateway at `endpoint` (`http://host:port`), waiting up to
/// `timeout` for the answer.
fn etcd_post(endpoint: &str, path: &str, body: &Value, timeout: Duration) -> Value {
    let addr = endpoint.trim_start_matches("http://");
    let body = body.to_string();
    let mut stream = std::net::TcpStream::connect(addr).expect("connecting to etcd");
    stream.set_read_timeout(Some(timeout)).expect("a timeout");
    write!(
        stream,
        "POST {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("writing to etcd");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .unwrap_or_else(|e| panic!("etcd did not answer {path} within {timeout:?}: {e}"));
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{path}: {response}"
    );
    serde_json::from_str(body).expect("JSON from etcd")
}

/// One write of the defragmentation load.
struct Sample {
    started: Instant,
    latency: Duration,
}

/// p99 and max of the latencies of `samples`.
fn p99_max(samples: &[&Sample]) -> (Duration, Duration) {
    let mut latencies: Vec<Duration> = samples.iter().map(|s| s.latency).collect();
    latencies.sort();
    if latencies.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    let p99 = latencies[((latencies.len() - 1) as f64 * 0.99).round() as usize];
    (p99, *latencies.last().unwrap())
}

/// Whether an answer is one a client may retry: a 429 or 5xx `Status`, or a 409
/// Conflict on the resourceVersion precondition.
fn retriable(code: u16, body: &Value) -> bool {
    let status = body["kind"] == "Status" && body["code"] == code;
    (code == 429 || (500..600).contains(&code)) && status
        || code == 409 && status && body["reason"] == "Conflict"
}

#[test]
fn defragmenting_the_etcd_leader_under_load_loses_nothing_and_answers_retriably() {
    const WRITERS: usize = 4;
    const KEYS_PER_WRITER: usize = 4;
    let cluster = Cluster::start(3, 1, &[]);
    let kapi = cluster.replica(0);
    let leader = cluster.etcd.wait_leader();
    let endpoint = cluster.etcd.endpoint(leader);
    // Bulk outside the API's prefix, so that the defragmentation has a real backend to
    // rewrite (its time grows with the live data) and space to give back.
    let mut rng = SplitMix64(seed());
    let chunk: Vec<u8> = (0..512 * 1024).map(|_| rng.next() as u8).collect();
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let value = b64(&chunk);
    for i in 0..48 {
        etcd_post(
            &endpoint,
            "/v3/kv/put",
            &json!({"key": b64(format!("/bulk/{i}").as_bytes()), "value": value}),
            Duration::from_secs(30),
        );
    }
    let status = |i: usize| {
        etcd_post(
            &cluster.etcd.endpoint(i),
            "/v3/maintenance/status",
            &json!({}),
            Duration::from_secs(10),
        )
    };
    // Half of it deleted and compacted away: the space a defragmentation gives back.
    for i in 0..24 {
        etcd_post(
            &endpoint,
            "/v3/kv/deleterange",
            &json!({"key": b64(format!("/bulk/{i}").as_bytes())}),
            Duration::from_secs(30),
        );
    }
    let revision: i64 = status(leader)["header"]["revision"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .expect("etcd's revision");
    cluster
        .etcd
        .compact(leader, revision)
        .expect("etcd compacts");
    let db_size = |i: usize| -> u64 {
        status(i)["dbSize"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("dbSize")
    };
    let db_before = db_size(leader);

    let stop = AtomicBool::new(false);
    let (defrag_from, defrag_until, acked, samples, errors) = std::thread::scope(|scope| {
        let _stop = SetOnDrop(&stop);
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let stop = &stop;
                let agent = kapi.agent();
                let url = kapi.url().to_string();
                scope.spawn(move || {
                    let mut acked: Vec<(String, Ack)> = Vec::new();
                    let mut samples = Vec::new();
                    let mut errors = Vec::new();
                    let mut objects: Vec<Value> = (0..KEYS_PER_WRITER)
                        .map(|k| {
                            let name = format!("defrag-{w}-{k}");
                            let (code, obj) = send(
                                &agent,
                                &url,
                                "POST",
                                CONFIGMAPS,
                                Some(&configmap(&name, "0")),
                            )
                            .expect("a create");
                            assert_eq!(code, 201, "{obj}");
                            obj
                        })
                        .collect();
                    let mut n = 0usize;
                    while !stop.load(Ordering::Acquire) {
                        let obj = &mut objects[n % KEYS_PER_WRITER];
                        let name = obj["metadata"]["name"].as_str().unwrap().to_string();
                        let value = format!("{w}-{n}");
                        n += 1;
                        // An update with the resourceVersion precondition.
                        let mut next = obj.clone();
                        next["data"]["v"] = json!(value);
                        let started = Instant::now();
                        let answer = send(
                            &agent,
                            &url,
                            "PUT",
                            &format!("{CONFIGMAPS}/{name}"),
                            Some(&next),
                        );
                        samples.push(Sample {
                            started,
                            latency: started.elapsed(),
                        });
                        match answer {
                            Ok((200, updated)) => {
                                acked.push((
                                    name,
                                    Ack {
                                        resource_version: rv_of(&updated),
                                        value,
                                    },
                                ));
                                *obj = updated;
                            }
                            Ok((code, body)) => {
                                errors.push((code, body.clone()));
                                // Retriable or not, start again from what is stored.
                                let (code, fresh) = send(
                                    &agent,
                                    &url,
                                    "GET",
                                    &format!("{CONFIGMAPS}/{name}"),
                                    None,
                                )
                                .expect("a read");
                                if code == 200 {
                                    *obj = fresh;
                                }
                            }
                            Err(e) => errors.push((0, json!(e))),
                        }
                    }
                    (acked, samples, errors)
                })
            })
            .collect();
        // A steady second of load first, for the baseline.
        std::thread::sleep(Duration::from_millis(1500));
        let from = Instant::now();
        let answer = etcd_post(
            &endpoint,
            "/v3/maintenance/defragment",
            &json!({}),
            Duration::from_secs(120),
        );
        let until = Instant::now();
        // etcd 3.4 answers an empty object; a failure is not a 200 (`etcd_post`).
        assert!(answer.is_object(), "defragment: {answer}");
        std::thread::sleep(Duration::from_millis(1000));
        stop.store(true, Ordering::Release);
        let mut acked = Vec::new();
        let mut samples = Vec::new();
        let mut errors = Vec::new();
        for h in writers {
            let (a, s, e) = h.join().expect("a writer");
            acked.extend(a);
            samples.extend(s);
            errors.extend(e);
        }
        (from, until, acked, samples, errors)
    });
    let db_after = db_size(leader);
    // The defragmentation did its work: the freed half is given back.
    assert!(db_after < db_before, "db {db_before} -> {db_after} bytes");

    let not_retriable: Vec<_> = errors.iter().filter(|(c, b)| !retriable(*c, b)).collect();
    assert!(
        not_retriable.is_empty(),
        "answers a client cannot retry: {not_retriable:?}\n{}",
        cluster.logs()
    );
    let mut highest = BTreeMap::new();
    for (key, ack) in acked.iter().cloned() {
        record(&mut highest, key, ack);
    }
    let (items, _) = configmaps(kapi);
    check_acked(&highest, &items, "after the defragmentation");

    let before: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.started + s.latency < defrag_from)
        .collect();
    let during: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.started <= defrag_until && s.started + s.latency >= defrag_from)
        .collect();
    assert!(
        !before.is_empty() && !during.is_empty(),
        "no writes around the defragmentation"
    );
    let (p99_before, max_before) = p99_max(&before);
    let (p99_during, max_during) = p99_max(&during);
    eprintln!(
        "defrag of the etcd leader (member {leader}, db {db_before} -> {db_after} bytes) took {:?}; {} writes acknowledged, {} retriable errors {:?}; write latency before: p99 {p99_before:?}, max {max_before:?} ({} writes); during: p99 {p99_during:?}, max {max_during:?} ({} writes)",
        defrag_until - defrag_from,
        acked.len(),
        errors.len(),
        errors.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        before.len(),
        during.len(),
    );
}

/// Collects the events of a watch into `into`, line by line, in a thread of its own.
fn spawn_watch(kapi: &Kapi, path: &str, into: Arc<Mutex<Vec<Value>>>) {
    let res = kapi
        .streaming_agent()
        .get(&format!("{}{path}", kapi.url()))
        .call()
        .expect("the watch starts");
    assert_eq!(res.status().as_u16(), 200, "watch {path}");
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

/// The first event of a watch (an ERROR for a watch that cannot start), or `None` if
/// the stream ends or stays silent for `timeout`.
fn first_event(kapi: &Kapi, path: &str, timeout: Duration) -> (u16, Option<Value>) {
    let res = kapi
        .streaming_agent()
        .get(&format!("{}{path}", kapi.url()))
        .call()
        .expect("the watch starts");
    let code = res.status().as_u16();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let line = BufReader::new(res.into_body().into_reader())
            .lines()
            .map_while(Result::ok)
            .find(|l| !l.trim().is_empty());
        let _ = tx.send(line.map(|l| serde_json::from_str::<Value>(&l).expect("JSON")));
    });
    (code, rx.recv_timeout(timeout).ok().flatten())
}

/// Waits (bounded) until `events` holds `n` events; returns them.
fn wait_events(events: &Mutex<Vec<Value>>, n: usize, what: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = events.lock().unwrap().clone();
        if now.len() >= n {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {} of {n} events after 30 s: {now:?}",
            now.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// kube-apiserver's message for a continue token whose revision was compacted
/// (`k8s.io/apiserver/pkg/storage/etcd3/errors.go`).
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

#[test]
fn an_etcd_compaction_expires_old_tokens_and_watches_while_open_watches_go_on() {
    const NS: &str = "/api/v1/namespaces/compacted/configmaps";
    let cluster = Cluster::start(1, 1, &["--compaction-interval", "0"]);
    let kapi = cluster.replica(0);
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "compacted"}})),
    );
    assert_eq!(code, 201, "{body}");
    for i in 0..6 {
        let (code, body) = kapi.request("POST", NS, JSON, Some(&configmap(&format!("c{i}"), "0")));
        assert_eq!(code, 201, "{body}");
    }
    let (_, page) = kapi.request("GET", &format!("{NS}?limit=2"), JSON, None);
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_string();
    let before = rv_of(&page);

    // A watch open across the compaction.
    let open = Arc::new(Mutex::new(Vec::new()));
    spawn_watch(
        kapi,
        &format!("{NS}?watch=true&resourceVersion={before}&timeoutSeconds=120"),
        open.clone(),
    );
    let mut written = Vec::new();
    for i in 0..3 {
        let (code, obj) = kapi.request(
            "PUT",
            &format!("{NS}/c{i}"),
            JSON,
            Some(&configmap(&format!("c{i}"), "1")),
        );
        assert_eq!(code, 200, "{obj}");
        written.push(rv_of(&obj));
    }
    let (_, list) = kapi.request("GET", NS, JSON, None);
    let compacted_at = rv_of(&list);
    let answer = cluster
        .etcd
        .compact(0, compacted_at as i64)
        .expect("etcd answers the compaction");
    assert!(answer.get("header").is_some(), "compaction: {answer}");

    // The open watch goes on past the compaction.
    let (code, obj) = kapi.request("POST", NS, JSON, Some(&configmap("after", "0")));
    assert_eq!(code, 201, "{obj}");
    written.push(rv_of(&obj));
    let events = wait_events(&open, written.len(), "the open watch");
    let seen: Vec<(String, u64)> = events
        .iter()
        .map(|e| (e["type"].as_str().unwrap().to_string(), rv_of(&e["object"])))
        .collect();
    let expected: Vec<(String, u64)> = written
        .iter()
        .enumerate()
        .map(|(i, rv)| ((if i < 3 { "MODIFIED" } else { "ADDED" }).to_string(), *rv))
        .collect();
    assert_eq!(seen, expected, "the open watch: {events:?}");

    // The continue token read a compacted revision: 410 Expired, in kube's words, with
    // a token that continues from the same key at the latest revision.
    let (code, gone) = kapi.request("GET", &format!("{NS}?limit=2&continue={token}"), JSON, None);
    assert_eq!(
        (code, gone["reason"].as_str(), gone["code"].as_i64()),
        (410, Some("Expired"), Some(410)),
        "{gone}"
    );
    assert_eq!(gone["message"], INCONSISTENT_CONTINUE, "{gone}");
    let inconsistent = gone["metadata"]["continue"]
        .as_str()
        .unwrap_or_else(|| panic!("no continue token in {gone}"));
    let (code, rest) = kapi.request(
        "GET",
        &format!("{NS}?limit=10&continue={inconsistent}"),
        JSON,
        None,
    );
    assert_eq!(code, 200, "{rest}");
    let names: Vec<&str> = rest["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c2", "c3", "c4", "c5"], "{rest}");
    assert!(rv_of(&rest) > compacted_at, "{rest}");

    // A fresh list, paginated, works.
    let (code, first) = kapi.request("GET", &format!("{NS}?limit=4"), JSON, None);
    assert_eq!(code, 200, "{first}");
    let next = first["metadata"]["continue"].as_str().expect("a token");
    let (code, second) = kapi.request("GET", &format!("{NS}?limit=4&continue={next}"), JSON, None);
    assert_eq!(code, 200, "{second}");
    assert_eq!(
        first["items"].as_array().unwrap().len() + second["items"].as_array().unwrap().len(),
        7
    );

    // Garbage tokens: 400 BadRequest.
    for garbage in [
        "garbage!",
        "bm90IGpzb24",
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJ4In0",
    ] {
        let (code, bad) = kapi.request(
            "GET",
            &format!("{NS}?limit=2&continue={garbage}"),
            JSON,
            None,
        );
        assert_eq!(
            (code, bad["reason"].as_str()),
            (400, Some("BadRequest")),
            "continue={garbage}: {bad}"
        );
        assert!(
            bad["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("invalid continue token: continue key is not valid")),
            "continue={garbage}: {bad}"
        );
    }

    // A replica started after the compaction has nothing older in its watch cache: a
    // watch from before the compaction is an ERROR event, 410 Expired.
    let late = Kapi::start_with(
        Backend::SharedEtcd(cluster.etcd.endpoints()),
        &["--compaction-interval", "0"],
    );
    let (code, event) = first_event(
        &late,
        &format!("{NS}?watch=true&resourceVersion={before}&timeoutSeconds=10"),
        Duration::from_secs(15),
    );
    assert_eq!(code, 200);
    let event = event.expect("an ERROR event");
    assert_eq!(event["type"], "ERROR", "{event}");
    let status = &event["object"];
    assert_eq!(
        (
            status["kind"].as_str(),
            status["code"].as_i64(),
            status["reason"].as_str()
        ),
        (Some("Status"), Some(410), Some("Expired")),
        "{status}"
    );
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&format!("too old resource version: {before} ("))),
        "{status}"
    );
    // The client re-lists and watches from there.
    let (code, relist) = late.request("GET", NS, JSON, None);
    assert_eq!(code, 200, "{relist}");
    assert_eq!(relist["items"].as_array().unwrap().len(), 7);
    let resumed = Arc::new(Mutex::new(Vec::new()));
    spawn_watch(
        &late,
        &format!(
            "{NS}?watch=true&resourceVersion={}&timeoutSeconds=60",
            rv_of(&relist)
        ),
        resumed.clone(),
    );
    let (code, obj) = kapi.request("DELETE", &format!("{NS}/c5"), JSON, None);
    assert_eq!(code, 200, "{obj}");
    let events = wait_events(&resumed, 1, "the watch from the re-list");
    assert_eq!(
        (
            events[0]["type"].as_str(),
            events[0]["object"]["metadata"]["name"].as_str()
        ),
        (Some("DELETED"), Some("c5"))
    );

    // A resourceVersion the store has not reached: 504 Timeout, kube's Status, and an
    // answer rather than a hang.
    let ahead = rv_of(&relist) + 1000;
    for path in [
        format!("{NS}?resourceVersion={ahead}&resourceVersionMatch=NotOlderThan"),
        format!("{NS}/c0?resourceVersion={ahead}"),
    ] {
        let asked = Instant::now();
        let (code, status) = kapi.request("GET", &path, JSON, None);
        let waited = asked.elapsed();
        assert!(waited < Duration::from_secs(15), "{path} took {waited:?}");
        assert_eq!(
            (code, status["reason"].as_str(), status["code"].as_i64()),
            (504, Some("Timeout"), Some(504)),
            "{path}: {status}"
        );
        let message = status["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!(
                "Timeout: Too large resource version: {ahead}, current: "
            )),
            "{path}: {status}"
        );
        assert_eq!(
            status["details"]["causes"][0]["reason"], "ResourceVersionTooLarge",
            "{status}"
        );
        assert_eq!(status["details"]["retryAfterSeconds"], 1, "{status}");
        eprintln!("{path}: 504 after {waited:?}");
    }
}

/// Updates (`create`: creates first) `keys` ConfigMaps of `bytes` bytes from `writers`
/// threads, `writes` each; returns the acknowledged resourceVersions.
fn busy_writes(kapi: &Kapi, writers: usize, writes: usize, bytes: usize, create: bool) -> Vec<u64> {
    const KEYS_PER_WRITER: usize = 10;
    let filler = "x".repeat(bytes);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let (agent, url, filler) = (kapi.agent(), kapi.url().to_string(), &filler);
                scope.spawn(move || {
                    let mut rvs = Vec::new();
                    for n in 0..writes {
                        let name = format!("busy-{w}-{}", n % KEYS_PER_WRITER);
                        let mut body = configmap(&name, &n.to_string());
                        body["data"]["filler"] = json!(filler);
                        let (method, path) = if create && n < KEYS_PER_WRITER {
                            ("POST", CONFIGMAPS.to_string())
                        } else {
                            ("PUT", format!("{CONFIGMAPS}/{name}"))
                        };
                        let (code, obj) =
                            send(&agent, &url, method, &path, Some(&body)).expect("a write");
                        assert!(code == 200 || code == 201, "{method} {name}: {code} {obj}");
                        rvs.push(rv_of(&obj));
                    }
                    rvs
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a writer"))
            .collect()
    })
}

#[test]
fn watchers_that_never_read_are_cut_off_with_bounded_memory_while_a_reader_keeps_up() {
    const STUCK: usize = 40;
    const WRITERS: usize = 4;
    // 8 KiB objects: enough bytes in 1600 events to fill a never-read watch's socket
    // buffers (a few MiB) and then the server's queues behind them (some hundreds of
    // events).
    const BYTES: usize = 8 * 1024;
    const WRITES_PER_WRITER: usize = 400;
    let kapi = Kapi::start(Backend::Embedded);
    let pid = kapi.pid().expect("running");
    // A warm-up of as many writes first: the watch cache's window of events and the
    // store's caches fill to their bounds, so what grows later is the watchers'.
    let warm_up = Instant::now();
    busy_writes(&kapi, WRITERS, WRITES_PER_WRITER, BYTES, true);
    let warm_up = warm_up.elapsed();
    let (_, list) = kapi.request("GET", CONFIGMAPS, JSON, None);
    let from = rv_of(&list);
    let watch = format!("{CONFIGMAPS}?watch=true&resourceVersion={from}&timeoutSeconds=300");
    let rss_before = rss_bytes(pid);

    // Watches whose responses are never read: the headers come, the body stays in the
    // sockets.
    let stuck: Vec<_> = (0..STUCK)
        .map(|_| {
            let res = kapi
                .streaming_agent()
                .get(&format!("{}{watch}", kapi.url()))
                .call()
                .expect("the watch starts");
            assert_eq!(res.status().as_u16(), 200);
            res
        })
        .collect();
    // A watcher that reads, keeping raw lines (parsed afterwards, so it reads fast).
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    {
        let res = kapi
            .streaming_agent()
            .get(&format!("{}{watch}", kapi.url()))
            .call()
            .expect("the watch starts");
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(res.into_body().into_reader()).lines() {
                let Ok(line) = line else { return };
                lines.lock().unwrap().push(line);
            }
        });
    }
    // Memory, sampled while the writes run.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while sampling.load(Ordering::Acquire) {
                peak = peak.max(rss_bytes(pid));
                std::thread::sleep(Duration::from_millis(50));
            }
            peak
        })
    };

    let write_start = Instant::now();
    let acked = busy_writes(&kapi, WRITERS, WRITES_PER_WRITER, BYTES, false);
    let writes_took = write_start.elapsed();
    let total = acked.len();

    // The reader has every event, in order, soon after the writes end.
    let ended = Instant::now();
    loop {
        let n = lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| !l.trim().is_empty())
            .count();
        if n >= total {
            break;
        }
        assert!(
            ended.elapsed() < Duration::from_secs(30),
            "the reading watcher has {n} of {total} events 30 s after the writes"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let caught_up = ended.elapsed();
    sampling.store(false, Ordering::Release);
    let rss_peak = sampler.join().expect("the sampler");
    let rss_after = rss_bytes(pid);
    let events: Vec<Value> = lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    let mut expected = acked.clone();
    expected.sort();
    let seen: Vec<u64> = events
        .iter()
        .map(|e| {
            assert!(
                e["type"] == "ADDED" || e["type"] == "MODIFIED",
                "the reading watcher got {}",
                e["type"]
            );
            rv_of(&e["object"])
        })
        .collect();
    assert_eq!(
        seen, expected,
        "the reading watcher missed or reordered events"
    );

    // Each never-read watch was cut off: reading it now gives an in-order prefix of the
    // events, and then the server ends the response.
    let (tx, rx) = mpsc::channel();
    for (i, res) in stuck.into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut rvs = Vec::new();
            let mut ended = false;
            let mut reader = BufReader::new(res.into_body().into_reader());
            let mut line = String::new();
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        ended = true;
                        break;
                    }
                    Ok(_) if line.trim().is_empty() => {}
                    Ok(_) => {
                        let event: Value = serde_json::from_str(&line).expect("JSON lines");
                        rvs.push(rv_of(&event["object"]));
                        // All of them: this one was never cut off.
                        if rvs.len() == total {
                            break;
                        }
                    }
                }
            }
            let _ = tx.send((i, rvs, ended));
        });
    }
    drop(tx);
    let mut delivered = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for _ in 0..STUCK {
        let left = deadline.saturating_duration_since(Instant::now());
        let (i, rvs, ended) = rx
            .recv_timeout(left)
            .expect("every never-read watch drains within 60 s");
        assert!(
            ended && rvs.len() < total,
            "never-read watch {i} was not cut off: it delivered {} of {total} events",
            rvs.len()
        );
        assert_eq!(
            rvs[..],
            expected[..rvs.len()],
            "never-read watch {i}: not a prefix"
        );
        delivered.push(rvs.len());
    }
    delivered.sort();
    let growth = rss_peak.saturating_sub(rss_before);
    eprintln!(
        "{STUCK} never-read watches and 1 reader; {total} writes of 8 KiB in {writes_took:?} (after as many in {warm_up:?}); reader caught up {caught_up:?} after the last write; never-read watches delivered {}..{} events before the cut; RSS {} MiB before, peak {} MiB (+{} MiB), {} MiB after",
        delivered[0],
        delivered[delivered.len() - 1],
        rss_before >> 20,
        rss_peak >> 20,
        growth >> 20,
        rss_after >> 20
    );
    assert!(
        growth < 200 << 20,
        "RSS grew by {} MiB with never-read watches",
        growth >> 20
    );
}
