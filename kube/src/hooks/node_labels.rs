//! Node labels kube has deprecated, and kube's warnings for objects that select nodes by
//! them (`pkg/api/node` and `pkg/api/storage`): `GetWarningsForNodeSelector`
//! (CSIStorageCapacity's `nodeTopology`), `GetWarningsForRuntimeClass` and
//! `GetWarningsForStorageClass`. Labels in a map are visited in key order, where Go
//! visits them at random.

use std::collections::BTreeMap;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::FieldPath;

#[cfg(feature = "storage")]
use crate::generated::api::core::v1::TopologySelectorTerm;

/// kube's `GetNodeLabelDeprecatedMessage`.
fn deprecated(key: &str) -> Option<&'static str> {
    Some(match key {
        "beta.kubernetes.io/arch" => r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
        "beta.kubernetes.io/os" => r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
        "failure-domain.beta.kubernetes.io/region" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#
        }
        "failure-domain.beta.kubernetes.io/zone" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#
        }
        "beta.kubernetes.io/instance-type" => {
            r#"deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#
        }
        _ => return None,
    })
}

/// kube's `GetWarningsForNodeSelector` for the selector at `path`.
pub(crate) fn node_selector_warnings(
    selector: Option<&LabelSelector>,
    path: &FieldPath,
) -> Vec<String> {
    let Some(selector) = selector else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    let expressions = selector.match_expressions.iter().flatten();
    for (i, expression) in expressions.enumerate() {
        if let Some(msg) = deprecated(&expression.key) {
            let at = path.child("matchExpressions").index(i).child("key");
            warnings.push(format!("{at}: {} is {msg}", expression.key));
        }
    }
    for label in selector.match_labels.iter().flat_map(BTreeMap::keys) {
        if let Some(msg) = deprecated(label) {
            warnings.push(format!("{}: {msg}", path.child("matchLabels").child(label)));
        }
    }
    warnings
}

/// kube's `GetWarningsForRuntimeClass`: one warning per deprecated label in
/// `scheduling.nodeSelector`, naming the map (as kube does).
pub(crate) fn runtime_class_warnings(
    node_selector: Option<&BTreeMap<String, String>>,
) -> Vec<String> {
    node_selector
        .into_iter()
        .flat_map(BTreeMap::keys)
        .filter_map(|key| deprecated(key))
        .map(|msg| format!("scheduling.nodeSelector: {msg}"))
        .collect()
}

/// kube's `GetWarningsForStorageClass`: deprecated labels in `allowedTopologies`.
#[cfg(feature = "storage")]
pub(crate) fn storage_class_warnings(topologies: Option<&[TopologySelectorTerm]>) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, term) in topologies.into_iter().flatten().enumerate() {
        for (j, expression) in term.match_label_expressions.iter().flatten().enumerate() {
            if let Some(msg) = deprecated(&expression.key) {
                let at = FieldPath::new("allowedTopologies")
                    .index(i)
                    .child("matchLabelExpressions")
                    .index(j)
                    .child("key");
                warnings.push(format!("{at}: {msg}"));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn deprecated_node_labels_are_named_as_kube_names_them() {
        let selector = LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "failure-domain.beta.kubernetes.io/zone".into(),
                operator: "In".into(),
                values: Some(vec!["a".into()]),
            }]),
            match_labels: Some(BTreeMap::from([
                ("beta.kubernetes.io/os".to_string(), "linux".to_string()),
                ("kubernetes.io/os".to_string(), "linux".to_string()),
            ])),
        };
        assert_eq!(
            node_selector_warnings(Some(&selector), &FieldPath::new("nodeTopology")),
            [
                r#"nodeTopology.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
                r#"nodeTopology.matchLabels.beta.kubernetes.io/os: deprecated since v1.14; use "kubernetes.io/os" instead"#,
            ]
        );
        let map = BTreeMap::from([("beta.kubernetes.io/arch".to_string(), "amd64".to_string())]);
        assert_eq!(
            runtime_class_warnings(Some(&map)),
            [
                r#"scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/arch" instead"#
            ]
        );
        assert!(node_selector_warnings(None, &FieldPath::new("x")).is_empty());
    }
}
