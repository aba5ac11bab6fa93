//! What the server needs to know about a resource: names, scope, subresources,
//! printer columns, and the typed [`Resource`] trait that generated and hand-written
//! Rust types implement (usually through `#[derive(Resource)]` from `kapi-macros`).

use std::borrow::Cow;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Serialize, de::DeserializeOwned};

use crate::hooks::Hooks;
use crate::schema::{Definitions, Schema};

/// A string that is `&'static` for compiled resources and owned for run-time ones.
pub type Str = Cow<'static, str>;

/// Whether objects live in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `/namespaces/{ns}/{plural}`.
    Namespaced,
    /// `/{plural}`.
    Cluster,
}

/// The scale subresource's JSON paths (`.spec.replicas` style, as in a CRD).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleInfo {
    /// Where the desired replica count lives.
    pub spec_replicas_path: Str,
    /// Where the observed replica count lives.
    pub status_replicas_path: Str,
    /// Where the label selector string lives, if anywhere.
    pub label_selector_path: Option<Str>,
}

impl ScaleInfo {
    /// The group of the kind a `/scale` subresource reads and writes, whatever the
    /// resource: `autoscaling/v1` `Scale`, as kube-apiserver serves it for built-in and
    /// custom resources alike.
    pub const GROUP: &'static str = "autoscaling";
    /// The version of that kind.
    pub const VERSION: &'static str = "v1";
    /// The kind itself.
    pub const KIND: &'static str = "Scale";
    /// Its `apiVersion`.
    pub const API_VERSION: &'static str = "autoscaling/v1";
}

/// The subresources a resource version serves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subresources {
    /// `/status`: status is ignored on main-resource writes and spec on status writes.
    pub status: bool,
    /// `/scale`.
    pub scale: Option<ScaleInfo>,
    /// Other subresources, whose behaviour the resource's hooks give
    /// ([`Hooks::update_subresource`](crate::Hooks::update_subresource),
    /// [`Hooks::create_on_subresource`](crate::Hooks::create_on_subresource)):
    /// `pods/binding`, `certificatesigningrequests/approval`, `namespaces/finalize`.
    pub extra: Cow<'static, [ExtraSubresource]>,
}

/// A subresource besides status and scale, with the verbs discovery lists for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtraSubresource {
    /// Its name (`binding`).
    pub name: Str,
    /// `create` (a POST of another kind, like a Binding), or `get`/`update`/`patch`
    /// (a write of the object itself, like an approval).
    pub verbs: Cow<'static, [Str]>,
    /// What a `create` subresource is posted, when that is not the core group's kind
    /// named after it (`binding` takes a v1 `Binding`, but `pods/eviction` a policy/v1
    /// `Eviction`): discovery lists it.
    pub kind: Option<SubresourceKind>,
}

/// The group, version and kind of what a subresource is posted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubresourceKind {
    /// API group (`""` for core).
    pub group: Str,
    /// Version.
    pub version: Str,
    /// Kind.
    pub kind: Str,
}

/// One `additionalPrinterColumns` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column header.
    pub name: Str,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: Str,
    /// OpenAPI format hint, e.g. `int32`.
    pub format: Option<Str>,
    /// Shown by `kubectl explain`-like tools.
    pub description: Option<Str>,
    /// 0 for the default view, more for `-o wide`.
    pub priority: i32,
    /// The JSONPath evaluated against each object.
    pub json_path: Str,
}

/// Every verb a resource serves by default, as kube-apiserver lists a CRD's verbs.
pub const ALL_VERBS: Cow<'static, [Str]> = Cow::Borrowed(&[
    Cow::Borrowed("delete"),
    Cow::Borrowed("deletecollection"),
    Cow::Borrowed("get"),
    Cow::Borrowed("list"),
    Cow::Borrowed("patch"),
    Cow::Borrowed("create"),
    Cow::Borrowed("update"),
    Cow::Borrowed("watch"),
]);

/// Static description of one served version of one resource: everything discovery,
/// routing and Table output need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group, `""` for the core group.
    pub group: Str,
    /// Version, e.g. `v1`.
    pub version: Str,
    /// Kind, e.g. `Widget`.
    pub kind: Str,
    /// List kind, e.g. `WidgetList`.
    pub list_kind: Str,
    /// Plural resource name used in URLs.
    pub plural: Str,
    /// Singular name.
    pub singular: Str,
    /// `kubectl get` short names.
    pub short_names: Cow<'static, [Str]>,
    /// Categories such as `all`.
    pub categories: Cow<'static, [Str]>,
    /// Namespaced or cluster-scoped.
    pub scope: Scope,
    /// Subresources served.
    pub subresources: Subresources,
    /// Printer columns beyond NAME and AGE.
    pub printer_columns: Cow<'static, [PrinterColumn]>,
    /// Field paths usable in field selectors beyond metadata.name/namespace.
    pub selectable_fields: Cow<'static, [Str]>,
    /// The verbs served (`get`, `list`, ...): [`ALL_VERBS`] unless restricted.
    pub verbs: Cow<'static, [Str]>,
    /// Whether this version is served.
    pub served: bool,
    /// Whether this is the storage version.
    pub storage: bool,
    /// Whether this version is deprecated.
    pub deprecated: bool,
    /// The warning sent with responses for a deprecated version.
    pub deprecation_warning: Option<Str>,
}

impl ResourceInfo {
    /// Whether the resource serves `verb` (`get`, `list`, `create`, ...).
    pub fn serves(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// True for namespaced resources.
    pub fn namespaced(&self) -> bool {
        self.scope == Scope::Namespaced
    }
}

/// A typed Kubernetes-style resource.
///
/// Implemented by `#[derive(Resource)]` for generated types and for hand-written ones.
pub trait Resource: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// API group (`""` for core).
    const GROUP: &'static str;
    /// Version.
    const VERSION: &'static str;
    /// Kind.
    const KIND: &'static str;
    /// Plural resource name.
    const PLURAL: &'static str;
    /// Hand-written behaviour attached to this resource.
    type Hooks: Hooks<Self>;

    /// Everything the server needs to route and describe this resource.
    fn info() -> &'static ResourceInfo;

    /// The structural schema objects are defaulted, pruned and validated with.
    fn schema() -> &'static Schema;

    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;

    /// The object's metadata, mutably.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;
}

/// Parses a schema embedded by the code generator. The generator checked it at build
/// time, so a failure here means the generated code was edited by hand.
pub fn embedded_schema(json: &str) -> Schema {
    embedded_schema_with(json, None)
}

/// Like [`embedded_schema`], for a schema whose `$ref`s name shared `definitions`.
pub fn embedded_schema_with(json: &str, definitions: Option<&Definitions>) -> Schema {
    let value: serde_json::Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => panic!("kapi: embedded schema is not JSON ({e}); regenerate the code"),
    };
    match Schema::parse_with(&value, &crate::field::FieldPath::root(), definitions) {
        Ok(s) => s,
        Err(errs) => panic!(
            "kapi: embedded schema is invalid; regenerate the code: {}",
            errs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}
