//! What exists from the first start: the namespaces `default`, `kube-system`,
//! `kube-public` and `kube-node-lease`, the bootstrap RBAC policy, and the system
//! PriorityClasses `system-node-critical` and `system-cluster-critical`, as
//! kube-apiserver creates them.

use serde_json::json;

use kapi_apiserver::registry::{Registry, WriteOptions};

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
        match store
            .create(None, ns, &WriteOptions::by(crate::APISERVER_MANAGER))
            .await
        {
            Ok(_) => tracing::info!(namespace = name, "created namespace"),
            Err(e) if e.reason == "AlreadyExists" => {}
            Err(e) => tracing::warn!(namespace = name, error = %e, "could not create namespace"),
        }
    }
}

/// Creates kube-apiserver's bootstrap RBAC policy (cluster-admin, admin, edit, view,
/// system:discovery, system:basic-user, system:public-info-viewer and their bindings)
/// where it is missing; what an operator changed is kept.
pub async fn ensure_rbac(registry: &Registry) {
    let group = "rbac.authorization.k8s.io";
    let roles = kapi_auth::authz::bootstrap::cluster_roles();
    let bindings = kapi_auth::authz::bootstrap::cluster_role_bindings();
    let objects = roles
        .iter()
        .map(|r| ("clusterroles", "ClusterRole", serde_json::to_value(r)))
        .chain(bindings.iter().map(|b| {
            (
                "clusterrolebindings",
                "ClusterRoleBinding",
                serde_json::to_value(b),
            )
        }));
    for (plural, kind, object) in objects {
        let Some(store) = registry.get(group, "v1", plural) else {
            return;
        };
        let Ok(mut object) = object else { continue };
        object["apiVersion"] = json!(format!("{group}/v1"));
        object["kind"] = json!(kind);
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match store
            .create(None, object, &WriteOptions::by(crate::APISERVER_MANAGER))
            .await
        {
            Ok(_) => tracing::debug!(kind, name = %name, "created bootstrap RBAC"),
            Err(e) if e.reason == "AlreadyExists" => {}
            Err(e) => {
                tracing::warn!(kind, name = %name, error = %e, "could not create bootstrap RBAC")
            }
        }
    }
}

/// Creates kube-apiserver's system PriorityClasses (`system-node-critical` and
/// `system-cluster-critical`, kube's `AddSystemPriorityClasses` post-start hook) where
/// they are missing; one that exists is left as it is, as kube leaves it.
pub async fn ensure_priority_classes(registry: &Registry) {
    let group = "scheduling.k8s.io";
    let Some(store) = registry.get(group, "v1", "priorityclasses") else {
        return;
    };
    for class in crate::hooks::SYSTEM_PRIORITY_CLASSES {
        let pc = json!({
            "apiVersion": format!("{group}/v1"),
            "kind": "PriorityClass",
            "metadata": { "name": class.name },
            "value": class.value,
            "description": class.description,
        });
        match store
            .create(None, pc, &WriteOptions::by(crate::APISERVER_MANAGER))
            .await
        {
            Ok(_) => tracing::info!(name = class.name, "created PriorityClass"),
            Err(e) if e.reason == "AlreadyExists" => {}
            Err(e) => {
                tracing::warn!(name = class.name, error = %e, "could not create PriorityClass")
            }
        }
    }
}
