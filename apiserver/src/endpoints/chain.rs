//! kube-apiserver's filter chain, in its order, before any handler runs:
//! authentication (401), audit, impersonation and authorization (403), in-flight and
//! watch limits (429), the request timeout (504).

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::{BodyExt, Full};
use kapi_auth::UserInfo;
use kapi_auth::audit::AuditContext;
use kapi_auth::authz::{Attributes, Decision};

use super::{Api, Body, connect, create_only, error_response, read_body};
use crate::authentication::Peer;
use crate::authorization::request::attributes;
use crate::registry::Admission;
use crate::request::RequestInfo;
use crate::status::ApiError;

impl Api {
    /// Runs the chain, then the handler, for a request resolved as `info`.
    pub(crate) async fn filtered<B>(
        &self,
        req: Request<B>,
        info: &RequestInfo,
        peer: &Peer,
    ) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let req = req.map(|body| self.limits.bound_body(body));
        let user = match self.authenticate(&req, peer).await {
            Ok(user) => user,
            Err(e) => {
                let warning = crate::authentication::bearer_warning(req.headers());
                let res = super::with_warnings(error_response(&e), warning.as_slice());
                return refuse(self.limits.request_timeout(), req, res).await;
            }
        };
        let (parts, body) = req.into_parts();
        let requested = attributes(user, info);
        let mut audit = match &self.auditor {
            Some(auditor) => auditor.begin(&requested, &parts, peer.address.map(|a| a.ip())),
            None => AuditContext::disabled(),
        };
        let req = Request::from_parts(parts, body);
        let attrs = match self.authorize(&req, requested, &mut audit).await {
            Ok(attrs) => attrs,
            Err(e) => {
                return refuse(
                    self.limits.request_timeout(),
                    req,
                    finish(&mut audit, error_response(&e)).await,
                )
                .await;
            }
        };
        let timeout = self.limits.timeout_for(&info.query);
        let admitted = self.limits.admit(&attrs, req.method(), timeout).await;
        let flow = admitted.flow;
        let admission = match admitted.admission {
            Ok(a) => a,
            Err(e) => {
                let res = crate::limits::with_retry_after(error_response(&e));
                let res = crate::limits::with_flow_headers(res, flow);
                return refuse(
                    self.limits.request_timeout(),
                    req,
                    finish(&mut audit, res).await,
                )
                .await;
            }
        };
        // A small body is read here, whole, before the handler: a handler that refuses
        // the request without reading its body (an unsupported media type, an unknown
        // resource) would otherwise leave unread bytes behind, and closing a connection
        // with unread bytes resets it, losing the answer (Go's server drains up to
        // 256 KiB after the handler for the same reason). The audit record needs the
        // body too.
        let small = {
            use hyper::body::Body as _;
            let body = req.body();
            !body.is_end_stream()
                && body
                    .size_hint()
                    .upper()
                    .is_some_and(|n| n as usize <= DRAIN_LIMIT)
        };
        // Admission for this request and user, kept to read what it says besides
        // refusing once the handler is done.
        let checks = self.admission.clone().for_user(attrs.user.clone());
        let res = if audit.wants_request_object() || small {
            let (parts, body) = req.into_parts();
            // Within the request timeout, as the handler's own read would be.
            match tokio::time::timeout(timeout, read_body(body))
                .await
                .unwrap_or_else(|_| Err(crate::limits::timeout_error()))
            {
                Ok(bytes) => {
                    if audit.wants_request_object() {
                        audit.set_request_body(&bytes);
                    }
                    let req = Request::from_parts(parts, Full::new(bytes));
                    self.timed(req, info, &attrs, timeout, &checks).await
                }
                Err(e) => error_response(&e),
            }
        } else {
            self.timed(req, info, &attrs, timeout, &checks).await
        };
        let res = super::with_warnings(res, &checks.warnings());
        let res = crate::limits::with_flow_headers(res, flow);
        for (key, value) in checks.audit_annotations() {
            audit.add_annotation(&key, &value);
        }
        if info.is_watch() {
            audit.response_started(res.status().as_u16());
            // The record completes when the watch's stream ends.
            crate::limits::hold(res, (admission, audit))
        } else {
            crate::limits::hold(finish(&mut audit, res).await, admission)
        }
    }

    /// The handler, within the request's `timeout` (watches have none).
    async fn timed<B>(
        &self,
        mut req: Request<B>,
        info: &RequestInfo,
        attrs: &Attributes,
        timeout: std::time::Duration,
        admission: &Arc<dyn Admission>,
    ) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        req.extensions_mut()
            .insert(super::RequestAdmission(admission.clone()));
        let serve = async {
            if let Some(front) = self.front.as_ref().filter(|f| f.claims(info)) {
                let req = req.map(|b| b.map_err(Into::into).boxed_unsync());
                let local = self.documents.get(&self.registry);
                return front.serve(req, info, &attrs.user, local).await;
            }
            let req = match connect::handle(self, req, info, &attrs.user).await {
                Ok(res) => return res,
                Err(req) => req,
            };
            match create_only::handle(self, req, info, &attrs.user).await {
                Ok(res) => res,
                Err(req) => self.route(req, info).await,
            }
        };
        if info.is_watch() {
            return serve.await;
        }
        tokio::time::timeout(timeout, serve)
            .await
            .unwrap_or_else(|_| crate::limits::timeout_response())
    }

    /// Who the request comes from, or a 401. On `--insecure-http`, a request without
    /// credentials is `system:unsecured` in `system:masters`.
    async fn authenticate<B>(&self, req: &Request<B>, peer: &Peer) -> Result<UserInfo, ApiError> {
        if self.insecure
            && peer.certificates.is_empty()
            && !req.headers().contains_key(header::AUTHORIZATION)
        {
            return Ok(
                UserInfo::new("system:unsecured", &[kapi_auth::user::MASTERS]).authenticated(),
            );
        }
        self.authenticator
            .authenticate(&self.registry, peer, req.headers())
            .await
    }

    /// Impersonation, then authorization: what the request asks and for whom, or a 400
    /// or 403 (a 500 when a mode that could not decide left none allowing it).
    async fn authorize<B>(
        &self,
        req: &Request<B>,
        requested: Attributes,
        audit: &mut AuditContext,
    ) -> Result<Attributes, ApiError> {
        let impersonating = crate::authorization::impersonation::asked(req.headers());
        let attrs = if !impersonating {
            requested
        } else {
            // Boxed, so that requests that impersonate no one do not carry its future.
            let user = Box::pin(crate::authorization::impersonation::impersonate(
                &self.authorizer,
                requested.user.clone(),
                req.headers(),
            ))
            .await?;
            if user == requested.user {
                requested
            } else {
                audit.set_impersonated_user(&user);
                Attributes { user, ..requested }
            }
        };
        let verdict = self.authorizer.decide(&attrs).await;
        match verdict.decision {
            Decision::Allow(reason) => {
                audit.set_authorization(true, &reason);
                Ok(attrs)
            }
            // kube-apiserver's authorization filter: a decision that could not be made
            // is a 500, not a 403.
            _ if !verdict.error.is_empty() => {
                audit.set_authorization(false, &verdict.error);
                Err(ApiError::internal_reason(verdict.error))
            }
            Decision::NoOpinion(reason) | Decision::Deny(reason) => {
                audit.set_authorization(false, &reason);
                Err(crate::authorization::forbidden(&attrs, &reason))
            }
        }
    }
}

/// How much of a refused request's body is read before answering, as Go's server
/// does, so that an HTTP/1.1 client can reuse the connection.
const DRAIN_LIMIT: usize = 256 * 1024;

/// Answers a request refused before its handler ran, after reading what is left of a
/// small body (for at most `within`): answering before the body has arrived makes hyper
/// close the connection, and a client that sent the next request on it sees it fail.
async fn refuse<B>(
    within: std::time::Duration,
    req: Request<B>,
    res: Response<Body>,
) -> Response<Body>
where
    B: hyper::body::Body<Data = Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let body = req.into_body();
    let small = body
        .size_hint()
        .upper()
        .is_some_and(|n| n as usize <= DRAIN_LIMIT);
    if !body.is_end_stream() && small {
        // Bounded, as every request is: a client that sends its body slower than it
        // promised gets the answer anyway, on a connection then closed.
        let drain = http_body_util::Limited::new(body, DRAIN_LIMIT).collect();
        let _ = tokio::time::timeout(within, drain).await;
    }
    res
}

/// Completes the audit record of a response (its body when the level asks for it, or
/// when it is an error `Status`).
async fn finish(audit: &mut AuditContext, res: Response<Body>) -> Response<Body> {
    if !audit.is_enabled() {
        return res;
    }
    let code = res.status().as_u16();
    if !audit.wants_response_object() && code < 400 {
        audit.response_complete(code, None);
        return res;
    }
    let (parts, body) = res.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(never) => match never {},
    };
    audit.response_complete(code, Some(&bytes));
    Response::from_parts(parts, Full::new(bytes).boxed())
}
