//! Leases, as kube-apiserver's lease strategy and printer treat them: no
//! `metadata.generation`; the Holder column is `spec.holderIdentity`, empty when no one
//! holds the lease. The spec (durations, strategy) is not validated beyond the schema,
//! a deliberate difference from kube's `ValidateLeaseSpec`.

use kapi_core::Hooks;
use serde_json::Value;

use crate::generated::coordination_k8s_io::v1::Lease;

/// The hooks of Lease.
#[derive(Clone, Copy, Debug, Default)]
pub struct LeaseHooks;

impl Hooks<Lease> for LeaseHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn table_cell(&self, column: &str, lease: &Lease) -> Option<Value> {
        (column == "Holder").then(|| {
            Value::String(
                lease
                    .spec
                    .as_ref()
                    .and_then(|s| s.holder_identity.clone())
                    .unwrap_or_default(),
            )
        })
    }
}
