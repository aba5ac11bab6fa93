//! Auditing, as kube-apiserver's audit log. This module: the audit policy ([`Policy`], an
//! `audit.k8s.io/v1` `Policy` file), which decides which requests are recorded and how
//! much of them.

mod policy;
mod policy_file;

pub use policy::{GroupResources, Level, Policy, PolicyRule, RequestAuditConfig, Stage, StageSet};
pub use policy_file::{API_VERSION, PolicyError};
