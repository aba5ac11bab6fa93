//! The kubeconfig `kapi serve` writes into its data directory, so that
//! `KUBECONFIG=kapi-data/kubeconfig kubectl ...` works unchanged: the server's URL, the
//! CA to verify it with, and the admin's client certificate.

use std::path::{Path, PathBuf};

use base64::Engine;

/// What the kubeconfig carries to reach an HTTPS server (all PEM).
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The CA the server's certificate chains to.
    pub ca: String,
    /// The admin's client certificate.
    pub client_cert: String,
    /// Its key.
    pub client_key: String,
}

/// The kubeconfig for a server at `url`, with `default` as the namespace.
pub fn render(url: &str, credentials: Option<&Credentials>) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let (cluster, user) = match credentials {
        Some(c) => (
            format!("    certificate-authority-data: {}\n", b64(&c.ca)),
            format!(
                "\n    client-certificate-data: {}\n    client-key-data: {}",
                b64(&c.client_cert),
                b64(&c.client_key)
            ),
        ),
        None => (String::new(), " {}".to_string()),
    };
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster:
    server: {url}
{cluster}users:
- name: kapi-admin
  user:{user}
contexts:
- name: kapi
  context:
    cluster: kapi
    user: kapi-admin
    namespace: default
current-context: kapi
preferences: {{}}
"
    )
}

/// Writes `<dir>/kubeconfig` atomically (a reader never sees half a file), readable by
/// its owner only since it holds the admin's key, and returns its path.
pub fn write(dir: &Path, url: &str, credentials: Option<&Credentials>) -> std::io::Result<PathBuf> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join("kubeconfig");
    let tmp = dir.join(".kubeconfig.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(render(url, credentials).as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}
