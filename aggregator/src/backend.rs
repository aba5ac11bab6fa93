//! The connections to one remote APIService's server: TLS verified with the
//! APIService's `caBundle` (or not at all with `insecureSkipTLSVerify`), the
//! aggregator's front-proxy client certificate.
//!
//! Requests go on HTTP/1.1 keep-alive connections, one per request in flight, back in
//! the pool when the answer is done. Go's transport would speak HTTP/2 to a server that
//! offers it; hyper's HTTP/2 costs several times its HTTP/1.1 per request on both ends
//! (BENCHMARKS.md, issues #18 and #21), and a proxied request paid it twice. Driving
//! `h2` directly made A's side cheaper, but requests sharing a connection then move
//! through the client, A and B as one batch, each waiting for the other's (measured
//! four ways, each slower than pooled HTTP/1.1). Watches are the exception: they share
//! HTTP/2 connections, so that the backend writes many watches' events together, as it
//! does to a client watching over HTTP/2 itself, instead of one write per watch and
//! event (BENCHMARKS.md, issue #21).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kapi_apiserver::coalesce::Coalesce;
use kapi_apiserver::endpoints::FrontBody;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

use crate::api_service::{ServiceRef, Spec};

/// How long a connection may take to open (TCP and TLS).
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);

/// Idle connections kept per backend, at most.
const IDLE_CONNECTIONS: usize = 64;

/// Watches on one HTTP/2 connection, at most: under the streams a server allows on a
/// connection (Go's HTTP/2 server, 250 by default); more would wait for a place.
const WATCHES_PER_CONNECTION: usize = 100;

/// A watch connection's flow-control windows: a watch's events are read as they come,
/// so they only bound what is in flight; large ones save window updates.
const WATCH_STREAM_WINDOW: u32 = 1 << 20;
const WATCH_CONNECTION_WINDOW: u32 = 16 << 20;

/// The aggregator's client certificate and key (PEM), presented to every backend.
#[derive(Clone, Debug)]
pub struct ProxyIdentity {
    /// The certificate chain.
    pub cert_pem: String,
    /// The key.
    pub key_pem: String,
}

type Idle = Arc<Mutex<Vec<http1::SendRequest<FrontBody>>>>;

/// An HTTP/2 connection watches share, with how many it carries.
#[derive(Clone, Debug)]
struct WatchConnection {
    sender: http2::SendRequest<FrontBody>,
    watches: Arc<AtomicUsize>,
}

/// A connection lent to one request: back to its pool when the answer is done with
/// (dropped), unless it closed; a connection whose answer was not read to the end is
/// closed by hyper and found so when next taken. A watch's stream leaves a place on its
/// shared connection.
#[derive(Debug)]
pub enum InFlight {
    /// An HTTP/1.1 connection of the pool.
    Pooled {
        /// The connection, until it goes back.
        sender: Option<http1::SendRequest<FrontBody>>,
        /// The pool.
        idle: Idle,
    },
    /// A stream of a shared HTTP/2 connection: its count of watches.
    Watch(Arc<AtomicUsize>),
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let (sender, idle) = match self {
            InFlight::Pooled { sender, idle } => (sender, idle),
            InFlight::Watch(watches) => {
                watches.fetch_sub(1, Ordering::Relaxed);
                return;
            }
        };
        let Some(sender) = sender.take() else {
            return;
        };
        if sender.is_closed() {
            return;
        }
        let mut idle = lock(idle);
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(sender);
        }
    }
}

/// One remote server, as an APIService and its resolved endpoint name it.
pub struct Backend {
    tls: Arc<ClientConfig>,
    /// `tls` offering HTTP/2 first, for watches.
    watch_tls: Arc<ClientConfig>,
    /// Set once the backend answered a watch connection without HTTP/2: its watches
    /// go on HTTP/1.1 like the rest.
    no_http2: AtomicBool,
    watch_connections: Mutex<Vec<WatchConnection>>,
    server_name: ServerName<'static>,
    /// `<service>.<namespace>.svc[:port]`, the `Host` the backend is asked for.
    host: http::HeaderValue,
    address: SocketAddr,
    idle: Idle,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("host", &self.host)
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

/// The name a Service's serving certificate carries, as kube-aggregator verifies it:
/// `<name>.<namespace>.svc`.
pub fn service_host(service: &ServiceRef) -> String {
    format!("{}.{}.svc", service.name, service.namespace)
}

impl Backend {
    /// The backend of `spec` (a remote APIService) at `address`.
    pub fn new(spec: &Spec, address: SocketAddr, identity: &ProxyIdentity) -> Result<Self, String> {
        let service = spec
            .service
            .as_ref()
            .ok_or("a local APIService has no backend")?;
        let host = service_host(service);
        let server_name = ServerName::try_from(host.clone()).map_err(|e| e.to_string())?;
        let builder = ClientConfig::builder_with_provider(kapi_apiserver::tls::provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?;
        let builder = if spec.insecure_skip_tls_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerification(
                    kapi_apiserver::tls::provider(),
                )))
        } else {
            builder.with_root_certificates(kapi_apiserver::tls::roots_of(&spec.ca_bundle)?)
        };
        let chain = CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("the proxy client certificate: {e}"))?;
        let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes())
            .map_err(|e| format!("the proxy client key: {e}"))?;
        let mut tls = builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("the proxy client certificate: {e}"))?;
        let mut watch_tls = tls.clone();
        watch_tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let authority = if service.port == 443 {
            host
        } else {
            format!("{host}:{}", service.port)
        };
        Ok(Backend {
            tls: Arc::new(tls),
            watch_tls: Arc::new(watch_tls),
            no_http2: AtomicBool::new(false),
            watch_connections: Mutex::default(),
            server_name,
            host: http::HeaderValue::from_str(&authority)
                .map_err(|e| format!("the service's host {authority:?}: {e}"))?,
            address,
            idle: Arc::default(),
        })
    }

    /// The endpoint requests go to.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Sends `req` (its URI the path and query only) on an idle connection or a new
    /// one (a `watch` on a shared HTTP/2 connection); the answer comes with the
    /// connection, to hold until its body is done.
    pub async fn send(
        &self,
        mut req: Request<FrontBody>,
        watch: bool,
    ) -> Result<(Response<Incoming>, InFlight), String> {
        let mut uri = http::uri::Parts::default();
        uri.path_and_query = Some(
            req.uri()
                .path_and_query()
                .cloned()
                .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/")),
        );
        *req.uri_mut() = http::Uri::from_parts(uri).map_err(|e| format!("{e}"))?;
        req.headers_mut()
            .insert(http::header::HOST, self.host.clone());
        let mut fresh = None;
        if watch && !self.no_http2.load(Ordering::Relaxed) {
            match self.send_watch(&mut req).await? {
                WatchSent::Sent(res, held) => return Ok((res, held)),
                WatchSent::NoHttp2(io) => fresh = Some(*io),
            }
        }
        let mut sender = match fresh {
            Some(io) => http1_sender(io).await?,
            None => match self.idle_sender().await {
                Some(sender) => sender,
                None => http1_sender(self.dial(&self.tls).await?).await?,
            },
        };
        let res = sender
            .send_request(req)
            .await
            .map_err(|e| format!("error trying to reach service: {e}"))?;
        let held = InFlight::Pooled {
            sender: Some(sender),
            idle: self.idle.clone(),
        };
        Ok((res, held))
    }

    /// Sends a watch on a shared HTTP/2 connection with room, or on a new one; the new
    /// connection back (and `req` untouched) when the backend does not speak HTTP/2.
    async fn send_watch(&self, req: &mut Request<FrontBody>) -> Result<WatchSent, String> {
        let connection = match self.watch_connection() {
            Some(connection) => connection,
            None => {
                let io = self.dial(&self.watch_tls).await?;
                if io.get_ref().1.alpn_protocol() != Some(b"h2") {
                    self.no_http2.store(true, Ordering::Relaxed);
                    return Ok(WatchSent::NoHttp2(Box::new(io)));
                }
                let (sender, conn) = http2::Builder::new(TokioExecutor::new())
                    .initial_stream_window_size(WATCH_STREAM_WINDOW)
                    .initial_connection_window_size(WATCH_CONNECTION_WINDOW)
                    .handshake(TokioIo::new(Coalesce::new(io)))
                    .await
                    .map_err(|e| format!("error trying to reach service: {e}"))?;
                tokio::spawn(drive(conn));
                let connection = WatchConnection {
                    sender,
                    watches: Arc::new(AtomicUsize::new(1)),
                };
                lock(&self.watch_connections).push(connection.clone());
                connection
            }
        };
        // Held from here, so that a failed send leaves its place too.
        let held = InFlight::Watch(connection.watches);
        let mut sender = connection.sender;
        let req = std::mem::replace(req, Request::new(FrontBody::default()));
        let sent = async {
            sender.ready().await?;
            sender.send_request(req).await
        };
        let res = sent
            .await
            .map_err(|e| format!("error trying to reach service: {e}"))?;
        Ok(WatchSent::Sent(res, held))
    }

    /// A shared HTTP/2 connection with room for one more watch, counted in.
    fn watch_connection(&self) -> Option<WatchConnection> {
        let mut connections = lock(&self.watch_connections);
        connections.retain(|c| !c.sender.is_closed());
        let connection = connections
            .iter()
            .find(|c| c.watches.load(Ordering::Relaxed) < WATCHES_PER_CONNECTION)?;
        connection.watches.fetch_add(1, Ordering::Relaxed);
        Some(connection.clone())
    }

    /// An idle connection ready for a request, if one is left.
    async fn idle_sender(&self) -> Option<http1::SendRequest<FrontBody>> {
        loop {
            let mut sender = lock(&self.idle).pop()?;
            if sender.is_ready() {
                return Some(sender);
            }
            // One that just finished its last answer gets a moment to be ready.
            let ready = tokio::time::timeout(Duration::from_secs(1), sender.ready()).await;
            if matches!(ready, Ok(Ok(()))) {
                return Some(sender);
            }
        }
    }

    async fn dial(&self, tls: &Arc<ClientConfig>) -> Result<Tls, String> {
        let address = self.address;
        let connect = async {
            let tcp = tokio::net::TcpStream::connect(address).await.map_err(|e| {
                let why = kapi_apiserver::tls::dial_error(&address.to_string(), &e);
                format!("error trying to reach service: {why}")
            })?;
            let _ = tcp.set_nodelay(true);
            tokio_rustls::TlsConnector::from(tls.clone())
                .connect(self.server_name.clone(), tcp)
                .await
                .map_err(|e| format!("error trying to reach service: tls: {e}"))
        };
        tokio::time::timeout(DIAL_TIMEOUT, connect)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "error trying to reach service: dial tcp {address}: i/o timeout"
                ))
            })
    }
}

/// A TLS connection to a backend.
type Tls = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

/// What became of a watch offered to HTTP/2.
enum WatchSent {
    /// Sent: the answer, and the place it holds on its connection.
    Sent(Response<Incoming>, InFlight),
    /// The backend answered a new connection without HTTP/2: the connection, for
    /// HTTP/1.1.
    NoHttp2(Box<Tls>),
}

/// An HTTP/1.1 connection over `io`, driven by a task of its own.
async fn http1_sender(io: Tls) -> Result<http1::SendRequest<FrontBody>, String> {
    let (sender, conn) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| format!("error trying to reach service: {e}"))?;
    tokio::spawn(drive(conn));
    Ok(sender)
}

/// Drives a connection until it ends.
async fn drive(conn: impl Future<Output = Result<(), hyper::Error>>) {
    if let Err(e) = conn.await {
        tracing::debug!(error = %e, "connection to an aggregated server ended");
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `insecureSkipTLSVerify`: any certificate is taken (the handshake's signatures are
/// still checked).
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
