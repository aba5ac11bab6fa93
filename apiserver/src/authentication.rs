//! Who a request comes from, tried in kube-apiserver's order: a trusted front proxy's
//! headers (its client certificate checked against the `--requestheader-*` settings),
//! the connection's client certificate, then a bearer token (the `--token-auth-file`'s, then a ServiceAccount
//! token), then — only with `--anonymous-auth` — the anonymous user. A credential that
//! is presented and refused is a 401, never anonymous.

use std::sync::Arc;

use http::{HeaderMap, StatusCode, header};
use kapi_auth::UserInfo;
use kapi_auth::authn::{RequestHeaderNames, ServiceAccountTokens, TokenError, TokenFile};
use kapi_storage::ReadAt;
use rustls::pki_types::CertificateDer;

use crate::registry::Registry;
use crate::status::ApiError;
use crate::tls::{ClientCertificates, Verdicts};

/// What the connection a request came on tells about its client.
#[derive(Debug, Default)]
pub struct Peer {
    /// The client's address.
    pub address: Option<std::net::SocketAddr>,
    /// The client certificate chain it presented (end entity first), if any.
    pub certificates: Vec<CertificateDer<'static>>,
    /// What that chain proved to the verifiers that checked it, for the connection's
    /// later requests.
    pub verdicts: Verdicts,
}

impl Peer {
    /// The peer at `address` that presented `certificates`.
    pub fn new(
        address: Option<std::net::SocketAddr>,
        certificates: Vec<CertificateDer<'static>>,
    ) -> Self {
        Peer {
            address,
            certificates,
            verdicts: Verdicts::default(),
        }
    }
}

/// The front proxies a server trusts to name the user in headers (kube-apiserver's
/// `--requestheader-client-ca-file`, `--requestheader-allowed-names` and
/// `--requestheader-*-headers`).
pub struct FrontProxy {
    /// The CAs of the proxies' client certificates.
    pub clients: ClientCertificates,
    /// The common names a proxy's certificate may have; empty: any.
    pub allowed_names: Vec<String>,
    /// The headers the user is named in.
    pub headers: RequestHeaderNames,
}

impl FrontProxy {
    /// The user a request names, when it comes from a trusted proxy: `Ok(None)` when
    /// the proxy names none, an error when the certificate is not a trusted proxy's.
    fn user(&self, peer: &Peer, headers: &HeaderMap) -> Result<Option<UserInfo>, String> {
        let name = self
            .clients
            .verify_user_for(&peer.certificates, &peer.verdicts)?
            .name;
        if !self.allowed_names.is_empty() && !self.allowed_names.contains(&name) {
            return Err(format!(
                "client certificate CN {name:?} is not among the allowed front-proxy names {:?}",
                self.allowed_names
            ));
        }
        Ok(self.headers.user(headers))
    }
}

/// The authenticators of a server.
pub struct Authenticator {
    /// Front proxies (`None`: no request-header authentication).
    pub front_proxy: Option<FrontProxy>,
    /// Client certificate CAs (`None` when serving plain HTTP).
    pub clients: Option<ClientCertificates>,
    /// `--token-auth-file`.
    pub tokens: Option<TokenFile>,
    /// ServiceAccount tokens.
    pub service_accounts: Arc<ServiceAccountTokens>,
    /// `--anonymous-auth`.
    pub anonymous: bool,
}

/// kube-apiserver's 401: the message says no more than this, whatever failed.
pub fn unauthorized() -> ApiError {
    ApiError {
        code: StatusCode::UNAUTHORIZED,
        reason: "Unauthorized",
        message: "Unauthorized".into(),
        details: None,
        continue_token: None,
    }
}

impl Authenticator {
    /// The user of a request, or a 401.
    pub async fn authenticate(
        &self,
        registry: &Registry,
        peer: &Peer,
        headers: &HeaderMap,
    ) -> Result<UserInfo, ApiError> {
        let mut refused = None;
        if let (Some(front), false) = (&self.front_proxy, peer.certificates.is_empty()) {
            match front.user(peer, headers) {
                Ok(Some(user)) => return Ok(user.authenticated()),
                Ok(None) => {}
                Err(e) => refused = Some(format!("front proxy: {e}")),
            }
        }
        if let (Some(clients), false) = (&self.clients, peer.certificates.is_empty()) {
            match clients.verify_user_for(&peer.certificates, &peer.verdicts) {
                Ok(user) => return Ok(user.authenticated()),
                Err(e) => {
                    let before = refused.map(|r| format!("{r}; ")).unwrap_or_default();
                    refused = Some(format!("{before}client certificate: {e}"));
                }
            }
        }
        if let Some(token) = bearer(headers) {
            return match self.authenticate_token(registry, token, &[]).await {
                Ok(user) => Ok(user.authenticated()),
                Err(e) => {
                    tracing::debug!(error = %e, "bearer token refused");
                    Err(unauthorized())
                }
            };
        }
        if let Some(why) = refused {
            tracing::debug!(error = %why, "client certificate refused");
            return Err(unauthorized());
        }
        if self.anonymous {
            return Ok(UserInfo::anonymous());
        }
        Err(unauthorized())
    }

    /// The user of a bearer token (also TokenReview's answer), for `audiences` (the
    /// API's own when empty); the error says why not.
    pub async fn authenticate_token(
        &self,
        registry: &Registry,
        token: &str,
        audiences: &[String],
    ) -> Result<UserInfo, String> {
        if let Some(user) = self.tokens.as_ref().and_then(|t| t.authenticate(token)) {
            return Ok(user);
        }
        let now = chrono::Utc::now().timestamp();
        let claims = match self.service_accounts.verify(token, audiences, now) {
            Ok(claims) => claims,
            Err(TokenError::NotOurs) => return Err("invalid bearer token".into()),
            Err(e) => return Err(e.to_string()),
        };
        let (namespace, name, uid) = claims.service_account();
        let Some(accounts) = registry.get("", "v1", "serviceaccounts") else {
            return Err("service accounts are not served".into());
        };
        // kube-apiserver checks the ServiceAccount still exists with the token's uid, so
        // deleting it revokes every token it had.
        match accounts.get(Some(namespace), name, ReadAt::Any).await {
            Ok(sa) if sa["metadata"]["uid"].as_str() == Some(uid) => {}
            Ok(_) => {
                return Err(format!(
                    "service account UID ({uid}) does not match claim (serviceaccounts \"{name}\" was recreated)"
                ));
            }
            Err(_) => {
                return Err(format!(
                    "service account {namespace}/{name} has been deleted"
                ));
            }
        }
        Ok(claims.user())
    }
}

/// The warning kube-apiserver gives a bearer token with a second space before it.
pub const EXTRA_SPACE_WARNING: &str = "the provided Authorization header contains extra space before the bearer token, and is ignored";

/// An `Authorization: Bearer` header split as kube-apiserver splits it: the word after
/// the first space is the token, so `Bearer  token` (two spaces) has an empty one, and
/// whether more followed it. `None` without a bearer header.
fn bearer_parts(headers: &HeaderMap) -> Option<(&str, bool)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let mut parts = value.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some((token, parts.next().is_some()))
}

/// The token of an `Authorization: Bearer` header; an empty one presents no credential.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    bearer_parts(headers).and_then(|(token, _)| (!token.is_empty()).then_some(token))
}

/// [`EXTRA_SPACE_WARNING`] when the request's bearer token was ignored for a space
/// too many.
pub fn bearer_warning(headers: &HeaderMap) -> Option<&'static str> {
    bearer_parts(headers)
        .filter(|(token, more)| token.is_empty() && *more)
        .map(|_| EXTRA_SPACE_WARNING)
}
