//! Request limits with kube-apiserver's defaults: API priority and fairness
//! ([`crate::flowcontrol`]) when it is on, as it is by default (requests classified by
//! the FlowSchemas, each priority level given its share of `--max-requests-inflight` +
//! `--max-mutating-requests-inflight` seats, the rest queued fairly per flow or refused
//! with 429 and `Retry-After`); otherwise at most `--max-requests-inflight` reads and
//! `--max-mutating-requests-inflight` writes at once. Also `--request-timeout` for
//! everything but watches (504) and `--max-watches-per-user` open watches per user
//! (429). Members of `system:masters` and health checks are exempt (kube's `exempt` and
//! `probes` FlowSchemas say so under priority and fairness), so probes keep answering
//! under load. Watches are not held to priority levels (kube holds them only while
//! they start).

use std::borrow::Cow;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Frame;
use kapi_auth::UserInfo;
use kapi_auth::authz::Attributes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::flowcontrol;
use crate::response::{Body, error_response};
use crate::status::ApiError;

/// Largest request body accepted by default (kube-apiserver's limit, 3 MiB); the
/// filter chain bounds every body by `--max-request-body-bytes`.
pub const DEFAULT_MAX_BODY: usize = 3 * 1024 * 1024;

/// The limits' settings.
#[derive(Clone, Debug)]
pub struct LimitsConfig {
    /// Non-mutating requests in flight (kube's default 400; 0 = no limit).
    pub max_requests_inflight: usize,
    /// Mutating requests in flight (kube's default 200; 0 = no limit).
    pub max_mutating_requests_inflight: usize,
    /// API priority and fairness, which divides the two in-flight limits' sum between
    /// priority levels (kube's `--enable-priority-and-fairness`, on by default); the
    /// server wires it with [`Limits::with_priority_and_fairness`].
    pub priority_and_fairness: bool,
    /// How long a request other than a watch may take (kube's default 60 s).
    pub request_timeout: Duration,
    /// Open watches per user (0 = no limit).
    pub max_watches_per_user: usize,
    /// The largest object stored, in bytes (etcd's default request limit, 1.5 MiB).
    pub max_object_bytes: usize,
    /// The largest request body, in bytes (kube-apiserver's 3 MiB).
    pub max_body_bytes: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            priority_and_fairness: true,
            request_timeout: Duration::from_secs(60),
            max_watches_per_user: 1000,
            max_object_bytes: crate::registry::DEFAULT_MAX_OBJECT_BYTES,
            max_body_bytes: DEFAULT_MAX_BODY,
        }
    }
}

/// The limits of a running server.
pub struct Limits {
    config: LimitsConfig,
    reads: Option<Arc<Semaphore>>,
    writes: Option<Arc<Semaphore>>,
    watches: Arc<Mutex<HashMap<String, usize>>>,
    /// Priority and fairness, when it is on (it replaces `reads` and `writes`).
    flow: Option<Arc<flowcontrol::Controller>>,
}

/// What [`Limits::admit`] decided, with the request's FlowSchema and priority level
/// (for kube's `X-Kubernetes-PF-*` headers) when priority and fairness classified it.
pub struct Admitted {
    /// The admission, or the 429.
    pub admission: Result<Admission, ApiError>,
    /// The classification, under priority and fairness.
    pub flow: Option<flowcontrol::Classification>,
}

/// What a request holds while it runs: its in-flight slot or its watch count.
pub enum Admission {
    /// Nothing to hold (exempt).
    Exempt,
    /// An in-flight slot, released when the response is written.
    InFlight(OwnedSemaphorePermit),
    /// A seat of a priority level, released when the response is written.
    Seat(flowcontrol::Seat),
    /// A watch, counted for its user until the stream ends.
    Watch(WatchSlot),
}

/// One open watch of a user; dropping it ends the count.
pub struct WatchSlot {
    user: String,
    watches: Arc<Mutex<HashMap<String, usize>>>,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = watches.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                watches.remove(&self.user);
            }
        }
    }
}

/// A request body over `--max-request-body-bytes`.
#[derive(Debug, thiserror::Error)]
#[error("Request entity too large: limit is {0}")]
pub struct BodyTooLarge(pub usize);

/// A request body that fails with [`BodyTooLarge`] past its limit.
pub struct BoundedBody<B> {
    inner: Pin<Box<http_body_util::Limited<B>>>,
    limit: usize,
}

impl<B> hyper::body::Body for BoundedBody<B>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let limit = self.limit;
        self.inner.as_mut().poll_frame(cx).map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                Box::new(BodyTooLarge(limit)) as Self::Error
            } else {
                e
            }
        })
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// kube-apiserver's 429.
pub fn too_many_requests(message: &str) -> ApiError {
    ApiError {
        code: StatusCode::TOO_MANY_REQUESTS,
        reason: "TooManyRequests",
        message: message.into(),
        details: Some(serde_json::json!({ "retryAfterSeconds": 1 })),
        continue_token: None,
    }
}

/// The error of a request that waited too long (kube-apiserver's words).
pub fn timeout_error() -> ApiError {
    ApiError {
        code: StatusCode::GATEWAY_TIMEOUT,
        reason: "Timeout",
        message:
            "Timeout: request did not complete within requested timeout - context deadline exceeded"
                .into(),
        details: Some(serde_json::json!({})),
        continue_token: None,
    }
}

/// The response to a request that waited too long.
pub fn timeout_response() -> http::Response<Body> {
    error_response(&timeout_error())
}

impl Limits {
    /// Limits as configured.
    pub fn new(config: LimitsConfig) -> Self {
        let semaphore = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        Self {
            reads: semaphore(config.max_requests_inflight),
            writes: semaphore(config.max_mutating_requests_inflight),
            watches: Arc::default(),
            flow: None,
            config,
        }
    }

    /// These limits under priority and fairness, with `controller`'s configuration
    /// (whose server limit should be the two in-flight limits' sum).
    pub fn with_priority_and_fairness(mut self, controller: Arc<flowcontrol::Controller>) -> Self {
        crate::metrics::Metrics::global().flow_controller(&controller);
        self.flow = Some(controller);
        self
    }

    /// The seats priority and fairness divides (`--max-requests-inflight` +
    /// `--max-mutating-requests-inflight`), when it is on and there are limits.
    pub fn priority_and_fairness_seats(&self) -> Option<usize> {
        let seats = self.config.max_requests_inflight + self.config.max_mutating_requests_inflight;
        (self.config.priority_and_fairness
            && self.config.max_requests_inflight > 0
            && self.config.max_mutating_requests_inflight > 0)
            .then_some(seats)
    }

    /// `--request-timeout`: the longest any request but a watch may take.
    pub fn request_timeout(&self) -> Duration {
        self.config.request_timeout
    }

    /// Bounds a request body by `--max-request-body-bytes`.
    pub fn bound_body<B>(&self, body: B) -> BoundedBody<B> {
        BoundedBody {
            inner: Box::pin(http_body_util::Limited::new(
                body,
                self.config.max_body_bytes,
            )),
            limit: self.config.max_body_bytes,
        }
    }

    /// How long a request may take, from `--request-timeout` and its own `timeout`
    /// parameter (which may only shorten it).
    pub fn timeout_for(&self, query: &crate::request::Query) -> Duration {
        let asked = query
            .get("timeout")
            .and_then(|t| crate::duration::parse_duration(t).ok())
            .filter(|d| !d.is_zero());
        match asked {
            Some(d) if d < self.config.request_timeout => d,
            _ => self.config.request_timeout,
        }
    }

    /// Admits a request, waiting in its priority level's queue under priority and
    /// fairness for at most a quarter of `timeout`, or answers 429.
    pub async fn admit(&self, attrs: &Attributes, method: &Method, timeout: Duration) -> Admitted {
        let Some(flow) = self.flow.as_ref().filter(|_| attrs.verb != "watch") else {
            return Admitted {
                admission: self.admit_in_flight(attrs, method),
                flow: None,
            };
        };
        let class = flow.classify(&flow_attributes(attrs));
        let admission = if class.exempt {
            Ok(Admission::Exempt)
        } else {
            let now = tokio::time::Instant::now();
            let deadline = flowcontrol::wait_deadline(now, Some(now + timeout), timeout / 4);
            flow.admit_classified(&class, deadline)
                .await
                .map(Admission::Seat)
                .map_err(|_| too_many_requests("Too many requests, please try again later."))
        };
        Admitted {
            admission,
            flow: Some(class),
        }
    }

    /// The in-flight counters, and the watch count, without priority and fairness.
    fn admit_in_flight(&self, attrs: &Attributes, method: &Method) -> Result<Admission, ApiError> {
        if exempt(&attrs.user) || is_health_check(attrs) {
            return Ok(Admission::Exempt);
        }
        if attrs.verb == "watch" {
            let limit = self.config.max_watches_per_user;
            let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
            let n = watches.entry(attrs.user.name.clone()).or_default();
            if limit > 0 && *n >= limit {
                return Err(too_many_requests(&format!(
                    "Too many requests: user {:?} has {limit} watches open, the most --max-watches-per-user allows",
                    attrs.user.name
                )));
            }
            *n += 1;
            return Ok(Admission::Watch(WatchSlot {
                user: attrs.user.name.clone(),
                watches: self.watches.clone(),
            }));
        }
        let mutating = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        let semaphore = if mutating { &self.writes } else { &self.reads };
        let Some(semaphore) = semaphore else {
            return Ok(Admission::Exempt);
        };
        match semaphore.clone().try_acquire_owned() {
            Ok(permit) => Ok(Admission::InFlight(permit)),
            Err(_) => Err(too_many_requests(
                "Too many requests, please try again later.",
            )),
        }
    }
}

/// What priority and fairness classifies a request by.
fn flow_attributes(attrs: &Attributes) -> flowcontrol::RequestAttributes<'_> {
    flowcontrol::RequestAttributes {
        user: Cow::Borrowed(&attrs.user.name),
        groups: Cow::Borrowed(&attrs.user.groups),
        verb: Cow::Borrowed(&attrs.verb),
        resource_request: attrs.resource_request,
        api_group: Cow::Borrowed(&attrs.api_group),
        resource: Cow::Borrowed(&attrs.resource),
        subresource: Cow::Borrowed(&attrs.subresource),
        namespace: Cow::Borrowed(&attrs.namespace),
        path: Cow::Borrowed(&attrs.path),
    }
}

/// `X-Kubernetes-PF-FlowSchema-UID`.
const FLOW_SCHEMA_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-flowschema-uid");
/// `X-Kubernetes-PF-PriorityLevel-UID`.
const PRIORITY_LEVEL_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");

/// kube's headers naming the FlowSchema and priority level a request was given.
pub fn with_flow_headers(
    mut res: http::Response<Body>,
    flow: Option<flowcontrol::Classification>,
) -> http::Response<Body> {
    let Some(class) = flow else {
        return res;
    };
    let headers = res.headers_mut();
    headers.insert(FLOW_SCHEMA_UID, class.flow_schema_uid);
    headers.insert(PRIORITY_LEVEL_UID, class.priority_level_uid);
    res
}

fn exempt(user: &UserInfo) -> bool {
    user.in_group(kapi_auth::user::MASTERS)
}

fn is_health_check(attrs: &Attributes) -> bool {
    !attrs.resource_request
        && matches!(
            attrs.path.as_str(),
            "/healthz" | "/livez" | "/readyz" | "/version"
        )
}

/// A 429 response with `Retry-After: 1`, as kube-apiserver sends it.
pub fn with_retry_after(mut res: http::Response<Body>) -> http::Response<Body> {
    if res.status() == StatusCode::TOO_MANY_REQUESTS {
        res.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    res
}

/// What may be held by a response body: an in-flight slot, a watch count, an audit
/// record completed when dropped.
pub trait Guard: Send + Sync + Unpin + 'static {
    /// Whether holding it matters (an exempt admission does not).
    fn needed(&self) -> bool {
        true
    }
}

impl Guard for Admission {
    fn needed(&self) -> bool {
        !matches!(self, Admission::Exempt)
    }
}

impl Guard for kapi_auth::audit::AuditContext {}

impl<A: Guard, B: Guard> Guard for (A, B) {}

/// Keeps `guard` until the body has been sent (a watch's, until it ends).
pub fn hold(res: http::Response<Body>, guard: impl Guard) -> http::Response<Body> {
    if !guard.needed() {
        return res;
    }
    res.map(|body| {
        Held {
            body,
            _guard: guard,
        }
        .boxed()
    })
}

struct Held<G> {
    body: Body,
    _guard: G,
}

impl<G: Guard> hyper::body::Body for Held<G> {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
