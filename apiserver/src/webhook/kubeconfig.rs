//! A webhook named by a kubeconfig file, as kube-apiserver's authorization webhook is
//! (`--authorization-webhook-config-file`, client-go's format): the `server` of the
//! current context's cluster, the CA it is verified with, and the credentials of the
//! context's user (a client certificate, a bearer token, or none). Files a kubeconfig
//! names are read relative to its own folder, as client-go reads them.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;

use super::{ClientIdentity, Endpoint, client_tls};

impl Endpoint {
    /// Reads the kubeconfig file at `path`.
    pub fn from_kubeconfig_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let config = crate::negotiation::decode::decode_body("application/yaml", &text)
            .map_err(|e| format!("{}: {}", path.display(), e.message))?
            .value;
        let dir = path.parent().unwrap_or(Path::new("."));
        Self::from_kubeconfig(&config, dir).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a kubeconfig's current context (or its only cluster and user when it
    /// names none); relative file names are read from `dir`.
    pub fn from_kubeconfig(config: &Value, dir: &Path) -> Result<Self, String> {
        let context = current_context(config)?;
        let cluster = named(config, "clusters", "cluster", context.cluster.as_deref())?;
        let user = match context.user {
            Some(name) => named(config, "users", "user", Some(&name))?,
            None if config["users"].as_array().is_none_or(Vec::is_empty) => Value::Null,
            None => named(config, "users", "user", None)?,
        };
        let server = cluster["server"]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or("invalid configuration: no server found for cluster")?;
        if cluster["insecure-skip-tls-verify"].as_bool() == Some(true) {
            return Err(
                "insecure-skip-tls-verify is not supported for webhooks: name the server's CA in certificate-authority or certificate-authority-data"
                    .into(),
            );
        }
        let mut roots = rustls::RootCertStore::empty();
        if let Some(pem) = data_or_file(&cluster, "certificate-authority", dir)? {
            roots = crate::tls::roots_of(&pem)?;
        }
        if roots.is_empty() {
            return Err(
                "the cluster names no certificate-authority: kapi trusts no system roots, so the webhook could not be verified"
                    .into(),
            );
        }
        let mut endpoint =
            Self::for_url(server, client_tls(roots, identity(&user, dir)?)?, "server")?;
        if let Some(name) = cluster["tls-server-name"]
            .as_str()
            .filter(|s| !s.is_empty())
        {
            endpoint.server_name = rustls::pki_types::ServerName::try_from(name.to_string())
                .map_err(|e| format!("tls-server-name {name:?}: {e}"))?;
        }
        endpoint.bearer = bearer(&user, dir)?;
        Ok(endpoint)
    }
}

/// The cluster and user a kubeconfig's context names.
#[derive(Default)]
struct Context {
    cluster: Option<String>,
    user: Option<String>,
}

fn current_context(config: &Value) -> Result<Context, String> {
    let Some(current) = config["current-context"].as_str().filter(|c| !c.is_empty()) else {
        return Ok(Context::default());
    };
    let context = named(config, "contexts", "context", Some(current))?;
    let field = |k: &str| {
        context[k]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(Context {
        cluster: field("cluster"),
        user: field("user"),
    })
}

/// The `inner` map of the entry of `list` called `name`, or of its only entry when no
/// name is given.
fn named(config: &Value, list: &str, inner: &str, name: Option<&str>) -> Result<Value, String> {
    let entries = config[list]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let entry = match name {
        Some(name) => entries
            .iter()
            .find(|e| e["name"] == name)
            .ok_or_else(|| format!("{inner} {name:?} is not in {list}"))?,
        None => match entries {
            [only] => only,
            [] => return Err("invalid configuration: no configuration has been provided".into()),
            _ => {
                return Err(format!(
                    "{list} has more than one entry and no current-context says which"
                ));
            }
        },
    };
    Ok(entry[inner].clone())
}

/// The PEM in `<key>-data` (base64) or in the file `<key>` names.
fn data_or_file(map: &Value, key: &str, dir: &Path) -> Result<Option<Vec<u8>>, String> {
    if let Some(data) = map[format!("{key}-data")]
        .as_str()
        .filter(|d| !d.is_empty())
    {
        return base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Some)
            .map_err(|e| format!("{key}-data is not base64: {e}"));
    }
    match map[key].as_str().filter(|f| !f.is_empty()) {
        Some(file) => {
            let path = resolve(dir, file);
            std::fs::read(&path)
                .map(Some)
                .map_err(|e| format!("{key} {}: {e}", path.display()))
        }
        None => Ok(None),
    }
}

fn resolve(dir: &Path, file: &str) -> PathBuf {
    let path = Path::new(file);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        dir.join(path)
    }
}

/// The user's client certificate and key, when it has one (both or neither).
fn identity(user: &Value, dir: &Path) -> Result<Option<ClientIdentity>, String> {
    use rustls::pki_types::PrivateKeyDer;
    use rustls::pki_types::pem::PemObject;
    let cert = data_or_file(user, "client-certificate", dir)?;
    let key = data_or_file(user, "client-key", dir)?;
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => {
            let chain =
                crate::tls::certificates(&String::from_utf8_lossy(&cert), "client-certificate")?;
            let key =
                PrivateKeyDer::from_pem_slice(&key).map_err(|e| format!("client-key: {e}"))?;
            Ok(Some((chain, key)))
        }
        _ => Err("client-certificate and client-key must be given together".into()),
    }
}

/// The user's bearer token (`token`, or the first line of `tokenFile`).
fn bearer(user: &Value, dir: &Path) -> Result<Option<String>, String> {
    if let Some(token) = user["token"].as_str().filter(|t| !t.is_empty()) {
        return Ok(Some(token.to_string()));
    }
    match user["tokenFile"].as_str().filter(|f| !f.is_empty()) {
        Some(file) => {
            let path = resolve(dir, file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("tokenFile {}: {e}", path.display()))?;
            Ok(Some(text.trim().to_string()))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ca_pem() -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["ca".into()]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.self_signed(&key).unwrap().pem()
    }

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn the_current_context_names_the_cluster_and_user() {
        let config = json!({
            "clusters": [
                {"name": "other", "cluster": {"server": "https://10.0.0.1"}},
                {"name": "authz", "cluster": {
                    "server": "https://127.0.0.1:9443/authorize",
                    "certificate-authority-data": b64(&ca_pem())}},
            ],
            "users": [{"name": "apiserver", "user": {"token": "s3cret"}}],
            "contexts": [{"name": "webhook", "context": {"cluster": "authz", "user": "apiserver"}}],
            "current-context": "webhook",
        });
        let e = Endpoint::from_kubeconfig(&config, Path::new("/")).unwrap();
        assert_eq!(e.url, "https://127.0.0.1:9443/authorize");
        assert_eq!(e.path, "/authorize");
        assert_eq!(e.bearer.as_deref(), Some("s3cret"));
    }

    #[test]
    fn files_are_read_from_the_kubeconfigs_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), ca_pem()).unwrap();
        std::fs::write(dir.path().join("token"), "from-a-file\n").unwrap();
        let config = json!({
            "clusters": [{"name": "c", "cluster": {"server": "https://[::1]:8443", "certificate-authority": "ca.crt"}}],
            "users": [{"name": "u", "user": {"tokenFile": "token"}}],
        });
        let e = Endpoint::from_kubeconfig(&config, dir.path()).unwrap();
        assert_eq!(e.authority, "[::1]:8443");
        assert_eq!(e.bearer.as_deref(), Some("from-a-file"));
    }

    #[test]
    fn mistakes_are_named() {
        let err = |config: Value| Endpoint::from_kubeconfig(&config, Path::new("/")).unwrap_err();
        assert_eq!(
            err(json!({})),
            "invalid configuration: no configuration has been provided"
        );
        let no_ca = json!({"clusters": [{"name": "c", "cluster": {"server": "https://h"}}]});
        assert!(err(no_ca).contains("no certificate-authority"));
        let insecure = json!({"clusters": [{"name": "c", "cluster": {"server": "https://h", "insecure-skip-tls-verify": true}}]});
        assert!(err(insecure).contains("insecure-skip-tls-verify is not supported"));
        let plain = json!({"clusters": [{"name": "c", "cluster": {"server": "http://h", "certificate-authority-data": b64(&ca_pem())}}]});
        assert!(err(plain).contains("the scheme must be https"));
        let missing = json!({"current-context": "x", "contexts": []});
        assert!(err(missing).contains("context \"x\" is not in contexts"));
        let half = json!({
            "clusters": [{"name": "c", "cluster": {"server": "https://h", "certificate-authority-data": b64(&ca_pem())}}],
            "users": [{"name": "u", "user": {"client-certificate-data": b64(&ca_pem())}}],
        });
        assert!(err(half).contains("must be given together"));
    }
}
