//! ResourceQuotas, as kube-apiserver's strategy, validation and printer treat them: no
//! generation; status cleared on create (as kube's strategy does; kapi's generic
//! preparation does it for every status subresource); hard limits may not be negative;
//! the Request and Limit columns list `name: used/hard` from the status, as kube prints
//! them.
//!
//! Deliberate differences from kube-apiserver:
//! - Quota scopes are not validated.
//! - Quantities in the Request and Limit columns are printed as stored, not
//!   canonicalised.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::core::v1::ResourceQuota;

/// The hooks of ResourceQuota.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceQuotaHooks;

impl Hooks<ResourceQuota> for ResourceQuotaHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }
    fn prepare_for_create(&self, rq: &mut ResourceQuota) {
        rq.status = None;
    }
    fn validate(&self, rq: &ResourceQuota) -> ErrorList {
        let mut errs = ErrorList::new();
        for (k, q) in rq.spec.iter().flat_map(|s| s.hard.iter().flatten()) {
            if q.0.trim_start().starts_with('-') {
                errs.push(FieldError::invalid(
                    &FieldPath::new("spec.hard").key(k),
                    q.0.as_str(),
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }
    fn table_cell(&self, column: &str, rq: &ResourceQuota) -> Option<Value> {
        if column != "Request" && column != "Limit" {
            return None;
        }
        let status = rq.status.clone().unwrap_or_default();
        let used = status.used.unwrap_or_default();
        let pieces: Vec<String> = status
            .hard
            .unwrap_or_default()
            .into_iter()
            .filter(|(k, _)| (column == "Limit") == k.starts_with("limits."))
            .map(|(k, hard)| {
                let used = used.get(&k).map_or("0", |q| q.0.as_str());
                format!("{k}: {used}/{}", hard.0)
            })
            .collect();
        Some(Value::String(pieces.join(", ")))
    }
}
