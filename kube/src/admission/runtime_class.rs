//! kube-apiserver's RuntimeClass admission plugin (`plugin/pkg/admission/runtimeclass`)
//! for new Pods: the RuntimeClass that `spec.runtimeClassName` names must exist; its
//! `overhead.podFixed` becomes the Pod's `spec.overhead`, and its
//! `scheduling.nodeSelector` and `tolerations` are merged into the Pod's. A Pod whose
//! node selector says otherwise than the class, or whose `overhead` differs from the
//! class's (or is set without one), is refused with 403 in kube's words.
//!
//! Quantities are compared by value (`1` equals `1000m`), as kube's semantic equality
//! compares them.

use serde_json::{Map, Value};

use kapi_apiserver::registry::{AdmissionRequest, Registry};
use kapi_apiserver::status::ApiError;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::hooks::quantity::quantity_value;

/// Whether the plugin looks at `request`: the create of a Pod.
pub fn handles(request: &AdmissionRequest<'_>) -> bool {
    super::creates_pod(request)
}

/// Applies the Pod's RuntimeClass to it, or refuses it.
pub async fn admit(
    registry: &Registry,
    request: &AdmissionRequest<'_>,
    pod: &mut Value,
) -> Result<(), ApiError> {
    let name = pod["metadata"]["name"]
        .as_str()
        .unwrap_or(request.name)
        .to_string();
    let forbidden = |why: String| ApiError::forbidden(request.info, &name, &why);
    let class = match pod["spec"]["runtimeClassName"].as_str() {
        Some(class_name) if !class_name.is_empty() => {
            let Some(store) = registry.get("node.k8s.io", "v1", "runtimeclasses") else {
                return Ok(());
            };
            match super::read_cached(&store, None, class_name).await {
                Ok(rc) => Some(rc),
                Err(e) if e.code == http::StatusCode::NOT_FOUND => {
                    return Err(forbidden(format!(
                        "pod rejected: RuntimeClass {class_name:?} not found"
                    )));
                }
                Err(e) => return Err(e),
            }
        }
        _ => None,
    };
    overhead(class.as_ref(), pod).map_err(&forbidden)?;
    if let Some(scheduling) = class.as_ref().map(|c| &c["scheduling"]) {
        merge_node_selector(scheduling, pod).map_err(&forbidden)?;
        merge_tolerations(scheduling, pod);
    }
    Ok(())
}

/// Sets the Pod's overhead from the class, or checks the one it has.
fn overhead(class: Option<&Value>, pod: &mut Value) -> Result<(), String> {
    let fixed = class
        .and_then(|c| c.pointer("/overhead/podFixed"))
        .filter(|f| f.is_object());
    let given = pod["spec"]
        .get("overhead")
        .filter(|o| !o.is_null())
        .cloned();
    match (fixed, given) {
        (Some(fixed), None) => {
            pod["spec"]["overhead"] = fixed.clone();
            Ok(())
        }
        (Some(fixed), Some(given)) if !same_quantities(fixed, &given) => {
            Err("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead".into())
        }
        (None, Some(_)) => Err(
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
                .into(),
        ),
        _ => Ok(()),
    }
}

/// Whether two resource lists hold the same resources at the same values.
fn same_quantities(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let value = |v: &Value| {
        v.as_str()
            .map(|s| quantity_value(&Quantity(s.to_string())))
            .unwrap_or_else(|| v.as_f64())
    };
    a.len() == b.len()
        && a.iter().all(|(k, v)| {
            b.get(k)
                .is_some_and(|w| value(v).is_some() && value(v) == value(w))
        })
}

/// Adds the class's node selector to the Pod's; a key the Pod sets to another value is
/// a conflict.
fn merge_node_selector(scheduling: &Value, pod: &mut Value) -> Result<(), String> {
    let Some(wanted) = scheduling["nodeSelector"].as_object() else {
        return Ok(());
    };
    let mut selector = pod["spec"]["nodeSelector"]
        .as_object()
        .cloned()
        .unwrap_or_else(Map::new);
    for (key, value) in wanted {
        match selector.get(key) {
            Some(own) if own != value => {
                return Err(format!(
                    "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                    value.as_str().unwrap_or_default(),
                    own.as_str().unwrap_or_default()
                ));
            }
            _ => {
                selector.insert(key.clone(), value.clone());
            }
        }
    }
    if !selector.is_empty() {
        pod["spec"]["nodeSelector"] = Value::Object(selector);
    }
    Ok(())
}

/// Adds the class's tolerations the Pod does not have already.
fn merge_tolerations(scheduling: &Value, pod: &mut Value) {
    let Some(extra) = scheduling["tolerations"].as_array() else {
        return;
    };
    let mut tolerations = pod["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for t in extra {
        if !tolerations.contains(t) {
            tolerations.push(t.clone());
        }
    }
    if !tolerations.is_empty() {
        pod["spec"]["tolerations"] = Value::Array(tolerations);
    }
}
