//! ClusterRoleBindings, as kube-apiserver's cluster role binding strategy and
//! `ValidateClusterRoleBinding` treat them: as RoleBindings, with a ClusterRole as the
//! only `roleRef` kind and ServiceAccount subjects needing a namespace.

use kapi_core::{ErrorList, Hooks};
use serde_json::Value;

use crate::generated::rbac_authorization_k8s_io::v1::ClusterRoleBinding;

use super::{binding_cell, default_binding, role_ref_unchanged, validate_binding};

/// The hooks of ClusterRoleBinding.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterRoleBindingHooks;

impl Hooks<ClusterRoleBinding> for ClusterRoleBindingHooks {
    rbac_object!();

    fn apply_defaults(&self, obj: &mut ClusterRoleBinding) {
        default_binding(&mut obj.role_ref, obj.subjects.as_mut());
    }
    fn validate(&self, obj: &ClusterRoleBinding) -> ErrorList {
        validate_binding(&obj.role_ref, obj.subjects.as_ref(), false)
    }
    fn validate_update(&self, new: &ClusterRoleBinding, old: &ClusterRoleBinding) -> ErrorList {
        let mut errs = validate_binding(&new.role_ref, new.subjects.as_ref(), false);
        errs.extend(role_ref_unchanged(&new.role_ref, &old.role_ref));
        errs
    }
    fn table_cell(&self, column: &str, obj: &ClusterRoleBinding) -> Option<Value> {
        binding_cell(column, &obj.role_ref, obj.subjects.as_ref())
    }
}
