//! The APIs that answer questions instead of storing objects, as kube-apiserver serves
//! them: access reviews (`SelfSubjectAccessReview`, `SubjectAccessReview`,
//! `LocalSubjectAccessReview`, for `kubectl auth can-i`), `SelfSubjectReview` (for
//! `kubectl auth whoami`), `TokenReview`, and `TokenRequest` on
//! `serviceaccounts/{name}/token` (for `kubectl create token`).

use async_trait::async_trait;
use http::StatusCode;
use kapi_auth::UserInfo;
use kapi_auth::authz::{Attributes, Decision};
use kapi_storage::ReadAt;
use serde_json::{Map, Value, json};
use std::sync::Arc;

use kapi_apiserver::endpoints::{Api, CreateOnly, CreateOnlyPath};
use kapi_apiserver::request::ResourcePath;
use kapi_apiserver::status::ApiError;

const AUTHORIZATION: &str = "authorization.k8s.io";
const AUTHENTICATION: &str = "authentication.k8s.io";

/// The review APIs, to register with the server's [`Api`].
pub fn create_only() -> Vec<Arc<dyn CreateOnly>> {
    [
        Review::SelfAccess,
        Review::Access,
        Review::LocalAccess,
        Review::Rules,
        Review::SelfSubject,
        Review::Token,
        Review::TokenRequest,
    ]
    .into_iter()
    .map(|r| Arc::new(r) as Arc<dyn CreateOnly>)
    .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Review {
    SelfAccess,
    Access,
    LocalAccess,
    SelfSubject,
    Rules,
    Token,
    TokenRequest,
}

impl Review {
    /// The kind of the review's body.
    fn kind(self) -> &'static str {
        match self {
            Review::SelfAccess => "SelfSubjectAccessReview",
            Review::Access => "SubjectAccessReview",
            Review::LocalAccess => "LocalSubjectAccessReview",
            Review::Rules => "SelfSubjectRulesReview",
            Review::SelfSubject => "SelfSubjectReview",
            Review::Token => "TokenReview",
            Review::TokenRequest => "TokenRequest",
        }
    }
}

#[async_trait]
impl CreateOnly for Review {
    fn path(&self) -> CreateOnlyPath {
        let (group, plural) = match self {
            Review::SelfAccess => (AUTHORIZATION, "selfsubjectaccessreviews"),
            Review::Access => (AUTHORIZATION, "subjectaccessreviews"),
            Review::LocalAccess => (AUTHORIZATION, "localsubjectaccessreviews"),
            Review::Rules => (AUTHORIZATION, "selfsubjectrulesreviews"),
            Review::SelfSubject => (AUTHENTICATION, "selfsubjectreviews"),
            Review::Token => (AUTHENTICATION, "tokenreviews"),
            Review::TokenRequest => {
                return CreateOnlyPath {
                    group: "",
                    versions: &["v1"],
                    plural: "serviceaccounts",
                    subresource: Some("token"),
                };
            }
        };
        let versions: &[&str] = match self {
            Review::SelfSubject => &["v1", "v1beta1", "v1alpha1"],
            _ => &["v1"],
        };
        CreateOnlyPath {
            group,
            versions,
            plural,
            subresource: None,
        }
    }

    /// A TokenRequest, posted to core's `serviceaccounts/token`, is
    /// authentication.k8s.io/v1's.
    fn body_kind<'a>(&self, r: &'a ResourcePath) -> (&'a str, &'a str, &'static str) {
        match self {
            Review::TokenRequest => (AUTHENTICATION, "v1", self.kind()),
            _ => (r.group.as_str(), r.version.as_str(), self.kind()),
        }
    }

    async fn create(
        &self,
        api: &Api,
        r: &ResourcePath,
        body: Value,
        user: &UserInfo,
    ) -> Result<Value, ApiError> {
        match self {
            Review::SelfAccess | Review::Access | Review::LocalAccess => {
                access_review(api, *self, r, body, user).await
            }
            Review::SelfSubject => Ok(self_subject_review(r, user)),
            Review::Rules => rules_review(api, body, user),
            Review::Token => token_review(api, body).await,
            Review::TokenRequest => token_request(api, r, body).await,
        }
    }
}

/// A 422 about one field of a review, in kube-apiserver's wording.
fn invalid(kind: &str, field: &str, message: &str) -> ApiError {
    let group = if kind.ends_with("AccessReview") {
        AUTHORIZATION
    } else {
        AUTHENTICATION
    };
    let reason = if message.starts_with("Required value") {
        "FieldValueRequired"
    } else {
        "FieldValueInvalid"
    };
    ApiError {
        code: StatusCode::UNPROCESSABLE_ENTITY,
        reason: "Invalid",
        message: format!("{kind}.{group} \"\" is invalid: {field}: {message}"),
        details: Some(json!({
            "group": group,
            "kind": kind,
            "causes": [{"reason": reason, "message": message, "field": field}],
        })),
        continue_token: None,
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn extra_of(v: Option<&Value>) -> std::collections::BTreeMap<String, Vec<String>> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), strings(Some(v))))
                .collect()
        })
        .unwrap_or_default()
}

/// `user.Info` as the review APIs write it.
fn user_json(user: &UserInfo) -> Value {
    let mut v = json!({ "username": user.name });
    if !user.uid.is_empty() {
        v["uid"] = json!(user.uid);
    }
    if !user.groups.is_empty() {
        v["groups"] = json!(user.groups);
    }
    if !user.extra.is_empty() {
        v["extra"] = json!(user.extra);
    }
    v
}

async fn access_review(
    api: &Api,
    kind: Review,
    r: &ResourcePath,
    mut body: Value,
    requester: &UserInfo,
) -> Result<Value, ApiError> {
    let kind_name = kind.kind();
    let spec = body.get("spec").cloned().unwrap_or(json!({}));
    let resource = spec.get("resourceAttributes").filter(|v| v.is_object());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| v.is_object());
    match (resource, non_resource) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                kind_name,
                "spec.nonResourceAttributes",
                "Invalid value: \"\": cannot be specified in combination with resourceAttributes",
            ));
        }
        (None, None) => {
            return Err(invalid(
                kind_name,
                "spec.resourceAttributes",
                "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified",
            ));
        }
        _ => {}
    }
    let user = match kind {
        Review::SelfAccess => requester.clone(),
        _ => {
            let user = UserInfo {
                name: str_of(&spec, "user").to_string(),
                uid: str_of(&spec, "uid").to_string(),
                groups: strings(spec.get("groups")),
                extra: extra_of(spec.get("extra")),
            };
            if user.name.is_empty() && user.groups.is_empty() {
                return Err(invalid(
                    kind_name,
                    "spec.user",
                    "Invalid value: \"\": at least one of user or group must be specified",
                ));
            }
            user
        }
    };
    let mut attrs = Attributes {
        user,
        ..Attributes::default()
    };
    if let Some(ra) = resource {
        attrs.resource_request = true;
        attrs.verb = str_of(ra, "verb").to_string();
        attrs.api_group = str_of(ra, "group").to_string();
        attrs.api_version = str_of(ra, "version").to_string();
        attrs.resource = str_of(ra, "resource").to_string();
        attrs.subresource = str_of(ra, "subresource").to_string();
        attrs.name = str_of(ra, "name").to_string();
        attrs.namespace = str_of(ra, "namespace").to_string();
    } else if let Some(na) = non_resource {
        attrs.verb = str_of(na, "verb").to_string();
        attrs.path = str_of(na, "path").to_string();
    }
    if kind == Review::LocalAccess {
        let ns = r.namespace.as_deref().unwrap_or_default();
        if resource.is_none() || attrs.namespace != ns {
            return Err(invalid(
                kind_name,
                "spec.resourceAttributes.namespace",
                &format!(
                    "Invalid value: {:?}: must match metadata.namespace",
                    attrs.namespace
                ),
            ));
        }
    }
    let verdict = api.authorizer.decide(&attrs).await;
    let mut status = match verdict.decision {
        Decision::Allow(reason) => json!({ "allowed": true, "reason": reason }),
        Decision::Deny(reason) => json!({ "allowed": false, "denied": true, "reason": reason }),
        Decision::NoOpinion(reason) => json!({ "allowed": false, "reason": reason }),
    };
    if status["reason"] == "" {
        status.as_object_mut().map(|s| s.remove("reason"));
    }
    if !verdict.error.is_empty() {
        status["evaluationError"] = json!(verdict.error);
    }
    let obj = body.as_object_mut().ok_or_else(|| {
        ApiError::bad_request(format!(
            "the body of the request is not a {kind_name} object"
        ))
    })?;
    obj.insert("apiVersion".into(), json!(format!("{AUTHORIZATION}/v1")));
    obj.insert("kind".into(), json!(kind_name));
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        m.insert("creationTimestamp".into(), Value::Null);
    }
    obj.insert("status".into(), status);
    Ok(body)
}

/// `SelfSubjectRulesReview` (`kubectl auth can-i --list`): the rules the requester
/// holds in a namespace.
fn rules_review(api: &Api, mut body: Value, user: &UserInfo) -> Result<Value, ApiError> {
    let namespace = body["spec"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let everything = user.in_group(kapi_auth::user::MASTERS)
        || api
            .authorizer
            .has(kapi_apiserver::authorization::Mode::AlwaysAllow);
    let (resource_rules, non_resource_rules, errors) = if everything {
        // The privileged group's own rules (and AlwaysAllow's), as kube-apiserver's
        // authorizers report them.
        (
            vec![json!({ "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"] })],
            vec![json!({ "verbs": ["*"], "nonResourceURLs": ["*"] })],
            Vec::new(),
        )
    } else {
        // RBAC's rules, when RBAC is a mode (AlwaysDeny has none).
        let snapshot = api
            .authorizer
            .policy
            .as_ref()
            .filter(|_| {
                api.authorizer
                    .has(kapi_apiserver::authorization::Mode::Rbac)
            })
            .map(|p| p.snapshot())
            .unwrap_or_default();
        let resolved = kapi_auth::authz::rbac::resolve_rules(&snapshot, user, &namespace);
        let mut resource = Vec::new();
        let mut non_resource = Vec::new();
        for rule in resolved.rules {
            if let Some(urls) = rule.non_resource_urls.filter(|u| !u.is_empty()) {
                non_resource.push(json!({ "verbs": rule.verbs, "nonResourceURLs": urls }));
            } else {
                let mut v = json!({
                    "verbs": rule.verbs,
                    "apiGroups": rule.api_groups.unwrap_or_default(),
                    "resources": rule.resources.unwrap_or_default(),
                });
                if let Some(names) = rule.resource_names.filter(|n| !n.is_empty()) {
                    v["resourceNames"] = json!(names);
                }
                resource.push(v);
            }
        }
        let mut errors: Vec<String> = resolved.errors.iter().map(|e| e.to_string()).collect();
        if api
            .authorizer
            .has(kapi_apiserver::authorization::Mode::Webhook)
        {
            // kube's webhook authorizer lists no rules, so the list is incomplete.
            errors.push("webhook authorizer does not support user rule resolution".into());
        }
        (resource, non_resource, errors)
    };
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    let obj = body.as_object_mut().ok_or_else(|| {
        ApiError::bad_request("the body of the request is not a SelfSubjectRulesReview object")
    })?;
    obj.insert("apiVersion".into(), json!(format!("{AUTHORIZATION}/v1")));
    obj.insert("kind".into(), json!("SelfSubjectRulesReview"));
    obj.entry("metadata").or_insert_with(|| json!({}))["creationTimestamp"] = Value::Null;
    obj.insert("status".into(), status);
    Ok(body)
}

fn self_subject_review(r: &ResourcePath, user: &UserInfo) -> Value {
    json!({
        "kind": "SelfSubjectReview",
        "apiVersion": format!("{AUTHENTICATION}/{}", r.version),
        "metadata": { "creationTimestamp": null },
        "status": { "userInfo": user_json(user) },
    })
}

async fn token_review(api: &Api, mut body: Value) -> Result<Value, ApiError> {
    let spec = body.get("spec").cloned().unwrap_or(json!({}));
    let token = str_of(&spec, "token");
    if token.is_empty() {
        return Err(invalid(
            "TokenReview",
            "spec.token",
            "Required value: token must not be empty",
        ));
    }
    let audiences = strings(spec.get("audiences"));
    let status = match api
        .authenticator
        .authenticate_token(&api.registry, token, &audiences)
        .await
    {
        Ok(user) => {
            let user = user.authenticated();
            let audiences = if audiences.is_empty() {
                api.authenticator.service_accounts.api_audiences().to_vec()
            } else {
                audiences
            };
            json!({ "authenticated": true, "user": user_json(&user), "audiences": audiences })
        }
        Err(e) => json!({ "user": {}, "error": format!("[invalid bearer token, {e}]") }),
    };
    let obj = body.as_object_mut().ok_or_else(|| {
        ApiError::bad_request("the body of the request is not a TokenReview object")
    })?;
    obj.insert("apiVersion".into(), json!(format!("{AUTHENTICATION}/v1")));
    obj.insert("kind".into(), json!("TokenReview"));
    obj.entry("metadata").or_insert_with(|| json!({}))["creationTimestamp"] = Value::Null;
    obj.insert("status".into(), status);
    Ok(body)
}

async fn token_request(api: &Api, r: &ResourcePath, body: Value) -> Result<Value, ApiError> {
    let namespace = r.namespace.as_deref().unwrap_or_default();
    let name = r.name.as_deref().unwrap_or_default();
    let accounts = api
        .registry
        .get("", "v1", "serviceaccounts")
        .ok_or_else(ApiError::no_route)?;
    let account = accounts.get(Some(namespace), name, ReadAt::Latest).await?;
    let uid = account["metadata"]["uid"].as_str().unwrap_or_default();
    let spec = body.get("spec").cloned().unwrap_or(json!({}));
    let audiences = strings(spec.get("audiences"));
    let seconds = spec
        .get("expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(kapi_auth::authn::service_account::DEFAULT_EXPIRATION_SECONDS);
    if seconds < kapi_auth::authn::service_account::MIN_EXPIRATION_SECONDS {
        return Err(invalid(
            "TokenRequest",
            "spec.expirationSeconds",
            &format!("Invalid value: {seconds}: may not specify a duration less than 10 minutes"),
        ));
    }
    if seconds > 1 << 32 {
        return Err(invalid(
            "TokenRequest",
            "spec.expirationSeconds",
            &format!(
                "Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds"
            ),
        ));
    }
    let now = chrono::Utc::now();
    let (token, claims) = api
        .authenticator
        .service_accounts
        .issue(namespace, name, uid, &audiences, seconds, now.timestamp())
        .map_err(|e| ApiError::internal("issuing a token", &std::io::Error::other(e)))?;
    let expires = chrono::DateTime::from_timestamp(claims.exp, 0)
        .unwrap_or(now)
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut spec_out = Map::new();
    spec_out.insert("audiences".into(), json!(claims.aud));
    spec_out.insert("expirationSeconds".into(), json!(seconds));
    spec_out.insert(
        "boundObjectRef".into(),
        spec.get("boundObjectRef").cloned().unwrap_or(Value::Null),
    );
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": format!("{AUTHENTICATION}/v1"),
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        },
        "spec": spec_out,
        "status": { "token": token, "expirationTimestamp": expires },
    }))
}
