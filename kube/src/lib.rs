//! # kapi-kube
//!
//! The Kubernetes built-in resources (kube-apiserver's `pkg/registry` and
//! `pkg/controlplane`): the types compiled from the repository's `schemas/kubernetes/`
//! ([`generated`], by this crate's `build.rs`), their strategies ([`hooks`], one module
//! per group and kind), Service allocation ([`allocation`]), the admission plugins
//! ([`admission`]), the controllers ([`controllers`], with [`leader_election`] picking
//! the replica that runs them), the RBAC authorizer's policy ([`rbac`]), the objects
//! every cluster starts with ([`bootstrap`]), the review APIs ([`reviews`]), pod
//! [`eviction`] under disruption budgets, the core [`bindings`] collection, what kube
//! decides before it connects to a kubelet ([`kubelet_streams`]: `pods/log`, `exec`,
//! `attach`, `portforward`), the
//! configuration priority and fairness follows ([`flow_control`]), and what
//! particular built-ins get from the configuration ([`controlplane`]).
//!
//! The built-ins compiled are chosen with cargo features, one per API group (`core`,
//! `apps`, `rbac`, …, as `build.rs`' `builtin_groups.rs` lists them, and `namespaces`
//! for core's Namespace alone); `all-builtins`, the default, is every one. A group's
//! schema, generated types, hooks and protobuf messages come and go together; a group
//! whose hooks use core's (`apps`, `batch`, `events`, `networking`,
//! `apiregistration`) turns `core` on. What is generic stays whatever the features:
//! the controllers and admission plugins find at run time which kinds are served.
//!
//! Everything generic is `kapi-apiserver`'s; this crate must not handle HTTP, encode
//! or negotiate formats, or know how the server is wired and listens (the `kapi`
//! crate's).
//!
//! ```
//! let mut resources = kapi_apiserver::registry::Resources::new();
//! kapi_kube::generated::register(&mut resources);
//! let deployments = resources
//!     .strategies()
//!     .iter()
//!     .find(|s| s.info().api_version() == "apps/v1" && s.info().plural == "deployments");
//! assert_eq!(deployments.unwrap().info().kind, "Deployment");
//! ```

/// The field manager of the writes the server makes itself (bootstrap objects, its
/// leases, quota usage), as kube-apiserver's own.
pub(crate) const APISERVER_MANAGER: &str = "kube-apiserver";

pub mod admission;
pub mod allocation;
pub mod bindings;
pub mod bootstrap;
pub mod controllers;
pub mod controlplane;
pub mod eviction;
pub mod flow_control;
pub mod generated;
pub mod hooks;
pub mod kubelet_streams;
pub mod leader_election;
pub mod rbac;
pub mod reviews;
