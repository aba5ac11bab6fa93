//! Subresources that answer a request with a stream from somewhere else rather than an
//! object: kube-apiserver's `rest.Connecter`s (`pods/log`, `pods/exec`, `pods/attach`,
//! `pods/portforward`). This module knows none of them: whoever builds the server
//! registers them as [`Connecter`]s, and this matches their paths and methods and writes
//! what they answer.

use async_trait::async_trait;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use kapi_auth::UserInfo;

use super::{Api, Body, error_response};
use crate::request::query::Query;
use crate::request::{RequestInfo, ResourcePath};
use crate::response::document;
use crate::status::ApiError;

/// Where a [`Connecter`] answers: a subresource of a named object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectPath {
    /// The API group (`""` for core).
    pub group: &'static str,
    /// The versions it is served at.
    pub versions: &'static [&'static str],
    /// The resource's plural.
    pub plural: &'static str,
    /// The subresource (`log`).
    pub subresource: &'static str,
    /// The methods it answers (kube's `ConnectMethods`).
    pub methods: &'static [Method],
}

impl ConnectPath {
    fn addresses(&self, r: &ResourcePath) -> bool {
        r.group == self.group
            && r.plural == self.plural
            && r.subresource.as_deref() == Some(self.subresource)
            && r.name.is_some()
            && self.versions.contains(&r.version.as_str())
    }
}

/// What a [`Connecter`] answers: a body and its content type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connected {
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Bytes,
}

/// A subresource answered by connecting elsewhere.
#[async_trait]
pub trait Connecter: Send + Sync {
    /// Where it answers.
    fn path(&self) -> ConnectPath;

    /// The answer to a request for `r` with its `query`, from `user`.
    async fn connect(
        &self,
        api: &Api,
        r: &ResourcePath,
        query: &Query,
        user: &UserInfo,
    ) -> Result<Connected, ApiError>;
}

/// Serves the request if it is for a registered [`Connecter`]; gives it back otherwise.
pub async fn handle<B>(
    api: &Api,
    req: Request<B>,
    info: &RequestInfo,
    user: &UserInfo,
) -> Result<Response<Body>, Request<B>> {
    let Some(r) = info.resource() else {
        return Err(req);
    };
    let Some(connecter) = api.connecters.iter().find(|c| c.path().addresses(r)) else {
        return Err(req);
    };
    if !connecter.path().methods.contains(req.method()) {
        return Ok(error_response(&ApiError::method_not_allowed()));
    }
    let query = Query::parse(req.uri().query());
    Ok(match connecter.connect(api, r, &query, user).await {
        Ok(c) => document(StatusCode::OK, c.content_type, c.body),
        Err(e) => error_response(&e),
    })
}
