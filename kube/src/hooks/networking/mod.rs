//! The networking.k8s.io API group: Ingresses ([`ingress`]), IngressClasses
//! ([`ingress_class`]) and NetworkPolicies ([`network_policy`]).

mod ingress;
mod ingress_class;
mod network_policy;

pub use ingress::IngressHooks;
pub use ingress_class::IngressClassHooks;
pub use network_policy::NetworkPolicyHooks;
