//! Pruning of unknown fields, as apiextensions-apiserver's `schema/pruning/algorithm.go`,
//! followed by the removal of `null`s of non-nullable fields without a default
//! (`schema/defaulting/prunenulls.go`; those with a default are replaced later by
//! [`Schema::apply_defaults`]).
//!
//! At the resource root `apiVersion`, `kind` and `metadata` are always kept, and
//! `metadata` is left to the server (ObjectMeta has its own rules). Embedded resources
//! (`x-kubernetes-embedded-resource`) keep their `apiVersion`, `kind` and `metadata` too.

use serde_json::Value;

use super::{AdditionalProperties, Schema};

impl Schema {
    /// Drops fields the schema does not know, unless preserved; `obj` is a whole resource.
    pub fn prune(&self, obj: &mut Value) {
        prune_node(self, obj, true);
    }
}

/// Prunes `v` against `s`; `resource_root` keeps the root's type and object metadata.
pub(crate) fn prune_node(s: &Schema, v: &mut Value, resource_root: bool) {
    match v {
        Value::Object(map) => {
            let keep_meta = resource_root || s.x_embedded_resource;
            map.retain(|k, value| {
                if keep_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    return true;
                }
                if let Some(prop) = s.properties.get(k) {
                    return !(value.is_null() && !prop.nullable && prop.default.is_none());
                }
                match &s.additional_properties {
                    Some(AdditionalProperties::Schema(extra)) => {
                        !(value.is_null() && !extra.nullable && extra.default.is_none())
                    }
                    Some(AdditionalProperties::Bool(true)) => true,
                    _ => s.x_preserve_unknown_fields,
                }
            });
            for (k, value) in map.iter_mut() {
                if keep_meta && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    prune_node(prop, value, false);
                } else if let Some(AdditionalProperties::Schema(extra)) = &s.additional_properties {
                    prune_node(extra, value, false);
                }
                // Unknown fields kept by x-kubernetes-preserve-unknown-fields stay as they are.
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &s.items {
                for item in items.iter_mut() {
                    prune_node(item_schema, item, false);
                }
            }
        }
        _ => {}
    }
}
