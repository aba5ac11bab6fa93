//! kube-apiserver's DefaultTolerationSeconds admission plugin
//! (`plugin/pkg/admission/defaulttolerationseconds`, on by default): a new Pod that
//! does not already tolerate them gets tolerations of the `NoExecute` taints
//! `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable` for 300 s, so
//! that its node's controller evicts it five minutes after the node goes away. A
//! toleration without a key, or without an effect, counts as tolerating them.
//!
//! Deliberate difference: the 300 s are fixed; kube-apiserver's
//! `--default-not-ready-toleration-seconds` and
//! `--default-unreachable-toleration-seconds` are not offered.

use serde_json::{Value, json};

use kapi_apiserver::registry::AdmissionRequest;

/// kube's default for both flags.
const TOLERATION_SECONDS: u64 = 300;
const TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

/// Whether the plugin looks at `request`: the create of a Pod.
pub fn handles(request: &AdmissionRequest<'_>) -> bool {
    super::creates_pod(request)
}

/// Adds the tolerations `pod` lacks.
pub fn admit(pod: &mut Value) {
    let tolerates = |taint: &str| {
        pod["spec"]["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                let key = t["key"].as_str().unwrap_or_default();
                let effect = t["effect"].as_str().unwrap_or_default();
                (key == taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
            })
    };
    let missing: Vec<Value> = TAINTS
        .into_iter()
        .filter(|taint| !tolerates(taint))
        .map(|taint| {
            json!({"key": taint, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": TOLERATION_SECONDS})
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    let spec = &mut pod["spec"];
    if !spec["tolerations"].is_array() {
        spec["tolerations"] = json!([]);
    }
    if let Some(list) = spec["tolerations"].as_array_mut() {
        list.extend(missing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tolerations_are_added_as_kube_adds_them() {
        let mut pod = json!({"spec": {"containers": []}});
        admit(&mut pod);
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300},
            ])
        );
        // One the pod has is kept as it is; a keyless one tolerates both.
        let mine = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists",
            "effect": "NoExecute", "tolerationSeconds": 60});
        let mut pod = json!({"spec": {"tolerations": [mine.clone()]}});
        admit(&mut pod);
        assert_eq!(pod["spec"]["tolerations"][0], mine);
        assert_eq!(pod["spec"]["tolerations"].as_array().unwrap().len(), 2);
        let mut pod = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        admit(&mut pod);
        assert_eq!(pod["spec"]["tolerations"].as_array().unwrap().len(), 1);
        // A NoSchedule toleration of the taint does not count.
        let mut pod = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule", "operator": "Exists"}]}});
        admit(&mut pod);
        assert_eq!(pod["spec"]["tolerations"].as_array().unwrap().len(), 3);
    }
}
