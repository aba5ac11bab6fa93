//! ServiceAccounts, as kube-apiserver's service account strategy and printer treat
//! them: no `metadata.generation`; the Secrets column counts `secrets`. kapi runs no
//! token controller, so nothing is added to a new account (as in current kube, which no
//! longer creates token Secrets); bound tokens come from the `token` subresource
//! (`crate::reviews`).

use kapi_core::Hooks;
use serde_json::Value;

use crate::generated::core::v1::ServiceAccount;

/// The hooks of ServiceAccount.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceAccountHooks;

impl Hooks<ServiceAccount> for ServiceAccountHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn table_cell(&self, column: &str, sa: &ServiceAccount) -> Option<Value> {
        (column == "Secrets").then(|| Value::from(sa.secrets.as_ref().map_or(0, Vec::len)))
    }
}
