//! Roles, as kube-apiserver's role strategy and `ValidateRole` treat them: no
//! `metadata.generation`; rules need verbs, resource rules need API groups and
//! resources, and non-resource URLs are refused (they are for ClusterRoles only).

use kapi_core::{ErrorList, Hooks};

use crate::generated::rbac_authorization_k8s_io::v1::Role;

use super::validate_rules;

/// The hooks of Role.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoleHooks;

impl Hooks<Role> for RoleHooks {
    rbac_object!();

    fn validate(&self, obj: &Role) -> ErrorList {
        validate_rules(obj.rules.as_ref(), true)
    }
    fn validate_update(&self, new: &Role, _old: &Role) -> ErrorList {
        validate_rules(new.rules.as_ref(), true)
    }
}
