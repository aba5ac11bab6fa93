//! Calling a webhook (k8s.io/apiserver's `util/webhook`): one HTTPS POST of a JSON
//! review to a `clientConfig`, over HTTP/1.1 on rustls, trusting only the
//! configuration's `caBundle`. Admission webhooks and CRD conversion webhooks both call
//! through it; the authorization webhook is configured by a kubeconfig instead
//! ([`kubeconfig`]), which may also name the client's credentials.
//!
//! A `clientConfig.service` is reached through a [`ServiceResolver`] the server is
//! given (kube's `webhook.ServiceResolver`): kapi has no cluster network to route a
//! Service's cluster IP, so the resolver says which address serves it. The TLS server
//! name is the Service's DNS name, `<name>.<namespace>.svc`, as kube verifies it.
//!
//! Each call opens its own connection (no pool): webhooks are few and the handshake
//! is small next to what a webhook does. Errors are worded as Go's HTTP client words
//! them (`Post "URL": context deadline exceeded`), as kube-apiserver's messages quote
//! them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use serde_json::Value;

pub mod kubeconfig;

/// Says where a Service a webhook names is served (kube's `webhook.ServiceResolver`).
#[async_trait]
pub trait ServiceResolver: Send + Sync {
    /// The address that serves `port` of Service `namespace/name`, or why there is none.
    async fn resolve(&self, namespace: &str, name: &str, port: u16) -> Result<SocketAddr, String>;
}

/// Where the connection of a call goes.
#[derive(Clone)]
enum Target {
    /// A host and port from `clientConfig.url`.
    Host { host: String, port: u16 },
    /// A `clientConfig.service`, resolved at each call.
    Service {
        namespace: String,
        name: String,
        port: u16,
    },
}

/// The largest response read from a webhook.
const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// Where one webhook is called, ready to connect.
#[derive(Clone)]
pub struct Endpoint {
    /// The URL as configured (with `?timeout=` added per call).
    url: String,
    target: Target,
    /// The `Host` header.
    authority: String,
    /// The path and query of the request line.
    path: String,
    server_name: ServerName<'static>,
    tls: Arc<ClientConfig>,
    /// The `Authorization` header's bearer token, when the configuration names one.
    bearer: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("url", &self.url).finish()
    }
}

impl Endpoint {
    /// Reads a `clientConfig`: its `url` or its `service` (resolved by the resolver
    /// each call is given). A `caBundle` that is not PEM certificates is an error.
    pub fn from_client_config(config: &Value) -> Result<Self, String> {
        if let Some(service) = config.get("service").filter(|s| !s.is_null()) {
            return Self::for_service(config, service);
        }
        let url = config["url"]
            .as_str()
            .ok_or("the webhook has neither clientConfig.url nor clientConfig.service")?;
        Self::for_url(url, tls_config(config)?, "clientConfig.url")
    }

    /// An `https` URL called over `tls`; `what` names where the URL came from in errors.
    fn for_url(url: &str, tls: Arc<ClientConfig>, what: &str) -> Result<Self, String> {
        let uri: http::Uri = url.parse().map_err(|e| format!("{what} {url:?}: {e}"))?;
        if uri.scheme_str() != Some("https") {
            return Err(format!("{what} {url:?}: the scheme must be https"));
        }
        let host = uri
            .host()
            .ok_or_else(|| format!("{what} {url:?} has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(443);
        Ok(Self {
            url: url.to_string(),
            authority: authority(&host, port),
            path: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
            server_name: ServerName::try_from(host.clone())
                .map_err(|e| format!("{what} {url:?}: {e}"))?,
            tls,
            target: Target::Host { host, port },
            bearer: None,
        })
    }

    fn for_service(config: &Value, service: &Value) -> Result<Self, String> {
        let text = |k: &str| service[k].as_str().unwrap_or_default().to_string();
        let (namespace, name) = (text("namespace"), text("name"));
        let port = service["port"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(443);
        let mut path = text("path");
        if !path.starts_with('/') {
            path.insert(0, '/');
        }
        let host = format!("{name}.{namespace}.svc");
        let authority = authority(&host, port);
        Ok(Self {
            url: format!("https://{authority}{path}"),
            authority,
            path,
            server_name: ServerName::try_from(host)
                .map_err(|e| format!("clientConfig.service {namespace}/{name}: {e}"))?,
            tls: tls_config(config)?,
            target: Target::Service {
                namespace,
                name,
                port,
            },
            bearer: None,
        })
    }

    /// The URL of a call bounded by `timeout`: kube-apiserver tells the webhook its
    /// deadline with `?timeout=Ns`, rounded up to a second.
    fn with_timeout(base: &str, timeout: Duration) -> String {
        let secs = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}timeout={secs}s")
    }

    /// POSTs `body` (JSON) and returns the response body of a 2xx answer; anything
    /// else, or no answer within `timeout`, is an error message. `services` resolves a
    /// `clientConfig.service` (with none, such a webhook cannot be called).
    pub async fn post(
        &self,
        body: Vec<u8>,
        timeout: Duration,
        services: Option<&dyn ServiceResolver>,
    ) -> Result<Bytes, String> {
        let url = Self::with_timeout(&self.url, timeout);
        let path = Self::with_timeout(&self.path, timeout);
        match tokio::time::timeout(timeout, self.exchange(path, body, services)).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(e)) => Err(format!("Post \"{url}\": {e}")),
            Err(_) => Err(format!("Post \"{url}\": context deadline exceeded")),
        }
    }

    async fn exchange(
        &self,
        path: String,
        body: Vec<u8>,
        services: Option<&dyn ServiceResolver>,
    ) -> Result<Bytes, String> {
        let tcp = match &self.target {
            Target::Host { host, port } => tokio::net::TcpStream::connect((host.as_str(), *port))
                .await
                .map_err(|e| crate::tls::dial_error(&format!("{host}:{port}"), &e))?,
            Target::Service {
                namespace,
                name,
                port,
            } => {
                let Some(resolver) = services else {
                    return Err(format!(
                        "service \"{namespace}/{name}\" cannot be reached: this server resolves no Services, so its webhooks must be called through clientConfig.url"
                    ));
                };
                let address = resolver.resolve(namespace, name, *port).await?;
                tokio::net::TcpStream::connect(address)
                    .await
                    .map_err(|e| crate::tls::dial_error(&address.to_string(), &e))?
            }
        };
        let _ = tcp.set_nodelay(true);
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|e| format!("tls: {e}"))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        // The connection is driven beside the request, and stopped with it (also when
        // the call times out and this future is dropped).
        let _driver = AbortOnDrop(tokio::spawn(async move {
            let _ = conn.await;
        }));
        let mut request = http::Request::post(path)
            .header(http::header::HOST, self.authority.as_str())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json");
        if let Some(token) = &self.bearer {
            request = request.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading the response: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(status_error(status, &bytes));
        }
        Ok(bytes)
    }
}

/// The `Host` header for `host` (an IPv6 address in brackets) and `port`.
fn authority(host: &str, port: u16) -> String {
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    if port == 443 {
        host
    } else {
        format!("{host}:{port}")
    }
}

/// TLS trusting only the configuration's `caBundle`: kapi carries no system roots, so a
/// webhook without one cannot be verified and its calls fail.
fn tls_config(config: &Value) -> Result<Arc<ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(bundle) = config["caBundle"].as_str().filter(|b| !b.is_empty()) {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(bundle)
            .map_err(|e| format!("clientConfig.caBundle is not base64: {e}"))?;
        roots = crate::tls::roots_of(&pem)?;
        if roots.is_empty() {
            return Err("unable to load root certificates: no certificate in caBundle".into());
        }
    }
    client_tls(roots, None)
}

/// A client certificate chain and its key.
type ClientIdentity = (
    Vec<rustls::pki_types::CertificateDer<'static>>,
    rustls::pki_types::PrivateKeyDer<'static>,
);

/// TLS over HTTP/1.1 trusting `roots`, presenting `identity` when there is one.
fn client_tls(
    roots: rustls::RootCertStore,
    identity: Option<ClientIdentity>,
) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(crate::tls::provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots);
    let mut tls = match identity {
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("the client certificate: {e}"))?,
        None => builder.with_no_client_auth(),
    };
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(tls))
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A non-2xx answer: its `Status` message when it sent one, as client-go reports it.
fn status_error(status: http::StatusCode, body: &[u8]) -> String {
    let message = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_string));
    match message {
        Some(m) => m,
        None => format!(
            "the server responded with the status code {} but did not return more information",
            status.as_u16()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timeout_query_rounds_up() {
        assert_eq!(
            Endpoint::with_timeout("https://h/p", Duration::from_millis(1500)),
            "https://h/p?timeout=2s"
        );
        assert_eq!(
            Endpoint::with_timeout("/p?x=1", Duration::from_secs(10)),
            "/p?x=1&timeout=10s"
        );
    }

    fn host_of(e: &Endpoint) -> (&str, u16) {
        match &e.target {
            Target::Host { host, port } => (host.as_str(), *port),
            Target::Service { .. } => panic!("not a URL"),
        }
    }

    #[test]
    fn client_configs() {
        let url = |v: Value| Endpoint::from_client_config(&v);
        let e = url(json!({"url": "https://127.0.0.1:8443/x?y=1"})).unwrap();
        assert_eq!(
            (host_of(&e), e.path.as_str()),
            (("127.0.0.1", 8443), "/x?y=1")
        );
        let e = url(json!({"url": "https://[::1]/"})).unwrap();
        assert_eq!((host_of(&e), e.authority.as_str()), (("::1", 443), "[::1]"));
        let e = url(json!({"url": "https://hooks.example.com"})).unwrap();
        assert_eq!(e.path, "/");
        // A Service: its DNS name (kube's TLS server name), port 443.
        let service = json!({"service": {"namespace": "ns", "name": "svc", "path": "convert"}});
        let e = url(service).unwrap();
        assert_eq!(e.url, "https://svc.ns.svc/convert");
        assert_eq!(
            format!("{:?}", e.server_name),
            format!("{:?}", ServerName::try_from("svc.ns.svc").unwrap())
        );
        let err = url(json!({"url": "http://x/"})).unwrap_err();
        assert!(err.contains("https"), "{err}");
        let err = url(json!({"url": "https://x/", "caBundle": "!!"})).unwrap_err();
        assert!(err.contains("base64"), "{err}");
        let not_pem = base64::engine::general_purpose::STANDARD.encode("hello");
        let err = url(json!({"url": "https://x/", "caBundle": not_pem})).unwrap_err();
        assert!(err.contains("no certificate"), "{err}");
    }

    struct Nowhere;

    #[async_trait]
    impl ServiceResolver for Nowhere {
        async fn resolve(&self, _: &str, _: &str, _: u16) -> Result<SocketAddr, String> {
            Err("no endpoints".into())
        }
    }

    #[tokio::test]
    async fn services_are_resolved_at_each_call() {
        let config = json!({"service": {"namespace": "ns", "name": "svc"}});
        let e = Endpoint::from_client_config(&config).unwrap();
        let timeout = Duration::from_secs(1);
        let err = e.post(Vec::new(), timeout, None).await.unwrap_err();
        assert!(
            err.contains("service \"ns/svc\" cannot be reached"),
            "{err}"
        );
        let err = e
            .post(Vec::new(), timeout, Some(&Nowhere))
            .await
            .unwrap_err();
        assert_eq!(err, "Post \"https://svc.ns.svc/?timeout=1s\": no endpoints");
    }

    #[test]
    fn error_wording() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            crate::tls::dial_error("127.0.0.1:1", &refused),
            "dial tcp 127.0.0.1:1: connect: connection refused"
        );
        assert_eq!(
            status_error(http::StatusCode::BAD_GATEWAY, b"oops"),
            "the server responded with the status code 502 but did not return more information"
        );
        assert_eq!(
            status_error(http::StatusCode::FORBIDDEN, br#"{"message": "no"}"#),
            "no"
        );
    }
}
