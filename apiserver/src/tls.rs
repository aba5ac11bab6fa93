//! HTTPS: the rustls server configuration (TLS 1.2 and 1.3 with rustls' safe suites
//! only, ALPN `h2` and `http/1.1`) and client certificates.
//!
//! A client certificate is asked for but not required, and it is verified after the
//! handshake, by [`ClientCertificates::verify`], as kube-apiserver verifies one in its
//! x509 authenticator: a certificate from an unknown CA, or an expired one, then gets a
//! 401 `Status` the client can read, not a failed handshake. A chain that verified is
//! remembered until its first certificate expires: the CAs do not change while the
//! server runs, so it would verify the same way again, and its signature checks were
//! two fifths of the CPU of a request proxied to an aggregated server (BENCHMARKS.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ServerConfig, WebPkiClientVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

/// The crypto provider of the server (ring, as every rustls user in kapi).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The roots a client trusts from a PEM bundle (a `caBundle`), in kube's words when it
/// is not PEM certificates; an empty bundle gives no roots.
pub fn roots_of(pem: &[u8]) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| format!("unable to load root certificates: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("unable to load root certificates: {e}"))?;
    }
    Ok(roots)
}

/// A failed connect to `target` (`host:port`) in Go's `net` words, as kube's messages
/// quote them: `dial tcp 127.0.0.1:1: connect: connection refused`.
pub fn dial_error(target: &str, e: &std::io::Error) -> String {
    let why = match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
        _ => e.to_string(),
    };
    format!("dial tcp {target}: {why}")
}

/// Reads every certificate of a PEM text.
pub fn certificates(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what}: no certificate in it"));
    }
    Ok(certs)
}

/// Chains remembered as verified, at most: past it the memory starts again.
const VERIFIED_CHAINS: usize = 4096;

/// Chains (their DER, end entity first) that verified → when the first of their
/// certificates expires (Unix seconds), and the user the end entity names.
type Verified = HashMap<Vec<u8>, (i64, kapi_auth::UserInfo)>;

/// The CAs client certificates may be signed by.
#[derive(Clone, Debug)]
pub struct ClientCertificates {
    verifier: Arc<dyn ClientCertVerifier>,
    /// Chains remembered as verified.
    verified: Arc<Mutex<Verified>>,
}

impl ClientCertificates {
    /// Client certificates signed by any of the PEM CA bundles `cas`.
    pub fn new(cas: &[(&str, String)]) -> Result<Self, String> {
        let mut roots = RootCertStore::empty();
        for (what, pem) in cas {
            for cert in certificates(pem, what)? {
                roots.add(cert).map_err(|e| format!("{what}: {e}"))?;
            }
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .allow_unauthenticated()
            .build()
            .map_err(|e| format!("client CAs: {e}"))?;
        Ok(Self {
            verifier,
            verified: Arc::default(),
        })
    }

    /// Verifies a client's chain (end entity first) now, and reads the user its end
    /// entity names (kube's x509 user: CN the name, each O a group).
    pub fn verify_user(&self, chain: &[CertificateDer<'_>]) -> Result<kapi_auth::UserInfo, String> {
        let (end, intermediates) = chain.split_first().ok_or("no certificate")?;
        let now = UnixTime::now();
        // Most clients send their certificate alone: its bytes are the key as they are.
        let joined: Vec<u8>;
        let key: &[u8] = if intermediates.is_empty() {
            end.as_ref()
        } else {
            joined = chain
                .iter()
                .flat_map(|c| c.as_ref().iter().copied())
                .collect();
            &joined
        };
        let seconds = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        if let Some((until, user)) = self.memory().get(key) {
            if seconds < *until {
                return Ok(user.clone());
            }
        }
        self.verifier
            .verify_client_cert(end, intermediates, now)
            .map_err(|e| e.to_string())?;
        let user = kapi_auth::authn::x509::user_of(end).map_err(|e| e.to_string())?;
        let until = chain
            .iter()
            .map(|c| kapi_auth::authn::x509::not_after(c))
            .try_fold(i64::MAX, |earliest, t| t.map(|t| earliest.min(t)));
        if let Some(until) = until {
            let mut memory = self.memory();
            if memory.len() >= VERIFIED_CHAINS {
                memory.clear();
            }
            memory.insert(key.to_vec(), (until, user.clone()));
        }
        Ok(user)
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Verified> {
        self.verified.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Asks for a client certificate, checks the handshake signature made with it, and
/// leaves the chain to [`ClientCertificates::verify`].
#[derive(Debug)]
struct DeferredClientVerifier {
    inner: Arc<dyn ClientCertVerifier>,
}

impl ClientCertVerifier for DeferredClientVerifier {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The server's TLS configuration from its certificate chain and key (PEM).
pub fn server_config(
    cert_pem: &str,
    key_pem: &str,
    clients: &ClientCertificates,
) -> Result<Arc<ServerConfig>, String> {
    let chain = certificates(cert_pem, "the serving certificate")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| format!("the serving key: {e}"))?;
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS versions: {e}"))?
        .with_client_cert_verifier(Arc::new(DeferredClientVerifier {
            inner: clients.verifier.clone(),
        }))
        .with_single_cert(chain, key)
        .map_err(|e| format!("the serving certificate and key: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
