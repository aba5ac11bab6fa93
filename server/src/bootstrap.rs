//! What exists from the first start: the namespaces `default`, `kube-system`,
//! `kube-public` and `kube-node-lease`, as kube-apiserver creates them.

use serde_json::json;

use crate::registry::{Registry, WriteOptions};

/// The namespaces kube-apiserver's system namespaces controller keeps.
pub const SYSTEM_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Creates each missing system namespace (when the registry serves namespaces).
pub async fn ensure_namespaces(registry: &Registry) {
    let Some(store) = registry.get("", "v1", "namespaces") else {
        return;
    };
    for name in SYSTEM_NAMESPACES {
        let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
        match store.create(None, ns, &WriteOptions::default()).await {
            Ok(_) => tracing::info!(namespace = name, "created namespace"),
            Err(e) if e.reason == "AlreadyExists" => {}
            Err(e) => tracing::warn!(namespace = name, error = %e, "could not create namespace"),
        }
    }
}
