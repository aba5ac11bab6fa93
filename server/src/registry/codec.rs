//! Objects to storage values and back. The stored form carries no `resourceVersion`:
//! it is the storage revision, set on every read, as kube-apiserver's versioner does.

use bytes::Bytes;
use kapi_core::ResourceInfo;
use kapi_storage::KeyValue;
use serde_json::Value;

use crate::registry::object::set_meta;
use crate::status::ApiError;

/// Encodes an object for storage.
pub fn encode(obj: &Value) -> Bytes {
    let mut obj = obj.clone();
    set_meta(&mut obj, "resourceVersion", None);
    Bytes::from(serde_json::to_vec(&obj).expect("a JSON value always serializes"))
}

/// Decodes a stored value, with `resourceVersion` set to `revision`, in the version
/// `info` serves: the versions of a resource share their storage and differ only in
/// `apiVersion` (a CRD's `None` conversion).
pub fn decode(info: &ResourceInfo, value: &[u8], revision: i64) -> Result<Value, ApiError> {
    let mut obj: Value = serde_json::from_slice(value)
        .map_err(|e| ApiError::internal(&format!("decoding a stored {}", info.kind), &e))?;
    if let Some(map) = obj.as_object_mut() {
        let api_version = info.api_version();
        if map.get("apiVersion").and_then(Value::as_str) != Some(api_version.as_str()) {
            map.insert("apiVersion".into(), Value::from(api_version));
        }
    }
    set_meta(
        &mut obj,
        "resourceVersion",
        Some(Value::from(revision.to_string())),
    );
    Ok(obj)
}

/// Decodes a stored key with its revision.
pub fn decode_kv(info: &ResourceInfo, kv: &KeyValue) -> Result<Value, ApiError> {
    decode(info, &kv.value, kv.mod_revision)
}
