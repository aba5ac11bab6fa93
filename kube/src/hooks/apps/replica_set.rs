//! ReplicaSets: apps/v1 defaults (`SetDefaults_ReplicaSet`), the spec's checks
//! (replicas, selector and template), the immutable selector, and the cells of kube's
//! printer.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::{ErrorList, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::apps::v1::ReplicaSet;
use crate::hooks::core::pod_spec::{container_cell, default_template, selector_string};
use crate::hooks::nonnegative;

use super::{Workload, validate_selector_and_template, validate_workload_update};

/// The hooks of ReplicaSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicaSetHooks;

impl Workload for ReplicaSet {
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.as_ref().map(|s| &s.selector)
    }
}

impl Hooks<ReplicaSet> for ReplicaSetHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, rs: &mut ReplicaSet) {
        let Some(spec) = rs.spec.as_mut() else {
            return;
        };
        spec.replicas.get_or_insert(1);
        if let Some(t) = spec.template.as_mut() {
            default_template(t);
        }
    }

    fn validate(&self, rs: &ReplicaSet) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = rs.spec.as_ref() else {
            return errs;
        };
        nonnegative(
            &mut errs,
            &FieldPath::new("spec.replicas"),
            spec.replicas.map(i64::from),
        );
        nonnegative(
            &mut errs,
            &FieldPath::new("spec.minReadySeconds"),
            spec.min_ready_seconds.map(i64::from),
        );
        // kube's ReplicaSet validation says "deployment" here too.
        errs.extend(validate_selector_and_template(
            &spec.selector,
            spec.template.as_ref(),
            "deployment",
        ));
        errs
    }

    fn validate_update(&self, new: &ReplicaSet, old: &ReplicaSet) -> ErrorList {
        validate_workload_update(self, new, old)
    }

    fn table_cell(&self, column: &str, rs: &ReplicaSet) -> Option<Value> {
        let spec = rs.spec.as_ref();
        let status = rs.status.as_ref();
        match column {
            "Current" => Some(Value::from(status.map_or(0, |s| s.replicas))),
            "Ready" => Some(Value::from(
                status.and_then(|s| s.ready_replicas).unwrap_or(0),
            )),
            "Selector" => Some(Value::from(selector_string(spec.map(|s| &s.selector)))),
            _ => container_cell(column, spec.and_then(|s| s.template.as_ref())),
        }
    }
}
