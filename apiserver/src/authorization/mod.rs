//! May this user do what this request asks? The attributes of a request
//! ([`request::attributes`]), and the authorizers kube-apiserver chains: members of
//! `system:masters` may do anything, then RBAC decides over the policy it is given
//! ([`LivePolicy`]; reading it from the RBAC kinds is `kapi-kube`'s).

pub mod impersonation;
pub mod request;

use http::StatusCode;
use kapi_auth::authz::{Attributes, Decision};
use serde_json::json;

use crate::registry::informer::Live;
use crate::status::ApiError;

/// The RBAC policy the authorizer reads: the latest complete snapshot of what is
/// stored, kept by whoever serves the RBAC kinds (`kapi-kube`'s `rbac`).
pub type LivePolicy = Live<kapi_auth::authz::PolicySnapshot>;

/// The server's authorizer.
#[derive(Clone, Default)]
pub struct Authorizer {
    /// The RBAC policy (none: only `system:masters` may do anything).
    pub policy: Option<std::sync::Arc<LivePolicy>>,
}

impl Authorizer {
    /// Decides one request.
    pub fn authorize(&self, attrs: &Attributes) -> Decision {
        // kube-apiserver's privileged-group authorizer comes before RBAC.
        if attrs.user.in_group(kapi_auth::user::MASTERS) {
            return Decision::Allow(String::new());
        }
        match &self.policy {
            Some(policy) => kapi_auth::authz::authorize(&policy.snapshot(), attrs),
            None => Decision::NoOpinion(String::new()),
        }
    }
}

/// kube-apiserver's 403 for a request that is not allowed, in its wording:
/// `configmaps "x" is forbidden: User "bob" cannot get resource "configmaps" in API
/// group "" in the namespace "default"`.
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let user = &attrs.user.name;
    let mut why = if attrs.resource_request {
        let mut resource = attrs.resource.clone();
        if !attrs.subresource.is_empty() {
            resource = format!("{resource}/{}", attrs.subresource);
        }
        let scope = if attrs.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace {:?}", attrs.namespace)
        };
        format!(
            "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
            attrs.verb, attrs.api_group
        )
    } else {
        format!("User {user:?} cannot {} path {:?}", attrs.verb, attrs.path)
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let why = why.replace('\n', " ");
    let subject = if !attrs.resource_request {
        String::new()
    } else {
        let qualified = if attrs.api_group.is_empty() {
            attrs.resource.clone()
        } else {
            format!("{}.{}", attrs.resource, attrs.api_group)
        };
        if attrs.name.is_empty() {
            format!("{qualified} is ")
        } else {
            format!("{qualified} {:?} is ", attrs.name)
        }
    };
    let mut details = json!({});
    if attrs.resource_request {
        if !attrs.name.is_empty() {
            details["name"] = json!(attrs.name);
        }
        if !attrs.api_group.is_empty() {
            details["group"] = json!(attrs.api_group);
        }
        details["kind"] = json!(attrs.resource);
    }
    ApiError {
        code: StatusCode::FORBIDDEN,
        reason: "Forbidden",
        message: format!("{subject}forbidden: {why}"),
        details: Some(details),
        continue_token: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_auth::UserInfo;

    fn attrs(verb: &str, resource: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            user: UserInfo::new("bob", &["system:authenticated"]),
            verb: verb.into(),
            resource_request: true,
            api_group: String::new(),
            api_version: "v1".into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn messages_are_kube_apiserver_s() {
        assert_eq!(
            forbidden(&attrs("list", "configmaps", "default", ""), "").message,
            r#"configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default""#
        );
        assert_eq!(
            forbidden(&attrs("get", "namespaces", "", "kube-system"), "").message,
            r#"namespaces "kube-system" is forbidden: User "bob" cannot get resource "namespaces" in API group "" at the cluster scope"#
        );
        let mut status = attrs("update", "widgets", "ns", "w");
        status.api_group = "example.kapi.dev".into();
        status.subresource = "status".into();
        assert_eq!(
            forbidden(&status, "").message,
            r#"widgets.example.kapi.dev "w" is forbidden: User "bob" cannot update resource "widgets/status" in API group "example.kapi.dev" in the namespace "ns""#
        );
        let path = Attributes {
            user: UserInfo::new("bob", &[]),
            verb: "get".into(),
            path: "/metrics".into(),
            ..Attributes::default()
        };
        let e = forbidden(&path, "no rule");
        assert_eq!(
            e.message,
            r#"forbidden: User "bob" cannot get path "/metrics": no rule"#
        );
        assert_eq!(e.code, StatusCode::FORBIDDEN);
    }
}
