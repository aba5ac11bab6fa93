//! An HTTPS server in the test process for kapi to call (admission and conversion
//! webhooks): rustls with a certificate of the test's own CA (given to kapi as
//! `caBundle`), valid for 127.0.0.1 and the DNS names asked for. Every request's JSON
//! body is recorded with its path, and answered by the test's handler.

// Each suite that includes this module reads part of what it records.
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::Value;

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    /// Its path, without the query.
    pub path: String,
    /// Its query.
    pub query: String,
    /// Its body, parsed (`null` when it is not JSON).
    pub body: Value,
    /// Its `Authorization` header, if any.
    pub authorization: Option<String>,
}

/// The answer to a request: a 200 with this JSON body, when the future is done.
pub type Answer = Pin<Box<dyn Future<Output = Value> + Send>>;

/// Answers requests.
pub type Handler = Arc<dyn Fn(Received) -> Answer + Send + Sync>;

/// The server; stopped when dropped.
pub struct HttpsServer {
    runtime: tokio::runtime::Runtime,
    /// Its loopback port.
    pub port: u16,
    /// The base64 PEM of its CA, for `caBundle`.
    pub ca_bundle: String,
    received: Arc<Mutex<Vec<Received>>>,
}

fn certificate(dns_names: &[&str]) -> (rcgen::Certificate, KeyPair, String) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "webhook-test-ca");
    ca.distinguished_name = dn;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::from_ca_cert_pem(&ca_pem, &ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut names = vec!["127.0.0.1".to_string()];
    names.extend(dns_names.iter().map(ToString::to_string));
    let mut params = CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "webhook");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &issuer).unwrap();
    (cert, key, ca_pem)
}

impl HttpsServer {
    /// Starts a server for `dns_names` (and 127.0.0.1) answering with `handler`.
    pub fn start(dns_names: &[&str], handler: Handler) -> Self {
        let (cert, key, ca_pem) = certificate(dns_names);
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let recorder = received.clone();
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, recorder, handler) =
                    (acceptor.clone(), recorder.clone(), handler.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req| {
                        answer(req, recorder.clone(), handler.clone())
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Self {
            runtime,
            port,
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_pem),
            received,
        }
    }

    /// Its URL for `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        // Requests still being answered (a slow webhook) are dropped with the runtime.
        let runtime = std::mem::replace(
            &mut self.runtime,
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap(),
        );
        runtime.shutdown_background();
    }
}

async fn answer(
    req: hyper::Request<Incoming>,
    recorder: Arc<Mutex<Vec<Received>>>,
    handler: Handler,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    let authorization = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let received = Received {
        path,
        query,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        authorization,
    };
    recorder.lock().unwrap().push(received.clone());
    let answer = handler(received).await;
    Ok(hyper::Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(&answer).unwrap())))
        .unwrap())
}
