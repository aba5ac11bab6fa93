//! `metadata` validation with Kubernetes' rules and messages
//! (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go` and `util/validation`).
//!
//! The schema engine validates an object's own fields; every object's `metadata` is
//! checked here instead, the same way for compiled resources and run-time CRDs.

use serde_json::{Map, Value};

use crate::field::{ErrorList, FieldError, FieldPath};

/// Maximum total size of an object's annotations, keys and values.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

pub use kapi_validation::{
    DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, dns1035_label_errors, dns1123_label_errors,
    dns1123_subdomain_errors, label_value_errors, qualified_name_errors,
};

/// How a resource's names are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// A DNS-1123 subdomain (most resources, custom resources).
    Subdomain,
    /// A DNS-1123 label (namespaces, services).
    Label,
    /// Any name that is a path segment (RBAC objects: `system:discovery`).
    PathSegment,
}

impl NameRule {
    /// The problems with `name`; `prefix` is a `generateName`, whose trailing '-' is fine.
    pub fn errors(self, name: &str, prefix: bool) -> Vec<String> {
        // maskTrailingDash: a generateName may end in '-', the random suffix follows.
        let masked;
        let name = if prefix && name.len() > 1 && name.ends_with('-') {
            masked = format!("{}a", &name[..name.len() - 1]);
            masked.as_str()
        } else {
            name
        };
        match self {
            NameRule::Subdomain => dns1123_subdomain_errors(name),
            NameRule::Label => dns1123_label_errors(name),
            NameRule::PathSegment => path_segment_errors(name, prefix),
        }
    }
}

/// `ValidatePathSegmentName`'s messages.
fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if !prefix && (name == "." || name == "..") {
        errs.push(format!("may not be '{name}'"));
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

fn str_field<'a>(meta: &'a Map<String, Value>, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `ValidateObjectMeta`: the `metadata` of a new object.
pub fn validate_object_meta(
    metadata: Option<&Value>,
    namespaced: bool,
    names: NameRule,
) -> ErrorList {
    let path = FieldPath::new("metadata");
    let mut errs = ErrorList::new();
    let empty = Map::new();
    let meta = match metadata {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => {
            errs.push(FieldError::wrong_type(&path, other, "object"));
            return errs;
        }
    };
    let generate_name = str_field(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in names.errors(generate_name, true) {
            errs.push(FieldError::invalid(
                &path.child("generateName"),
                generate_name,
                msg,
            ));
        }
    }
    let name = str_field(meta, "name");
    if name.is_empty() {
        errs.push(FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        ));
    } else {
        for msg in names.errors(name, false) {
            errs.push(FieldError::invalid(&path.child("name"), name, msg));
        }
    }
    let namespace = str_field(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errs.push(FieldError::required(&path.child("namespace"), ""));
        } else {
            for msg in dns1123_label_errors(namespace) {
                errs.push(FieldError::invalid(
                    &path.child("namespace"),
                    namespace,
                    msg,
                ));
            }
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(
            &path.child("namespace"),
            "not allowed on this type",
        ));
    }
    if let Some(g) = meta
        .get("generation")
        .and_then(Value::as_i64)
        .filter(|g| *g < 0)
    {
        errs.push(FieldError::invalid(
            &path.child("generation"),
            g,
            "must be greater than or equal to 0",
        ));
    }
    errs.extend(validate_labels(meta.get("labels"), &path.child("labels")));
    errs.extend(validate_annotations(
        meta.get("annotations"),
        &path.child("annotations"),
    ));
    errs.extend(validate_owner_references(
        meta.get("ownerReferences"),
        &path.child("ownerReferences"),
    ));
    errs.extend(validate_finalizers(
        meta.get("finalizers"),
        &path.child("finalizers"),
    ));
    errs
}

/// `ValidateObjectMetaUpdate`: the new `metadata` against the stored one.
pub fn validate_object_meta_update(
    new: Option<&Value>,
    old: Option<&Value>,
    namespaced: bool,
    names: NameRule,
) -> ErrorList {
    let mut errs = validate_object_meta(new, namespaced, names);
    let path = FieldPath::new("metadata");
    for key in ["name", "namespace", "uid", "creationTimestamp"] {
        let n = new.and_then(|m| m.get(key));
        let o = old.and_then(|m| m.get(key));
        if n != o {
            errs.push(FieldError::invalid(
                &path.child(key),
                n.cloned().unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
    }
    errs
}

fn string_map<'a>(
    v: Option<&'a Value>,
    path: &FieldPath,
    errs: &mut ErrorList,
) -> Vec<(&'a str, &'a str)> {
    match v {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| match v.as_str() {
                Some(s) => Some((k.as_str(), s)),
                None => {
                    errs.push(FieldError::wrong_type(&path.key(k), v, "string"));
                    None
                }
            })
            .collect(),
        Some(other) => {
            errs.push(FieldError::wrong_type(path, other, "object"));
            Vec::new()
        }
    }
}

/// `ValidateLabels`.
pub fn validate_labels(labels: Option<&Value>, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    for (k, v) in string_map(labels, path, &mut errs) {
        for msg in qualified_name_errors(k) {
            errs.push(FieldError::invalid(path, k, msg));
        }
        for msg in label_value_errors(v) {
            errs.push(FieldError::invalid(path, v, msg));
        }
    }
    errs
}

/// `ValidateAnnotations`.
pub fn validate_annotations(annotations: Option<&Value>, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut total = 0;
    for (k, v) in string_map(annotations, path, &mut errs) {
        for msg in qualified_name_errors(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, k, msg));
        }
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(
            path,
            TOTAL_ANNOTATION_SIZE_LIMIT as u64,
        ));
    }
    errs
}

/// `ValidateFinalizers`: each a qualified name, no duplicates.
pub fn validate_finalizers(finalizers: Option<&Value>, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let items = match finalizers {
        None | Some(Value::Null) => return errs,
        Some(Value::Array(items)) => items,
        Some(other) => {
            errs.push(FieldError::wrong_type(path, other, "array"));
            return errs;
        }
    };
    let mut seen = std::collections::BTreeSet::new();
    for (i, f) in items.iter().enumerate() {
        let Some(f) = f.as_str() else {
            errs.push(FieldError::wrong_type(&path.index(i), f, "string"));
            continue;
        };
        for msg in qualified_name_errors(f) {
            errs.push(FieldError::invalid(path, f, msg));
        }
        if !seen.insert(f) {
            errs.push(FieldError::duplicate(&path.index(i), f));
        }
    }
    errs
}

/// `ValidateOwnerReferences`.
pub fn validate_owner_references(refs: Option<&Value>, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let items = match refs {
        None | Some(Value::Null) => return errs,
        Some(Value::Array(items)) => items,
        Some(other) => {
            errs.push(FieldError::wrong_type(path, other, "array"));
            return errs;
        }
    };
    let mut controllers = 0;
    for r in items {
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let api_version = get("apiVersion");
        if api_version.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("apiVersion"),
                api_version,
                "version must not be empty",
            ));
        }
        if get("kind").is_empty() {
            errs.push(FieldError::invalid(
                &path.child("kind"),
                get("kind"),
                "kind must not be empty",
            ));
        }
        if get("name").is_empty() {
            errs.push(FieldError::invalid(
                &path.child("name"),
                get("name"),
                "name must not be empty",
            ));
        }
        if get("uid").is_empty() {
            errs.push(FieldError::invalid(
                &path.child("uid"),
                get("uid"),
                "uid must not be empty",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            controllers += 1;
        }
    }
    if controllers > 1 {
        errs.push(FieldError::invalid(
            path,
            Value::Array(items.clone()),
            "Only one reference can have Controller set to true",
        ));
    }
    errs
}
