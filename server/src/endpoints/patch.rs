//! Patches: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch
//! driven by the schema's list types and merge keys, on every resource (beyond
//! kube-apiserver, which refuses strategic merge on custom resources with 415), and
//! server-side apply.
//!
//! Server-side apply is served without field ownership: the applied configuration
//! creates the object when it is missing and is otherwise merged into it as the
//! schema's list types and map keys say (lists of type `map` by key, `set`s by value,
//! atomic lists replaced). No `managedFields` are kept, so a field dropped from the
//! configuration is not removed and two managers never conflict (`force` has nothing
//! to do).

use kapi_core::schema::Schema;
use serde_json::Value;

use crate::status::ApiError;

/// The patch types served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json`.
    Json,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

/// The most operations a JSON patch may have (kube-apiserver's `maxJSONPatchOperations`);
/// more are refused with 413.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The media types a PATCH may carry.
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

impl PatchType {
    /// The patch type of a `Content-Type`; 415 for anything else.
    pub fn from_content_type(content_type: &str) -> Result<Self, ApiError> {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/json-patch+json" => Ok(Self::Json),
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_media_type(content_type, PATCH_TYPES)),
        }
    }

    /// Applies `patch` to `current`.
    pub fn apply(self, current: &Value, patch: &Value, schema: &Schema) -> Result<Value, ApiError> {
        match self {
            Self::Json => {
                let ops: json_patch::Patch =
                    serde_json::from_value(patch.clone()).map_err(|e| {
                        ApiError::bad_request(format!(
                            "the server rejected our request due to an error in our request: {e}"
                        ))
                    })?;
                if ops.len() > MAX_JSON_PATCH_OPERATIONS {
                    return Err(ApiError::too_large(format!(
                        "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                        ops.len()
                    )));
                }
                let mut doc = current.clone();
                json_patch::patch(&mut doc, &ops).map_err(|e| unprocessable(&e.to_string()))?;
                Ok(doc)
            }
            Self::Merge => {
                if !patch.is_object() {
                    return Err(ApiError::bad_request("a merge patch must be a JSON object"));
                }
                let mut doc = current.clone();
                json_patch::merge(&mut doc, patch);
                Ok(doc)
            }
            Self::Strategic | Self::Apply => {
                if !patch.is_object() {
                    return Err(ApiError::bad_request(
                        "a strategic merge patch must be a JSON object",
                    ));
                }
                kapi_core::patch::strategic::apply(current, patch, schema)
                    .map_err(|e| unprocessable(&e.to_string()))
            }
        }
    }
}

fn unprocessable(message: &str) -> ApiError {
    ApiError {
        code: http::StatusCode::UNPROCESSABLE_ENTITY,
        reason: "Invalid",
        message: format!(
            "the server rejected our request due to an error in our request: {message}"
        ),
        details: None,
        continue_token: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_patch_type_applies() {
        let schema =
            Schema::parse(&json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}))
                .unwrap();
        let cur = json!({"spec": {"a": 1, "b": 2}});
        let j = PatchType::Json
            .apply(
                &cur,
                &json!([{"op": "replace", "path": "/spec/a", "value": 5}]),
                &schema,
            )
            .unwrap();
        assert_eq!(j, json!({"spec": {"a": 5, "b": 2}}));
        let m = PatchType::Merge
            .apply(&cur, &json!({"spec": {"b": null}}), &schema)
            .unwrap();
        assert_eq!(m, json!({"spec": {"a": 1}}));
        let s = PatchType::Strategic
            .apply(&cur, &json!({"spec": {"c": 3}}), &schema)
            .unwrap();
        assert_eq!(s, json!({"spec": {"a": 1, "b": 2, "c": 3}}));
        let many = Value::Array(vec![
            json!({"op": "test", "path": "/spec/a", "value": 1});
            MAX_JSON_PATCH_OPERATIONS + 1
        ]);
        let refused = PatchType::Json.apply(&cur, &many, &schema).unwrap_err();
        assert_eq!(
            (refused.code.as_u16(), refused.reason),
            (413, "RequestEntityTooLarge")
        );
        let at_limit = Value::Array(vec![
            json!({"op": "test", "path": "/spec/a", "value": 1});
            MAX_JSON_PATCH_OPERATIONS
        ]);
        assert_eq!(
            PatchType::Json.apply(&cur, &at_limit, &schema).unwrap(),
            cur
        );
        let bad = PatchType::Json.apply(
            &cur,
            &json!([{"op": "test", "path": "/spec/a", "value": 9}]),
            &schema,
        );
        assert_eq!(bad.unwrap_err().code, 422);
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml").unwrap(),
            PatchType::Apply
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+cbor")
                .unwrap_err()
                .code,
            415
        );
    }
}
