//! Reading and writing the `metadata` of objects held as JSON values, the form the
//! generic machinery works with for every resource.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// `metadata.<field>` as a string, or `""`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj, field).and_then(Value::as_str).unwrap_or("")
}

/// `metadata.<field>`, if present (cheaper than `Value::pointer`, which splits and
/// unescapes its path on every call).
pub fn meta<'a>(obj: &'a Value, field: &str) -> Option<&'a Value> {
    obj.get("metadata").and_then(|m| m.get(field))
}

/// `metadata.name`.
pub fn name(obj: &Value) -> &str {
    meta_str(obj, "name")
}

/// `metadata.namespace`.
pub fn namespace(obj: &Value) -> &str {
    meta_str(obj, "namespace")
}

/// The `metadata` map, created when missing (or when it is not a map).
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = obj.as_object_mut().expect("made an object above");
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("made an object above")
}

/// Sets `metadata.<field>`, or removes it when `value` is `None`.
pub fn set_meta(obj: &mut Value, field: &str, value: Option<Value>) {
    let meta = metadata_mut(obj);
    match value {
        Some(v) => {
            meta.insert(field.to_string(), v);
        }
        None => {
            meta.remove(field);
        }
    }
}

/// `metadata.labels` as a map (non-string values are skipped: validation reports them).
pub fn labels(obj: &Value) -> BTreeMap<String, String> {
    meta(obj, "labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj, "finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces `metadata.finalizers` (removing the field when empty, as the API does).
pub fn set_finalizers(obj: &mut Value, finalizers: &[String]) {
    let value = (!finalizers.is_empty()).then(|| Value::from(finalizers.to_vec()));
    set_meta(obj, "finalizers", value);
}

/// True once `metadata.deletionTimestamp` is set.
pub fn is_being_deleted(obj: &Value) -> bool {
    !meta_str(obj, "deletionTimestamp").is_empty()
}

/// The current time as the API writes timestamps (RFC 3339, seconds, UTC).
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A value found by a dotted field path (`spec.color`), rendered as a field selector
/// compares it: strings as they are, other scalars as JSON.
pub fn field_value(obj: &Value, dotted: &str) -> Option<String> {
    let mut cur = obj;
    for part in dotted.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Null | Value::Object(_) | Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

/// The fields of `ObjectMeta`; anything else in `metadata` is unknown and dropped, as
/// kube-apiserver's decoding drops it.
const OBJECT_META_FIELDS: &[&str] = &[
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// Keeps the metadata the server sets (uid, creation and deletion timestamps, the
/// deletion grace period) from the stored object `old` in its replacement `new`, and
/// sets `new`'s resourceVersion to `old`'s, whatever the client sent.
pub fn keep_server_metadata(new: &mut Value, old: &Value) {
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        let keep = meta(old, field).cloned();
        set_meta(new, field, keep);
    }
    let rv = meta_str(old, "resourceVersion").to_string();
    set_meta(new, "resourceVersion", Some(Value::String(rv)));
}

/// Removes unknown fields from `metadata`.
pub fn prune_metadata(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|k, _| OBJECT_META_FIELDS.contains(&k.as_str()));
    }
}
