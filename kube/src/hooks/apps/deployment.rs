//! Deployments: apps/v1 defaults (`SetDefaults_Deployment`), the spec's checks
//! (replicas, selector and template, update strategy, progress deadline), the immutable
//! selector, and the cells of kube's printer.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::apps::v1::{DeploymentStrategy, RollingUpdateDeployment};
use crate::generated::apps::v1::Deployment;
use crate::hooks::core::pod_spec::{container_cell, default_template, selector_string};
use crate::hooks::{nonnegative, strings};

use super::{
    Workload, int_or_percent, replicas_cell, validate_selector_and_template,
    validate_workload_update,
};

/// The hooks of Deployment.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeploymentHooks;

impl Workload for Deployment {
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.as_ref().map(|s| &s.selector)
    }
}

impl Hooks<Deployment> for DeploymentHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, d: &mut Deployment) {
        let Some(spec) = d.spec.as_mut() else {
            return;
        };
        spec.replicas.get_or_insert(1);
        let strategy = spec
            .strategy
            .get_or_insert_with(DeploymentStrategy::default);
        let kind = strategy
            .r#type
            .get_or_insert_with(|| "RollingUpdate".into());
        if kind == "RollingUpdate" {
            let ru = strategy
                .rolling_update
                .get_or_insert_with(RollingUpdateDeployment::default);
            ru.max_unavailable
                .get_or_insert_with(|| IntOrString::String("25%".into()));
            ru.max_surge
                .get_or_insert_with(|| IntOrString::String("25%".into()));
        }
        spec.revision_history_limit.get_or_insert(10);
        spec.progress_deadline_seconds.get_or_insert(600);
        default_template(&mut spec.template);
    }

    fn validate(&self, d: &Deployment) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = d.spec.as_ref() else {
            return errs;
        };
        nonnegative(
            &mut errs,
            &FieldPath::new("spec.replicas"),
            spec.replicas.map(i64::from),
        );
        errs.extend(validate_selector_and_template(
            &spec.selector,
            Some(&spec.template),
            "deployment",
        ));
        if let Some(strategy) = spec.strategy.as_ref() {
            let kind = strategy.r#type.as_deref().unwrap_or("");
            let path = FieldPath::new("spec.strategy");
            if !["Recreate", "RollingUpdate"].contains(&kind) {
                errs.push(FieldError::not_supported(
                    &path.child("type"),
                    kind,
                    &strings(&["Recreate", "RollingUpdate"]),
                ));
            }
            if kind == "Recreate" && strategy.rolling_update.is_some() {
                errs.push(FieldError::forbidden(
                    &path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
            if let Some(ru) = strategy
                .rolling_update
                .as_ref()
                .filter(|_| kind == "RollingUpdate")
            {
                let unavailable = int_or_percent(ru.max_unavailable.as_ref());
                let surge = int_or_percent(ru.max_surge.as_ref());
                if unavailable == Some(0) && surge == Some(0) {
                    errs.push(FieldError::invalid(
                        &path.child("rollingUpdate").child("maxUnavailable"),
                        serde_json::to_value(&ru.max_unavailable).unwrap_or(Value::Null),
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
            }
        }
        nonnegative(
            &mut errs,
            &FieldPath::new("spec.revisionHistoryLimit"),
            spec.revision_history_limit.map(i64::from),
        );
        nonnegative(
            &mut errs,
            &FieldPath::new("spec.minReadySeconds"),
            spec.min_ready_seconds.map(i64::from),
        );
        if let Some(deadline) = spec.progress_deadline_seconds {
            nonnegative(
                &mut errs,
                &FieldPath::new("spec.progressDeadlineSeconds"),
                Some(i64::from(deadline)),
            );
            if deadline <= spec.min_ready_seconds.unwrap_or(0) {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec.progressDeadlineSeconds"),
                    deadline,
                    "must be greater than minReadySeconds",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Deployment, old: &Deployment) -> ErrorList {
        validate_workload_update(self, new, old)
    }

    fn table_cell(&self, column: &str, d: &Deployment) -> Option<Value> {
        let spec = d.spec.as_ref();
        let status = d.status.as_ref();
        match column {
            "Ready" => Some(replicas_cell(
                status.and_then(|s| s.ready_replicas),
                spec.and_then(|s| s.replicas),
            )),
            "Up-to-date" => Some(Value::from(
                status.and_then(|s| s.updated_replicas).unwrap_or(0),
            )),
            "Available" => Some(Value::from(
                status.and_then(|s| s.available_replicas).unwrap_or(0),
            )),
            "Selector" => Some(Value::from(selector_string(spec.map(|s| &s.selector)))),
            _ => container_cell(column, spec.map(|s| &s.template)),
        }
    }
}
