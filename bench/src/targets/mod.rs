//! What the harness drives: kapi over HTTP ([`kapi_http`], and its [`watch`] fan-out;
//! [`wire`], JSON beside protobuf)
//! and the limits it is compared with — a bare hyper server ([`baseline`]), the
//! embedded store's own API without HTTP ([`embedded`]) and, with the `etcd` feature,
//! raw etcd (`etcd`, and its watch fan-out, `etcd_watch`). Each target builds one
//! [`Worker`](crate::driver::Worker) per client for an operation, after any setup the
//! operation needs.

pub mod baseline;
pub mod embedded;
#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(feature = "etcd")]
pub mod etcd_watch;
pub mod kapi_http;
pub mod watch;
pub mod wire;

/// The size of the bodies and values the targets exchange, in bytes (about 1 KiB).
pub const OBJECT_SIZE: usize = 1024;
