//! The certificates and keys `kapi serve` makes on first start and reuses after, in
//! `<data-dir>/pki/`: a CA, the serving certificate it signs (127.0.0.1, ::1,
//! localhost and every `--tls-san`), the admin's client certificate (group
//! `system:masters`, for the kubeconfig), the ServiceAccount token signing key, and a
//! front-proxy CA with the aggregator's client certificate (`front-proxy-client`).
//!
//! Private keys are written with mode 0600. A serving certificate whose names no longer
//! match the flags, or that is within 30 days of expiry, is made again with the same CA.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// The admin kubeconfig's user.
pub const ADMIN_USER: &str = "kapi-admin";

/// The common name of the aggregator's client certificate, as kubeadm names it.
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";

/// What the PKI folder holds, as PEM.
#[derive(Clone, Debug)]
pub struct Pki {
    /// The folder.
    pub dir: PathBuf,
    /// The CA certificate.
    pub ca_cert: String,
    /// The serving certificate and key (the operator's own when given).
    pub serving_cert: String,
    /// The serving key.
    pub serving_key: String,
    /// The admin client certificate.
    pub admin_cert: String,
    /// The admin client key.
    pub admin_key: String,
    /// The ServiceAccount signing key (PKCS#8).
    pub service_account_key: String,
    /// Its public key (SPKI).
    pub service_account_public: String,
    /// The front-proxy CA, which signs the aggregator's client certificate.
    pub front_proxy_ca: String,
    /// The aggregator's client certificate (`front-proxy-client`), presented to the
    /// servers it proxies to.
    pub front_proxy_client_cert: String,
    /// Its key.
    pub front_proxy_client_key: String,
}

fn pki_error(what: &str, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{what}: {e}"))
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

fn write_public(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn validity(params: &mut CertificateParams, days: i64) {
    let now = time::OffsetDateTime::now_utc();
    // An hour of back-dating covers clocks a little behind ours, as kubeadm does.
    params.not_before = now - time::Duration::hours(1);
    params.not_after = now + time::Duration::days(days);
}

/// Whether a PEM certificate is still good for `days` more days and carries exactly
/// the subject alternative names `sans`.
fn still_good(cert_pem: &str, sans: Option<&[SanType]>, days: i64) -> bool {
    let Ok(der) = pem_der(cert_pem) else {
        return false;
    };
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(&der) else {
        return false;
    };
    let limit = time::OffsetDateTime::now_utc() + time::Duration::days(days);
    if cert.validity().not_after.timestamp() < limit.unix_timestamp() {
        return false;
    }
    let Some(sans) = sans else {
        return true;
    };
    let Ok(Some(ext)) = cert.subject_alternative_name() else {
        return false;
    };
    let mut have: Vec<String> = ext
        .value
        .general_names
        .iter()
        .map(|n| match n {
            x509_parser::extensions::GeneralName::DNSName(d) => d.to_string(),
            x509_parser::extensions::GeneralName::IPAddress(ip) => match ip.len() {
                4 => IpAddr::from(<[u8; 4]>::try_from(*ip).unwrap_or_default()).to_string(),
                16 => IpAddr::from(<[u8; 16]>::try_from(*ip).unwrap_or_default()).to_string(),
                _ => String::new(),
            },
            _ => String::new(),
        })
        .collect();
    let mut want: Vec<String> = sans
        .iter()
        .map(|s| match s {
            SanType::DnsName(d) => d.as_str().to_string(),
            SanType::IpAddress(ip) => ip.to_string(),
            _ => String::new(),
        })
        .collect();
    have.sort();
    want.sort();
    have == want
}

fn pem_der(pem: &str) -> Result<Vec<u8>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_slice(pem.as_bytes())
        .map(|c| c.to_vec())
        .map_err(|e| e.to_string())
}

/// The names the serving certificate carries: loopback, `localhost`, the listen
/// address when it is a specific one, and `extra` (`--tls-san`, IPs or DNS names).
pub fn serving_names(listen: IpAddr, extra: &[String]) -> Vec<String> {
    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    if !listen.is_unspecified() {
        names.push(listen.to_string());
    }
    for n in extra {
        names.push(n.clone());
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// Loads the PKI from `<data_dir>/pki`, making whatever is missing or stale.
pub fn ensure(data_dir: &Path, names: &[String]) -> std::io::Result<Pki> {
    let dir = data_dir.join("pki");
    crate::private_files::ensure_dir(&dir)?;
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "key") {
            crate::private_files::tighten(&path, crate::private_files::PRIVATE_FILE_MODE)?;
        }
    }
    let (ca_cert, ca_key) = ca(&dir, "ca", "kapi-ca", &["apiserver", "admin"])?;
    let ca_key_pair = KeyPair::from_pem(&ca_key).map_err(|e| pki_error("reading the CA key", e))?;
    let issuer = Issuer::from_ca_cert_pem(&ca_cert, &ca_key_pair)
        .map_err(|e| pki_error("reading the CA certificate", e))?;

    let sans: Vec<SanType> = names
        .iter()
        .map(|n| match n.parse::<IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => n
                .clone()
                .try_into()
                .map(SanType::DnsName)
                .map_err(|e| pki_error(&format!("the name {n:?}"), e)),
        })
        .collect::<Result<_, _>>()?;
    let (serving_cert, serving_key) = leaf(&dir, "apiserver", Some(&sans), &issuer, |params| {
        params.distinguished_name.push(DnType::CommonName, "kapi");
        params.subject_alt_names = sans.clone();
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    })?;
    let (admin_cert, admin_key) = leaf(&dir, "admin", None, &issuer, |params| {
        params
            .distinguished_name
            .push(DnType::CommonName, ADMIN_USER);
        params
            .distinguished_name
            .push(DnType::OrganizationName, kapi_auth::user::MASTERS);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    })?;

    // The aggregator's identity towards the servers it proxies to, from a CA of its own
    // (kubeadm's front-proxy-ca), so that no client certificate of the main CA can pass
    // for the proxy.
    let (front_proxy_ca, front_key) = ca(
        &dir,
        "front-proxy-ca",
        "front-proxy-ca",
        &["front-proxy-client"],
    )?;
    let front_key_pair = KeyPair::from_pem(&front_key)
        .map_err(|e| pki_error("reading the front-proxy CA key", e))?;
    let front_issuer = Issuer::from_ca_cert_pem(&front_proxy_ca, &front_key_pair)
        .map_err(|e| pki_error("reading the front-proxy CA certificate", e))?;
    let (front_proxy_client_cert, front_proxy_client_key) =
        leaf(&dir, "front-proxy-client", None, &front_issuer, |params| {
            params
                .distinguished_name
                .push(DnType::CommonName, FRONT_PROXY_CLIENT);
            params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        })?;

    let sa_path = dir.join("sa.key");
    let sa_pub_path = dir.join("sa.pub");
    let (service_account_key, service_account_public) = match (read(&sa_path), read(&sa_pub_path)) {
        (Some(k), Some(p)) => (k, p),
        _ => {
            let key = KeyPair::generate()
                .map_err(|e| pki_error("generating the service account key", e))?;
            write_private(&sa_path, &key.serialize_pem())?;
            write_public(&sa_pub_path, &key.public_key_pem())?;
            (key.serialize_pem(), key.public_key_pem())
        }
    };
    Ok(Pki {
        dir,
        ca_cert,
        serving_cert,
        serving_key,
        admin_cert,
        admin_key,
        service_account_key,
        service_account_public,
        front_proxy_ca,
        front_proxy_client_cert,
        front_proxy_client_key,
    })
}

/// The CA `<name>.crt`/`<name>.key`, made when missing or expired; a new one removes
/// the `signed` leaves it invalidates.
fn ca(
    dir: &Path,
    name: &str,
    common_name: &str,
    signed: &[&str],
) -> std::io::Result<(String, String)> {
    let cert_path = dir.join(format!("{name}.crt"));
    let key_path = dir.join(format!("{name}.key"));
    if let (Some(c), Some(k)) = (read(&cert_path), read(&key_path)) {
        if still_good(&c, None, 0) {
            return Ok((c, k));
        }
    }
    let key = KeyPair::generate().map_err(|e| pki_error("generating a CA key", e))?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut params, 3650);
    let cert = params
        .self_signed(&key)
        .map_err(|e| pki_error(&format!("signing {name}.crt"), e))?;
    write_private(&key_path, &key.serialize_pem())?;
    write_public(&cert_path, &cert.pem())?;
    for stale in signed {
        let _ = std::fs::remove_file(dir.join(format!("{stale}.crt")));
    }
    Ok((cert.pem(), key.serialize_pem()))
}

/// A certificate signed by the CA, reused while it is good for 30 more days (and, for
/// the serving one, names exactly `sans`).
fn leaf(
    dir: &Path,
    name: &str,
    sans: Option<&[SanType]>,
    issuer: &Issuer<'_, &KeyPair>,
    fill: impl FnOnce(&mut CertificateParams),
) -> std::io::Result<(String, String)> {
    let cert_path = dir.join(format!("{name}.crt"));
    let key_path = dir.join(format!("{name}.key"));
    if let (Some(c), Some(k)) = (read(&cert_path), read(&key_path)) {
        if still_good(&c, sans, 30) {
            return Ok((c, k));
        }
    }
    let key = KeyPair::generate().map_err(|e| pki_error("generating a key", e))?;
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    validity(&mut params, 365);
    fill(&mut params);
    let cert = params
        .signed_by(&key, issuer)
        .map_err(|e| pki_error(&format!("signing {name}.crt"), e))?;
    write_private(&key_path, &key.serialize_pem())?;
    write_public(&cert_path, &cert.pem())?;
    Ok((cert.pem(), key.serialize_pem()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_reused_and_remade_when_names_change() {
        let dir = tempfile::tempdir().unwrap();
        let names = serving_names("127.0.0.1".parse().unwrap(), &[]);
        let first = ensure(dir.path(), &names).unwrap();
        let again = ensure(dir.path(), &names).unwrap();
        assert_eq!(first.ca_cert, again.ca_cert);
        assert_eq!(first.serving_cert, again.serving_cert);
        assert_eq!(first.admin_cert, again.admin_cert);
        assert_eq!(first.service_account_key, again.service_account_key);

        let more = serving_names("127.0.0.1".parse().unwrap(), &["kapi.example".into()]);
        let changed = ensure(dir.path(), &more).unwrap();
        assert_eq!(first.ca_cert, changed.ca_cert);
        assert_ne!(first.serving_cert, changed.serving_cert);
        assert!(still_good(
            &changed.serving_cert,
            Some(&[
                SanType::DnsName("localhost".try_into().unwrap()),
                SanType::IpAddress("127.0.0.1".parse().unwrap()),
                SanType::IpAddress("::1".parse().unwrap()),
                SanType::DnsName("kapi.example".try_into().unwrap()),
            ]),
            30
        ));
        let admin = kapi_auth::authn::x509::user_of(&pem_der(&first.admin_cert).unwrap()).unwrap();
        assert_eq!(admin.name, ADMIN_USER);
        assert_eq!(admin.groups, ["system:masters"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("pki/ca.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
