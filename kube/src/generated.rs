//! The resources of the repository's `schemas/`, compiled by `kapi-codegen` from this
//! crate's `build.rs`.
#![allow(missing_docs, clippy::all)]

include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"));

/// Kubernetes' shared API types (`api::core::v1::PodSpec`, …), laid out as k8s-openapi
/// lays them out (with any built-in group but apiextensions' and apiregistration's,
/// whose types live elsewhere).
#[cfg(any(
    feature = "admissionregistration",
    feature = "apiserverinternal",
    feature = "apps",
    feature = "authentication",
    feature = "authorization",
    feature = "autoscaling",
    feature = "batch",
    feature = "certificates",
    feature = "coordination",
    feature = "core",
    feature = "namespaces",
    feature = "discovery",
    feature = "events",
    feature = "flowcontrol",
    feature = "networking",
    feature = "node",
    feature = "policy",
    feature = "rbac",
    feature = "storage",
))]
pub use self::io::k8s::api;
