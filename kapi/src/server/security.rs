//! The server's security wiring: TLS and the authenticators from the flags
//! (client certificates, tokens, service accounts, the front proxy), the aggregator's
//! own client identity, and the audit log.

use std::path::PathBuf;
use std::sync::Arc;

use kapi_apiserver::authentication::Authenticator;
use kapi_apiserver::tls::ClientCertificates;

use super::{DEFAULT_ISSUER, FrontProxyConfig, SecurityConfig, ServeError, io};
use crate::pki;

/// The TLS side of a server.
pub(super) struct Tls {
    pub(super) config: Arc<rustls::ServerConfig>,
    /// The CA clients verify the server with (the kubeconfig's).
    pub(super) kubeconfig_ca: String,
}

/// The authenticator, and TLS unless `--insecure-http`.
pub(super) fn security_setup(
    security: &SecurityConfig,
    pki: &pki::Pki,
) -> Result<(Authenticator, Option<Tls>), ServeError> {
    let read = |path: &PathBuf, what: &str| {
        std::fs::read_to_string(path).map_err(io(format!("reading {what} {}", path.display())))
    };
    let issuer = if security.service_account_issuer.is_empty() {
        DEFAULT_ISSUER
    } else {
        &security.service_account_issuer
    };
    let service_accounts = kapi_auth::authn::ServiceAccountTokens::new(
        issuer,
        &security.api_audiences,
        pki.service_account_key.as_bytes(),
        &[pki.service_account_public.as_bytes()],
    )
    .map_err(ServeError::Config)?;
    let tokens = match &security.token_auth_file {
        Some(path) => Some(
            kapi_auth::authn::TokenFile::load(path)
                .map_err(|e| ServeError::Config(format!("--token-auth-file: {e}")))?,
        ),
        None => None,
    };
    let mut authenticator = Authenticator {
        front_proxy: None,
        clients: None,
        tokens,
        service_accounts: Arc::new(service_accounts),
        anonymous: security.anonymous_auth,
    };
    if security.insecure_http {
        return Ok((authenticator, None));
    }
    let mut cas = vec![("the server's CA".to_string(), pki.ca_cert.clone())];
    if let Some(path) = &security.client_ca_file {
        cas.push((
            format!("--client-ca-file {}", path.display()),
            read(path, "--client-ca-file")?,
        ));
    }
    let cas: Vec<(&str, String)> = cas.iter().map(|(w, p)| (w.as_str(), p.clone())).collect();
    let clients = ClientCertificates::new(&cas).map_err(ServeError::Config)?;
    let (cert, key, kubeconfig_ca) = match (&security.tls_cert_file, &security.tls_private_key_file)
    {
        (Some(cert), Some(key)) => {
            let cert = read(cert, "--tls-cert-file")?;
            let key = read(key, "--tls-private-key-file")?;
            (cert.clone(), key, cert)
        }
        (None, None) => (
            pki.serving_cert.clone(),
            pki.serving_key.clone(),
            pki.ca_cert.clone(),
        ),
        _ => {
            return Err(ServeError::Config(
                "--tls-cert-file and --tls-private-key-file go together".into(),
            ));
        }
    };
    let config =
        kapi_apiserver::tls::server_config(&cert, &key, &clients).map_err(ServeError::Config)?;
    authenticator.clients = Some(clients);
    authenticator.front_proxy = Some(front_proxy(&security.front_proxy, pki)?);
    Ok((
        authenticator,
        Some(Tls {
            config,
            kubeconfig_ca,
        }),
    ))
}

/// The front proxies trusted to name users in headers.
pub(super) fn front_proxy(
    config: &FrontProxyConfig,
    pki: &pki::Pki,
) -> Result<kapi_apiserver::authentication::FrontProxy, ServeError> {
    let (what, pem) = match &config.requestheader_client_ca_file {
        Some(path) => (
            format!("--requestheader-client-ca-file {}", path.display()),
            std::fs::read_to_string(path).map_err(io(format!(
                "reading --requestheader-client-ca-file {}",
                path.display()
            )))?,
        ),
        None => (
            "the server's front-proxy CA".to_string(),
            pki.front_proxy_ca.clone(),
        ),
    };
    let clients = ClientCertificates::new(&[(what.as_str(), pem)]).map_err(ServeError::Config)?;
    let or_kube = |given: &[String], kube: Vec<String>| {
        if given.is_empty() {
            kube
        } else {
            given.to_vec()
        }
    };
    let kube = kapi_auth::authn::RequestHeaderNames::default();
    Ok(kapi_apiserver::authentication::FrontProxy {
        clients,
        allowed_names: config.requestheader_allowed_names.clone(),
        headers: kapi_auth::authn::RequestHeaderNames {
            username: or_kube(&config.requestheader_username_headers, kube.username),
            uid: or_kube(&config.requestheader_uid_headers, kube.uid),
            group: or_kube(&config.requestheader_group_headers, kube.group),
            extra_prefixes: or_kube(
                &config.requestheader_extra_headers_prefix,
                kube.extra_prefixes,
            ),
        },
    })
}

/// The client certificate the aggregator proxies with.
pub(super) fn proxy_identity(
    config: &FrontProxyConfig,
    pki: &pki::Pki,
) -> Result<kapi_aggregator::ProxyIdentity, ServeError> {
    match (
        &config.proxy_client_cert_file,
        &config.proxy_client_key_file,
    ) {
        (Some(cert), Some(key)) => Ok(kapi_aggregator::ProxyIdentity {
            cert_pem: std::fs::read_to_string(cert).map_err(io(format!(
                "reading --proxy-client-cert-file {}",
                cert.display()
            )))?,
            key_pem: std::fs::read_to_string(key).map_err(io(format!(
                "reading --proxy-client-key-file {}",
                key.display()
            )))?,
        }),
        (None, None) => Ok(kapi_aggregator::ProxyIdentity {
            cert_pem: pki.front_proxy_client_cert.clone(),
            key_pem: pki.front_proxy_client_key.clone(),
        }),
        _ => Err(ServeError::Config(
            "--proxy-client-cert-file and --proxy-client-key-file go together".into(),
        )),
    }
}

/// The audit log `--audit-log-path` asks for, with `--audit-policy-file`'s policy.
pub(super) fn auditor(
    security: &SecurityConfig,
) -> Result<Option<kapi_auth::audit::Auditor>, ServeError> {
    use kapi_auth::audit::{AuditLog, AuditLogOptions, Auditor, Policy};
    let Some(path) = &security.audit_log_path else {
        return Ok(None);
    };
    let policy = match &security.audit_policy_file {
        Some(file) => Policy::from_file(file)
            .map_err(|e| ServeError::Config(format!("--audit-policy-file: {e}")))?,
        None => Policy::metadata_default(),
    };
    let options = AuditLogOptions {
        file_mode: security.audit_log_file_mode,
        ..AuditLogOptions::default()
    };
    let log = AuditLog::open(path, options)
        .map_err(io(format!("opening the audit log {}", path.display())))?;
    Ok(Some(Auditor::new(policy, log)))
}
