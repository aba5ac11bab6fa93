//! The schema model: plain data, one node per `JSONSchemaProps`.

use std::collections::BTreeMap;

use serde_json::Value;

/// The `type` of a schema node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// `object`
    Object,
    /// `array`
    Array,
    /// `string`
    String,
    /// `integer`
    Integer,
    /// `number`
    Number,
    /// `boolean`
    Boolean,
}

impl SchemaType {
    /// The JSON Schema name of the type.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaType::Object => "object",
            SchemaType::Array => "array",
            SchemaType::String => "string",
            SchemaType::Integer => "integer",
            SchemaType::Number => "number",
            SchemaType::Boolean => "boolean",
        }
    }
}

/// `x-kubernetes-list-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListType {
    /// Replaced as a whole on merge.
    Atomic,
    /// Items are unique scalars.
    Set,
    /// Items are objects unique by `x-kubernetes-list-map-keys`.
    Map,
}

/// `x-kubernetes-map-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapType {
    /// Replaced as a whole on merge.
    Atomic,
    /// Merged key by key.
    Granular,
}

/// `additionalProperties`.
#[derive(Clone, Debug)]
pub enum AdditionalProperties {
    /// `true` or `false`.
    Bool(bool),
    /// Every value has this schema (a typed map).
    Schema(Box<Schema>),
}

/// A compiled `pattern`.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The pattern as written.
    pub source: String,
    /// The compiled regex.
    pub regex: regex::Regex,
}

/// One `x-kubernetes-validations` rule, compiled.
#[derive(Clone, Debug)]
pub struct ValidationRule {
    /// The CEL expression.
    pub rule: String,
    /// Fixed message on failure.
    pub message: Option<String>,
    /// CEL expression producing the message.
    pub message_expression: Option<String>,
    /// `FieldValueInvalid` (default), `FieldValueForbidden`, `FieldValueRequired` or `FieldValueDuplicate`.
    pub reason: Option<String>,
    /// Relative JSON path the error is reported at.
    pub field_path: Option<String>,
    /// Evaluate transition rules even when there is no old value.
    pub optional_old_self: bool,
    /// True when the rule mentions `oldSelf` (a transition rule, run on update only).
    pub is_transition: bool,
    /// The compiled program(s), opaque to callers.
    pub compiled: crate::schema::cel::CompiledRule,
}

/// One node of a structural schema (`JSONSchemaProps`).
///
/// Fields follow the OpenAPI/Kubernetes names; `x_*` fields are the Kubernetes extensions.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    /// `type`; `None` for int-or-string and untyped preserve-unknown nodes.
    pub type_: Option<SchemaType>,
    /// `format`.
    pub format: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `nullable`.
    pub nullable: bool,
    /// `default`.
    pub default: Option<Value>,
    /// `example`.
    pub example: Option<Value>,
    /// `enum`.
    pub enum_: Option<Vec<Value>>,
    /// `properties`, sorted by name.
    pub properties: BTreeMap<String, Schema>,
    /// `required`.
    pub required: Vec<String>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `additionalProperties`.
    pub additional_properties: Option<AdditionalProperties>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `allOf` (value validation only in a structural schema).
    pub all_of: Vec<Schema>,
    /// `anyOf`.
    pub any_of: Vec<Schema>,
    /// `oneOf`.
    pub one_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub x_preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`.
    pub x_embedded_resource: bool,
    /// `x-kubernetes-int-or-string`.
    pub x_int_or_string: bool,
    /// `x-kubernetes-list-type`.
    pub x_list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub x_list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub x_map_type: Option<MapType>,
    /// `x-kubernetes-patch-merge-key`.
    pub x_patch_merge_key: Option<String>,
    /// `x-kubernetes-patch-strategy`.
    pub x_patch_strategy: Option<String>,
    /// `x-kubernetes-validations`.
    pub x_validations: Vec<ValidationRule>,
    /// The definition this node was resolved from (`$ref: "#/definitions/NAME"`), so that
    /// generated code and published OpenAPI share one type or definition again.
    pub definition: Option<String>,
    /// The keywords written next to that `$ref` and laid over the definition (a field's
    /// own description, default or patch strategy), which are not the definition's.
    pub definition_overlay: Vec<String>,
}
