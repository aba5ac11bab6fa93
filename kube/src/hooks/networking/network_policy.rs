//! NetworkPolicies, as kube-apiserver's networking strategy and printer treat them:
//! generation tracked (the generic preparation does it); the Pod-Selector column is the
//! selector in label-selector syntax, `<none>` when it selects every pod.
//!
//! Deliberate differences from kube-apiserver:
//! - Peers and ports are not validated beyond the schema.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::networking_k8s_io::v1::NetworkPolicy;

/// `metav1.FormatLabelSelector`: `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
/// joined by ","; `<none>` for a selector that selects everything.
pub(super) fn format_label_selector(sel: Option<&LabelSelector>) -> String {
    let Some(sel) = sel else {
        return "<none>".into();
    };
    let mut parts: Vec<String> = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in sel.match_expressions.iter().flatten() {
        let mut values = e.values.clone().unwrap_or_default();
        values.sort();
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, values.join(",")),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            other => format!("{} {other} ({})", e.key, values.join(",")),
        });
    }
    let s = parts.join(",");
    if s.is_empty() { "<none>".into() } else { s }
}

/// The hooks of NetworkPolicy.
#[derive(Clone, Copy, Debug, Default)]
pub struct NetworkPolicyHooks;

impl Hooks<NetworkPolicy> for NetworkPolicyHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, np: &NetworkPolicy) -> ErrorList {
        let mut errs = ErrorList::new();
        for (i, t) in np
            .spec
            .iter()
            .flat_map(|s| s.policy_types.iter().flatten())
            .enumerate()
        {
            if t != "Ingress" && t != "Egress" {
                errs.push(FieldError::not_supported(
                    &FieldPath::new("spec.policyTypes").index(i),
                    t.as_str(),
                    &[Value::from("Egress"), Value::from("Ingress")],
                ));
            }
        }
        errs
    }

    fn table_cell(&self, column: &str, np: &NetworkPolicy) -> Option<Value> {
        (column == "Pod-Selector").then(|| {
            Value::String(format_label_selector(
                np.spec.as_ref().and_then(|s| s.pod_selector.as_ref()),
            ))
        })
    }
}
