//! RBAC objects, as kube-apiserver's rbac strategies and `pkg/apis/rbac/validation`
//! treat them: no `metadata.generation`; rules need verbs, and resource rules need API
//! groups and resources, while non-resource URLs are only for ClusterRoles; bindings get
//! kube's v1 defaults (`roleRef.apiGroup` and the `apiGroup` of User and Group subjects
//! default to `rbac.authorization.k8s.io`), their `roleRef` is checked and may not
//! change, and their subjects follow kube's per-kind rules.
//!
//! Deliberate differences from kube-apiserver:
//! - Values kube prints with Go's `%#v` (a `[]string` of URLs, the `rbac.RoleRef`
//!   struct in `cannot change roleRef`) are printed as JSON.
//! - Escalation is checked by the admission plugin in `admission/escalation.rs`, not
//!   here, and ClusterRole aggregation by the live policy (`authorization/policy.rs`).

/// What the four RBAC kinds' strategies share, as methods of their `Hooks`: no
/// `metadata.generation`, names that are any path segment (`system:discovery`), and
/// updates without a `resourceVersion` allowed.
macro_rules! rbac_object {
    () => {
        fn tracks_generation(&self) -> bool {
            false
        }

        fn name_rule(&self) -> kapi_core::meta::NameRule {
            kapi_core::meta::NameRule::PathSegment
        }

        fn allow_unconditional_update(&self) -> bool {
            true
        }
    };
}

mod cluster_role;
mod cluster_role_binding;
mod role;
mod role_binding;

use kapi_core::meta::dns1123_subdomain_errors;
use kapi_core::{ErrorList, FieldError, FieldPath};
use serde_json::Value;

use crate::generated::api::rbac::v1::{PolicyRule, RoleRef, Subject};

pub use cluster_role::ClusterRoleHooks;
pub use cluster_role_binding::ClusterRoleBindingHooks;
pub use role::RoleHooks;
pub use role_binding::RoleBindingHooks;

/// The RBAC API group.
const GROUP: &str = "rbac.authorization.k8s.io";

/// `ValidatePolicyRule`.
fn validate_rule(rule: &PolicyRule, namespaced: bool, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if rule.verbs.is_empty() {
        errs.push(FieldError::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = rule.non_resource_ur_ls.as_deref().unwrap_or(&[]);
    let len = |v: &Option<Vec<String>>| v.as_ref().map_or(0, Vec::len);
    if !urls.is_empty() {
        let value = Value::from(urls.to_vec());
        if namespaced {
            errs.push(FieldError::invalid(
                &path.child("nonResourceURLs"),
                value.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if len(&rule.api_groups) > 0 || len(&rule.resources) > 0 || len(&rule.resource_names) > 0 {
            errs.push(FieldError::invalid(
                &path.child("nonResourceURLs"),
                value,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if len(&rule.api_groups) == 0 {
        errs.push(FieldError::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if len(&rule.resources) == 0 {
        errs.push(FieldError::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

fn validate_rules(rules: Option<&Vec<PolicyRule>>, namespaced: bool) -> ErrorList {
    rules
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, r)| validate_rule(r, namespaced, &FieldPath::new("rules").index(i)))
        .collect()
}

/// `ValidateRBACName` (`path.IsValidPathSegmentName`).
fn path_segment_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name == "." || name == ".." {
        errs.push(format!("may not be '{name}'"));
        return errs;
    }
    for c in ["/", "%"] {
        if name.contains(c) {
            errs.push(format!("may not contain '{c}'"));
        }
    }
    errs
}

/// v1 defaults of a binding: `SetDefaults_RoleBinding`/`ClusterRoleBinding`/`Subject`.
fn default_binding(role_ref: &mut RoleRef, subjects: Option<&mut Vec<Subject>>) {
    if role_ref.api_group.is_empty() {
        role_ref.api_group = GROUP.into();
    }
    for s in subjects.into_iter().flatten() {
        if s.api_group.as_deref().unwrap_or("").is_empty()
            && (s.kind == "User" || s.kind == "Group")
        {
            s.api_group = Some(GROUP.into());
        }
    }
}

/// `ValidateRoleBinding`/`ValidateClusterRoleBinding`.
fn validate_binding(
    role_ref: &RoleRef,
    subjects: Option<&Vec<Subject>>,
    namespaced: bool,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let ref_path = FieldPath::new("roleRef");
    if role_ref.api_group != GROUP {
        errs.push(FieldError::not_supported(
            &ref_path.child("apiGroup"),
            role_ref.api_group.as_str(),
            &[Value::from(GROUP)],
        ));
    }
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&role_ref.kind.as_str()) {
        let supported: Vec<Value> = kinds.iter().map(|k| Value::from(*k)).collect();
        errs.push(FieldError::not_supported(
            &ref_path.child("kind"),
            role_ref.kind.as_str(),
            &supported,
        ));
    }
    if role_ref.name.is_empty() {
        errs.push(FieldError::required(&ref_path.child("name"), ""));
    } else {
        for msg in path_segment_errors(&role_ref.name) {
            errs.push(FieldError::invalid(
                &ref_path.child("name"),
                role_ref.name.as_str(),
                msg,
            ));
        }
    }
    for (i, s) in subjects.into_iter().flatten().enumerate() {
        errs.extend(validate_subject(
            s,
            namespaced,
            &FieldPath::new("subjects").index(i),
        ));
    }
    errs
}

/// `ValidateRoleBindingSubject`.
fn validate_subject(s: &Subject, namespaced: bool, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if s.name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    }
    let api_group = s.api_group.as_deref().unwrap_or("");
    match s.kind.as_str() {
        "ServiceAccount" => {
            if !s.name.is_empty() {
                for msg in dns1123_subdomain_errors(&s.name) {
                    errs.push(FieldError::invalid(
                        &path.child("name"),
                        s.name.as_str(),
                        msg,
                    ));
                }
            }
            if !api_group.is_empty() {
                errs.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[Value::from("")],
                ));
            }
            if !namespaced && s.namespace.as_deref().unwrap_or("").is_empty() {
                errs.push(FieldError::required(&path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if api_group != GROUP {
                errs.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[Value::from(GROUP)],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            &path.child("kind"),
            other,
            &[
                Value::from("ServiceAccount"),
                Value::from("User"),
                Value::from("Group"),
            ],
        )),
    }
    errs
}

/// kube's update rule for bindings: `roleRef` is fixed at create.
fn role_ref_unchanged(new: &RoleRef, old: &RoleRef) -> ErrorList {
    if new == old {
        return ErrorList::new();
    }
    vec![FieldError::invalid(
        &FieldPath::new("roleRef"),
        serde_json::to_value(new).unwrap_or(Value::Null),
        "cannot change roleRef",
    )]
}

/// The wide columns of a binding (`rbac.SubjectsStrings`), and its Role column.
fn binding_cell(
    column: &str,
    role_ref: &RoleRef,
    subjects: Option<&Vec<Subject>>,
) -> Option<Value> {
    let of_kind = |kind: &str| -> String {
        subjects
            .into_iter()
            .flatten()
            .filter(|s| s.kind == kind)
            .map(|s| match kind {
                "ServiceAccount" => {
                    format!("{}/{}", s.namespace.as_deref().unwrap_or(""), s.name)
                }
                _ => s.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cell = match column {
        "Role" => format!("{}/{}", role_ref.kind, role_ref.name),
        "Users" => of_kind("User"),
        "Groups" => of_kind("Group"),
        "ServiceAccounts" => of_kind("ServiceAccount"),
        _ => return None,
    };
    Some(Value::String(cell))
}
