//! `SchemaDefinitions` documents: named schemas that resource schemas share through
//! `$ref: "#/definitions/NAME"`.
//!
//! ```yaml
//! apiVersion: kapi.dev/v1alpha1
//! kind: SchemaDefinitions
//! definitions:
//!   io.k8s.api.core.v1.PodSpec:
//!     type: object
//!     properties: ...
//! ```

use std::collections::BTreeMap;

use kapi_core::field::FieldPath;
use kapi_core::schema::definitions::ref_name;
use kapi_core::schema::{Definitions, Schema};
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::load::Document;
use crate::model::ResourceDef;

/// The `kind` of a definitions document.
pub const KIND: &str = "SchemaDefinitions";
/// The `apiVersion` of a definitions document.
pub const API_VERSION: &str = "kapi.dev/v1alpha1";

/// Splits `docs` into the definitions they declare and the other (resource) documents.
/// Every definition is checked on its own, so a broken one is reported where it is
/// written, not where it is used.
pub fn collect(docs: Vec<Document>, diags: &mut Vec<Diagnostic>) -> (Definitions, Vec<Document>) {
    let mut definitions = Definitions::new();
    let mut origin: BTreeMap<String, usize> = BTreeMap::new();
    let mut def_docs = Vec::new();
    let mut rest = Vec::new();
    for doc in docs {
        if doc.value.get("kind").and_then(Value::as_str) == Some(KIND) {
            def_docs.push(doc);
        } else {
            rest.push(doc);
        }
    }
    let root = FieldPath::root();
    for (i, doc) in def_docs.iter().enumerate() {
        let api_version = doc.value.get("apiVersion").and_then(Value::as_str);
        if api_version != Some(API_VERSION) {
            diags.push(doc.diagnostic(
                &root.child("apiVersion"),
                format!("Unsupported value: {api_version:?}: supported values: \"{API_VERSION}\""),
            ));
        }
        if let Some(extra) = doc.value.as_object().and_then(|o| {
            o.keys()
                .find(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "definitions"))
        }) {
            diags.push(doc.diagnostic(&root.child(extra), "field not declared in schema"));
        }
        let at = root.child("definitions");
        let Some(map) = doc.value.get("definitions").and_then(Value::as_object) else {
            diags.push(doc.diagnostic(&at, "Required value: a map of name to schema"));
            continue;
        };
        for (name, schema) in map {
            if let Some(first) = origin.get(name) {
                diags.push(doc.diagnostic(
                    &at.child(name),
                    format!(
                        "definition {name} is already defined in {}",
                        def_docs[*first].file.display()
                    ),
                ));
                continue;
            }
            origin.insert(name.clone(), i);
            definitions.insert(name.clone(), schema.clone());
        }
    }
    for (name, &i) in &origin {
        let doc = &def_docs[i];
        let at = root.child("definitions").child(name);
        if let Some(schema) = definitions.get(name) {
            if let Err(errs) = Schema::parse_definition(schema, &at, &definitions) {
                diags.extend(errs.iter().map(|e| doc.diagnostic(&e.path, e.body())));
            }
        }
    }
    (definitions, rest)
}

/// The definitions the resources' schemas refer to, directly or through each other:
/// what generated code embeds.
pub fn reachable(all: &Definitions, resources: &[ResourceDef]) -> Definitions {
    let mut out = Definitions::new();
    let mut queue: Vec<String> = Vec::new();
    for res in resources {
        for v in &res.crd.versions {
            refs_in(&v.schema_json, &mut queue);
        }
    }
    while let Some(name) = queue.pop() {
        if out.get(&name).is_some() {
            continue;
        }
        if let Some(schema) = all.get(&name) {
            refs_in(schema, &mut queue);
            out.insert(name, schema.clone());
        }
    }
    out
}

fn refs_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == "$ref" {
                    if let Some(name) = child.as_str().and_then(ref_name) {
                        out.push(name.to_string());
                    }
                } else {
                    refs_in(child, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| refs_in(i, out)),
        _ => {}
    }
}
