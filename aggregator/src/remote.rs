//! What the aggregator reads from a remote server, as the aggregator's own user
//! (`system:kube-aggregator` in `system:masters`, as kube's availability check names
//! itself): the group-version's discovery (the availability check), its entry in
//! aggregated discovery, and its OpenAPI documents.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use kapi_auth::UserInfo;
use serde_json::{Map, Value};

use crate::api_service::Spec;
use crate::backend::Backend;

/// How long one read may take (kube's availability check gives 5 s).
const TIMEOUT: Duration = Duration::from_secs(5);

/// The most a document read may be (an OpenAPI v2 document of a whole server).
const MAX_BYTES: usize = 64 << 20;

/// The accept header of aggregated discovery, v2.
const AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

fn aggregator_user() -> UserInfo {
    UserInfo::new("system:kube-aggregator", &[kapi_auth::user::MASTERS])
}

/// `GET path` on the backend: the status and the body.
async fn get(backend: &Backend, path: &str, accept: &str) -> Result<(StatusCode, Bytes), String> {
    let mut req = Request::get(path)
        .header(header::ACCEPT, accept)
        .body(Empty::new().map_err(|never| match never {}).boxed_unsync())
        .map_err(|e| e.to_string())?;
    kapi_auth::authn::set_proxy_headers(req.headers_mut(), &aggregator_user());
    let read = async {
        let (res, _in_flight) = backend.send(req, false).await?;
        let status = res.status();
        let body = Limited::new(res.into_body(), MAX_BYTES)
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>((status, body))
    };
    tokio::time::timeout(TIMEOUT, read)
        .await
        .unwrap_or_else(|_| Err("context deadline exceeded".into()))
}

/// The discovery path of `spec`'s group-version.
fn discovery_path(spec: &Spec) -> String {
    if spec.group.is_empty() {
        format!("/api/{}", spec.version)
    } else {
        format!("/apis/{}/{}", spec.group, spec.version)
    }
}

/// kube's availability check: the group-version's discovery answers 2xx; otherwise
/// kube's `FailedDiscoveryCheck` message.
pub async fn check(backend: &Backend, spec: &Spec) -> Result<(), String> {
    let url = format!("https://{}{}", backend.address(), discovery_path(spec));
    match get(backend, &discovery_path(spec), "application/json").await {
        Ok((status, _)) if status.is_success() => Ok(()),
        Ok((status, _)) => Err(format!(
            "failing or missing response from {url}: bad status from {url}: {}",
            status.as_u16()
        )),
        Err(e) => Err(format!("failing or missing response from {url}: {e}")),
    }
}

/// The group-version's `APIVersionDiscovery` from the backend's aggregated discovery.
pub async fn discovery(backend: &Backend, spec: &Spec) -> Option<Value> {
    let path = if spec.group.is_empty() {
        "/api"
    } else {
        "/apis"
    };
    let (status, body) = get(backend, path, AGGREGATED).await.ok()?;
    if !status.is_success() {
        return None;
    }
    let list: Value = serde_json::from_slice(&body).ok()?;
    let group = list["items"]
        .as_array()?
        .iter()
        .find(|g| g["metadata"]["name"].as_str().unwrap_or_default() == spec.group)?;
    group["versions"]
        .as_array()?
        .iter()
        .find(|v| v["version"] == spec.version.as_str())
        .cloned()
}

/// The `apis/{group}/{version}` key of OpenAPI v3.
pub fn openapi_v3_path(spec: &Spec) -> String {
    if spec.group.is_empty() {
        format!("api/{}", spec.version)
    } else {
        format!("apis/{}/{}", spec.group, spec.version)
    }
}

/// The group-version's OpenAPI v3 URL in the backend's index (with its hash).
pub async fn openapi_v3_url(backend: &Backend, spec: &Spec) -> Option<String> {
    let (status, body) = get(backend, "/openapi/v3", "application/json").await.ok()?;
    if !status.is_success() {
        return None;
    }
    let index: Value = serde_json::from_slice(&body).ok()?;
    index["paths"][openapi_v3_path(spec)]["serverRelativeURL"]
        .as_str()
        .map(str::to_string)
}

/// The hash of a `serverRelativeURL`'s `?hash=`.
pub fn hash_of(url: &str) -> String {
    url.split_once("hash=")
        .map(|(_, h)| h.split('&').next().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// A document at `path` on the backend.
pub async fn document(backend: &Backend, path: &str) -> Option<Bytes> {
    let (status, body) = get(backend, path, "application/json").await.ok()?;
    status.is_success().then_some(body)
}

/// The backend's OpenAPI v2 paths of the group-version, with every definition.
pub async fn openapi_v2(backend: &Backend, spec: &Spec) -> Option<Arc<Value>> {
    let body = document(backend, "/openapi/v2").await?;
    let mut swagger: Value = serde_json::from_slice(&body).ok()?;
    let prefix = format!("/{}/", openapi_v3_path(spec));
    let paths: Map<String, Value> = swagger["paths"]
        .as_object()?
        .iter()
        .filter(|(p, _)| p.starts_with(&prefix))
        .map(|(p, v)| (p.clone(), v.clone()))
        .collect();
    swagger["paths"] = Value::Object(paths);
    Some(Arc::new(swagger))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_read_from_its_url() {
        assert_eq!(hash_of("/openapi/v3/apis/x/v1?hash=ABC123"), "ABC123");
        assert_eq!(hash_of("/openapi/v3/apis/x/v1"), "");
    }
}
