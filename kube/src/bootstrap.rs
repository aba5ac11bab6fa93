//! What exists from the first start: the namespaces `default`, `kube-system`,
//! `kube-public` and `kube-node-lease`, the bootstrap RBAC policy, the system
//! PriorityClasses `system-node-critical` and `system-cluster-critical`, the default
//! ServiceCIDR `kubernetes`, and the mandatory and suggested FlowSchemas and
//! PriorityLevelConfigurations, as kube-apiserver creates them.

use std::net::Ipv4Addr;

use serde_json::{Value, json};

use kapi_apiserver::registry::{Registry, Subresource, WriteOptions};

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
#[cfg(feature = "scheduling")]
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

/// The name of the ServiceCIDR kube-apiserver creates from `--service-cluster-ip-range`.
pub const DEFAULT_SERVICE_CIDR: &str = "kubernetes";

/// Creates kube-apiserver's default ServiceCIDR `kubernetes`, `spec.cidrs` being the
/// `--service-cluster-ip-range` (`network/prefix_len`), where it is missing, and marks it
/// Ready as kube's default-service-cidr controller does when its CIDRs are the flag's.
/// One that exists with other CIDRs is left as it is, with a warning, as kube leaves it.
pub async fn ensure_service_cidr(registry: &Registry, network: Ipv4Addr, prefix_len: u8) {
    let Some(store) = registry.get("networking.k8s.io", "v1", "servicecidrs") else {
        return;
    };
    let name = DEFAULT_SERVICE_CIDR;
    let range = format!("{network}/{prefix_len}");
    let cidr = json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": { "name": name },
        "spec": { "cidrs": [range] },
    });
    let opts = WriteOptions::by(crate::APISERVER_MANAGER);
    match store.create(None, cidr, &opts).await {
        Ok(_) => tracing::info!(name, range, "created ServiceCIDR"),
        Err(e) if e.reason == "AlreadyExists" => {}
        Err(e) => {
            tracing::warn!(name, error = %e, "could not create ServiceCIDR");
            return;
        }
    }
    let written = store
        .update_with(None, name, Subresource::Status, &opts, |current| {
            Ok(marked_ready(current, &range))
        })
        .await;
    if let Err(e) = written {
        tracing::warn!(name, error = %e, "could not mark the ServiceCIDR ready");
    }
}

/// The default ServiceCIDR with kube's Ready condition added, when it has none and its
/// CIDRs are `range`; otherwise as it is (a mismatch is only reported, as kube does).
fn marked_ready(current: &Value, range: &str) -> Value {
    let conditions = current
        .pointer("/status/conditions")
        .and_then(Value::as_array);
    if conditions.is_some_and(|c| c.iter().any(|c| c["type"] == "Ready")) {
        return current.clone();
    }
    if current.pointer("/spec/cidrs") != Some(&json!([range])) {
        tracing::warn!(
            name = DEFAULT_SERVICE_CIDR,
            range,
            cidrs = %current["spec"]["cidrs"],
            "the default ServiceCIDR's CIDRs are not --service-cluster-ip-range's"
        );
        return current.clone();
    }
    let ready = json!({
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": kapi_apiserver::registry::object::now(),
        "reason": "",
        "message": "Kubernetes default Service CIDR is ready",
    });
    let mut next = current.clone();
    match next
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        Some(conditions) => conditions.push(ready),
        None => next["status"] = json!({ "conditions": [ready] }),
    }
    next
}

/// Creates kube-apiserver's bootstrap configuration of API Priority and Fairness (its
/// `apiserver/pkg/apis/flowcontrol/bootstrap` objects, the PriorityLevelConfigurations
/// first) where it is missing, each annotated `apf.kubernetes.io/autoupdate-spec:
/// "true"`. An existing object is revised as kube's ensurer does at start: a mandatory
/// one (but the `exempt` level) always gets its fixed spec back; the `exempt` level and
/// the suggested ones get theirs only while their annotation says `true` (or, without a
/// valid one, while their generation is 1, untouched since created); the annotation is
/// set to what was decided. Unlike kube, this runs once at start, not periodically, and
/// bootstrap objects kube no longer defines are not removed.
#[cfg(feature = "flowcontrol")]
pub async fn ensure_flow_control(registry: &Registry) {
    let group = "flowcontrol.apiserver.k8s.io";
    let sets = [
        (
            "prioritylevelconfigurations",
            "PriorityLevelConfiguration",
            crate::hooks::bootstrap_priority_levels(),
        ),
        (
            "flowschemas",
            "FlowSchema",
            crate::hooks::bootstrap_flow_schemas(),
        ),
    ];
    for (plural, kind, objects) in sets {
        let Some(store) = registry.get(group, "v1", plural) else {
            return;
        };
        for object in objects {
            ensure_flow_control_object(&store, group, kind, &object).await;
        }
    }
}

/// Creates one bootstrap object of [`ensure_flow_control`], or revises the stored one.
#[cfg(feature = "flowcontrol")]
async fn ensure_flow_control_object(
    store: &kapi_apiserver::registry::Store,
    group: &str,
    kind: &'static str,
    object: &crate::hooks::BootstrapObject,
) {
    let annotation = crate::hooks::AUTO_UPDATE_ANNOTATION;
    let name = object.name;
    let wanted = json!({
        "apiVersion": format!("{group}/v1"),
        "kind": kind,
        "metadata": { "name": name, "annotations": { annotation: "true" } },
        "spec": object.spec,
    });
    let opts = WriteOptions::by(crate::APISERVER_MANAGER);
    match store.create(None, wanted, &opts).await {
        Ok(_) => {
            tracing::debug!(kind, name, "created flow-control bootstrap object");
            return;
        }
        Err(e) if e.reason == "AlreadyExists" => {}
        Err(e) => {
            tracing::warn!(kind, name, error = %e, "could not create flow-control bootstrap object");
            return;
        }
    }
    let Ok(current) = store.get(None, name, kapi_storage::ReadAt::Latest).await else {
        return;
    };
    let meta = &current["metadata"];
    // kube lets operators tune the exempt level's `exempt` section.
    let always = object.mandatory && !(kind == "PriorityLevelConfiguration" && name == "exempt");
    // Go's strconv.ParseBool.
    let annotated = match meta["annotations"][annotation].as_str() {
        Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Some(true),
        Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Some(false),
        _ => None,
    };
    let auto_update = always || annotated.unwrap_or(meta["generation"] == 1);
    let spec_differs = !crate::hooks::same_spec(&current["spec"], &object.spec);
    let update_spec = auto_update && spec_differs;
    if annotated == Some(auto_update) && !update_spec {
        return;
    }
    let result = store
        .update_with(
            None,
            name,
            kapi_apiserver::registry::Subresource::Main,
            &opts,
            |live| {
                let mut revised = live.clone();
                revised["metadata"]["annotations"][annotation] = json!(auto_update.to_string());
                if update_spec {
                    revised["spec"] = object.spec.clone();
                }
                Ok(revised)
            },
        )
        .await;
    match result {
        Ok(_) => tracing::info!(kind, name, "revised flow-control bootstrap object"),
        Err(e) => {
            tracing::warn!(kind, name, error = %e, "could not revise flow-control bootstrap object")
        }
    }
}

/// Without the scheduling group compiled in there are no PriorityClasses to create.
#[cfg(not(feature = "scheduling"))]
pub async fn ensure_priority_classes(_registry: &Registry) {}

/// Without the flowcontrol group compiled in there are no bootstrap objects to create.
#[cfg(not(feature = "flowcontrol"))]
pub async fn ensure_flow_control(_registry: &Registry) {}
