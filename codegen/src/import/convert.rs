//! OpenAPI v3 schemas → kapi's structural form.
//!
//! References become `$ref: "#/definitions/<name>"` with their siblings (description,
//! default, nullable, `x-kubernetes-*`) kept beside them; keywords kapi does not use are
//! dropped and counted; the handful of definitions whose OpenAPI form is not structural
//! (IntOrString, Quantity, RawExtension, ...) get their kapi form.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::openapi::COMPONENT_REF;
use super::yaml::Node;

/// The prefix of every reference kapi writes.
pub const DEFINITION_REF: &str = "#/definitions/";

/// The keywords kept, in the order they are written.
const KEPT: &[&str] = &[
    "$ref",
    "description",
    "type",
    "format",
    "enum",
    "default",
    "nullable",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "required",
    "items",
    "properties",
    "additionalProperties",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-preserve-unknown-fields",
];

/// Keywords that may stand beside a `$ref` (kapi overlays them on the definition).
fn ref_sibling(key: &str) -> bool {
    matches!(key, "description" | "default" | "nullable") || key.starts_with("x-kubernetes-")
}

const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";
const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";

/// Converts schemas, remembering what it referenced and dropped.
#[derive(Debug, Default)]
pub struct Converter {
    /// Definitions referenced so far.
    pub refs: BTreeSet<String>,
    /// Keywords dropped, with how many times.
    pub dropped: BTreeMap<String, usize>,
    /// How many `default: {}` of required fields were dropped (elsewhere `{}` is kept:
    /// it is where Go writes an empty struct, like a new Deployment's `status: {}`).
    pub empty_defaults: usize,
    /// How many zero-value defaults (`""`, `0`, `false`) of required fields were dropped.
    pub zero_defaults: usize,
    /// Definitions given their special kapi form.
    pub special: BTreeSet<String>,
    /// Definitions with required properties, for which `{}` is no valid default.
    pub with_required: BTreeSet<String>,
}

impl Converter {
    /// The kapi form of the definition `name`.
    pub fn definition(&mut self, name: &str, schema: &Value) -> Result<Node, String> {
        let description = schema
            .get("description")
            .map(|d| ("description".to_string(), Node::from_json(d)));
        let special = |rest: Vec<(&str, Node)>| {
            Node::Map(
                description
                    .clone()
                    .into_iter()
                    .chain(rest.into_iter().map(|(k, v)| (k.to_string(), v)))
                    .collect(),
            )
        };
        let node = match name {
            INT_OR_STRING => special(vec![("x-kubernetes-int-or-string", Node::Bool(true))]),
            QUANTITY => special(vec![
                ("type", Node::str("string")),
                ("format", Node::str("quantity")),
            ]),
            RAW_EXTENSION | FIELDS_V1 => special(vec![
                ("type", Node::str("object")),
                ("x-kubernetes-preserve-unknown-fields", Node::Bool(true)),
            ]),
            _ => return self.schema(schema, name),
        };
        self.special.insert(name.to_string());
        Ok(node)
    }

    /// The kapi form of one schema; `at` names it in errors.
    pub fn schema(&mut self, schema: &Value, at: &str) -> Result<Node, String> {
        let obj = schema
            .as_object()
            .ok_or_else(|| format!("{at}: expected a schema object"))?;
        let reference = self.reference(obj, at)?;
        let mut kept: BTreeMap<&str, Node> = BTreeMap::new();
        for (key, value) in obj {
            let key = key.as_str();
            match key {
                "$ref" | "allOf" => continue,
                _ if !KEPT.contains(&key) => {
                    *self.dropped.entry(key.to_string()).or_default() += 1;
                    continue;
                }
                _ if reference.is_some() && !ref_sibling(key) => {
                    *self
                        .dropped
                        .entry(format!("{key} (beside $ref)"))
                        .or_default() += 1;
                    continue;
                }
                // Go's `+listType` on a `[]byte` (APIService's `caBundle`), which JSON
                // writes as a base64 string: a list type is for arrays only.
                "x-kubernetes-list-type"
                    if reference.is_none()
                        && obj.get("type").and_then(Value::as_str) != Some("array") =>
                {
                    *self
                        .dropped
                        .entry(format!("{key} (not an array)"))
                        .or_default() += 1;
                    continue;
                }
                _ => {}
            }
            let node = match key {
                "properties" => {
                    let props = value
                        .as_object()
                        .ok_or_else(|| format!("{at}.properties: expected a mapping"))?;
                    let required: Vec<&str> = obj
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let mut entries = Vec::new();
                    for (name, prop) in props {
                        let mut node = self.schema(prop, &format!("{at}.{name}"))?;
                        // Go's zero value, published as the default of a non-pointer
                        // field: on a required field it would hide the field's absence,
                        // which kube-apiserver reports as `Required value`.
                        if required.contains(&name.as_str()) {
                            match drop_zero_default(&mut node) {
                                Some(true) => self.empty_defaults += 1,
                                Some(false) => self.zero_defaults += 1,
                                None => {}
                            }
                        }
                        entries.push((name.clone(), node));
                    }
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                    Node::Map(entries)
                }
                "items" => {
                    // An item's zero-value default would only replace a null item.
                    let mut node = self.schema(value, &format!("{at}[]"))?;
                    match drop_zero_default(&mut node) {
                        Some(true) => self.empty_defaults += 1,
                        Some(false) => self.zero_defaults += 1,
                        None => {}
                    }
                    node
                }
                "additionalProperties" => match value {
                    Value::Bool(b) => Node::Bool(*b),
                    v => self.schema(v, &format!("{at}{{}}"))?,
                },
                _ => Node::from_json(value),
            };
            kept.insert(key, node);
        }
        if let Some(name) = reference {
            let empty_default = matches!(kept.get("default"), Some(Node::Map(m)) if m.is_empty());
            if empty_default && self.with_required.contains(&name) {
                kept.remove("default");
                self.empty_defaults += 1;
            }
            kept.insert("$ref", Node::String(format!("{DEFINITION_REF}{name}")));
            self.refs.insert(name);
        } else {
            let typed = kept.contains_key("type") || kept.contains_key("properties");
            let open = kept.contains_key("x-kubernetes-int-or-string")
                || kept.contains_key("x-kubernetes-preserve-unknown-fields");
            let object_without_fields = kept.get("type") == Some(&Node::str("object"))
                && !kept.contains_key("properties")
                && !kept.contains_key("additionalProperties");
            if !open && (!typed || object_without_fields) {
                kept.insert("x-kubernetes-preserve-unknown-fields", Node::Bool(true));
            }
        }
        let mut entries: Vec<(String, Node)> = Vec::new();
        for key in KEPT {
            if let Some(node) = kept.remove(key) {
                entries.push((key.to_string(), node));
            }
        }
        Ok(Node::Map(entries))
    }

    /// The definition `{"$ref": ...}` or `{"allOf": [{"$ref": ...}]}` names, if any.
    fn reference(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        at: &str,
    ) -> Result<Option<String>, String> {
        let target = match (obj.get("$ref"), obj.get("allOf")) {
            (None, None) => return Ok(None),
            (Some(r), None) => r,
            (None, Some(Value::Array(all))) => match all.as_slice() {
                [only] if only.as_object().is_some_and(|o| o.len() == 1) => only
                    .get("$ref")
                    .ok_or_else(|| format!("{at}: allOf holds something other than a $ref"))?,
                _ => return Err(format!("{at}: allOf is not one $ref")),
            },
            _ => return Err(format!("{at}: unsupported $ref/allOf combination")),
        };
        let target = target
            .as_str()
            .ok_or_else(|| format!("{at}: $ref is not a string"))?;
        let name = target
            .strip_prefix(COMPONENT_REF)
            .ok_or_else(|| format!("{at}: $ref {target} is not under {COMPONENT_REF}"))?;
        Ok(Some(name.to_string()))
    }
}

/// Removes a zero-value default (`""`, `0`, `false`, `{}`) from a schema node:
/// `Some(true)` for `{}`, `Some(false)` for a scalar, `None` when there was none.
fn drop_zero_default(node: &mut Node) -> Option<bool> {
    let Node::Map(entries) = node else {
        return None;
    };
    let i = entries.iter().position(|(k, v)| {
        k == "default"
            && match v {
                Node::String(s) => s.is_empty(),
                Node::Number(n) => n.as_f64() == Some(0.0),
                Node::Bool(b) => !b,
                Node::Map(m) => m.is_empty(),
                _ => false,
            }
    })?;
    let (_, removed) = entries.remove(i);
    Some(matches!(removed, Node::Map(_)))
}
