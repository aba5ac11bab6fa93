//! The call: one HTTPS POST of an `AdmissionReview` to `clientConfig.url`, over
//! HTTP/1.1 on rustls, trusting only the configuration's `caBundle`.
//!
//! Each call opens its own connection (no pool): webhooks are few and the handshake
//! is small next to what a webhook does. Errors are worded as Go's HTTP client words
//! them (`Post "URL": context deadline exceeded`), as kube-apiserver's messages quote
//! them.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use serde_json::Value;

/// The largest response read from a webhook.
const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// Where one webhook is called, ready to connect.
#[derive(Clone)]
pub struct Endpoint {
    /// The URL as configured (with `?timeout=` added per call).
    url: String,
    host: String,
    port: u16,
    /// The path and query of the request line.
    path: String,
    server_name: ServerName<'static>,
    tls: Arc<ClientConfig>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("url", &self.url).finish()
    }
}

impl Endpoint {
    /// Reads a `clientConfig`. `service` cannot be reached from kapi, which has no
    /// cluster network to route a Service's cluster IP: that is an error, as is a
    /// `caBundle` that is not PEM certificates.
    pub fn from_client_config(config: &Value) -> Result<Self, String> {
        if let Some(service) = config.get("service").filter(|s| !s.is_null()) {
            return Err(format!(
                "service \"{}/{}\" cannot be reached: kapi has no cluster network, so webhooks must be called through clientConfig.url",
                service["namespace"].as_str().unwrap_or_default(),
                service["name"].as_str().unwrap_or_default()
            ));
        }
        let url = config["url"]
            .as_str()
            .ok_or("the webhook has neither clientConfig.url nor clientConfig.service")?;
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("clientConfig.url {url:?}: {e}"))?;
        if uri.scheme_str() != Some("https") {
            return Err(format!(
                "clientConfig.url {url:?}: the scheme must be https"
            ));
        }
        let host = uri
            .host()
            .ok_or_else(|| format!("clientConfig.url {url:?} has no host"))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let server_name = ServerName::try_from(host.clone())
            .map_err(|e| format!("clientConfig.url {url:?}: {e}"))?;
        // Only the caBundle is trusted: kapi carries no system roots, so a webhook
        // without one cannot be verified and its calls fail (failurePolicy decides).
        let mut roots = rustls::RootCertStore::empty();
        if let Some(bundle) = config["caBundle"].as_str().filter(|b| !b.is_empty()) {
            let pem = base64::engine::general_purpose::STANDARD
                .decode(bundle)
                .map_err(|e| format!("clientConfig.caBundle is not base64: {e}"))?;
            roots = kapi_apiserver::tls::roots_of(&pem)?;
            if roots.is_empty() {
                return Err("unable to load root certificates: no certificate in caBundle".into());
            }
        }
        let mut tls = ClientConfig::builder_with_provider(kapi_apiserver::tls::provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            url: url.to_string(),
            port: uri.port_u16().unwrap_or(443),
            host,
            path: uri.path_and_query().map_or("/", |p| p.as_str()).to_string(),
            server_name,
            tls: Arc::new(tls),
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
    /// else, or no answer within `timeout`, is an error message.
    pub async fn post(&self, body: Vec<u8>, timeout: Duration) -> Result<Bytes, String> {
        let url = Self::with_timeout(&self.url, timeout);
        let path = Self::with_timeout(&self.path, timeout);
        match tokio::time::timeout(timeout, self.exchange(path, body)).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(e)) => Err(format!("Post \"{url}\": {e}")),
            Err(_) => Err(format!("Post \"{url}\": context deadline exceeded")),
        }
    }

    async fn exchange(&self, path: String, body: Vec<u8>) -> Result<Bytes, String> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| {
                kapi_apiserver::tls::dial_error(&format!("{}:{}", self.host, self.port), &e)
            })?;
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
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let authority = if self.port == 443 {
            host
        } else {
            format!("{host}:{}", self.port)
        };
        let request = http::Request::post(path)
            .header(http::header::HOST, authority)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
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

    #[test]
    fn client_configs() {
        let e =
            Endpoint::from_client_config(&json!({"url": "https://127.0.0.1:8443/x?y=1"})).unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("127.0.0.1", 8443, "/x?y=1")
        );
        let e = Endpoint::from_client_config(&json!({"url": "https://[::1]/"})).unwrap();
        assert_eq!((e.host.as_str(), e.port), ("::1", 443));
        let e = Endpoint::from_client_config(&json!({"url": "https://hooks.example.com"})).unwrap();
        assert_eq!(e.path, "/");
        let err =
            Endpoint::from_client_config(&json!({"service": {"namespace": "ns", "name": "svc"}}))
                .unwrap_err();
        assert!(
            err.contains("service \"ns/svc\" cannot be reached"),
            "{err}"
        );
        let err = Endpoint::from_client_config(&json!({"url": "http://x/"})).unwrap_err();
        assert!(err.contains("https"), "{err}");
        let err = Endpoint::from_client_config(&json!({"url": "https://x/", "caBundle": "!!"}))
            .unwrap_err();
        assert!(err.contains("base64"), "{err}");
        let not_pem = base64::engine::general_purpose::STANDARD.encode("hello");
        let err = Endpoint::from_client_config(&json!({"url": "https://x/", "caBundle": not_pem}))
            .unwrap_err();
        assert!(err.contains("no certificate"), "{err}");
    }

    #[test]
    fn error_wording() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            kapi_apiserver::tls::dial_error("127.0.0.1:1", &refused),
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
