//! ServiceAccounts, as kube-apiserver's service account strategy and printer treat
//! them: no `metadata.generation`; the Secrets column counts `secrets`. kapi issues no
//! tokens and runs no token controller, so nothing is added to a new account (as in
//! current kube, which no longer creates token Secrets).

use kapi_core::Hooks;
use serde_json::Value;

use crate::generated::core::v1::ServiceAccount;
use crate::hooks::untracked_generation;

/// The hooks of ServiceAccount.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceAccountHooks;

impl Hooks<ServiceAccount> for ServiceAccountHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, sa: &mut ServiceAccount) {
        untracked_generation(&mut sa.metadata);
    }

    fn prepare_for_update(&self, new: &mut ServiceAccount, _old: &ServiceAccount) {
        untracked_generation(&mut new.metadata);
    }

    fn table_cell(&self, column: &str, sa: &ServiceAccount) -> Option<Value> {
        (column == "Secrets").then(|| Value::from(sa.secrets.as_ref().map_or(0, Vec::len)))
    }
}
