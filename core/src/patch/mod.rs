//! Patching of stored objects.
//!
//! - [`strategic`]: Kubernetes' strategic merge patch
//!   (`application/strategic-merge-patch+json`), driven by the structural schema's
//!   `x-kubernetes-patch-*` and `x-kubernetes-list-*` extensions instead of Go struct tags.

pub mod strategic;

pub use strategic::PatchError;
