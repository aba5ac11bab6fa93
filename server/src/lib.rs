//! # kapi-server
//!
//! The generic Kubernetes-style API server, and the resources of the repository's
//! `schemas/` it serves. The `kapi` crate is its binary: flags and wiring only.
//!
//! Layers, each depending only on the ones below it (as in k8s.io/apiserver; no module
//! imports another in a circle):
//! - [`endpoints`]: the filter chain and the generic handlers (decode → registry →
//!   encode), dispatching on what [`request`] resolved once per request
//!   ([`request::RequestInfo`]: the path, the query, the verb);
//! - [`negotiation`] and [`response`]: the formats a client sends and accepts, and the
//!   responses every layer builds;
//! - [`registry`]: one [`registry::Store`] per resource version, running its strategy
//!   (defaulting, validation, create/update rules) around the storage;
//! - the storage: the `kapi_storage::Storage` trait and its backends.
//!
//! Beside them: [`status`] (every error as a Kubernetes `Status`), [`documents`]
//! (discovery and OpenAPI), [`presentation`] (Table and PartialObjectMetadata),
//! [`controllers`] (namespace lifecycle and garbage collection), [`apiextensions`]
//! (CustomResourceDefinitions served at run time), [`allocation`] (Service
//! cluster IPs and node ports), [`encryption`] (encryption at rest), [`server`] (listening,
//! shutdown), [`kubeconfig`], [`private_files`] (the modes of what it keeps on disk).
//! `docs/architecture.md` has the whole map.
//!
//! ```no_run
//! # async fn run() -> Result<(), kapi_server::server::ServeError> {
//! use kapi_server::{registry::Resources, server::{ServeConfig, serve, shutdown_signal}};
//!
//! let mut resources = Resources::new();
//! kapi_server::generated::register(&mut resources);
//! let config = ServeConfig {
//!     listen: "127.0.0.1:6443".parse().unwrap(),
//!     data_dir: "kapi-data".into(),
//!     etcd_servers: vec![],
//!     prefix: "/registry".into(),
//!     compaction_interval: Some(std::time::Duration::from_secs(300)),
//!     service_ranges: Default::default(),
//!     event_ttl: std::time::Duration::from_secs(3600),
//!     security: Default::default(),
//!     leader_election: None,
//!     watch_cache: Default::default(),
//! };
//! serve(config, resources, shutdown_signal()).await
//! # }
//! ```

pub mod admission;
pub mod allocation;
pub mod apiextensions;
pub mod authentication;
pub mod authorization;
pub mod bootstrap;
pub mod compactor;
pub mod controllers;
pub mod controlplane;
pub mod discovery;
pub mod documents;
pub mod duration;
pub mod encryption;
pub mod endpoints;
pub mod generated;
pub mod go_json;
pub mod hooks;
pub mod kubeconfig;
pub mod leader_election;
pub mod limits;
pub mod metrics;
pub mod negotiation;
pub mod openapi;
pub mod pki;
pub mod presentation;
pub mod private_files;
pub mod registry;
pub mod request;
pub mod response;
pub mod server;
mod shutdown;
pub mod status;
pub mod table;
pub mod tls;
