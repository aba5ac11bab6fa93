//! kubectl's move from client-side to server-side apply (kube's `lastAppliedManager`
//! and `lastAppliedUpdater`): an object written by `kubectl apply` carries its last
//! configuration in an annotation, and the fields it names (with the values the
//! object still has) were set by the same person, so `kubectl apply --server-side`
//! takes them without conflict and keeps the annotation current.

use serde_json::{Value, json};

use crate::managedfields::{FieldSet, ObjectType, typed};

/// The field manager of `kubectl apply --server-side`: the only one migrated.
pub const KUBECTL: &str = "kubectl";

/// Client-side apply's record of the last configuration applied.
pub const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The annotation of `obj`, when it has a non-empty one.
fn annotation(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")?
        .get(ANNOTATION)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// The fields of `live`'s last applied configuration that still hold the values it
/// applied: the conflicts an apply by `kubectl` may take over. Empty when there is no
/// annotation, it is not JSON of `api_version`, or it cannot be typed.
pub fn allowed_conflicts(live: &Value, ty: ObjectType<'_>, api_version: &str) -> FieldSet {
    let allowed = || -> Option<FieldSet> {
        let last: Value = serde_json::from_str(annotation(live)?).ok()?;
        if last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
            return None;
        }
        let set = typed::field_set(&last, ty).ok()?;
        let changed = typed::compare(&last, live, ty).ok()?;
        Some(
            set.difference(&changed.modified)
                .difference(&changed.added)
                .difference(&changed.removed),
        )
    };
    allowed().unwrap_or_default()
}

/// Keeps the annotation current after an apply by `kubectl`: `new` gets `config`
/// (without the annotation itself) as its last applied configuration, if `live` had
/// one.
pub fn update_annotation(live: &Value, config: &Value, new: &mut Value) {
    if annotation(live).is_none() {
        return;
    }
    let mut last = config.clone();
    if let Some(annotations) = last
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(ANNOTATION);
    }
    let text = serde_json::to_string(&last).unwrap_or_default();
    if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(ANNOTATION.into(), Value::String(text));
        }
    }
}
