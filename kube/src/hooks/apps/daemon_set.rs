//! DaemonSets: apps/v1 defaults (`SetDefaults_DaemonSet`), the spec's checks (selector
//! and template, update strategy, revision history), the immutable selector, and the
//! cells of kube's printer.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::apps::v1::{DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
use crate::generated::apps::v1::DaemonSet;
use crate::hooks::core::pod_spec::{
    container_cell, default_template, format_labels, selector_string,
};
use crate::hooks::{nonnegative, strings};

use super::{Workload, int_or_percent, validate_selector_and_template, validate_workload_update};

/// The hooks of DaemonSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct DaemonSetHooks;

impl Workload for DaemonSet {
    fn selector(&self) -> Option<&LabelSelector> {
        self.spec.as_ref().map(|s| &s.selector)
    }
}

impl Hooks<DaemonSet> for DaemonSetHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, ds: &mut DaemonSet) {
        let Some(spec) = ds.spec.as_mut() else {
            return;
        };
        let strategy = spec
            .update_strategy
            .get_or_insert_with(DaemonSetUpdateStrategy::default);
        let kind = strategy
            .r#type
            .get_or_insert_with(|| "RollingUpdate".into());
        if kind == "RollingUpdate" {
            let ru = strategy
                .rolling_update
                .get_or_insert_with(RollingUpdateDaemonSet::default);
            ru.max_unavailable.get_or_insert(IntOrString::Int(1));
            ru.max_surge.get_or_insert(IntOrString::Int(0));
        }
        spec.revision_history_limit.get_or_insert(10);
        default_template(&mut spec.template);
    }

    fn validate(&self, ds: &DaemonSet) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = ds.spec.as_ref() else {
            return errs;
        };
        errs.extend(validate_selector_and_template(
            &spec.selector,
            Some(&spec.template),
            "daemonset",
        ));
        if let Some(strategy) = spec.update_strategy.as_ref() {
            let kind = strategy.r#type.as_deref().unwrap_or("");
            let path = FieldPath::new("spec.updateStrategy");
            if !["OnDelete", "RollingUpdate"].contains(&kind) {
                errs.push(FieldError::not_supported(
                    &path.child("type"),
                    kind,
                    &strings(&["OnDelete", "RollingUpdate"]),
                ));
            }
            if let Some(ru) = strategy
                .rolling_update
                .as_ref()
                .filter(|_| kind == "RollingUpdate")
            {
                let unavailable = int_or_percent(ru.max_unavailable.as_ref());
                let surge = int_or_percent(ru.max_surge.as_ref());
                if unavailable == Some(0) && surge.unwrap_or(0) == 0 {
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
        errs
    }

    fn validate_update(&self, new: &DaemonSet, old: &DaemonSet) -> ErrorList {
        validate_workload_update(self, new, old)
    }

    fn table_cell(&self, column: &str, ds: &DaemonSet) -> Option<Value> {
        let spec = ds.spec.as_ref();
        let status = ds.status.as_ref();
        match column {
            "Desired" => Some(Value::from(
                status.map_or(0, |s| s.desired_number_scheduled),
            )),
            "Current" => Some(Value::from(
                status.map_or(0, |s| s.current_number_scheduled),
            )),
            "Ready" => Some(Value::from(status.map_or(0, |s| s.number_ready))),
            "Up-to-date" => Some(Value::from(
                status.and_then(|s| s.updated_number_scheduled).unwrap_or(0),
            )),
            "Available" => Some(Value::from(
                status.and_then(|s| s.number_available).unwrap_or(0),
            )),
            "Node Selector" => Some(Value::from(format_labels(
                spec.and_then(|s| s.template.spec.as_ref())
                    .and_then(|p| p.node_selector.as_ref()),
            ))),
            "Selector" => Some(Value::from(selector_string(spec.map(|s| &s.selector)))),
            _ => container_cell(column, spec.map(|s| &s.template)),
        }
    }
}
