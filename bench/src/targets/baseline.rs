//! The HTTP limit: a minimal hyper 1.x server in this process (its own tokio task on
//! `127.0.0.1:0`, HTTP/1.1 and HTTP/2 on one port) answering each of a few paths with
//! a fixed JSON body, driven by the same client as kapi: [`OBJECT_PATH`] with a 1 KiB
//! object (kapi's GET by name is compared with it), and any other bodies it is given,
//! such as a copy of kapi's own list responses (kapi's lists are compared with the
//! same bytes served without work). Any other path is a 404.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::client::Client;
use crate::driver::{OpFuture, Sample, Worker};
use crate::targets::OBJECT_SIZE;

/// The path of the 1 KiB object.
pub const OBJECT_PATH: &str = "/object";

/// The running server; it stops when dropped.
pub struct Baseline {
    addr: SocketAddr,
    accept: JoinHandle<()>,
}

impl Baseline {
    /// Starts the server on a free loopback port, answering [`OBJECT_PATH`] with
    /// [`fixed_body`] and each of `bodies` (path, body) with its body.
    pub async fn start(bodies: Vec<(String, Bytes)>) -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("binding the baseline server: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("baseline address: {e}"))?;
        let mut paths: HashMap<String, Bytes> = bodies.into_iter().collect();
        paths.insert(OBJECT_PATH.to_string(), Bytes::from(fixed_body()));
        let paths = Arc::new(paths);
        let accept = tokio::spawn(async move {
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
        });
        Ok(Self { addr, accept })
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
        // Open connections end with the runtime; no new ones are accepted.
        self.accept.abort();
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
