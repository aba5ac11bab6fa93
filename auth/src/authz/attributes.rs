//! The attributes of a request, as kube-apiserver's `authorizer.Attributes`.

use crate::user::UserInfo;

/// What a request asks to do, and who asks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection` for resources (or `escalate`, `bind`, `impersonate`, ...);
    /// the lowercased HTTP method (`get`, `post`, ...) for non-resource paths.
    pub verb: String,
    /// Whether this addresses a resource (`/api/...`, `/apis/...` with a resource);
    /// otherwise `path` is what is asked for.
    pub resource_request: bool,
    /// The API group (`""` for core).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The resource's plural (`pods`).
    pub resource: String,
    /// The subresource (`status`), or empty.
    pub subresource: String,
    /// The object's name, when the request names one.
    pub name: String,
    /// The namespace, or empty for cluster-scoped requests.
    pub namespace: String,
    /// The request path, for non-resource requests (`/healthz`, `/api`).
    pub path: String,
}
