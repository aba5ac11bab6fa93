//! # kapi-apiserver
//!
//! The generic Kubernetes-style API server (kube-apiserver's `k8s.io/apiserver`): it
//! serves whatever resources it is given and knows none of them by name, apart from the
//! meta types it must speak (Status, Table, DeleteOptions, WatchEvent, the discovery
//! documents). The built-ins' strategies, controllers and admission plugins are
//! `kapi-kube`'s, run-time CustomResourceDefinitions `kapi-apiextensions`', and the
//! wiring of a running server the `kapi` crate's.
//!
//! Layers, each depending only on the ones below it (no module imports another in a
//! circle):
//! - [`endpoints`]: the filter chain and the generic handlers (decode → registry →
//!   encode), dispatching on what [`request`] resolved once per request
//!   ([`request::RequestInfo`]: the path, the query, the verb), and the storage-less
//!   [`endpoints::CreateOnly`] resources others register;
//! - [`negotiation`] and [`response`]: the formats a client sends and accepts, and the
//!   responses every layer builds;
//! - [`registry`]: one [`registry::Store`] per resource version, running its strategy
//!   (defaulting, validation, create/update rules) and the request's
//!   [`registry::Admission`] around the storage;
//! - the storage: the `kapi_storage::Storage` trait and its backends.
//!
//! Beside them: [`status`] (every error as a Kubernetes `Status`), [`documents`]
//! (discovery and OpenAPI), [`presentation`] (Table and PartialObjectMetadata),
//! [`authentication`], [`authorization`], [`limits`], [`flowcontrol`] (API Priority and
//! Fairness, not yet wired), [`metrics`], [`encryption`]
//! (encryption at rest), [`tls`], [`webhook`] (the client every webhook is called with),
//! [`compactor`], [`coalesce`] (an HTTP/2 connection's writes gathered per turn).
//! `docs/architecture.md` has the whole map.
//!
//! It must not know a resource's kind, a group's rules or how a server is wired.

pub mod authentication;
pub mod authorization;
pub mod coalesce;
pub mod compactor;
pub mod discovery;
pub mod documents;
pub mod duration;
pub mod encryption;
pub mod endpoints;
pub mod expiring;
pub mod flowcontrol;
pub mod go_json;
pub mod limits;
pub mod metrics;
pub mod negotiation;
pub mod openapi;
pub mod presentation;
pub mod registry;
pub mod request;
pub mod response;
pub mod shutdown;
pub mod status;
pub mod table;
pub mod tls;
pub mod webhook;
