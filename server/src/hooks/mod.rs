//! Behaviour of the served resources that their schemas cannot express, written as
//! [`kapi_core::Hooks`] and attached to the generated types with the `kapi.dev/hooks`
//! annotation in `schemas/`.

pub mod namespace;

pub use namespace::NamespaceHooks;
