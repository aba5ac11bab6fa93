//! The kubeconfig `kapi serve` writes into its data directory, so that
//! `KUBECONFIG=kapi-data/kubeconfig kubectl ...` works unchanged.

use std::path::{Path, PathBuf};

/// The kubeconfig for a server at `url`, with `default` as the namespace.
pub fn render(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster:
    server: {url}
users:
- name: kapi
  user: {{}}
contexts:
- name: kapi
  context:
    cluster: kapi
    user: kapi
    namespace: default
current-context: kapi
preferences: {{}}
"
    )
}

/// Writes `<dir>/kubeconfig` atomically (a reader never sees half a file) and returns
/// its path.
pub fn write(dir: &Path, url: &str) -> std::io::Result<PathBuf> {
    let path = dir.join("kubeconfig");
    let tmp = dir.join(".kubeconfig.tmp");
    std::fs::write(&tmp, render(url))?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}
