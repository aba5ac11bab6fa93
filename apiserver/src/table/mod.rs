//! Server-side printing: `meta.k8s.io` `Table`, `PartialObjectMetadata` and
//! `PartialObjectMetadataList`, the conversions a client asks for with
//! `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (what `kubectl get` sends) or
//! `as=PartialObjectMetadata[List]` (client-go's metadata client, used by garbage
//! collectors and `kubectl get -o name`-style tools).
//!
//! Tables follow apiextensions-apiserver's convertor for custom resources: a `Name`
//! column, then the resource's printer columns in their order (or, when it has none, a
//! single `Age` column over `.metadata.creationTimestamp`); kube-apiserver adds no
//! other `Age` column. `priority` is passed through, and kubectl shows columns with
//! priority above 0 only with `-o wide`. Cells hold the first value the column's
//! JSONPath selects (integers, numbers and booleans as JSON values, strings as
//! client-go's jsonpath prints them, dates as an age such as `5m` or `2d3h`); a missing
//! value is `null`, which kubectl prints as `<none>`.
//!
//! The functions take one resource's [`ResourceInfo`] and the object or list as JSON;
//! `now` is the time ages are measured from.
//!
//! [`ResourceInfo`]: kapi_core::ResourceInfo

mod cells;
mod jsonpath;

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use kapi_core::{PrinterColumn, ResourceInfo};
use serde_json::{Map, Value, json};

use crate::negotiation::{Conversion, MetaVersion, conversion, parse_accept};
use crate::registry::object;
use jsonpath::ColumnPath;

/// The conversion an `Accept` header asks for, or `None` for the object itself.
///
/// Ranges are tried by preference (see [`crate::discovery::negotiate()`]): the first
/// JSON range without `as` means no conversion; one with `g=meta.k8s.io`, `v=v1` or
/// `v=v1beta1` and `as=Table`, `PartialObjectMetadata` or `PartialObjectMetadataList`
/// selects that conversion; other ranges (protobuf, unknown conversions) are skipped.
/// kubectl get sends
/// `application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`.
/// The answer's `Content-Type` is plain `application/json`, as kube-apiserver's.
pub fn negotiate(accept: Option<&str>) -> Option<Conversion> {
    for range in parse_accept(accept.unwrap_or("")) {
        if !range.is_json() {
            continue;
        }
        // A JSON range without a conversion: the object itself.
        range.param("as")?;
        if let Some(c) = conversion(&range) {
            return Some(c);
        }
    }
    None
}

/// `?includeObject=`: what each row's `object` holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncludeObject {
    /// `None`: `object` is `null`.
    None,
    /// `Metadata` (the default): a `PartialObjectMetadata`.
    #[default]
    Metadata,
    /// `Object`: the whole object.
    Object,
}

impl IncludeObject {
    /// Parses the query parameter (absent or empty: [`IncludeObject::Metadata`]). The
    /// error is kube-apiserver's 400 message.
    pub fn from_query(value: Option<&str>) -> Result<Self, String> {
        match value.unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(format!("unrecognized includeObject value: {other:?}")),
        }
    }
}

/// How to build a table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// The `meta.k8s.io` version asked for.
    pub version: MetaVersion,
    /// What rows carry in `object`.
    pub include_object: IncludeObject,
    /// Leave `columnDefinitions` empty: for watch events after the first, which carry
    /// only rows.
    pub no_headers: bool,
}

/// The columns of a table over `info`'s objects: `Name`, then the printer columns (or
/// `Age` when there are none), as `TableColumnDefinition`s.
pub fn column_definitions(info: &ResourceInfo) -> Vec<Value> {
    let mut defs = vec![json!({
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": object_meta_description("name"),
        "priority": 0,
    })];
    for col in columns(info) {
        let description = match &col.description {
            Some(d) if !d.is_empty() => d.to_string(),
            _ => format!(
                "Custom resource definition column (in JSONPath format): {}",
                col.json_path
            ),
        };
        defs.push(json!({
            "name": col.name,
            "type": col.type_,
            "format": col.format.as_deref().unwrap_or(""),
            "description": description,
            "priority": col.priority,
        }));
    }
    defs
}

/// The printer columns, or the default `Age` column when the resource defines none.
fn columns(info: &ResourceInfo) -> Vec<PrinterColumn> {
    if !info.printer_columns.is_empty() {
        return info.printer_columns.to_vec();
    }
    vec![PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        format: None,
        description: Some(object_meta_description("creationTimestamp").into()),
        priority: 0,
        json_path: ".metadata.creationTimestamp".into(),
    }]
}

/// The `ObjectMeta` field description kube-apiserver uses for its default columns,
/// taken from k8s-openapi's schema of `ObjectMeta`.
fn object_meta_description(field: &str) -> String {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
        let mut generator = kapi_core::schemars::SchemaGenerator::default();
        generator.subschema_for::<ObjectMeta>();
        generator
            .definitions()
            .get("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
            .cloned()
            .unwrap_or(Value::Null)
    });
    schema
        .pointer(&format!("/properties/{field}/description"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The `Table` of a single object (`GET .../{name}`): one row, and the object's
/// `resourceVersion` in the table's metadata.
pub fn object_table(
    info: &ResourceInfo,
    obj: &Value,
    opts: &TableOptions,
    now: DateTime<Utc>,
) -> Value {
    object_table_with(info, obj, opts, now, &|_, _| None)
}

/// Computes a cell for a column, overriding its JSONPath (a resource's hooks).
pub type CellFn<'a> = &'a dyn Fn(&str, &Value) -> Option<Value>;

/// [`object_table`] with cells computed by `cell` where it answers.
pub fn object_table_with(
    info: &ResourceInfo,
    obj: &Value,
    opts: &TableOptions,
    now: DateTime<Utc>,
    cell: CellFn<'_>,
) -> Value {
    let mut meta = Map::new();
    if let Some(rv) = object::meta(obj, "resourceVersion").and_then(Value::as_str) {
        if !rv.is_empty() {
            meta.insert("resourceVersion".into(), rv.into());
        }
    }
    table(info, std::slice::from_ref(obj), meta, opts, now, cell)
}

/// The `Table` of a list (`GET .../{plural}`), one row per item, with the list's
/// `resourceVersion`, `continue` and `remainingItemCount`.
pub fn list_table(
    info: &ResourceInfo,
    list: &Value,
    opts: &TableOptions,
    now: DateTime<Utc>,
) -> Value {
    list_table_with(info, list, opts, now, &|_, _| None)
}

/// [`list_table`] with cells computed by `cell` where it answers.
pub fn list_table_with(
    info: &ResourceInfo,
    list: &Value,
    opts: &TableOptions,
    now: DateTime<Utc>,
    cell: CellFn<'_>,
) -> Value {
    let items = list
        .get("items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    table(info, items, list_meta(list), opts, now, cell)
}

fn table(
    info: &ResourceInfo,
    items: &[Value],
    meta: Map<String, Value>,
    opts: &TableOptions,
    now: DateTime<Utc>,
    computed: CellFn<'_>,
) -> Value {
    let cols: Vec<(PrinterColumn, Option<ColumnPath>)> = columns(info)
        .into_iter()
        .map(|c| {
            // The CRD path checks columns at admission; one that still does not parse
            // prints as empty rather than failing the list.
            let path = ColumnPath::parse(&c.json_path).ok();
            (c, path)
        })
        .collect();
    let rows: Vec<Value> = items
        .iter()
        .map(|obj| {
            let mut cells = vec![Value::String(object::meta_str(obj, "name").to_string())];
            for (col, path) in &cols {
                if let Some(v) = computed(&col.name, obj) {
                    cells.push(cells::cell(&col.type_, &v, now));
                    continue;
                }
                let found = path.as_ref().and_then(|p| p.find(obj).first().copied());
                cells.push(found.map_or(Value::Null, |v| cells::cell(&col.type_, v, now)));
            }
            let object = match opts.include_object {
                IncludeObject::None => Value::Null,
                IncludeObject::Metadata => partial_object_metadata(obj, opts.version),
                IncludeObject::Object => obj.clone(),
            };
            json!({"cells": cells, "object": object})
        })
        .collect();
    let defs = if opts.no_headers {
        Vec::new()
    } else {
        column_definitions(info)
    };
    json!({
        "kind": "Table",
        "apiVersion": opts.version.api_version(),
        "metadata": meta,
        "columnDefinitions": defs,
        "rows": rows,
    })
}

/// `ListMeta` of a list: `resourceVersion`, `continue` and `remainingItemCount` when
/// set.
fn list_meta(list: &Value) -> Map<String, Value> {
    let mut meta = Map::new();
    for key in ["resourceVersion", "continue"] {
        if let Some(s) = list
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
        {
            if !s.is_empty() {
                meta.insert(key.into(), s.into());
            }
        }
    }
    if let Some(n) = object::meta(list, "remainingItemCount") {
        if n.is_number() {
            meta.insert("remainingItemCount".into(), n.clone());
        }
    }
    meta
}

/// `PartialObjectMetadata` of an object: its whole `metadata`, nothing else.
pub fn partial_object_metadata(obj: &Value, version: MetaVersion) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": version.api_version(),
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// `PartialObjectMetadataList` of a list: each item's metadata as a
/// `PartialObjectMetadata` (with its own `kind` and `apiVersion`, as kube-apiserver
/// writes them), and the list's `ListMeta`.
pub fn partial_object_metadata_list(list: &Value, version: MetaVersion) -> Value {
    let items: Vec<Value> = list
        .get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|o| partial_object_metadata(o, version))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": version.api_version(),
        "metadata": list_meta(list),
        "items": items,
    })
}
