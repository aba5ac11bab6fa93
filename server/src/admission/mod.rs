//! Admission: what every write passes after the resource's strategy validated it and
//! before it is stored, knowing who asks. Today: RBAC's privilege-escalation
//! prevention (kube-apiserver does it in the RBAC storage, with the same effect).

pub mod webhook;

use std::sync::Arc;

use http::StatusCode;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_auth::UserInfo;
use kapi_auth::authz::escalation::{self, EscalationError};
use kapi_core::ResourceInfo;
use serde_json::Value;

use crate::authorization::Authorizer;
use crate::registry::Admission;
use crate::status::ApiError;

/// The admission checks of one request, carried to the registry in the request's
/// extensions.
#[derive(Clone)]
pub struct RequestAdmission(pub Arc<dyn Admission>);

impl RequestAdmission {
    /// The checks for a request by `user`.
    pub fn new(user: UserInfo, authorizer: Authorizer) -> Self {
        Self(Arc::new(Chain { user, authorizer }))
    }
}

struct Chain {
    user: UserInfo,
    authorizer: Authorizer,
}

impl Admission for Chain {
    fn validate(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if info.group == "rbac.authorization.k8s.io" {
            self.no_escalation(&info.plural, namespace.unwrap_or_default(), new, old)?;
        }
        Ok(())
    }
}

impl Chain {
    /// Refuses a Role, ClusterRole or binding that grants more than its writer holds,
    /// unless the writer may `escalate` (roles) or `bind` (bindings).
    fn no_escalation(
        &self,
        plural: &str,
        namespace: &str,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(policy) = &self.authorizer.policy else {
            return Ok(());
        };
        let snapshot = policy.snapshot();
        let allowed =
            |attrs: &kapi_auth::authz::Attributes| self.authorizer.authorize(attrs).allowed();
        let result = match plural {
            "roles" => {
                let (new, old) = typed::<Role>(new, old)?;
                escalation::check_role_write(
                    &snapshot,
                    &self.user,
                    namespace,
                    &new,
                    old.as_ref(),
                    allowed,
                )
            }
            "clusterroles" => {
                let (new, old) = typed::<ClusterRole>(new, old)?;
                escalation::check_cluster_role_write(
                    &snapshot,
                    &self.user,
                    &new,
                    old.as_ref(),
                    allowed,
                )
            }
            "rolebindings" => {
                let (new, old) = typed::<RoleBinding>(new, old)?;
                escalation::check_role_binding_write(
                    &snapshot,
                    &self.user,
                    namespace,
                    &new,
                    old.as_ref(),
                    allowed,
                )
            }
            "clusterrolebindings" => {
                let (new, old) = typed::<ClusterRoleBinding>(new, old)?;
                escalation::check_cluster_role_binding_write(
                    &snapshot,
                    &self.user,
                    &new,
                    old.as_ref(),
                    allowed,
                )
            }
            _ => Ok(()),
        };
        result.map_err(|e| escalation_error(&e))
    }
}

fn typed<T: serde::de::DeserializeOwned>(
    new: &Value,
    old: Option<&Value>,
) -> Result<(T, Option<T>), ApiError> {
    let parse = |v: &Value| {
        serde_json::from_value::<T>(v.clone())
            .map_err(|e| ApiError::bad_request(format!("the object cannot be read: {e}")))
    };
    Ok((parse(new)?, old.map(parse).transpose()?))
}

fn escalation_error(e: &EscalationError) -> ApiError {
    let (code, reason) = match e.code() {
        403 => (StatusCode::FORBIDDEN, "Forbidden"),
        404 => (StatusCode::NOT_FOUND, "NotFound"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
    };
    ApiError {
        code,
        reason,
        message: e.to_string(),
        details: None,
    }
}
