//! Leases.

use kapi_core::Hooks;

use crate::generated::coordination_k8s_io::v1::Lease;

/// The hooks of Lease.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeaseHooks;

impl Hooks<Lease> for LeaseHooks {}
