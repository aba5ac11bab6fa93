//! The `authorizer` variable of admission policies' and webhooks' expressions: kube's
//! CEL authorizer library answered by the server's authorizer, as the request's user
//! or, after `serviceAccount(ns, name)`, as that ServiceAccount.

use std::sync::Arc;

use kapi_apiserver::authorization::Authorizer;
use kapi_auth::UserInfo;
use kapi_auth::authz::{Attributes, Decision};
use kapi_core::schema::cel_authz::{Authorize, AuthzDecision, AuthzQuery};
use serde_json::{Value, json};

use kapi_apiserver::registry::AdmissionRequest;

/// Checks as one user with the server's authorizer.
pub struct AsUser {
    /// The server's authorizer.
    pub authorizer: Authorizer,
    /// Who asks: the request's user.
    pub user: UserInfo,
}

impl AsUser {
    /// The library's checks for a request by `user`.
    pub fn checks(authorizer: &Authorizer, user: &UserInfo) -> Arc<dyn Authorize> {
        Arc::new(Self {
            authorizer: authorizer.clone(),
            user: user.clone(),
        })
    }
}

/// kube's ServiceAccount user: `system:serviceaccount:<ns>:<name>` in its groups.
fn service_account(namespace: &str, name: &str) -> UserInfo {
    UserInfo {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".into(),
        ],
        ..UserInfo::default()
    }
}

impl Authorize for AsUser {
    fn check(&self, query: &AuthzQuery) -> AuthzDecision {
        let user = match &query.service_account {
            Some((namespace, name)) => service_account(namespace, name),
            None => self.user.clone(),
        };
        let attrs = Attributes {
            user,
            verb: query.verb.clone(),
            resource_request: query.path.is_none(),
            api_group: query.group.clone(),
            api_version: "*".into(),
            resource: query.resource.clone(),
            subresource: query.subresource.clone(),
            name: query.name.clone(),
            namespace: query.namespace.clone(),
            path: query.path.clone().unwrap_or_default(),
        };
        let verdict = self.authorizer.decide_blocking(&attrs);
        match verdict.decision {
            Decision::Allow(reason) => AuthzDecision {
                allowed: true,
                reason,
                error: verdict.error,
            },
            Decision::Deny(reason) | Decision::NoOpinion(reason) => AuthzDecision {
                allowed: false,
                reason,
                error: verdict.error,
            },
        }
    }
}

/// The `authorizer` variable for `req`: `requestResource` checks the request's own
/// resource, subresource, namespace and name.
pub fn variable(req: &AdmissionRequest<'_>) -> Value {
    kapi_core::schema::cel_authz::authorizer_value(&json!({
        "group": req.info.group.to_string(),
        "resource": req.info.plural.to_string(),
        "subresource": req.subresource,
        "namespace": req.namespace.unwrap_or_default(),
        "name": req.name,
    }))
}
