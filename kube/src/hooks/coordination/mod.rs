//! The coordination.k8s.io API group: Leases ([`lease`]).

mod lease;

pub use lease::LeaseHooks;
