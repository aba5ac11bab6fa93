//! The user of an x509 client certificate, as kube-apiserver reads it: the subject's
//! common name is the user, each organization a group.
//!
//! The certificate's chain is verified by the TLS layer's verifier before this is asked.

use crate::user::UserInfo;

/// Why a client certificate names no user.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// The certificate is not DER x509.
    #[error("the client certificate could not be parsed: {0}")]
    Parse(String),
    /// The subject has no common name.
    #[error("the client certificate's subject has no common name")]
    NoCommonName,
}

/// The user a verified client certificate names.
pub fn user_of(der: &[u8]) -> Result<UserInfo, CertificateError> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| CertificateError::Parse(e.to_string()))?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .filter(|cn| !cn.is_empty())
        .ok_or(CertificateError::NoCommonName)?
        .to_string();
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(str::to_string)
        .collect();
    Ok(UserInfo {
        name,
        groups,
        ..UserInfo::default()
    })
}

/// When a certificate stops being valid (`notAfter`, seconds since the Unix epoch);
/// `None` when it cannot be parsed.
pub fn not_after(der: &[u8]) -> Option<i64> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    Some(cert.validity().not_after.timestamp())
}
