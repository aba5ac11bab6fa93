//! The HTTP surface: the filter chain, dispatch on what [`crate::request`] resolved
//! (routes derived from the registry, never hand-written per resource), and the generic
//! handlers, which decode the request, call the registry, and encode the answer in the
//! format [`crate::negotiation`] chose.

pub mod body_kind;
mod chain;
mod connect;
pub mod convert;
mod create_only;
mod front;
pub mod patch;
pub mod protobuf;
pub mod query;
mod resource;
mod scale;
mod watch;

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use tokio::sync::watch as signal;

pub use connect::{ConnectPath, Connected, Connecter};
pub use create_only::{CreateOnly, CreateOnlyPath};
pub use front::{Front, FrontBody};

use crate::authentication::Peer;
use crate::negotiation::{self, Output};
use crate::registry::Registry;
use crate::request::{RequestInfo, Route};
use crate::response::{
    ApiDocument, Body, api_document, document, document_body, error_response, json_response,
    with_warnings,
};
use crate::status::ApiError;

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
    /// The admission chain every write passes.
    pub admission: Arc<dyn crate::registry::AdmissionChain>,
    /// The resources that answer a POST instead of storing it (the review APIs).
    pub create_only: Vec<Arc<dyn CreateOnly>>,
    /// The subresources answered from elsewhere (`pods/log`, `pods/exec`).
    pub connecters: Vec<Arc<dyn Connecter>>,
    /// The groups built into the server, for the errors about a body of another kind.
    pub built_in_groups: &'static [body_kind::BuiltInGroup],
    /// The protobuf messages of the built-in kinds (`kapi_core::protobuf`).
    pub protobuf: &'static kapi_core::protobuf::Catalog,
    /// The server in front of this one (the aggregator), if any.
    pub front: Option<Arc<dyn Front>>,
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
    pub async fn handle<B>(&self, mut req: Request<B>, peer: &Peer) -> Response<Body>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let start = std::time::Instant::now();
        let info = RequestInfo::resolve(req.method(), req.uri());
        let accepted = negotiation::Accepted::of(req.headers());
        let pretty = negotiation::PrettyPrint::from_accepted(&accepted, req.headers(), &info.query);
        req.extensions_mut().insert(accepted);
        let res = self.filtered(req, &info, peer).await;
        let res = indented_if(pretty, res).await;
        crate::metrics::Metrics::global().observe_request(
            &info,
            res.status(),
            start.elapsed().as_secs_f64(),
        );
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
            (&Method::POST, convert::PATH) => {
                return match read_body(req.into_body()).await {
                    Ok(body) => convert::serve(&self.registry, &body).await,
                    Err(e) => error_response(&e),
                };
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

/// What the request itself adds to its write options: its admission checks (set by
/// [`Api::handle`]), and its field manager when `?fieldManager=` named none.
pub fn for_request<B>(
    mut opts: crate::registry::WriteOptions,
    req: &Request<B>,
) -> crate::registry::WriteOptions {
    opts.admission = admission_of(req);
    if opts.field_manager.is_empty() {
        let agent = req.headers().get(header::USER_AGENT);
        opts.field_manager = manager_of_user_agent(agent.and_then(|v| v.to_str().ok()));
    }
    opts
}

/// The field manager of a request without `?fieldManager=`, as kube-apiserver names it
/// (`prefixFromUserAgent`): the User-Agent up to its first `/` (`kubectl` of
/// `kubectl/v1.33.0 (linux/amd64) kubernetes/…`), without control characters, at
/// most 128 bytes.
fn manager_of_user_agent(agent: Option<&str>) -> String {
    let product = agent.unwrap_or("").split('/').next().unwrap_or("");
    let mut manager = String::new();
    for c in product.chars().filter(|c| !c.is_control()) {
        if manager.len() + c.len_utf8() > 128 {
            break;
        }
        manager.push(c);
    }
    manager
}

/// The admission checks of the request, set by [`Api::handle`].
pub fn admission_of<B>(req: &Request<B>) -> Option<Arc<dyn crate::registry::Admission>> {
    req.extensions()
        .get::<RequestAdmission>()
        .map(|a| a.0.clone())
}

/// The admission checks of one request, carried to the registry in the request's
/// extensions.
#[derive(Clone)]
struct RequestAdmission(Arc<dyn crate::registry::Admission>);

/// The output format for a request, from its `Accept` header as [`Api::handle`] read
/// it (or read here, for a request that did not come through it).
pub fn output_of<B>(
    req: &Request<B>,
    protobuf: Option<negotiation::Wire>,
) -> Result<Output, ApiError> {
    match req.extensions().get::<negotiation::Accepted>() {
        Some(accepted) => accepted.output(protobuf),
        None => negotiation::Accepted::of(req.headers()).output(protobuf),
    }
}

#[cfg(test)]
mod tests {
    use super::manager_of_user_agent;

    #[test]
    fn a_field_manager_is_the_user_agents_product() {
        let kubectl = "kubectl/v1.33.0 (linux/amd64) kubernetes/8adc0f0";
        assert_eq!(manager_of_user_agent(Some(kubectl)), "kubectl");
        assert_eq!(
            manager_of_user_agent(Some("Go-http-client/2.0")),
            "Go-http-client"
        );
        assert_eq!(manager_of_user_agent(Some("no slash")), "no slash");
        assert_eq!(manager_of_user_agent(Some("a\u{7}b/1")), "ab");
        assert_eq!(manager_of_user_agent(None), "");
        let long = "é".repeat(100);
        assert_eq!(manager_of_user_agent(Some(&long)).len(), 128);
    }
}
