//! Short constructors of RBAC objects and requests for the authorization tests.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::Attributes;
use super::rbac::API_GROUP;
use crate::user::UserInfo;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A resource rule.
pub fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: strings(verbs),
        api_groups: Some(strings(groups)),
        resources: Some(strings(resources)),
        ..PolicyRule::default()
    }
}

/// A resource rule limited to some names.
pub fn named_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    names: &[&str],
) -> PolicyRule {
    PolicyRule {
        resource_names: Some(strings(names)),
        ..rule(verbs, groups, resources)
    }
}

/// A non-resource rule.
pub fn url_rule(verbs: &[&str], urls: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: strings(verbs),
        non_resource_urls: Some(strings(urls)),
        ..PolicyRule::default()
    }
}

fn meta(namespace: Option<&str>, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        ..ObjectMeta::default()
    }
}

/// A Role.
pub fn role(namespace: &str, name: &str, rules: Vec<PolicyRule>) -> Role {
    Role {
        metadata: meta(Some(namespace), name),
        rules: Some(rules),
    }
}

/// A ClusterRole.
pub fn cluster_role(name: &str, rules: Vec<PolicyRule>) -> ClusterRole {
    ClusterRole {
        metadata: meta(None, name),
        rules: Some(rules),
        ..ClusterRole::default()
    }
}

/// A ClusterRole with labels.
pub fn labelled_cluster_role(
    name: &str,
    labels: &[(&str, &str)],
    rules: Vec<PolicyRule>,
) -> ClusterRole {
    let mut role = cluster_role(name, rules);
    role.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    );
    role
}

/// A `User` subject.
pub fn user_subject(name: &str) -> Subject {
    Subject {
        api_group: Some(API_GROUP.into()),
        kind: "User".into(),
        name: name.into(),
        namespace: None,
    }
}

/// A `Group` subject.
pub fn group_subject(name: &str) -> Subject {
    Subject {
        kind: "Group".into(),
        ..user_subject(name)
    }
}

/// A `ServiceAccount` subject, with or without namespace.
pub fn sa_subject(namespace: Option<&str>, name: &str) -> Subject {
    Subject {
        api_group: Some(String::new()),
        kind: "ServiceAccount".into(),
        name: name.into(),
        namespace: namespace.map(str::to_string),
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some(API_GROUP.into()),
        kind: kind.into(),
        name: name.into(),
    }
}

/// A RoleBinding to a Role (`kind` `Role`) or a ClusterRole.
pub fn role_binding(
    namespace: &str,
    name: &str,
    kind: &str,
    role: &str,
    subjects: Vec<Subject>,
) -> RoleBinding {
    RoleBinding {
        metadata: meta(Some(namespace), name),
        role_ref: role_ref(kind, role),
        subjects: Some(subjects),
    }
}

/// A ClusterRoleBinding to a ClusterRole.
pub fn cluster_role_binding(name: &str, role: &str, subjects: Vec<Subject>) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(None, name),
        role_ref: role_ref("ClusterRole", role),
        subjects: Some(subjects),
    }
}

/// An authenticated user.
pub fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo::new(name, groups).authenticated()
}

/// A resource request: `resource` may be `pods/status`.
pub fn request(
    user: &UserInfo,
    verb: &str,
    group: &str,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Attributes {
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    Attributes {
        user: user.clone(),
        verb: verb.into(),
        resource_request: true,
        api_group: group.into(),
        api_version: "v1".into(),
        resource: resource.into(),
        subresource: subresource.into(),
        name: name.into(),
        namespace: namespace.into(),
        path: String::new(),
    }
}

/// A non-resource request.
pub fn path_request(user: &UserInfo, verb: &str, path: &str) -> Attributes {
    Attributes {
        user: user.clone(),
        verb: verb.into(),
        path: path.into(),
        ..Attributes::default()
    }
}
