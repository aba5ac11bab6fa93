//! Behaviour of the served resources that their schemas cannot express, written as
//! [`kapi_core::Hooks`] and attached to the generated types with the `kapi.dev/hooks`
//! annotation in `schemas/`.
//!
//! One module per kind, named after it, in a folder per API group (`core/`, `apps/`,
//! `batch/`, ...), as kube-apiserver's `pkg/registry/<group>/<resource>/`. What kinds of
//! one group share is in the group's `mod.rs`; what other groups use of the core group
//! (the PodSpec rules, port checks, the legacy Event rules) is in `core/`, which uses no
//! other group.

mod admissionregistration;
mod apiextensions;
mod apiregistration;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
pub mod core;
mod discovery;
mod events;
pub mod example;
mod flowcontrol;
pub(crate) mod ip;
mod networking;
mod node;
mod node_labels;
mod policy;
mod rbac;
mod scheduling;
mod storage;
pub(crate) mod webhook_client;

pub use self::core::{
    ComponentStatusHooks, ConfigMapHooks, CoreEventHooks, EndpointsHooks, LimitRangeHooks,
    NamespaceHooks, NodeHooks, PersistentVolumeClaimHooks, PersistentVolumeHooks, PodHooks,
    PodTemplateHooks, ReplicationControllerHooks, ResourceQuotaHooks, SecretHooks,
    ServiceAccountHooks, ServiceHooks,
};
pub use admissionregistration::{
    MutatingWebhookConfigurationHooks, ValidatingAdmissionPolicyBindingHooks,
    ValidatingAdmissionPolicyHooks, ValidatingWebhookConfigurationHooks,
};
pub use apiextensions::CustomResourceDefinitionHooks;
pub use apiregistration::ApiServiceHooks;
pub use apps::{
    ControllerRevisionHooks, DaemonSetHooks, DeploymentHooks, ReplicaSetHooks, StatefulSetHooks,
};
pub use autoscaling::{HorizontalPodAutoscalerConversion, HorizontalPodAutoscalerHooks};
pub use batch::{CronJobHooks, JobHooks};
pub use certificates::{CertificateSigningRequestHooks, prepare_approval, validate_approval};
pub use coordination::LeaseHooks;
pub use discovery::EndpointSliceHooks;
pub use events::EventHooks;
pub use flowcontrol::{
    AUTO_UPDATE_ANNOTATION, BootstrapObject, FlowSchemaHooks, PriorityLevelConfigurationHooks,
    bootstrap_flow_schemas, bootstrap_priority_levels, same_spec,
};
pub use networking::{
    IngressClassHooks, IngressHooks, IpAddressHooks, NetworkPolicyHooks, ServiceCidrHooks,
};
pub use node::RuntimeClassHooks;
pub use policy::PodDisruptionBudgetHooks;
pub use rbac::{ClusterRoleBindingHooks, ClusterRoleHooks, RoleBindingHooks, RoleHooks};
pub use scheduling::{
    HIGHEST_USER_DEFINABLE_PRIORITY, PriorityClassHooks, SYSTEM_PRIORITY_CLASSES,
    SystemPriorityClass,
};
pub use storage::{
    CsiDriverHooks, CsiNodeHooks, CsiStorageCapacityHooks, StorageClassHooks,
    VolumeAttachmentHooks, VolumeAttributesClassHooks,
};

use kapi_core::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

/// `values` as JSON strings: the supported values of a `NotSupported` error.
fn strings(values: &[&str]) -> Vec<Value> {
    values.iter().map(|v| Value::from(*v)).collect()
}

/// kube's `ValidateNonnegativeField`, which the core, apps and batch kinds share.
fn nonnegative(errs: &mut ErrorList, path: &FieldPath, value: Option<i64>) {
    if let Some(v) = value.filter(|v| *v < 0) {
        errs.push(FieldError::invalid(
            path,
            v,
            "must be greater than or equal to 0",
        ));
    }
}
