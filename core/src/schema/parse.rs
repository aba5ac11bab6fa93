//! Parsing `JSONSchemaProps` JSON into a [`Schema`], with the checks Kubernetes applies
//! to a CRD's `openAPIV3Schema`: strict decoding (unknown or wrong-typed keywords), the
//! structural-schema rules (`apiextensions-apiserver/pkg/apiserver/schema/validation.go`),
//! the v1 CRD restrictions (`apis/apiextensions/validation/validation.go`), regexes,
//! CEL rules and defaults.

use serde_json::{Map, Value};

use super::cel::CompiledRule;
use super::definitions::{Definitions, ref_name};
use super::{AdditionalProperties, ListType, MapType, Pattern, Schema, SchemaType, ValidationRule};
use crate::field::{ErrorList, FieldError, FieldPath};

/// The `type` values Kubernetes accepts.
const SUPPORTED_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Where a node sits; decides the wording of a missing `type`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Field,
    Item,
}

impl Schema {
    /// Parses and checks a structural schema (the value of `openAPIV3Schema`).
    /// Errors carry paths relative to the schema root.
    pub fn parse(value: &Value) -> Result<Schema, ErrorList> {
        Self::parse_at(value, &FieldPath::root())
    }

    /// Like [`Schema::parse`], with error paths prefixed by `at`
    /// (e.g. `spec.versions[0].schema.openAPIV3Schema`).
    pub fn parse_at(value: &Value, at: &FieldPath) -> Result<Schema, ErrorList> {
        Self::parse_with(value, at, None)
    }

    /// Like [`Schema::parse_at`], resolving `$ref: "#/definitions/NAME"` against
    /// `definitions` (kapi's schema files; a CRD has none, and `$ref` is refused).
    pub fn parse_with(
        value: &Value,
        at: &FieldPath,
        definitions: Option<&Definitions>,
    ) -> Result<Schema, ErrorList> {
        let mut errs = ErrorList::new();
        let mut refs = Refs {
            definitions,
            stack: Vec::new(),
        };
        let schema = parse_node(value, at, Level::Root, None, &mut refs, &mut errs);
        if let Some(t) = schema.type_ {
            if t != SchemaType::Object {
                // validation.go: the root of a CRD schema is an object.
                errs.push(FieldError::invalid(
                    &at.child("type"),
                    t.as_str(),
                    "must be object at the root",
                ));
            }
        }
        if errs.is_empty() {
            check_defaults(&schema, at, &mut errs);
        }
        if errs.is_empty() {
            Ok(schema)
        } else {
            Err(errs)
        }
    }
}

impl Schema {
    /// Parses one shared definition (`definitions.NAME` of a `SchemaDefinitions`
    /// document) on its own, as a field's schema would be: any type at its root.
    pub fn parse_definition(
        value: &Value,
        at: &FieldPath,
        definitions: &Definitions,
    ) -> Result<Schema, ErrorList> {
        let mut errs = ErrorList::new();
        let mut refs = Refs {
            definitions: Some(definitions),
            stack: Vec::new(),
        };
        let schema = parse_node(value, at, Level::Field, None, &mut refs, &mut errs);
        if errs.is_empty() {
            check_defaults(&schema, at, &mut errs);
        }
        if errs.is_empty() {
            Ok(schema)
        } else {
            Err(errs)
        }
    }
}

/// The definitions `$ref` may name, and the references being resolved (to break cycles).
struct Refs<'d> {
    definitions: Option<&'d Definitions>,
    stack: Vec<String>,
}

/// A node written as `$ref` (with keywords beside it): the definition with those keywords
/// laid over it. A definition that refers back to itself (JSONSchemaProps) is cut there:
/// the inner reference keeps every field (`x-kubernetes-preserve-unknown-fields`).
fn parse_ref(
    definitions: &Definitions,
    obj: &Map<String, Value>,
    path: &FieldPath,
    level: Level,
    junctor: Option<bool>,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> Schema {
    let rp = path.child("$ref");
    let written = obj.get("$ref").cloned().unwrap_or(Value::Null);
    let Some(name) = written.as_str().and_then(ref_name) else {
        errs.push(FieldError::invalid(
            &rp,
            written.clone(),
            "must be a string of the form #/definitions/NAME",
        ));
        return Schema::default();
    };
    let Some(Value::Object(target)) = definitions.get(name) else {
        errs.push(FieldError::not_found(&rp, name));
        return Schema::default();
    };
    let cycle = refs.stack.iter().any(|n| n == name);
    let mut merged = if cycle {
        let mut m = Map::new();
        m.insert("type".into(), Value::from("object"));
        m.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
        if let Some(d) = target.get("description") {
            m.insert("description".into(), d.clone());
        }
        m
    } else {
        target.clone()
    };
    for (k, v) in obj {
        if k != "$ref" {
            merged.insert(k.clone(), v.clone());
        }
    }
    if cycle {
        return parse_node(&Value::Object(merged), path, level, junctor, refs, errs);
    }
    refs.stack.push(name.to_string());
    let mut s = parse_node(&Value::Object(merged), path, level, junctor, refs, errs);
    refs.stack.pop();
    s.definition = Some(name.to_string());
    s.definition_overlay = obj.keys().filter(|k| *k != "$ref").cloned().collect();
    s
}

/// `junctor` is `Some(int_or_string_parent)` inside allOf/anyOf/oneOf/not, where only
/// value validations are allowed.
fn parse_node(
    v: &Value,
    path: &FieldPath,
    level: Level,
    junctor: Option<bool>,
    refs: &mut Refs<'_>,
    errs: &mut ErrorList,
) -> Schema {
    let mut s = Schema::default();
    let Some(obj) = v.as_object() else {
        errs.push(FieldError::invalid(path, v.clone(), "must be an object"));
        return s;
    };
    if let (true, Some(definitions)) = (obj.contains_key("$ref"), refs.definitions) {
        return parse_ref(definitions, obj, path, level, junctor, refs, errs);
    }
    let in_junctor = junctor.is_some();
    // An int-or-string node may spell its two types as `anyOf: [{type: integer}, {type: string}]`.
    let int_or_string =
        obj.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) || junctor == Some(true);
    let mut rules_json: Option<(&Value, FieldPath)> = None;
    // An unsupported `type` is reported once, not again as a missing one.
    let type_given = obj
        .get("type")
        .is_some_and(|t| t.as_str().is_some_and(|t| !t.is_empty()));
    for (key, val) in obj {
        let p = path.child(key);
        match key.as_str() {
            "type" => {
                if let Some(t) = str_of(val, &p, errs) {
                    s.type_ = match t {
                        "object" => Some(SchemaType::Object),
                        "array" => Some(SchemaType::Array),
                        "string" => Some(SchemaType::String),
                        "integer" => Some(SchemaType::Integer),
                        "number" => Some(SchemaType::Number),
                        "boolean" => Some(SchemaType::Boolean),
                        // An empty type is the same as none in Go.
                        "" => None,
                        other => {
                            let supported: Vec<Value> =
                                SUPPORTED_TYPES.iter().map(|t| Value::from(*t)).collect();
                            errs.push(FieldError::not_supported(&p, other, &supported));
                            None
                        }
                    };
                }
            }
            "format" => s.format = str_of(val, &p, errs).map(str::to_string),
            "title" => s.title = str_of(val, &p, errs).map(str::to_string),
            "description" => s.description = str_of(val, &p, errs).map(str::to_string),
            "nullable" => s.nullable = bool_of(val, &p, errs),
            "default" => s.default = (!val.is_null()).then(|| val.clone()),
            "example" => s.example = (!val.is_null()).then(|| val.clone()),
            "enum" => match val {
                Value::Array(items) => s.enum_ = Some(items.clone()),
                Value::Null => {}
                _ => errs.push(wrong_type(&p, val, "array")),
            },
            "maximum" => s.maximum = num_of(val, &p, errs),
            "minimum" => s.minimum = num_of(val, &p, errs),
            "multipleOf" => s.multiple_of = num_of(val, &p, errs),
            "exclusiveMaximum" => s.exclusive_maximum = bool_of(val, &p, errs),
            "exclusiveMinimum" => s.exclusive_minimum = bool_of(val, &p, errs),
            "maxLength" => s.max_length = uint_of(val, &p, errs),
            "minLength" => s.min_length = uint_of(val, &p, errs),
            "maxItems" => s.max_items = uint_of(val, &p, errs),
            "minItems" => s.min_items = uint_of(val, &p, errs),
            "maxProperties" => s.max_properties = uint_of(val, &p, errs),
            "minProperties" => s.min_properties = uint_of(val, &p, errs),
            "uniqueItems" => {
                s.unique_items = bool_of(val, &p, errs);
                if s.unique_items {
                    // validation.go (v1 CRDs).
                    errs.push(FieldError::forbidden(
                        &p,
                        "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
                    ));
                }
            }
            "pattern" => {
                if let Some(src) = str_of(val, &p, errs) {
                    match regex::Regex::new(src) {
                        Ok(regex) => {
                            s.pattern = Some(Pattern {
                                source: src.to_string(),
                                regex,
                            })
                        }
                        // validation.go: the message of Go's regexp.Compile follows.
                        Err(e) => errs.push(FieldError::invalid(
                            &p,
                            src,
                            format!(
                                "must be a valid regular expression, but isn't: {}",
                                regex_error(&e)
                            ),
                        )),
                    }
                }
            }
            "required" => s.required = str_list_of(val, &p, errs),
            "items" => match val {
                Value::Object(_) => {
                    s.items = Some(Box::new(parse_node(
                        val,
                        &p,
                        Level::Item,
                        junctor.map(|_| false),
                        refs,
                        errs,
                    )))
                }
                Value::Array(_) => errs.push(FieldError::forbidden(
                    &p,
                    "items must be a schema object and not an array",
                )),
                Value::Null => {}
                _ => errs.push(wrong_type(&p, val, "object")),
            },
            "allOf" | "anyOf" | "oneOf" => {
                let list = match val {
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
                        errs.push(wrong_type(&p, val, "array"));
                        Vec::new()
                    }
                };
                match key.as_str() {
                    "allOf" => s.all_of = list,
                    "anyOf" => s.any_of = list,
                    _ => s.one_of = list,
                }
            }
            "not" => {
                if !val.is_null() {
                    s.not = Some(Box::new(parse_node(
                        val,
                        &p,
                        Level::Field,
                        Some(false),
                        refs,
                        errs,
                    )));
                }
            }
            "properties" => match val {
                Value::Object(props) => {
                    for (name, sub) in props {
                        let sp = p.key(name);
                        let child =
                            parse_node(sub, &sp, Level::Field, junctor.map(|_| false), refs, errs);
                        s.properties.insert(name.clone(), child);
                    }
                }
                Value::Null => {}
                _ => errs.push(wrong_type(&p, val, "object")),
            },
            "additionalProperties" => match val {
                Value::Bool(b) => s.additional_properties = Some(AdditionalProperties::Bool(*b)),
                Value::Object(_) => {
                    let child =
                        parse_node(val, &p, Level::Field, junctor.map(|_| false), refs, errs);
                    s.additional_properties = Some(AdditionalProperties::Schema(Box::new(child)));
                }
                Value::Null => {}
                _ => errs.push(wrong_type(&p, val, "object")),
            },
            "$ref" | "definitions" | "dependencies" | "patternProperties" | "additionalItems"
            | "id" | "$schema" => {
                // validation.go: unsupported JSON Schema features.
                errs.push(FieldError::forbidden(&p, format!("{key} is not supported")));
            }
            "externalDocs" => match val {
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
                _ => errs.push(wrong_type(&p, val, "object")),
            },
            "x-kubernetes-preserve-unknown-fields" => {
                if !val.is_null() {
                    s.x_preserve_unknown_fields = bool_of(val, &p, errs);
                    if !s.x_preserve_unknown_fields && !in_junctor && val.is_boolean() {
                        // validation.go
                        errs.push(FieldError::invalid(&p, false, "must be true or undefined"));
                    }
                }
            }
            "x-kubernetes-embedded-resource" => s.x_embedded_resource = bool_of(val, &p, errs),
            "x-kubernetes-int-or-string" => s.x_int_or_string = bool_of(val, &p, errs),
            "x-kubernetes-list-type" => {
                if let Some(t) = opt_str_of(val, &p, errs) {
                    s.x_list_type = match t {
                        "atomic" => Some(ListType::Atomic),
                        "set" => Some(ListType::Set),
                        "map" => Some(ListType::Map),
                        other => {
                            let supported: Vec<Value> = ["atomic", "set", "map"]
                                .iter()
                                .map(|t| Value::from(*t))
                                .collect();
                            errs.push(FieldError::not_supported(&p, other, &supported));
                            None
                        }
                    }
                }
            }
            "x-kubernetes-list-map-keys" => s.x_list_map_keys = str_list_of(val, &p, errs),
            "x-kubernetes-map-type" => {
                if let Some(t) = opt_str_of(val, &p, errs) {
                    s.x_map_type = match t {
                        "atomic" => Some(MapType::Atomic),
                        "granular" => Some(MapType::Granular),
                        other => {
                            let supported: Vec<Value> = ["granular", "atomic"]
                                .iter()
                                .map(|t| Value::from(*t))
                                .collect();
                            errs.push(FieldError::not_supported(&p, other, &supported));
                            None
                        }
                    }
                }
            }
            "x-kubernetes-patch-merge-key" => {
                s.x_patch_merge_key = opt_str_of(val, &p, errs).map(str::to_string)
            }
            "x-kubernetes-patch-strategy" => {
                s.x_patch_strategy = opt_str_of(val, &p, errs).map(str::to_string)
            }
            "x-kubernetes-validations" => rules_json = Some((val, p)),
            _ => errs.push(unknown_field(&p, key)),
        }
    }

    if let Some(int_or_string_parent) = junctor {
        check_junctor_node(&s, obj, path, int_or_string_parent, errs);
    } else {
        // Kubernetes' own types (schema files with shared definitions) have list-map keys
        // that may be left out (ServiceAccount.secrets[].name); CRDs may not.
        let optional_map_keys = refs.definitions.is_some();
        check_structural(&s, path, level, type_given, optional_map_keys, errs);
    }
    if let Some((val, p)) = rules_json {
        s.x_validations = parse_rules(val, &p, &s, errs);
    }
    s
}

/// schema/validation.go (validateStructuralInvariants and friends).
fn check_structural(
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
fn check_junctor_node(
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

const REASONS: [&str; 4] = [
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

fn parse_rules(
    val: &Value,
    path: &FieldPath,
    node: &Schema,
    errs: &mut ErrorList,
) -> Vec<ValidationRule> {
    let Value::Array(items) = val else {
        if !val.is_null() {
            errs.push(wrong_type(path, val, "array"));
        }
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let p = path.index(i);
        let Some(obj) = item.as_object() else {
            errs.push(wrong_type(&p, item, "object"));
            continue;
        };
        let mut rule = None;
        let mut message = None;
        let mut message_expression = None;
        let mut reason = None;
        let mut field_path = None;
        let mut optional_old_self = false;
        for (k, v) in obj {
            let kp = p.child(k);
            match k.as_str() {
                "rule" => rule = str_of(v, &kp, errs).map(str::to_string),
                "message" => message = opt_str_of(v, &kp, errs).map(str::to_string),
                "messageExpression" => {
                    message_expression = opt_str_of(v, &kp, errs).map(str::to_string)
                }
                "reason" => reason = opt_str_of(v, &kp, errs).map(str::to_string),
                "fieldPath" => field_path = opt_str_of(v, &kp, errs).map(str::to_string),
                "optionalOldSelf" => optional_old_self = !v.is_null() && bool_of(v, &kp, errs),
                _ => errs.push(unknown_field(&kp, k)),
            }
        }
        let Some(rule) = rule else {
            errs.push(FieldError::required(&p.child("rule"), ""));
            continue;
        };
        // validation.go (ValidationRule checks).
        if let Some(m) = &message {
            if m.trim().is_empty() {
                errs.push(FieldError::required(
                    &p.child("message"),
                    "message must be non-empty if specified",
                ));
            } else if m.contains('\n') {
                errs.push(FieldError::invalid(
                    &p.child("message"),
                    m.as_str(),
                    "message must not contain line breaks",
                ));
            }
        }
        if let Some(m) = &message_expression {
            if m.trim().is_empty() {
                errs.push(FieldError::required(
                    &p.child("messageExpression"),
                    "messageExpression must be non-empty if specified",
                ));
                message_expression = None;
            }
        }
        if let Some(r) = &reason {
            if !REASONS.contains(&r.as_str()) {
                let supported: Vec<Value> = REASONS.iter().map(|r| Value::from(*r)).collect();
                errs.push(FieldError::not_supported(
                    &p.child("reason"),
                    r.as_str(),
                    &supported,
                ));
            }
        }
        if let Some(fp) = &field_path {
            if let Err(e) = super::validation::rule_field_path(fp, node) {
                errs.push(FieldError::invalid(
                    &p.child("fieldPath"),
                    fp.as_str(),
                    format!("fieldPath must be a valid path: {e}"),
                ));
            }
        }
        let compiled = match CompiledRule::compile(&rule, message_expression.as_deref()) {
            Ok(c) => c,
            Err((which, msg)) => {
                let src = if which == "rule" {
                    rule.clone()
                } else {
                    message_expression.clone().unwrap_or_default()
                };
                errs.push(FieldError::invalid(
                    &p.child(which),
                    src,
                    format!("compilation failed: {msg}"),
                ));
                continue;
            }
        };
        let is_transition = compiled.uses_old_self();
        if optional_old_self && !is_transition {
            errs.push(FieldError::invalid(
                &p.child("optionalOldSelf"),
                true,
                "may not be set if rule does not use oldSelf",
            ));
        }
        out.push(ValidationRule {
            rule,
            message,
            message_expression,
            reason,
            field_path,
            optional_old_self,
            is_transition,
            compiled,
        });
    }
    out
}

/// Defaults must validate against their own schema and must not carry unknown fields
/// (apiextensions validation/defaulting.go).
fn check_defaults(s: &Schema, path: &FieldPath, errs: &mut ErrorList) {
    if let Some(d) = &s.default {
        let dpath = path.child("default");
        let mut pruned = d.clone();
        super::pruning::prune_node(s, &mut pruned, false);
        if &pruned != d {
            errs.push(FieldError::invalid(
                &dpath,
                d.clone(),
                "must not have unknown fields",
            ));
        } else {
            let mut defaulted = d.clone();
            s.apply_defaults(&mut defaulted);
            errs.extend(s.validate(&defaulted, &dpath));
        }
    }
    for (name, p) in &s.properties {
        check_defaults(p, &path.child("properties").key(name), errs);
    }
    if let Some(AdditionalProperties::Schema(a)) = &s.additional_properties {
        check_defaults(a, &path.child("additionalProperties"), errs);
    }
    if let Some(items) = &s.items {
        check_defaults(items, &path.child("items"), errs);
    }
}

// ---- typed accessors reporting decode errors ----

fn wrong_type(path: &FieldPath, v: &Value, want: &str) -> FieldError {
    FieldError::wrong_type(path, v, want)
}

fn unknown_field(path: &FieldPath, key: &str) -> FieldError {
    // Kubernetes decodes JSONSchemaProps strictly; wording of strict decoding.
    FieldError::forbidden(path, format!("unknown field {key:?}"))
}

fn str_of<'a>(v: &'a Value, path: &FieldPath, errs: &mut ErrorList) -> Option<&'a str> {
    match v {
        Value::String(s) => Some(s),
        _ => {
            errs.push(wrong_type(path, v, "string"));
            None
        }
    }
}

fn opt_str_of<'a>(v: &'a Value, path: &FieldPath, errs: &mut ErrorList) -> Option<&'a str> {
    if v.is_null() {
        None
    } else {
        str_of(v, path, errs)
    }
}

fn bool_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Null => false,
        _ => {
            errs.push(wrong_type(path, v, "boolean"));
            false
        }
    }
}

fn num_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Null => None,
        _ => {
            errs.push(wrong_type(path, v, "number"));
            None
        }
    }
}

fn uint_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> Option<u64> {
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

fn str_list_of(v: &Value, path: &FieldPath, errs: &mut ErrorList) -> Vec<String> {
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

/// The first line of a regex error; the `regex` crate's messages span several lines.
fn regex_error(e: &regex::Error) -> String {
    let s = e.to_string();
    s.lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map_or(s.clone(), |l| l.trim_start_matches("error: ").to_string())
}
