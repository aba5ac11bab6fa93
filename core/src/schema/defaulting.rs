//! Structural defaulting, as apiextensions-apiserver's `schema/defaulting/algorithm.go`:
//! defaults of properties, additionalProperties and items are filled in recursively
//! (also inside defaults just applied), and a `null` of a non-nullable field that has a
//! default is replaced by the default.

use serde_json::Value;

use super::{AdditionalProperties, Schema};

impl Schema {
    /// Fills in `default`s, recursively.
    pub fn apply_defaults(&self, obj: &mut Value) {
        default_node(self, obj);
    }
}

/// A null that defaulting replaces: the field is not nullable and has a default.
fn is_non_nullable_null(v: &Value, s: &Schema) -> bool {
    v.is_null() && !s.nullable && s.default.is_some()
}

fn default_node(s: &Schema, v: &mut Value) {
    match v {
        // A quantity written as a number (`cpu: 1`) is stored as its string, as decoding
        // into Go's resource.Quantity does.
        Value::Number(n) if s.format.as_deref() == Some("quantity") => {
            *v = Value::String(n.to_string());
        }
        Value::Object(map) => {
            for (k, prop) in &s.properties {
                let Some(d) = &prop.default else { continue };
                match map.get(k) {
                    Some(existing) if !is_non_nullable_null(existing, prop) => {}
                    _ => {
                        map.insert(k.clone(), d.clone());
                    }
                }
            }
            for (k, value) in map.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    default_node(prop, value);
                } else if let Some(AdditionalProperties::Schema(extra)) = &s.additional_properties {
                    if is_non_nullable_null(value, extra) {
                        if let Some(d) = &extra.default {
                            *value = d.clone();
                        }
                    }
                    default_node(extra, value);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = &s.items else { return };
            for item in items.iter_mut() {
                if is_non_nullable_null(item, item_schema) {
                    if let Some(d) = &item_schema.default {
                        *item = d.clone();
                    }
                }
                default_node(item_schema, item);
            }
        }
        _ => {}
    }
}
