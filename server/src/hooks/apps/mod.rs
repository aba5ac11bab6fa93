//! Workload controllers' objects (apps/v1 and ReplicationController), as
//! kube-apiserver's strategies for them behave: apps/v1 defaults
//! (`SetDefaults_Deployment`, `_ReplicaSet`, `_StatefulSet`, `_DaemonSet`) and core/v1's
//! `SetDefaults_ReplicationController`, PodSpec defaults in every template, generation
//! tracked (1 on create, bumped when the spec changes), the selector required, not
//! empty and selecting the template, templates restarting `Always`, apps/v1 selectors
//! immutable, and the Table cells of kube's printers.
//!
//! Deliberate differences from kube-apiserver:
//! - Validation covers what is listed above plus replica counts, update strategies and
//!   the StatefulSet spec's mutable fields; other fields are checked by the schema only
//!   (see [`super::pod_spec`] for the pod spec).
//! - ControllerRevision does not track `metadata.generation`, as in kube; its `data`
//!   is immutable and `revision` not negative.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::pod_spec::{
    container_cell, default_template, format_labels, selector_error, selector_is_empty,
    selector_json, selector_string, validate_controller_template,
};
use super::untracked_generation;
use crate::generated::api::apps::v1::{
    DaemonSetUpdateStrategy, DeploymentStrategy, RollingUpdateDaemonSet, RollingUpdateDeployment,
    RollingUpdateStatefulSetStrategy, StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetUpdateStrategy,
};
use crate::generated::apps::v1::ControllerRevision;
use crate::generated::apps::v1::DaemonSet;
use crate::generated::apps::v1::Deployment;
use crate::generated::apps::v1::ReplicaSet;
use crate::generated::apps::v1::StatefulSet;
use crate::generated::core::v1::ReplicationController;

fn strings(values: &[&str]) -> Vec<Value> {
    values.iter().map(|v| Value::from(*v)).collect()
}

/// `ValidateNonnegativeField`.
fn nonnegative(errs: &mut ErrorList, path: &str, value: Option<i64>) {
    if let Some(v) = value.filter(|v| *v < 0) {
        errs.push(FieldError::invalid(
            &FieldPath::new(path),
            v,
            "must be greater than or equal to 0",
        ));
    }
}

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

/// `spec.selector: Invalid value: ...: field is immutable` when it changed.
fn selector_immutable(new: &LabelSelector, old: &LabelSelector) -> ErrorList {
    if new == old {
        return ErrorList::new();
    }
    vec![selector_error(
        &FieldPath::new("spec.selector"),
        new,
        "field is immutable",
    )]
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

/// The hooks of Deployment.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeploymentHooks;

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
        nonnegative(&mut errs, "spec.replicas", spec.replicas.map(i64::from));
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
            "spec.revisionHistoryLimit",
            spec.revision_history_limit.map(i64::from),
        );
        nonnegative(
            &mut errs,
            "spec.minReadySeconds",
            spec.min_ready_seconds.map(i64::from),
        );
        if let Some(deadline) = spec.progress_deadline_seconds {
            nonnegative(
                &mut errs,
                "spec.progressDeadlineSeconds",
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
        let mut errs = self.validate(new);
        if let (Some(n), Some(o)) = (new.spec.as_ref(), old.spec.as_ref()) {
            errs.extend(selector_immutable(&n.selector, &o.selector));
        }
        errs
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

/// The hooks of ReplicaSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReplicaSetHooks;

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
        nonnegative(&mut errs, "spec.replicas", spec.replicas.map(i64::from));
        nonnegative(
            &mut errs,
            "spec.minReadySeconds",
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
        let mut errs = self.validate(new);
        if let (Some(n), Some(o)) = (new.spec.as_ref(), old.spec.as_ref()) {
            errs.extend(selector_immutable(&n.selector, &o.selector));
        }
        errs
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

/// The hooks of StatefulSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatefulSetHooks;

/// kube's message for a StatefulSet update outside the fields that may change.
const STATEFULSET_UPDATE_FORBIDDEN: &str = "updates to statefulset spec for fields other than \
    'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', \
    'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";

impl Hooks<StatefulSet> for StatefulSetHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, sts: &mut StatefulSet) {
        let Some(spec) = sts.spec.as_mut() else {
            return;
        };
        spec.pod_management_policy
            .get_or_insert_with(|| "OrderedReady".into());
        let strategy = spec
            .update_strategy
            .get_or_insert_with(StatefulSetUpdateStrategy::default);
        let kind = strategy
            .r#type
            .get_or_insert_with(|| "RollingUpdate".into());
        if kind == "RollingUpdate" {
            strategy
                .rolling_update
                .get_or_insert_with(RollingUpdateStatefulSetStrategy::default)
                .partition
                .get_or_insert(0);
        }
        let policy = spec
            .persistent_volume_claim_retention_policy
            .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
        policy.when_deleted.get_or_insert_with(|| "Retain".into());
        policy.when_scaled.get_or_insert_with(|| "Retain".into());
        spec.replicas.get_or_insert(1);
        spec.revision_history_limit.get_or_insert(10);
        default_template(&mut spec.template);
    }

    fn validate(&self, sts: &StatefulSet) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = sts.spec.as_ref() else {
            return errs;
        };
        let policy = spec.pod_management_policy.as_deref().unwrap_or("");
        if !["OrderedReady", "Parallel"].contains(&policy) {
            errs.push(FieldError::not_supported(
                &FieldPath::new("spec.podManagementPolicy"),
                policy,
                &strings(&["OrderedReady", "Parallel"]),
            ));
        }
        if let Some(kind) = spec
            .update_strategy
            .as_ref()
            .and_then(|s| s.r#type.as_deref())
        {
            if !["RollingUpdate", "OnDelete"].contains(&kind) {
                errs.push(FieldError::not_supported(
                    &FieldPath::new("spec.updateStrategy.type"),
                    kind,
                    &strings(&["RollingUpdate", "OnDelete"]),
                ));
            }
        }
        nonnegative(&mut errs, "spec.replicas", spec.replicas.map(i64::from));
        errs.extend(validate_selector_and_template(
            &spec.selector,
            Some(&spec.template),
            "statefulset",
        ));
        errs
    }

    fn validate_update(&self, new: &StatefulSet, old: &StatefulSet) -> ErrorList {
        let mut errs = self.validate(new);
        if let (Some(n), Some(o)) = (new.spec.as_ref(), old.spec.as_ref()) {
            let mut rest = n.clone();
            rest.replicas = o.replicas;
            rest.ordinals = o.ordinals.clone();
            rest.template = o.template.clone();
            rest.update_strategy = o.update_strategy.clone();
            rest.revision_history_limit = o.revision_history_limit;
            rest.persistent_volume_claim_retention_policy =
                o.persistent_volume_claim_retention_policy.clone();
            rest.min_ready_seconds = o.min_ready_seconds;
            if &rest != o {
                errs.push(FieldError::forbidden(
                    &FieldPath::new("spec"),
                    STATEFULSET_UPDATE_FORBIDDEN,
                ));
            }
        }
        errs
    }

    fn table_cell(&self, column: &str, sts: &StatefulSet) -> Option<Value> {
        let spec = sts.spec.as_ref();
        match column {
            "Ready" => Some(replicas_cell(
                sts.status.as_ref().and_then(|s| s.ready_replicas),
                spec.and_then(|s| s.replicas),
            )),
            _ => container_cell(column, spec.map(|s| &s.template)),
        }
    }
}

/// The hooks of DaemonSet.
#[derive(Clone, Copy, Debug, Default)]
pub struct DaemonSetHooks;

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
            "spec.revisionHistoryLimit",
            spec.revision_history_limit.map(i64::from),
        );
        errs
    }

    fn validate_update(&self, new: &DaemonSet, old: &DaemonSet) -> ErrorList {
        let mut errs = self.validate(new);
        if let (Some(n), Some(o)) = (new.spec.as_ref(), old.spec.as_ref()) {
            errs.extend(selector_immutable(&n.selector, &o.selector));
        }
        errs
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

/// The hooks of ControllerRevision.
#[derive(Clone, Copy, Debug, Default)]
pub struct ControllerRevisionHooks;

impl Hooks<ControllerRevision> for ControllerRevisionHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, cr: &mut ControllerRevision) {
        untracked_generation(&mut cr.metadata);
    }

    fn prepare_for_update(&self, new: &mut ControllerRevision, _old: &ControllerRevision) {
        untracked_generation(&mut new.metadata);
    }

    fn validate(&self, cr: &ControllerRevision) -> ErrorList {
        let mut errs = ErrorList::new();
        nonnegative(&mut errs, "revision", Some(cr.revision));
        errs
    }

    fn validate_update(&self, new: &ControllerRevision, old: &ControllerRevision) -> ErrorList {
        let mut errs = self.validate(new);
        if new.data != old.data {
            errs.push(FieldError::invalid(
                &FieldPath::new("data"),
                serde_json::to_value(&new.data).unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs
    }
}

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
        nonnegative(&mut errs, "spec.replicas", spec.replicas.map(i64::from));
        nonnegative(
            &mut errs,
            "spec.minReadySeconds",
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

#[cfg(test)]
mod tests {
    use super::super::pod_spec::go_string_map;
    use super::*;

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
