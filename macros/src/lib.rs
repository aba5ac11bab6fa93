//! # kapi-macros
//!
//! `#[derive(Resource)]` turns a hand-written Rust struct into a kapi resource: it
//! implements [`kapi_core::Resource`] — names, scope, subresources, printer columns,
//! the structural schema and metadata access — from one `#[resource(...)]` attribute.
//! The server then serves it like any generated or run-time resource, through a
//! `kapi_core::TypedStrategy`.
//!
//! A crate using it needs only `kapi-core` (which re-exports this derive as
//! `kapi_core::Resource`, next to the trait) and `serde` for its own derives. Generated
//! code reaches `schemars`, `k8s-openapi` and `serde_json` through kapi-core.
//!
//! It must not know any particular resource or how one is served: it describes the
//! struct it is given, by the rules of `kapi-validation`, and nothing else.
//!
//! ## Example
//!
//! ```
//! use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
//! use kapi_core::__private::schemars::{self, JsonSchema};
//! use kapi_core::{FieldError, FieldPath, Hooks, Resource};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, Resource)]
//! #[resource(
//!     group = "example.kapi.dev",
//!     version = "v1",
//!     namespaced,
//!     status,
//!     scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"),
//!     shortname = "wd",
//!     category = "all",
//!     printcolumn(name = "Replicas", type = "integer", json_path = ".spec.replicas"),
//!     hooks = WidgetHooks
//! )]
//! pub struct Widget {
//!     #[serde(default)]
//!     pub metadata: ObjectMeta,
//!     pub spec: WidgetSpec,
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub status: Option<WidgetStatus>,
//! }
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! pub struct WidgetSpec {
//!     pub replicas: i32,
//! }
//!
//! #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! pub struct WidgetStatus {
//!     pub replicas: i32,
//! }
//!
//! #[derive(Default)]
//! pub struct WidgetHooks;
//!
//! impl Hooks<Widget> for WidgetHooks {
//!     fn validate(&self, obj: &Widget) -> Vec<FieldError> {
//!         if obj.spec.replicas > 10 {
//!             let path = FieldPath::new("spec.replicas");
//!             return vec![FieldError::invalid(&path, obj.spec.replicas, "at most 10")];
//!         }
//!         Vec::new()
//!     }
//! }
//!
//! let info = Widget::info();
//! assert_eq!(info.api_version(), "example.kapi.dev/v1");
//! assert_eq!(info.plural, "widgets");
//! assert_eq!(info.list_kind, "WidgetList");
//! assert!(info.namespaced() && info.subresources.status);
//! assert!(Widget::schema().properties.contains_key("spec"));
//! ```
//!
//! ## Required attributes
//!
//! ### `group = "example.kapi.dev"`
//! The API group. `""` is the core group (`/api/v1`); anything else must be a lowercase
//! DNS subdomain.
//!
//! ### `version = "v1"`
//! The version served, a DNS-1035 label such as `v1`, `v1beta2`.
//!
//! ## Optional attributes
//!
//! ### `kind = "Widget"`
//! The kind. Defaults to the struct's name; must start with an uppercase letter and
//! contain only letters and digits.
//!
//! ### `plural = "widgets"`, `singular = "widget"`, `list_kind = "WidgetList"`
//! The plural (used in URLs), singular and list kind. The singular defaults to the
//! lowercase kind, the list kind to `{kind}List`, and the plural to Kubernetes' guess
//! from the lowercase kind: `s` → `ses`, consonant + `y` → `ies`, `ch`/`sh`/`x`/`z` →
//! `es`, otherwise `s` (`Policy` → `policies`, `Box` → `boxes`). Plural and singular
//! must be lowercase DNS labels.
//!
//! ```ignore
//! #[resource(group = "example.kapi.dev", version = "v1", kind = "Octopus", plural = "octopodes")]
//! ```
//!
//! ### `namespaced`
//! Objects live in namespaces (`/namespaces/{ns}/{plural}`). Without it the resource is
//! cluster-scoped, as in kube-derive. `namespaced = false` is accepted too.
//!
//! ### `status`
//! Serves the `/status` subresource: status is ignored on writes to the main resource and
//! everything but status on writes to `/status`. The struct needs a `status` field.
//!
//! ### `scale(spec_replicas_path = "...", status_replicas_path = "...", label_selector_path = "...")`
//! Serves the `/scale` subresource. Needs `status`. `spec_replicas_path` (under `.spec`)
//! and `status_replicas_path` (under `.status`) are required; `label_selector_path`
//! (under `.status` or `.spec`) is optional.
//!
//! ```ignore
//! #[resource(
//!     group = "example.kapi.dev", version = "v1", status,
//!     scale(
//!         spec_replicas_path = ".spec.replicas",
//!         status_replicas_path = ".status.replicas",
//!         label_selector_path = ".status.selector",
//!     ),
//! )]
//! ```
//!
//! ### `shortname = "wd"`, `category = "all"`
//! `kubectl get` short names and categories; repeat the key for several. Each must be a
//! lowercase DNS label.
//!
//! ```ignore
//! #[resource(group = "example.kapi.dev", version = "v1", shortname = "wd", shortname = "wdg", category = "all")]
//! ```
//!
//! ### `printcolumn(name = "...", type = "...", json_path = "...", description = "...", format = "...", priority = N)`
//! An additional printer column for `kubectl get`; repeatable. `name`, `type` (one of
//! `integer`, `number`, `string`, `boolean`, `date`) and `json_path` (starting with `.`)
//! are required; `priority` 0 shows in the default view, more only with `-o wide`.
//!
//! ```ignore
//! #[resource(
//!     group = "example.kapi.dev", version = "v1",
//!     printcolumn(name = "Size", type = "string", json_path = ".spec.size"),
//!     printcolumn(name = "Ready", type = "integer", format = "int32",
//!                 json_path = ".status.ready", description = "Ready copies", priority = 1),
//! )]
//! ```
//!
//! ### `selectable_field = ".spec.color"`
//! A field usable in field selectors beyond `metadata.name`/`metadata.namespace`;
//! repeatable.
//!
//! ### `verb = "get"`
//! A verb the resource serves; repeatable. Without any, every standard verb is served
//! (`create`, `delete`, `deletecollection`, `get`, `list`, `patch`, `update`, `watch`),
//! as for a CRD; `verb = "get", verb = "list"` makes a read-only resource.
//!
//! ### `subresource = "binding=create"`
//! Repeatable. Serves a subresource besides status and scale, with the verbs discovery
//! lists for it: `create` for a POST of another kind (`pods/binding`), `get`, `update`,
//! `patch` for a write of the object itself (`certificatesigningrequests/approval`). The
//! hooks give its behaviour (`Hooks::create_on_subresource`, `Hooks::update_subresource`).
//!
//! ### `deprecated`, `deprecation_warning = "..."`
//! Marks the version deprecated; the warning (which needs `deprecated`) is sent with every
//! response for it.
//!
//! ### `served = false`, `storage = false`
//! Whether the version is served and whether it is the storage version (both default to
//! `true`).
//!
//! ### `hooks = path::to::Type`
//! A type implementing `kapi_core::Hooks<Self>` (and `Default`) whose methods add
//! defaulting, preparation and validation after the schema's own. Defaults to
//! `kapi_core::NoHooks`. A string holding the path is accepted too.
//!
//! ### `schema = path::to::function`
//! A `fn() -> &'static kapi_core::schema::Schema` returning the structural schema, as
//! kapi's code generator emits for schemas written in YAML. Without it the schema comes
//! from `schemars`: the struct (and every type in it) must derive `JsonSchema` — import it
//! from `kapi_core::__private::schemars` as in the example — and `schema()` converts
//! `schema_for!(Self)` once with `kapi_core::schema::Schema::from_json_schema`, panicking
//! with the conversion errors if the type cannot be expressed as a structural schema
//! (a programming error in the type, not bad user input).
//!
//! ### `crate = "::kapi_core"`
//! The path generated code uses for kapi-core, for crates that rename or re-export it.
//!
//! ## Fields
//! The struct must have named fields, one of them `metadata` of type
//! `k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta`, which `metadata()` and
//! `metadata_mut()` return. With `status`, a `status` field is required too. Generic
//! structs, enums, unions and tuple structs are rejected.
//!
//! ## Errors
//! Every problem is reported at once, spanned at the offending key or value: unknown keys
//! (with a "did you mean" suggestion), missing `group`/`version`, duplicate keys, values
//! of the wrong kind, invalid names, unsupported printer column types, a `status` flag
//! without a `status` field, `scale` without `status` or without its paths. Next to the
//! errors a placeholder impl is emitted so that uses of the type do not add unrelated
//! errors.
//!
//! ## Generated code
//! For the example above, roughly:
//!
//! ```ignore
//! #[automatically_derived]
//! impl ::kapi_core::Resource for Widget {
//!     const GROUP: &'static str = "example.kapi.dev";
//!     const VERSION: &'static str = "v1";
//!     const KIND: &'static str = "Widget";
//!     const PLURAL: &'static str = "widgets";
//!     type Hooks = WidgetHooks;
//!
//!     fn info() -> &'static ::kapi_core::ResourceInfo {
//!         static INFO: ::kapi_core::ResourceInfo = ::kapi_core::ResourceInfo {
//!             group: Cow::Borrowed("example.kapi.dev"),
//!             version: Cow::Borrowed("v1"),
//!             kind: Cow::Borrowed("Widget"),
//!             list_kind: Cow::Borrowed("WidgetList"),
//!             plural: Cow::Borrowed("widgets"),
//!             singular: Cow::Borrowed("widget"),
//!             short_names: Cow::Borrowed(&[Cow::Borrowed("wd")]),
//!             categories: Cow::Borrowed(&[Cow::Borrowed("all")]),
//!             scope: ::kapi_core::Scope::Namespaced,
//!             subresources: ::kapi_core::Subresources {
//!                 status: true,
//!                 scale: Some(::kapi_core::ScaleInfo { /* the three paths */ }),
//!                 extra: Cow::Borrowed(&[]),
//!             },
//!             printer_columns: Cow::Borrowed(&[::kapi_core::PrinterColumn { /* ... */ }]),
//!             selectable_fields: Cow::Borrowed(&[]),
//!             verbs: ::kapi_core::resource::ALL_VERBS,
//!             served: true,
//!             storage: true,
//!             deprecated: false,
//!             deprecation_warning: None,
//!         };
//!         &INFO
//!     }
//!
//!     fn schema() -> &'static ::kapi_core::schema::Schema {
//!         static SCHEMA: OnceLock<::kapi_core::schema::Schema> = OnceLock::new();
//!         SCHEMA.get_or_init(|| {
//!             let json_schema = SchemaGenerator::default().into_root_schema_for::<Self>();
//!             match ::kapi_core::schema::Schema::from_json_schema(json_schema.as_value()) {
//!                 Ok(schema) => schema,
//!                 Err(errors) => panic!("kapi: the JSON schema of `Widget` is not a valid structural schema; ..."),
//!             }
//!         })
//!     }
//!
//!     fn metadata(&self) -> &ObjectMeta { &self.metadata }
//!     fn metadata_mut(&mut self) -> &mut ObjectMeta { &mut self.metadata }
//! }
//! ```
//!
//! The exact expansion is snapshot-tested in `src/resource/snapshots/`; to see it for your
//! own type, use `cargo expand`.

#![deny(missing_docs)]

mod ctxt;
mod resource;
mod symbol;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `kapi_core::Resource` from `#[resource(...)]`; see the [crate documentation](crate)
/// for every attribute and the code it generates.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    resource::expand::derive(&input).into()
}
