//! A mixed load shaped like Kubernetes traffic on etcd, recorded for checking: writers
//! on a small set of ConfigMaps (about 75% updates with resourceVersion preconditions,
//! 15% deletes with preconditions, 10% creates), list clients, and watchers that
//! reconnect from their last resourceVersion (and re-list on 410). Every write carries
//! a unique value, so its effect can be found in a history afterwards. [`check`]
//! compares what clients were told with the history of the store.
//!
//! The objects are ConfigMaps unless [`LoadConfig::collection`] names another resource
//! with a `data.v` field. Used by the fault tests and the storage version migration
//! test; clients spread over every replica of a
//! [`crate::cluster::Cluster`] and move to another replica when one does not answer.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Kapi;

/// How long one request may take before the client gives up (an unknown outcome).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// A small, seeded PRNG (xorshift64*), so a run can be repeated from its seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// One request whose transport may fail (a server killed under it): `Err` is an
/// indeterminate outcome, `Ok` the status code and the body (JSON, or the text as a
/// string).
pub fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let builder = ureq::http::Request::builder().method(method).uri(url);
    let res = match body {
        Some(b) => agent.run(
            builder
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(b).expect("JSON"))
                .expect("a request"),
        ),
        None => agent.run(builder.body(()).expect("a request")),
    }
    .map_err(|e| e.to_string())?;
    let code = res.status().as_u16();
    let text = res
        .into_body()
        .read_to_string()
        .map_err(|e| e.to_string())?;
    Ok((
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

/// The replicas clients talk to: each one's current URL (it changes when a replica
/// restarts) and an HTTP client trusting its CA.
pub struct Endpoints {
    urls: RwLock<Vec<String>>,
    agents: Vec<ureq::Agent>,
}

impl Endpoints {
    /// The endpoints of `replicas`.
    pub fn of(replicas: &[Kapi]) -> Arc<Self> {
        let agents = replicas
            .iter()
            .map(|r| {
                let c = r.credentials().expect("an HTTPS replica");
                crate::https_agent_with_timeout(
                    Some(&c.ca),
                    Some((&c.client_cert, &c.client_key)),
                    REQUEST_TIMEOUT,
                )
            })
            .collect();
        Arc::new(Self {
            urls: RwLock::new(replicas.iter().map(|r| r.url().to_string()).collect()),
            agents,
        })
    }

    /// Takes the replicas' URLs again (after restarts).
    pub fn refresh(&self, replicas: &[Kapi]) {
        *self.urls.write().unwrap() = replicas.iter().map(|r| r.url().to_string()).collect();
    }

    /// How many replicas there are.
    pub fn len(&self) -> usize {
        self.agents.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// One request to replica `i`: the status and body, or the transport error.
    pub fn call(
        &self,
        i: usize,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let url = format!("{}{path}", self.urls.read().unwrap()[i]);
        call(&self.agents[i], method, &url, body)
    }

    /// Starts a watch on replica `i`; the reader of its lines.
    fn watch(&self, i: usize, path: &str) -> Result<Box<dyn BufRead + Send>, String> {
        let url = format!("{}{path}", self.urls.read().unwrap()[i]);
        let res = self.agents[i]
            .get(&url)
            .config()
            // The watch's own `timeoutSeconds` ends it; this only bounds a hang.
            .timeout_global(Some(Duration::from_secs(900)))
            .build()
            .call()
            .map_err(|e| e.to_string())?;
        if res.status() != 200 {
            return Err(format!("watch answered {}", res.status()));
        }
        Ok(Box::new(BufReader::new(res.into_body().into_reader())))
    }
}

/// A write's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// POST.
    Create,
    /// PUT with the resourceVersion read just before.
    Update,
    /// DELETE with a resourceVersion precondition.
    Delete,
}

/// What a write was told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx, with the resourceVersion answered.
    Acked(u64),
    /// A definite refusal (a 4xx such as 409): it must have had no effect.
    Refused(u16),
    /// No answer, or a 5xx or 429: it may or may not have taken effect.
    Unknown(String),
}

/// One recorded write.
#[derive(Clone, Debug)]
pub struct Op {
    /// Unique in the run; the write's value is `op-<id>`.
    pub id: u64,
    /// Create, update or delete.
    pub kind: Kind,
    /// The ConfigMap's name.
    pub key: String,
    /// The resourceVersion the write was conditional on (update, delete).
    pub precondition: Option<u64>,
    /// When it was sent and answered, from the start of the load.
    pub start: Duration,
    /// See `start`.
    pub end: Duration,
    /// What the client was told.
    pub outcome: Outcome,
}

impl Op {
    /// The value the write stores.
    pub fn value(&self) -> String {
        format!("op-{}", self.id)
    }
}

/// One change as a watch or a history shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// ADDED, MODIFIED or DELETED.
    pub kind: String,
    /// The ConfigMap's name.
    pub key: String,
    /// Its resourceVersion.
    pub rv: u64,
    /// `data.v`.
    pub value: String,
}

impl Change {
    fn of(event: &Value) -> Option<Self> {
        let object = &event["object"];
        Some(Self {
            kind: event["type"].as_str()?.to_string(),
            key: object["metadata"]["name"].as_str()?.to_string(),
            rv: rv_of(object)?,
            value: object["data"]["v"].as_str().unwrap_or_default().to_string(),
        })
    }
}

fn rv_of(obj: &Value) -> Option<u64> {
    obj["metadata"]["resourceVersion"].as_str()?.parse().ok()
}

/// What one watcher saw: runs of continuous history, each starting at a
/// resourceVersion (the watcher's start, or the list after a 410).
#[derive(Clone, Debug, Default)]
pub struct Watched {
    /// (from, changes after it).
    pub runs: Vec<(u64, Vec<Change>)>,
    /// How often the watch was started again from its last resourceVersion.
    pub reconnects: usize,
    /// How often a 410 made it re-list.
    pub relists: usize,
}

/// What the load writes: a namespaced resource whose objects carry the written value
/// in `data.v` (ConfigMaps, or a custom resource with such a field).
#[derive(Clone, Debug)]
pub struct Collection {
    /// `/api/v1` or `/apis/<group>/<version>`.
    pub api_path: String,
    /// The resource's plural.
    pub plural: String,
    /// The objects' `apiVersion`.
    pub api_version: String,
    /// The objects' `kind`.
    pub kind: String,
}

impl Collection {
    /// ConfigMaps.
    pub fn config_maps() -> Self {
        Self {
            api_path: "/api/v1".into(),
            plural: "configmaps".into(),
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        }
    }

    /// The collection's path in `namespace`.
    pub fn path(&self, namespace: &str) -> String {
        format!("{}/namespaces/{namespace}/{}", self.api_path, self.plural)
    }

    /// An object named `name` holding `value`.
    fn object(&self, name: &str, value: &str) -> Value {
        json!({"apiVersion": self.api_version, "kind": self.kind,
            "metadata": {"name": name}, "data": {"v": value}})
    }
}

/// The load's settings.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// What is written.
    pub collection: Collection,
    /// The namespace written in (must exist).
    pub namespace: String,
    /// Writer threads.
    pub writers: usize,
    /// How many ConfigMaps they share.
    pub keys: usize,
    /// List clients.
    pub listers: usize,
    /// Watchers, started from random recent resourceVersions.
    pub watchers: usize,
    /// The seed of every random choice.
    pub seed: u64,
}

/// A running load.
pub struct Load {
    endpoints: Arc<Endpoints>,
    config: LoadConfig,
    started: Instant,
    stop: Arc<AtomicBool>,
    ops: Arc<Mutex<Vec<Op>>>,
    /// Failed requests of any client (transport errors, 5xx, 429): when, what.
    errors: Arc<Mutex<Vec<(Duration, String)>>>,
    workers: Vec<JoinHandle<()>>,
    watchers: Vec<JoinHandle<Watched>>,
    reads: Arc<AtomicU64>,
}

/// What a load recorded.
#[derive(Debug)]
pub struct Recorded {
    /// Every write.
    pub ops: Vec<Op>,
    /// Every failed request, with its time from the start.
    pub errors: Vec<(Duration, String)>,
    /// What each watcher saw.
    pub watched: Vec<Watched>,
    /// Successful reads (gets and lists).
    pub reads: u64,
}

impl Load {
    /// Starts the writers and listers at once, and the watchers a little later, from
    /// resourceVersions the writers were answered with.
    pub fn start(endpoints: Arc<Endpoints>, config: LoadConfig) -> Self {
        let mut load = Self {
            endpoints,
            config: config.clone(),
            started: Instant::now(),
            stop: Arc::new(AtomicBool::new(false)),
            ops: Arc::new(Mutex::new(Vec::new())),
            errors: Arc::new(Mutex::new(Vec::new())),
            workers: Vec::new(),
            watchers: Vec::new(),
            reads: Arc::new(AtomicU64::new(0)),
        };
        let next_id = Arc::new(AtomicU64::new(0));
        for w in 0..config.writers {
            let writer = Writer {
                endpoints: load.endpoints.clone(),
                collection: config.collection.clone(),
                namespace: config.namespace.clone(),
                keys: config.keys,
                rng: Rng::new(config.seed ^ ((w as u64 + 1) * 7919)),
                replica: w % load.endpoints.len(),
                started: load.started,
                ops: load.ops.clone(),
                errors: load.errors.clone(),
                next_id: next_id.clone(),
                reads: load.reads.clone(),
            };
            let stop = load.stop.clone();
            load.workers
                .push(std::thread::spawn(move || writer.run(&stop)));
        }
        for l in 0..config.listers {
            let endpoints = load.endpoints.clone();
            let (stop, errors, reads) =
                (load.stop.clone(), load.errors.clone(), load.reads.clone());
            let path = format!("{}?limit=50", config.collection.path(&config.namespace));
            let started = load.started;
            load.workers.push(std::thread::spawn(move || {
                let mut replica = l % endpoints.len();
                while !stop.load(Ordering::Relaxed) {
                    match endpoints.call(replica, "GET", &path, None) {
                        Ok((200, _)) => {
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok((code, body)) => {
                            errors
                                .lock()
                                .unwrap()
                                .push((started.elapsed(), format!("list {code}: {body}")));
                        }
                        Err(e) => {
                            errors
                                .lock()
                                .unwrap()
                                .push((started.elapsed(), format!("list: {e}")));
                            replica = (replica + 1) % endpoints.len();
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }));
        }
        load
    }

    /// Starts the watchers, each from a random resourceVersion a writer was answered
    /// with so far.
    pub fn start_watchers(&mut self) {
        let mut rng = Rng::new(self.config.seed ^ 0xABCD);
        let acked: Vec<u64> = self
            .ops
            .lock()
            .unwrap()
            .iter()
            .filter_map(|op| match op.outcome {
                Outcome::Acked(rv) if op.kind != Kind::Delete => Some(rv),
                _ => None,
            })
            .collect();
        assert!(
            !acked.is_empty(),
            "no write succeeded before the watchers started"
        );
        for w in 0..self.config.watchers {
            let from = acked[rng.below(acked.len() as u64) as usize];
            let watcher = Watcher {
                endpoints: self.endpoints.clone(),
                collection: self.config.collection.path(&self.config.namespace),
                replica: w % self.endpoints.len(),
                started: self.started,
                errors: self.errors.clone(),
            };
            let stop = self.stop.clone();
            self.watchers
                .push(std::thread::spawn(move || watcher.run(from, &stop)));
        }
    }

    /// Time since the load started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Writes acknowledged so far.
    pub fn acked(&self) -> usize {
        self.ops
            .lock()
            .unwrap()
            .iter()
            .filter(|op| matches!(op.outcome, Outcome::Acked(_)))
            .count()
    }

    /// When the last acknowledged write was answered, from the start of the load.
    pub fn last_ack(&self) -> Option<Duration> {
        self.ops
            .lock()
            .unwrap()
            .iter()
            .filter(|op| matches!(op.outcome, Outcome::Acked(_)))
            .map(|op| op.end)
            .max()
    }

    /// Stops the writers and listers, writes the ConfigMap `sentinel` (its name must
    /// start with `sentinel`), and waits for the watchers to see it (each gives up a
    /// minute after the stop).
    pub fn stop(self, sentinel: &str) -> Recorded {
        self.stop.store(true, Ordering::SeqCst);
        for w in self.workers {
            w.join().expect("a load thread");
        }
        let (code, body) = self
            .endpoints
            .call(
                0,
                "POST",
                &self.config.collection.path(&self.config.namespace),
                Some(&self.config.collection.object(sentinel, sentinel)),
            )
            .expect("the sentinel is written");
        assert_eq!(code, 201, "{body}");
        let watched = self
            .watchers
            .into_iter()
            .map(|w| w.join().expect("a watcher"))
            .collect();
        Recorded {
            ops: std::mem::take(&mut self.ops.lock().unwrap()),
            errors: std::mem::take(&mut self.errors.lock().unwrap()),
            watched,
            reads: self.reads.load(Ordering::Relaxed),
        }
    }
}

struct Writer {
    endpoints: Arc<Endpoints>,
    collection: Collection,
    namespace: String,
    keys: usize,
    rng: Rng,
    replica: usize,
    started: Instant,
    ops: Arc<Mutex<Vec<Op>>>,
    errors: Arc<Mutex<Vec<(Duration, String)>>>,
    next_id: Arc<AtomicU64>,
    reads: Arc<AtomicU64>,
}

impl Writer {
    fn run(mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            let key = format!("k{}", self.rng.below(self.keys as u64));
            let roll = self.rng.below(100);
            let kind = if roll < 10 {
                Kind::Create
            } else if roll < 25 {
                Kind::Delete
            } else {
                Kind::Update
            };
            let precondition = if kind == Kind::Create {
                None
            } else {
                match self.read(&key) {
                    Some(Some(rv)) => Some(rv),
                    // Gone: an update becomes a create; a delete has nothing to do.
                    Some(None) if kind == Kind::Update => {
                        self.write(Kind::Create, &key, None);
                        continue;
                    }
                    _ => continue,
                }
            };
            self.write(kind, &key, precondition);
        }
    }

    fn collection(&self) -> String {
        self.collection.path(&self.namespace)
    }

    fn error(&self, what: String) {
        self.errors
            .lock()
            .unwrap()
            .push((self.started.elapsed(), what));
    }

    /// The key's resourceVersion (`Some(None)`: it does not exist), or `None` when
    /// the read failed.
    fn read(&mut self, key: &str) -> Option<Option<u64>> {
        let path = format!("{}/{key}", self.collection());
        match self.endpoints.call(self.replica, "GET", &path, None) {
            Ok((200, obj)) => {
                self.reads.fetch_add(1, Ordering::Relaxed);
                Some(rv_of(&obj))
            }
            Ok((404, _)) => {
                self.reads.fetch_add(1, Ordering::Relaxed);
                Some(None)
            }
            Ok((code, body)) => {
                self.error(format!("get {code}: {body}"));
                None
            }
            Err(e) => {
                self.error(format!("get: {e}"));
                self.replica = (self.replica + 1) % self.endpoints.len();
                std::thread::sleep(Duration::from_millis(50));
                None
            }
        }
    }

    fn write(&mut self, kind: Kind, key: &str, precondition: Option<u64>) {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let value = format!("op-{id}");
        let mut object = self.collection.object(key, &value);
        let (method, path, body) = match kind {
            Kind::Create => ("POST", self.collection(), Some(object)),
            Kind::Update => {
                object["metadata"]["resourceVersion"] =
                    json!(precondition.expect("a precondition").to_string());
                ("PUT", format!("{}/{key}", self.collection()), Some(object))
            }
            Kind::Delete => (
                "DELETE",
                format!("{}/{key}", self.collection()),
                Some(json!({"apiVersion": "v1", "kind": "DeleteOptions",
                    "preconditions": {"resourceVersion": precondition.expect("a precondition").to_string()}})),
            ),
        };
        let start = self.started.elapsed();
        let answer = self
            .endpoints
            .call(self.replica, method, &path, body.as_ref());
        let end = self.started.elapsed();
        let outcome = match answer {
            Ok((code, obj)) if (200..300).contains(&code) => match rv_of(&obj) {
                Some(rv) => Outcome::Acked(rv),
                None => Outcome::Unknown(format!("{code} without a resourceVersion: {obj}")),
            },
            Ok((code, body)) if code == 429 || code >= 500 => {
                self.error(format!("{method} {code}: {body}"));
                Outcome::Unknown(format!("{code}: {body}"))
            }
            Ok((code, _)) => Outcome::Refused(code),
            Err(e) => {
                self.error(format!("{method}: {e}"));
                self.replica = (self.replica + 1) % self.endpoints.len();
                // As a client would, not spinning on a replica that is down.
                std::thread::sleep(Duration::from_millis(50));
                Outcome::Unknown(e)
            }
        };
        self.ops.lock().unwrap().push(Op {
            id,
            kind,
            key: key.to_string(),
            precondition,
            start,
            end,
            outcome,
        });
    }
}

struct Watcher {
    endpoints: Arc<Endpoints>,
    /// The collection's path.
    collection: String,
    replica: usize,
    started: Instant,
    errors: Arc<Mutex<Vec<(Duration, String)>>>,
}

/// The name of the ConfigMap that ends the watchers' work.
fn is_sentinel(change: &Change) -> bool {
    change.key.starts_with("sentinel")
}

impl Watcher {
    fn run(mut self, from: u64, stop: &AtomicBool) -> Watched {
        let mut watched = Watched {
            runs: vec![(from, Vec::new())],
            ..Watched::default()
        };
        let mut last = from;
        let mut deadline: Option<Instant> = None;
        loop {
            if stop.load(Ordering::Relaxed) && deadline.is_none() {
                deadline = Some(Instant::now() + Duration::from_secs(60));
            }
            if deadline.is_some_and(|d| Instant::now() > d) {
                return watched;
            }
            let path = format!(
                "{}?watch=true&resourceVersion={last}&timeoutSeconds=5",
                self.collection
            );
            let reader = match self.endpoints.watch(self.replica, &path) {
                Ok(r) => r,
                Err(e) => {
                    self.errors
                        .lock()
                        .unwrap()
                        .push((self.started.elapsed(), format!("watch: {e}")));
                    self.replica = (self.replica + 1) % self.endpoints.len();
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                let Ok(event) = serde_json::from_str::<Value>(&line) else {
                    break;
                };
                if event["type"] == "ERROR" {
                    if event["object"]["code"] == 410 {
                        // Too old: list again and go on from the list.
                        match self
                            .endpoints
                            .call(self.replica, "GET", &self.collection, None)
                        {
                            Ok((200, list)) => {
                                last = rv_of(&list).unwrap_or(last);
                                watched.relists += 1;
                                watched.runs.push((last, Vec::new()));
                            }
                            other => self
                                .errors
                                .lock()
                                .unwrap()
                                .push((self.started.elapsed(), format!("re-list: {other:?}"))),
                        }
                    } else {
                        self.errors.lock().unwrap().push((
                            self.started.elapsed(),
                            format!("watch error event: {event}"),
                        ));
                    }
                    break;
                }
                if event["type"] == "BOOKMARK" {
                    continue;
                }
                let Some(change) = Change::of(&event) else {
                    continue;
                };
                last = change.rv;
                let done = is_sentinel(&change);
                watched.runs.last_mut().expect("a run").1.push(change);
                if done {
                    return watched;
                }
            }
            watched.reconnects += 1;
        }
    }
}

/// Every change after `from` in the collection at `path` as a watch from replica
/// `replica` shows it, up to and including the sentinel: a replay of the history
/// afterwards, or a record of it as it happens (in a thread of its own, when the
/// history will have been compacted by the end).
pub fn replay(endpoints: &Endpoints, replica: usize, path: &str, from: u64) -> Vec<Change> {
    let path = format!("{path}?watch=true&resourceVersion={from}&timeoutSeconds=600");
    let reader = endpoints
        .watch(replica, &path)
        .expect("the replay watch starts");
    let mut history = Vec::new();
    for line in reader.lines() {
        let line = line.expect("the replay reads on");
        if line.trim().is_empty() {
            continue;
        }
        let event: Value = serde_json::from_str(&line).expect("JSON lines");
        assert_ne!(event["type"], "ERROR", "the replay failed: {event}");
        let change = Change::of(&event).expect("an object event");
        let done = is_sentinel(&change);
        history.push(change);
        if done {
            return history;
        }
    }
    panic!(
        "the replay ended before the sentinel after {} changes",
        history.len()
    );
}

/// The figures of a check.
#[derive(Debug, Default)]
pub struct Checked {
    /// Writes acknowledged, refused and unknown.
    pub acked: usize,
    /// See `acked`.
    pub refused: usize,
    /// See `acked`.
    pub unknown: usize,
    /// Unknown writes that turned out to have taken effect.
    pub unknown_applied: usize,
    /// Changes in the history.
    pub changes: usize,
    /// Events the watchers received, all told.
    pub watched_events: usize,
}

/// Checks a load's record against the history of its namespace (a replay from before
/// the load, up to the sentinel) and the final state; returns the problems found.
///
/// - Every acknowledged write is in the history with the resourceVersion answered;
///   no refused write is.
/// - Per key, the history is linearizable: an update or delete applied to the version
///   it was conditional on, a create to an absent key; and a write answered before
///   another started comes first.
/// - Every watcher's runs are exactly the history's changes after their start, in
///   order, once each.
/// - The final state (a list) is the history's last version of each key.
pub fn check(
    recorded: &Recorded,
    history: &[Change],
    final_state: &Value,
) -> (Checked, Vec<String>) {
    let mut problems = Vec::new();
    let mut figures = Checked {
        changes: history.len(),
        ..Checked::default()
    };
    // A value's first change is its write; later ones holding it are rewrites of the
    // same object (a storage version migration), which clients did not send.
    let mut by_value: HashMap<&str, &Change> = HashMap::new();
    for c in history.iter().filter(|c| c.kind != "DELETED") {
        by_value.entry(c.value.as_str()).or_insert(c);
    }
    // Revisions increase along the history.
    for pair in history.windows(2) {
        if pair[0].rv >= pair[1].rv {
            problems.push(format!(
                "history out of order: {:?} then {:?}",
                pair[0], pair[1]
            ));
        }
    }
    // The version each change replaced, per key.
    let mut previous: HashMap<&str, Option<&Change>> = HashMap::new();
    let mut replaced: HashMap<u64, Option<&Change>> = HashMap::new();
    for c in history {
        let prev = previous.get(c.key.as_str()).copied().flatten();
        replaced.insert(c.rv, prev);
        previous.insert(&c.key, Some(c));
    }
    let deleted_at: HashMap<(&str, u64), &Change> = history
        .iter()
        .filter(|c| c.kind == "DELETED")
        .filter_map(|c| {
            let prev = replaced.get(&c.rv).copied().flatten()?;
            Some(((c.key.as_str(), prev.rv), c))
        })
        .collect();
    let mut applied_rv: BTreeMap<u64, (Duration, Duration)> = BTreeMap::new();
    for op in &recorded.ops {
        let value = op.value();
        let found = match op.kind {
            Kind::Delete => op
                .precondition
                .and_then(|p| deleted_at.get(&(op.key.as_str(), p)).copied()),
            _ => by_value.get(value.as_str()).copied(),
        };
        match (&op.outcome, found) {
            (Outcome::Acked(rv), Some(c)) => {
                figures.acked += 1;
                if op.kind != Kind::Delete && c.rv != *rv {
                    problems.push(format!("op {} acked at {rv} but stored at {}", op.id, c.rv));
                }
            }
            (Outcome::Acked(rv), None) => {
                figures.acked += 1;
                problems.push(format!("acknowledged write lost: {op:?} (answered {rv})"));
            }
            (Outcome::Refused(code), Some(c)) => {
                figures.refused += 1;
                // A delete refused on its precondition cannot be told apart from
                // another delete of the same version; only writes with values can.
                if op.kind != Kind::Delete {
                    problems.push(format!(
                        "refused write ({code}) took effect: {op:?} as {c:?}"
                    ));
                }
            }
            (Outcome::Refused(_), None) => figures.refused += 1,
            (Outcome::Unknown(_), found) => {
                figures.unknown += 1;
                if found.is_some() {
                    figures.unknown_applied += 1;
                }
            }
        }
        // Per key: what the write applied to.
        if let (Some(c), false) = (found, op.kind == Kind::Delete) {
            let prev = replaced.get(&c.rv).copied().flatten();
            match op.kind {
                Kind::Create => {
                    if prev.is_some_and(|p| p.kind != "DELETED") {
                        problems.push(format!("create {} applied over {prev:?}", op.id));
                    }
                }
                Kind::Update => {
                    if prev.map(|p| p.rv) != op.precondition
                        || prev.is_some_and(|p| p.kind == "DELETED")
                    {
                        problems.push(format!(
                            "update {} conditional on {:?} applied over {prev:?}",
                            op.id, op.precondition
                        ));
                    }
                }
                Kind::Delete => {}
            }
            if let Outcome::Acked(_) = op.outcome {
                applied_rv.insert(c.rv, (op.start, op.end));
            }
        }
    }
    // Real time: a write answered before another was sent has the lower revision.
    let mut by_start: Vec<(Duration, u64)> =
        applied_rv.iter().map(|(rv, (s, _))| (*s, *rv)).collect();
    by_start.sort();
    let mut by_end: Vec<(Duration, u64)> =
        applied_rv.iter().map(|(rv, (_, e))| (*e, *rv)).collect();
    by_end.sort();
    let mut max_done = 0;
    let mut j = 0;
    for (start, rv) in &by_start {
        while j < by_end.len() && by_end[j].0 < *start {
            max_done = max_done.max(by_end[j].1);
            j += 1;
        }
        if *rv < max_done {
            problems.push(format!(
                "write at {rv} sent at {start:?} is ordered before a write at {max_done} answered earlier"
            ));
        }
    }
    // Watchers.
    for (w, watched) in recorded.watched.iter().enumerate() {
        for (from, changes) in &watched.runs {
            figures.watched_events += changes.len();
            let expected: Vec<&Change> = history
                .iter()
                .filter(|c| c.rv > *from)
                .take(changes.len())
                .collect();
            let got: Vec<&Change> = changes.iter().collect();
            if got != expected {
                let at = got.iter().zip(&expected).position(|(a, b)| a != b);
                problems.push(format!(
                    "watcher {w} from {from}: {} events differ from the history (first difference at {at:?}: {:?} vs {:?})",
                    got.len(),
                    at.and_then(|i| got.get(i)),
                    at.and_then(|i| expected.get(i)),
                ));
            }
        }
        let last_run = watched.runs.last().map(|r| &r.1);
        if !last_run.is_some_and(|r| r.last().is_some_and(is_sentinel)) {
            problems.push(format!("watcher {w} did not reach the end of the history"));
        }
    }
    // Final state.
    let mut last: BTreeMap<&str, &Change> = BTreeMap::new();
    for c in history {
        last.insert(&c.key, c);
    }
    let stored: BTreeMap<String, (u64, String)> = final_state["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                o["metadata"]["name"].as_str()?.to_string(),
                (
                    rv_of(o)?,
                    o["data"]["v"].as_str().unwrap_or_default().to_string(),
                ),
            ))
        })
        .collect();
    let expected: BTreeMap<String, (u64, String)> = last
        .into_iter()
        .filter(|(_, c)| c.kind != "DELETED")
        .map(|(k, c)| (k.to_string(), (c.rv, c.value.clone())))
        .collect();
    if stored != expected {
        problems.push(format!(
            "final state {stored:?} is not the history's {expected:?}"
        ));
    }
    (figures, problems)
}
