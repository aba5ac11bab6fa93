//! Typed accessors of keyword values, reporting a value of the wrong type as
//! Kubernetes' strict decoding of `JSONSchemaProps` does.

use serde_json::Value;

use crate::field::{ErrorList, FieldError, FieldPath};

pub(super) fn wrong_type(path: &FieldPath, v: &Value, want: &str) -> FieldError {
    FieldError::wrong_type(path, v, want)
}

pub(super) fn unknown_field(path: &FieldPath, key: &str) -> FieldError {
    // Kubernetes decodes JSONSchemaProps strictly; wording of strict decoding.
    FieldError::forbidden(path, format!("unknown field {key:?}"))
}

pub(super) fn str_of<'a>(v: &'a Value, path: &FieldPath, errs: &mut ErrorList) -> Option<&'a str> {
    match v {
        Value::String(s) => Some(s),
        _ => {
            errs.push(wrong_type(path, v, "string"));
            None
        }
    }
}

pub(super) fn opt_str_of<'a>(
    v: &'a Value,
    path: &FieldPath,
    errs: &mut ErrorList,
) -> Option<&'a str> {
    if v.is_null() {
        None
    } else {
        str_of(v, path, errs)
    }
}

pub(super) fn bool_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Null => false,
        _ => {
            errs.push(wrong_type(path, v, "boolean"));
            false
        }
    }
}

pub(super) fn num_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Null => None,
        _ => {
            errs.push(wrong_type(path, v, "number"));
            None
        }
    }
}

pub(super) fn uint_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> Option<u64> {
    match v {
        Value::Null => None,
        Value::Number(n) => match n.as_u64() {
            Some(u) => Some(u),
            None => {
                errs.push(FieldError::invalid(
                    path,
                    v.clone(),
                    "must be a non-negative integer",
                ));
                None
            }
        },
        _ => {
            errs.push(wrong_type(path, v, "integer"));
            None
        }
    }
}

pub(super) fn str_list_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> Vec<String> {
    match v {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| str_of(item, &path.index(i), errs).map(str::to_string))
            .collect(),
        _ => {
            errs.push(wrong_type(path, v, "array"));
            Vec::new()
        }
    }
}
