//! # kapi
//!
//! The server chain's wiring: [`server::serve`] opens the storage, registers the
//! built-ins (`kapi-kube`) and runs the CustomResourceDefinitions' controller
//! (`kapi-apiextensions`) on the generic framework (`kapi-apiserver`), makes or loads
//! the certificates ([`pki`]), writes the admin [`kubeconfig`] and listens. The `kapi`
//! binary adds the flags of its one CLI.
//!
//! It must not hold request handling, a resource's rules or code generation: those are
//! the other crates'.
//!
//! ```no_run
//! # async fn run() -> Result<(), kapi::server::ServeError> {
//! use kapi::server::{ServeConfig, serve, shutdown_signal};
//! use kapi_apiserver::registry::Resources;
//!
//! let mut resources = Resources::new();
//! kapi_kube::generated::register(&mut resources);
//! serve(ServeConfig::default(), resources, shutdown_signal()).await
//! # }
//! ```
//!
//! [`server::start`] runs the same in the background and returns once the server
//! answers, with a handle to stop it: for a control plane of its own kinds, or a test.
//! Single built-ins are taken out of the generated `register` with `kapi_core::Only`;
//! what a server needs at the least (Namespaces for namespaced kinds, the RBAC kinds for
//! RBAC authorization) is checked before it starts. The library logs through `tracing`
//! and installs no subscriber.

pub mod kubeconfig;
pub mod pki;
pub mod private_files;
pub mod server;
