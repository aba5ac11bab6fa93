//! The HTTP limit: a minimal hyper 1.x server (HTTP/1.1 and HTTP/2 on one port of
//! `127.0.0.1`) answering each of a few paths with a fixed JSON body, driven by the same
//! client as kapi: [`OBJECT_PATH`] with a 1 KiB object (kapi's GET by name is compared
//! with it), and any other bodies it is given, such as a copy of kapi's own list
//! responses (kapi's lists are compared with the same bytes served without work). Any
//! other path is a 404.
//!
//! It runs as a process of its own (`kapi-bench baseline-server`, a tokio runtime with
//! a worker per core, as kapi's), so that it is reached as kapi is: every request wakes
//! another process. In the bench's own runtime, client and server tasks could run on
//! one thread with no wake-up between them, which no server in another process can
//! match (BENCHMARKS.md, issue #25).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

use crate::client::Client;
use crate::driver::{OpFuture, Sample, Worker};
use crate::targets::OBJECT_SIZE;

/// The path of the 1 KiB object.
pub const OBJECT_PATH: &str = "/object";

/// The subcommand the server process runs.
pub const SUBCOMMAND: &str = "baseline-server";

/// The running server process; it is killed when dropped.
pub struct Baseline {
    addr: SocketAddr,
    child: Child,
    /// The files its bodies were handed over in.
    _bodies: tempfile::TempDir,
}

impl Baseline {
    /// Starts the server process (`bench`'s [`SUBCOMMAND`]) on a free loopback port,
    /// answering [`OBJECT_PATH`] with [`fixed_body`] and each of `bodies` (path, body)
    /// with its body.
    pub async fn start(bench: &Path, bodies: Vec<(String, Bytes)>) -> Result<Self, String> {
        let bench = bench.to_path_buf();
        tokio::task::spawn_blocking(move || Self::spawn(&bench, bodies))
            .await
            .map_err(|e| format!("starting the baseline server: {e}"))?
    }

    fn spawn(bench: &Path, bodies: Vec<(String, Bytes)>) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary folder: {e}"))?;
        let mut args = vec![SUBCOMMAND.to_string()];
        for (at, (path, body)) in bodies.iter().enumerate() {
            let file = dir.path().join(format!("body-{at}"));
            std::fs::write(&file, body).map_err(|e| format!("{}: {e}", file.display()))?;
            args.push(format!("{path}={}", file.display()));
        }
        let mut child = Command::new(bench)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the baseline server {}: {e}", bench.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("a piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| format!("the baseline server's address: {e}"))?;
        let addr = line.trim().parse().map_err(|e| {
            let _ = child.kill();
            format!("the baseline server's address {line:?}: {e}")
        })?;
        Ok(Self {
            addr,
            child,
            _bodies: dir,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// One worker per client, each sending GETs of `path`.
    pub fn get_workers(clients: Vec<Client>, path: &str) -> Vec<Worker> {
        let path = Arc::<str>::from(path);
        clients
            .into_iter()
            .map(|client| -> Worker {
                let path = path.clone();
                Box::new(move |_seq| -> OpFuture {
                    let client = client.clone();
                    let path = path.clone();
                    Box::pin(async move {
                        client
                            .send(Method::GET, &path, None)
                            .await?
                            .expect("GET", StatusCode::OK)?;
                        Ok(Sample::Whole)
                    })
                })
            })
            .collect()
    }
}

impl Drop for Baseline {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// This executable, whose [`SUBCOMMAND`] is the server's process (`kapi-bench`'s
/// default; a test driving the bench from its own binary names the built `kapi-bench`).
pub fn this_executable() -> std::path::PathBuf {
    std::env::current_exe().unwrap_or_else(|_| "kapi-bench".into())
}

/// The server process's side: binds a free loopback port, prints its address on
/// stdout, and serves `bodies` (`PATH=FILE`, the body read from the file) until its
/// stdin closes (the bench ended) or it is killed.
pub fn serve_process(bodies: &[String]) -> Result<(), String> {
    let mut paths = HashMap::new();
    for spec in bodies {
        let (path, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("{spec}: not PATH=FILE"))?;
        let body = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        paths.insert(path.to_string(), Bytes::from(body));
    }
    paths.insert(OBJECT_PATH.to_string(), Bytes::from(fixed_body()));
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("a tokio runtime: {e}"))?;
    let served = runtime.block_on(async move {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("binding the baseline server: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("baseline address: {e}"))?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{addr}")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("writing the address: {e}"))?;
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        });
        tokio::select! {
            () = accept(listener, Arc::new(paths)) => {}
            _ = stdin_closed => {}
        }
        Ok(())
    });
    // The stdin reader may still block; nothing waits for it.
    runtime.shutdown_background();
    served
}

async fn accept(listener: TcpListener, paths: Arc<HashMap<String, Bytes>>) {
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        let paths = paths.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let body = paths.get(request.uri().path()).cloned();
                async move {
                    let response = match body {
                        Some(body) => Response::builder()
                            .status(StatusCode::OK)
                            .header(header::CONTENT_TYPE, "application/json")
                            .body(Full::new(body)),
                        None => Response::builder()
                            .status(StatusCode::NOT_FOUND)
                            .body(Full::new(Bytes::new())),
                    };
                    Ok::<_, Infallible>(response.expect("a valid response"))
                }
            });
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The path of a list body of `objects` objects.
pub fn list_path(objects: usize) -> String {
    format!("/list/{objects}")
}

/// A JSON object of exactly [`OBJECT_SIZE`] bytes.
pub fn fixed_body() -> Vec<u8> {
    let head = r#"{"apiVersion":"example.kapi.dev/v1","kind":"Widget","metadata":{"name":"baseline","namespace":"default"},"spec":{"color":"red","config":{"padding":""#;
    let tail = r#""}}}"#;
    let padding = OBJECT_SIZE - head.len() - tail.len();
    let mut body = Vec::with_capacity(OBJECT_SIZE);
    body.extend_from_slice(head.as_bytes());
    body.resize(head.len() + padding, b'x');
    body.extend_from_slice(tail.as_bytes());
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_one_kib_of_json() {
        let body = fixed_body();
        assert_eq!(body.len(), OBJECT_SIZE);
        let value: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(value["kind"], "Widget");
    }
}
