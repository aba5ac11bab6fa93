//! `ProtobufMessages` documents: the protobuf catalog of built-in kinds
//! (`kapi_core::protobuf::Catalog`), as `kapi import-openapi --proto` writes it.
//!
//! ```yaml
//! apiVersion: kapi.dev/v1alpha1
//! kind: ProtobufMessages
//! messages:
//!   k8s.io.api.core.v1.ConfigMap:
//!     kinds: ["/v1, Kind=ConfigMap"]
//!     fields:
//!       metadata: {number: 1, type: k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta}
//!       data: {number: 2, type: string, map: true}
//! ```
//!
//! Every document is checked here (types that exist, numbers that are unique, shapes
//! the transcoder knows), so a broken catalog fails the build where it is written and
//! never at the first protobuf request.

use std::collections::{BTreeMap, BTreeSet};

use kapi_core::field::FieldPath;
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::load::Document;

/// The `kind` of a catalog document.
pub const KIND: &str = "ProtobufMessages";

/// The messages of every catalog document, checked.
#[derive(Clone, Debug, Default)]
pub struct ProtobufCatalog {
    /// Messages by full name.
    pub messages: BTreeMap<String, MessageDef>,
}

/// One message.
#[derive(Clone, Debug)]
pub struct MessageDef {
    /// `(group, version, kind)` of the kinds written as this message.
    pub kinds: Vec<(String, String, String)>,
    /// `kapi_core::protobuf::Shape`'s variant name (`Object`, `Time`, …).
    pub shape: &'static str,
    /// Fields, by number.
    pub fields: Vec<FieldDef>,
}

/// One field.
#[derive(Clone, Debug)]
pub struct FieldDef {
    /// The JSON key (the protobuf name for an inlined struct).
    pub json: String,
    /// The field number.
    pub number: u32,
    /// A scalar type name (`string`, `int32`, …) or a message's full name.
    pub ty: String,
    /// `Optional`, `Repeated`, `Map` or `Inline`.
    pub label: &'static str,
    /// Whether Go keeps the zero value.
    pub keep_zero: bool,
}

const SHAPES: &[(&str, &str)] = &[
    ("time", "Time"),
    ("microTime", "MicroTime"),
    ("duration", "Duration"),
    ("quantity", "Quantity"),
    ("intOrString", "IntOrString"),
    ("rawJson", "RawJson"),
    ("items", "Items"),
    ("schemaOrArray", "SchemaOrArray"),
    ("schemaOrBool", "SchemaOrBool"),
    ("schemaOrStringArray", "SchemaOrStringArray"),
];

/// The scalar type names a field may have.
pub const SCALARS: &[&str] = &["string", "bytes", "bool", "int32", "int64", "double"];

/// Splits `docs` into the catalog they declare and the other documents.
pub fn collect(
    docs: Vec<Document>,
    diags: &mut Vec<Diagnostic>,
) -> (ProtobufCatalog, Vec<Document>) {
    let mut catalog = ProtobufCatalog::default();
    let mut rest = Vec::new();
    let mut origin: Vec<(String, FieldPath, usize)> = Vec::new();
    let mut catalog_docs = Vec::new();
    for doc in docs {
        if doc.value.get("kind").and_then(Value::as_str) == Some(KIND) {
            catalog_docs.push(doc);
        } else {
            rest.push(doc);
        }
    }
    let root = FieldPath::root();
    for (i, doc) in catalog_docs.iter().enumerate() {
        let at = root.child("messages");
        let Some(messages) = doc.value.get("messages").and_then(Value::as_object) else {
            diags.push(doc.diagnostic(&at, "Required value: a map of name to message"));
            continue;
        };
        for (name, m) in messages {
            let path = at.child(name);
            if catalog.messages.contains_key(name) {
                diags.push(doc.diagnostic(&path, format!("message {name} is declared twice")));
                continue;
            }
            match message(m, &path) {
                Ok(def) => {
                    catalog.messages.insert(name.clone(), def);
                    origin.push((name.clone(), path, i));
                }
                Err((p, msg)) => diags.push(doc.diagnostic(&p, msg)),
            }
        }
    }
    // References are checked once every document is read.
    for (name, path, i) in origin {
        for f in &catalog.messages[&name].fields {
            if !SCALARS.contains(&f.ty.as_str()) && !catalog.messages.contains_key(&f.ty) {
                diags.push(catalog_docs[i].diagnostic(
                    &path.child("fields").child(&f.json).child("type"),
                    format!("no catalog document declares the message {}", f.ty),
                ));
            }
        }
    }
    (catalog, rest)
}

type Invalid = (FieldPath, String);

fn message(m: &Value, path: &FieldPath) -> Result<MessageDef, Invalid> {
    let shape = match m.get("shape").and_then(Value::as_str) {
        None => "Object",
        Some(s) => SHAPES
            .iter()
            .find(|(k, _)| *k == s)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                let known: Vec<_> = SHAPES.iter().map(|(k, _)| format!("\"{k}\"")).collect();
                (
                    path.child("shape"),
                    format!(
                        "Unsupported value: \"{s}\": supported values: {}",
                        known.join(", ")
                    ),
                )
            })?,
    };
    let mut kinds = Vec::new();
    for (i, k) in m
        .get("kinds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let gvk = k.as_str().and_then(parse_gvk).ok_or_else(|| {
            (
                path.child("kinds").index(i),
                "Invalid value: a group-version-kind as \"group/version, Kind=Kind\"".into(),
            )
        })?;
        kinds.push(gvk);
    }
    let fields_at = path.child("fields");
    let fields = m.get("fields").and_then(Value::as_object).ok_or_else(|| {
        (
            fields_at.clone(),
            "Required value: a map of JSON key to field".to_string(),
        )
    })?;
    let mut out = Vec::new();
    let mut numbers = BTreeSet::new();
    for (json, f) in fields {
        let at = fields_at.child(json);
        let number = f
            .get("number")
            .and_then(Value::as_u64)
            .filter(|n| (1..=536_870_911).contains(n))
            .ok_or_else(|| {
                (
                    at.child("number"),
                    "Required value: a field number".to_string(),
                )
            })? as u32;
        if !numbers.insert(number) {
            return Err((at.child("number"), format!("Duplicate value: {number}")));
        }
        let ty = f
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| (at.child("type"), "Required value: a type".to_string()))?;
        let flag = |k: &str| f.get(k).and_then(Value::as_bool).unwrap_or(false);
        let label = match (flag("repeated"), flag("map"), flag("inline")) {
            (false, false, false) => "Optional",
            (true, false, false) => "Repeated",
            (false, true, false) => "Map",
            (false, false, true) if !SCALARS.contains(&ty) => "Inline",
            _ => {
                return Err((
                    at,
                    "Invalid value: at most one of repeated, map and inline (a message)".into(),
                ));
            }
        };
        out.push(FieldDef {
            json: json.clone(),
            number,
            ty: ty.to_string(),
            label,
            keep_zero: flag("keepZero"),
        });
    }
    out.sort_by_key(|f| f.number);
    Ok(MessageDef {
        kinds,
        shape,
        fields: out,
    })
}

fn parse_gvk(s: &str) -> Option<(String, String, String)> {
    let (gv, kind) = s.split_once(", Kind=")?;
    let (group, version) = gv.split_once('/')?;
    Some((group.into(), version.into(), kind.into()))
}

/// Messages the server writes for any resource, whatever is compiled: apimachinery's
/// (Status, list and watch envelopes, tables, options, quantities, times).
const SERVER_MESSAGES: &str = "k8s.io.apimachinery.";

/// The message of a scale subresource.
const SCALE: (&str, &str, &str) = ("autoscaling", "v1", "Scale");

impl ProtobufCatalog {
    /// The messages `resources` can be read and written as, and those they refer to:
    /// each served kind and its list, the autoscaling/v1 `Scale` of a scale
    /// subresource, what a subresource is posted or read as (`kapi.dev/subresources`),
    /// and apimachinery's. A catalog of every built-in group thus costs a crate that
    /// compiles a few of them only theirs.
    pub fn reachable(&self, resources: &[crate::model::ResourceDef]) -> ProtobufCatalog {
        let mut kinds: BTreeSet<(String, String, String)> = BTreeSet::new();
        for res in resources {
            let crd = &res.crd;
            for version in &crd.versions {
                for kind in [&crd.names.kind, &crd.names.list_kind] {
                    kinds.insert((crd.group.clone(), version.name.clone(), kind.clone()));
                }
                if version.subresources.scale.is_some() {
                    kinds.insert((SCALE.0.into(), SCALE.1.into(), SCALE.2.into()));
                }
            }
            kinds.extend(
                crate::validate::extra_subresources(res)
                    .iter()
                    .filter_map(|entry| subresource_kind(entry)),
            );
        }
        let mut wanted: Vec<&str> = self
            .messages
            .iter()
            .filter(|(name, m)| {
                name.starts_with(SERVER_MESSAGES) || m.kinds.iter().any(|k| kinds.contains(k))
            })
            .map(|(name, _)| name.as_str())
            .collect();
        let mut kept = BTreeSet::new();
        while let Some(name) = wanted.pop() {
            if !kept.insert(name) {
                continue;
            }
            if let Some(m) = self.messages.get(name) {
                wanted.extend(
                    m.fields
                        .iter()
                        .map(|f| f.ty.as_str())
                        .filter(|t| !SCALARS.contains(t)),
                );
            }
        }
        ProtobufCatalog {
            messages: self
                .messages
                .iter()
                .filter(|(name, _)| kept.contains(name.as_str()))
                .map(|(name, m)| (name.clone(), m.clone()))
                .collect(),
        }
    }
}

/// The kind of a `kapi.dev/subresources` entry (`eviction=create@policy/v1/Eviction`,
/// or a core kind named after a `create` one: `binding=create` posts a v1 `Binding`).
fn subresource_kind(entry: &str) -> Option<(String, String, String)> {
    let (name, rest) = entry.split_once('=')?;
    match rest.split_once('@') {
        Some((_, kind)) => {
            let mut parts = kind.splitn(3, '/');
            let (group, version, kind) = (parts.next()?, parts.next()?, parts.next()?);
            Some((group.into(), version.into(), kind.into()))
        }
        None if rest.split(',').any(|verb| verb == "create") => {
            let mut chars = name.chars();
            let first = chars.next()?.to_ascii_uppercase();
            Some((
                String::new(),
                "v1".into(),
                format!("{first}{}", chars.as_str()),
            ))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subresource_kinds_are_read_as_the_annotation_writes_them() {
        let kind = |g: &str, v: &str, k: &str| Some((g.to_string(), v.to_string(), k.to_string()));
        assert_eq!(
            subresource_kind("eviction=create@policy/v1/Eviction"),
            kind("policy", "v1", "Eviction")
        );
        assert_eq!(
            subresource_kind("exec=create,get@/v1/PodExecOptions"),
            kind("", "v1", "PodExecOptions")
        );
        assert_eq!(
            subresource_kind("binding=create"),
            kind("", "v1", "Binding")
        );
        assert_eq!(subresource_kind("finalize=update"), None);
    }
}
