//! The seam for a server in front of this one, as kube-aggregator is in front of
//! kube-apiserver's own servers: once the filter chain has authenticated and
//! authorized a request, the front may answer it itself (a group-version another server
//! serves, or the documents it merges) or leave it to this server's handlers, which then
//! serve it as if the front were not there.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::UnsyncBoxBody;
use kapi_auth::UserInfo;

use crate::documents::Documents;
use crate::request::RequestInfo;
use crate::response::Body;

/// A request body as the front receives it, to stream on elsewhere.
pub type FrontBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

/// A server in front of this one.
#[async_trait::async_trait]
pub trait Front: Send + Sync {
    /// Whether the front answers what `info` addresses. Every request asks, so this
    /// must be cheap.
    fn claims(&self, info: &RequestInfo) -> bool;

    /// Answers a request it claims, from `user` (authenticated, impersonation applied,
    /// authorized). `local` are this server's own documents, to merge into.
    async fn serve(
        &self,
        req: Request<FrontBody>,
        info: &RequestInfo,
        user: &UserInfo,
        local: Arc<Documents>,
    ) -> Response<Body>;
}
