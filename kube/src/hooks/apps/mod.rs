//! Workload controllers' objects of apps/v1, as kube-apiserver's strategies for them
//! behave: apps/v1 defaults (`SetDefaults_Deployment`, `_ReplicaSet`, `_StatefulSet`,
//! `_DaemonSet`), PodSpec defaults in every template, generation tracked (1 on create,
//! bumped when the spec changes), the selector required, not empty and selecting the
//! template, templates restarting `Always`, selectors immutable, and the Table cells of
//! kube's printers. What the kinds share is here; the template and pod spec checks are
//! [`super::core::pod_spec`]'s, shared with the core/v1 ReplicationController.
//!
//! Deliberate differences from kube-apiserver:
//! - Validation covers what is listed above plus replica counts, update strategies and
//!   the StatefulSet spec's mutable fields; other fields are checked by the schema only
//!   (see [`super::core::pod_spec`] for the pod spec).

mod controller_revision;
mod daemon_set;
mod deployment;
mod replica_set;
mod stateful_set;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

use crate::hooks::core::pod_spec::{
    selector_error, selector_is_empty, selector_json, validate_controller_template,
};

pub use controller_revision::ControllerRevisionHooks;
pub use daemon_set::DaemonSetHooks;
pub use deployment::DeploymentHooks;
pub use replica_set::ReplicaSetHooks;
pub use stateful_set::StatefulSetHooks;

/// The selector checks every apps/v1 workload makes: not empty, and selecting the
/// template (with the rest of the template's checks).
fn validate_selector_and_template(
    selector: &LabelSelector,
    template: Option<&crate::generated::api::core::v1::PodTemplateSpec>,
    kind: &str,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("spec.selector");
    if selector_is_empty(selector) {
        errs.push(selector_error(
            &path,
            selector,
            &format!("empty selector is invalid for {kind}"),
        ));
    }
    let json = selector_json(selector);
    if kapi_core::selector::LabelSelector::from_json(&json).is_err() {
        errs.push(selector_error(&path, selector, "invalid label selector"));
        return errs;
    }
    match template {
        Some(t) => errs.extend(validate_controller_template(
            t,
            (!selector_is_empty(selector)).then_some(&json),
            &FieldPath::new("spec.template"),
        )),
        None => errs.push(FieldError::required(&FieldPath::new("spec.template"), "")),
    }
    errs
}

/// An apps/v1 workload whose selector is the one field that may not change once it is
/// created (Deployment, ReplicaSet, DaemonSet; a StatefulSet forbids more).
trait Workload {
    /// `spec.selector`, when the object has a spec.
    fn selector(&self) -> Option<&LabelSelector>;
}

/// A [`Workload`]'s update checks: the new object's own, then
/// `spec.selector: Invalid value: ...: field is immutable` when it changed.
fn validate_workload_update<W: Workload>(
    hooks: &impl kapi_core::Hooks<W>,
    new: &W,
    old: &W,
) -> ErrorList {
    let mut errs = hooks.validate(new);
    if let (Some(n), Some(o)) = (new.selector(), old.selector()) {
        if n != o {
            errs.push(selector_error(
                &FieldPath::new("spec.selector"),
                n,
                "field is immutable",
            ));
        }
    }
    errs
}

fn int_or_percent(v: Option<&IntOrString>) -> Option<i64> {
    match v? {
        IntOrString::Int(i) => Some(i64::from(*i)),
        IntOrString::String(s) => s.strip_suffix('%').and_then(|p| p.parse().ok()),
    }
}

fn replicas_cell(ready: Option<i32>, desired: Option<i32>) -> Value {
    Value::from(format!("{}/{}", ready.unwrap_or(0), desired.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::core::pod_spec::go_string_map;

    #[test]
    fn percents() {
        assert_eq!(
            int_or_percent(Some(&IntOrString::String("25%".into()))),
            Some(25)
        );
        assert_eq!(int_or_percent(Some(&IntOrString::Int(0))), Some(0));
        assert_eq!(go_string_map(None), "map[string]string(nil)");
    }
}
