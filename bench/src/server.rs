//! The `kapi serve` process under test: started on `127.0.0.1:0` with a throwaway
//! data directory, its address read from the kubeconfig it writes, ready once
//! `/readyz` answers 200; stopped (SIGTERM) and started again on the same data, its
//! memory read from `/proc`; killed when dropped. It inherits this process's limits,
//! the raised open-file limit among them (see [`crate::fds`]).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use http::{Method, StatusCode};
use rustix::process::{Pid, Signal, kill_process};
use tokio::time::Instant;

use crate::client::{Client, Transport};

/// How long kapi may take to become ready.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long kapi may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// Pause between readiness checks.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// What kapi stores its objects in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Storage {
    /// etcd's endpoint; `None` for the embedded store in the data directory.
    pub etcd_endpoint: Option<String>,
    /// The key prefix (`--etcd-prefix`); `None` for kapi's default, `/registry`.
    pub prefix: Option<String>,
    /// More `kapi serve` flags (`kapi-bench --kapi-arg`).
    pub flags: Vec<String>,
}

/// A process's memory as `/proc/<pid>/status` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Resident set size now (`VmRSS`), in bytes.
    pub rss: u64,
    /// The largest resident set size so far (`VmHWM`), in bytes.
    pub peak: u64,
}

/// The CPU time (user and system) process `pid` has used so far, from
/// `/proc/<pid>/stat`, to the clock tick (10 ms on Linux).
pub fn cpu_time(pid: u32) -> Result<Duration, String> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    // The command name, in parentheses, may hold spaces: fields count from after it.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    // utime and stime are the 14th and 15th fields, the state being the 3rd.
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    let (Some(user), Some(system)) = (ticks(11), ticks(12)) else {
        return Err(format!("no CPU times in {path}"));
    };
    let per_second = rustix::param::clock_ticks_per_second().max(1);
    Ok(Duration::from_secs_f64(
        (user + system) as f64 / per_second as f64,
    ))
}

/// A running `kapi serve`.
pub struct KapiProcess {
    binary: PathBuf,
    wrapper: Vec<OsString>,
    storage: Storage,
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
    data_dir: tempfile::TempDir,
}

impl KapiProcess {
    /// Starts `binary serve` on `storage` and waits (at most a minute) until it is
    /// ready. Its log (`KAPI_LOG=warn`) goes to `kapi.log` in the data directory.
    pub async fn start(binary: &Path, storage: Storage) -> Result<Self, String> {
        Self::start_under(Vec::new(), binary, storage).await
    }

    /// [`KapiProcess::start`] with `wrapper` (a program and its arguments, such as
    /// valgrind's) running kapi, which it is given last.
    pub async fn start_under(
        wrapper: Vec<OsString>,
        binary: &Path,
        storage: Storage,
    ) -> Result<Self, String> {
        let data_dir = tempfile::Builder::new()
            .prefix("kapi-bench-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?;
        let log = data_dir.path().join("kapi.log");
        let child = spawn(&wrapper, binary, &storage, data_dir.path(), &log)?;
        let mut process = Self {
            binary: binary.to_path_buf(),
            wrapper,
            storage,
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log,
            data_dir,
        };
        process.wait_ready().await?;
        Ok(process)
    }

    /// Stops kapi with SIGTERM and waits for it to exit (killing it after a minute);
    /// how long it took to exit.
    pub async fn stop(&mut self) -> Result<Duration, String> {
        let begun = Instant::now();
        if self.child.try_wait().ok().flatten().is_some() {
            return Err(format!("kapi had already exited:\n{}", self.log_text()));
        }
        kill_process(Pid::from_child(&self.child), Signal::TERM)
            .map_err(|e| format!("sending SIGTERM to kapi: {e}"))?;
        while begun.elapsed() < STOP_TIMEOUT {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(begun.elapsed()),
                Ok(Some(status)) => {
                    return Err(format!(
                        "kapi exited with {status} after SIGTERM:\n{}",
                        self.log_text()
                    ));
                }
                Ok(None) => tokio::time::sleep(POLL_INTERVAL).await,
                Err(e) => return Err(format!("waiting for kapi: {e}")),
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err(format!(
            "kapi did not exit within {STOP_TIMEOUT:?} of SIGTERM"
        ))
    }

    /// Starts kapi again on the same data directory and storage, after
    /// [`KapiProcess::stop`], and waits until it is ready.
    pub async fn start_again(&mut self) -> Result<(), String> {
        // The kubeconfig of the last run names the old address.
        let _ = std::fs::remove_file(self.kubeconfig());
        self.child = spawn(
            &self.wrapper,
            &self.binary,
            &self.storage,
            self.data_dir.path(),
            &self.log,
        )?;
        self.wait_ready().await
    }

    fn kubeconfig(&self) -> PathBuf {
        self.data_dir.path().join("kubeconfig")
    }

    async fn wait_ready(&mut self) -> Result<(), String> {
        let kubeconfig = self.kubeconfig();
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("kapi exited with {status}:\n{}", self.log_text()));
            }
            let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
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

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its memory now, from `/proc/<pid>/status`.
    pub fn memory(&self) -> Result<Memory, String> {
        let path = format!("/proc/{}/status", self.child.id());
        let status = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
        let kib = |field: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
                .and_then(|value| {
                    value
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
                .map(|kib| kib * 1024)
                .ok_or_else(|| format!("no {field} in {path}"))
        };
        Ok(Memory {
            rss: kib("VmRSS")?,
            peak: kib("VmHWM")?,
        })
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A line about the warnings and errors in its log so far (it logs nothing else),
    /// naming the first; `None` when there are none. The log goes with the data
    /// directory, so this is what the run keeps of it.
    pub fn log_summary(&self) -> Option<String> {
        let text = self.log_text();
        let problems: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR"))
            .collect();
        let first = problems.first()?;
        Some(format!(
            "kapi logged {} warnings and errors; the first: {}",
            problems.len(),
            first.chars().take(300).collect::<String>()
        ))
    }
}

/// Spawns `binary serve` (under `wrapper` when it is not empty) on `storage` with
/// `data_dir`, its stderr appended to `log`.
fn spawn(
    wrapper: &[OsString],
    binary: &Path,
    storage: &Storage,
    data_dir: &Path,
    log: &Path,
) -> Result<Child, String> {
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("kapi's log: {e}"))?;
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(binary);
            command
        }
        None => Command::new(binary),
    };
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        // Plain HTTP on loopback: the figures are the server's, without TLS (BENCHMARKS.md).
        .arg("--insecure-http")
        .env("KAPI_LOG", "warn")
        // A log file, not a terminal: no colour codes (tracing-subscriber honours it).
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file);
    if let Some(endpoint) = &storage.etcd_endpoint {
        command.args(["--etcd-servers", endpoint]);
    }
    if let Some(prefix) = &storage.prefix {
        command.args(["--etcd-prefix", prefix]);
    }
    command.args(&storage.flags);
    command
        .spawn()
        .map_err(|e| format!("starting {}: {e}", binary.display()))
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
            "no kapi binary at {} (build it with `cargo build -p kapi`, or pass --kapi PATH)",
            bin.display()
        ))
    }
}
