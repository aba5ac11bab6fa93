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

pub mod kubeconfig;
pub mod pki;
pub mod private_files;
pub mod server;
