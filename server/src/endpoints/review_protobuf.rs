//! The protobuf bodies kubectl's typed clients send to the review APIs (`kubectl auth
//! can-i` posts a `SelfSubjectAccessReview`, `whoami` a `SelfSubjectReview`, `create
//! token` a `TokenRequest`), decoded into the JSON the handlers read. Only the fields
//! those requests carry are declared; prost skips the rest (`metadata`).

use prost::Message;
use serde_json::{Map, Value, json};

use crate::status::ApiError;

/// The magic bytes before every Kubernetes protobuf body.
const MAGIC: &[u8] = b"k8s\0";

#[derive(Clone, PartialEq, Message)]
struct Unknown {
    #[prost(message, optional, tag = "1")]
    type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", tag = "2")]
    raw: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct TypeMeta {
    #[prost(string, tag = "1")]
    api_version: String,
    #[prost(string, tag = "2")]
    kind: String,
}

/// `SubjectAccessReview`, `SelfSubjectAccessReview`, `LocalSubjectAccessReview`: their
/// specs share field numbers (the self one has only the first two).
#[derive(Clone, PartialEq, Message)]
struct AccessReview {
    #[prost(message, optional, tag = "2")]
    spec: Option<AccessReviewSpec>,
}

#[derive(Clone, PartialEq, Message)]
struct AccessReviewSpec {
    #[prost(message, optional, tag = "1")]
    resource_attributes: Option<ResourceAttributes>,
    #[prost(message, optional, tag = "2")]
    non_resource_attributes: Option<NonResourceAttributes>,
    #[prost(string, tag = "3")]
    user: String,
    #[prost(string, repeated, tag = "4")]
    groups: Vec<String>,
    #[prost(map = "string, message", tag = "5")]
    extra: std::collections::HashMap<String, ExtraValue>,
    #[prost(string, tag = "6")]
    uid: String,
}

#[derive(Clone, PartialEq, Message)]
struct ExtraValue {
    #[prost(string, repeated, tag = "1")]
    items: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
struct ResourceAttributes {
    #[prost(string, tag = "1")]
    namespace: String,
    #[prost(string, tag = "2")]
    verb: String,
    #[prost(string, tag = "3")]
    group: String,
    #[prost(string, tag = "4")]
    version: String,
    #[prost(string, tag = "5")]
    resource: String,
    #[prost(string, tag = "6")]
    subresource: String,
    #[prost(string, tag = "7")]
    name: String,
}

#[derive(Clone, PartialEq, Message)]
struct NonResourceAttributes {
    #[prost(string, tag = "1")]
    path: String,
    #[prost(string, tag = "2")]
    verb: String,
}

/// `SelfSubjectRulesReview`: its spec holds the namespace.
#[derive(Clone, PartialEq, Message)]
struct RulesReview {
    #[prost(message, optional, tag = "2")]
    spec: Option<RulesReviewSpec>,
}

#[derive(Clone, PartialEq, Message)]
struct RulesReviewSpec {
    #[prost(string, tag = "1")]
    namespace: String,
}

#[derive(Clone, PartialEq, Message)]
struct TokenReview {
    #[prost(message, optional, tag = "2")]
    spec: Option<TokenReviewSpec>,
}

#[derive(Clone, PartialEq, Message)]
struct TokenReviewSpec {
    #[prost(string, tag = "1")]
    token: String,
    #[prost(string, repeated, tag = "2")]
    audiences: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
struct TokenRequest {
    #[prost(message, optional, tag = "2")]
    spec: Option<TokenRequestSpec>,
}

#[derive(Clone, PartialEq, Message)]
struct TokenRequestSpec {
    #[prost(string, repeated, tag = "1")]
    audiences: Vec<String>,
    #[prost(int64, optional, tag = "4")]
    expiration_seconds: Option<i64>,
}

fn bad(e: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("error decoding request body: {e}"))
}

/// Decodes a protobuf review body into its JSON form.
pub fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("the protobuf body does not start with the Kubernetes magic bytes"))?;
    let unknown = Unknown::decode(envelope).map_err(bad)?;
    let type_meta = unknown.type_meta.unwrap_or_default();
    let raw = unknown.raw.as_slice();
    let spec = match type_meta.kind.as_str() {
        "SelfSubjectAccessReview" | "SubjectAccessReview" | "LocalSubjectAccessReview" => {
            let spec = AccessReview::decode(raw)
                .map_err(bad)?
                .spec
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(r) = spec.resource_attributes {
                out.insert(
                    "resourceAttributes".into(),
                    json!({
                        "namespace": r.namespace, "verb": r.verb, "group": r.group,
                        "version": r.version, "resource": r.resource,
                        "subresource": r.subresource, "name": r.name,
                    }),
                );
            }
            if let Some(n) = spec.non_resource_attributes {
                out.insert(
                    "nonResourceAttributes".into(),
                    json!({ "path": n.path, "verb": n.verb }),
                );
            }
            if !spec.user.is_empty() {
                out.insert("user".into(), json!(spec.user));
            }
            if !spec.groups.is_empty() {
                out.insert("groups".into(), json!(spec.groups));
            }
            if !spec.uid.is_empty() {
                out.insert("uid".into(), json!(spec.uid));
            }
            if !spec.extra.is_empty() {
                let extra: Map<String, Value> = spec
                    .extra
                    .into_iter()
                    .map(|(k, v)| (k, json!(v.items)))
                    .collect();
                out.insert("extra".into(), Value::Object(extra));
            }
            Value::Object(out)
        }
        "SelfSubjectRulesReview" => {
            let spec = RulesReview::decode(raw)
                .map_err(bad)?
                .spec
                .unwrap_or_default();
            json!({ "namespace": spec.namespace })
        }
        "TokenReview" => {
            let spec = TokenReview::decode(raw)
                .map_err(bad)?
                .spec
                .unwrap_or_default();
            json!({ "token": spec.token, "audiences": spec.audiences })
        }
        "TokenRequest" => {
            let spec = TokenRequest::decode(raw)
                .map_err(bad)?
                .spec
                .unwrap_or_default();
            let mut out = json!({ "audiences": spec.audiences });
            if let Some(s) = spec.expiration_seconds {
                out["expirationSeconds"] = json!(s);
            }
            out
        }
        _ => json!({}),
    };
    Ok(json!({
        "apiVersion": type_meta.api_version,
        "kind": type_meta.kind,
        "metadata": {},
        "spec": spec,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_subject_access_review_as_kubectl_sends_it() {
        let review = AccessReview {
            spec: Some(AccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: "default".into(),
                    verb: "list".into(),
                    resource: "secrets".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        };
        let envelope = Unknown {
            type_meta: Some(TypeMeta {
                api_version: "authorization.k8s.io/v1".into(),
                kind: "SelfSubjectAccessReview".into(),
            }),
            raw: review.encode_to_vec(),
        };
        let mut body = MAGIC.to_vec();
        body.extend(envelope.encode_to_vec());
        let v = decode(&body).unwrap();
        assert_eq!(v["kind"], "SelfSubjectAccessReview");
        assert_eq!(v["spec"]["resourceAttributes"]["verb"], "list");
        assert_eq!(v["spec"]["resourceAttributes"]["namespace"], "default");
        assert!(v["spec"].get("nonResourceAttributes").is_none());
        assert!(decode(b"not protobuf").is_err());
    }
}
