//! `admission.k8s.io/v1` `AdmissionReview`: the request kapi sends, the checks on the
//! response (kube-apiserver's `VerifyAdmissionResponse`), a denial as the `Status` the
//! client gets (`ToStatusErr`), and a mutating webhook's JSONPatch.

use base64::Engine;
use http::StatusCode;
use kapi_auth::UserInfo;
use serde_json::{Map, Value, json};

use kapi_apiserver::registry::AdmissionRequest;
use kapi_apiserver::status::ApiError;

/// `apiVersion` of every review.
pub const API_VERSION: &str = "admission.k8s.io/v1";

/// Group, version and name of what a webhook is told about: the resource (plural) or
/// the kind, in the version the webhook asked for (see `matchPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gvx<'a> {
    /// API group.
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Resource or kind.
    pub name: &'a str,
}

/// What one call is about besides the request: the resource and kind the webhook is
/// sent, which differ from the request's under `matchPolicy: Equivalent`.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// The resource the webhook's rules matched.
    pub resource: Gvx<'a>,
    /// Its kind.
    pub kind: Gvx<'a>,
    /// The request's own resource.
    pub request_resource: Gvx<'a>,
    /// The request's own kind.
    pub request_kind: Gvx<'a>,
    /// The namespace as the review carries it (a Namespace's own name for Namespaces).
    pub namespace: &'a str,
}

fn gvr(g: Gvx<'_>) -> Value {
    json!({"group": g.group, "version": g.version, "resource": g.name})
}

fn gvk(g: Gvx<'_>) -> Value {
    json!({"group": g.group, "version": g.version, "kind": g.name})
}

/// The `request` of a review (without `object` and `oldObject`, which
/// [`review`] adds): also the `request` variable of match conditions.
pub fn request_fields(
    uid: &str,
    user: &UserInfo,
    req: &AdmissionRequest<'_>,
    subject: &Subject<'_>,
) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("uid".into(), json!(uid));
    r.insert("kind".into(), gvk(subject.kind));
    r.insert("resource".into(), gvr(subject.resource));
    if !req.subresource.is_empty() {
        r.insert("subResource".into(), json!(req.subresource));
    }
    r.insert("requestKind".into(), gvk(subject.request_kind));
    r.insert("requestResource".into(), gvr(subject.request_resource));
    if !req.subresource.is_empty() {
        r.insert("requestSubResource".into(), json!(req.subresource));
    }
    if !req.name.is_empty() {
        r.insert("name".into(), json!(req.name));
    }
    if !subject.namespace.is_empty() {
        r.insert("namespace".into(), json!(subject.namespace));
    }
    r.insert("operation".into(), json!(req.operation.as_str()));
    let mut u = Map::new();
    if !user.name.is_empty() {
        u.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        u.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        u.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        u.insert("extra".into(), json!(user.extra));
    }
    r.insert("userInfo".into(), Value::Object(u));
    r.insert("dryRun".into(), json!(req.dry_run));
    let options_kind = match req.operation {
        kapi_apiserver::registry::Operation::Create => "CreateOptions",
        kapi_apiserver::registry::Operation::Update => "UpdateOptions",
        kapi_apiserver::registry::Operation::Delete => "DeleteOptions",
    };
    let mut options = json!({"kind": options_kind, "apiVersion": "meta.k8s.io/v1"});
    if req.dry_run {
        options["dryRun"] = json!(["All"]);
    }
    r.insert("options".into(), options);
    r
}

/// The whole `AdmissionReview` sent to a webhook. Absent objects are `null`, as
/// kube-apiserver sends them.
pub fn review(request: Map<String, Value>, obj: Option<&Value>, old: Option<&Value>) -> Value {
    let mut request = request;
    request.insert("object".into(), obj.cloned().unwrap_or(Value::Null));
    request.insert("oldObject".into(), old.cloned().unwrap_or(Value::Null));
    json!({"apiVersion": API_VERSION, "kind": "AdmissionReview", "request": request})
}

/// A webhook's answer, checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// `response.allowed`.
    pub allowed: bool,
    /// `response.status`, the reason of a denial.
    pub status: Option<Value>,
    /// The decoded `response.patch` of a mutating webhook.
    pub patch: Option<Vec<u8>>,
    /// `response.patchType`.
    pub patch_type: Option<String>,
    /// `response.warnings`.
    pub warnings: Vec<String>,
}

/// Checks a response body as kube-apiserver does: a v1 `AdmissionReview` with a
/// `response` whose `uid` is the request's; only a mutating webhook may send a patch,
/// and then with its type. The error is the reason, for "received invalid webhook
/// response: ...".
pub fn verify(uid: &str, mutating: bool, body: &[u8]) -> Result<Verdict, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let response = review
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("webhook response was absent")?;
    let got_uid = response["uid"].as_str().unwrap_or_default();
    if got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let api_version = review["apiVersion"].as_str().unwrap_or_default();
    let kind = review["kind"].as_str().unwrap_or_default();
    if api_version != API_VERSION || kind != "AdmissionReview" {
        return Err(format!(
            "expected webhook response of {API_VERSION}, Kind=AdmissionReview, got {api_version}, Kind={kind}"
        ));
    }
    let patch = match response.get("patch").and_then(Value::as_str) {
        Some(p) if !p.is_empty() => Some(
            base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("response.patch is not base64: {e}"))?,
        ),
        _ => None,
    };
    let patch_type = match response.get("patchType") {
        None | Some(Value::Null) => None,
        Some(t) => Some(t.as_str().unwrap_or_default().to_string()),
    };
    if mutating {
        if patch.is_some() && patch_type.is_none() {
            return Err("webhook returned response.patch but not response.patchType".into());
        }
        if patch.is_none() && patch_type.is_some() {
            return Err("webhook returned response.patchType but not response.patch".into());
        }
        if patch_type.as_deref() == Some("") {
            return Err("webhook returned invalid response.patchType of \"\"".into());
        }
    } else {
        if patch.is_some() {
            return Err("validating webhook may not return response.patch".into());
        }
        if patch_type.is_some() {
            return Err("validating webhook may not return response.patchType".into());
        }
    }
    Ok(Verdict {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        patch_type,
        warnings: response["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// `StatusReason`s of apimachinery: the `reason` of an error is a `&'static str`, so a
/// webhook's reason passes through when it is one of these, and is left empty
/// otherwise.
const REASONS: [&str; 19] = [
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "AlreadyExists",
    "Conflict",
    "Gone",
    "Invalid",
    "ServerTimeout",
    "StoreReadError",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "Expired",
    "ServiceUnavailable",
];

/// A denial as the error the client gets (kube's `ToStatusErr`): the webhook's code
/// (at least 400), reason and details, and the message
/// `admission webhook "NAME" denied the request: MESSAGE`.
pub fn denial(webhook: &str, status: Option<&Value>) -> ApiError {
    let empty = Value::Null;
    let status = status.unwrap_or(&empty);
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .and_then(|c| StatusCode::from_u16(c).ok())
        .unwrap_or(StatusCode::BAD_REQUEST);
    let given_reason = status["reason"].as_str().unwrap_or_default();
    let reason = REASONS
        .iter()
        .find(|r| **r == given_reason)
        .copied()
        .unwrap_or("");
    let denied = format!("admission webhook {webhook:?} denied the request");
    let message = match status["message"].as_str().filter(|m| !m.is_empty()) {
        Some(m) => format!("{denied}: {m}"),
        None if !given_reason.is_empty() => format!("{denied}: {given_reason}"),
        None => format!("{denied} without explanation"),
    };
    ApiError {
        code,
        reason,
        message,
        details: status.get("details").filter(|d| d.is_object()).cloned(),
        continue_token: None,
    }
}

/// Why a patch could not be used.
#[derive(Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The webhook sent something unusable: a call error (`failurePolicy` decides).
    Calling(String),
    /// The patch does not apply to the object: an internal error, whatever the policy.
    Apply(String),
}

/// Applies a mutating webhook's patch to `obj`; returns whether the object changed.
pub fn apply_patch(
    obj: &mut Value,
    patch_type: Option<&str>,
    patch: &[u8],
) -> Result<bool, PatchError> {
    let ops: json_patch::Patch = serde_json::from_slice(patch).map_err(|e| {
        PatchError::Calling(format!(
            "received undecodable patch in webhook response: {e}"
        ))
    })?;
    if ops.0.is_empty() {
        return Ok(false);
    }
    if patch_type != Some("JSONPatch") {
        return Err(PatchError::Calling(format!(
            "unsupported patch type {:?}",
            patch_type.unwrap_or_default()
        )));
    }
    let mut patched = obj.clone();
    json_patch::patch(&mut patched, &ops).map_err(|e| PatchError::Apply(e.to_string()))?;
    let changed = patched != *obj;
    *obj = patched;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::webhook::widget_info;
    use kapi_apiserver::registry::Operation;

    fn body(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    fn response(uid: &str, extra: Value) -> Vec<u8> {
        let mut r = json!({"uid": uid, "allowed": true});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        body(json!({"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": r}))
    }

    #[test]
    fn request_carries_what_kube_sends() {
        let info = widget_info("v1");
        let req = AdmissionRequest {
            operation: Operation::Update,
            info: &info,
            subresource: "status",
            namespace: Some("ns"),
            name: "w1",
            dry_run: true,
        };
        let mut user = UserInfo::new("jane", &["devs", "system:authenticated"]);
        user.uid = "u-1".into();
        user.extra.insert("scopes".into(), vec!["a".into()]);
        let res = Gvx {
            group: "example.kapi.dev",
            version: "v1",
            name: "widgets",
        };
        let kind = Gvx {
            name: "Widget",
            ..res
        };
        let subject = Subject {
            resource: res,
            kind,
            request_resource: res,
            request_kind: kind,
            namespace: "ns",
        };
        let new = json!({"metadata": {"name": "w1"}, "spec": 2});
        let old = json!({"metadata": {"name": "w1"}, "spec": 1});
        let r = review(
            request_fields("abc", &user, &req, &subject),
            Some(&new),
            Some(&old),
        );
        assert_eq!(r["apiVersion"], API_VERSION);
        assert_eq!(r["kind"], "AdmissionReview");
        let r = &r["request"];
        assert_eq!(r["uid"], "abc");
        assert_eq!(
            r["kind"],
            json!({"group": "example.kapi.dev", "version": "v1", "kind": "Widget"})
        );
        assert_eq!(
            r["resource"],
            json!({"group": "example.kapi.dev", "version": "v1", "resource": "widgets"})
        );
        assert_eq!(r["requestResource"], r["resource"]);
        assert_eq!(r["subResource"], "status");
        assert_eq!(r["requestSubResource"], "status");
        assert_eq!(r["name"], "w1");
        assert_eq!(r["namespace"], "ns");
        assert_eq!(r["operation"], "UPDATE");
        assert_eq!(
            r["userInfo"],
            json!({"username": "jane", "uid": "u-1",
                "groups": ["devs", "system:authenticated"], "extra": {"scopes": ["a"]}})
        );
        assert_eq!(r["object"], new);
        assert_eq!(r["oldObject"], old);
        assert_eq!(r["dryRun"], true);
        assert_eq!(
            r["options"],
            json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]})
        );

        let create = AdmissionRequest {
            operation: Operation::Create,
            subresource: "",
            name: "",
            dry_run: false,
            ..req
        };
        let r = review(
            request_fields("x", &UserInfo::default(), &create, &subject),
            Some(&new),
            None,
        );
        let r = &r["request"];
        assert!(r.get("subResource").is_none() && r.get("name").is_none());
        assert_eq!(r["oldObject"], Value::Null);
        assert_eq!(r["options"]["kind"], "CreateOptions");
        assert_eq!(r["userInfo"], json!({}));
    }

    #[test]
    fn responses_are_checked() {
        let ok = verify("u1", false, &response("u1", json!({}))).unwrap();
        assert!(ok.allowed);
        assert_eq!(
            verify("u1", false, &response("u2", json!({}))).unwrap_err(),
            "expected response.uid=\"u1\", got \"u2\""
        );
        let no_response = body(json!({"apiVersion": API_VERSION, "kind": "AdmissionReview"}));
        assert_eq!(
            verify("u1", true, &no_response).unwrap_err(),
            "webhook response was absent"
        );
        let beta = body(json!({"apiVersion": "admission.k8s.io/v1beta1",
            "kind": "AdmissionReview", "response": {"uid": "u1", "allowed": true}}));
        assert!(
            verify("u1", true, &beta)
                .unwrap_err()
                .starts_with("expected webhook response of admission.k8s.io/v1")
        );
        assert!(verify("u1", true, b"not json").is_err());
        let patch = base64::engine::general_purpose::STANDARD.encode("[]");
        assert_eq!(
            verify("u1", false, &response("u1", json!({"patch": patch}))).unwrap_err(),
            "validating webhook may not return response.patch"
        );
        assert_eq!(
            verify(
                "u1",
                false,
                &response("u1", json!({"patchType": "JSONPatch"}))
            )
            .unwrap_err(),
            "validating webhook may not return response.patchType"
        );
        assert_eq!(
            verify("u1", true, &response("u1", json!({"patch": patch}))).unwrap_err(),
            "webhook returned response.patch but not response.patchType"
        );
        assert_eq!(
            verify(
                "u1",
                true,
                &response("u1", json!({"patchType": "JSONPatch"}))
            )
            .unwrap_err(),
            "webhook returned response.patchType but not response.patch"
        );
        let v = verify(
            "u1",
            true,
            &response(
                "u1",
                json!({"patch": patch, "patchType": "JSONPatch", "warnings": ["careful"]}),
            ),
        )
        .unwrap();
        assert_eq!(v.patch.as_deref(), Some(&b"[]"[..]));
        assert_eq!(v.patch_type.as_deref(), Some("JSONPatch"));
        assert_eq!(v.warnings, vec!["careful".to_string()]);
        let denied = verify(
            "u1",
            false,
            &response(
                "u1",
                json!({"allowed": false, "status": {"code": 403, "message": "no"}}),
            ),
        )
        .unwrap();
        assert!(!denied.allowed);
        assert_eq!(denied.status.unwrap()["code"], 403);
    }

    #[test]
    fn denials_read_as_kube_words_them() {
        let e = denial(
            "deny.example.com",
            Some(&json!({"code": 403, "reason": "Forbidden", "message": "not today"})),
        );
        assert_eq!(e.code, StatusCode::FORBIDDEN);
        assert_eq!(e.reason, "Forbidden");
        assert_eq!(
            e.message,
            "admission webhook \"deny.example.com\" denied the request: not today"
        );
        // A code under 400 becomes 400; the reason stands in for a missing message.
        let e = denial("w", Some(&json!({"code": 200, "reason": "Invalid"})));
        assert_eq!(e.code, StatusCode::BAD_REQUEST);
        assert_eq!(e.reason, "Invalid");
        assert_eq!(
            e.message,
            "admission webhook \"w\" denied the request: Invalid"
        );
        let e = denial("w", None);
        assert_eq!(e.code, StatusCode::BAD_REQUEST);
        assert_eq!(e.reason, "");
        assert_eq!(
            e.message,
            "admission webhook \"w\" denied the request without explanation"
        );
        let e = denial(
            "w",
            Some(
                &json!({"code": 422, "reason": "PolicyViolation", "message": "m",
                "details": {"causes": [{"field": "spec"}]}}),
            ),
        );
        assert_eq!(e.code, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(e.reason, "");
        assert_eq!(e.details.unwrap()["causes"][0]["field"], "spec");
    }

    #[test]
    fn patches() {
        let mut obj = json!({"metadata": {"name": "a"}});
        let add = br#"[{"op": "add", "path": "/metadata/labels", "value": {"x": "1"}}]"#;
        assert_eq!(apply_patch(&mut obj, Some("JSONPatch"), add), Ok(true));
        assert_eq!(obj["metadata"]["labels"]["x"], "1");
        // The same again changes nothing.
        let same = br#"[{"op": "replace", "path": "/metadata/labels/x", "value": "1"}]"#;
        assert_eq!(apply_patch(&mut obj, Some("JSONPatch"), same), Ok(false));
        assert_eq!(apply_patch(&mut obj, Some("JSONPatch"), b"[]"), Ok(false));
        assert!(matches!(
            apply_patch(&mut obj, Some("JSONPatch"), b"{"),
            Err(PatchError::Calling(m)) if m.starts_with("received undecodable patch")
        ));
        assert!(matches!(
            apply_patch(&mut obj, Some("MergePatch"), add),
            Err(PatchError::Calling(m)) if m == "unsupported patch type \"MergePatch\""
        ));
        // A failed test leaves the object as it was.
        let failing = br#"[{"op": "add", "path": "/spec", "value": 1},
            {"op": "test", "path": "/metadata/name", "value": "b"}]"#;
        let before = obj.clone();
        assert!(matches!(
            apply_patch(&mut obj, Some("JSONPatch"), failing),
            Err(PatchError::Apply(_))
        ));
        assert_eq!(obj, before);
    }
}
