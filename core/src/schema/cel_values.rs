//! JSON as CEL sees it: integers as `int`, objects as maps keyed by string, and, where
//! a schema describes the value, fields spelled as kube escapes them for CEL.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use cel::Value;
use cel::objects::Key;
use serde_json::Value as Json;

use super::{AdditionalProperties, Schema};

/// Converts JSON that `node` describes to a CEL value as [`json_to_cel`] does, with
/// the fields of objects spelled as CEL spells them (`__namespace__` for `namespace`,
/// `a__dash__b` for `a-b`, as kube escapes them); the keys of maps stay as they are.
pub fn schema_to_cel(v: &Json, node: &Schema) -> Value {
    match v {
        Json::Array(items) => match &node.items {
            Some(item) => Value::List(Arc::new(
                items.iter().map(|v| schema_to_cel(v, item)).collect(),
            )),
            None => json_to_cel(v),
        },
        Json::Object(map) => object_to_cel(map, node, |_| true),
        _ => json_to_cel(v),
    }
}

/// [`schema_to_cel`] of an object with only the `fields` (as CEL spells them) that an
/// expression selects from it: what it never reads need not be converted. Anything
/// but an object is converted whole.
pub fn schema_to_cel_selected(v: &Json, node: &Schema, fields: &BTreeSet<String>) -> Value {
    match v {
        Json::Object(map) => object_to_cel(map, node, |key| fields.contains(key)),
        _ => schema_to_cel(v, node),
    }
}

/// An object's entries whose CEL spelling `keep` accepts, as [`schema_to_cel`]
/// converts them.
fn object_to_cel(
    map: &serde_json::Map<String, Json>,
    node: &Schema,
    keep: impl Fn(&str) -> bool,
) -> Value {
    if let Some(AdditionalProperties::Schema(values)) = &node.additional_properties {
        let m: HashMap<Key, Value> = map
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(k, v)| (Key::String(Arc::new(k.clone())), schema_to_cel(v, values)))
            .collect();
        return Value::Map(m.into());
    }
    let mut m: HashMap<Key, Value> = HashMap::with_capacity(map.len());
    for (k, v) in map {
        let key = if node.properties.contains_key(k) {
            match super::cel_static::escape(k) {
                Some(escaped) => escaped,
                // kube leaves a field it cannot spell out of CEL's view.
                None => continue,
            }
        } else {
            k.clone()
        };
        if !keep(&key) {
            continue;
        }
        let value = match node.properties.get(k) {
            Some(prop) => schema_to_cel(v, prop),
            None => json_to_cel(v),
        };
        m.insert(Key::String(Arc::new(key)), value);
    }
    Value::Map(m.into())
}

/// Converts JSON to a CEL value: integers as `int`, objects as maps keyed by string.
pub fn json_to_cel(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => match n.as_u64() {
                Some(u) => Value::UInt(u),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
        },
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(items) => Value::List(Arc::new(items.iter().map(json_to_cel).collect())),
        Json::Object(map) => {
            let m: HashMap<Key, Value> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), json_to_cel(v)))
                .collect();
            Value::Map(m.into())
        }
    }
}
