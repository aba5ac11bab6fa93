//! Behaviour of the served resources that their schemas cannot express, written as
//! [`kapi_core::Hooks`] and attached to the generated types with the `kapi.dev/hooks`
//! annotation in `schemas/`.

mod config;
pub mod namespace;

pub use config::{ConfigMapHooks, SecretHooks};
pub use namespace::NamespaceHooks;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Built-in kinds whose strategies do not track `metadata.generation` leave it unset,
/// as kube-apiserver does (the generic preparation sets it, as for custom resources).
fn untracked_generation(meta: &mut ObjectMeta) {
    meta.generation = None;
}
