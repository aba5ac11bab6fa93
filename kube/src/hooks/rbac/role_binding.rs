//! RoleBindings, as kube-apiserver's role binding strategy and `ValidateRoleBinding`
//! treat them: no `metadata.generation`; kube's v1 defaults; `roleRef` checked and fixed
//! at create; subjects following kube's per-kind rules.

use kapi_core::{ErrorList, Hooks};
use serde_json::Value;

use crate::generated::rbac_authorization_k8s_io::v1::RoleBinding;

use super::{binding_cell, default_binding, role_ref_unchanged, validate_binding};

/// The hooks of RoleBinding.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoleBindingHooks;

impl Hooks<RoleBinding> for RoleBindingHooks {
    rbac_object!();

    fn apply_defaults(&self, obj: &mut RoleBinding) {
        default_binding(&mut obj.role_ref, obj.subjects.as_mut());
    }
    fn validate(&self, obj: &RoleBinding) -> ErrorList {
        validate_binding(&obj.role_ref, obj.subjects.as_ref(), true)
    }
    fn validate_update(&self, new: &RoleBinding, old: &RoleBinding) -> ErrorList {
        let mut errs = validate_binding(&new.role_ref, new.subjects.as_ref(), true);
        errs.extend(role_ref_unchanged(&new.role_ref, &old.role_ref));
        errs
    }
    fn table_cell(&self, column: &str, obj: &RoleBinding) -> Option<Value> {
        binding_cell(column, &obj.role_ref, obj.subjects.as_ref())
    }
}
