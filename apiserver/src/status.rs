//! API errors, rendered as Kubernetes `Status` objects.
//!
//! Every failure a client can see goes through [`ApiError`]: an HTTP code, a machine
//! `reason` (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, ...), a human message
//! worded as kube-apiserver words it (clients and people grep for those words), and
//! `details` naming the object, with one cause per field error for 422 Invalid.
//! Layers below the API (storage, strategies) keep their own error types; they are
//! translated here, in one place. Internal details of a 5xx are logged, not returned.
//!
//! A [`Status`] serializes as kube-apiserver writes one (the Go struct's field order,
//! `omitempty` as Go applies it), so that with [`crate::go_json::encode`] an error body
//! is byte for byte kube's.

use http::StatusCode;
use kapi_core::{ErrorList, ResourceInfo};
use kapi_storage::StorageError;
use serde::Serialize;
use serde_json::{Value, json};

/// A Kubernetes API error, ready to be rendered as a `Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// The HTTP status code.
    pub code: StatusCode,
    /// The `reason` field (`StatusReason` in apimachinery).
    pub reason: &'static str,
    /// The human-readable message.
    pub message: String,
    /// The `details` field, when the error is about a named object.
    pub details: Option<Value>,
    /// The Status's `metadata.continue`: where a list whose continue token expired may
    /// go on, inconsistently, at the latest revision (kube's 410 for such a token).
    pub continue_token: Option<String>,
}

/// The qualified resource of error messages: `widgets.example.kapi.dev`, or just
/// `configmaps` for the core group.
pub fn qualified_resource(info: &ResourceInfo) -> String {
    if info.group.is_empty() {
        info.plural.to_string()
    } else {
        format!("{}.{}", info.plural, info.group)
    }
}

fn details(info: &ResourceInfo, name: &str, kind: &str) -> Value {
    let mut d = json!({ "name": name, "kind": kind });
    if !info.group.is_empty() {
        d["group"] = json!(info.group);
    }
    if name.is_empty() {
        d.as_object_mut().map(|m| m.remove("name"));
    }
    d
}

impl ApiError {
    fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            continue_token: None,
        }
    }

    /// Sets [`ApiError::continue_token`].
    pub fn with_continue(mut self, token: String) -> Self {
        self.continue_token = Some(token);
        self
    }

    fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 404 for a named object.
    pub fn not_found(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("{} \"{name}\" not found", qualified_resource(info)),
        )
        .with_details(details(info, name, &info.plural))
    }

    /// 404 for a path the server does not serve.
    pub fn no_route() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    /// 404 for a namespaced object whose namespace does not exist.
    pub fn namespace_not_found(namespace: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("namespaces \"{namespace}\" not found"),
        )
        .with_details(json!({ "name": namespace, "kind": "namespaces" }))
    }

    /// 409 AlreadyExists.
    pub fn already_exists(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified_resource(info)),
        )
        .with_details(details(info, name, &info.plural))
    }

    /// 409 Conflict with kube-apiserver's wording: `Operation cannot be fulfilled on
    /// {resource} "{name}": {why}`.
    pub fn conflict(info: &ResourceInfo, name: &str, why: &str) -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified_resource(info)
            ),
        )
        .with_details(details(info, name, &info.plural))
    }

    /// 409 Conflict for a stale `resourceVersion`.
    pub fn stale(info: &ResourceInfo, name: &str) -> Self {
        Self::conflict(
            info,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 Invalid, one cause per field error: as many as fit in
    /// [`MAX_INVALID_MESSAGE_BYTES`] (each quotes at most
    /// [`kapi_core::field::MAX_RENDERED_VALUE_BYTES`] of its value), then how many more
    /// there were, so a list of a million bad items answers in kilobytes.
    pub fn invalid(info: &ResourceInfo, name: &str, errors: &ErrorList) -> Self {
        let mut rendered: Vec<String> = Vec::new();
        let mut length = 0;
        for e in errors {
            if length >= MAX_INVALID_MESSAGE_BYTES {
                break;
            }
            let text = e.to_string();
            length += text.len() + 2;
            rendered.push(text);
        }
        let shown = rendered.len();
        if shown < errors.len() {
            rendered.push(format!("and {} more errors", errors.len() - shown));
        }
        let errors = &errors[..shown];
        let aggregate = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let group_kind = if info.group.is_empty() {
            info.kind.to_string()
        } else {
            format!("{}.{}", info.kind, info.group)
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| {
                json!({
                    "reason": e.kind.cause_reason(),
                    "message": e.body(),
                    "field": e.path.to_string(),
                })
            })
            .collect();
        let mut d = details(info, name, &info.kind);
        d["causes"] = Value::Array(causes);
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("{group_kind} \"{name}\" is invalid: {aggregate}"),
        )
        .with_details(d)
    }

    /// 422 Invalid for request options (`PatchOptions.meta.k8s.io "" is invalid:
    /// fieldManager: Required value: ...`), as kube-apiserver reports them.
    pub fn invalid_options(kind: &str, field: &str, message: &str) -> Self {
        Self::invalid_options_all(kind, &[(field.to_string(), message.to_string())])
    }

    /// [`ApiError::invalid_options`] with every error of the options at once (kube
    /// validates `ListOptions`, `DeleteOptions`, ... whole), each a `(field, message)`.
    pub fn invalid_options_all(kind: &str, errors: &[(String, String)]) -> Self {
        let rendered: Vec<String> = errors.iter().map(|(f, m)| format!("{f}: {m}")).collect();
        let aggregate = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|(field, message)| {
                // The cause reason follows the message's kind, as field.ErrorType names it.
                let reason = [
                    ("Required value", "FieldValueRequired"),
                    ("Forbidden", "FieldValueForbidden"),
                    ("Unsupported value", "FieldValueNotSupported"),
                    ("Too long", "FieldValueTooLong"),
                ]
                .iter()
                .find(|(prefix, _)| message.starts_with(prefix))
                .map_or("FieldValueInvalid", |(_, r)| r);
                json!({"reason": reason, "message": message, "field": field})
            })
            .collect();
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Invalid",
            format!("{kind}.meta.k8s.io \"\" is invalid: {aggregate}"),
        )
        .with_details(json!({
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": causes,
        }))
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            message,
        )
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// 403 Forbidden about a named object.
    pub fn forbidden(info: &ResourceInfo, name: &str, why: &str) -> Self {
        let subject = if name.is_empty() {
            qualified_resource(info)
        } else {
            format!("{} \"{name}\"", qualified_resource(info))
        };
        Self::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            format!("{subject} is forbidden: {why}"),
        )
        .with_details(details(info, name, &info.plural))
    }

    /// 405 for a verb the resource does not serve.
    pub fn method_not_supported(info: &ResourceInfo, verb: &str) -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!(
                "{verb} is not supported on resources of kind \"{}\"",
                qualified_resource(info)
            ),
        )
        .with_details(json!({ "kind": info.plural.to_string() }))
    }

    /// 405 for an HTTP method no route takes.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// 406 for an `Accept` header the server cannot satisfy.
    pub fn not_acceptable(supported: &[&str]) -> Self {
        Self::new(
            StatusCode::NOT_ACCEPTABLE,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: {}",
                supported.join(", ")
            ),
        )
    }

    /// 415 for a request body in a format the server cannot read.
    pub fn unsupported_media_type(content_type: &str, supported: &[&str]) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                supported.join(", ")
            ),
        )
        .with_details(json!({ "causes": [{ "reason": "UnexpectedHeader", "message": format!("unsupported media type {content_type:?}"), "field": "Content-Type" }] }))
    }

    /// 410 Expired: a resourceVersion or continue token that was compacted away.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(StatusCode::GONE, "Expired", message)
    }

    /// 504 for a resourceVersion newer than the store's.
    pub fn too_large_resource_version(requested: i64, current: i64) -> Self {
        Self::new(
            StatusCode::GATEWAY_TIMEOUT,
            "Timeout",
            // kube's NewTimeoutError prefixes "Timeout: ".
            format!("Timeout: Too large resource version: {requested}, current: {current}"),
        )
        .with_details(json!({
            "causes": [{ "reason": "ResourceVersionTooLarge", "message": "Too large resource version" }],
            "retryAfterSeconds": 1
        }))
    }

    /// 500 InternalError; the details go to the log, not to the client.
    pub fn internal(context: &str, error: &dyn std::error::Error) -> Self {
        tracing::error!(error = %error, "{context}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("Internal error occurred: {context}"),
        )
    }

    /// 500 InternalError for a failure whose reason the client is told (kube's
    /// `NewInternalError`: the reason is the message and the one cause).
    pub fn internal_reason(why: impl Into<String>) -> Self {
        let why = why.into();
        let mut e = Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            format!("Internal error occurred: {why}"),
        );
        e.details = Some(serde_json::json!({"causes": [{"message": why}]}));
        e
    }

    /// 503 ServiceUnavailable: the storage cannot be reached.
    pub fn unavailable(context: &str, error: &dyn std::error::Error) -> Self {
        tracing::warn!(error = %error, "{context}");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            format!("{context}: the storage is unavailable, retry later"),
        )
    }

    /// 503 ServiceUnavailable with `message`: something the request needs cannot be
    /// reached.
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            message,
        )
    }

    /// Translates a storage error about object `name` of `info` into the API error
    /// kube-apiserver answers with (`pkg/storage/errors` in k8s.io/apiserver).
    pub fn from_storage(info: &ResourceInfo, name: &str, error: &StorageError) -> Self {
        match error {
            StorageError::NotFound { .. } => Self::not_found(info, name),
            StorageError::AlreadyExists { .. } => Self::already_exists(info, name),
            StorageError::Conflict { .. } => Self::stale(info, name),
            StorageError::Expired {
                requested,
                compacted,
            } => Self::expired(format!(
                "too old resource version: {requested} ({compacted})"
            )),
            StorageError::TooLargeRevision { requested, current } => {
                Self::too_large_resource_version(*requested, *current)
            }
            StorageError::Unavailable { .. } => Self::unavailable(&qualified_resource(info), error),
            StorageError::Internal { .. } => Self::internal("storage failure", error),
        }
    }

    /// The `Status` this error answers with, to be serialized (in kube-apiserver's
    /// field order).
    pub fn status(&self) -> Status<'_> {
        Status {
            kind: "Status",
            api_version: "v1",
            metadata: StatusListMeta {
                continue_token: self.continue_token.as_deref(),
            },
            status: "Failure",
            message: bounded_message(&self.message),
            reason: self.reason,
            details: self.details.as_ref().map(StatusDetails::of),
            code: self.code.as_u16(),
        }
    }

    /// The `Status` object as a JSON value (whose keys are sorted, not in order).
    pub fn to_status(&self) -> Value {
        serde_json::to_value(self.status()).expect("a Status always serializes")
    }
}

/// A `Status` as kube-apiserver writes it: `metav1.Status`'s fields in its Go struct's
/// order, each left out when empty as its `omitempty` leaves it out (`metadata`, a
/// struct, is always there). Clients that compare error bodies as text see the same
/// bytes.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status<'a> {
    kind: &'static str,
    api_version: &'static str,
    metadata: StatusListMeta<'a>,
    #[serde(skip_serializing_if = "is_empty")]
    status: &'static str,
    #[serde(skip_serializing_if = "is_empty")]
    message: std::borrow::Cow<'a, str>,
    #[serde(skip_serializing_if = "is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<StatusDetails<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    code: u16,
}

impl Status<'static> {
    /// The `Status` of a success, as kube-apiserver answers a binding or eviction:
    /// `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`.
    pub fn success(code: StatusCode) -> Self {
        Self {
            kind: "Status",
            api_version: "v1",
            metadata: StatusListMeta::default(),
            status: "Success",
            message: "".into(),
            reason: "",
            details: None,
            code: code.as_u16(),
        }
    }
}

/// The `ListMeta` of a `Status`: only `continue` is ever set.
#[derive(Clone, Debug, Default, Serialize)]
struct StatusListMeta<'a> {
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    continue_token: Option<&'a str>,
}

/// `metav1.StatusDetails`, read from [`ApiError::details`]: its fields in order, the
/// ones it does not have left out (as Go's decoding into the struct leaves them out).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusDetails<'a> {
    #[serde(skip_serializing_if = "is_empty")]
    name: &'a str,
    #[serde(skip_serializing_if = "is_empty")]
    group: &'a str,
    #[serde(skip_serializing_if = "is_empty")]
    kind: &'a str,
    #[serde(skip_serializing_if = "is_empty")]
    uid: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    causes: Vec<StatusCause<'a>>,
    #[serde(skip_serializing_if = "is_zero")]
    retry_after_seconds: i64,
}

/// `metav1.StatusCause`: `reason`, `message`, `field`.
#[derive(Clone, Debug, Serialize)]
struct StatusCause<'a> {
    #[serde(skip_serializing_if = "is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "is_empty")]
    message: &'a str,
    #[serde(skip_serializing_if = "is_empty")]
    field: &'a str,
}

impl<'a> StatusDetails<'a> {
    fn of(details: &'a Value) -> Self {
        let text = |v: &'a Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("");
        let causes = details.get("causes").and_then(Value::as_array);
        Self {
            name: text(details, "name"),
            group: text(details, "group"),
            kind: text(details, "kind"),
            uid: text(details, "uid"),
            causes: causes
                .into_iter()
                .flatten()
                .map(|c| StatusCause {
                    reason: text(c, "reason"),
                    message: text(c, "message"),
                    field: text(c, "field"),
                })
                .collect(),
            retry_after_seconds: details
                .get("retryAfterSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0),
        }
    }
}

fn is_empty(s: &impl AsRef<str>) -> bool {
    s.as_ref().is_empty()
}

fn is_zero<N: Default + PartialEq>(n: &N) -> bool {
    *n == N::default()
}

/// The most bytes of the aggregated message of a 422 Invalid: the errors past it are
/// counted, not listed.
pub const MAX_INVALID_MESSAGE_BYTES: usize = 16 * 1024;

/// The most bytes of any `Status` message; a longer one is cut (with a note) so that no
/// error quoting what a client sent answers, or is audited, in megabytes.
pub const MAX_STATUS_MESSAGE_BYTES: usize = 64 * 1024;

fn bounded_message(message: &str) -> std::borrow::Cow<'_, str> {
    if message.len() <= MAX_STATUS_MESSAGE_BYTES {
        return message.into();
    }
    let cut = kapi_core::field::floor_char_boundary(message, MAX_STATUS_MESSAGE_BYTES);
    format!(
        "{}... ({} bytes, truncated)",
        &message[..cut],
        message.len()
    )
    .into()
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.code.as_u16(),
            self.reason,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;
    use kapi_core::{FieldError, FieldPath};

    fn widget() -> ResourceInfo {
        crate::registry::test_support::widget_info("v1")
    }

    #[test]
    fn not_found_is_worded_as_kube_apiserver() {
        let s = ApiError::not_found(&widget(), "w1").to_status();
        assert_eq!(
            s,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "widgets.example.kapi.dev \"w1\" not found", "reason": "NotFound",
                "details": {"name": "w1", "group": "example.kapi.dev", "kind": "widgets"},
                "code": 404})
        );
    }

    /// The bytes kube-apiserver writes for `e` (its JSON serializer: Go's json.Encoder).
    fn kube_bytes(e: &ApiError) -> String {
        String::from_utf8(crate::go_json::encode(&e.status())).unwrap()
    }

    #[test]
    fn status_bodies_are_kube_apiservers_bytes() {
        assert_eq!(
            kube_bytes(&ApiError::not_found(&widget(), "w1")),
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
                r#""message":"widgets.example.kapi.dev \"w1\" not found","reason":"NotFound","#,
                r#""details":{"name":"w1","group":"example.kapi.dev","kind":"widgets"},"code":404}"#,
                "\n"
            )
        );
        let errs = vec![
            FieldError::required(&FieldPath::new("spec.size"), ""),
            FieldError::invalid(&FieldPath::new("spec.count"), 11, "must be <= 10 & > 0"),
        ];
        assert_eq!(
            kube_bytes(&ApiError::invalid(&widget(), "a", &errs)),
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
                r#""message":"Widget.example.kapi.dev \"a\" is invalid: [spec.size: Required value, "#,
                r#"spec.count: Invalid value: 11: must be \u003c= 10 \u0026 \u003e 0]","reason":"Invalid","#,
                r#""details":{"name":"a","group":"example.kapi.dev","kind":"Widget","causes":["#,
                r#"{"reason":"FieldValueRequired","message":"Required value","field":"spec.size"},"#,
                r#"{"reason":"FieldValueInvalid","message":"Invalid value: 11: must be \u003c= 10 \u0026 \u003e 0","field":"spec.count"}]},"#,
                r#""code":422}"#,
                "\n"
            )
        );
        // A cause without a field, retryAfterSeconds after the causes.
        assert_eq!(
            kube_bytes(&ApiError::too_large_resource_version(10, 5)),
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
                r#""message":"Timeout: Too large resource version: 10, current: 5","reason":"Timeout","#,
                r#""details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"#,
                r#""code":504}"#,
                "\n"
            )
        );
        // No details at all; a continue token in the metadata.
        assert_eq!(
            kube_bytes(&ApiError::expired("too old").with_continue("abc".into())),
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{"continue":"abc"},"status":"Failure","#,
                r#""message":"too old","reason":"Expired","code":410}"#,
                "\n"
            )
        );
        // Empty details stay (a pointer to an empty struct in Go).
        assert!(
            kube_bytes(&ApiError::no_route())
                .ends_with("\"reason\":\"NotFound\",\"details\":{},\"code\":404}\n")
        );
        assert_eq!(
            String::from_utf8(crate::go_json::encode(&Status::success(
                StatusCode::CREATED
            )))
            .unwrap(),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}\n"
        );
    }

    #[test]
    fn invalid_lists_causes() {
        let errs = vec![
            FieldError::required(&FieldPath::new("spec.size"), ""),
            FieldError::invalid(&FieldPath::new("metadata.name"), "A", "bad"),
        ];
        let s = ApiError::invalid(&widget(), "A", &errs).to_status();
        assert_eq!(s["code"], 422);
        assert_eq!(
            s["message"],
            "Widget.example.kapi.dev \"A\" is invalid: [spec.size: Required value, metadata.name: Invalid value: \"A\": bad]"
        );
        assert_eq!(s["details"]["kind"], "Widget");
        assert_eq!(
            s["details"]["causes"][1],
            json!({"reason": "FieldValueInvalid", "message": "Invalid value: \"A\": bad", "field": "metadata.name"})
        );
    }

    #[test]
    fn invalid_is_bounded_however_many_errors_and_however_long_their_values() {
        let big = "x".repeat(4096);
        let errs: Vec<FieldError> = (0..10_000)
            .map(|i| FieldError::invalid(&FieldPath::new("data").index(i), big.as_str(), "bad"))
            .collect();
        let status = ApiError::invalid(&widget(), "a", &errs).to_status();
        let body = status.to_string();
        assert!(body.len() < 64 * 1024, "{}", body.len());
        let message = status["message"].as_str().unwrap();
        let shown = status["details"]["causes"].as_array().unwrap().len();
        assert!(shown > 5 && shown < 100, "{shown}");
        assert!(
            message.ends_with(&format!(", and {} more errors]", 10_000 - shown)),
            "{}",
            &message[message.len() - 100..]
        );
        let long = ApiError::bad_request("y".repeat(1 << 20)).to_status();
        let message = long["message"].as_str().unwrap();
        assert!(message.len() <= MAX_STATUS_MESSAGE_BYTES + 40);
        assert!(message.ends_with("... (1048576 bytes, truncated)"));
    }
}
