//! HTTPS: the rustls server configuration (TLS 1.2 and 1.3 with rustls' safe suites
//! only, ALPN `h2` and `http/1.1`) and client certificates.
//!
//! A client certificate is asked for but not required, and it is verified after the
//! handshake, by [`ClientCertificates::verify_user`], as kube-apiserver verifies one in its
//! x509 authenticator: a certificate from an unknown CA, or an expired one, then gets a
//! 401 `Status` the client can read, not a failed handshake. A chain that verified is
//! remembered until its first certificate expires: the CAs do not change while the
//! server runs, so it would verify the same way again, and its signature checks were
//! two fifths of the CPU of a request proxied to an aggregated server (BENCHMARKS.md).
//! A connection's chain is the same for every request on it, so what it proved is also
//! kept with the connection ([`Verdicts`]), and its later requests ask no one.

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

/// How long a connection's refused chain stays refused without being verified again
/// (seconds): a chain refused for its dates or its CA is refused the same way until
/// its `notBefore` comes, which this bounds.
pub const REFUSAL_KEPT: i64 = 10;

/// What one connection's client chain proved to each verifier that checked it (kept in
/// the connection's [`crate::authentication::Peer`]): which verifier, until when (Unix
/// seconds), and its answer.
#[derive(Debug, Default)]
pub struct Verdicts(Mutex<Vec<Verdict>>);

/// One verifier's verdict: the verifier, until when, and its answer.
type Verdict = (usize, i64, Result<kapi_auth::UserInfo, String>);

impl Verdicts {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Verdict>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, verifier: usize, seconds: i64) -> Option<Result<kapi_auth::UserInfo, String>> {
        let verdicts = self.lock();
        let (_, _, verdict) = verdicts
            .iter()
            .find(|(v, until, _)| *v == verifier && seconds < *until)?;
        Some(verdict.clone())
    }

    fn put(&self, verifier: usize, until: i64, verdict: Result<kapi_auth::UserInfo, String>) {
        let mut verdicts = self.lock();
        verdicts.retain(|(v, _, _)| *v != verifier);
        verdicts.push((verifier, until, verdict));
    }
}

/// `time` in Unix seconds.
fn seconds_of(time: UnixTime) -> i64 {
    i64::try_from(time.as_secs()).unwrap_or(i64::MAX)
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
        self.verify_until(chain).map(|(_, user)| user)
    }

    /// [`ClientCertificates::verify_user`] for a chain a connection presented, asked
    /// once per connection: `verdicts` are the connection's, and keep what this verifier
    /// said until the chain's first certificate expires (a refusal for
    /// [`REFUSAL_KEPT`] seconds), so that its requests after the first neither verify
    /// nor look the chain up by its bytes. A request with a certificate is checked as a
    /// front proxy's first and, refused there, as a client's: that refusal was verified
    /// anew on every request before.
    pub fn verify_user_for(
        &self,
        chain: &[CertificateDer<'_>],
        verdicts: &Verdicts,
    ) -> Result<kapi_auth::UserInfo, String> {
        // A verifier is known by its memory's address: verifiers are made at start and
        // live as long as the server, so no other one takes it while a connection is open.
        let me = Arc::as_ptr(&self.verified) as usize;
        let seconds = seconds_of(UnixTime::now());
        if let Some(verdict) = verdicts.get(me, seconds) {
            return verdict;
        }
        let (until, verdict) = match self.verify_until(chain) {
            Ok((until, user)) => (until, Ok(user)),
            Err(e) => (Some(seconds.saturating_add(REFUSAL_KEPT)), Err(e)),
        };
        if let Some(until) = until {
            verdicts.put(me, until, verdict.clone());
        }
        verdict
    }

    /// The user `chain` names and when its first certificate expires (`None`: an
    /// expiry that could not be read, so nothing is remembered).
    fn verify_until(
        &self,
        chain: &[CertificateDer<'_>],
    ) -> Result<(Option<i64>, kapi_auth::UserInfo), String> {
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
        let seconds = seconds_of(now);
        if let Some((until, user)) = self.memory().get(key) {
            if seconds < *until {
                return Ok((Some(*until), user.clone()));
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
        Ok((until, user))
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Verified> {
        self.verified.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Asks for a client certificate, checks the handshake signature made with it, and
/// leaves the chain to [`ClientCertificates::verify_user`].
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

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{CertificateParams, DnType, IsCa, Issuer, KeyPair};

    /// A CA's PEM and a chain (the client certificate alone) it signed for `name`.
    fn ca_and_client(name: &str) -> (String, Vec<CertificateDer<'static>>) {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::new()).unwrap();
        ca.distinguished_name.push(DnType::CommonName, "test-ca");
        ca.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
        let issuer = Issuer::new(ca, ca_key);
        let key = KeyPair::generate().unwrap();
        let mut client = CertificateParams::new(Vec::new()).unwrap();
        client.distinguished_name.push(DnType::CommonName, name);
        let cert = client.signed_by(&key, &issuer).unwrap();
        (ca_pem, vec![cert.der().clone()])
    }

    // A connection's chain never changes, so handing the same verdicts another chain
    // shows whether they were consulted.
    #[test]
    fn a_connection_asks_each_verifier_once() {
        let (ca, jane) = ca_and_client("jane");
        let (front_ca, proxy) = ca_and_client("front-proxy-client");
        let clients = ClientCertificates::new(&[("ca", ca)]).unwrap();
        let front = ClientCertificates::new(&[("front", front_ca)]).unwrap();
        let verdicts = Verdicts::default();

        assert_eq!(
            clients.verify_user_for(&jane, &verdicts).unwrap().name,
            "jane"
        );
        assert_eq!(
            clients.verify_user_for(&proxy, &verdicts).unwrap().name,
            "jane"
        );
        // The other verifier has a verdict of its own, and a refusal is kept too.
        assert!(front.verify_user_for(&jane, &verdicts).is_err());
        assert!(front.verify_user_for(&proxy, &verdicts).is_err());
        // Without the connection's verdicts, each chain is verified as it is.
        assert_eq!(
            front.verify_user(&proxy).unwrap().name,
            "front-proxy-client"
        );
        assert!(clients.verify_user(&proxy).is_err());
    }

    #[test]
    fn a_verdict_lasts_until_its_time() {
        let verdicts = Verdicts::default();
        verdicts.put(1, 100, Ok(kapi_auth::UserInfo::new("jane", &[])));
        verdicts.put(2, 50, Err("refused".into()));
        assert_eq!(verdicts.get(1, 99).unwrap().unwrap().name, "jane");
        assert!(verdicts.get(1, 100).is_none());
        assert!(verdicts.get(2, 49).unwrap().is_err());
        assert!(verdicts.get(2, 50).is_none());
        assert!(verdicts.get(3, 0).is_none());
        // A new verdict of the same verifier replaces the old.
        verdicts.put(1, 200, Err("expired".into()));
        assert!(verdicts.get(1, 150).unwrap().is_err());
    }
}
