//! The HTTP surface: routes derived from the registry (never hand-written per
//! resource), content negotiation, and the generic handlers, which decode the request,
//! call the registry, and encode the answer.

mod body_kind;
mod chain;
pub mod negotiation;
pub mod patch;
pub mod protobuf;
pub mod query;
mod resource;
mod reviews;
mod scale;
mod watch;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use tokio::sync::watch as signal;

use crate::authentication::Peer;
use crate::registry::Registry;
use crate::request::{RequestInfo, Route};
use crate::status::ApiError;
use negotiation::Output;

/// A response body: a whole document or a stream of watch events.
pub type Body = BoxBody<Bytes, Infallible>;

/// Largest request body accepted by default (kube-apiserver's limit, 3 MiB); the
/// filter chain bounds every body by `--max-request-body-bytes`.
pub const DEFAULT_MAX_BODY: usize = 3 * 1024 * 1024;

/// Everything a request handler needs.
pub struct Api {
    /// The served resources.
    pub registry: Arc<Registry>,
    /// The address clients reach the server at, for `/api`'s `serverAddressByClientCIDRs`.
    pub address: String,
    /// Flips to `true` when the server shuts down: open watches end.
    pub shutdown: signal::Receiver<bool>,
    /// API documents (discovery and OpenAPI), following the registry.
    pub documents: crate::documents::LiveDocuments,
    /// Who requests come from.
    pub authenticator: crate::authentication::Authenticator,
    /// What they may do.
    pub authorizer: crate::authorization::Authorizer,
    /// Plain HTTP on loopback (`--insecure-http`): requests without credentials are
    /// `system:unsecured` in `system:masters`.
    pub insecure: bool,
    /// In-flight, watch and time limits.
    pub limits: crate::limits::Limits,
    /// The audit log, if one is kept.
    pub auditor: Option<kapi_auth::audit::Auditor>,
    /// What admission needs to run for every write.
    pub admission: Arc<crate::admission::Plugins>,
    /// The protobuf messages of the built-in kinds (`kapi_core::protobuf`).
    pub protobuf: &'static kapi_core::protobuf::Catalog,
}

/// Builds a JSON response of an API document (see [`api_document`]).
pub fn json_response(code: StatusCode, value: &Value) -> Response<Body> {
    let mut body = serde_json::to_vec(value).unwrap_or_default();
    body.push(b'\n');
    api_document(code, "application/json", body)
}

/// Marks a response whose body is one JSON document of the API (an object, a list, a
/// `Status`, a discovery document) ending in a newline, as kube-apiserver's serializer
/// writes one (Go's `json.Encoder`): such a body is laid out again, indented, when the
/// request asks for it ([`negotiation::PrettyPrint`]). Watch streams and OpenAPI
/// documents are not marked.
#[derive(Clone, Copy, Debug)]
pub struct ApiDocument;

/// A response of an API document already encoded (ending in a newline), marked as
/// [`ApiDocument`].
pub fn api_document(
    code: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut res = document(code, content_type, body);
    res.extensions_mut().insert(ApiDocument);
    res
}

/// Builds a response from bytes with a content type.
pub fn document(code: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut res = Response::new(Full::new(body.into()).boxed());
    *res.status_mut() = code;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        res.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    res
}

/// Renders an error as a `Status` response, in kube-apiserver's bytes.
pub fn error_response(e: &ApiError) -> Response<Body> {
    api_document(
        e.code,
        "application/json",
        crate::go_json::encode(&e.status()),
    )
}

/// The most characters of warnings one response carries, and of each warning once
/// they are over it (kube-apiserver's `truncateAtTotalRunes` and `truncateItemRunes`):
/// a body of a million unknown fields gets a few headers, not a million.
const WARNINGS_TOTAL_CHARS: usize = 4 * 1024;
const WARNING_ITEM_CHARS: usize = 256;

/// The warnings a response carries, as kube-apiserver's warning recorder keeps them:
/// duplicates once; when they are over [`WARNINGS_TOTAL_CHARS`] together, each cut to
/// [`WARNING_ITEM_CHARS`], and those past the total left out.
fn bounded_warnings<'a>(warnings: impl Iterator<Item = &'a str>) -> Vec<std::borrow::Cow<'a, str>> {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&str> = warnings.filter(|w| seen.insert(*w)).collect();
    let total: usize = unique.iter().map(|w| w.chars().count()).sum();
    if total <= WARNINGS_TOTAL_CHARS {
        return unique.into_iter().map(Into::into).collect();
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for w in unique {
        let cut: std::borrow::Cow<'_, str> = match w.char_indices().nth(WARNING_ITEM_CHARS) {
            Some((at, _)) => w[..at].into(),
            None => w.into(),
        };
        used += cut.chars().count();
        if used > WARNINGS_TOTAL_CHARS {
            break;
        }
        kept.push(cut);
    }
    kept
}

/// Adds `Warning: 299 - "..."` headers, as kube-apiserver sends warnings (bounded as
/// [`bounded_warnings`] says).
pub fn with_warnings(mut res: Response<Body>, warnings: &[impl AsRef<str>]) -> Response<Body> {
    for w in bounded_warnings(warnings.iter().map(AsRef::as_ref)) {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = HeaderValue::from_str(&format!("299 - \"{escaped}\"")) {
            res.headers_mut().append(header::WARNING, v);
        }
    }
    res
}

/// Reads a request body (the filter chain has bounded its size: over the bound is a
/// 413, as kube-apiserver answers it).
pub async fn read_body<B>(body: B) -> Result<Bytes, ApiError>
where
    B: hyper::body::Body<Data = Bytes> + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match body.collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            let e: Box<dyn std::error::Error + Send + Sync> = e.into();
            Err(match e.downcast_ref::<crate::limits::BodyTooLarge>() {
                Some(too_large) => ApiError::too_large(too_large.to_string()),
                None => ApiError::bad_request(format!("the request body could not be read: {e}")),
            })
        }
    }
}

impl Api {
    /// The protobuf catalog, when `info`'s kind has a message in it (every built-in
    /// kind; never a custom resource).
    pub fn wire_for(&self, info: &kapi_core::ResourceInfo) -> Option<negotiation::Wire> {
        protobuf::message_of(self.protobuf, info, false)
            .map(|m| negotiation::Wire::of(self.protobuf, m))
    }

    /// Serves one request from `peer`, and records it in the metrics. The request is
    /// resolved here, once ([`RequestInfo`]); every later step reads that.
    pub async fn handle<B>(&self, req: Request<B>, peer: &Peer) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let start = std::time::Instant::now();
        let info = RequestInfo::resolve(req.method(), req.uri());
        let pretty = negotiation::PrettyPrint::of(req.headers(), &info.query);
        let res = self.filtered(req, &info, peer).await;
        let res = indented_if(pretty, res).await;
        let labels = crate::metrics::RequestLabels::of(&info, res.status());
        crate::metrics::Metrics::global().observe_request(labels, start.elapsed().as_secs_f64());
        res
    }

    /// The handler of what `info` addresses: the health and version paths, the OpenAPI
    /// and discovery documents, or a resource.
    pub(crate) async fn route<B>(&self, req: Request<B>, info: &RequestInfo) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let path = info.path.as_str();
        match (req.method(), path) {
            (&Method::GET, "/healthz" | "/livez" | "/readyz") => {
                return document(StatusCode::OK, "text/plain; charset=utf-8", b"ok".to_vec());
            }
            (&Method::GET, "/version") => {
                return document(
                    StatusCode::OK,
                    "application/json",
                    crate::documents::version(),
                );
            }
            (&Method::GET, "/metrics") => {
                let text = crate::metrics::Metrics::global().encode();
                return document(
                    StatusCode::OK,
                    "text/plain; version=0.0.4; charset=utf-8",
                    text.into_bytes(),
                );
            }
            _ => {}
        }
        if path.starts_with("/openapi/") {
            if let Some(res) = self.documents.get(&self.registry).serve(&req, path) {
                return res;
            }
        }
        match &info.route {
            Some(Route::Resource(r)) => resource::handle(self, req, info, r).await,
            Some(Route::Unknown) | None => error_response(&ApiError::no_route()),
            Some(route) => self.documents.get(&self.registry).discovery(&req, route),
        }
    }
}

/// `res` with its [`ApiDocument`] laid out as `json.MarshalIndent` lays it out, when
/// `pretty` says so for its code (anything else is left as it is).
async fn indented_if(pretty: negotiation::PrettyPrint, res: Response<Body>) -> Response<Body> {
    if res.extensions().get::<ApiDocument>().is_none() || !pretty.indents(res.status()) {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(never) => match never {},
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    let indented = crate::go_json::indent(&bytes);
    Response::from_parts(parts, Full::new(Bytes::from(indented)).boxed())
}

/// The admission checks of the request (set by [`Api::handle`]) in its write options.
pub fn with_admission<B>(
    mut opts: crate::registry::WriteOptions,
    req: &Request<B>,
) -> crate::registry::WriteOptions {
    opts.admission = admission_of(req);
    opts
}

/// The admission checks of the request, set by [`Api::handle`].
pub fn admission_of<B>(req: &Request<B>) -> Option<Arc<dyn crate::registry::Admission>> {
    req.extensions()
        .get::<crate::admission::RequestAdmission>()
        .map(|a| a.0.clone())
}

/// The output format for a request, from its `Accept` header.
pub fn output_of<B>(
    req: &Request<B>,
    protobuf: Option<negotiation::Wire>,
) -> Result<Output, ApiError> {
    negotiation::output(
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
        protobuf,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_bounded_as_kube_bounds_them() {
        let few = ["a", "b", "a"];
        assert_eq!(bounded_warnings(few.into_iter()), ["a", "b"]);
        let many: Vec<String> = (0..100_000)
            .map(|i| format!("unknown field \"spec.f{i}\"{}", "x".repeat(300)))
            .collect();
        let kept = bounded_warnings(many.iter().map(String::as_str));
        assert_eq!(kept.len(), WARNINGS_TOTAL_CHARS / WARNING_ITEM_CHARS);
        assert!(kept.iter().all(|w| w.chars().count() == WARNING_ITEM_CHARS));
        assert!(kept[0].starts_with("unknown field \"spec.f0\""));
    }
}
