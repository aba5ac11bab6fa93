//! The structural schema engine: one interpreter of `openAPIV3Schema` shared by compiled
//! resources and run-time CRDs, so both answer with the same bytes.
//!
//! A [`Schema`] is parsed once from JSON ([`Schema::parse`]); parsing checks that the
//! schema is structural and compiles every regex and CEL rule, so a schema that parses
//! never fails later for its own reasons. It then applies defaults
//! ([`Schema::apply_defaults`]), prunes unknown fields ([`Schema::prune`]) and validates
//! objects ([`Schema::validate`], [`Schema::validate_update`]) with Kubernetes' messages.

pub mod cel;
pub mod cel_authz;
pub mod cel_static;
mod cel_tree;
mod cel_values;
pub mod cost;
mod defaulting;
pub mod definitions;
pub mod format;
mod from_schemars;
mod model;
mod parse;
mod pruning;
mod validation;

pub use definitions::Definitions;
pub use model::*;
