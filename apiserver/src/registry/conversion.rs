//! Conversion between the versions of one resource whose versions differ in shape (a
//! CRD with `conversion.strategy: Webhook`). A store with a [`Converter`] reads objects
//! stored in another version through it, and writes objects in its storage version
//! through it, as kube-apiserver's storage codec converts at the edges of the storage.
//!
//! The checks around a conversion are generic, as in kube's `delegatingCRConverter`:
//! only objects in another version are sent, all of them in one call; the answer must
//! hold as many objects, each in the wanted version and of the same kind, name,
//! namespace and uid; its metadata is the original's, except labels and annotations,
//! which a conversion may change (validated then). The [`Converter`] only converts.

use std::sync::Arc;

use async_trait::async_trait;
use kapi_core::FieldPath;
use kapi_core::conversion::VersionConverter;
use kapi_core::meta::{validate_annotations, validate_labels};
use serde_json::{Map, Value};

use crate::status::ApiError;

/// A conversion generated into the server (`kapi_core::conversion`), as a
/// [`Converter`].
pub struct InProcess(pub Arc<dyn VersionConverter>);

#[async_trait]
impl Converter for InProcess {
    async fn convert(&self, objects: Vec<Value>, api_version: &str) -> Result<Vec<Value>, String> {
        objects
            .into_iter()
            .map(|o| self.0.convert(o, api_version))
            .collect()
    }
}

/// Converts objects of one resource to one of its versions.
#[async_trait]
pub trait Converter: Send + Sync {
    /// `objects` (none of them in `api_version`), converted to `api_version`, in order;
    /// an error says why the conversion failed.
    async fn convert(&self, objects: Vec<Value>, api_version: &str) -> Result<Vec<Value>, String>;
}

fn api_version(obj: &Value) -> &str {
    obj.get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn kind(obj: &Value) -> &str {
    obj.get("kind").and_then(Value::as_str).unwrap_or_default()
}

/// Go's `GroupVersionKind.String()`: `group/version, Kind=Kind`.
fn gvk(obj: &Value) -> String {
    format!("{}, Kind={}", api_version(obj), kind(obj))
}

/// `objects` in `target`: those in another version converted by `converter` in one
/// call and checked; a failure is kube's 500 (`conversion for … failed: …`).
pub async fn convert(
    converter: &dyn Converter,
    mut objects: Vec<Value>,
    target: &str,
) -> Result<Vec<Value>, ApiError> {
    let pending: Vec<usize> = (0..objects.len())
        .filter(|i| api_version(&objects[*i]) != target)
        .collect();
    let Some(first) = pending.first() else {
        return Ok(objects);
    };
    let from = gvk(&objects[*first]);
    let failed = |why: String| ApiError::internal_reason(format!("conversion for {from} {why}"));
    let sent = pending.iter().map(|i| objects[*i].clone()).collect();
    let converted = converter
        .convert(sent, target)
        .await
        .map_err(|e| failed(format!("failed: {e}")))?;
    if converted.len() != pending.len() {
        return Err(failed(format!(
            "returned {} objects, expected {}",
            converted.len(),
            pending.len()
        )));
    }
    for (n, (i, mut out)) in pending.into_iter().zip(converted).enumerate() {
        // kube counts from 1 here: its index is incremented before the messages.
        let at = n + 1;
        let original = &objects[i];
        if api_version(&out) != target {
            return Err(failed(format!(
                "returned invalid converted object at index {at}: invalid groupVersion (expected {target}, received {})",
                api_version(&out)
            )));
        }
        if kind(&out) != kind(original) {
            return Err(failed(format!(
                "returned invalid converted object at index {at}: invalid kind (expected {}, received {})",
                kind(original),
                kind(&out)
            )));
        }
        if let Err(why) = same_identity(original, &out) {
            return Err(failed(format!(
                "returned invalid converted object at index {at}: {why}"
            )));
        }
        if let Err(why) = restore_metadata(original, &mut out) {
            return Err(failed(format!(
                "returned invalid metadata in object at index {at}: {why}"
            )));
        }
        objects[i] = out;
    }
    Ok(objects)
}

/// kube's `validateConvertedObject`: kind, name, namespace and uid are unchanged.
fn same_identity(original: &Value, converted: &Value) -> Result<(), String> {
    let meta = |o: &Value, k: &str| {
        o.pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    for (field, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (e, a) = (meta(original, field), meta(converted, field));
        if e != a {
            return Err(format!("must have the same {what}: {e} != {a}"));
        }
    }
    Ok(())
}

/// kube's `restoreObjectMeta`: the converted object gets the original's metadata, with
/// the labels and annotations the conversion returned (validated when they changed).
fn restore_metadata(original: &Value, converted: &mut Value) -> Result<(), String> {
    let original_meta = original.get("metadata");
    let converted_meta = match (converted.get("metadata"), original_meta) {
        (None, None) => return Ok(()),
        (None, Some(_)) => return Err("missing metadata in converted object".into()),
        (Some(Value::Object(m)), _) => m.clone(),
        (Some(other), _) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ));
        }
    };
    let mut result: Map<String, Value> = match original_meta {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    for field in ["labels", "annotations"] {
        let Some(returned) = converted_meta.get(field).filter(|v| !v.is_null()) else {
            result.remove(field);
            continue;
        };
        let Some(returned_map) = returned.as_object() else {
            return Err(format!(
                "invalid metadata.{field} of type {} in converted object",
                go_type(returned)
            ));
        };
        if let Some((k, v)) = returned_map.iter().find(|(_, v)| !v.is_string()) {
            return Err(format!(
                "metadata.{field}[{k}] must be a string, but is {} in converted object",
                go_type(v)
            ));
        }
        if result.get(field) != Some(returned) {
            let errs = if field == "labels" {
                validate_labels(Some(returned), &FieldPath::new("metadata.labels"))
            } else {
                validate_annotations(Some(returned), &FieldPath::new("metadata.annotation"))
            };
            if !errs.is_empty() {
                return Err(aggregate(&errs));
            }
        }
        result.insert(field.to_string(), returned.clone());
    }
    if let Some(map) = converted.as_object_mut() {
        map.insert("metadata".into(), Value::Object(result));
    }
    Ok(())
}

/// An error list as Go's `ToAggregate().Error()` prints it.
fn aggregate(errs: &kapi_core::ErrorList) -> String {
    let all: Vec<String> = errs.iter().map(ToString::to_string).collect();
    match all.as_slice() {
        [one] => one.clone(),
        _ => format!("[{}]", all.join(", ")),
    }
}

/// The Go type a JSON value decodes to, for messages.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    /// What a test does to the converted objects.
    type Tamper = fn(&mut Vec<Value>);

    /// Renames `spec.a` to `spec.b` and applies `tamper` to what it returns.
    struct Fake {
        calls: Mutex<Vec<usize>>,
        tamper: Tamper,
    }

    #[async_trait]
    impl Converter for Fake {
        async fn convert(&self, objects: Vec<Value>, to: &str) -> Result<Vec<Value>, String> {
            self.calls.lock().unwrap().push(objects.len());
            let mut out: Vec<Value> = objects
                .into_iter()
                .map(|mut o| {
                    o["apiVersion"] = json!(to);
                    if let Some(a) = o["spec"].as_object_mut().and_then(|s| s.remove("a")) {
                        o["spec"]["b"] = a;
                    }
                    o
                })
                .collect();
            (self.tamper)(&mut out);
            Ok(out)
        }
    }

    fn fake(tamper: Tamper) -> Fake {
        Fake {
            calls: Mutex::new(Vec::new()),
            tamper,
        }
    }

    fn obj(version: &str, name: &str) -> Value {
        json!({"apiVersion": format!("x.io/{version}"), "kind": "W",
            "metadata": {"name": name, "uid": format!("u-{name}"), "labels": {"l": "1"},
                "resourceVersion": "5"},
            "spec": {"a": 1}})
    }

    #[tokio::test]
    async fn only_other_versions_are_sent_in_one_call() {
        let f = fake(|_| {});
        let out = convert(
            &f,
            vec![obj("v1", "a"), obj("v2", "b"), obj("v1", "c")],
            "x.io/v2",
        )
        .await
        .unwrap();
        assert_eq!(*f.calls.lock().unwrap(), vec![2]);
        assert_eq!(out[0]["spec"], json!({"b": 1}));
        assert_eq!(out[1]["spec"], json!({"a": 1}), "already in v2: untouched");
        assert_eq!(out[2]["apiVersion"], "x.io/v2");
        assert_eq!(out[2]["metadata"]["resourceVersion"], "5");
        let none = convert(&f, vec![obj("v2", "a")], "x.io/v2").await.unwrap();
        assert_eq!(none.len(), 1);
        assert_eq!(
            f.calls.lock().unwrap().len(),
            1,
            "nothing to convert: no call"
        );
    }

    #[tokio::test]
    async fn metadata_is_restored_but_labels_and_annotations_kept() {
        let f = fake(|out| {
            out[0]["metadata"]["resourceVersion"] = json!("999");
            out[0]["metadata"]["generation"] = json!(7);
            out[0]["metadata"]["labels"] = json!({"l": "2"});
            out[0]["metadata"]["annotations"] = json!({"a": "b"});
        });
        let out = convert(&f, vec![obj("v1", "a")], "x.io/v2").await.unwrap();
        let meta = &out[0]["metadata"];
        assert_eq!(meta["resourceVersion"], "5");
        assert!(meta.get("generation").is_none());
        assert_eq!(meta["labels"], json!({"l": "2"}));
        assert_eq!(meta["annotations"], json!({"a": "b"}));
    }

    #[tokio::test]
    async fn bad_answers_are_kubes_errors() {
        let cases: [(Tamper, &str); 7] = [
            (
                |o| {
                    o.pop();
                },
                "conversion for x.io/v1, Kind=W returned 0 objects, expected 1",
            ),
            (
                |o| o[0]["apiVersion"] = json!("x.io/v3"),
                "at index 1: invalid groupVersion (expected x.io/v2, received x.io/v3)",
            ),
            (
                |o| o[0]["kind"] = json!("Other"),
                "invalid kind (expected W, received Other)",
            ),
            (
                |o| o[0]["metadata"]["uid"] = json!("other"),
                "at index 1: must have the same UID: u-a != other",
            ),
            (
                |o| o[0]["metadata"]["name"] = json!("b"),
                "must have the same name: a != b",
            ),
            (
                |o| o[0]["metadata"]["labels"] = json!({"l": 1}),
                "invalid metadata in object at index 1: metadata.labels[l] must be a string, but is int64 in converted object",
            ),
            (
                |o| o[0]["metadata"]["labels"] = json!({"l": "not valid!"}),
                "invalid metadata in object at index 1: metadata.labels: Invalid value: \"not valid!\"",
            ),
        ];
        for (tamper, want) in cases {
            let e = convert(&fake(tamper), vec![obj("v1", "a")], "x.io/v2")
                .await
                .unwrap_err();
            assert_eq!((e.code.as_u16(), e.reason), (500, "InternalError"));
            assert!(
                e.message
                    .starts_with("Internal error occurred: conversion for x.io/v1, Kind=W "),
                "{}",
                e.message
            );
            assert!(e.message.contains(want), "{} lacks {want}", e.message);
        }
    }
}
