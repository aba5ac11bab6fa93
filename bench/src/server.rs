//! The `kapi serve` process under test: started on `127.0.0.1:0` with a throwaway
//! data directory, its address read from the kubeconfig it writes, ready once
//! `/readyz` answers 200; killed when dropped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use http::{Method, StatusCode};
use tokio::time::Instant;

use crate::client::{Client, Transport};

/// How long kapi may take to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Pause between readiness checks.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// A running `kapi serve`.
pub struct KapiProcess {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
    _data_dir: tempfile::TempDir,
}

impl KapiProcess {
    /// Starts `binary serve` on the embedded store, or on etcd at `etcd_endpoint`, and
    /// waits (at most a minute) until it is ready. Its log (`KAPI_LOG=warn`) goes to
    /// `kapi.log` in the data directory.
    pub async fn start(binary: &Path, etcd_endpoint: Option<&str>) -> Result<Self, String> {
        let data_dir = tempfile::Builder::new()
            .prefix("kapi-bench-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?;
        let log = data_dir.path().join("kapi.log");
        let log_file = std::fs::File::create(&log).map_err(|e| format!("kapi's log: {e}"))?;
        let mut command = Command::new(binary);
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir.path())
            .env("KAPI_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file);
        if let Some(endpoint) = etcd_endpoint {
            command.args(["--etcd-servers", endpoint]);
        }
        let child = command
            .spawn()
            .map_err(|e| format!("starting {}: {e}", binary.display()))?;
        let kubeconfig = data_dir.path().join("kubeconfig");
        let mut process = Self {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log,
            _data_dir: data_dir,
        };
        process.wait_ready(&kubeconfig).await?;
        Ok(process)
    }

    async fn wait_ready(&mut self, kubeconfig: &Path) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("kapi exited with {status}:\n{}", self.log_text()));
            }
            let text = std::fs::read_to_string(kubeconfig).unwrap_or_default();
            let addr = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("server: http://"))
                .and_then(|a| a.trim().parse::<SocketAddr>().ok());
            if let Some(addr) = addr {
                if is_ready(addr).await {
                    self.addr = addr;
                    return Ok(());
                }
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Err(format!(
            "kapi was not ready within {START_TIMEOUT:?}:\n{}",
            self.log_text()
        ))
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

async fn is_ready(addr: SocketAddr) -> bool {
    let check = async {
        let client = Client::connect(addr, Transport::Http1).await?;
        client.send(Method::GET, "/readyz", None).await
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(5), check).await,
        Ok(Ok(reply)) if reply.status == StatusCode::OK
    )
}

impl Drop for KapiProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `kapi` binary beside the running executable (`target/<profile>/kapi` for
/// `target/<profile>/kapi-bench`); `KAPI_BIN` overrides it.
pub fn sibling_kapi_binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("KAPI_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().map_err(|e| format!("this executable's path: {e}"))?;
    let bin = exe
        .parent()
        .map(|dir| dir.join("kapi"))
        .ok_or("this executable has no folder")?;
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "no kapi binary at {} (build it with `cargo build -p kapi-server`, or pass --kapi PATH)",
            bin.display()
        ))
    }
}
