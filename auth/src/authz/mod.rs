//! Authorization: what a request asks to do ([`Attributes`]) and whether its user may.
//!
//! - [`rbac`]: the RBAC authorizer over a [`PolicySnapshot`] of Roles, ClusterRoles and
//!   bindings ([`authorize`], [`rules_for`]).
//! - [`escalation`]: the checks on writes of RBAC objects that keep users from granting
//!   what they do not hold.
//! - [`aggregation`]: ClusterRoles gathering the rules of others (`aggregationRule`).
//! - [`bootstrap`]: the default roles and bindings kube-apiserver creates.

pub mod aggregation;
mod attributes;
pub mod bootstrap;
pub mod escalation;
#[cfg(test)]
mod fixtures;
pub mod rbac;

pub use attributes::Attributes;
pub use rbac::{PolicySnapshot, RbacAuthorizer, authorize, rules_for};

/// An authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed; the reason says by what (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`).
    Allow(String),
    /// Not allowed by this authorizer; the reason, if any, is added to the 403 message.
    NoOpinion(String),
    /// Explicitly denied.
    Deny(String),
}

impl Decision {
    /// Whether the request may go on.
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }
}
