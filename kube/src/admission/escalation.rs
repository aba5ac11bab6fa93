//! RBAC's privilege-escalation prevention (kube-apiserver does it in the RBAC storage,
//! with the same effect): a Role, ClusterRole or binding may grant only what its writer
//! holds, unless the writer may `escalate` (roles) or `bind` (bindings).

use http::StatusCode;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_auth::UserInfo;
use kapi_auth::authz::escalation::{self, EscalationError};
use serde_json::Value;

use kapi_apiserver::authorization::Authorizer;
use kapi_apiserver::status::ApiError;

/// The RBAC API group, whose writes this checks.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// Refuses the write of an RBAC object by `user` that would escalate.
pub fn check(
    authorizer: &Authorizer,
    user: &UserInfo,
    plural: &str,
    namespace: &str,
    new: &Value,
    old: Option<&Value>,
) -> Result<(), ApiError> {
    let Some(policy) = &authorizer.policy else {
        return Ok(());
    };
    let snapshot = policy.snapshot();
    let allowed = |attrs: &kapi_auth::authz::Attributes| authorizer.authorize(attrs).allowed();
    let result = match plural {
        "roles" => {
            let (new, old) = typed::<Role>(new, old)?;
            escalation::check_role_write(&snapshot, user, namespace, &new, old.as_ref(), allowed)
        }
        "clusterroles" => {
            let (new, old) = typed::<ClusterRole>(new, old)?;
            escalation::check_cluster_role_write(&snapshot, user, &new, old.as_ref(), allowed)
        }
        "rolebindings" => {
            let (new, old) = typed::<RoleBinding>(new, old)?;
            escalation::check_role_binding_write(
                &snapshot,
                user,
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
                user,
                &new,
                old.as_ref(),
                allowed,
            )
        }
        _ => Ok(()),
    };
    result.map_err(|e| escalation_error(&e))
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
        continue_token: None,
    }
}
