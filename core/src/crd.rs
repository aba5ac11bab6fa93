//! `CustomResourceDefinition` documents (`apiextensions.k8s.io/v1`), parsed and checked.
//!
//! The code generator and the run-time CRD path both start here, so a definition that is
//! accepted by one is accepted by the other. Errors carry the CRD field path
//! (`spec.versions[0].schema.openAPIV3Schema.properties[size].type`), which the API turns
//! into 422 causes and the generator into file, line and column.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::field::{ErrorList, FieldError, FieldPath};
use crate::resource::{PrinterColumn, ResourceInfo, ScaleInfo, Scope, Str, Subresources};
use crate::schema::{Definitions, Schema};
use kapi_validation::{is_dns1123_label as is_dns_label, is_dns1123_subdomain as is_dns_subdomain};

/// `spec.names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// `kind`.
    pub kind: String,
    /// `listKind` (defaults to `{kind}List`).
    pub list_kind: String,
    /// `plural`.
    pub plural: String,
    /// `singular` (defaults to the lowercased kind).
    pub singular: String,
    /// `shortNames`.
    pub short_names: Vec<String>,
    /// `categories`.
    pub categories: Vec<String>,
}

/// `spec.conversion`.
#[derive(Clone, Debug, PartialEq)]
pub enum Conversion {
    /// Only `apiVersion` is rewritten between versions.
    None,
    /// A webhook converts between versions; its `webhook` stanza is kept as written.
    Webhook(Value),
}

/// One entry of `spec.versions`.
#[derive(Clone, Debug)]
pub struct Version {
    /// `name`.
    pub name: String,
    /// `served`.
    pub served: bool,
    /// `storage`.
    pub storage: bool,
    /// `deprecated`.
    pub deprecated: bool,
    /// `deprecationWarning`.
    pub deprecation_warning: Option<String>,
    /// `schema.openAPIV3Schema` as written.
    pub schema_json: Value,
    /// The same, parsed and checked.
    pub schema: Schema,
    /// `subresources`.
    pub subresources: Subresources,
    /// `additionalPrinterColumns`.
    pub printer_columns: Vec<PrinterColumn>,
    /// `selectableFields[*].jsonPath`.
    pub selectable_fields: Vec<String>,
}

/// A parsed `CustomResourceDefinition`.
#[derive(Clone, Debug)]
pub struct CustomResourceDefinition {
    /// `metadata.name` (`{plural}.{group}`).
    pub name: String,
    /// `metadata.annotations`.
    pub annotations: Map<String, Value>,
    /// `spec.group` (`""` for the core group, allowed for compiled resources).
    pub group: String,
    /// `spec.names`.
    pub names: Names,
    /// `spec.scope`.
    pub scope: Scope,
    /// `spec.versions`.
    pub versions: Vec<Version>,
    /// `spec.conversion`.
    pub conversion: Conversion,
}

const PRINTER_COLUMN_TYPES: [&str; 5] = ["integer", "number", "string", "boolean", "date"];

impl CustomResourceDefinition {
    /// Parses and checks a CRD document.
    pub fn parse(doc: &Value) -> Result<Self, ErrorList> {
        Self::parse_with(doc, None)
    }

    /// The checks of CEL rules against their schemas that kube-apiserver makes when a
    /// CRD is written ([`Schema::check_rules`]). On an update, `old` is the stored CRD:
    /// a version whose schema it has unchanged is not checked again, as kube exempts
    /// it, so that a CRD accepted once is not refused for an unrelated change.
    pub fn check_rules(&self, old: Option<&Self>) -> ErrorList {
        let mut errs = ErrorList::new();
        for (i, v) in self.versions.iter().enumerate() {
            let unchanged = old
                .and_then(|o| o.versions.iter().find(|ov| ov.name == v.name))
                .is_some_and(|ov| ov.schema_json == v.schema_json);
            if unchanged {
                continue;
            }
            let at = FieldPath::new("spec.versions")
                .index(i)
                .child("schema")
                .child("openAPIV3Schema");
            errs.extend(v.schema.check_rules(&at));
        }
        errs
    }

    /// Like [`CustomResourceDefinition::parse`], resolving `$ref`s in the version schemas
    /// against `definitions` (kapi's schema files; see [`Definitions`]).
    pub fn parse_with(doc: &Value, definitions: Option<&Definitions>) -> Result<Self, ErrorList> {
        let mut errs = ErrorList::new();
        let root = FieldPath::root();
        let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        if api_version != "apiextensions.k8s.io/v1" {
            errs.push(FieldError::not_supported(
                &root.child("apiVersion"),
                api_version,
                &[Value::from("apiextensions.k8s.io/v1")],
            ));
        }
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind != "CustomResourceDefinition" {
            errs.push(FieldError::not_supported(
                &root.child("kind"),
                kind,
                &[Value::from("CustomResourceDefinition")],
            ));
        }
        let meta_path = root.child("metadata");
        let name = string_at(doc, &["metadata", "name"]).unwrap_or_default();
        let annotations = doc
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();

        let spec_path = root.child("spec");
        let Some(spec) = doc.get("spec").and_then(Value::as_object) else {
            errs.push(FieldError::required(&spec_path, ""));
            return Err(errs);
        };
        let group = opt_string(spec, "group", &spec_path, &mut errs).unwrap_or_default();
        if !group.is_empty() && !is_dns_subdomain(&group) {
            errs.push(FieldError::invalid(
                &spec_path.child("group"),
                group.as_str(),
                "should be a domain with at least one dot",
            ));
        }
        let names = parse_names(spec.get("names"), &spec_path.child("names"), &mut errs);
        let expected_name = if group.is_empty() {
            names.plural.clone()
        } else {
            format!("{}.{}", names.plural, group)
        };
        if name != expected_name {
            errs.push(FieldError::invalid(
                &meta_path.child("name"),
                name.as_str(),
                "must be spec.names.plural+\".\"+spec.group",
            ));
        }
        let scope_path = spec_path.child("scope");
        let scope = match spec.get("scope").and_then(Value::as_str) {
            Some("Namespaced") => Scope::Namespaced,
            Some("Cluster") => Scope::Cluster,
            other => {
                let supported = [Value::from("Cluster"), Value::from("Namespaced")];
                match other {
                    None => errs.push(FieldError::required(&scope_path, "")),
                    Some(s) => errs.push(FieldError::not_supported(&scope_path, s, &supported)),
                }
                Scope::Namespaced
            }
        };
        let versions = parse_versions(
            spec.get("versions"),
            &spec_path.child("versions"),
            definitions,
            &mut errs,
        );
        let conversion = parse_conversion(
            spec.get("conversion"),
            &spec_path.child("conversion"),
            &mut errs,
        );
        if errs.is_empty() {
            Ok(Self {
                name,
                annotations,
                group,
                names,
                scope,
                versions,
                conversion,
            })
        } else {
            Err(errs)
        }
    }

    /// The version marked `storage: true`.
    pub fn storage_version(&self) -> &Version {
        // parse() guarantees exactly one storage version.
        self.versions
            .iter()
            .find(|v| v.storage)
            .unwrap_or(&self.versions[0])
    }

    /// The [`ResourceInfo`] of one of this CRD's versions.
    pub fn resource_info(&self, version: &Version) -> ResourceInfo {
        let owned = |s: &str| -> Str { Cow::Owned(s.to_string()) };
        let list = |v: &[String]| -> Cow<'static, [Str]> {
            Cow::Owned(v.iter().map(|s| owned(s)).collect())
        };
        ResourceInfo {
            group: owned(&self.group),
            version: owned(&version.name),
            kind: owned(&self.names.kind),
            list_kind: owned(&self.names.list_kind),
            plural: owned(&self.names.plural),
            singular: owned(&self.names.singular),
            short_names: list(&self.names.short_names),
            categories: list(&self.names.categories),
            scope: self.scope,
            subresources: version.subresources.clone(),
            printer_columns: Cow::Owned(version.printer_columns.clone()),
            selectable_fields: list(&version.selectable_fields),
            verbs: crate::resource::ALL_VERBS,
            served: version.served,
            storage: version.storage,
            deprecated: version.deprecated,
            deprecation_warning: version.deprecation_warning.as_deref().map(owned),
        }
    }
}

fn string_at(doc: &Value, path: &[&str]) -> Option<String> {
    let mut v = doc;
    for p in path {
        v = v.get(p)?;
    }
    v.as_str().map(str::to_string)
}

fn wrong_type(path: &FieldPath, v: &Value, want: &str) -> FieldError {
    FieldError::wrong_type(path, v, want)
}

/// The value at `key` as `read` takes it; absent or null is `None`, and a value `read`
/// refuses is an error saying it should be `want`.
fn optional<T>(
    obj: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    errs: &mut ErrorList,
    want: &str,
    read: impl FnOnce(&Value) -> Option<T>,
) -> Option<T> {
    let value = obj.get(key).filter(|v| !v.is_null())?;
    let read = read(value);
    if read.is_none() {
        errs.push(wrong_type(&at.child(key), value, want));
    }
    read
}

fn opt_string(
    obj: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    errs: &mut ErrorList,
) -> Option<String> {
    optional(obj, key, at, errs, "string", |v| {
        v.as_str().map(str::to_string)
    })
}

fn opt_bool(
    obj: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    errs: &mut ErrorList,
) -> Option<bool> {
    optional(obj, key, at, errs, "boolean", Value::as_bool)
}

fn string_list(
    obj: &Map<String, Value>,
    key: &str,
    at: &FieldPath,
    errs: &mut ErrorList,
) -> Vec<String> {
    match obj.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| match v.as_str() {
                Some(s) => Some(s.to_string()),
                None => {
                    errs.push(wrong_type(&at.child(key).index(i), v, "string"));
                    None
                }
            })
            .collect(),
        Some(other) => {
            errs.push(wrong_type(&at.child(key), other, "array"));
            Vec::new()
        }
    }
}

fn require_object<'a>(
    v: Option<&'a Value>,
    at: &FieldPath,
    errs: &mut ErrorList,
) -> Option<&'a Map<String, Value>> {
    match v {
        None | Some(Value::Null) => {
            errs.push(FieldError::required(at, ""));
            None
        }
        Some(Value::Object(m)) => Some(m),
        Some(other) => {
            errs.push(wrong_type(at, other, "object"));
            None
        }
    }
}

fn parse_names(v: Option<&Value>, at: &FieldPath, errs: &mut ErrorList) -> Names {
    let mut names = Names {
        kind: String::new(),
        list_kind: String::new(),
        plural: String::new(),
        singular: String::new(),
        short_names: Vec::new(),
        categories: Vec::new(),
    };
    let Some(obj) = require_object(v, at, errs) else {
        return names;
    };
    names.plural = opt_string(obj, "plural", at, errs).unwrap_or_default();
    if names.plural.is_empty() {
        errs.push(FieldError::required(&at.child("plural"), ""));
    } else if !is_dns_label(&names.plural) {
        errs.push(FieldError::invalid(
            &at.child("plural"),
            names.plural.as_str(),
            kapi_validation::dns1123_label_pattern_error(),
        ));
    }
    names.kind = opt_string(obj, "kind", at, errs).unwrap_or_default();
    if names.kind.is_empty() {
        errs.push(FieldError::required(
            &at.child("kind"),
            "kind must be specified",
        ));
    } else if !names.kind.starts_with(|c: char| c.is_ascii_alphabetic())
        || !names.kind.chars().all(|c| c.is_ascii_alphanumeric())
    {
        errs.push(FieldError::invalid(
            &at.child("kind"),
            names.kind.as_str(),
            "must be an alphanumeric identifier starting with a letter",
        ));
    }
    names.singular =
        opt_string(obj, "singular", at, errs).unwrap_or_else(|| names.kind.to_lowercase());
    if !names.singular.is_empty() && !is_dns_label(&names.singular) {
        errs.push(FieldError::invalid(
            &at.child("singular"),
            names.singular.as_str(),
            kapi_validation::dns1123_label_pattern_error(),
        ));
    }
    names.list_kind =
        opt_string(obj, "listKind", at, errs).unwrap_or_else(|| format!("{}List", names.kind));
    if names.list_kind == names.kind && !names.kind.is_empty() {
        errs.push(FieldError::invalid(
            &at.child("listKind"),
            names.list_kind.as_str(),
            "kind and listKind may not be the same",
        ));
    }
    names.short_names = string_list(obj, "shortNames", at, errs);
    for (i, s) in names.short_names.iter().enumerate() {
        if !is_dns_label(s) {
            errs.push(FieldError::invalid(
                &at.child("shortNames").index(i),
                s.as_str(),
                kapi_validation::dns1123_label_pattern_error(),
            ));
        }
    }
    names.categories = string_list(obj, "categories", at, errs);
    for (i, s) in names.categories.iter().enumerate() {
        if !is_dns_label(s) {
            errs.push(FieldError::invalid(
                &at.child("categories").index(i),
                s.as_str(),
                kapi_validation::dns1123_label_pattern_error(),
            ));
        }
    }
    names
}

fn parse_versions(
    v: Option<&Value>,
    at: &FieldPath,
    definitions: Option<&Definitions>,
    errs: &mut ErrorList,
) -> Vec<Version> {
    let items = match v {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            errs.push(FieldError::invalid_omit_value(
                at,
                "must have exactly one version marked as storage version",
            ));
            return Vec::new();
        }
        Some(other) => {
            errs.push(wrong_type(at, other, "array"));
            return Vec::new();
        }
    };
    let mut versions = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let vp = at.index(i);
        let Some(obj) = require_object(Some(item), &vp, errs) else {
            continue;
        };
        let name = opt_string(obj, "name", &vp, errs).unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(&vp.child("name"), ""));
        } else if !is_dns_label(&name) {
            errs.push(FieldError::invalid(
                &vp.child("name"),
                name.as_str(),
                kapi_validation::dns1123_label_pattern_error(),
            ));
        } else if !seen.insert(name.clone()) {
            errs.push(FieldError::invalid(
                &vp.child("name"),
                name.as_str(),
                "must appear only once in spec.versions",
            ));
        }
        let served = opt_bool(obj, "served", &vp, errs).unwrap_or(false);
        let storage = opt_bool(obj, "storage", &vp, errs).unwrap_or(false);
        let deprecated = opt_bool(obj, "deprecated", &vp, errs).unwrap_or(false);
        let deprecation_warning = opt_string(obj, "deprecationWarning", &vp, errs);
        let schema_path = vp.child("schema").child("openAPIV3Schema");
        let schema_json = obj
            .get("schema")
            .and_then(|s| s.get("openAPIV3Schema"))
            .cloned();
        let (schema_json, schema) = match schema_json {
            None | Some(Value::Null) => {
                errs.push(FieldError::required(&schema_path, "schemas are required"));
                (Value::Null, Schema::default())
            }
            Some(json) => match Schema::parse_with(&json, &schema_path, definitions) {
                Ok(s) => (json, s),
                Err(e) => {
                    errs.extend(e);
                    (json, Schema::default())
                }
            },
        };
        let subresources =
            parse_subresources(obj.get("subresources"), &vp.child("subresources"), errs);
        let printer_columns = parse_printer_columns(
            obj.get("additionalPrinterColumns"),
            &vp.child("additionalPrinterColumns"),
            errs,
        );
        let selectable_fields = parse_selectable_fields(
            obj.get("selectableFields"),
            &vp.child("selectableFields"),
            errs,
        );
        versions.push(Version {
            name,
            served,
            storage,
            deprecated,
            deprecation_warning,
            schema_json,
            schema,
            subresources,
            printer_columns,
            selectable_fields,
        });
    }
    let storage = versions.iter().filter(|v| v.storage).count();
    if storage != 1 && !versions.is_empty() {
        errs.push(FieldError::invalid_omit_value(
            at,
            "must have exactly one version marked as storage version",
        ));
    }
    if !versions.is_empty() && !versions.iter().any(|v| v.served) {
        errs.push(FieldError::invalid_omit_value(
            at,
            "must have at least one version marked as served",
        ));
    }
    versions
}

/// `.spec.replicas`-style paths must name a field under spec or status.
fn check_json_path(
    obj: &Map<String, Value>,
    key: &str,
    prefixes: &[&str],
    at: &FieldPath,
    errs: &mut ErrorList,
) -> Option<String> {
    let p = opt_string(obj, key, at, errs)?;
    if !prefixes.iter().any(|pre| p.starts_with(pre)) || p.contains('[') {
        let detail = format!("should be a json path under {}", prefixes.join(" or "));
        errs.push(FieldError::invalid(&at.child(key), p.as_str(), detail));
    }
    Some(p)
}

fn parse_subresources(v: Option<&Value>, at: &FieldPath, errs: &mut ErrorList) -> Subresources {
    let mut sub = Subresources::default();
    let obj = match v {
        None | Some(Value::Null) => return sub,
        Some(Value::Object(m)) => m,
        Some(other) => {
            errs.push(wrong_type(at, other, "object"));
            return sub;
        }
    };
    for key in obj.keys() {
        if key != "status" && key != "scale" {
            errs.push(FieldError::not_supported(
                &at.child(key),
                key.as_str(),
                &[Value::from("scale"), Value::from("status")],
            ));
        }
    }
    sub.status = matches!(obj.get("status"), Some(Value::Object(_)));
    if let Some(scale) = obj.get("scale") {
        let sp = at.child("scale");
        if let Some(scale) = require_object(Some(scale), &sp, errs) {
            let spec = check_json_path(scale, "specReplicasPath", &[".spec."], &sp, errs);
            let status = check_json_path(scale, "statusReplicasPath", &[".status."], &sp, errs);
            let selector = check_json_path(
                scale,
                "labelSelectorPath",
                &[".spec.", ".status."],
                &sp,
                errs,
            );
            if spec.is_none() {
                errs.push(FieldError::required(&sp.child("specReplicasPath"), ""));
            }
            if status.is_none() {
                errs.push(FieldError::required(&sp.child("statusReplicasPath"), ""));
            }
            sub.scale = Some(ScaleInfo {
                spec_replicas_path: Cow::Owned(spec.unwrap_or_default()),
                status_replicas_path: Cow::Owned(status.unwrap_or_default()),
                label_selector_path: selector.map(Cow::Owned),
            });
        }
    }
    sub
}

fn parse_printer_columns(
    v: Option<&Value>,
    at: &FieldPath,
    errs: &mut ErrorList,
) -> Vec<PrinterColumn> {
    let items = match v {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            errs.push(wrong_type(at, other, "array"));
            return Vec::new();
        }
    };
    let mut cols = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let cp = at.index(i);
        let Some(obj) = require_object(Some(item), &cp, errs) else {
            continue;
        };
        let name = opt_string(obj, "name", &cp, errs).unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(&cp.child("name"), ""));
        }
        let type_ = opt_string(obj, "type", &cp, errs).unwrap_or_default();
        if type_.is_empty() {
            errs.push(FieldError::required(&cp.child("type"), ""));
        } else if !PRINTER_COLUMN_TYPES.contains(&type_.as_str()) {
            let supported: Vec<Value> = PRINTER_COLUMN_TYPES
                .iter()
                .map(|s| Value::from(*s))
                .collect();
            errs.push(FieldError::not_supported(
                &cp.child("type"),
                type_.as_str(),
                &supported,
            ));
        }
        let json_path = opt_string(obj, "jsonPath", &cp, errs).unwrap_or_default();
        if json_path.is_empty() {
            errs.push(FieldError::required(&cp.child("jsonPath"), ""));
        }
        let priority = match obj.get("priority") {
            None | Some(Value::Null) => 0,
            Some(p) => match p.as_i64().and_then(|p| i32::try_from(p).ok()) {
                Some(p) if p >= 0 => p,
                _ => {
                    errs.push(FieldError::invalid(
                        &cp.child("priority"),
                        p.clone(),
                        "must be greater than or equal to 0",
                    ));
                    0
                }
            },
        };
        cols.push(PrinterColumn {
            name: Cow::Owned(name),
            type_: Cow::Owned(type_),
            format: opt_string(obj, "format", &cp, errs).map(Cow::Owned),
            description: opt_string(obj, "description", &cp, errs).map(Cow::Owned),
            priority,
            json_path: Cow::Owned(json_path),
        });
    }
    cols
}

fn parse_selectable_fields(v: Option<&Value>, at: &FieldPath, errs: &mut ErrorList) -> Vec<String> {
    let items = match v {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            errs.push(wrong_type(at, other, "array"));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let fp = at.index(i);
        let Some(obj) = require_object(Some(item), &fp, errs) else {
            continue;
        };
        match opt_string(obj, "jsonPath", &fp, errs) {
            Some(p) if p.starts_with('.') => out.push(p),
            Some(p) => errs.push(FieldError::invalid(
                &fp.child("jsonPath"),
                p.as_str(),
                "must be a simple json path starting with .",
            )),
            None => errs.push(FieldError::required(&fp.child("jsonPath"), "")),
        }
    }
    out
}

fn parse_conversion(v: Option<&Value>, at: &FieldPath, errs: &mut ErrorList) -> Conversion {
    let obj = match v {
        None | Some(Value::Null) => return Conversion::None,
        Some(Value::Object(m)) => m,
        Some(other) => {
            errs.push(wrong_type(at, other, "object"));
            return Conversion::None;
        }
    };
    match obj.get("strategy").and_then(Value::as_str) {
        None | Some("None") => Conversion::None,
        // kube's message names its internal field for `webhook.clientConfig`.
        Some("Webhook") => match obj.get("webhook") {
            Some(w @ Value::Object(_)) if w["clientConfig"].is_object() => {
                Conversion::Webhook(w.clone())
            }
            _ => {
                errs.push(FieldError::required(
                    &at.child("webhookClientConfig"),
                    "required when strategy is set to Webhook",
                ));
                Conversion::None
            }
        },
        Some(other) => {
            errs.push(FieldError::not_supported(
                &at.child("strategy"),
                other,
                &[Value::from("None"), Value::from("Webhook")],
            ));
            Conversion::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_of_the_wrong_type_are_errors_at_their_path() {
        let errs = CustomResourceDefinition::parse(&json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.kapi.dev"},
            "spec": {
                "group": 5,
                "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "singular": null},
                "versions": [{"name": "v1", "served": "yes", "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]
            }
        }))
        .unwrap_err();
        let messages: Vec<String> = errs.iter().map(ToString::to_string).collect();
        let said = |want: &str| messages.iter().any(|m| m == want);
        assert!(
            said("spec.group: Invalid value: 5: must be of type string, not number"),
            "{messages:?}"
        );
        assert!(
            said(
                "spec.versions[0].served: Invalid value: \"yes\": must be of type boolean, not string"
            ),
            "{messages:?}"
        );
        // A null is as good as absent: the singular defaults from the kind.
        assert!(
            !messages.iter().any(|m| m.contains("singular")),
            "{messages:?}"
        );
    }
}
