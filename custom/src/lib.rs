//! # kapi-custom
//!
//! The repository's own resources: every schema in `schemas/` outside
//! `schemas/kubernetes/` ([`generated`], by this crate's `build.rs`), with the hooks
//! their schemas name ([`hooks`], one module per kind; `schemas/widget.yaml`'s
//! conversion is the worked example). The `kapi` binary serves them beside the
//! built-ins of kapi-kube.
//!
//! They are a crate of their own so that editing a schema recompiles this crate and
//! relinks the binary, and not the 45+ built-ins (BENCHMARKS.md, "The schema-edit
//! loop"). This crate must not know the built-ins (kapi-kube) or how they are served:
//! it depends on kapi-core alone, as a user's own crate of kinds would.
//!
//! ```
//! let mut resources = kapi_apiserver::registry::Resources::new();
//! kapi_custom::generated::register(&mut resources);
//! let widgets = resources
//!     .strategies()
//!     .iter()
//!     .find(|s| s.info().plural == "widgets");
//! assert_eq!(widgets.unwrap().info().api_version(), "example.kapi.dev/v1");
//! ```

pub mod generated;
pub mod hooks;
