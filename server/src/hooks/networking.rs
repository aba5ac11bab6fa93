//! Ingresses and NetworkPolicies.

use kapi_core::Hooks;

use crate::generated::networking_k8s_io::v1::Ingress;
use crate::generated::networking_k8s_io::v1::NetworkPolicy;

/// The hooks of Ingress.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressHooks;

impl Hooks<Ingress> for IngressHooks {}

/// The hooks of NetworkPolicy.
#[derive(Clone, Copy, Debug, Default)]
pub struct NetworkPolicyHooks;

impl Hooks<NetworkPolicy> for NetworkPolicyHooks {}
