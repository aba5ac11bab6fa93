//! A Pod's defaults as kube's decoder gives them (`SetDefaults_Pod`,
//! `SetDefaults_EphemeralContainer`), for the Pod itself and for the writes of its
//! subresources.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::generated::api::core::v1::{EphemeralContainer, PodSpec};
use crate::generated::core::v1::Pod;

use super::pod_spec::default_pod_spec;

/// `SetDefaults_Pod`: requests default to limits (pods only, not templates), and
/// `enableServiceLinks` to true.
pub(super) fn default_pod(pod: &mut Pod) {
    let Some(spec) = pod.spec.as_mut() else {
        return;
    };
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        if let Some(res) = c.resources.as_mut() {
            if let Some(limits) = res.limits.clone() {
                let requests = res.requests.get_or_insert_with(BTreeMap::new);
                for (k, v) in limits {
                    requests.entry(k).or_insert(v);
                }
            }
        }
    }
    spec.enable_service_links.get_or_insert(true);
    default_pod_spec(spec);
    default_ephemeral_containers(spec);
}

/// `SetDefaults_EphemeralContainer`: a container's defaults on the fields it shares
/// with one (not the host ports of a host-network pod, which `SetDefaults_Pod` gives
/// the other containers only).
fn default_ephemeral(c: &mut EphemeralContainer) {
    let Ok(Value::Object(mut fields)) = serde_json::to_value(&*c) else {
        return;
    };
    let target = fields.remove("targetContainerName");
    let one = json!({"containers": [Value::Object(fields)]});
    let Ok(mut spec) = serde_json::from_value::<PodSpec>(one) else {
        return;
    };
    default_pod_spec(&mut spec);
    let Ok(Value::Object(mut fields)) = serde_json::to_value(&spec.containers[0]) else {
        return;
    };
    if let Some(target) = target {
        fields.insert("targetContainerName".into(), target);
    }
    if let Ok(defaulted) = serde_json::from_value(Value::Object(fields)) {
        *c = defaulted;
    }
}

/// The defaults of every ephemeral container of `spec` (on any decode of a Pod).
pub(super) fn default_ephemeral_containers(spec: &mut PodSpec) {
    for c in spec.ephemeral_containers.iter_mut().flatten() {
        default_ephemeral(c);
    }
}
