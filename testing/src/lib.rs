//! # kapi-testing
//!
//! Test support shared by kapi's test suites:
//!
//! - [`EtcdProcess`]: a real `etcd` (Debian's `etcd-server` package) on free loopback
//!   ports with a throwaway data directory, killed and removed when dropped;
//! - [`testdata_dir`]: where the shared test data lives;
//! - [`yaml_documents`]: every document of a YAML file (a CRD file, a manifest) as JSON;
//! - [`bench`]: medians, quantiles and the result table of the benchmark binaries.
//!
//! ```no_run
//! let etcd = kapi_testing::EtcdProcess::start();
//! let endpoints = vec![etcd.endpoint()];
//! // connect a client to `endpoints`; etcd stops when `etcd` is dropped
//! ```
//!
//! Tests that need etcd fail loudly when it is missing: they are never skipped.

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

    /// Asks etcd's `/health` endpoint over plain HTTP/1.0.
    fn is_healthy(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect_timeout(&self.client_addr, POLL_INTERVAL * 4)
        else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
        if stream
            .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response.starts_with("HTTP/1.") && response.contains("\"health\":\"true\"")
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
