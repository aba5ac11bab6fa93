//! The resources of the repository's `schemas/`, compiled by `kapi-codegen` from this
//! crate's `build.rs`.
#![allow(missing_docs, clippy::all)]

include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"));

/// Kubernetes' shared API types (`api::core::v1::PodSpec`, …), laid out as k8s-openapi
/// lays them out.
pub use self::io::k8s::api;
