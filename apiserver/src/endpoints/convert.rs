//! `POST /convert`: kapi as the conversion webhook of the resources it converts in
//! process (compiled resources with generated conversion), so that a cluster running
//! kube-apiserver can serve the same CRD with the conversion kapi generated. A
//! `ConversionReview` (`apiextensions.k8s.io/v1` or `v1beta1`) is answered in its own
//! version: the objects converted, or a `Failure` result saying why not. Authentication
//! and authorization are the server's, as for any path (RBAC: `post` on the
//! non-resource URL `/convert`).

use http::StatusCode;
use serde_json::{Value, json};

use crate::registry::Registry;
use crate::response::{Body, document, error_response};
use crate::status::ApiError;

/// The path.
pub const PATH: &str = "/convert";

/// Answers one review.
pub async fn serve(registry: &Registry, body: &[u8]) -> http::Response<Body> {
    let review: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return error_response(&ApiError::bad_request(format!(
                "the body is not a ConversionReview: {e}"
            )));
        }
    };
    let version = review["apiVersion"].as_str().unwrap_or_default();
    if !matches!(
        version,
        "apiextensions.k8s.io/v1" | "apiextensions.k8s.io/v1beta1"
    ) || review["kind"] != "ConversionReview"
    {
        return error_response(&ApiError::bad_request(format!(
            "expected an apiextensions.k8s.io/v1 or v1beta1 ConversionReview, got {version:?} {}",
            review["kind"]
        )));
    }
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let mut response = json!({"uid": request["uid"]});
    match convert(registry, objects, desired).await {
        Ok(converted) => {
            response["result"] = json!({"status": "Success"});
            response["convertedObjects"] = Value::Array(converted);
        }
        Err(message) => {
            response["result"] = json!({"status": "Failure", "message": message});
        }
    }
    let answer = json!({"apiVersion": version, "kind": "ConversionReview", "response": response});
    document(
        StatusCode::OK,
        "application/json",
        serde_json::to_vec(&answer).unwrap_or_default(),
    )
}

async fn convert(
    registry: &Registry,
    objects: Vec<Value>,
    desired: &str,
) -> Result<Vec<Value>, String> {
    let Some(first) = objects.first() else {
        return Ok(objects);
    };
    let group = desired.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = first["kind"].as_str().unwrap_or_default();
    let store = registry
        .stores()
        .into_iter()
        .find(|s| {
            let info = s.info();
            info.group == group
                && info.kind == kind
                && s.converts()
                && registry.is_compiled(group, &info.plural)
        })
        .ok_or_else(|| format!("this server converts no {kind} of group {group:?}"))?;
    store
        .convert_objects(objects, desired)
        .await
        .map_err(|e| e.message)
}
