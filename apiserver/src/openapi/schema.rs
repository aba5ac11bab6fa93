//! A resource's structural schema as an OpenAPI definition, the way
//! apiextensions-apiserver's CRD OpenAPI builder writes it: the schema itself, with
//! `metadata` referring to `ObjectMeta`, `apiVersion` and `kind` from `TypeMeta`, and
//! `x-kubernetes-group-version-kind`; plus the list type referring to `ListMeta`.

use kapi_core::ResourceInfo;
use kapi_core::schema::{AdditionalProperties, ListType, MapType, Schema, SchemaType};
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::meta::{LIST_META, OBJECT_META, STATUS, property};

/// Which OpenAPI the schema is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Swagger 2.0: what kubectl's v2 parser copes with (no junctors, nullable or
    /// defaults; untyped preserve-unknown nodes).
    V2,
    /// OpenAPI 3.0: the schema as written, int-or-string unfolded.
    V3,
}

impl Flavor {
    /// Where definitions live.
    pub fn prefix(self) -> &'static str {
        match self {
            Flavor::V2 => "#/definitions/",
            Flavor::V3 => "#/components/schemas/",
        }
    }
}

/// The definition name kube-apiserver gives a kind: the group reversed, version, kind
/// (`dev.kapi.example.v1.Widget`); the core group is named as Kubernetes names its own
/// types (`io.k8s.api.core.v1.Namespace`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    if group.is_empty() {
        return format!("io.k8s.api.core.{version}.{kind}");
    }
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

fn reference(flavor: Flavor, name: &str) -> Value {
    json!({"$ref": format!("{}{name}", flavor.prefix())})
}

fn gvk(info: &ResourceInfo, kind: &str) -> Value {
    json!([{"group": info.group, "kind": kind, "version": info.version}])
}

const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The definition of `info`'s kind.
pub(crate) fn kind_definition(
    info: &ResourceInfo,
    schema: &Schema,
    flavor: Flavor,
    shared: &mut Shared,
) -> Value {
    let mut def = if flavor == Flavor::V2 && schema.x_preserve_unknown_fields {
        // Properties next to preserve-unknown make kubectl v2 validation reject every
        // unknown field, so kube-apiserver publishes a bare object.
        Map::from_iter([("type".to_string(), Value::from("object"))])
    } else {
        let mut def = match convert(schema, flavor, shared) {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        let props = def
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(props) = props {
            let mut metadata = reference(flavor, OBJECT_META);
            metadata["description"] = METADATA_DESCRIPTION.into();
            props.insert("metadata".into(), metadata);
            props.insert("apiVersion".into(), property(STATUS, "apiVersion"));
            props.insert("kind".into(), property(STATUS, "kind"));
        }
        def
    };
    def.insert(
        "x-kubernetes-group-version-kind".into(),
        gvk(info, &info.kind),
    );
    if !info.selectable_fields.is_empty() {
        let fields: Vec<Value> = info
            .selectable_fields
            .iter()
            .map(|f| json!({"fieldPath": f.trim_start_matches('.')}))
            .collect();
        def.insert("x-kubernetes-selectable-fields".into(), fields.into());
    }
    Value::Object(def)
}

/// The definition of `info`'s list kind.
pub(crate) fn list_definition(info: &ResourceInfo, flavor: Flavor) -> Value {
    let item = definition_name(&info.group, &info.version, &info.kind);
    let mut metadata = reference(flavor, LIST_META);
    metadata["description"] = LIST_METADATA_DESCRIPTION.into();
    json!({
        "description": format!("{} is a list of {}", info.list_kind, info.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": property(STATUS, "apiVersion"),
            "kind": property(STATUS, "kind"),
            "items": {
                "description": format!(
                    "List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                    info.plural
                ),
                "type": "array",
                "items": reference(flavor, &item),
            },
            "metadata": metadata,
        },
        "x-kubernetes-group-version-kind": gvk(info, &info.list_kind),
    })
}

/// Shared definitions met while converting (`Schema::definition`), published once each
/// under their own name and referred to with `$ref`, as kube-apiserver publishes its
/// built-in types.
#[derive(Default)]
pub(crate) struct Shared {
    /// `name → (definition, came from a use with keywords laid over it)`.
    defs: BTreeMap<String, (Value, bool)>,
}

impl Shared {
    /// Adds the collected definitions to `defs`, keeping any already there.
    pub fn into_definitions(self, defs: &mut BTreeMap<String, Value>) {
        for (name, (def, _)) in self.defs {
            defs.entry(name).or_insert(def);
        }
    }
}

/// One schema node, and everything below it; a node resolved from a shared definition
/// becomes a `$ref` to it (with the keywords written next to the reference).
pub(crate) fn convert(s: &Schema, flavor: Flavor, shared: &mut Shared) -> Value {
    let Some(name) = &s.definition else {
        return convert_node(s, flavor, shared);
    };
    let overlaid = !s.definition_overlay.is_empty();
    let known = shared.defs.get(name).map(|(_, o)| *o);
    let mut node = Map::new();
    let body = if known.is_none() || (known == Some(true) && !overlaid) {
        // Placeholder first: a definition that contains itself refers to the name.
        shared
            .defs
            .entry(name.clone())
            .or_insert((Value::Null, overlaid));
        Some(convert_node(s, flavor, shared))
    } else {
        None
    };
    if let Some(mut body) = body {
        if let Value::Object(m) = &mut body {
            for key in &s.definition_overlay {
                if let Some(v) = m.remove(key) {
                    node.insert(key.clone(), v);
                }
            }
        }
        shared.defs.insert(name.clone(), (body, overlaid));
    } else if overlaid {
        // The overlaid keywords, converted as the node would be.
        if let Value::Object(m) = convert_node(&shallow(s), flavor, shared) {
            for key in &s.definition_overlay {
                if let Some(v) = m.get(key) {
                    node.insert(key.clone(), v.clone());
                }
            }
        }
    }
    node.insert("$ref".into(), format!("{}{name}", flavor.prefix()).into());
    Value::Object(node)
}

/// `s` without its children: enough to convert the keywords of the node itself.
fn shallow(s: &Schema) -> Schema {
    Schema {
        properties: Default::default(),
        items: None,
        additional_properties: None,
        all_of: Vec::new(),
        any_of: Vec::new(),
        one_of: Vec::new(),
        not: None,
        definition: None,
        ..s.clone()
    }
}

fn convert_node(s: &Schema, flavor: Flavor, shared: &mut Shared) -> Value {
    let v2 = flavor == Flavor::V2;
    let mut m = Map::new();
    let mut type_ = s.type_;
    let mut keep_children = true;
    if v2 {
        // ToStructuralOpenAPIV2: kubectl's v2 parser cannot type a nullable node, nor
        // take properties or items next to preserve-unknown.
        if s.nullable {
            type_ = None;
            keep_children = false;
        }
        if s.x_preserve_unknown_fields {
            keep_children = false;
            if type_ == Some(SchemaType::Object) {
                type_ = None;
            }
        }
        if type_ == Some(SchemaType::Array) && (s.items.is_none() || !keep_children) {
            type_ = None;
        }
    }
    if let Some(t) = type_ {
        m.insert("type".into(), t.as_str().into());
    }
    if let Some(f) = &s.format {
        m.insert("format".into(), f.as_str().into());
    }
    if let Some(t) = &s.title {
        m.insert("title".into(), t.as_str().into());
    }
    if let Some(d) = &s.description {
        m.insert("description".into(), d.as_str().into());
    }
    if s.nullable && !v2 {
        m.insert("nullable".into(), true.into());
    }
    // v2 documents have defaults pruned, as kube-apiserver merges them with its own.
    if let (Some(d), false) = (&s.default, v2) {
        m.insert("default".into(), d.clone());
    }
    if let Some(e) = &s.example {
        m.insert("example".into(), e.clone());
    }
    if let Some(e) = &s.enum_ {
        m.insert("enum".into(), e.clone().into());
    }
    if keep_children && !s.properties.is_empty() {
        let props: Map<String, Value> = s
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), convert(v, flavor, shared)))
            .collect();
        m.insert("properties".into(), props.into());
    }
    let required = required(s, v2);
    if !required.is_empty() {
        m.insert("required".into(), required.into());
    }
    if let (Some(items), true) = (&s.items, keep_children) {
        m.insert("items".into(), convert(items, flavor, shared));
    }
    match &s.additional_properties {
        Some(AdditionalProperties::Bool(b)) => {
            m.insert("additionalProperties".into(), (*b).into());
        }
        Some(AdditionalProperties::Schema(a)) => {
            m.insert("additionalProperties".into(), convert(a, flavor, shared));
        }
        None => {}
    }
    insert_value_validations(&mut m, s);
    if !v2 {
        insert_junctors(&mut m, s, flavor, shared);
    }
    insert_extensions(&mut m, s, v2);
    Value::Object(m)
}

/// `required`, without nullable properties in v2 (a nullable field may be sent as
/// `null`, which v2 cannot express), and none at all under a nullable map value.
fn required(s: &Schema, v2: bool) -> Vec<Value> {
    if v2 {
        if let Some(AdditionalProperties::Schema(a)) = &s.additional_properties {
            if a.nullable {
                return Vec::new();
            }
        }
    }
    s.required
        .iter()
        .filter(|r| !(v2 && s.properties.get(*r).is_some_and(|p| p.nullable)))
        .map(|r| Value::from(r.as_str()))
        .collect()
}

fn insert_value_validations(m: &mut Map<String, Value>, s: &Schema) {
    let number = |x: f64| -> Value {
        // Integral bounds print as integers, as Go prints them.
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            Value::from(x as i64)
        } else {
            Value::from(x)
        }
    };
    if let Some(x) = s.maximum {
        m.insert("maximum".into(), number(x));
    }
    if s.exclusive_maximum {
        m.insert("exclusiveMaximum".into(), true.into());
    }
    if let Some(x) = s.minimum {
        m.insert("minimum".into(), number(x));
    }
    if s.exclusive_minimum {
        m.insert("exclusiveMinimum".into(), true.into());
    }
    if let Some(x) = s.multiple_of {
        m.insert("multipleOf".into(), number(x));
    }
    let counts = [
        ("maxLength", s.max_length),
        ("minLength", s.min_length),
        ("maxItems", s.max_items),
        ("minItems", s.min_items),
        ("maxProperties", s.max_properties),
        ("minProperties", s.min_properties),
    ];
    for (key, value) in counts {
        if let Some(x) = value {
            m.insert(key.into(), x.into());
        }
    }
    if let Some(p) = &s.pattern {
        m.insert("pattern".into(), p.source.as_str().into());
    }
    if s.unique_items {
        m.insert("uniqueItems".into(), true.into());
    }
}

/// `allOf`, `anyOf`, `oneOf`, `not`, with int-or-string unfolded as the structural
/// schema's `Unfold` does, so v3 readers see which types the node takes.
fn insert_junctors(m: &mut Map<String, Value>, s: &Schema, flavor: Flavor, shared: &mut Shared) {
    let mut list = |items: &[Schema]| -> Vec<Value> {
        items.iter().map(|x| convert(x, flavor, shared)).collect()
    };
    let mut all_of = list(&s.all_of);
    let mut any_of = list(&s.any_of);
    let one_of = list(&s.one_of);
    if s.x_int_or_string && !is_int_or_string_any_of(&s.any_of) && !first_all_of_is_int_or_string(s)
    {
        let int_or_string = vec![json!({"type": "integer"}), json!({"type": "string"})];
        if any_of.is_empty() {
            any_of = int_or_string;
        } else {
            all_of.insert(0, json!({"anyOf": int_or_string}));
        }
    }
    if !all_of.is_empty() {
        m.insert("allOf".into(), all_of.into());
    }
    if !any_of.is_empty() {
        m.insert("anyOf".into(), any_of.into());
    }
    if !one_of.is_empty() {
        m.insert("oneOf".into(), one_of.into());
    }
    if let Some(n) = &s.not {
        m.insert("not".into(), convert(n, flavor, shared));
    }
}

fn is_int_or_string_any_of(any_of: &[Schema]) -> bool {
    matches!(
        any_of,
        [a, b] if a.type_ == Some(SchemaType::Integer) && b.type_ == Some(SchemaType::String)
    )
}

fn first_all_of_is_int_or_string(s: &Schema) -> bool {
    s.all_of
        .first()
        .is_some_and(|a| is_int_or_string_any_of(&a.any_of))
}

fn insert_extensions(m: &mut Map<String, Value>, s: &Schema, v2: bool) {
    if s.x_preserve_unknown_fields {
        m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    }
    if s.x_embedded_resource {
        m.insert("x-kubernetes-embedded-resource".into(), true.into());
        // Like kube-apiserver, an embedded object gets TypeMeta and ObjectMeta, except
        // in v2 when it also preserves unknown fields (kubectl would then reject them).
        if !(v2 && s.x_preserve_unknown_fields) {
            embed_type_and_object_meta(m, v2);
        }
    }
    if s.x_int_or_string {
        m.insert("x-kubernetes-int-or-string".into(), true.into());
    }
    if !s.x_list_map_keys.is_empty() {
        m.insert(
            "x-kubernetes-list-map-keys".into(),
            s.x_list_map_keys.clone().into(),
        );
    }
    if let Some(t) = s.x_list_type {
        let t = match t {
            ListType::Atomic => "atomic",
            ListType::Set => "set",
            ListType::Map => "map",
        };
        m.insert("x-kubernetes-list-type".into(), t.into());
    }
    if let Some(t) = s.x_map_type {
        let t = match t {
            MapType::Atomic => "atomic",
            MapType::Granular => "granular",
        };
        m.insert("x-kubernetes-map-type".into(), t.into());
    }
    // Not allowed in CRDs, but compiled resources may carry them, and kubectl's
    // client-side strategic merge reads them.
    if let Some(k) = &s.x_patch_merge_key {
        m.insert("x-kubernetes-patch-merge-key".into(), k.as_str().into());
    }
    if let Some(k) = &s.x_patch_strategy {
        m.insert("x-kubernetes-patch-strategy".into(), k.as_str().into());
    }
    if !s.x_validations.is_empty() {
        let rules: Vec<Value> = s
            .x_validations
            .iter()
            .map(|r| {
                let mut rule = Map::new();
                rule.insert("rule".into(), r.rule.as_str().into());
                let optional = [
                    ("message", &r.message),
                    ("messageExpression", &r.message_expression),
                    ("reason", &r.reason),
                    ("fieldPath", &r.field_path),
                ];
                for (key, value) in optional {
                    if let Some(v) = value {
                        rule.insert(key.into(), v.as_str().into());
                    }
                }
                if r.optional_old_self {
                    rule.insert("optionalOldSelf".into(), true.into());
                }
                Value::Object(rule)
            })
            .collect();
        m.insert("x-kubernetes-validations".into(), rules.into());
    }
}

fn embed_type_and_object_meta(m: &mut Map<String, Value>, v2: bool) {
    let flavor = if v2 { Flavor::V2 } else { Flavor::V3 };
    let props = m
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(props) = props {
        props.insert("apiVersion".into(), property(STATUS, "apiVersion"));
        props.insert("kind".into(), property(STATUS, "kind"));
        let mut metadata = reference(flavor, OBJECT_META);
        metadata["description"] = METADATA_DESCRIPTION.into();
        props.insert("metadata".into(), metadata);
    }
    let required = m
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(req) = required {
        for key in ["kind", "apiVersion"] {
            if !req.iter().any(|r| r == key) {
                req.push(key.into());
            }
        }
    }
}

/// Turns every `$ref` with sibling keywords into `allOf: [{$ref}]` next to them, as
/// kube-openapi does for v3 (a `$ref`'s siblings are ignored by OpenAPI 3.0 readers).
pub(crate) fn wrap_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.len() > 1 && map.get("$ref").is_some_and(Value::is_string) {
                if let Some(r) = map.remove("$ref") {
                    map.insert("allOf".into(), json!([{"$ref": r}]));
                }
            }
            map.values_mut().for_each(wrap_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(wrap_refs),
        _ => {}
    }
}
