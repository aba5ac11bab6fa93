//! ServiceAccounts.

use kapi_core::Hooks;

use crate::generated::core::v1::ServiceAccount;

/// The hooks of ServiceAccount.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceAccountHooks;

impl Hooks<ServiceAccount> for ServiceAccountHooks {}
