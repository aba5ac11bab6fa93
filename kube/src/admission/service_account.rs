//! kube-apiserver's ServiceAccount admission for Pods: a Pod without
//! `spec.serviceAccountName` runs as `default`; the account must exist; and unless the
//! Pod or its account opts out with `automountServiceAccountToken: false`, the Pod gets
//! the projected `kube-api-access-*` volume (a bound token, the cluster's CA bundle and
//! the namespace), mounted read-only in every container at
//! `/var/run/secrets/kubernetes.io/serviceaccount`.
//!
//! Differences from kube: the `kube-root-ca.crt` ConfigMap the volume names is not
//! published (no kubelet reads it here), and the `enforce-mountable-secrets` annotation
//! is not checked.

use std::time::Duration;

use kapi_storage::ReadAt;
use serde_json::{Value, json};

use kapi_apiserver::registry::{AdmissionRequest, Registry};
use kapi_apiserver::status::ApiError;

/// Where the token volume is mounted.
pub const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const DEFAULT_ACCOUNT: &str = "default";
/// A mirror Pod (a kubelet's static Pod) gets no account.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";
/// How long a create waits for the `default` account, which a controller makes when
/// the namespace appears.
const DEFAULT_ACCOUNT_WAIT: Duration = Duration::from_secs(3);

/// Whether the request is one this plugin changes: the create of a Pod.
pub fn handles(request: &AdmissionRequest<'_>) -> bool {
    super::creates_pod(request)
}

/// Sets the Pod's account and mounts its token, or refuses a Pod whose account does
/// not exist (403, in kube's words).
pub async fn admit(
    registry: &Registry,
    request: &AdmissionRequest<'_>,
    pod: &mut Value,
) -> Result<(), ApiError> {
    if pod
        .pointer(&format!(
            "/metadata/annotations/{}",
            MIRROR_ANNOTATION.replace('/', "~1")
        ))
        .is_some()
    {
        return Ok(());
    }
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let account_name = match spec.get("serviceAccountName").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => {
            spec.insert("serviceAccountName".into(), json!(DEFAULT_ACCOUNT));
            DEFAULT_ACCOUNT.to_string()
        }
    };
    let namespace = request.namespace.unwrap_or_default();
    let account = match lookup(registry, namespace, &account_name).await? {
        Some(a) => a,
        None => {
            return Err(ApiError::forbidden(
                request.info,
                request.name,
                &format!(
                    "error looking up service account {namespace}/{account_name}: serviceaccount \"{account_name}\" not found"
                ),
            ));
        }
    };
    let automount = spec
        .get("automountServiceAccountToken")
        .and_then(Value::as_bool)
        .or_else(|| account["automountServiceAccountToken"].as_bool())
        .unwrap_or(true);
    if automount {
        mount_token(spec);
    }
    Ok(())
}

/// The account, waiting a little for a `default` one a new namespace does not have yet.
async fn lookup(
    registry: &Registry,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, ApiError> {
    let Some(accounts) = registry.get("", "v1", "serviceaccounts") else {
        return Ok(None);
    };
    let deadline = tokio::time::Instant::now() + DEFAULT_ACCOUNT_WAIT;
    loop {
        match accounts.get(Some(namespace), name, ReadAt::Latest).await {
            Ok(account) => return Ok(Some(account)),
            Err(e) if e.reason == "NotFound" => {
                if name != DEFAULT_ACCOUNT || tokio::time::Instant::now() >= deadline {
                    return Ok(None);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Adds the projected token volume, and its mount to every container that has none at
/// the mount path, as kube's plugin does.
fn mount_token(spec: &mut serde_json::Map<String, Value>) {
    let containers = ["initContainers", "containers", "ephemeralContainers"];
    let already_mounted = containers.iter().any(|field| {
        spec.get(*field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|c| c["volumeMounts"].as_array().into_iter().flatten())
            .any(|m| m["mountPath"] == MOUNT_PATH)
    });
    if already_mounted {
        return;
    }
    let volume_name = format!(
        "kube-api-access-{}",
        kapi_apiserver::registry::random_suffix()
    );
    let volumes = spec
        .entry("volumes")
        .or_insert_with(|| json!([]))
        .as_array_mut();
    let Some(volumes) = volumes else {
        return;
    };
    volumes.push(json!({
        "name": volume_name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
            ]
        }
    }));
    for field in containers {
        for container in spec
            .get_mut(field)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(c) = container.as_object_mut() else {
                continue;
            };
            if let Some(mounts) = c
                .entry("volumeMounts")
                .or_insert_with(|| json!([]))
                .as_array_mut()
            {
                mounts.push(json!({
                    "name": volume_name,
                    "readOnly": true,
                    "mountPath": MOUNT_PATH,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_the_token_in_every_container_once() {
        let mut pod = json!({
            "containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "initContainers": [{"name": "i", "image": "z"}],
        });
        let spec = pod.as_object_mut().expect("object");
        mount_token(spec);
        let volumes = spec["volumes"].as_array().expect("volumes");
        assert_eq!(volumes.len(), 1);
        let name = volumes[0]["name"].as_str().expect("name");
        assert!(
            name.starts_with("kube-api-access-") && name.len() == 21,
            "{name}"
        );
        for c in ["containers", "initContainers"] {
            for container in spec[c].as_array().expect("containers") {
                let mounts = container["volumeMounts"].as_array().expect("mounts");
                assert_eq!(mounts.last().expect("mount")["name"], name);
                assert_eq!(mounts.last().expect("mount")["mountPath"], MOUNT_PATH);
            }
        }
        mount_token(spec);
        assert_eq!(spec["volumes"].as_array().expect("volumes").len(), 1);
    }

    #[test]
    fn a_mount_at_the_path_already_keeps_the_pod_as_it_is() {
        let mut pod = json!({
            "containers": [{"name": "a", "image": "x", "volumeMounts": [{"name": "own", "mountPath": MOUNT_PATH}]}],
        });
        let before = pod.clone();
        mount_token(pod.as_object_mut().expect("object"));
        assert_eq!(pod, before);
    }
}
