//! `kapi serve` over HTTPS as users run it, and what the benchmarks that need it
//! share: an HTTP/2 client as the server's admin (TLS verified with the server's CA, a
//! client certificate from its kubeconfig), C workers repeating a GET, and the median
//! of rounds.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::Value;

use crate::placement::Cpus;

/// One `kapi serve` process over HTTPS, killed when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    dir: tempfile::TempDir,
    pub(crate) addr: SocketAddr,
    /// Its CA (PEM), which signed its serving certificate.
    pub(crate) ca: String,
    cert: String,
    key: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kubeconfig_field(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.trim().strip_prefix(name)?.trim();
        let bytes = base64::engine::general_purpose::STANDARD.decode(v).ok()?;
        String::from_utf8(bytes).ok()
    })
}

impl Server {
    /// Starts `kapi serve` with `args` on `cpus`, on a free loopback port, in a
    /// temporary data directory; returns once it wrote its kubeconfig.
    pub(crate) fn start(kapi: &Path, args: &[OsString], cpus: &Cpus) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("kapi-bench-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?;
        let log = std::fs::File::create(dir.path().join("kapi.log"))
            .map_err(|e| format!("kapi's log: {e}"))?;
        let child = cpus.spawn(
            Command::new(kapi)
                .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
                .arg(dir.path())
                .args(args)
                .env("KAPI_LOG", "warn")
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log),
        )?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let kubeconfig = dir.path().join("kubeconfig");
        loop {
            let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
            let url = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("server: "))
                .map(str::to_string);
            if let (Some(url), Some(ca), Some(cert), Some(key)) = (
                url,
                kubeconfig_field(&text, "certificate-authority-data:"),
                kubeconfig_field(&text, "client-certificate-data:"),
                kubeconfig_field(&text, "client-key-data:"),
            ) {
                let addr = url
                    .trim_start_matches("https://")
                    .parse()
                    .map_err(|e| format!("the kubeconfig's server {url}: {e}"))?;
                return Ok(Server {
                    child,
                    dir,
                    addr,
                    ca,
                    cert,
                    key,
                });
            }
            if Instant::now() > deadline {
                return Err("kapi wrote no kubeconfig within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A file of its data directory (`pki/ca.crt`).
    pub(crate) fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }
}

/// An HTTP/2 connection over TLS as the server's admin.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) sender: http2::SendRequest<Full<Bytes>>,
    pub(crate) authority: String,
}

impl Client {
    /// Connects as the server's admin.
    pub(crate) async fn connect(server: &Server) -> Result<Self, String> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(server.ca.as_bytes()) {
            roots
                .add(cert.map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
        }
        let chain = CertificateDer::pem_slice_iter(server.cert.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let key =
            PrivateKeyDer::from_pem_slice(server.key.as_bytes()).map_err(|e| e.to_string())?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| e.to_string())?;
        tls.alpn_protocols = vec![b"h2".to_vec()];
        let tcp = tokio::net::TcpStream::connect(server.addr)
            .await
            .map_err(|e| format!("connecting to {}: {e}", server.addr))?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
        let io = tokio_rustls::TlsConnector::from(Arc::new(tls))
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {}: {e}", server.addr))?;
        let (sender, conn) = http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .map_err(|e| format!("HTTP/2 with {}: {e}", server.addr))?;
        tokio::spawn(conn);
        Ok(Client {
            sender,
            authority: server.addr.to_string(),
        })
    }

    /// One request; its status and body.
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Bytes), String> {
        let mut req = Request::builder()
            .method(method)
            .uri(format!("https://{}{path}", self.authority))
            .header(header::ACCEPT, "application/json");
        let bytes = match body {
            Some(v) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(v).map_err(|e| e.to_string())?)
            }
            None => Bytes::new(),
        };
        let req = req.body(Full::new(bytes)).map_err(|e| e.to_string())?;
        let mut sender = self.sender.clone();
        sender.ready().await.map_err(|e| e.to_string())?;
        let res = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let status = res.status();
        let body = res
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, body))
    }

    /// One request whose status must be one of `ok`; its body as JSON.
    pub(crate) async fn expect(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        ok: &[u16],
    ) -> Result<Value, String> {
        let (status, bytes) = self.send(method.clone(), path, body).await?;
        if !ok.contains(&status.as_u16()) {
            return Err(format!(
                "{method} {path}: {status}: {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Polls `path` until `done` says so, for at most 60 s.
    pub(crate) async fn wait(
        &self,
        path: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok((StatusCode::OK, bytes)) = self.send(Method::GET, path, None).await {
                if serde_json::from_slice(&bytes).is_ok_and(|v: Value| done(&v)) {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(format!("{what}: not so within 60 s"))
    }
}

/// A rate or a latency of one cell, on one target.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    /// Requests (or events delivered) per second.
    pub per_second: f64,
    /// The 99th percentile latency, in milliseconds.
    pub p99_ms: f64,
    /// Failed requests.
    pub errors: u64,
    /// CPU time of the servers involved per request or event, in microseconds.
    pub cpu_us: f64,
}

impl Cell {
    /// The cell with its CPU per operation: `spent` over the operations of `duration`.
    pub(crate) fn costing(mut self, spent: Duration, duration: Duration) -> Self {
        let ops = self.per_second * duration.as_secs_f64();
        if ops > 0.0 {
            self.cpu_us = spent.as_secs_f64() * 1e6 / ops;
        }
        self
    }
}

/// The 99th percentile of `ms`.
pub(crate) fn p99(mut ms: Vec<f64>) -> f64 {
    if ms.is_empty() {
        return 0.0;
    }
    ms.sort_by(f64::total_cmp);
    ms[((ms.len() as f64 * 0.99) as usize).min(ms.len() - 1)]
}

/// `clients` workers sending `path` for `duration`.
pub(crate) async fn requests(
    client: &Client,
    path: &str,
    clients: usize,
    duration: Duration,
) -> Cell {
    let stop = Instant::now() + duration;
    let errors = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (client, path, errors) = (client.clone(), path.to_string(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < stop {
                let began = Instant::now();
                match client.send(Method::GET, &path, None).await {
                    Ok((StatusCode::OK, _)) => latencies.push(began.elapsed().as_secs_f64() * 1e3),
                    _ => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap_or_default());
    }
    Cell {
        per_second: all.len() as f64 / duration.as_secs_f64(),
        p99_ms: p99(all),
        errors: errors.load(Ordering::Relaxed),
        cpu_us: 0.0,
    }
}

/// The round of median rate, with the errors of every round.
pub(crate) fn median(mut cells: Vec<Cell>) -> Cell {
    cells.sort_by(|a, b| a.per_second.total_cmp(&b.per_second));
    let errors = cells.iter().map(|c| c.errors).sum();
    let mut middle = cells.get(cells.len() / 2).cloned().unwrap_or_default();
    middle.errors = errors;
    middle
}
