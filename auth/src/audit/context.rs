//! The audit record of one request as it is handled: [`AuditContext`] gathers what the
//! pipeline learns and writes an [`Event`] at each stage the policy does not omit.

use std::collections::BTreeMap;
use std::net::IpAddr;

use http::HeaderMap;
use serde_json::{Map, Value};

use super::event::{
    DECISION_ANNOTATION, EVENT_API_VERSION, Event, EventUser, MicroTime, ObjectReference,
    REASON_ANNOTATION, ResponseStatus,
};
use super::log::AuditLog;
use super::policy::{Level, RequestAuditConfig, Stage};
use crate::authz::Attributes;
use crate::user::UserInfo;

/// Longest `User-Agent` recorded, in bytes, as kube-apiserver.
const MAX_USER_AGENT: usize = 1024;
/// The request header with an audit id chosen upstream (an aggregating proxy).
pub const AUDIT_ID_HEADER: &str = "Audit-ID";
/// Longest `Audit-ID` header taken from a request; a longer one is replaced.
const MAX_AUDIT_ID: usize = 128;
/// The annotation `kubectl apply` keeps a copy of the whole applied object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What the HTTP request says about itself, for its events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestMeta {
    /// Path and query, as sent (`/api/v1/pods?watch=true`).
    pub request_uri: String,
    /// The `User-Agent` header, cut at 1024 bytes.
    pub user_agent: String,
    /// Where the request came from (see [`source_ips`]).
    pub source_ips: Vec<String>,
    /// The request's `Audit-ID` header, if it had a usable one.
    pub audit_id: Option<String>,
    /// When the request was received.
    pub received: Option<MicroTime>,
}

impl RequestMeta {
    /// The meta of an HTTP request received now from `remote` (the connection's peer).
    pub fn from_http(parts: &http::request::Parts, remote: Option<IpAddr>) -> Self {
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
        };
        let audit_id = header(AUDIT_ID_HEADER).trim();
        RequestMeta {
            request_uri: parts.uri.path_and_query().map_or_else(
                || parts.uri.path().to_string(),
                |pq| pq.as_str().to_string(),
            ),
            // Clients may send any bytes; keep what can be read rather than nothing.
            user_agent: truncate_user_agent(
                &parts
                    .headers
                    .get("User-Agent")
                    .map_or_else(Default::default, |v| String::from_utf8_lossy(v.as_bytes())),
            ),
            source_ips: source_ips(&parts.headers, remote),
            audit_id: (!audit_id.is_empty() && audit_id.len() <= MAX_AUDIT_ID)
                .then(|| audit_id.to_string()),
            received: Some(MicroTime::now()),
        }
    }
}

fn truncate_user_agent(ua: &str) -> String {
    if ua.len() <= MAX_USER_AGENT {
        return ua.to_string();
    }
    let mut end = MAX_USER_AGENT;
    while !ua.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...TRUNCATED", &ua[..end])
}

/// The addresses a request came from, as kube-apiserver lists them: every IP of
/// `X-Forwarded-For`, then `X-Real-Ip` unless already listed, then the connection's peer
/// unless it is the last one listed. All but the last can be set by the client.
pub fn source_ips(headers: &HeaderMap, remote: Option<IpAddr>) -> Vec<String> {
    let parse = |s: &str| s.trim().parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
    let mut ips: Vec<IpAddr> = Vec::new();
    if let Some(fwd) = headers.get("X-Forwarded-For").and_then(|v| v.to_str().ok()) {
        ips.extend(fwd.split(',').filter_map(parse));
    }
    if let Some(real) = headers
        .get("X-Real-Ip")
        .and_then(|v| v.to_str().ok())
        .and_then(parse)
    {
        if !ips.contains(&real) {
            ips.push(real);
        }
    }
    if let Some(remote) = remote.map(|ip| ip.to_canonical()) {
        if ips.last() != Some(&remote) {
            ips.push(remote);
        }
    }
    ips.iter().map(IpAddr::to_string).collect()
}

/// The audit record of one request.
///
/// Made by [`Auditor::begin`](super::Auditor::begin) (or [`AuditContext::begin`]), which
/// records the `RequestReceived` stage. The pipeline then tells it what it learns, and
/// ends it with [`response_complete`](Self::response_complete) or
/// [`panicked`](Self::panicked). A context dropped before either (the client went away,
/// a watch ended by dropping its stream) records `ResponseComplete` then, with the status
/// of [`response_started`](Self::response_started) if there was one.
///
/// When the policy says [`Level::None`] the context is empty: every method returns at
/// once, and nothing was allocated.
#[derive(Debug, Default)]
pub struct AuditContext {
    recording: Option<Box<Recording>>,
}

#[derive(Debug)]
struct Recording {
    config: RequestAuditConfig,
    log: AuditLog,
    /// The event so far; each stage writes a copy stamped with the stage and its time.
    event: Event,
    /// Whether objects are recorded at all: kube-apiserver records bodies of resource
    /// requests only.
    resource_request: bool,
    /// Whether this is about core Secrets, whose contents are kept out below
    /// RequestResponse.
    secret: bool,
    /// The code of `ResponseStarted`, once sent.
    started: Option<u16>,
}

impl AuditContext {
    /// A context that records nothing.
    pub fn disabled() -> Self {
        Self::default()
    }

    /// Starts recording the request `attrs` describes at `config`'s level, into `log`,
    /// and records `RequestReceived` (unless omitted). `attrs.user` is the authenticated
    /// user; an impersonated one is added with
    /// [`set_impersonated_user`](Self::set_impersonated_user).
    pub fn begin(
        config: RequestAuditConfig,
        attrs: &Attributes,
        meta: RequestMeta,
        log: &AuditLog,
    ) -> Self {
        if config.level == Level::None {
            return Self::disabled();
        }
        let received = meta.received.unwrap_or_else(MicroTime::now);
        let object_ref = attrs.resource_request.then(|| ObjectReference {
            resource: attrs.resource.clone(),
            namespace: attrs.namespace.clone(),
            name: attrs.name.clone(),
            api_group: attrs.api_group.clone(),
            api_version: attrs.api_version.clone(),
            subresource: attrs.subresource.clone(),
            ..ObjectReference::default()
        });
        let event = Event {
            kind: "Event".to_string(),
            api_version: EVENT_API_VERSION.to_string(),
            level: config.level,
            audit_id: meta
                .audit_id
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            stage: Stage::RequestReceived,
            request_uri: meta.request_uri,
            verb: attrs.verb.clone(),
            user: EventUser::from(&attrs.user),
            impersonated_user: None,
            source_ips: meta.source_ips,
            user_agent: meta.user_agent,
            object_ref,
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: received,
            stage_timestamp: received,
            annotations: BTreeMap::new(),
        };
        let recording = Recording {
            config,
            log: log.clone(),
            event,
            resource_request: attrs.resource_request,
            secret: attrs.resource_request
                && attrs.api_group.is_empty()
                && attrs.resource == "secrets",
            started: None,
        };
        let mut ctx = AuditContext {
            recording: Some(Box::new(recording)),
        };
        ctx.emit(Stage::RequestReceived, received);
        ctx
    }

    /// Whether anything is recorded.
    pub fn is_enabled(&self) -> bool {
        self.recording.is_some()
    }

    /// The level the policy chose ([`Level::None`] when disabled).
    pub fn level(&self) -> Level {
        self.recording
            .as_ref()
            .map_or(Level::None, |r| r.config.level)
    }

    /// The request's audit id, when recording (for an `Audit-ID` response header).
    pub fn audit_id(&self) -> Option<&str> {
        self.recording.as_ref().map(|r| r.event.audit_id.as_str())
    }

    /// Whether [`set_request_object`](Self::set_request_object) would record the body:
    /// level Request or more, on a resource request. Lets the pipeline skip decoding.
    pub fn wants_request_object(&self) -> bool {
        self.recording
            .as_ref()
            .is_some_and(|r| r.resource_request && r.config.level >= Level::Request)
    }

    /// Whether [`response_complete`](Self::response_complete) would record the response
    /// body: level RequestResponse, on a resource request. Otherwise only error responses
    /// need their body passed (for the Status's reason and message).
    pub fn wants_response_object(&self) -> bool {
        self.recording
            .as_ref()
            .is_some_and(|r| r.resource_request && r.config.level >= Level::RequestResponse)
    }

    /// Records the user the request impersonates (the event's `user` stays the
    /// authenticated one).
    pub fn set_impersonated_user(&mut self, user: &UserInfo) {
        if let Some(r) = &mut self.recording {
            r.event.impersonated_user = Some(EventUser::from(user));
        }
    }

    /// Records the authorizer's decision, as the `authorization.k8s.io/decision` (`allow`
    /// or `forbid`) and `authorization.k8s.io/reason` annotations.
    pub fn set_authorization(&mut self, allowed: bool, reason: &str) {
        let decision = if allowed { "allow" } else { "forbid" };
        self.add_annotation(DECISION_ANNOTATION, decision);
        self.add_annotation(REASON_ANNOTATION, reason);
    }

    /// Adds an annotation to the event (admission plugins, authenticators, ...).
    pub fn add_annotation(&mut self, key: &str, value: &str) {
        if let Some(r) = &mut self.recording {
            r.event
                .annotations
                .insert(key.to_string(), value.to_string());
        }
    }

    /// Records the request object (the decoded body, or a patch), as the client sent it.
    ///
    /// At any level its metadata fills in the `objectRef`'s name, namespace, uid and
    /// resourceVersion where the URL did not say; from level Request on, the object is
    /// recorded, without `managedFields` if the policy says so. For core Secrets below
    /// RequestResponse, the contents are left out: `data`, `stringData` and the
    /// `kubectl.kubernetes.io/last-applied-configuration` annotation (which holds a
    /// copy of them), in objects, lists and JSON patches alike.
    pub fn set_request_object(&mut self, object: &Value) {
        let Some(r) = &mut self.recording else {
            return;
        };
        if let Some(object_ref) = &mut r.event.object_ref {
            fill_object_ref(object_ref, object);
        }
        if !(r.resource_request && r.config.level >= Level::Request) {
            return;
        }
        let mut object = object.clone();
        if r.config.omit_managed_fields {
            drop_managed_fields(&mut object);
        }
        if r.secret && r.config.level < Level::RequestResponse {
            redact_secret_request(&mut object);
        }
        r.event.request_object = Some(object);
    }

    /// Records the request body, when it is JSON and the level records it (see
    /// [`set_request_object`](Self::set_request_object)). Below level Request the body is
    /// not parsed, so the `objectRef` is not filled in from it; a body in another format
    /// (YAML, protobuf) should be passed decoded to `set_request_object`.
    pub fn set_request_body(&mut self, body: &[u8]) {
        if !self.wants_request_object() {
            return;
        }
        if let Ok(object) = serde_json::from_slice::<Value>(body) {
            self.set_request_object(&object);
        }
    }

    /// Records `ResponseStarted`: the response headers of a long-running request (a
    /// watch) are sent. Call [`response_complete`](Self::response_complete) when it ends,
    /// or drop the context.
    pub fn response_started(&mut self, code: u16) {
        let Some(r) = &mut self.recording else {
            return;
        };
        r.started = Some(code);
        r.event.response_status = Some(ResponseStatus::code(code));
        self.emit(Stage::ResponseStarted, MicroTime::now());
    }

    /// Records `ResponseComplete` with the response's code and body (its bytes, JSON).
    ///
    /// The body is parsed only when it is recorded (level RequestResponse) or when the
    /// response is not a success (its `Status` fills `responseStatus`); pass `None` when
    /// neither holds, or for a watch.
    pub fn response_complete(&mut self, code: u16, body: Option<&[u8]>) {
        let parse = self.wants_response_object() || !(200..300).contains(&code);
        let value = body
            .filter(|_| parse)
            .and_then(|b| serde_json::from_slice::<Value>(b).ok());
        self.response_complete_value(code, value.as_ref());
    }

    /// [`response_complete`](Self::response_complete) with the body already decoded.
    pub fn response_complete_value(&mut self, code: u16, body: Option<&Value>) {
        let Some(mut r) = self.recording.take() else {
            return;
        };
        r.event.response_status = Some(ResponseStatus::of_response(code, body));
        // kube-apiserver records response bodies of resource requests at
        // RequestResponse only; below it nothing of the response, Secrets included.
        if r.resource_request && r.config.level >= Level::RequestResponse {
            if let Some(body) = body {
                let mut body = body.clone();
                if r.config.omit_managed_fields {
                    drop_managed_fields(&mut body);
                }
                r.event.response_object = Some(body);
            }
        }
        r.finish(Stage::ResponseComplete);
    }

    /// Records `Panic`: handling the request failed without a response (a 500).
    pub fn panicked(&mut self, message: &str) {
        let Some(mut r) = self.recording.take() else {
            return;
        };
        r.event.response_status = Some(ResponseStatus {
            code: 500,
            status: "Failure".to_string(),
            reason: "InternalError".to_string(),
            message: format!("APIServer panic'd: {message}"),
            ..ResponseStatus::default()
        });
        r.finish(Stage::Panic);
    }

    /// Writes a copy of the event at `stage`, unless the policy omits it.
    fn emit(&mut self, stage: Stage, at: MicroTime) {
        let Some(r) = &self.recording else {
            return;
        };
        if r.config.omit_stages.contains(stage) {
            return;
        }
        let mut event = r.event.clone();
        event.stage = stage;
        event.stage_timestamp = at;
        r.log.record(event);
    }
}

impl Recording {
    /// Writes the last event, moving it rather than copying its objects.
    fn finish(self: Box<Self>, stage: Stage) {
        if self.config.omit_stages.contains(stage) {
            return;
        }
        let Recording { log, mut event, .. } = *self;
        event.stage = stage;
        event.stage_timestamp = MicroTime::now();
        log.record(event);
    }
}

impl Drop for AuditContext {
    fn drop(&mut self) {
        if let Some(mut r) = self.recording.take() {
            // Abandoned before a response was recorded: a watch whose stream ended, or a
            // request whose client went away. Record that it ended, with the status
            // already sent if any.
            r.event.response_status = r.started.map(ResponseStatus::code);
            r.finish(Stage::ResponseComplete);
        }
    }
}

/// Fills what the URL did not say from the object's metadata, as kube-apiserver does.
fn fill_object_ref(object_ref: &mut ObjectReference, object: &Value) {
    let Some(meta) = object.get("metadata").and_then(Value::as_object) else {
        return;
    };
    let fill = |field: &mut String, key: &str| {
        if field.is_empty() {
            if let Some(v) = meta.get(key).and_then(Value::as_str) {
                *field = v.to_string();
            }
        }
    };
    fill(&mut object_ref.namespace, "namespace");
    fill(&mut object_ref.name, "name");
    fill(&mut object_ref.uid, "uid");
    fill(&mut object_ref.resource_version, "resourceVersion");
}

/// Removes `metadata.managedFields` from an object, or from each item of a list.
fn drop_managed_fields(object: &mut Value) {
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    if let Some(items) = obj.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(drop_managed_fields);
    }
}

/// Removes a Secret's contents from a request body: a Secret, a list of them, a merge
/// patch (shaped like a Secret) or a JSON patch (a list of operations).
fn redact_secret_request(body: &mut Value) {
    match body {
        Value::Object(obj) => redact_secret(obj),
        Value::Array(ops) => ops
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(redact_patch_operation),
        _ => {}
    }
}

fn redact_secret(obj: &mut Map<String, Value>) {
    obj.remove("data");
    obj.remove("stringData");
    if let Some(meta) = obj.get_mut("metadata") {
        redact_metadata(meta);
    }
    if let Some(items) = obj.get_mut("items").and_then(Value::as_array_mut) {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            redact_secret(item);
        }
    }
}

fn redact_metadata(meta: &mut Value) {
    if let Some(annotations) = meta.get_mut("annotations") {
        redact_annotations(annotations);
    }
}

fn redact_annotations(annotations: &mut Value) {
    if let Some(a) = annotations.as_object_mut() {
        a.remove(LAST_APPLIED);
    }
}

/// One JSON patch (RFC 6902) operation: a `value` that is, or holds, Secret contents is
/// removed.
fn redact_patch_operation(op: &mut Map<String, Value>) {
    let path = op
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    const LAST_APPLIED_POINTER: &str =
        "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration";
    let contents = ["/data", "/stringData"]
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}/")))
        || path == LAST_APPLIED_POINTER;
    if contents {
        op.remove("value");
        return;
    }
    let Some(value) = op.get_mut("value") else {
        return;
    };
    match path.as_str() {
        "" | "/" => redact_secret_request(value),
        "/metadata" => redact_metadata(value),
        "/metadata/annotations" => redact_annotations(value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::log::AuditLog;
    use crate::audit::policy::StageSet;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    /// A log into memory, and a way to read the events back.
    fn memory_log() -> (AuditLog, impl Fn() -> Vec<Event>) {
        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Shared {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Shared::default();
        let log = AuditLog::to_writer(buf.clone(), Default::default());
        let reader_log = log.clone();
        let read = move || {
            reader_log.flush();
            let bytes = buf.0.lock().unwrap().clone();
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).expect("each line is an Event"))
                .collect()
        };
        (log, read)
    }

    fn config(level: Level, omit: &[Stage]) -> RequestAuditConfig {
        RequestAuditConfig {
            level,
            omit_stages: StageSet::of(omit),
            omit_managed_fields: false,
        }
    }

    fn attrs(verb: &str, resource: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            user: UserInfo::new("jane", &["system:authenticated"]),
            verb: verb.into(),
            resource_request: true,
            api_version: "v1".into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    fn meta(uri: &str) -> RequestMeta {
        RequestMeta {
            request_uri: uri.into(),
            user_agent: "kubectl/v1.33.0".into(),
            source_ips: vec!["10.0.0.1".into()],
            ..RequestMeta::default()
        }
    }

    fn secret() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {
                "name": "s", "namespace": "a", "uid": "u-1", "resourceVersion": "7",
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"password\":\"aHVudGVyMg==\"}}",
                    "team": "x",
                },
                "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:data": {"f:password": {}}}}],
            },
            "type": "Opaque",
            "data": {"password": "aHVudGVyMg=="},
            "stringData": {"token": "hunter2"},
        })
    }

    fn assert_no_contents(v: &Value) {
        let text = v.to_string();
        assert!(!text.contains("aHVudGVyMg=="), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn none_records_nothing() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::None, &[]),
            &attrs("get", "pods", "a", "p"),
            meta("/"),
            &log,
        );
        assert!(!ctx.is_enabled());
        assert!(!ctx.wants_request_object());
        ctx.set_request_object(&json!({}));
        ctx.response_complete(200, Some(b"{}"));
        drop(ctx);
        assert!(read().is_empty());
    }

    #[test]
    fn metadata_records_received_and_complete_without_objects() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::Metadata, &[]),
            &attrs("create", "configmaps", "a", ""),
            meta("/api/v1/namespaces/a/configmaps"),
            &log,
        );
        assert!(!ctx.wants_request_object());
        ctx.set_authorization(true, "RBAC: allowed");
        ctx.set_request_object(&json!({"metadata": {"name": "cm", "uid": "u", "resourceVersion": ""}, "data": {"k": "v"}}));
        ctx.response_complete(201, Some(br#"{"kind":"ConfigMap"}"#));
        let events = read();
        assert_eq!(events.len(), 2);
        let (received, complete) = (&events[0], &events[1]);
        assert_eq!(received.stage, Stage::RequestReceived);
        assert_eq!(received.audit_id, complete.audit_id);
        assert!(received.response_status.is_none());
        assert!(received.annotations.is_empty());
        assert_eq!(complete.stage, Stage::ResponseComplete);
        assert_eq!(complete.level, Level::Metadata);
        assert_eq!(complete.verb, "create");
        assert_eq!(complete.user.username, "jane");
        assert_eq!(complete.source_ips, ["10.0.0.1"]);
        assert_eq!(complete.response_status, Some(ResponseStatus::code(201)));
        assert!(complete.request_object.is_none() && complete.response_object.is_none());
        let object_ref = complete.object_ref.as_ref().unwrap();
        assert_eq!(
            (object_ref.name.as_str(), object_ref.uid.as_str()),
            ("cm", "u")
        );
        assert_eq!(object_ref.resource, "configmaps");
        assert_eq!(complete.annotations[DECISION_ANNOTATION], "allow");
        assert_eq!(complete.annotations[REASON_ANNOTATION], "RBAC: allowed");
        assert!(complete.stage_timestamp >= complete.request_received_timestamp);
    }

    #[test]
    fn error_status_is_recorded_at_metadata() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::Metadata, &[Stage::RequestReceived]),
            &attrs("get", "pods", "a", "p"),
            meta("/"),
            &log,
        );
        ctx.set_authorization(false, "");
        ctx.response_complete(
            404,
            Some(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"p\" not found","reason":"NotFound","details":{"name":"p","kind":"pods"},"code":404}"#),
        );
        let events = read();
        assert_eq!(events.len(), 1);
        let status = events[0].response_status.as_ref().unwrap();
        assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
        assert_eq!(status.message, "pods \"p\" not found");
        assert!(events[0].response_object.is_none());
        assert_eq!(events[0].annotations[DECISION_ANNOTATION], "forbid");
    }

    #[test]
    fn request_and_request_response_levels() {
        let (log, read) = memory_log();
        let body =
            br#"{"kind":"ConfigMap","metadata":{"name":"cm","managedFields":[{"manager":"m"}]}}"#;
        for level in [Level::Request, Level::RequestResponse] {
            let mut ctx = AuditContext::begin(
                RequestAuditConfig {
                    omit_managed_fields: true,
                    ..config(level, &[Stage::RequestReceived])
                },
                &attrs("create", "configmaps", "a", ""),
                meta("/"),
                &log,
            );
            assert!(ctx.wants_request_object());
            assert_eq!(ctx.wants_response_object(), level == Level::RequestResponse);
            ctx.set_request_body(body);
            ctx.response_complete(201, Some(body));
        }
        let events = read();
        let expected = json!({"kind": "ConfigMap", "metadata": {"name": "cm"}});
        assert_eq!(events[0].request_object.as_ref(), Some(&expected));
        assert_eq!(events[0].response_object, None);
        assert_eq!(events[1].request_object.as_ref(), Some(&expected));
        assert_eq!(events[1].response_object.as_ref(), Some(&expected));
    }

    #[test]
    fn non_resource_requests_record_no_bodies() {
        let (log, read) = memory_log();
        let a = Attributes {
            user: UserInfo::new("jane", &[]),
            verb: "post".into(),
            path: "/apis/x".into(),
            ..Attributes::default()
        };
        let mut ctx = AuditContext::begin(
            config(Level::RequestResponse, &[Stage::RequestReceived]),
            &a,
            meta("/apis/x"),
            &log,
        );
        assert!(!ctx.wants_request_object());
        ctx.set_request_object(&json!({"a": 1}));
        ctx.response_complete_value(200, Some(&json!({"b": 2})));
        let events = read();
        assert_eq!(events.len(), 1);
        assert!(events[0].object_ref.is_none());
        assert!(events[0].request_object.is_none() && events[0].response_object.is_none());
        assert_eq!(events[0].verb, "post");
    }

    #[test]
    fn secret_contents_are_kept_out_below_request_response() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::Request, &[Stage::RequestReceived]),
            &attrs("create", "secrets", "a", ""),
            meta("/"),
            &log,
        );
        ctx.set_request_object(&secret());
        ctx.response_complete_value(201, Some(&secret()));
        let e = &read()[0];
        let req = e.request_object.as_ref().unwrap();
        assert_no_contents(req);
        assert!(e.response_object.is_none());
        // What is not content stays.
        assert_eq!(req["type"], "Opaque");
        assert_eq!(req["metadata"]["annotations"]["team"], "x");
        assert_eq!(req["metadata"]["managedFields"][0]["manager"], "kubectl");
        assert_eq!(e.object_ref.as_ref().unwrap().uid, "u-1");
        assert_eq!(e.object_ref.as_ref().unwrap().resource_version, "7");
    }

    #[test]
    fn secret_patches_and_lists_are_redacted_at_request() {
        let (log, read) = memory_log();
        let bodies = [
            // A merge or strategic merge patch.
            json!({"data": {"password": "aHVudGVyMg=="}, "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "hunter2"}}}),
            // A JSON patch.
            json!([
                {"op": "add", "path": "/data/password", "value": "aHVudGVyMg=="},
                {"op": "replace", "path": "/stringData", "value": {"token": "hunter2"}},
                {"op": "add", "path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration", "value": "hunter2"},
                {"op": "add", "path": "/metadata/annotations", "value": {"kubectl.kubernetes.io/last-applied-configuration": "hunter2"}},
                {"op": "replace", "path": "", "value": secret()},
                {"op": "add", "path": "/metadata/labels/a", "value": "b"},
            ]),
            // A list.
            json!({"kind": "List", "items": [secret(), secret()]}),
        ];
        for body in &bodies {
            let mut ctx = AuditContext::begin(
                config(Level::Request, &[Stage::RequestReceived]),
                &attrs("patch", "secrets", "a", "s"),
                meta("/"),
                &log,
            );
            ctx.set_request_object(body);
            ctx.response_complete_value(200, Some(&secret()));
        }
        let events = read();
        assert_eq!(events.len(), 3);
        for e in &events {
            assert_no_contents(e.request_object.as_ref().unwrap());
            assert!(e.response_object.is_none());
        }
        assert_eq!(events[1].request_object.as_ref().unwrap()[5]["value"], "b");
        assert_eq!(
            events[1].request_object.as_ref().unwrap()[0]["path"],
            "/data/password"
        );
    }

    #[test]
    fn list_of_secrets_at_request_has_no_response() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::Request, &[Stage::RequestReceived]),
            &attrs("list", "secrets", "a", ""),
            meta("/"),
            &log,
        );
        let list = json!({"kind": "SecretList", "items": [secret()]}).to_string();
        ctx.response_complete(200, Some(list.as_bytes()));
        let e = &read()[0];
        assert!(e.response_object.is_none());
        assert_no_contents(&serde_json::to_value(e).unwrap());
    }

    #[test]
    fn secrets_are_recorded_whole_at_request_response() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::RequestResponse, &[Stage::RequestReceived]),
            &attrs("create", "secrets", "a", ""),
            meta("/"),
            &log,
        );
        ctx.set_request_object(&secret());
        ctx.response_complete_value(201, Some(&secret()));
        let e = &read()[0];
        assert_eq!(e.request_object.as_ref(), Some(&secret()));
        assert_eq!(e.response_object.as_ref(), Some(&secret()));
    }

    #[test]
    fn secrets_of_other_groups_are_not_core_secrets() {
        let (log, read) = memory_log();
        let a = Attributes {
            api_group: "example.com".into(),
            ..attrs("create", "secrets", "a", "")
        };
        let mut ctx = AuditContext::begin(
            config(Level::Request, &[Stage::RequestReceived]),
            &a,
            meta("/"),
            &log,
        );
        ctx.set_request_object(&json!({"data": {"k": "v"}}));
        ctx.response_complete(201, None);
        assert_eq!(read()[0].request_object, Some(json!({"data": {"k": "v"}})));
    }

    #[test]
    fn watch_records_started_then_complete_when_dropped() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::Metadata, &[]),
            &attrs("watch", "pods", "", ""),
            meta("/api/v1/pods?watch=true"),
            &log,
        );
        ctx.response_started(200);
        drop(ctx);
        let stages: Vec<_> = read()
            .iter()
            .map(|e| (e.stage, e.response_status.clone()))
            .collect();
        assert_eq!(
            stages,
            [
                (Stage::RequestReceived, None),
                (Stage::ResponseStarted, Some(ResponseStatus::code(200))),
                (Stage::ResponseComplete, Some(ResponseStatus::code(200))),
            ]
        );
    }

    #[test]
    fn omitted_stages_are_not_written() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(
                Level::Metadata,
                &[Stage::RequestReceived, Stage::ResponseStarted],
            ),
            &attrs("watch", "pods", "", ""),
            meta("/"),
            &log,
        );
        ctx.response_started(200);
        ctx.response_complete(200, None);
        let events = read();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].stage, Stage::ResponseComplete);
        let mut ctx = AuditContext::begin(
            config(Level::Metadata, &[Stage::ResponseComplete]),
            &attrs("get", "pods", "", ""),
            meta("/"),
            &log,
        );
        ctx.response_complete(200, None);
        drop(ctx);
        assert_eq!(read().len(), 2, "only the second request's RequestReceived");
    }

    #[test]
    fn panic_and_impersonation() {
        let (log, read) = memory_log();
        let mut ctx = AuditContext::begin(
            config(Level::Metadata, &[Stage::RequestReceived]),
            &attrs("get", "pods", "a", "p"),
            meta("/"),
            &log,
        );
        ctx.set_impersonated_user(&UserInfo::new("bob", &["ops"]));
        ctx.panicked("boom");
        drop(ctx);
        let events = read();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].stage, Stage::Panic);
        assert_eq!(events[0].user.username, "jane");
        assert_eq!(
            events[0].impersonated_user.as_ref().unwrap().username,
            "bob"
        );
        let status = events[0].response_status.as_ref().unwrap();
        assert_eq!(
            (status.code, status.message.as_str()),
            (500, "APIServer panic'd: boom")
        );
    }

    #[test]
    fn audit_id_comes_from_the_header_or_is_a_uuid() {
        let (log, _read) = memory_log();
        let with = RequestMeta {
            audit_id: Some("from-proxy".into()),
            ..meta("/")
        };
        let ctx = AuditContext::begin(
            config(Level::Metadata, &[]),
            &attrs("get", "pods", "", ""),
            with,
            &log,
        );
        assert_eq!(ctx.audit_id(), Some("from-proxy"));
        let ctx = AuditContext::begin(
            config(Level::Metadata, &[]),
            &attrs("get", "pods", "", ""),
            meta("/"),
            &log,
        );
        assert!(uuid::Uuid::parse_str(ctx.audit_id().unwrap()).is_ok());
    }

    #[test]
    fn meta_from_http() {
        // 1023 ASCII bytes, then two-byte characters: the cut falls inside one.
        let long_agent = format!("{}{}", "a".repeat(1023), "é".repeat(10));
        let req = http::Request::builder()
            .uri("https://h:6443/api/v1/pods?watch=true&labelSelector=a%3Db")
            .header("User-Agent", long_agent.as_str())
            .header("X-Forwarded-For", "1.1.1.1, bogus, 2.2.2.2")
            .header("X-Real-Ip", "2.2.2.2")
            .header("Audit-ID", "abc")
            .body(())
            .unwrap();
        let (parts, ()) = req.into_parts();
        let m = RequestMeta::from_http(&parts, Some("::ffff:3.3.3.3".parse().unwrap()));
        assert_eq!(m.request_uri, "/api/v1/pods?watch=true&labelSelector=a%3Db");
        assert_eq!(m.source_ips, ["1.1.1.1", "2.2.2.2", "3.3.3.3"]);
        assert_eq!(m.audit_id.as_deref(), Some("abc"));
        assert!(m.user_agent.ends_with("...TRUNCATED"));
        assert_eq!(m.user_agent.len(), 1023 + "...TRUNCATED".len());
        assert!(m.received.is_some());
    }

    #[test]
    fn source_ips_as_kube() {
        let mut h = HeaderMap::new();
        let remote: IpAddr = "10.0.0.9".parse().unwrap();
        assert_eq!(source_ips(&h, Some(remote)), ["10.0.0.9"]);
        h.insert("X-Real-Ip", "10.0.0.5".parse().unwrap());
        assert_eq!(source_ips(&h, Some(remote)), ["10.0.0.5", "10.0.0.9"]);
        // The peer is not repeated when it is the last listed.
        assert_eq!(
            source_ips(&h, Some("10.0.0.5".parse().unwrap())),
            ["10.0.0.5"]
        );
        h.insert("X-Forwarded-For", "10.0.0.5,10.0.0.6".parse().unwrap());
        assert_eq!(source_ips(&h, None), ["10.0.0.5", "10.0.0.6"]);
    }
}
