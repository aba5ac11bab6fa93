//! The core API group (`/api/v1`), one module per kind as kube-apiserver's
//! `pkg/registry/core/<resource>/`; `pod_spec` holds the PodSpec rules that pods, pod
//! templates and every workload's template share, apps/v1 and batch/v1 ones included.

mod component_status;
mod config_map;
mod endpoints;
pub(super) mod event;
mod limit_range;
pub mod namespace;
mod node;
mod persistent_volume;
mod persistent_volume_claim;
mod pod;
pub mod pod_binding;
mod pod_defaults;
pub(super) mod pod_spec;
mod pod_subresources;
mod pod_template;
mod qos;
mod replication_controller;
mod resource_quota;
mod secret;
pub(super) mod service;
mod service_account;
mod service_warnings;

pub use component_status::ComponentStatusHooks;
pub use config_map::ConfigMapHooks;
pub use endpoints::EndpointsHooks;
pub use event::CoreEventHooks;
pub use limit_range::LimitRangeHooks;
pub use namespace::NamespaceHooks;
pub use node::NodeHooks;
pub use persistent_volume::PersistentVolumeHooks;
pub(crate) use persistent_volume::quantity_value;
pub use persistent_volume_claim::PersistentVolumeClaimHooks;
pub use pod::PodHooks;
pub use pod_template::PodTemplateHooks;
pub use replication_controller::ReplicationControllerHooks;
pub use resource_quota::ResourceQuotaHooks;
pub use secret::SecretHooks;
pub use service::ServiceHooks;
pub use service_account::ServiceAccountHooks;
