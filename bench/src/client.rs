//! The HTTP client every HTTP target uses: hyper 1.x connections to a loopback
//! server, HTTP/1.1 keep-alive (one connection per worker) or HTTP/2 (one connection
//! shared by every worker, requests multiplexed on it).

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;
use tokio::sync::Mutex;

/// How requests travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Transport {
    /// HTTP/1.1 with keep-alive, one connection per worker.
    #[value(name = "http1")]
    Http1,
    /// HTTP/2 over cleartext (prior knowledge), one connection for every worker.
    #[value(name = "http2")]
    Http2,
}

impl Transport {
    /// Both transports.
    pub const ALL: [Transport; 2] = [Transport::Http1, Transport::Http2];
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Http1 => "HTTP/1.1",
            Transport::Http2 => "HTTP/2",
        })
    }
}

/// One connection's request sender.
#[derive(Clone)]
enum Sender {
    // HTTP/1.1 sends one request at a time: the lock is the worker's own.
    Http1(Arc<Mutex<http1::SendRequest<Full<Bytes>>>>),
    Http2(http2::SendRequest<Full<Bytes>>),
}

/// A connection to one server; cloning it shares the connection.
#[derive(Clone)]
pub struct Client {
    sender: Sender,
    authority: String,
}

/// A response: its status and whole body.
pub struct Reply {
    /// The status code.
    pub status: StatusCode,
    /// The body, read to the end.
    pub body: Bytes,
}

impl Reply {
    /// `Ok(self)` when the status is `expected`, else an error naming `what`, the
    /// status and the start of the body.
    pub fn expect(self, what: &str, expected: StatusCode) -> Result<Self, String> {
        if self.status == expected {
            Ok(self)
        } else {
            let body = String::from_utf8_lossy(&self.body[..self.body.len().min(300)]).into_owned();
            Err(format!(
                "{what}: {} (expected {expected}): {body}",
                self.status
            ))
        }
    }
}

/// A TCP connection to `addr` without Nagle's delay, ready for hyper.
pub async fn tcp(addr: SocketAddr) -> Result<TokioIo<TcpStream>, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connecting to {addr}: {e}"))?;
    stream
        .set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY: {e}"))?;
    Ok(TokioIo::new(stream))
}

impl Client {
    /// Opens one connection to `addr` speaking `transport`.
    pub async fn connect(addr: SocketAddr, transport: Transport) -> Result<Self, String> {
        let io = tcp(addr).await?;
        let sender = match transport {
            Transport::Http1 => {
                let (sender, connection) = http1::handshake(io)
                    .await
                    .map_err(|e| format!("HTTP/1.1 handshake with {addr}: {e}"))?;
                tokio::spawn(connection);
                Sender::Http1(Arc::new(Mutex::new(sender)))
            }
            Transport::Http2 => {
                let (sender, connection) = http2::handshake(TokioExecutor::new(), io)
                    .await
                    .map_err(|e| format!("HTTP/2 handshake with {addr}: {e}"))?;
                tokio::spawn(connection);
                Sender::Http2(sender)
            }
        };
        Ok(Self {
            sender,
            authority: addr.to_string(),
        })
    }

    /// Sends one request (`body` of `content_type` when given) and reads the
    /// whole response.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<(&'static str, Bytes)>,
    ) -> Result<Reply, String> {
        self.send_accepting(method, path_and_query, "application/json", body)
            .await
    }

    /// [`Client::send`] with the `Accept` header `accept`.
    pub async fn send_accepting(
        &self,
        method: Method,
        path_and_query: &str,
        accept: &'static str,
        body: Option<(&'static str, Bytes)>,
    ) -> Result<Reply, String> {
        let uri = format!("http://{}{path_and_query}", self.authority);
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::ACCEPT, accept);
        if matches!(self.sender, Sender::Http1(_)) {
            request = request.header(header::HOST, &self.authority);
        }
        let (content_type, body) = match body {
            Some((content_type, bytes)) => (Some(content_type), bytes),
            None => (None, Bytes::new()),
        };
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| format!("building a request: {e}"))?;
        let response = match &self.sender {
            Sender::Http1(sender) => {
                let mut sender = sender.lock().await;
                sender
                    .ready()
                    .await
                    .map_err(|e| format!("HTTP/1.1 connection: {e}"))?;
                sender.send_request(request).await
            }
            Sender::Http2(sender) => {
                let mut sender = sender.clone();
                sender
                    .ready()
                    .await
                    .map_err(|e| format!("HTTP/2 connection: {e}"))?;
                sender.send_request(request).await
            }
        }
        .map_err(|e| format!("request: {e}"))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("reading a response: {e}"))?
            .to_bytes();
        Ok(Reply { status, body })
    }
}

/// One client per worker: its own connection over HTTP/1.1, clones of one shared
/// connection over HTTP/2.
pub async fn clients(
    addr: SocketAddr,
    transport: Transport,
    workers: usize,
) -> Result<Vec<Client>, String> {
    match transport {
        Transport::Http1 => {
            let mut clients = Vec::with_capacity(workers);
            for _ in 0..workers {
                clients.push(Client::connect(addr, transport).await?);
            }
            Ok(clients)
        }
        Transport::Http2 => {
            let shared = Client::connect(addr, transport).await?;
            Ok(vec![shared; workers])
        }
    }
}
