//! ReplicationControllers, as kube-apiserver's strategy for them behaves: core/v1's
//! `SetDefaults_ReplicationController`, PodSpec defaults in the template, generation
//! tracked, and the selector and template checks of the apps/v1 workloads.
//!
//! Deliberate differences from kube-apiserver:
//! - Validation covers the selector (required, not empty, selecting the template), the
//!   template (restarting `Always`) and replica counts; other fields are checked by the
//!   schema only (see [`super::pod_spec`] for the pod spec).

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::core::v1::ReplicationController;

use super::pod_spec::{
    container_cell, default_template, format_labels, validate_controller_template,
};
use crate::hooks::nonnegative;

/// The hooks of ReplicationController.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicationControllerHooks;

impl Hooks<ReplicationController> for ReplicationControllerHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, rc: &mut ReplicationController) {
        let Some(spec) = rc.spec.as_mut() else {
            return;
        };
        if let Some(template) = spec.template.as_mut() {
            let labels = template.metadata.as_ref().and_then(|m| m.labels.clone());
            if spec.selector.as_ref().is_none_or(|s| s.is_empty()) {
                spec.selector = labels.clone();
            }
            if rc.metadata.labels.as_ref().is_none_or(|l| l.is_empty()) {
                rc.metadata.labels = labels;
            }
            default_template(template);
        }
        spec.replicas.get_or_insert(1);
    }

    fn validate(&self, rc: &ReplicationController) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = rc.spec.as_ref() else {
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
        let selector = spec.selector.as_ref().filter(|s| !s.is_empty());
        if selector.is_none() {
            errs.push(FieldError::required(&FieldPath::new("spec.selector"), ""));
        }
        match spec.template.as_ref() {
            None => errs.push(FieldError::required(&FieldPath::new("spec.template"), "")),
            Some(t) => {
                let json = selector.map(|s| serde_json::to_value(s).unwrap_or(Value::Null));
                errs.extend(validate_controller_template(
                    t,
                    json.as_ref(),
                    &FieldPath::new("spec.template"),
                ));
            }
        }
        errs
    }

    fn validate_update(
        &self,
        new: &ReplicationController,
        _old: &ReplicationController,
    ) -> ErrorList {
        self.validate(new)
    }

    fn table_cell(&self, column: &str, rc: &ReplicationController) -> Option<Value> {
        let spec = rc.spec.as_ref();
        let status = rc.status.as_ref();
        match column {
            "Current" => Some(Value::from(status.map_or(0, |s| s.replicas))),
            "Ready" => Some(Value::from(
                status.and_then(|s| s.ready_replicas).unwrap_or(0),
            )),
            "Selector" => Some(Value::from(format_labels(
                spec.and_then(|s| s.selector.as_ref()),
            ))),
            _ => container_cell(column, spec.and_then(|s| s.template.as_ref())),
        }
    }
}
