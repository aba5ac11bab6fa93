//! Behaviour of the served resources that their schemas cannot express, written as
//! [`kapi_core::Hooks`] and attached to the generated types with the `kapi.dev/hooks`
//! annotation in `schemas/`.

mod apiextensions;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod config;
mod coordination;
mod event;
pub mod namespace;
mod networking;
mod node;
mod pod;
pub mod pod_binding;
mod pod_spec;
mod policy;
mod rbac;
mod service;
mod service_account;
mod storage;

pub use apiextensions::CustomResourceDefinitionHooks;
pub use apps::{
    ControllerRevisionHooks, DaemonSetHooks, DeploymentHooks, ReplicaSetHooks,
    ReplicationControllerHooks, StatefulSetHooks,
};
pub use autoscaling::HorizontalPodAutoscalerHooks;
pub use batch::{CronJobHooks, JobHooks};
pub use certificates::{CertificateSigningRequestHooks, prepare_approval, validate_approval};
pub use config::{ConfigMapHooks, SecretHooks};
pub use coordination::LeaseHooks;
pub use event::{CoreEventHooks, EventHooks};
pub use namespace::NamespaceHooks;
pub use networking::{IngressHooks, NetworkPolicyHooks};
pub use node::{ComponentStatusHooks, NodeHooks};
pub use pod::{PodHooks, PodTemplateHooks};
pub use policy::{LimitRangeHooks, PodDisruptionBudgetHooks, ResourceQuotaHooks};
pub use rbac::{ClusterRoleBindingHooks, ClusterRoleHooks, RoleBindingHooks, RoleHooks};
pub use service::{EndpointsHooks, ServiceHooks};
pub use service_account::ServiceAccountHooks;
pub use storage::{PersistentVolumeClaimHooks, PersistentVolumeHooks, StorageClassHooks};

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Built-in kinds whose strategies do not track `metadata.generation` leave it unset,
/// as kube-apiserver does (the generic preparation sets it, as for custom resources).
fn untracked_generation(meta: &mut ObjectMeta) {
    meta.generation = None;
}
