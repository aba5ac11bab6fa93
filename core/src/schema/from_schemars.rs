//! Structural schemas from `schemars` JSON Schema, for hand-written resources.
//!
//! `schemars` 1.x writes draft 2020-12 JSON Schema: shared types live in `$defs` and
//! are referenced with `$ref`, `Option<T>` becomes `"type": ["T", "null"]` or
//! `anyOf: [T, {"type": "null"}]`, enums become `enum`/`oneOf`/`anyOf`, and integers
//! carry Rust formats such as `uint32`. Kubernetes wants a *structural* OpenAPI v3
//! schema instead: everything inline, `nullable: true`, one type per node, no `const`,
//! boolean `exclusiveMinimum`, and only the formats its `strfmt` registry knows.
//!
//! [`Schema::structural_from_json_schema`] performs that translation and
//! [`Schema::from_json_schema`] parses the result:
//!
//! - `$ref` (to `#/$defs/..`, `#/definitions/..`, `#/components/schemas/..` or `#`) is
//!   inlined, with the referring node's own keywords (usually its `description`) taking
//!   precedence. A reference back to a type that is being inlined (a recursive type) is
//!   cut with `x-kubernetes-preserve-unknown-fields: true`.
//! - A `null` type or `null` alternative becomes `nullable: true`; `null` is dropped
//!   from `enum`s and `default: null` is dropped.
//! - Alternatives (`oneOf`/`anyOf`, what Rust enums become): a single remaining branch
//!   is merged into the node; string constants become one string `enum` (unit-variant
//!   enums, including documented variants); objects (tagged enums) are merged into one
//!   object with the union of their properties, required only where every branch
//!   requires them; `integer` + `string` becomes `x-kubernetes-int-or-string`; anything
//!   else is untyped with `x-kubernetes-preserve-unknown-fields: true`.
//! - `const` becomes a one-value `enum`; numeric `exclusiveMinimum`/`exclusiveMaximum`
//!   become `minimum`/`maximum` with the boolean flag; `examples` becomes `example`.
//! - Formats Kubernetes does not know (`uint`, `uint32`, `int8`, ...) are dropped;
//!   schemars already adds the matching `minimum`/`maximum`.
//! - `true` schemas (`serde_json::Value`), `additionalProperties: true` and objects
//!   with no properties at all (`FieldsV1`) preserve unknown fields;
//!   `additionalProperties: false` is dropped (unknown fields are pruned anyway).
//!   Tuples become arrays of untyped items.
//! - At the root, `$schema`, `title` and `$defs` are dropped, and `metadata` is
//!   `{"type": "object"}` as Kubernetes requires (the server owns `ObjectMeta`).
//! - Keywords with no OpenAPI v3 meaning (`$id`, `$comment`, `readOnly`, `deprecated`,
//!   `propertyNames`, `patternProperties`, ...) are dropped; `x-kubernetes-*`
//!   extensions are kept as written.
//!
//! The k8s-openapi types come out as Kubernetes publishes them: `IntOrString` and
//! `Quantity` as `x-kubernetes-int-or-string`, `Time` as a `date-time` string and a
//! nested `ObjectMeta` as an object whose `managedFields[].fieldsV1` preserves unknown
//! fields.

use serde_json::{Map, Value, json};

use super::Schema;
use crate::field::{ErrorList, FieldError, FieldPath};

/// The `format`s kept: the OpenAPI numeric ones and kube-openapi's `strfmt` registry.
const KNOWN_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "password",
    "date",
    "date-time",
    "datetime",
    "duration",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "bsonobjectid",
];

/// Keywords copied as they are.
const COPIED: &[&str] = &[
    "description",
    "title",
    "nullable",
    "required",
    "pattern",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "example",
];

/// Nesting beyond this is treated as unknown content rather than followed.
const MAX_DEPTH: usize = 128;

const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";

impl Schema {
    /// Converts a JSON Schema produced by `schemars` (with `$ref`s, `$defs`, nullable
    /// `type` arrays) into a structural schema and parses it.
    ///
    /// See [`Schema::structural_from_json_schema`] for the translation.
    pub fn from_json_schema(json_schema: &Value) -> Result<Schema, ErrorList> {
        let structural = Self::structural_from_json_schema(json_schema)?;
        Schema::parse(&structural)
    }

    /// Translates a `schemars` JSON Schema into the structural OpenAPI v3 schema
    /// Kubernetes expects as `openAPIV3Schema`, without parsing it. Errors (an
    /// unresolvable `$ref`, a node that is not a schema) carry the path of the offending
    /// keyword in `json_schema`.
    ///
    /// ```
    /// use kapi_core::schema::Schema;
    /// use serde_json::json;
    ///
    /// let structural = Schema::structural_from_json_schema(&json!({
    ///     "$schema": "https://json-schema.org/draft/2020-12/schema",
    ///     "title": "Widget",
    ///     "type": "object",
    ///     "properties": {
    ///         "metadata": {"$ref": "#/$defs/ObjectMeta"},
    ///         "size": {"type": ["integer", "null"], "format": "uint32", "minimum": 0}
    ///     },
    ///     "$defs": {"ObjectMeta": {"type": "object", "properties": {}}}
    /// })).unwrap();
    /// assert_eq!(structural, json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "metadata": {"type": "object"},
    ///         "size": {"type": "integer", "nullable": true, "minimum": 0}
    ///     }
    /// }));
    /// ```
    pub fn structural_from_json_schema(json_schema: &Value) -> Result<Value, ErrorList> {
        let mut converter = Converter {
            root: json_schema,
            expanding: vec!["#".to_string()],
            errors: Vec::new(),
        };
        let mut out = converter.node(json_schema, &FieldPath::root(), 0);
        if let Some(map) = out.as_object_mut() {
            map.remove("title");
            map.remove("nullable");
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                if props.contains_key("metadata") {
                    props.insert("metadata".into(), json!({"type": "object"}));
                }
            }
            if let Some(Value::Array(required)) = map.get_mut("required") {
                required.retain(|r| r != "metadata");
                if required.is_empty() {
                    map.remove("required");
                }
            }
        }
        if converter.errors.is_empty() {
            Ok(out)
        } else {
            Err(converter.errors)
        }
    }
}

struct Converter<'a> {
    /// The whole document, which `$ref`s point into.
    root: &'a Value,
    /// The references being inlined, outermost first (`#` is the root).
    expanding: Vec<String>,
    errors: ErrorList,
}

impl Converter<'_> {
    fn node(&mut self, schema: &Value, at: &FieldPath, depth: usize) -> Value {
        match schema {
            Value::Object(map) => Value::Object(self.object(map, at, depth)),
            // `true` accepts anything; `false` only appears where handled by the parent.
            Value::Bool(_) => json!({ PRESERVE: true }),
            other => {
                self.errors.push(FieldError::invalid(
                    at,
                    other.clone(),
                    "must be a JSON Schema object or boolean",
                ));
                json!({ PRESERVE: true })
            }
        }
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        at: &FieldPath,
        depth: usize,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        if depth > MAX_DEPTH {
            out.insert(PRESERVE.into(), Value::Bool(true));
            return out;
        }
        if let Some(reference) = map.get("$ref") {
            match reference.as_str() {
                Some(r) => out = self.reference(r, &at.child("$ref"), depth),
                None => self.errors.push(FieldError::invalid(
                    &at.child("$ref"),
                    reference.clone(),
                    "must be a string",
                )),
            }
        }
        if let Some(Value::Array(branches)) = map.get("allOf") {
            for (i, branch) in branches.iter().enumerate() {
                if let Value::Object(converted) =
                    self.node(branch, &at.child("allOf").index(i), depth + 1)
                {
                    merge(&mut out, converted);
                }
            }
        }
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                let converted = self.alternatives(branches, &at.child(key), depth);
                merge(&mut out, converted);
            }
        }
        for (key, value) in map {
            self.keyword(&mut out, key, value, at, depth);
        }
        let untyped_object = out.get("type").and_then(Value::as_str) == Some("object")
            && !out.contains_key("properties")
            && !out.contains_key("additionalProperties");
        if untyped_object {
            out.insert(PRESERVE.into(), Value::Bool(true));
        }
        if out.get(PRESERVE) == Some(&Value::Bool(true))
            && out.get("properties").is_some_and(is_empty_object)
        {
            out.remove("properties");
        }
        out
    }

    /// Converts one keyword of a node into `out`.
    fn keyword(
        &mut self,
        out: &mut Map<String, Value>,
        key: &str,
        value: &Value,
        at: &FieldPath,
        depth: usize,
    ) {
        match key {
            "type" => self.type_(out, value, at),
            "properties" => {
                let Value::Object(props) = value else {
                    self.errors.push(FieldError::invalid(
                        &at.child(key),
                        value.clone(),
                        "must be an object",
                    ));
                    return;
                };
                let mut converted = Map::new();
                for (name, prop) in props {
                    converted.insert(
                        name.clone(),
                        self.node(prop, &at.child(key).key(name), depth + 1),
                    );
                }
                let target = out
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(existing) = target {
                    existing.extend(converted);
                }
            }
            "required" => {
                if let Value::Array(names) = value {
                    let target = out
                        .entry("required")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(existing) = target {
                        for name in names {
                            if !existing.contains(name) {
                                existing.push(name.clone());
                            }
                        }
                    }
                }
            }
            "items" => match value {
                Value::Array(_) => {
                    out.insert("items".into(), json!({ PRESERVE: true }));
                }
                Value::Bool(false) => {}
                other => {
                    out.insert("items".into(), self.node(other, &at.child(key), depth + 1));
                }
            },
            "prefixItems" => {
                out.insert("items".into(), json!({ PRESERVE: true }));
            }
            "additionalProperties" => match value {
                Value::Bool(false) => {}
                Value::Bool(true) => {
                    out.insert(PRESERVE.into(), Value::Bool(true));
                }
                Value::Object(schema) if schema.is_empty() => {
                    out.insert(PRESERVE.into(), Value::Bool(true));
                }
                other => {
                    out.insert(
                        "additionalProperties".into(),
                        self.node(other, &at.child(key), depth + 1),
                    );
                }
            },
            "not" => {
                out.insert("not".into(), self.node(value, &at.child(key), depth + 1));
            }
            "const" => set_enum(out, vec![value.clone()]),
            "enum" => match value {
                Value::Array(values) => set_enum(out, values.clone()),
                other => self.errors.push(FieldError::invalid(
                    &at.child(key),
                    other.clone(),
                    "must be an array",
                )),
            },
            "exclusiveMinimum" | "exclusiveMaximum" => match value {
                Value::Number(_) => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    out.insert(bound.into(), value.clone());
                    out.insert(key.into(), Value::Bool(true));
                }
                other => {
                    out.insert(key.into(), other.clone());
                }
            },
            "default" if !value.is_null() => {
                out.insert(key.into(), value.clone());
            }
            "examples" => {
                if let Some(first) = value.as_array().and_then(|v| v.first()) {
                    out.insert("example".into(), first.clone());
                }
            }
            "format" => {
                if value.as_str().is_some_and(|f| KNOWN_FORMATS.contains(&f)) {
                    out.insert(key.into(), value.clone());
                } else {
                    out.remove(key);
                }
            }
            _ if COPIED.contains(&key) || key.starts_with("x-kubernetes-") => {
                out.insert(key.into(), value.clone());
            }
            // `$ref`, `allOf`, `oneOf` and `anyOf` are handled by `object`; the rest has
            // no OpenAPI v3 meaning.
            _ => {}
        }
    }

    /// `type`: a name, or a list of names possibly including `null`.
    fn type_(&mut self, out: &mut Map<String, Value>, value: &Value, at: &FieldPath) {
        let names: Vec<&str> = match value {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            other => {
                self.errors.push(FieldError::invalid(
                    &at.child("type"),
                    other.clone(),
                    "must be a string or an array",
                ));
                return;
            }
        };
        if names.contains(&"null") {
            out.insert("nullable".into(), Value::Bool(true));
        }
        let mut types: Vec<&str> = names.into_iter().filter(|t| *t != "null").collect();
        types.sort_unstable();
        types.dedup();
        match types.as_slice() {
            [] => {}
            [single] => {
                out.insert("type".into(), Value::String((*single).to_string()));
            }
            ["integer", "number"] => {
                out.insert("type".into(), Value::String("number".into()));
            }
            ["integer", "string"] => {
                out.remove("type");
                out.insert(INT_OR_STRING.into(), Value::Bool(true));
            }
            _ => {
                out.remove("type");
                out.insert(PRESERVE.into(), Value::Bool(true));
            }
        }
    }

    /// Inlines the schema `reference` points at.
    fn reference(&mut self, reference: &str, at: &FieldPath, depth: usize) -> Map<String, Value> {
        let Some(target) = resolve(self.root, reference) else {
            self.errors.push(FieldError::invalid(
                at,
                reference,
                "reference not found in the schema document",
            ));
            return Map::new();
        };
        if self.expanding.iter().any(|r| r == reference) {
            // A recursive type: stop here and keep whatever the object holds.
            let mut cut = Map::new();
            if target.get("type").and_then(Value::as_str) == Some("object")
                || target.get("properties").is_some()
            {
                cut.insert("type".into(), Value::String("object".into()));
            }
            cut.insert(PRESERVE.into(), Value::Bool(true));
            return cut;
        }
        self.expanding.push(reference.to_string());
        let converted = match target {
            Value::Object(map) => self.object(map, at, depth + 1),
            other => match self.node(other, at, depth + 1) {
                Value::Object(map) => map,
                _ => Map::new(),
            },
        };
        self.expanding.pop();
        converted
    }

    /// `oneOf`/`anyOf` folded into one structural node.
    fn alternatives(
        &mut self,
        branches: &[Value],
        at: &FieldPath,
        depth: usize,
    ) -> Map<String, Value> {
        let mut nullable = false;
        let mut converted = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            if is_null_schema(branch) {
                nullable = true;
                continue;
            }
            if let Value::Object(map) = self.node(branch, &at.index(i), depth + 1) {
                converted.push(map);
            }
        }
        let mut out = match converted.len() {
            0 => Map::new(),
            1 => converted.remove(0),
            _ => union(converted),
        };
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        out
    }
}

/// Several alternatives as one structural node.
fn union(branches: Vec<Map<String, Value>>) -> Map<String, Value> {
    let type_of =
        |b: &Map<String, Value>| b.get("type").and_then(Value::as_str).map(str::to_string);
    let mut out = Map::new();
    let all = |t: &str| branches.iter().all(|b| type_of(b).as_deref() == Some(t));

    if all("string") && branches.iter().all(|b| b.contains_key("enum")) {
        let mut values = Vec::new();
        for branch in &branches {
            for value in branch["enum"].as_array().into_iter().flatten() {
                if !values.contains(value) {
                    values.push(value.clone());
                }
            }
        }
        out.insert("type".into(), Value::String("string".into()));
        out.insert("enum".into(), Value::Array(values));
        return out;
    }

    if all("object") {
        let mut properties = Map::new();
        let mut required: Option<Vec<Value>> = None;
        let mut preserve = false;
        for branch in &branches {
            if let Some(Value::Object(props)) = branch.get("properties") {
                for (name, prop) in props {
                    match properties.get_mut(name) {
                        Some(existing) => merge_property(existing, prop),
                        None => {
                            properties.insert(name.clone(), prop.clone());
                        }
                    }
                }
            }
            preserve |= branch.get(PRESERVE) == Some(&Value::Bool(true));
            let names = branch
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            required = Some(match required {
                None => names,
                Some(previous) => previous.into_iter().filter(|n| names.contains(n)).collect(),
            });
        }
        out.insert("type".into(), Value::String("object".into()));
        if !properties.is_empty() {
            out.insert("properties".into(), Value::Object(properties));
        }
        if let Some(required) = required.filter(|r| !r.is_empty()) {
            out.insert("required".into(), Value::Array(required));
        }
        if preserve {
            out.insert(PRESERVE.into(), Value::Bool(true));
        }
        return out;
    }

    let mut types: Vec<String> = branches.iter().filter_map(type_of).collect();
    types.sort_unstable();
    types.dedup();
    let typed_everywhere = types.len() == 2 && branches.iter().all(|b| type_of(b).is_some());
    if typed_everywhere && types == ["integer", "string"] {
        out.insert(INT_OR_STRING.into(), Value::Bool(true));
    } else {
        out.insert(PRESERVE.into(), Value::Bool(true));
    }
    out
}

/// The same property in two alternatives: string enums are joined; otherwise the first
/// definition stands.
fn merge_property(existing: &mut Value, other: &Value) {
    let (Some(a), Some(b)) = (
        existing.get("enum").and_then(Value::as_array),
        other.get("enum").and_then(Value::as_array),
    ) else {
        return;
    };
    let mut values = a.clone();
    for value in b {
        if !values.contains(value) {
            values.push(value.clone());
        }
    }
    existing["enum"] = Value::Array(values);
}

/// Adds `from` to `into`: properties and required are joined, other keywords already
/// in `into` are overwritten.
fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(more)) => {
                existing.extend(more)
            }
            ("required", Some(Value::Array(existing)), Value::Array(more)) => {
                for name in more {
                    if !existing.contains(&name) {
                        existing.push(name);
                    }
                }
            }
            (_, _, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// Sets `enum`, turning a `null` member into `nullable`.
fn set_enum(out: &mut Map<String, Value>, mut values: Vec<Value>) {
    if values.iter().any(Value::is_null) {
        values.retain(|v| !v.is_null());
        out.insert("nullable".into(), Value::Bool(true));
    }
    out.insert("enum".into(), Value::Array(values));
}

/// `{"type": "null"}`, `{"const": null}` or `{"enum": [null]}`.
fn is_null_schema(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.get("type").is_some_and(|t| t == "null")
        || map.get("const").is_some_and(Value::is_null)
        || map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.len() == 1 && e[0].is_null())
}

fn is_empty_object(value: &Value) -> bool {
    value.as_object().is_some_and(Map::is_empty)
}

/// Resolves a local reference (`#`, `#/$defs/Name`, ...) against the document.
fn resolve<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(&percent_decode(pointer))
}

/// Undoes the percent-encoding schemars applies to `$ref` names (`Foo%3CBar%3E`).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let hex = |b: u8| (b as char).to_digit(16);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::PodTemplateSpec;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    use super::Schema;

    fn structural<T: JsonSchema>() -> Value {
        let json_schema = schemars::schema_for!(T);
        Schema::structural_from_json_schema(json_schema.as_value()).expect("converts")
    }

    /// A top-level thing.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Thing {
        metadata: ObjectMeta,
        spec: ThingSpec,
        #[serde(default)]
        status: Option<ThingStatus>,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct ThingSpec {
        /// Unsigned: the format goes, the minimum stays.
        count: u32,
        ratio: f64,
        small: i32,
        label: Option<String>,
        mode: Mode,
        documented: Documented,
        maybe_mode: Option<Mode>,
        parts: Vec<Part>,
        labels: BTreeMap<String, String>,
        anything: Value,
        port: IntOrString,
        memory: Quantity,
        since: Option<Time>,
        pair: (String, i32),
        tree: Tree,
        action: Action,
        tagged: Tagged,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct ThingStatus {
        ready: bool,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    enum Documented {
        /// The first.
        One,
        /// The second.
        Two,
    }

    /// A part.
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Part {
        name: String,
    }

    /// A recursive type.
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Tree {
        value: i64,
        children: Vec<Tree>,
        parent: Option<Box<Tree>>,
    }

    /// Externally tagged, with data.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    enum Action {
        Scale { replicas: i32 },
        Restart { after: String },
    }

    /// Internally tagged.
    #[derive(Serialize, Deserialize, JsonSchema)]
    #[serde(tag = "type")]
    enum Tagged {
        A { a: String },
        B { b: String },
    }

    #[test]
    fn root() {
        let s = structural::<Thing>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["metadata"], json!({"type": "object"}));
        assert_eq!(s["required"], json!(["spec"]));
        assert!(s.get("$defs").is_none() && s.get("$schema").is_none() && s.get("title").is_none());
        assert!(!s.to_string().contains("$ref"), "{s}");
        let status = &s["properties"]["status"];
        assert_eq!(status["nullable"], true);
        assert_eq!(status["properties"]["ready"], json!({"type": "boolean"}));
    }

    #[test]
    fn scalars_and_collections() {
        let s = structural::<Thing>();
        let p = &s["properties"]["spec"]["properties"];
        assert_eq!(
            p["count"],
            json!({"type": "integer", "minimum": 0, "description": "Unsigned: the format goes, the minimum stays."})
        );
        assert_eq!(p["ratio"], json!({"type": "number", "format": "double"}));
        assert_eq!(p["small"], json!({"type": "integer", "format": "int32"}));
        assert_eq!(p["label"], json!({"type": "string", "nullable": true}));
        assert_eq!(p["parts"]["type"], "array");
        assert_eq!(p["parts"]["items"]["type"], "object");
        assert_eq!(p["parts"]["items"]["description"], "A part.");
        assert_eq!(p["parts"]["items"]["required"], json!(["name"]));
        assert_eq!(
            p["labels"],
            json!({"type": "object", "additionalProperties": {"type": "string"}})
        );
        assert_eq!(
            p["anything"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(p["pair"]["type"], "array");
        assert_eq!(
            p["pair"]["items"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
    }

    #[test]
    fn enums() {
        let s = structural::<Thing>();
        let p = &s["properties"]["spec"]["properties"];
        assert_eq!(
            p["mode"],
            json!({"type": "string", "enum": ["Fast", "Slow"]})
        );
        assert_eq!(
            p["documented"],
            json!({"type": "string", "enum": ["One", "Two"]})
        );
        assert_eq!(
            p["maybeMode"],
            json!({"type": "string", "enum": ["Fast", "Slow"], "nullable": true})
        );
        let action = &p["action"];
        assert_eq!(action["type"], "object");
        assert_eq!(action["description"], "Externally tagged, with data.");
        assert_eq!(
            action["properties"]["scale"]["properties"]["replicas"]["format"],
            "int32"
        );
        assert_eq!(
            action["properties"]["restart"]["required"],
            json!(["after"])
        );
        assert!(action.get("required").is_none());
        let tagged = &p["tagged"];
        assert_eq!(tagged["type"], "object");
        assert_eq!(
            tagged["properties"]["type"],
            json!({"type": "string", "enum": ["A", "B"]})
        );
        assert_eq!(tagged["properties"]["a"]["type"], "string");
        assert_eq!(tagged["properties"]["b"]["type"], "string");
        assert_eq!(tagged["required"], json!(["type"]));
    }

    #[test]
    fn recursion_is_cut() {
        let s = structural::<Thing>();
        let tree = &s["properties"]["spec"]["properties"]["tree"];
        assert_eq!(tree["properties"]["value"]["format"], "int64");
        assert_eq!(
            tree["properties"]["children"]["items"],
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(
            tree["properties"]["parent"],
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "nullable": true})
        );
    }

    #[test]
    fn k8s_openapi_types() {
        let s = structural::<Thing>();
        let p = &s["properties"]["spec"]["properties"];
        assert_eq!(p["port"]["x-kubernetes-int-or-string"], true);
        assert!(p["port"].get("type").is_none());
        assert_eq!(p["memory"]["x-kubernetes-int-or-string"], true);
        assert_eq!(p["since"]["type"], "string");
        assert_eq!(p["since"]["format"], "date-time");
        assert_eq!(p["since"]["nullable"], true);

        // A nested ObjectMeta is a full object; FieldsV1 preserves its contents.
        let template = structural::<PodTemplateSpec>();
        let meta = &template["properties"]["metadata"];
        assert_eq!(meta, &json!({"type": "object"}), "root metadata is opaque");
        let pod_meta = structural::<ObjectMeta>();
        assert_eq!(pod_meta["properties"]["name"]["type"], "string");
        assert_eq!(
            pod_meta["properties"]["creationTimestamp"]["format"],
            "date-time"
        );
        let fields_v1 = &pod_meta["properties"]["managedFields"]["items"]["properties"]["fieldsV1"];
        assert_eq!(fields_v1["type"], "object");
        assert_eq!(fields_v1["x-kubernetes-preserve-unknown-fields"], true);
        assert!(!pod_meta.to_string().contains("$ref"));
    }

    #[test]
    fn hand_written_json_schema() {
        let s = Schema::structural_from_json_schema(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "X",
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/Foo%3CBar%3E", "description": "the field's own words"},
                "b": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10, "format": "uint8"},
                "c": {"const": "fixed", "type": "string", "examples": ["fixed"], "default": null},
                "d": {"type": ["integer", "string"]},
                "e": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "f": {"oneOf": [{"type": "string", "enum": ["x"]}, {"type": "object", "properties": {"y": {"type": "string"}}}]},
                "g": {"type": "object", "additionalProperties": false, "properties": {"h": {"type": "string"}}},
                "i": {"allOf": [{"$ref": "#/definitions/Old"}], "readOnly": true}
            },
            "$defs": {"Foo<Bar>": {"type": "object", "description": "the type's words", "properties": {"z": {"type": "boolean"}}}},
            "definitions": {"Old": {"type": "string", "format": "date-time"}}
        }))
        .unwrap();
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "object", "description": "the field's own words", "properties": {"z": {"type": "boolean"}}},
                    "b": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true},
                    "c": {"type": "string", "enum": ["fixed"], "example": "fixed"},
                    "d": {"x-kubernetes-int-or-string": true},
                    "e": {"x-kubernetes-int-or-string": true},
                    "f": {"x-kubernetes-preserve-unknown-fields": true},
                    "g": {"type": "object", "properties": {"h": {"type": "string"}}},
                    "i": {"type": "string", "format": "date-time"}
                }
            })
        );
    }

    #[test]
    fn unresolvable_reference() {
        let errs = Schema::structural_from_json_schema(&json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Missing"}}
        }))
        .unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "properties[a].$ref: Invalid value: \"#/$defs/Missing\": reference not found in the schema document"
        );
    }
}
