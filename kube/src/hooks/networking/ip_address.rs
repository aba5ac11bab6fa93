//! IPAddresss. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::networking_k8s_io::v1::IPAddress;

/// The hooks of IPAddress.
#[derive(Clone, Copy, Debug, Default)]
pub struct IpAddressHooks;

impl Hooks<IPAddress> for IpAddressHooks {}
