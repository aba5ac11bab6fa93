//! Decoding of the keywords that take more than a typed accessor: the enumerated ones
//! (`type`, `x-kubernetes-list-type`, `x-kubernetes-map-type`), the ones v1 CRDs
//! restrict (`uniqueItems`, `x-kubernetes-preserve-unknown-fields`), `pattern`,
//! `externalDocs`, and the keywords holding sub-schemas (`items`, `properties`,
//! `additionalProperties`, `allOf`/`anyOf`/`oneOf`, `not`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::decode::{bool_of, str_of, unknown_field, wrong_type};
use super::refs::Refs;
use super::{Level, parse_node};
use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::{AdditionalProperties, ListType, MapType, Pattern, Schema, SchemaType};

/// The `type` values Kubernetes accepts.
const SUPPORTED_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// `type`.
pub(super) fn schema_type(t: &str, p: &FieldPath, errs: &mut ErrorList) -> Option<SchemaType> {
    match t {
        "object" => Some(SchemaType::Object),
        "array" => Some(SchemaType::Array),
        "string" => Some(SchemaType::String),
        "integer" => Some(SchemaType::Integer),
        "number" => Some(SchemaType::Number),
        "boolean" => Some(SchemaType::Boolean),
        // An empty type is the same as none in Go.
        "" => None,
        other => {
            let supported: Vec<Value> = SUPPORTED_TYPES.iter().map(|t| Value::from(*t)).collect();
            errs.push(FieldError::not_supported(p, other, &supported));
            None
        }
    }
}

/// `uniqueItems`, which v1 CRDs forbid to be true.
pub(super) fn unique_items(val: &Value, p: &FieldPath, errs: &mut ErrorList) -> bool {
    let unique_items = bool_of(val, p, errs);
    if unique_items {
        // validation.go (v1 CRDs).
        errs.push(FieldError::forbidden(
            p,
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    unique_items
}

/// `pattern`, compiled.
pub(super) fn pattern(src: &str, p: &FieldPath, errs: &mut ErrorList) -> Option<Pattern> {
    match regex::Regex::new(src) {
        Ok(regex) => Some(Pattern {
            source: src.to_string(),
            regex,
        }),
        // validation.go: the message of Go's regexp.Compile follows.
        Err(e) => {
            errs.push(FieldError::invalid(
                p,
                src,
                format!(
                    "must be a valid regular expression, but isn't: {}",
                    regex_error(&e)
                ),
            ));
            None
        }
    }
}

/// `items`: one schema (a list of schemas is not supported).
pub(super) fn items(
    val: &Value,
    p: &FieldPath,
    junctor: Option<bool>,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> Option<Box<Schema>> {
    match val {
        Value::Object(_) => Some(Box::new(parse_node(
            val,
            p,
            Level::Item,
            junctor.map(|_| false),
            refs,
            errs,
        ))),
        Value::Array(_) => {
            errs.push(FieldError::forbidden(
                p,
                "items must be a schema object and not an array",
            ));
            None
        }
        Value::Null => None,
        _ => {
            errs.push(wrong_type(p, val, "object"));
            None
        }
    }
}

/// `allOf`, `anyOf` or `oneOf`: their schemas, parsed as junctors.
pub(super) fn junctor_list(
    val: &Value,
    p: &FieldPath,
    int_or_string: bool,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> Vec<Schema> {
    match val {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                parse_node(
                    item,
                    &p.index(i),
                    Level::Field,
                    Some(int_or_string),
                    refs,
                    errs,
                )
            })
            .collect(),
        Value::Null => Vec::new(),
        _ => {
            errs.push(wrong_type(p, val, "array"));
            Vec::new()
        }
    }
}

/// `not`: its schema, parsed as a junctor.
pub(super) fn not(
    val: &Value,
    p: &FieldPath,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> Option<Box<Schema>> {
    (!val.is_null()).then(|| Box::new(parse_node(val, p, Level::Field, Some(false), refs, errs)))
}

/// `properties`: the schema of each named field.
pub(super) fn properties(
    val: &Value,
    p: &FieldPath,
    junctor: Option<bool>,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> BTreeMap<String, Schema> {
    let mut properties = BTreeMap::new();
    match val {
        Value::Object(props) => {
            for (name, sub) in props {
                let sp = p.key(name);
                let child = parse_node(sub, &sp, Level::Field, junctor.map(|_| false), refs, errs);
                properties.insert(name.clone(), child);
            }
        }
        Value::Null => {}
        _ => errs.push(wrong_type(p, val, "object")),
    }
    properties
}

/// `additionalProperties`: a boolean or a schema.
pub(super) fn additional_properties(
    val: &Value,
    p: &FieldPath,
    junctor: Option<bool>,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> Option<AdditionalProperties> {
    match val {
        Value::Bool(b) => Some(AdditionalProperties::Bool(*b)),
        Value::Object(_) => {
            let child = parse_node(val, p, Level::Field, junctor.map(|_| false), refs, errs);
            Some(AdditionalProperties::Schema(Box::new(child)))
        }
        Value::Null => None,
        _ => {
            errs.push(wrong_type(p, val, "object"));
            None
        }
    }
}

/// `externalDocs`: checked, not kept.
pub(super) fn external_docs(val: &Value, p: &FieldPath, errs: &mut ErrorList) {
    match val {
        Value::Object(doc) => {
            for (k, dv) in doc {
                match k.as_str() {
                    "description" | "url" => {
                        str_of(dv, &p.child(k), errs);
                    }
                    _ => errs.push(unknown_field(&p.child(k), k)),
                }
            }
        }
        Value::Null => {}
        _ => errs.push(wrong_type(p, val, "object")),
    }
}

/// `x-kubernetes-preserve-unknown-fields` (not null), which may only be false inside a
/// junctor.
pub(super) fn preserve_unknown_fields(
    val: &Value,
    p: &FieldPath,
    in_junctor: bool,
    errs: &mut ErrorList,
) -> bool {
    let preserve = bool_of(val, p, errs);
    if !preserve && !in_junctor && val.is_boolean() {
        // validation.go
        errs.push(FieldError::invalid(p, false, "must be true or undefined"));
    }
    preserve
}

/// `x-kubernetes-list-type`.
pub(super) fn list_type(t: &str, p: &FieldPath, errs: &mut ErrorList) -> Option<ListType> {
    match t {
        "atomic" => Some(ListType::Atomic),
        "set" => Some(ListType::Set),
        "map" => Some(ListType::Map),
        other => {
            let supported: Vec<Value> = ["atomic", "set", "map"]
                .iter()
                .map(|t| Value::from(*t))
                .collect();
            errs.push(FieldError::not_supported(p, other, &supported));
            None
        }
    }
}

/// `x-kubernetes-map-type`.
pub(super) fn map_type(t: &str, p: &FieldPath, errs: &mut ErrorList) -> Option<MapType> {
    match t {
        "atomic" => Some(MapType::Atomic),
        "granular" => Some(MapType::Granular),
        other => {
            let supported: Vec<Value> = ["granular", "atomic"]
                .iter()
                .map(|t| Value::from(*t))
                .collect();
            errs.push(FieldError::not_supported(p, other, &supported));
            None
        }
    }
}

/// The first line of a regex error; the `regex` crate's messages span several lines.
fn regex_error(e: &regex::Error) -> String {
    let s = e.to_string();
    s.lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map_or(s.clone(), |l| l.trim_start_matches("error: ").to_string())
}
