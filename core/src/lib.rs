//! # kapi-core
//!
//! The runtime shared by everything kapi generates and serves:
//!
//! - [`resource`]: [`Resource`] (implemented by `#[derive(Resource)]`) and
//!   [`ResourceInfo`], the static description the server routes and discovers by;
//! - [`schema`]: the structural schema engine (parsing with structural checks,
//!   defaulting, pruning, validation and CEL rules) with Kubernetes' messages;
//! - [`crd`]: `CustomResourceDefinition` documents turned into resource versions;
//! - [`strategy`]: create/update preparation and validation, running the schema
//!   engine and then a resource's [`hooks`]: the [`Hooks`] that hand-written code adds
//!   to a generated resource;
//! - [`meta`]: `metadata` validation (names, namespace, labels, annotations,
//!   finalizers, owner references) with Kubernetes' rules and messages;
//! - [`selector`]: label and field selectors (`?labelSelector=`, `?fieldSelector=`);
//! - [`patch`]: strategic merge patch driven by the schema's merge keys and list types;
//! - [`protobuf`]: Kubernetes' protobuf wire format, transcoded to and from JSON by a
//!   catalog of the built-in kinds' messages;
//! - [`managedfields`]: server-side apply's field ownership (structured-merge-diff's
//!   field sets, comparison, merge and conflicts) driven by the schema;
//! - [`fieldmanager`]: kube's field manager around it: `metadata.managedFields`
//!   entries recorded on every write, and server-side apply;
//! - [`field`]: field paths and field errors;
//! - [`yaml`]: YAML's double-quoted scalars, as the import and the server write them.
//!
//! It must not do I/O or know HTTP, storage, or any particular resource: a resource
//! reaches it as a [`ResourceInfo`] and a schema, its rules as [`Hooks`], and the
//! built-in kinds' protobuf messages as a catalog it is given.
//!
//! ```
//! use kapi_core::schema::Schema;
//! use serde_json::json;
//!
//! let schema = Schema::parse(&json!({
//!     "type": "object",
//!     "properties": {"replicas": {"type": "integer", "minimum": 0, "default": 1}}
//! })).unwrap();
//! let mut obj = json!({});
//! schema.apply_defaults(&mut obj);
//! assert_eq!(obj, json!({"replicas": 1}));
//! let errs = schema.validate(&json!({"replicas": -1}), &kapi_core::field::FieldPath::new("spec"));
//! assert_eq!(
//!     errs[0].to_string(),
//!     "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
//! );
//! ```

pub mod conversion;
pub mod crd;
pub mod field;
pub mod fieldmanager;
pub mod hooks;
pub mod managedfields;
pub mod meta;
pub mod patch;
pub mod protobuf;
pub mod resource;
pub mod schema;
pub mod selector;
pub mod strategy;
pub mod yaml;

pub use field::{ErrorList, FieldError, FieldPath};
pub use hooks::{Hooks, NoHooks, SubresourceError};
/// `#[derive(Resource)]`: implements [`Resource`] from `#[resource(...)]` attributes.
/// See the `kapi-macros` crate for every attribute.
pub use kapi_macros::Resource;
pub use resource::{
    PrinterColumn, Resource, ResourceInfo, ScaleInfo, Scope, Subresources, embedded_schema,
    embedded_schema_with,
};
pub use strategy::{ObjectStrategy, Only, Registrar, SchemaStrategy, TypedStrategy};

/// schemars, for `#[derive(JsonSchema)]` on hand-written resources:
/// `use kapi_core::schemars::{self, JsonSchema};`.
pub use schemars;

/// Re-exports used by generated code and `kapi-macros`, so that a crate using kapi needs
/// no direct dependency on them. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use k8s_openapi;
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
