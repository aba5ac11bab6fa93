//! StatefulSets: apps/v1 defaults (`SetDefaults_StatefulSet`), the spec's checks
//! (pod management policy, update strategy, replicas, selector and template), the spec
//! fields that may change after create, and the Ready cell of kube's printer.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetUpdateStrategy,
};
use crate::generated::apps::v1::StatefulSet;
use crate::hooks::core::pod_spec::{container_cell, default_template};
use crate::hooks::{nonnegative, strings};

use super::{replicas_cell, validate_selector_and_template};

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
        nonnegative(
            &mut errs,
            &FieldPath::new("spec.replicas"),
            spec.replicas.map(i64::from),
        );
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
