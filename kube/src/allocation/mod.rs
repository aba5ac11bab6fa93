//! Allocations that must be unique across every replica of the server: Service cluster
//! IPs and node ports. Each allocated value is a key of its own in the storage, created
//! only if absent, so that two replicas over one etcd can never hand out the same value
//! (kube-apiserver's newer allocator keeps one `IPAddress` object per IP for the same
//! reason).

pub mod service;

pub use service::{ServiceAllocator, ServiceRanges};
