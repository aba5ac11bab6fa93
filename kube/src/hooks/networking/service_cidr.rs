//! ServiceCIDRs. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::networking_k8s_io::v1::ServiceCIDR;

/// The hooks of ServiceCIDR.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceCidrHooks;

impl Hooks<ServiceCIDR> for ServiceCidrHooks {}
