//! Behaviour of the served resources that their schemas cannot express, written as
//! [`kapi_core::Hooks`] and attached to the generated types with the `kapi.dev/hooks`
//! annotation in `schemas/`.
//!
//! One module per kind, named after it, in a folder per API group (`core/`, `apps/`,
//! `batch/`, ...), as kube-apiserver's `pkg/registry/<group>/<resource>/`. What kinds of
//! one group share is in the group's `mod.rs`; what other groups use of the core group
//! (the PodSpec rules, port checks, the legacy Event rules) is in `core/`, which uses no
//! other group.

// Helpers shared by several groups go unused in a crate compiled with few of them.
#![cfg_attr(not(feature = "all-builtins"), allow(dead_code))]

#[cfg(feature = "admissionregistration")]
mod admissionregistration;
#[cfg(feature = "apiextensions")]
mod apiextensions;
#[cfg(feature = "apiregistration")]
mod apiregistration;
#[cfg(feature = "apps")]
mod apps;
#[cfg(feature = "autoscaling")]
mod autoscaling;
#[cfg(feature = "batch")]
mod batch;
#[cfg(feature = "certificates")]
mod certificates;
#[cfg(feature = "coordination")]
mod coordination;
#[cfg(feature = "namespaces")]
pub mod core;
#[cfg(feature = "discovery")]
mod discovery;
#[cfg(feature = "events")]
mod events;
#[cfg(feature = "flowcontrol")]
mod flowcontrol;
pub(crate) mod ip;
#[cfg(feature = "networking")]
mod networking;
#[cfg(feature = "node")]
mod node;
#[cfg(any(feature = "node", feature = "storage"))]
mod node_labels;
#[cfg(feature = "policy")]
mod policy;
pub(crate) mod quantity;
#[cfg(feature = "rbac")]
mod rbac;
#[cfg(feature = "scheduling")]
mod scheduling;
#[cfg(feature = "storage")]
mod storage;
pub(crate) mod webhook_client;

#[cfg(feature = "namespaces")]
pub use self::core::NamespaceHooks;
#[cfg(feature = "core")]
pub use self::core::{
    ComponentStatusHooks, ConfigMapHooks, CoreEventHooks, EndpointsHooks, LimitRangeHooks,
    NodeHooks, PersistentVolumeClaimHooks, PersistentVolumeHooks, PodHooks, PodTemplateHooks,
    ReplicationControllerHooks, ResourceQuotaHooks, SecretHooks, ServiceAccountHooks, ServiceHooks,
};
#[cfg(feature = "admissionregistration")]
pub use admissionregistration::{
    MutatingWebhookConfigurationHooks, ValidatingAdmissionPolicyBindingHooks,
    ValidatingAdmissionPolicyHooks, ValidatingWebhookConfigurationHooks,
};
#[cfg(feature = "apiextensions")]
pub use apiextensions::CustomResourceDefinitionHooks;
#[cfg(feature = "apiregistration")]
pub use apiregistration::ApiServiceHooks;
#[cfg(feature = "apps")]
pub use apps::{
    ControllerRevisionHooks, DaemonSetHooks, DeploymentHooks, ReplicaSetHooks, StatefulSetHooks,
};
#[cfg(feature = "autoscaling")]
pub use autoscaling::{HorizontalPodAutoscalerConversion, HorizontalPodAutoscalerHooks};
#[cfg(feature = "batch")]
pub use batch::{CronJobHooks, JobHooks};
#[cfg(feature = "certificates")]
pub use certificates::{CertificateSigningRequestHooks, prepare_approval, validate_approval};
#[cfg(feature = "coordination")]
pub use coordination::LeaseHooks;
#[cfg(feature = "discovery")]
pub use discovery::EndpointSliceHooks;
#[cfg(feature = "events")]
pub use events::EventHooks;
#[cfg(feature = "flowcontrol")]
pub use flowcontrol::{
    AUTO_UPDATE_ANNOTATION, BootstrapObject, FlowSchemaHooks, PriorityLevelConfigurationHooks,
    bootstrap_flow_schemas, bootstrap_priority_levels, same_spec,
};
#[cfg(feature = "networking")]
pub use networking::{
    IngressClassHooks, IngressHooks, IpAddressHooks, NetworkPolicyHooks, ServiceCidrHooks,
};
#[cfg(feature = "node")]
pub use node::RuntimeClassHooks;
#[cfg(feature = "policy")]
pub use policy::PodDisruptionBudgetHooks;
#[cfg(feature = "rbac")]
pub use rbac::{ClusterRoleBindingHooks, ClusterRoleHooks, RoleBindingHooks, RoleHooks};
#[cfg(feature = "scheduling")]
pub use scheduling::{
    HIGHEST_USER_DEFINABLE_PRIORITY, PriorityClassHooks, SYSTEM_PRIORITY_CLASSES,
    SystemPriorityClass,
};
#[cfg(feature = "storage")]
pub use storage::{
    CsiDriverHooks, CsiNodeHooks, CsiStorageCapacityHooks, StorageClassHooks,
    VolumeAttachmentHooks, VolumeAttributesClassHooks,
};

use kapi_core::{ErrorList, FieldError, FieldPath};

/// The finalizer a Namespace gets when it is created and the namespace controller
/// removes once the namespace is empty (outside `core/`, which only `namespaces` or
/// `core` compiles, because the controller always is).
pub const KUBERNETES_FINALIZER: &str = "kubernetes";
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
