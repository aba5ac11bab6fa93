//! The networking.k8s.io API group: Ingresses ([`ingress`]), IngressClasses
//! ([`ingress_class`]), IPAddresses ([`ip_address`]), NetworkPolicies
//! ([`network_policy`]) and ServiceCIDRs ([`service_cidr`]).

mod ingress;
mod ingress_class;
mod ip_address;
mod network_policy;
mod service_cidr;

pub use ingress::IngressHooks;
pub use ingress_class::IngressClassHooks;
pub use ip_address::IpAddressHooks;
pub use network_policy::NetworkPolicyHooks;
pub use service_cidr::ServiceCidrHooks;
