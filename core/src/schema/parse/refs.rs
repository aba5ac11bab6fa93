//! `$ref` to a shared definition (kapi's schema files): the definitions a node may
//! name, and a reference resolved with the keywords beside it laid over the definition.

use serde_json::{Map, Value};

use super::{Level, parse_node};
use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::Schema;
use crate::schema::definitions::{Definitions, ref_name};

/// The definitions `$ref` may name, and the references being resolved (to break cycles).
pub(super) struct Refs<'d> {
    pub(super) definitions: Option<&'d Definitions>,
    pub(super) stack: Vec<String>,
}

/// A node written as `$ref` (with keywords beside it): the definition with those keywords
/// laid over it. A definition that refers back to itself (JSONSchemaProps) is cut there:
/// the inner reference keeps every field (`x-kubernetes-preserve-unknown-fields`).
pub(super) fn parse_ref(
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
