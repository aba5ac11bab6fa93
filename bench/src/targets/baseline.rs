//! The HTTP limit: a minimal hyper 1.x server in this process (its own tokio task on
//! `127.0.0.1:0`, HTTP/1.1 and HTTP/2 on one port) answering every request with the
//! same 1 KiB JSON body, driven by the same client as kapi. kapi's GET by name is
//! compared with its GET.

use std::convert::Infallible;
use std::net::SocketAddr;

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

/// The running server; it stops when dropped.
pub struct Baseline {
    addr: SocketAddr,
    accept: JoinHandle<()>,
}

impl Baseline {
    /// Starts the server on a free loopback port.
    pub async fn start() -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("binding the baseline server: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("baseline address: {e}"))?;
        let body = Bytes::from(fixed_body());
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                let body = body.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |_request: Request<Incoming>| {
                        let body = body.clone();
                        async move {
                            Ok::<_, Infallible>(
                                Response::builder()
                                    .status(StatusCode::OK)
                                    .header(header::CONTENT_TYPE, "application/json")
                                    .body(Full::new(body))
                                    .expect("a valid response"),
                            )
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

    /// One worker per client, each sending GETs.
    pub fn get_workers(clients: Vec<Client>) -> Vec<Worker> {
        clients
            .into_iter()
            .map(|client| -> Worker {
                Box::new(move |_seq| -> OpFuture {
                    let client = client.clone();
                    Box::pin(async move {
                        client
                            .send(Method::GET, "/apis/example.kapi.dev/v1/bench", None)
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
