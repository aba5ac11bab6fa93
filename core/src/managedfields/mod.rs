//! Field management: which manager owns which fields of an object, as kube's
//! server-side apply records it in `metadata.managedFields`, with the semantics of
//! sigs.k8s.io/structured-merge-diff (SMD) driven by kapi's [`Schema`](crate::schema::Schema).
//!
//! - [`PathElement`], [`Path`]: how a field, list item or set value is named, ordered
//!   and printed (`.spec.containers[name="nginx"].image`);
//! - [`FieldSet`]: a set of paths with SMD's set algebra;
//! - [`fieldsv1`]: the `fieldsV1` JSON of a set, byte for byte as kube writes it;
//! - [`typed`]: schema-driven walks: an object's field set, the comparison of two
//!   objects, the merge of an applied configuration, removal of a set of fields;
//! - [`Updater`], [`update`], [`apply`]: ownership after an update or an apply, the
//!   applied object, and [`Conflicts`];
//! - [`conflict_report`]: kube's 409 message and causes for conflicts.
//!
//! It knows nothing of `metadata.managedFields` entries themselves (timestamps,
//! operations, the limit on update managers, stripping `metadata.name` and the like):
//! managers are opaque identifiers mapped to [`ManagerSet`]s.
//!
//! # How the schema types an object
//!
//! SMD works on types; kapi has one [`Schema`](crate::schema::Schema) node per
//! `JSONSchemaProps`. The node is read as kube-openapi's `schemaconv` reads a CRD's or
//! a built-in kind's OpenAPI:
//!
//! - `type: object` is a map. Its `properties` are its declared fields (a struct);
//!   other keys take the `additionalProperties` schema, or are "deduced" (below) when
//!   `additionalProperties: true`, when the node or an ancestor has
//!   `x-kubernetes-preserve-unknown-fields`, or when the node declares no properties;
//!   otherwise they are not allowed. The map is granular (merged and owned key by key)
//!   unless `x-kubernetes-map-type: atomic`, which makes it a leaf as a whole.
//! - `type: array` is a list. `x-kubernetes-list-type: map` with
//!   `x-kubernetes-list-map-keys` is associative by those keys (items are
//!   `[k=v,...]`), `set` is associative by value (items are `[=v]`), `atomic` is a leaf.
//!   Without a list type, `x-kubernetes-patch-strategy` `merge` (or
//!   `merge,retainKeys`) with `x-kubernetes-patch-merge-key: K` is keyed by `K`, and
//!   `merge` without a key is a set; anything else is atomic. A list-map item missing
//!   a key field uses the key property's `default`, else leaves the key out; missing
//!   every key is an error.
//! - `string`, `integer`, `number`, `boolean` are scalars (leaves).
//! - A node without `type` (`x-kubernetes-int-or-string`, an untyped
//!   preserve-unknown node) is a scalar, list or map according to the value, with its
//!   `items` and `properties` if it has them.
//! - Deduced values (SMD's `__untyped_deduced_`): a JSON object is a granular map of
//!   deduced values, an array is an atomic list, anything else a scalar. Items of a
//!   list without `items` are untyped: atomic whatever they are.
//! - A resource's root ([`ObjectType::resource`]) and every
//!   `x-kubernetes-embedded-resource` object also declare `apiVersion` and `kind`
//!   (strings) and `metadata` ([`object_meta_schema`]: `labels` and `annotations`
//!   granular string maps, `finalizers` a set, `ownerReferences` keyed by `uid`),
//!   whatever the schema says of them, as kube's CRD OpenAPI builder does.
//!
//! All versions of a kind share one shape in kapi, so API versions are carried with
//! each manager's set but never converted between.
//!
//! ```
//! use kapi_core::managedfields::{self, Managers, fieldsv1};
//! use kapi_core::schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::parse(&json!({
//!     "type": "object",
//!     "properties": {"data": {"type": "object", "additionalProperties": {"type": "string"}}}
//! })).unwrap();
//! let live = json!({"data": {"a": "1"}});
//! let (obj, managers) =
//!     managedfields::apply(&live, &json!({"data": {"b": "2"}}), &schema, &Managers::new(), "alice", "v1", false)
//!         .unwrap();
//! assert_eq!(obj, json!({"data": {"a": "1", "b": "2"}}));
//! assert_eq!(fieldsv1::encode(&managers["alice"].set), r#"{"f:data":{"f:b":{}}}"#);
//!
//! let err = managedfields::apply(&obj, &json!({"data": {"b": "3"}}), &schema, &managers, "bob", "v1", false)
//!     .unwrap_err();
//! assert_eq!(err.to_string(), r#"conflict with "alice": .data.b"#);
//! ```

mod conflict;
pub mod fieldsv1;
mod path;
mod set;
pub mod typed;
mod update;
mod value;

#[cfg(test)]
mod tests;

pub use conflict::{
    CAUSE_TYPE, Conflict, ConflictCause, ConflictReport, Conflicts, ManagerInfo, Operation,
    conflict_report, manager_identifier, parse_manager_identifier,
};
pub use path::{Path, PathElement};
pub use set::FieldSet;
pub use typed::{Comparison, Duplicates, ObjectType, object_meta_schema};
pub use update::{
    ApplyError, InvalidObject, ManagerSet, Managers, ObjectRole, Updater, apply, update,
};
