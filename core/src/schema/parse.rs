//! Parsing `JSONSchemaProps` JSON into a [`Schema`], with the checks Kubernetes applies
//! to a CRD's `openAPIV3Schema`: strict decoding (unknown or wrong-typed keywords), the
//! structural-schema rules (`apiextensions-apiserver/pkg/apiserver/schema/validation.go`),
//! the v1 CRD restrictions (`apis/apiextensions/validation/validation.go`), regexes,
//! CEL rules and defaults.

mod decode;
mod defaults;
mod keywords;
mod refs;
mod rule_checks;
mod rules;
mod structural;

use serde_json::Value;

use self::decode::{
    bool_of, num_of, opt_str_of, str_list_of, str_of, uint_of, unknown_field, wrong_type,
};
use self::defaults::check_defaults;
use self::refs::{Refs, parse_ref};
use self::rule_checks::check_rules;
use self::rules::parse_rules;
use self::structural::{check_junctor_node, check_structural};
use super::definitions::Definitions;
use super::{Schema, SchemaType};
use crate::field::{ErrorList, FieldError, FieldPath};

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
    /// The checks kube-apiserver makes of a resource's CEL rules when its CRD is
    /// written, beyond compiling them: every field a rule names is in the schema, and
    /// the rules' estimated costs are within kube's budgets. Errors carry paths under
    /// `at`. They are not made when a stored CRD is served again, as kube does not
    /// make them then either.
    pub fn check_rules(&self, at: &FieldPath) -> ErrorList {
        let mut errs = ErrorList::new();
        check_rules(self, at, &mut errs);
        errs
    }

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
                    s.type_ = keywords::schema_type(t, &p, errs);
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
            "uniqueItems" => s.unique_items = keywords::unique_items(val, &p, errs),
            "pattern" => {
                if let Some(src) = str_of(val, &p, errs) {
                    s.pattern = keywords::pattern(src, &p, errs);
                }
            }
            "required" => s.required = str_list_of(val, &p, errs),
            "items" => s.items = keywords::items(val, &p, junctor, refs, errs),
            "allOf" => s.all_of = keywords::junctor_list(val, &p, int_or_string, refs, errs),
            "anyOf" => s.any_of = keywords::junctor_list(val, &p, int_or_string, refs, errs),
            "oneOf" => s.one_of = keywords::junctor_list(val, &p, int_or_string, refs, errs),
            "not" => s.not = keywords::not(val, &p, refs, errs),
            "properties" => s.properties = keywords::properties(val, &p, junctor, refs, errs),
            "additionalProperties" => {
                s.additional_properties =
                    keywords::additional_properties(val, &p, junctor, refs, errs)
            }
            "$ref" | "definitions" | "dependencies" | "patternProperties" | "additionalItems"
            | "id" | "$schema" => {
                // validation.go: unsupported JSON Schema features.
                errs.push(FieldError::forbidden(&p, format!("{key} is not supported")));
            }
            "externalDocs" => keywords::external_docs(val, &p, errs),
            "x-kubernetes-preserve-unknown-fields" => {
                if !val.is_null() {
                    s.x_preserve_unknown_fields =
                        keywords::preserve_unknown_fields(val, &p, in_junctor, errs);
                }
            }
            "x-kubernetes-embedded-resource" => s.x_embedded_resource = bool_of(val, &p, errs),
            "x-kubernetes-int-or-string" => s.x_int_or_string = bool_of(val, &p, errs),
            "x-kubernetes-list-type" => {
                if let Some(t) = opt_str_of(val, &p, errs) {
                    s.x_list_type = keywords::list_type(t, &p, errs);
                }
            }
            "x-kubernetes-list-map-keys" => s.x_list_map_keys = str_list_of(val, &p, errs),
            "x-kubernetes-map-type" => {
                if let Some(t) = opt_str_of(val, &p, errs) {
                    s.x_map_type = keywords::map_type(t, &p, errs);
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
