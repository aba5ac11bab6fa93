//! ClusterRoles, as kube-apiserver's cluster role strategy and `ValidateClusterRole`
//! treat them: as Roles, but non-resource URLs are allowed; `aggregationRule` needs at
//! least one selector.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};

use crate::generated::rbac_authorization_k8s_io::v1::ClusterRole;

use super::validate_rules;

/// The hooks of ClusterRole.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterRoleHooks;

fn validate_cluster_role(obj: &ClusterRole) -> ErrorList {
    let mut errs = validate_rules(obj.rules.as_ref(), false);
    if let Some(rule) = &obj.aggregation_rule {
        if rule
            .cluster_role_selectors
            .as_ref()
            .is_none_or(Vec::is_empty)
        {
            errs.push(FieldError::required(
                &FieldPath::new("aggregationRule.clusterRoleSelectors"),
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            ));
        }
    }
    errs
}

impl Hooks<ClusterRole> for ClusterRoleHooks {
    rbac_object!();

    fn validate(&self, obj: &ClusterRole) -> ErrorList {
        validate_cluster_role(obj)
    }
    fn validate_update(&self, new: &ClusterRole, _old: &ClusterRole) -> ErrorList {
        validate_cluster_role(new)
    }
}
