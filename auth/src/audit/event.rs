//! The `audit.k8s.io/v1` `Event`, serialized field for field as kube-apiserver writes it:
//! the same names, the same order, and empty optional fields left out.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::policy::{Level, Stage};
use crate::user::UserInfo;

/// `apiVersion` of events.
pub const EVENT_API_VERSION: &str = "audit.k8s.io/v1";

/// Annotation with the authorizer's decision: `allow` or `forbid`.
pub const DECISION_ANNOTATION: &str = "authorization.k8s.io/decision";
/// Annotation with the authorizer's reason.
pub const REASON_ANNOTATION: &str = "authorization.k8s.io/reason";

/// One audit record of one request at one stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Always `Event`.
    pub kind: String,
    /// Always `audit.k8s.io/v1`.
    pub api_version: String,
    /// The level the policy chose for the request.
    pub level: Level,
    /// The request's id, the same in every event of the request (a UUID, or the
    /// `Audit-ID` header the request came with).
    #[serde(rename = "auditID")]
    pub audit_id: String,
    /// The stage this event records.
    pub stage: Stage,
    /// Path and query, as the client sent them.
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    /// The Kubernetes verb (`get`, `list`, `watch`, `create`, ...), or the lowercased HTTP
    /// method for non-resource requests.
    pub verb: String,
    /// The authenticated user.
    pub user: EventUser,
    /// The user impersonated, if the request impersonated one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<EventUser>,
    /// `X-Forwarded-For`, `X-Real-Ip` and the connection's address (see
    /// [`source_ips`](super::context::source_ips)).
    #[serde(default, rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    /// The `User-Agent` header (cut at 1024 bytes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    /// The object, for resource requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectReference>,
    /// The response's code and, for errors, its Status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    /// The request body, from level Request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Value>,
    /// The response body, at level RequestResponse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Value>,
    /// When the request was received.
    pub request_received_timestamp: MicroTime,
    /// When the request reached this stage.
    pub stage_timestamp: MicroTime,
    /// Notes by authentication, authorization and admission (from level Metadata).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A user in an event: `authentication.k8s.io/v1` `UserInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventUser {
    /// The user name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub username: String,
    /// The user's uid.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The user's groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Extra attributes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&UserInfo> for EventUser {
    fn from(u: &UserInfo) -> Self {
        EventUser {
            username: u.name.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        }
    }
}

/// The object a request is about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// The resource (`pods`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// The namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's uid, when the request body carries it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The API group (`""` for core, then left out).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The API version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The object's resourceVersion, when the request body carries it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// The subresource (`status`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The response status: the part of `meta/v1` `Status` an event carries.
///
/// kube-apiserver writes a whole `Status`, whose `metadata` is always there (`{}`); kapi
/// writes it too so that events have the same shape.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseStatus {
    /// Always empty; kept for kube-apiserver's shape.
    #[serde(default)]
    pub metadata: BTreeMap<String, Value>,
    /// `Success` or `Failure`, for Status responses.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub status: String,
    /// A human-readable message, for Status responses.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// A machine-readable reason (`NotFound`), for Status responses.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The Status's details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code: u16,
}

/// `meta/v1` `StatusDetails`: what an error is about.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The object's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's API group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The object's kind (or resource).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The object's uid.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The causes, for validation errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// When to retry, for throttling errors.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub retry_after_seconds: i32,
}

/// `meta/v1` `StatusCause`: one reason for an error.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    /// A machine-readable reason (`FieldValueInvalid`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field at fault (`spec.replicas`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

fn is_zero(code: &u16) -> bool {
    *code == 0
}

impl ResponseStatus {
    /// A status of just a code, as kube-apiserver records responses that are not a
    /// `Status`.
    pub fn code(code: u16) -> Self {
        ResponseStatus {
            code,
            ..Self::default()
        }
    }

    /// The status of a response: its `Status` fields when the body is a `meta/v1`
    /// `Status` object, and the code in any case.
    pub fn of_response(code: u16, body: Option<&Value>) -> Self {
        let mut status = Self::code(code);
        let Some(obj) = body.and_then(Value::as_object) else {
            return status;
        };
        if obj.get("kind").and_then(Value::as_str) != Some("Status") {
            return status;
        }
        let text = |k: &str| {
            obj.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        status.status = text("status");
        status.message = text("message");
        status.reason = text("reason");
        status.details = obj
            .get("details")
            .and_then(|d| StatusDetails::deserialize(d).ok());
        status
    }
}

/// A time with microseconds, written as RFC 3339 in UTC (`2026-11-30T12:00:00.123456Z`),
/// as `meta/v1` `MicroTime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MicroTime(pub DateTime<Utc>);

impl MicroTime {
    /// The current time.
    pub fn now() -> Self {
        MicroTime(Utc::now())
    }
}

impl fmt::Display for MicroTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Micros, true))
    }
}

impl Serialize for MicroTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MicroTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&s)
            .map(|t| MicroTime(t.with_timezone(&Utc)))
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    fn at(micros: i64) -> MicroTime {
        let noon = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        MicroTime(noon + chrono::Duration::microseconds(micros))
    }

    fn event() -> Event {
        Event {
            kind: "Event".into(),
            api_version: EVENT_API_VERSION.into(),
            level: Level::Metadata,
            audit_id: "5d6c2a58-7c8a-4f3e-9a4b-0f4a4b7e8c11".into(),
            stage: Stage::ResponseComplete,
            request_uri: "/api/v1/namespaces/default/pods/p?timeout=10s".into(),
            verb: "get".into(),
            user: EventUser::from(&UserInfo::new("jane", &["system:authenticated"])),
            impersonated_user: None,
            source_ips: vec!["10.0.0.1".into()],
            user_agent: "kubectl/v1.33.0".into(),
            object_ref: Some(ObjectReference {
                resource: "pods".into(),
                namespace: "default".into(),
                name: "p".into(),
                api_version: "v1".into(),
                ..ObjectReference::default()
            }),
            response_status: Some(ResponseStatus::code(200)),
            request_object: None,
            response_object: None,
            request_received_timestamp: at(123_456),
            stage_timestamp: at(234_000),
            annotations: BTreeMap::from([
                (DECISION_ANNOTATION.to_string(), "allow".to_string()),
                (REASON_ANNOTATION.to_string(), String::new()),
            ]),
        }
    }

    #[test]
    fn serializes_as_kube_apiserver_does() {
        // The shape of kube-apiserver's lines: field order of its Go types, empty
        // fields left out, `responseStatus.metadata` always there.
        let expected = concat!(
            r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","#,
            r#""auditID":"5d6c2a58-7c8a-4f3e-9a4b-0f4a4b7e8c11","stage":"ResponseComplete","#,
            r#""requestURI":"/api/v1/namespaces/default/pods/p?timeout=10s","verb":"get","#,
            r#""user":{"username":"jane","groups":["system:authenticated"]},"#,
            r#""sourceIPs":["10.0.0.1"],"userAgent":"kubectl/v1.33.0","#,
            r#""objectRef":{"resource":"pods","namespace":"default","name":"p","apiVersion":"v1"},"#,
            r#""responseStatus":{"metadata":{},"code":200},"#,
            r#""requestReceivedTimestamp":"2026-11-30T12:00:00.123456Z","#,
            r#""stageTimestamp":"2026-11-30T12:00:00.234000Z","#,
            r#""annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}"#,
        );
        assert_eq!(serde_json::to_string(&event()).unwrap(), expected);
    }

    #[test]
    fn round_trips() {
        let mut e = event();
        e.impersonated_user = Some(EventUser {
            username: "bob".into(),
            extra: BTreeMap::from([("scopes".into(), vec!["a".into()])]),
            ..EventUser::default()
        });
        e.request_object = Some(json!({"kind": "Pod"}));
        e.response_status = Some(ResponseStatus::of_response(
            404,
            Some(
                &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "pods \"p\" not found", "reason": "NotFound",
                "details": {"name": "p", "kind": "pods"}, "code": 404}),
            ),
        ));
        let text = serde_json::to_string(&e).unwrap();
        assert!(text.contains(
            r#""responseStatus":{"metadata":{},"status":"Failure","message":"pods \"p\" not found","reason":"NotFound","details":{"name":"p","kind":"pods"},"code":404}"#
        ), "{text}");
        assert!(text.contains(r#""impersonatedUser":{"username":"bob","extra":{"scopes":["a"]}}"#));
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), e);
    }

    #[test]
    fn reads_kube_apiserver_events() {
        // A watch's ResponseStarted event as kube-apiserver writes it.
        let line = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"a","stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"system:kube-scheduler","groups":["system:authenticated"]},"sourceIPs":["172.18.0.2"],"userAgent":"kube-scheduler/v1.33.0","objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2025-05-01T10:00:00.000001Z","stageTimestamp":"2025-05-01T10:00:00.100000Z"}"#;
        let e: Event = serde_json::from_str(line).unwrap();
        assert_eq!(e.stage, Stage::ResponseStarted);
        assert_eq!(e.response_status, Some(ResponseStatus::code(200)));
        assert_eq!(serde_json::to_string(&e).unwrap(), line);
    }

    #[test]
    fn status_of_non_status_bodies_is_the_code() {
        let s = ResponseStatus::of_response(201, Some(&json!({"kind": "Pod", "status": {}})));
        assert_eq!(s, ResponseStatus::code(201));
        assert_eq!(
            ResponseStatus::of_response(500, None),
            ResponseStatus::code(500)
        );
    }
}
