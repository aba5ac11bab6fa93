//! RBAC objects, as kube-apiserver's rbac strategies validate them.

use kapi_core::Hooks;

use crate::generated::rbac_authorization_k8s_io::v1::ClusterRole;
use crate::generated::rbac_authorization_k8s_io::v1::ClusterRoleBinding;
use crate::generated::rbac_authorization_k8s_io::v1::Role;
use crate::generated::rbac_authorization_k8s_io::v1::RoleBinding;

/// The hooks of Role.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoleHooks;

impl Hooks<Role> for RoleHooks {}

/// The hooks of ClusterRole.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterRoleHooks;

impl Hooks<ClusterRole> for ClusterRoleHooks {}

/// The hooks of RoleBinding.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoleBindingHooks;

impl Hooks<RoleBinding> for RoleBindingHooks {}

/// The hooks of ClusterRoleBinding.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterRoleBindingHooks;

impl Hooks<ClusterRoleBinding> for ClusterRoleBindingHooks {}
