//! Strategic merge patch, as specified by Kubernetes'
//! `k8s.io/apimachinery/pkg/util/strategicpatch`, driven by a structural [`Schema`].
//!
//! Where kube-apiserver reads Go struct tags (`patchStrategy`, `patchMergeKey`), kapi
//! reads the schema:
//!
//! - objects merge key by key; a `null` value deletes the key; fields the schema does not
//!   describe merge like a JSON merge patch (RFC 7386);
//! - a list whose node has `x-kubernetes-patch-strategy: merge` and
//!   `x-kubernetes-patch-merge-key: K`, or `x-kubernetes-list-type: map` with
//!   `x-kubernetes-list-map-keys`, is merged item by item: a patch item whose keys match an
//!   original item is merged into it recursively, other patch items are appended in patch
//!   order (a key missing from an item takes the key property's `default`, as for
//!   list-map keys);
//! - a list with `x-kubernetes-list-type: set`, or `x-kubernetes-patch-strategy: merge`
//!   without a merge key, is a union that keeps the original order and appends new values;
//! - every other list (atomic, or no strategy) and every node with
//!   `x-kubernetes-patch-strategy: replace` is replaced by the patch.
//!
//! Directives: `$patch: replace | merge | delete` on an object or as a list item,
//! `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and `$retainKeys`.
//! Directives are consumed and never appear in the result.
//!
//! ```
//! use kapi_core::patch::strategic;
//! use kapi_core::schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::parse(&json!({
//!     "type": "object",
//!     "properties": {"containers": {
//!         "type": "array",
//!         "x-kubernetes-patch-strategy": "merge",
//!         "x-kubernetes-patch-merge-key": "name",
//!         "items": {"type": "object", "properties": {
//!             "name": {"type": "string"}, "image": {"type": "string"}
//!         }}
//!     }}
//! })).unwrap();
//! let original = json!({"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]});
//! let patch = json!({"containers": [{"name": "b", "image": "b:2"}, {"name": "a", "$patch": "delete"}]});
//! let merged = strategic::apply(&original, &patch, &schema).unwrap();
//! assert_eq!(merged, json!({"containers": [{"name": "b", "image": "b:2"}]}));
//! ```

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::field::FieldPath;
use crate::schema::{AdditionalProperties, ListType, Schema};

/// The `$patch` directive key.
const DIRECTIVE: &str = "$patch";
/// The `$retainKeys` directive key.
const RETAIN_KEYS: &str = "$retainKeys";
/// The prefix of `$deleteFromPrimitiveList/<field>` keys.
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
/// The prefix of `$setElementOrder/<field>` keys.
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// A malformed strategic merge patch. The server answers it with 400 Bad Request (or 422
/// when the patch is well-formed JSON but cannot apply).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document is not a JSON object.
    #[error("strategic merge patch must be a JSON object, got {found}")]
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// An item of a merging list lacks its merge key.
    #[error("{path}: map: {item} does not contain declared merge key: {key}")]
    MissingMergeKey {
        /// Where the item is.
        path: String,
        /// The item, rendered as JSON.
        item: String,
        /// The merge key.
        key: String,
    },
    /// An item of a merging list is not an object.
    #[error("{path}: list item {item} of a list merged by key must be an object")]
    ItemNotAnObject {
        /// Where the item is.
        path: String,
        /// The item, rendered as JSON.
        item: String,
    },
    /// A `$patch` directive with an unknown (or, where it is not allowed, known) value.
    #[error("{path}: unknown patch type: {value} in map: {map}")]
    UnknownDirective {
        /// Where the directive is.
        path: String,
        /// The directive's value, rendered as JSON.
        value: String,
        /// The map holding it, rendered as JSON.
        map: String,
    },
    /// A `$retainKeys`, `$deleteFromPrimitiveList/…` or `$setElementOrder/…` directive that
    /// is malformed or inconsistent with the rest of the patch.
    #[error("{path}: invalid {directive} directive: {message}")]
    BadDirective {
        /// Where the directive is.
        path: String,
        /// The directive key.
        directive: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Applies the strategic merge `patch` to `original` and returns the patched object.
///
/// `schema` describes `original` (the resource's root schema); parts of the document it
/// does not describe merge like a JSON merge patch. `original` is not modified. An
/// `original` that is not an object is treated as `{}`.
///
/// # Errors
///
/// [`PatchError`] when the patch is not an object or is malformed (an item of a merging
/// list without its key, an unknown `$patch` value, a malformed directive, …).
pub fn apply(original: &Value, patch: &Value, schema: &Schema) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::NotAnObject {
            found: crate::field::json_type_name(patch),
        });
    };
    let original = match original {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    merge_map(original, patch, Some(schema), &FieldPath::root()).map(Value::Object)
}

/// How a list is merged.
enum ListStrategy {
    /// The patch list replaces the original.
    Replace,
    /// Items are objects merged by these keys.
    Keyed(Vec<String>),
    /// Items are unique values; the result is the union.
    Set,
}

/// The patch strategies of a node (`x-kubernetes-patch-strategy` is comma-separated).
fn has_strategy(schema: Option<&Schema>, name: &str) -> bool {
    schema
        .and_then(|s| s.x_patch_strategy.as_deref())
        .is_some_and(|st| st.split(',').any(|p| p.trim() == name))
}

fn list_strategy(schema: Option<&Schema>) -> ListStrategy {
    let Some(s) = schema else {
        return ListStrategy::Replace;
    };
    if has_strategy(schema, "replace") {
        return ListStrategy::Replace;
    }
    let map_keys = || s.x_list_type == Some(ListType::Map) && !s.x_list_map_keys.is_empty();
    if has_strategy(schema, "merge") {
        if let Some(k) = &s.x_patch_merge_key {
            return ListStrategy::Keyed(vec![k.clone()]);
        }
        if map_keys() {
            return ListStrategy::Keyed(s.x_list_map_keys.clone());
        }
        return ListStrategy::Set;
    }
    match s.x_list_type {
        Some(ListType::Map) if map_keys() => ListStrategy::Keyed(s.x_list_map_keys.clone()),
        Some(ListType::Set) => ListStrategy::Set,
        _ => ListStrategy::Replace,
    }
}

/// The schema of field `key` of an object described by `schema`.
fn child_schema<'a>(schema: Option<&'a Schema>, key: &str) -> Option<&'a Schema> {
    let s = schema?;
    s.properties.get(key).or(match &s.additional_properties {
        Some(AdditionalProperties::Schema(a)) => Some(a.as_ref()),
        _ => None,
    })
}

fn render(v: &Value) -> String {
    v.to_string()
}

fn render_map(m: &Map<String, Value>) -> String {
    Value::Object(m.clone()).to_string()
}

/// The `$patch` value of an object, if any, checked to be a known directive.
fn directive_of<'a>(
    m: &'a Map<String, Value>,
    path: &FieldPath,
) -> Result<Option<&'a str>, PatchError> {
    match m.get(DIRECTIVE) {
        None => Ok(None),
        Some(Value::String(s)) if matches!(s.as_str(), "replace" | "merge" | "delete") => {
            Ok(Some(s.as_str()))
        }
        Some(v) => Err(PatchError::UnknownDirective {
            path: path.to_string(),
            value: render(v),
            map: render_map(m),
        }),
    }
}

fn bad_directive(path: &FieldPath, directive: &str, message: impl Into<String>) -> PatchError {
    PatchError::BadDirective {
        path: path.to_string(),
        directive: directive.to_string(),
        message: message.into(),
    }
}

/// The field a `$prefix/<field>` key names.
fn directive_field<'a>(
    key: &'a str,
    prefix: &str,
    path: &FieldPath,
) -> Result<&'a str, PatchError> {
    match key.split_once('/') {
        Some((p, field)) if p == prefix && !field.is_empty() => Ok(field),
        _ => Err(bad_directive(
            path,
            key,
            "expected the form ".to_string() + prefix + "/<field>",
        )),
    }
}

/// Merges `patch` into `original`, an object described by `schema`.
fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    schema: Option<&Schema>,
    path: &FieldPath,
) -> Result<Map<String, Value>, PatchError> {
    match directive_of(patch, path)? {
        Some("delete") => return Ok(Map::new()),
        Some("replace") => original = Map::new(),
        _ => {}
    }

    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let keys: HashSet<&str> = retain
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect::<Option<HashSet<_>>>())
            .ok_or_else(|| bad_directive(path, RETAIN_KEYS, "must be a list of field names"))?;
        for (k, v) in patch {
            if v.is_null() || k.starts_with('$') {
                continue;
            }
            if !keys.contains(&k.as_str()) {
                return Err(bad_directive(
                    path,
                    RETAIN_KEYS,
                    format!("field {k:?} is in the patch but not in the $retainKeys list"),
                ));
            }
        }
        original.retain(|k, _| keys.contains(&k.as_str()));
    }

    // Parallel directives, by the field they apply to.
    let mut delete_lists: Vec<(&str, &Vec<Value>)> = Vec::new();
    let mut orders: Vec<(&str, &Vec<Value>)> = Vec::new();
    for (k, v) in patch {
        if k.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            let field = directive_field(k, DELETE_FROM_PRIMITIVE_LIST, path)?;
            let list = v
                .as_array()
                .ok_or_else(|| bad_directive(path, k, "must be a list"))?;
            delete_lists.push((field, list));
        } else if k.starts_with(SET_ELEMENT_ORDER) {
            let field = directive_field(k, SET_ELEMENT_ORDER, path)?;
            let list = v
                .as_array()
                .ok_or_else(|| bad_directive(path, k, "must be a list"))?;
            orders.push((field, list));
        }
    }

    for (field, to_delete) in &delete_lists {
        if let Some(Value::Array(items)) = original.get_mut(*field) {
            let to_delete: HashSet<String> = to_delete.iter().map(Value::to_string).collect();
            items.retain(|item| !to_delete.contains(&item.to_string()));
        }
    }

    // The live lists that `$setElementOrder` interleaves server-only items by.
    let mut servers: std::collections::BTreeMap<&str, Vec<Value>> = Default::default();
    for (field, _) in &orders {
        if let Some(Value::Array(items)) = original.get(*field) {
            servers.insert(*field, items.clone());
        }
    }

    for (k, v) in patch {
        if k == DIRECTIVE
            || k == RETAIN_KEYS
            || k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || k.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if v.is_null() {
            original.remove(k);
            continue;
        }
        let sub = child_schema(schema, k);
        let merged = merge_value(original.remove(k), v, sub, &path.child(k))?;
        original.insert(k.clone(), merged);
    }

    for (field, order) in &orders {
        let sub = child_schema(schema, field);
        let fpath = path.child(field);
        let server = match original.get(*field) {
            Some(Value::Array(_)) | None => servers.remove(field).unwrap_or_default(),
            Some(_) => {
                return Err(bad_directive(
                    path,
                    &format!("{SET_ELEMENT_ORDER}/{field}"),
                    "applies to a field that is not a list",
                ));
            }
        };
        let Some(Value::Array(merged)) = original.remove(*field) else {
            continue;
        };
        let ctx = OrderContext {
            order,
            server: &server,
            patch_list: patch.get(*field),
            schema: sub,
            fpath: &fpath,
            path,
            field,
        };
        let ordered = order_list(merged, &ctx)?;
        original.insert((*field).to_string(), Value::Array(ordered));
    }

    Ok(original)
}

/// Merges a patch value into an original value (absent when the field is new).
fn merge_value(
    original: Option<Value>,
    patch: &Value,
    schema: Option<&Schema>,
    path: &FieldPath,
) -> Result<Value, PatchError> {
    match patch {
        Value::Object(p) => {
            let base = match original {
                Some(Value::Object(o)) if !has_strategy(schema, "replace") => o,
                _ => Map::new(),
            };
            merge_map(base, p, schema, path).map(Value::Object)
        }
        Value::Array(p) => {
            let base = match original {
                Some(Value::Array(o)) => o,
                _ => Vec::new(),
            };
            merge_list(base, p, schema, path).map(Value::Array)
        }
        scalar => Ok(scalar.clone()),
    }
}

/// The identity of a list item: its merge-key values (with defaults) for keyed lists,
/// the value itself otherwise, as compact JSON (canonical: objects are sorted maps), so
/// that lists are merged through hash maps in time linear in their lengths, never by
/// comparing every item of one with every item of the other. `None` when a key is
/// missing.
fn identity(item: &Value, keys: Option<&[String]>, items: Option<&Schema>) -> Option<String> {
    let Some(keys) = keys else {
        return Some(item.to_string());
    };
    let m = item.as_object()?;
    let mut id = Vec::with_capacity(keys.len());
    for k in keys {
        let v = m
            .get(k)
            .filter(|v| !v.is_null())
            .or_else(|| items?.properties.get(k)?.default.as_ref())?;
        id.push(v.clone());
    }
    Some(Value::Array(id).to_string())
}

/// The first index of each identity among `items`.
fn positions(
    items: &[Value],
    keys: Option<&[String]>,
    schema: Option<&Schema>,
) -> HashMap<String, usize> {
    let mut at = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(id) = identity(item, keys, schema) {
            at.entry(id).or_insert(i);
        }
    }
    at
}

fn missing_key(item: &Value, keys: &[String], path: &FieldPath) -> PatchError {
    PatchError::MissingMergeKey {
        path: path.to_string(),
        item: render(item),
        key: keys.join(","),
    }
}

/// Merges a patch list into an original list described by `schema`.
fn merge_list(
    original: Vec<Value>,
    patch: &[Value],
    schema: Option<&Schema>,
    path: &FieldPath,
) -> Result<Vec<Value>, PatchError> {
    let items_schema = schema.and_then(|s| s.items.as_deref());
    let strategy = list_strategy(schema);
    let keys = match &strategy {
        ListStrategy::Keyed(k) => Some(k.as_slice()),
        _ => None,
    };

    // Special elements: `$patch` items.
    let mut original = original;
    let mut replace = false;
    let mut deleted: HashSet<String> = HashSet::new();
    let mut plain: Vec<(usize, &Value)> = Vec::with_capacity(patch.len());
    for (i, item) in patch.iter().enumerate() {
        let ipath = path.index(i);
        let Some(m) = item.as_object() else {
            plain.push((i, item));
            continue;
        };
        match directive_of(m, &ipath)? {
            None => plain.push((i, item)),
            Some("replace") => replace = true,
            Some("merge") => {
                // Explicitly asks for the default behaviour; only a marker when alone.
                if m.len() > 1 {
                    plain.push((i, item));
                }
            }
            Some(_delete) => match keys {
                Some(keys) => {
                    let id = identity(item, Some(keys), items_schema)
                        .ok_or_else(|| missing_key(item, keys, &ipath))?;
                    deleted.insert(id);
                }
                None => {
                    return Err(PatchError::UnknownDirective {
                        path: ipath.to_string(),
                        value: render(&Value::from("delete")),
                        map: render_map(m),
                    });
                }
            },
        }
    }

    if replace {
        original = Vec::new();
    } else if !deleted.is_empty() {
        original
            .retain(|o| identity(o, keys, items_schema).is_none_or(|id| !deleted.contains(&id)));
    }

    match (&strategy, replace) {
        (ListStrategy::Replace, _) | (_, true) => {
            let mut out = Vec::with_capacity(plain.len());
            for (i, item) in plain {
                out.push(new_item(item, items_schema, &path.index(i))?);
            }
            Ok(out)
        }
        (ListStrategy::Set, false) => {
            let mut seen: HashSet<String> = original.iter().map(Value::to_string).collect();
            for (i, item) in plain {
                let item = new_item(item, items_schema, &path.index(i))?;
                if seen.insert(item.to_string()) {
                    original.push(item);
                }
            }
            Ok(original)
        }
        (ListStrategy::Keyed(keys), false) => {
            let mut at = positions(&original, Some(keys), items_schema);
            for (i, item) in plain {
                let ipath = path.index(i);
                let Value::Object(m) = item else {
                    return Err(PatchError::ItemNotAnObject {
                        path: ipath.to_string(),
                        item: render(item),
                    });
                };
                let id = identity(item, Some(keys), items_schema)
                    .ok_or_else(|| missing_key(item, keys, &ipath))?;
                match at.get(&id).copied() {
                    Some(pos) => {
                        let base = match std::mem::take(&mut original[pos]) {
                            Value::Object(o) => o,
                            _ => Map::new(),
                        };
                        original[pos] = Value::Object(merge_map(base, m, items_schema, &ipath)?);
                    }
                    None => {
                        at.insert(id, original.len());
                        original.push(Value::Object(merge_map(
                            Map::new(),
                            m,
                            items_schema,
                            &ipath,
                        )?));
                    }
                }
            }
            Ok(original)
        }
    }
}

/// A patch list item that has no original counterpart: directives and nulls are
/// resolved against nothing. Pure `$patch` markers never reach here.
fn new_item(item: &Value, schema: Option<&Schema>, path: &FieldPath) -> Result<Value, PatchError> {
    merge_value(None, item, schema, path)
}

/// What [`order_list`] needs besides the merged list.
struct OrderContext<'a> {
    /// The `$setElementOrder/<field>` list.
    order: &'a [Value],
    /// The original list, before merging.
    server: &'a [Value],
    /// The patch's list for the field, if any.
    patch_list: Option<&'a Value>,
    /// The list's schema.
    schema: Option<&'a Schema>,
    /// The list's path.
    fpath: &'a FieldPath,
    /// The path of the object holding the list.
    path: &'a FieldPath,
    /// The list's field name.
    field: &'a str,
}

/// Applies `$setElementOrder/<field>`: the items named by `order` come in that order, the
/// other (server-only) items keep their place relative to them as in the merged list.
fn order_list(merged: Vec<Value>, ctx: &OrderContext<'_>) -> Result<Vec<Value>, PatchError> {
    let OrderContext {
        order,
        server,
        patch_list,
        schema,
        fpath,
        path,
        field,
    } = *ctx;
    let directive = format!("{SET_ELEMENT_ORDER}/{field}");
    let items_schema = schema.and_then(|s| s.items.as_deref());
    let strategy = list_strategy(schema);
    let keys = match &strategy {
        ListStrategy::Keyed(k) => Some(k.as_slice()),
        _ => None,
    };
    let mut order_at: HashMap<String, usize> = HashMap::with_capacity(order.len());
    for (i, o) in order.iter().enumerate() {
        let id = identity(o, keys, items_schema).ok_or_else(|| match keys {
            Some(k) => missing_key(o, k, &fpath.index(i)),
            None => bad_directive(path, &directive, "invalid element"),
        })?;
        order_at.entry(id).or_insert(i);
    }
    // Every (non-directive) item of the patch list must be named by the order list.
    if let Some(Value::Array(p)) = patch_list {
        for item in p {
            if item.as_object().is_some_and(|m| m.contains_key(DIRECTIVE)) {
                continue;
            }
            let id = identity(item, keys, items_schema);
            if id.is_none_or(|id| !order_at.contains_key(&id)) {
                return Err(bad_directive(
                    path,
                    &directive,
                    format!("patch list item {} is not in the order list", render(item)),
                ));
            }
        }
    }

    // Partition: items named by the order list, sorted by it; server-only items, in their
    // current order. Both remember their index in the live list, if any.
    let server_at = positions(server, keys, items_schema);
    let server_index =
        |id: &Option<String>| -> Option<usize> { server_at.get(id.as_ref()?).copied() };
    let mut named: Vec<(usize, Option<usize>, Value)> = Vec::new();
    let mut server_only: Vec<(Option<usize>, Value)> = Vec::new();
    for item in merged {
        let id = identity(&item, keys, items_schema);
        let live = server_index(&id);
        match id.and_then(|id| order_at.get(&id).copied()) {
            Some(i) => named.push((i, live, item)),
            None => server_only.push((live, item)),
        }
    }
    named.sort_by_key(|(i, _, _)| *i);

    // Interleave as Kubernetes does: a server-only item goes first when both it and the
    // next named item are in the live list and it came before it there.
    let mut out = Vec::with_capacity(named.len() + server_only.len());
    let mut named = named.into_iter().peekable();
    let mut server_only = server_only.into_iter().peekable();
    loop {
        let take_server = match (server_only.peek(), named.peek()) {
            (Some((Some(s), _)), Some((_, Some(n), _))) => s < n,
            (Some(_), Some(_)) => false,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if take_server {
            out.extend(server_only.next().map(|(_, v)| v));
        } else {
            out.extend(named.next().map(|(_, _, v)| v));
        }
    }
    Ok(out)
}
