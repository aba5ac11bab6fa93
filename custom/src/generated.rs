//! The resources of the repository's own `schemas/`, compiled by `kapi-codegen` from
//! this crate's `build.rs`.
#![allow(missing_docs, clippy::all)]

include!(concat!(env!("OUT_DIR"), "/kapi_generated.rs"));
