//! Patches: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch
//! driven by the schema's list types and merge keys, on every resource (beyond
//! kube-apiserver, which refuses strategic merge on custom resources with 415), and
//! the media type of server-side apply.
//!
//! Server-side apply itself is the store's (`Store::apply`, with field ownership
//! from `kapi_core::fieldmanager`); [`PatchType::apply`] of an apply patch merges it as
//! a strategic merge patch, which is what the scale subresource's apply does, with no
//! fields of its own to own.

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

/// The most bytes the `copy` operations of one JSON patch may copy, together
/// (kube-apiserver's `JSONPatchMaxCopyBytes`, the request body limit): each copy can
/// double the document, so without it a few hundred bytes of patch make gigabytes.
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

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
                apply_json_patch(current, &ops)
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

/// Applies a JSON patch operation by operation to a copy of `current`, counting what
/// `copy` operations copy (as its compact JSON, as kube's json-patch counts it) and
/// failing the patch, before the copy is made, once the total is over
/// [`MAX_JSON_PATCH_COPY_BYTES`]. Every other operation adds at most what the patch
/// itself holds, so the result stays within the object and twice the body limit.
fn apply_json_patch(
    current: &Value,
    ops: &[json_patch::PatchOperation],
) -> Result<Value, ApiError> {
    let mut doc = current.clone();
    let mut copied = 0usize;
    for (index, op) in ops.iter().enumerate() {
        if let json_patch::PatchOperation::Copy(copy) = op {
            // A missing `from` is the patch's own error, reported below.
            if let Some(value) = doc.pointer(copy.from.as_str()) {
                // `copied` is within the limit here: counting past what is left is moot.
                copied += json_size(value, MAX_JSON_PATCH_COPY_BYTES - copied);
                if copied > MAX_JSON_PATCH_COPY_BYTES {
                    return Err(unprocessable(&format!(
                        "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}"
                    )));
                }
            }
        }
        // The document is a copy, dropped on failure: no undo log is needed.
        json_patch::patch_unsafe(&mut doc, std::slice::from_ref(op)).map_err(|mut e| {
            e.operation = index;
            unprocessable(&e.to_string())
        })?;
    }
    Ok(doc)
}

/// The length of `value` as compact JSON, counted without making it, and only up to
/// just past `limit` (a copy of a huge value is refused as soon as it is over).
fn json_size(value: &Value, limit: usize) -> usize {
    struct Counter {
        bytes: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { bytes: 0, limit };
    // The only error is the counter's own: past the limit.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.bytes
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

    /// The security review's patch: a 1 KiB map, copied into itself `copies` times.
    fn doubling_patch(copies: usize, remove: bool) -> Value {
        let map: serde_json::Map<String, Value> = (0..16)
            .map(|i| (format!("k{i:02}"), Value::from("v".repeat(56))))
            .collect();
        let mut ops =
            vec![json!({"op": "add", "path": "/metadata/annotations", "value": {"a": map}})];
        for i in 0..copies {
            ops.push(json!({"op": "copy", "from": "/metadata/annotations/a", "path": format!("/metadata/annotations/a/c{i}")}));
        }
        if remove {
            ops.push(json!({"op": "remove", "path": "/metadata/annotations"}));
        }
        Value::Array(ops)
    }

    #[test]
    fn copies_are_bounded_by_the_bytes_they_copy() {
        let schema =
            Schema::parse(&json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}))
                .unwrap();
        let cur = json!({"metadata": {"name": "a"}});
        for remove in [true, false] {
            let e = PatchType::Json
                .apply(&cur, &doubling_patch(20, remove), &schema)
                .unwrap_err();
            assert_eq!((e.code.as_u16(), e.reason), (422, "Invalid"));
            assert!(
                e.message
                    .contains("the accumulated size increase of copy is")
                    && e.message.ends_with("exceeding the limit 3145728"),
                "{}",
                e.message
            );
            assert!(e.message.len() < 300);
        }
        // Eleven copies double 1 KiB to 2 MiB: within the limit, applied.
        let doc = PatchType::Json
            .apply(&cur, &doubling_patch(11, false), &schema)
            .unwrap();
        assert!(json_size(&doc, usize::MAX) > 2_000_000);
        let small = PatchType::Json
            .apply(&cur, &doubling_patch(3, true), &schema)
            .unwrap();
        assert_eq!(small, cur);
        // A failing operation is named by its index in the whole patch.
        let e = PatchType::Json
            .apply(
                &cur,
                &json!([{"op": "add", "path": "/x", "value": 1}, {"op": "remove", "path": "/nope"}]),
                &schema,
            )
            .unwrap_err();
        assert!(e.message.contains("operation '/1'"), "{}", e.message);
    }

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
