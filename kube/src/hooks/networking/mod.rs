//! The networking.k8s.io API group: Ingresses ([`ingress`]) and NetworkPolicies
//! ([`network_policy`]).

mod ingress;
mod network_policy;

pub use ingress::IngressHooks;
pub use network_policy::NetworkPolicyHooks;
