//! `pods/binding`: a scheduler POSTs a `Binding` to assign a pending pod to a node, as
//! kube-apiserver's `BindingREST` does: the pod's `spec.nodeName` is set once, its
//! `PodScheduled` condition becomes True, and the binding's annotations are copied
//! onto the pod. A pod already assigned, or being deleted, answers 409.

use kapi_core::{FieldError, FieldPath, SubresourceError};
use serde_json::{Value, json};

use crate::generated::api::core::v1::{PodCondition, PodStatus};
use crate::generated::core::v1::Pod;

/// Applies the `Binding` in `body` to `pod`.
pub fn bind(body: &Value, pod: &mut Pod) -> Result<(), SubresourceError> {
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let binding_name = kapi_apiserver::registry::object::meta_str(body, "name");
    if binding_name != pod_name {
        return Err(SubresourceError::BadRequest(
            "name in URL does not match name in Binding object".into(),
        ));
    }
    let target_kind = body
        .pointer("/target/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !target_kind.is_empty() && target_kind != "Node" {
        return Err(SubresourceError::BadRequest(format!(
            "invalid target kind {target_kind:?}: only Node is supported"
        )));
    }
    let node = body
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if node.is_empty() {
        return Err(SubresourceError::Invalid(vec![FieldError::required(
            &FieldPath::new("target.name"),
            "",
        )]));
    }
    if pod.metadata.deletion_timestamp.is_some() {
        return Err(SubresourceError::Conflict(format!(
            "pod {pod_name} is being deleted, cannot be assigned to a host"
        )));
    }
    let Some(spec) = pod.spec.as_mut() else {
        return Err(SubresourceError::BadRequest(format!(
            "pod {pod_name} has no spec"
        )));
    };
    if let Some(assigned) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Err(SubresourceError::Conflict(format!(
            "pod {pod_name} is already assigned to node {assigned:?}"
        )));
    }
    spec.node_name = Some(node.to_string());
    if let Some(Value::Object(annotations)) =
        kapi_apiserver::registry::object::meta(body, "annotations")
    {
        let pod_annotations = pod
            .metadata
            .annotations
            .get_or_insert_with(Default::default);
        for (k, v) in annotations {
            if let Some(v) = v.as_str() {
                pod_annotations.insert(k.clone(), v.to_string());
            }
        }
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let scheduled: PodCondition = serde_json::from_value(json!({
        "type": "PodScheduled",
        "status": "True",
        "lastTransitionTime": now,
    }))
    .map_err(|e| SubresourceError::BadRequest(e.to_string()))?;
    let conditions = pod
        .status
        .get_or_insert_with(PodStatus::default)
        .conditions
        .get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.r#type == "PodScheduled") {
        Some(c) if c.status == "True" => {}
        Some(c) => *c = scheduled,
        None => conditions.push(scheduled),
    }
    Ok(())
}
