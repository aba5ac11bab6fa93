//! The structural-schema rules (`apiextensions-apiserver/pkg/apiserver/schema/validation.go`)
//! and the v1 CRD rules of `x-kubernetes-list-type`, checked on a parsed node.

use serde_json::{Map, Value};

use super::Level;
use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::{AdditionalProperties, ListType, MapType, Schema, SchemaType};

/// schema/validation.go (validateStructuralInvariants and friends).
pub(super) fn check_structural(
    s: &Schema,
    path: &FieldPath,
    level: Level,
    type_given: bool,
    optional_map_keys: bool,
    errs: &mut ErrorList,
) {
    if !type_given
        && s.type_.is_none()
        && !s.x_int_or_string
        && !s.x_preserve_unknown_fields
        && !s.x_embedded_resource
    {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Field => "must not be empty for specified object fields",
            Level::Item => "must not be empty for specified array items",
        };
        errs.push(FieldError::required(&path.child("type"), detail));
    }
    if s.x_embedded_resource {
        if s.type_.is_some_and(|t| t != SchemaType::Object) || s.type_.is_none() {
            errs.push(FieldError::invalid(
                &path.child("type"),
                s.type_.map_or("", SchemaType::as_str),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
        if s.properties.is_empty() && !s.x_preserve_unknown_fields {
            errs.push(FieldError::required(
                &path.child("properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            ));
        }
    }
    if s.x_int_or_string && s.type_.is_some() {
        errs.push(FieldError::invalid(
            &path.child("type"),
            s.type_.map_or("", SchemaType::as_str),
            "must be empty if x-kubernetes-int-or-string is true",
        ));
    }
    if s.type_ == Some(SchemaType::Array) && s.items.is_none() {
        errs.push(FieldError::required(
            &path.child("items"),
            "must be specified",
        ));
    }
    if s.type_.is_some_and(|t| t != SchemaType::Object)
        && (!s.properties.is_empty() || s.additional_properties.is_some())
    {
        let key = if s.properties.is_empty() {
            "additionalProperties"
        } else {
            "properties"
        };
        errs.push(FieldError::forbidden(
            &path.child(key),
            "must not be specified if type is not object",
        ));
    }
    match &s.additional_properties {
        Some(AdditionalProperties::Bool(false)) => {
            errs.push(FieldError::forbidden(
                &path.child("additionalProperties"),
                "additionalProperties cannot be set to false",
            ));
        }
        Some(_) if !s.properties.is_empty() => {
            errs.push(FieldError::forbidden(
                &path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        _ => {}
    }
    check_list_type(s, path, optional_map_keys, errs);
}

/// Inside allOf/anyOf/oneOf/not only value validations may appear
/// (schema/validation.go, validateNestedValueValidation).
pub(super) fn check_junctor_node(
    s: &Schema,
    obj: &Map<String, Value>,
    path: &FieldPath,
    int_or_string_parent: bool,
    errs: &mut ErrorList,
) {
    let int_or_string_type =
        int_or_string_parent && matches!(s.type_, Some(SchemaType::Integer | SchemaType::String));
    if s.type_.is_some() && !int_or_string_type {
        errs.push(FieldError::forbidden(
            &path.child("type"),
            "must be empty to be structural",
        ));
    }
    let undefined = [
        "additionalProperties",
        "default",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
    ];
    for key in undefined {
        if obj.contains_key(key) {
            errs.push(FieldError::forbidden(
                &path.child(key),
                "must be undefined to be structural",
            ));
        }
    }
    for key in ["title", "description", "x-kubernetes-validations"] {
        if obj.contains_key(key) {
            errs.push(FieldError::forbidden(
                &path.child(key),
                "must be empty to be structural",
            ));
        }
    }
    for (key, set) in [
        ("nullable", s.nullable),
        ("x-kubernetes-embedded-resource", s.x_embedded_resource),
        ("x-kubernetes-int-or-string", s.x_int_or_string),
    ] {
        if set {
            errs.push(FieldError::forbidden(
                &path.child(key),
                "must be false to be structural",
            ));
        }
    }
}

/// v1 CRD validation of x-kubernetes-list-type and x-kubernetes-list-map-keys.
fn check_list_type(s: &Schema, path: &FieldPath, optional_map_keys: bool, errs: &mut ErrorList) {
    let keys_path = path.child("x-kubernetes-list-map-keys");
    if s.x_list_type != Some(ListType::Map) && !s.x_list_map_keys.is_empty() {
        errs.push(FieldError::forbidden(
            &keys_path,
            "must be empty if x-kubernetes-list-type is not map",
        ));
    }
    let Some(list_type) = s.x_list_type else {
        return;
    };
    if s.type_ != Some(SchemaType::Array) {
        errs.push(FieldError::invalid(
            &path.child("type"),
            s.type_.map_or("", SchemaType::as_str),
            "must be array if x-kubernetes-list-type is specified",
        ));
        return;
    }
    let Some(items) = s.items.as_deref() else {
        return;
    };
    let items_path = path.child("items");
    match list_type {
        ListType::Map => {
            if s.x_list_map_keys.is_empty() {
                errs.push(FieldError::required(
                    &keys_path,
                    "must not be empty if x-kubernetes-list-type is map",
                ));
            }
            if items.type_ != Some(SchemaType::Object) {
                errs.push(FieldError::invalid(
                    &items_path.child("type"),
                    items.type_.map_or("", SchemaType::as_str),
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
                return;
            }
            let mut seen = std::collections::BTreeSet::new();
            for (i, k) in s.x_list_map_keys.iter().enumerate() {
                if !seen.insert(k) {
                    errs.push(FieldError::duplicate(&keys_path.index(i), k.as_str()));
                    continue;
                }
                match items.properties.get(k) {
                    None => errs.push(FieldError::invalid(
                        &keys_path,
                        Value::from(s.x_list_map_keys.clone()),
                        "entries must all be names of item properties",
                    )),
                    Some(prop) => {
                        let scalar = prop.x_int_or_string
                            || matches!(
                                prop.type_,
                                Some(
                                    SchemaType::String
                                        | SchemaType::Integer
                                        | SchemaType::Number
                                        | SchemaType::Boolean
                                )
                            );
                        if !scalar {
                            errs.push(FieldError::invalid(
                                &items_path.child("properties").key(k).child("type"),
                                prop.type_.map_or("", SchemaType::as_str),
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            ));
                        }
                        if !optional_map_keys
                            && !items.required.contains(k)
                            && prop.default.is_none()
                        {
                            errs.push(FieldError::required(
                                &items_path.child("required"),
                                format!("all map keys must be required or have a default value, but {k:?} is neither"),
                            ));
                        }
                    }
                }
            }
        }
        ListType::Set => {
            let atomic_object = items.type_ == Some(SchemaType::Object)
                && items.x_map_type == Some(MapType::Atomic);
            let atomic_list = items.type_ == Some(SchemaType::Array)
                && matches!(items.x_list_type, None | Some(ListType::Atomic));
            if items.type_ == Some(SchemaType::Object) && !atomic_object {
                errs.push(FieldError::invalid(
                    &items_path.child("x-kubernetes-map-type"),
                    Value::Null,
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            } else if items.type_ == Some(SchemaType::Array) && !atomic_list {
                errs.push(FieldError::invalid(
                    &items_path.child("x-kubernetes-list-type"),
                    Value::Null,
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
        }
        ListType::Atomic => {}
    }
}
