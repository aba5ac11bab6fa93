//! `x-kubernetes-list-type` set and map uniqueness (`schema/listtype/validation.go`),
//! and the key of a list-map item.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::equality::canonical;
use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::{AdditionalProperties, ListType, Schema};

pub(super) fn list_types(s: &Schema, v: &Value, path: &FieldPath, errs: &mut ErrorList) {
    match v {
        Value::Array(items) => {
            match s.x_list_type {
                Some(ListType::Set) => {
                    let mut seen = HashSet::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        if !seen.insert(canonical(item)) {
                            errs.push(FieldError::duplicate(&path.index(i), item.clone()));
                        }
                    }
                }
                Some(ListType::Map) => {
                    let mut seen = HashSet::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        let Some(key) = map_key(s, item) else {
                            continue;
                        };
                        if !seen.insert(canonical(&key)) {
                            errs.push(FieldError::duplicate(&path.index(i), key));
                        }
                    }
                }
                _ => {}
            }
            if let Some(item_schema) = &s.items {
                for (i, item) in items.iter().enumerate() {
                    list_types(item_schema, item, &path.index(i), errs);
                }
            }
        }
        Value::Object(map) => {
            for (k, value) in map {
                if let Some(prop) = s.properties.get(k) {
                    list_types(prop, value, &path.child(k), errs);
                } else if let Some(AdditionalProperties::Schema(extra)) = &s.additional_properties {
                    list_types(extra, value, &path.key(k), errs);
                }
            }
        }
        _ => {}
    }
}

/// The key fields of a list-map item (with their defaults applied), as a JSON object.
pub(super) fn map_key(s: &Schema, item: &Value) -> Option<Value> {
    let obj = item.as_object()?;
    let items = s.items.as_deref();
    let mut key = Map::new();
    for k in &s.x_list_map_keys {
        let value = obj.get(k).cloned().or_else(|| {
            items
                .and_then(|i| i.properties.get(k))
                .and_then(|p| p.default.clone())
        });
        if let Some(value) = value {
            key.insert(k.clone(), value);
        }
    }
    Some(Value::Object(key))
}
