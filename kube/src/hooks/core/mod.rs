//! The core API group (`/api/v1`), one module per kind as kube-apiserver's
//! `pkg/registry/core/<resource>/`; `pod_spec` holds the PodSpec rules that pods, pod
//! templates and every workload's template share, apps/v1 and batch/v1 ones included.

#[cfg(feature = "core")]
mod component_status;
#[cfg(feature = "core")]
mod config_map;
#[cfg(feature = "core")]
mod endpoints;
#[cfg(feature = "core")]
pub(super) mod event;
#[cfg(feature = "core")]
mod limit_range;
pub mod namespace;
#[cfg(feature = "core")]
mod node;
#[cfg(feature = "core")]
mod persistent_volume;
#[cfg(feature = "core")]
mod persistent_volume_claim;
#[cfg(feature = "core")]
mod pod;
#[cfg(feature = "core")]
pub mod pod_binding;
#[cfg(feature = "core")]
mod pod_defaults;
#[cfg(feature = "core")]
pub(super) mod pod_spec;
#[cfg(feature = "core")]
mod pod_subresources;
#[cfg(feature = "core")]
mod pod_template;
#[cfg(feature = "core")]
mod qos;
#[cfg(feature = "core")]
mod replication_controller;
#[cfg(feature = "core")]
mod resource_quota;
#[cfg(feature = "core")]
mod secret;
#[cfg(feature = "core")]
pub(super) mod service;
#[cfg(feature = "core")]
mod service_account;
#[cfg(feature = "core")]
mod service_warnings;

#[cfg(feature = "core")]
pub use component_status::ComponentStatusHooks;
#[cfg(feature = "core")]
pub use config_map::ConfigMapHooks;
#[cfg(feature = "core")]
pub use endpoints::EndpointsHooks;
#[cfg(feature = "core")]
pub use event::CoreEventHooks;
#[cfg(feature = "core")]
pub use limit_range::LimitRangeHooks;
pub use namespace::NamespaceHooks;
#[cfg(feature = "core")]
pub use node::NodeHooks;
#[cfg(feature = "core")]
pub use persistent_volume::PersistentVolumeHooks;
#[cfg(feature = "core")]
pub use persistent_volume_claim::PersistentVolumeClaimHooks;
#[cfg(feature = "core")]
pub use pod::PodHooks;
#[cfg(feature = "core")]
pub use pod_template::PodTemplateHooks;
#[cfg(feature = "core")]
pub use replication_controller::ReplicationControllerHooks;
#[cfg(feature = "core")]
pub use resource_quota::ResourceQuotaHooks;
#[cfg(feature = "core")]
pub use secret::SecretHooks;
#[cfg(feature = "core")]
pub use service::ServiceHooks;
#[cfg(feature = "core")]
pub use service_account::ServiceAccountHooks;
