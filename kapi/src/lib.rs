//! # kapi
//!
//! The server chain's wiring: [`server::serve`] opens the storage, registers the
//! resources it is given, runs the CustomResourceDefinitions' controller
//! (`kapi-apiextensions`) on the generic framework (`kapi-apiserver`), makes or loads
//! the certificates ([`pki`]), writes the admin [`kubeconfig`] and listens. The `kapi`
//! binary adds the flags of its one CLI.
//!
//! It must not hold request handling, a resource's rules or code generation: those are
//! the other crates'.
//!
//! There are three ways to use kapi, and this crate is in two of them.
//!
//! ## 1. Edit `schemas/`, rebuild, serve
//!
//! The built-ins and the example `Widget` are CRD-shaped YAML in the repository's
//! `schemas/`, compiled into `kapi-kube` by its `build.rs`. Add or edit one, then
//! `cargo run -p kapi -- serve` rebuilds and serves it, and kubectl or any client
//! library talks to it (`KUBECONFIG=kapi-data/kubeconfig kubectl get widgets`). The
//! binary is [`server::serve`] over every generated resource:
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
//! ## 2. A control plane of your own kinds
//!
//! A crate of your own keeps its kinds in its own `schemas/`, compiles them in its
//! `build.rs` with `kapi_codegen::Builder` (as prost-build compiles protos), and serves
//! them with [`server::start`] (in the background, returning once the server answers,
//! with a handle to stop it) or [`server::serve`]. `kapi_core::Only` takes single
//! built-ins out of the generated `register`; what a server needs at the least
//! (Namespaces for namespaced kinds, the RBAC kinds for RBAC authorization) is checked
//! before it starts. Only the built-in groups it names are compiled when it depends on
//! this crate without its default `all-builtins` feature and names kapi-kube's group
//! features (`namespaces`, `rbac`, …). `examples/own-control-plane` is such a crate.
//!
//! ```no_run
//! # mod my_crate { pub fn register(_: &mut dyn kapi_core::Registrar) {} }
//! # async fn run() -> Result<(), kapi::server::ServeError> {
//! use kapi::server::{SecurityConfig, ServeConfig, start};
//! use kapi_apiserver::authorization::Mode;
//! use kapi_apiserver::registry::Resources;
//! use kapi_core::Only;
//!
//! let mut resources = Resources::new();
//! my_crate::register(&mut resources); // generated from your schemas by build.rs
//! kapi_kube::generated::register(&mut Only::new(&mut resources, |r| {
//!     r.group.is_empty() && r.kind == "Namespace"
//! }));
//! let server = start(
//!     ServeConfig {
//!         listen: "127.0.0.1:0".parse().unwrap(),
//!         data_dir: "my-data".into(),
//!         // No RBAC kinds served: every authenticated user may do anything.
//!         security: SecurityConfig {
//!             authorization_modes: vec![Mode::AlwaysAllow],
//!             ..SecurityConfig::default()
//!         },
//!         ..ServeConfig::default()
//!     },
//!     resources,
//! )
//! .await?;
//! println!("{}, kubeconfig {}", server.ready().url, server.ready().kubeconfig.display());
//! server.stop().await
//! # }
//! ```
//!
//! ## 3. The generator alone
//!
//! `kapi-codegen` turns CRD YAML into typed Rust, strategies and a `register` function
//! without any server (`examples/build-rs`); this crate is not needed then. A
//! `build.rs` as prost-build's:
//!
//! ```no_run
//! // build.rs: schemas/*.yaml → $OUT_DIR/kapi_generated.rs, rerun when one changes;
//! // the crate then `include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"))`.
//! kapi_codegen::Builder::new()
//!     .schemas_dir("schemas")
//!     .hooks("gizmos.toys.example.com", "crate::hooks::GizmoHooks")
//!     .generate()
//!     .expect("the schemas compile");
//! ```
//!
//! Tests of controllers start a server with `kapi-test-server`, built on
//! [`server::start`].
//!
//! The library logs through `tracing` and installs no subscriber: a binary installs
//! one (`tracing_subscriber::fmt().init()`) to see `kapi is ready` and the rest.

pub mod kubeconfig;
pub mod pki;
pub mod private_files;
pub mod server;
