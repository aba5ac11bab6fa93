//! Resources that answer a POST instead of storing it: kube-apiserver's storage-less
//! `rest.Creater`s (the access and token reviews, a service account's `token`). This
//! module knows none of them: whoever builds the server registers them as
//! [`CreateOnly`]s, and this serves their method rules and both wire formats.

use async_trait::async_trait;
use http::{Method, Request, Response, StatusCode, header};
use kapi_auth::UserInfo;
use serde_json::Value;

use super::{Api, Body, error_response, json_response, read_body};
use crate::negotiation::{Output, SERVED_WITH_PROTOBUF as SERVED, decode_body};
use crate::request::{RequestInfo, ResourcePath};
use crate::status::ApiError;

/// Where a [`CreateOnly`] resource is posted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreateOnlyPath {
    /// The API group (`""` for core).
    pub group: &'static str,
    /// The versions it is served at.
    pub versions: &'static [&'static str],
    /// The resource's plural.
    pub plural: &'static str,
    /// The subresource of a named object it is posted to (`token`), or `None` for a
    /// collection.
    pub subresource: Option<&'static str>,
}

impl CreateOnlyPath {
    /// Whether a request for `r` is for this resource. A subresource is only addressed
    /// with its object's name.
    fn addresses(&self, r: &ResourcePath) -> bool {
        r.group == self.group
            && r.plural == self.plural
            && r.subresource.as_deref() == self.subresource
            && self.versions.contains(&r.version.as_str())
            && (self.subresource.is_none() || r.name.is_some())
    }
}

/// A resource that is created and answered, never stored.
#[async_trait]
pub trait CreateOnly: Send + Sync {
    /// Where it is posted.
    fn path(&self) -> CreateOnlyPath;

    /// The group, version and kind of the body posted to `r` (its protobuf message).
    fn body_kind<'a>(&self, r: &'a ResourcePath) -> (&'a str, &'a str, &'static str);

    /// The answer to `body`, posted to `r` by `user`.
    async fn create(
        &self,
        api: &Api,
        r: &ResourcePath,
        body: Value,
        user: &UserInfo,
    ) -> Result<Value, ApiError>;
}

/// Serves the request if it is for a registered [`CreateOnly`]; gives it back
/// otherwise.
pub async fn handle<B>(
    api: &Api,
    req: Request<B>,
    info: &RequestInfo,
    user: &UserInfo,
) -> Result<Response<Body>, Request<B>>
where
    B: hyper::body::Body<Data = bytes::Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(r) = info.resource() else {
        return Err(req);
    };
    let Some(rest) = api.create_only.iter().find(|c| c.path().addresses(r)) else {
        return Err(req);
    };
    if req.method() != Method::POST || (r.name.is_some() && rest.path().subresource.is_none()) {
        return Ok(error_response(&ApiError::method_not_allowed()));
    }
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    // Typed clients (`kubectl auth can-i`, `create token`) send and accept protobuf.
    let wire = crate::negotiation::Wire::catalog(api.protobuf);
    let output = super::output_of(&req, Some(wire)).unwrap_or(Output::Json);
    let answer = async {
        let bytes = read_body(req.into_body()).await?;
        let body = if crate::negotiation::is_protobuf(&content_type) {
            let (group, version, kind) = rest.body_kind(r);
            let message = api
                .protobuf
                .kind(group, version, kind)
                .or_else(|| api.protobuf.kind(group, "v1", kind))
                .ok_or_else(|| ApiError::unsupported_media_type(&content_type, SERVED))?;
            super::protobuf::decode_body(api.protobuf, &bytes, message, kind)?.value
        } else {
            decode_body(&content_type, &bytes)?.value
        };
        rest.create(api, r, body, user).await
    };
    Ok(match answer.await {
        Ok(v) => match output {
            Output::Protobuf(wire) => match super::protobuf::encode_known(wire.catalog, &v) {
                Ok(bytes) => {
                    super::document(StatusCode::CREATED, super::protobuf::MEDIA_TYPE, bytes)
                }
                Err(e) => error_response(&e),
            },
            _ => json_response(StatusCode::CREATED, &v),
        },
        Err(e) => error_response(&e),
    })
}
