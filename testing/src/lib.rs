//! # kapi-testing
//!
//! Test support shared by kapi's test suites:
//!
//! - [`EtcdProcess`]: a real `etcd` (Debian's `etcd-server` package) on free loopback
//!   ports with a throwaway data directory, killed and removed when dropped;
//! - [`EtcdCluster`]: several etcd members on loopback, for replicas and fault tests;
//! - [`testdata_dir`]: where the shared test data lives;
//! - [`yaml_documents`]: every document of a YAML file (a CRD file, a manifest) as JSON;
//! - [`widget_crd`]: a minimal CRD of the `Widget` example, for unit tests;
//! - [`bench`]: medians, quantiles and the result table of the benchmark binaries.
//!
//! ```no_run
//! let etcd = kapi_testing::EtcdProcess::start();
//! let endpoints = vec![etcd.endpoint()];
//! // connect a client to `endpoints`; etcd stops when `etcd` is dropped
//! ```
//!
//! Tests that need etcd fail loudly when it is missing: they are never skipped.
//!
//! It must not depend on kapi's own crates, so that every crate's tests can use it;
//! what it hands out is plain JSON, paths and processes.

pub mod bench;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The etcd binary looked for, on `PATH` or at `/usr/bin/etcd`; `KAPI_ETCD` overrides it.
const ETCD_BINARY: &str = "etcd";

/// How long etcd may take to answer its health check.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Pause between health checks.
const POLL_INTERVAL: Duration = Duration::from_millis(25);

/// How often to retry on fresh ports when another process took the chosen ones.
const START_ATTEMPTS: usize = 3;

/// A running single-member etcd cluster on loopback ports, for one test (or one test
/// binary). Dropping it kills etcd and deletes its data directory.
#[derive(Debug)]
pub struct EtcdProcess {
    child: Child,
    client_addr: SocketAddr,
    data_dir: tempfile::TempDir,
}

impl EtcdProcess {
    /// Starts etcd on free `127.0.0.1` ports with a temporary data directory and waits
    /// (polling, at most 30 seconds) until it reports healthy.
    ///
    /// # Panics
    ///
    /// When the `etcd` binary is missing (install Debian's `etcd-server`), or when etcd
    /// exits or does not become healthy in time; the message includes etcd's log.
    pub fn start() -> Self {
        let binary = etcd_binary();
        let mut last_log = String::new();
        for _ in 0..START_ATTEMPTS {
            match Self::try_start(&binary) {
                Ok(etcd) => return etcd,
                // Most likely a port taken between choosing it and etcd binding it.
                Err(log) => last_log = log,
            }
        }
        panic!(
            "etcd ({}) did not start; its log:\n{last_log}",
            binary.display()
        );
    }

    /// One start attempt; `Err` carries etcd's log.
    fn try_start(binary: &Path) -> Result<Self, String> {
        let data_dir = tempfile::Builder::new()
            .prefix("kapi-etcd-")
            .tempdir()
            .expect("cannot create a temporary directory for etcd");
        let [client_port, peer_port] = free_ports();
        let client_url = format!("http://127.0.0.1:{client_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let log_path = data_dir.path().join("etcd.log");
        let log = std::fs::File::create(&log_path).expect("cannot create etcd's log file");
        let child = Command::new(binary)
            .arg("--name=kapi-test")
            .arg(format!(
                "--data-dir={}",
                data_dir.path().join("data").display()
            ))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={peer_url}"))
            .arg(format!("--initial-advertise-peer-urls={peer_url}"))
            .arg(format!("--initial-cluster=kapi-test={peer_url}"))
            .arg("--initial-cluster-state=new")
            .arg("--logger=zap")
            .arg("--log-outputs=stderr")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("cannot share etcd's log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
        let mut etcd = Self {
            child,
            client_addr: SocketAddr::from(([127, 0, 0, 1], client_port)),
            data_dir,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = etcd.child.try_wait() {
                return Err(format!("(exited with {status})\n{}", read_log(&log_path)));
            }
            if etcd.is_healthy() {
                return Ok(etcd);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "(not healthy after {START_TIMEOUT:?})\n{}",
                    read_log(&log_path)
                ));
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// The etcd process id (tests freeze it with SIGSTOP).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The client URL, e.g. `http://127.0.0.1:40123`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.client_addr)
    }

    /// The client address.
    pub fn client_addr(&self) -> SocketAddr {
        self.client_addr
    }

    /// The data directory (etcd's files are in `data/`, its log in `etcd.log`).
    pub fn data_dir(&self) -> &Path {
        self.data_dir.path()
    }

    fn is_healthy(&self) -> bool {
        is_healthy(self.client_addr)
    }
}

impl Drop for EtcdProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // `data_dir` is removed when it drops, after etcd has exited.
    }
}

/// The etcd binary to run; panics with installation advice when there is none.
fn etcd_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("KAPI_ETCD") {
        return PathBuf::from(path);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(ETCD_BINARY))
            .find(|candidate| candidate.is_file())
    });
    on_path
        .or_else(|| Some(PathBuf::from("/usr/bin/etcd")).filter(|p| p.is_file()))
        .unwrap_or_else(|| {
            panic!(
                "the `etcd` binary was not found on PATH: these tests need a real etcd. \
                 Install Debian's etcd-server package (`apt-get install etcd-server`) \
                 or point KAPI_ETCD at an etcd binary"
            )
        })
}

/// Two distinct free loopback ports, chosen by binding port 0. Both listeners are held
/// until both ports are known, so the two differ.
fn free_ports() -> [u16; 2] {
    let first = TcpListener::bind("127.0.0.1:0").expect("cannot bind a loopback port");
    let second = TcpListener::bind("127.0.0.1:0").expect("cannot bind a loopback port");
    [
        first.local_addr().expect("bound").port(),
        second.local_addr().expect("bound").port(),
    ]
}

fn read_log(path: &Path) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    // The tail is where the reason is.
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// The shared test data directory: `$KAPI_TESTDATA` when set, else
/// `<workspace>/../shared/testdata`.
pub fn testdata_dir() -> PathBuf {
    match std::env::var_os("KAPI_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("..")
            .join("shared")
            .join("testdata"),
    }
}

/// The real CRD files (`*.yaml`) of the shared test data (`testdata_dir()/crds`),
/// sorted.
///
/// # Panics
///
/// When the folder cannot be read.
pub fn testdata_crd_files() -> Vec<PathBuf> {
    let dir = testdata_dir().join("crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} (set KAPI_TESTDATA): {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// A minimal CustomResourceDefinition of the namespaced `widgets.example.kapi.dev`
/// served (and stored) at `version`, with an open schema: the custom resource unit
/// tests make a `ResourceInfo` of.
pub fn widget_crd(version: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.kapi.dev"},
        "spec": {
            "group": "example.kapi.dev",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": version, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]
        }
    })
}

/// Every document of a YAML file as JSON values, in order (empty documents skipped).
///
/// # Panics
///
/// When the file cannot be read or is not YAML, naming the file.
pub fn yaml_documents(path: &Path) -> Vec<serde_json::Value> {
    use saphyr::LoadableYamlNode;
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{} (set KAPI_TESTDATA for the shared testdata): {e}",
            path.display()
        )
    });
    let docs = saphyr::YamlOwned::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
    docs.iter()
        .map(yaml_to_json)
        .filter(|d| !d.is_null())
        .collect()
}

/// One YAML node as JSON: the conversion a Kubernetes client applies to manifests.
pub fn yaml_to_json(y: &saphyr::YamlOwned) -> serde_json::Value {
    use saphyr::{ScalarOwned, YamlOwned};
    use serde_json::Value;
    match y {
        YamlOwned::Value(ScalarOwned::Null) => Value::Null,
        YamlOwned::Value(ScalarOwned::Boolean(b)) => Value::Bool(*b),
        YamlOwned::Value(ScalarOwned::Integer(i)) => Value::from(*i),
        YamlOwned::Value(ScalarOwned::FloatingPoint(f)) => {
            serde_json::Number::from_f64(f.into_inner()).map_or(Value::Null, Value::Number)
        }
        YamlOwned::Value(ScalarOwned::String(s)) => Value::String(s.clone()),
        YamlOwned::Representation(s, _, _) => Value::String(s.clone()),
        YamlOwned::Sequence(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        YamlOwned::Mapping(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        YamlOwned::Tagged(_, inner) => yaml_to_json(inner),
        YamlOwned::Alias(_) | YamlOwned::BadValue => panic!("unsupported YAML node {y:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_differ() {
        let [a, b] = free_ports();
        assert_ne!(a, b);
        assert!(a > 0 && b > 0);
    }

    #[test]
    fn testdata_dir_is_beside_the_workspace() {
        if std::env::var_os("KAPI_TESTDATA").is_none() {
            assert!(testdata_dir().ends_with("shared/testdata"));
        }
    }

    #[test]
    fn etcd_starts_answers_and_stops() {
        let etcd = EtcdProcess::start();
        assert!(etcd.endpoint().starts_with("http://127.0.0.1:"));
        assert!(etcd.is_healthy());
        let addr = etcd.client_addr();
        let data = etcd.data_dir().to_path_buf();
        drop(etcd);
        assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err());
        assert!(!data.exists());
    }
}

/// A running etcd cluster of several members on loopback ports, as the scale-out and
/// fault tests need: members can be killed (SIGKILL), restarted on their data, paused
/// (SIGSTOP) and resumed. Dropping it kills every member and deletes their data.
#[derive(Debug)]
pub struct EtcdCluster {
    members: Vec<EtcdMember>,
    initial_cluster: String,
    binary: PathBuf,
    dir: tempfile::TempDir,
}

#[derive(Debug)]
struct EtcdMember {
    name: String,
    client_addr: SocketAddr,
    peer_url: String,
    child: Option<Child>,
}

impl EtcdCluster {
    /// Starts `size` members on free `127.0.0.1` ports and waits (at most 30 seconds)
    /// until every one reports healthy, which needs an elected leader.
    ///
    /// # Panics
    ///
    /// As [`EtcdProcess::start`] does, with the logs of the members.
    pub fn start(size: usize) -> Self {
        let binary = etcd_binary();
        let dir = tempfile::Builder::new()
            .prefix("kapi-etcd-cluster-")
            .tempdir()
            .expect("cannot create a temporary directory for etcd");
        let ports: Vec<TcpListener> = (0..size * 2)
            .map(|_| TcpListener::bind("127.0.0.1:0").expect("cannot bind a loopback port"))
            .collect();
        let port = |i: usize| ports[i].local_addr().expect("bound").port();
        let members: Vec<EtcdMember> = (0..size)
            .map(|i| EtcdMember {
                name: format!("m{i}"),
                client_addr: SocketAddr::from(([127, 0, 0, 1], port(2 * i))),
                peer_url: format!("http://127.0.0.1:{}", port(2 * i + 1)),
                child: None,
            })
            .collect();
        drop(ports);
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}={}", m.name, m.peer_url))
            .collect::<Vec<_>>()
            .join(",");
        let mut cluster = Self {
            members,
            initial_cluster,
            binary,
            dir,
        };
        for i in 0..size {
            cluster.spawn(i);
        }
        for i in 0..size {
            cluster.wait_healthy(i);
        }
        cluster
    }

    fn spawn(&mut self, i: usize) {
        let member = &self.members[i];
        let data = self.dir.path().join(&member.name);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{}.log", member.name)))
            .expect("cannot open an etcd log file");
        let client_url = format!("http://{}", member.client_addr);
        let child = Command::new(&self.binary)
            .arg(format!("--name={}", member.name))
            .arg(format!("--data-dir={}", data.display()))
            .arg(format!("--listen-client-urls={client_url}"))
            .arg(format!("--advertise-client-urls={client_url}"))
            .arg(format!("--listen-peer-urls={}", member.peer_url))
            .arg(format!("--initial-advertise-peer-urls={}", member.peer_url))
            .arg(format!("--initial-cluster={}", self.initial_cluster))
            .arg("--initial-cluster-token=kapi-test")
            .arg("--initial-cluster-state=new")
            .arg("--logger=zap")
            .arg("--log-outputs=stderr")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("cannot share an etcd log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.binary.display()));
        self.members[i].child = Some(child);
    }

    fn wait_healthy(&mut self, i: usize) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let exited = self.members[i]
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                panic!(
                    "etcd member {} exited with {status}:\n{}",
                    self.members[i].name,
                    self.log(i)
                );
            }
            if is_healthy(self.members[i].client_addr) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "etcd member {} not healthy after {START_TIMEOUT:?}:\n{}",
                self.members[i].name,
                self.log(i)
            );
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// How many members the cluster has.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Every member's client URL, comma-separated (`--etcd-servers`).
    pub fn endpoints(&self) -> String {
        (0..self.size())
            .map(|i| self.endpoint(i))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Member `i`'s client URL.
    pub fn endpoint(&self, i: usize) -> String {
        format!("http://{}", self.members[i].client_addr)
    }

    /// Member `i`'s process id, if it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i].child.as_ref().map(Child::id)
    }

    /// Member `i`'s log so far (its last lines).
    pub fn log(&self, i: usize) -> String {
        read_log(
            &self
                .dir
                .path()
                .join(format!("{}.log", self.members[i].name)),
        )
    }

    /// Kills member `i` with SIGKILL and waits for it to exit.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` again on its data (after [`EtcdCluster::kill`]) and waits
    /// until it is healthy.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.spawn(i);
        self.wait_healthy(i);
    }

    /// Freezes member `i` with SIGSTOP.
    pub fn pause(&self, i: usize) {
        self.signal(i, "STOP");
    }

    /// Thaws member `i` with SIGCONT.
    pub fn resume(&self, i: usize) {
        self.signal(i, "CONT");
    }

    fn signal(&self, i: usize, signal: &str) {
        let pid = self.pid(i).expect("the member runs");
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -{signal} {pid} failed");
    }

    /// The index of the member that is the Raft leader now, as the running members
    /// report it (`/v3/maintenance/status`); `None` while there is none.
    pub fn leader(&self) -> Option<usize> {
        let mut leader_id = None;
        let mut ids = Vec::new();
        for member in &self.members {
            let status = member
                .child
                .as_ref()
                .and_then(|_| post_json(member.client_addr, "/v3/maintenance/status", "{}"));
            let id = status
                .as_ref()
                .and_then(|s| s["header"]["member_id"].as_str().map(str::to_string));
            if let Some(l) = status
                .as_ref()
                .and_then(|s| s["leader"].as_str().map(str::to_string))
            {
                leader_id = Some(l);
            }
            ids.push(id);
        }
        let leader_id = leader_id?;
        ids.iter()
            .position(|id| id.as_deref() == Some(leader_id.as_str()))
    }

    /// Waits (at most 30 seconds) until the cluster has a leader; returns it.
    pub fn wait_leader(&self) -> usize {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(l) = self.leader() {
                return l;
            }
            assert!(
                Instant::now() < deadline,
                "no etcd leader after {START_TIMEOUT:?}"
            );
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Compacts the key-value history up to `revision` through member `i`.
    pub fn compact(&self, i: usize, revision: i64) -> Option<serde_json::Value> {
        post_json(
            self.members[i].client_addr,
            "/v3/kv/compaction",
            &format!("{{\"revision\":\"{revision}\",\"physical\":true}}"),
        )
    }

    /// Defragments member `i`'s backend (`etcdctl defrag`).
    pub fn defragment(&self, i: usize) -> Option<serde_json::Value> {
        post_json(
            self.members[i].client_addr,
            "/v3/maintenance/defragment",
            "{}",
        )
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        // SIGKILL ends paused members too.
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}

/// Asks etcd's `/health` endpoint over plain HTTP/1.0.
fn is_healthy(addr: SocketAddr) -> bool {
    let Some(response) = http_exchange(addr, "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    else {
        return false;
    };
    response.starts_with("HTTP/1.") && response.contains("\"health\":\"true\"")
}

/// A JSON POST to etcd's gRPC gateway; the answer's body, if it came.
fn post_json(addr: SocketAddr, path: &str, body: &str) -> Option<serde_json::Value> {
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let response = http_exchange(addr, &request)?;
    let (_, body) = response.split_once("\r\n\r\n")?;
    serde_json::from_str(body).ok()
}

fn http_exchange(addr: SocketAddr, request: &str) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, POLL_INTERVAL * 4).ok()?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    Some(response)
}
