//! How large a schema node's value can be, as kube-apiserver sizes it for cost
//! estimates (`apiserver/pkg/cel/common/schemas.go`): declared bounds when there are
//! some, else as many as fit in one request.

use crate::schema::{AdditionalProperties, Schema, SchemaType};

/// kube-apiserver's default request body limit, 3 MiB, which bounds every unbounded
/// size.
pub const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// The longest JSON forms of the string formats CEL sees as durations and timestamps.
const MAX_DURATION_JSON: u64 = 32;
const DATE_JSON: u64 = 12;
const MAX_DATETIME_JSON: u64 = 39;
const MIN_DATETIME_JSON: u64 = 22;
const MIN_DURATION_JSON: u64 = 4;

/// The fewest bytes a value of `node` takes in JSON: `""`, `0`, `true`/`false` (4),
/// `[]`, `{}` plus its required fields that have no default.
pub fn min_serialized_size(node: &Schema) -> u64 {
    if node.x_int_or_string {
        return 1;
    }
    match node.type_ {
        Some(SchemaType::String) => match node.format.as_deref() {
            Some("duration") => MIN_DURATION_JSON,
            Some("date") => DATE_JSON,
            Some("date-time") => MIN_DATETIME_JSON,
            _ => 2,
        },
        Some(SchemaType::Integer | SchemaType::Number) => 1,
        Some(SchemaType::Boolean) => 4,
        Some(SchemaType::Array) => 2,
        Some(SchemaType::Object) => {
            let mut size = 2;
            for name in &node.required {
                if let Some(prop) = node.properties.get(name) {
                    if prop.default.is_none() {
                        size += name.len() as u64 + min_serialized_size(prop) + 4;
                    }
                }
            }
            size
        }
        None => 1,
    }
}

/// How many times a value of `node` can occur in one request, when it sits under a
/// list or map without a declared bound.
pub fn max_cardinality(node: &Schema) -> u64 {
    MAX_REQUEST_BYTES / (min_serialized_size(node) + 1)
}

/// The most characters (strings), items (lists) or entries (maps) a value of `node`
/// can have; `None` where a size means nothing (numbers, booleans, objects with fields).
pub fn max_size(node: &Schema) -> Option<u64> {
    if node.x_int_or_string {
        return Some(string_size(node));
    }
    match node.type_ {
        Some(SchemaType::String) => Some(string_size(node)),
        Some(SchemaType::Array) => Some(match (node.max_items, &node.items) {
            (Some(n), _) => n,
            (None, Some(items)) => (MAX_REQUEST_BYTES - 2) / (min_serialized_size(items) + 1),
            (None, None) => MAX_REQUEST_BYTES - 2,
        }),
        Some(SchemaType::Object) => match &node.additional_properties {
            Some(AdditionalProperties::Schema(values)) => Some(
                node.max_properties
                    .unwrap_or((MAX_REQUEST_BYTES - 2) / (min_serialized_size(values) + 6)),
            ),
            _ => None,
        },
        _ => None,
    }
}

fn string_size(node: &Schema) -> u64 {
    match node.format.as_deref() {
        Some("duration") => return MAX_DURATION_JSON,
        Some("date") => return DATE_JSON,
        Some("date-time") => return MAX_DATETIME_JSON,
        _ => {}
    }
    if let Some(n) = node.max_length {
        // maxLength counts code points; a code point takes up to four bytes.
        return n.saturating_mul(4);
    }
    let longest_enum = node.enum_.as_ref().and_then(|values| {
        values
            .iter()
            .filter_map(|v| v.as_str().map(|s| s.len() as u64))
            .max()
    });
    longest_enum.unwrap_or(MAX_REQUEST_BYTES - 2)
}
