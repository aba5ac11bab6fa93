//! # kapi-server
//!
//! The generic Kubernetes-style API server (being written).

pub mod discovery;
pub mod openapi;
pub mod table;
