//! OpenAPI documents, shaped as kube-apiserver publishes custom resources:
//!
//! - [`v2`]: `GET /openapi/v2`, one Swagger 2.0 document for everything served (what
//!   `kubectl explain --output=plaintext-openapiv2` and older clients read), also served
//!   as gnostic protobuf ([`v2_protobuf`]) to kubectl 1.27 and 1.28;
//! - [`v3_index`]: `GET /openapi/v3`, the list of group-version documents with their
//!   `?hash=`;
//! - [`v3_document`]: `GET /openapi/v3/api/v1` and `GET /openapi/v3/apis/{group}/{version}`,
//!   read by `kubectl explain`, by kubectl's field validation and by `kubectl apply` to
//!   compute strategic merge patches.
//!
//! Every function takes the served resources as `&[Arc<dyn ObjectStrategy>]` (versions
//! with `served: false` are skipped) and [`OpenApiOptions`].
//!
//! Each kind is a definition named as kube-apiserver names CRD types (the group
//! reversed: `dev.kapi.example.v1.Widget`; the core group as `io.k8s.api.core.v1.*`),
//! converted from the structural schema with `metadata` referring to `ObjectMeta`,
//! `apiVersion`/`kind` from `TypeMeta` and `x-kubernetes-group-version-kind`, which is
//! how kubectl finds a kind's schema. Its list kind refers to `ListMeta`. The
//! apimachinery definitions come from k8s-openapi's schemars implementations. v2 schemas go through
//! the same simplification as kube-apiserver's (`ToStructuralOpenAPIV2`: no
//! `anyOf`/`allOf`/`oneOf`/`not`, `nullable` or defaults, untyped preserve-unknown
//! nodes); v3 schemas keep everything, with int-or-string unfolded and every `$ref`
//! that has sibling keywords wrapped in `allOf`.

mod meta;
mod paths;
mod protobuf;
mod routes;
mod schema;

use std::collections::BTreeMap;
use std::sync::Arc;

use kapi_core::{ObjectStrategy, ResourceInfo};
use serde_json::{Map, Value, json};

use crate::discovery::sha256::sha256;
pub use protobuf::{
    PROTOBUF_CONTENT_TYPE, PROTOBUF_SUBTYPE, PROTOBUF_SUBTYPE_DEPRECATED, encode as v2_protobuf,
};
use schema::Flavor;
pub use schema::definition_name;

/// Choices that depend on what the server implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenApiOptions {
    /// List the `fieldValidation` query parameter on create, update and patch.
    ///
    /// kubectl (`--validate=strict`, the default) looks for it on the kind's PATCH
    /// operation: when present it sends `?fieldValidation=Strict` and lets the server
    /// reject unknown fields; when absent it validates client-side against these
    /// schemas instead. Keep it on only if the server honours the parameter.
    pub field_validation: bool,
}

impl Default for OpenApiOptions {
    fn default() -> Self {
        Self {
            field_validation: true,
        }
    }
}

/// The served resource versions.
fn served(resources: &[Arc<dyn ObjectStrategy>]) -> impl Iterator<Item = &Arc<dyn ObjectStrategy>> {
    resources.iter().filter(|s| s.info().served)
}

/// Definitions and paths of some resources in one flavor.
fn build(
    resources: &[&Arc<dyn ObjectStrategy>],
    flavor: Flavor,
    opts: &OpenApiOptions,
) -> (BTreeMap<String, Value>, Map<String, Value>) {
    let with_scale = resources
        .iter()
        .any(|s| s.info().subresources.scale.is_some());
    let mut defs = meta::definitions(flavor.prefix(), with_scale);
    let mut routes = Vec::new();
    let mut shared = schema::Shared::default();
    for s in resources {
        let info: &ResourceInfo = s.info();
        defs.insert(
            definition_name(&info.group, &info.version, &info.kind),
            schema::kind_definition(info, s.schema(), flavor, &mut shared),
        );
        defs.insert(
            definition_name(&info.group, &info.version, &info.list_kind),
            schema::list_definition(info, flavor),
        );
        routes.extend(routes::routes(info, opts));
    }
    shared.into_definitions(&mut defs);
    if flavor == Flavor::V3 {
        defs.values_mut().for_each(schema::wrap_refs);
    }
    (defs, paths::path_items(&routes, flavor))
}

/// `GET /openapi/v2`: a Swagger 2.0 document with every served resource version.
pub fn v2(resources: &[Arc<dyn ObjectStrategy>], opts: &OpenApiOptions) -> Value {
    let served: Vec<&Arc<dyn ObjectStrategy>> = served(resources).collect();
    let (defs, paths) = build(&served, Flavor::V2, opts);
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v0.1.0"},
        "paths": paths,
        "definitions": defs,
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "type": "apiKey",
                "name": "authorization",
                "in": "header"
            }
        },
        "security": [{"BearerToken": []}]
    })
}

/// The `/openapi/v3` path of a group-version: `api/v1` for the core group,
/// `apis/{group}/{version}` otherwise.
pub fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The served group-versions, as `(group, version)`, sorted.
fn group_versions(resources: &[Arc<dyn ObjectStrategy>]) -> Vec<(String, String)> {
    let mut gvs: Vec<(String, String)> = served(resources)
        .map(|s| (s.info().group.to_string(), s.info().version.to_string()))
        .collect();
    gvs.sort();
    gvs.dedup();
    gvs
}

/// `GET /openapi/v3`: `{"paths": {"apis/g/v": {"serverRelativeURL":
/// "/openapi/v3/apis/g/v?hash=..."}}}` for every served group-version.
///
/// This builds and hashes every document; a router should cache the result until the
/// set of served resources changes.
pub fn v3_index(resources: &[Arc<dyn ObjectStrategy>], opts: &OpenApiOptions) -> Value {
    let mut paths = Map::new();
    for (group, version) in group_versions(resources) {
        let path = group_version_path(&group, &version);
        if let Some(doc) = v3_document(resources, opts, &path) {
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", v3_hash(&doc))}),
            );
        }
    }
    json!({"paths": paths})
}

/// `GET /openapi/v3/{path}` with `path` `api/v1` or `apis/{group}/{version}` (a leading
/// `/` is ignored): the OpenAPI 3.0 document of that group-version, or `None` when it
/// serves nothing.
pub fn v3_document(
    resources: &[Arc<dyn ObjectStrategy>],
    opts: &OpenApiOptions,
    path: &str,
) -> Option<Value> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version) = match parts.as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] if !g.is_empty() => (*g, *v),
        _ => return None,
    };
    let selected: Vec<&Arc<dyn ObjectStrategy>> = served(resources)
        .filter(|s| s.info().group == group && s.info().version == version)
        .collect();
    if selected.is_empty() {
        return None;
    }
    let (defs, paths) = build(&selected, Flavor::V3, opts);
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": paths,
        "components": {"schemas": defs},
    }))
}

/// The `?hash=` of a document: the SHA-256 of its compact JSON, in upper-case hex
/// (kube-apiserver uses SHA-512, in the same form; clients only compare it). Hash the
/// same bytes that are served.
pub fn v3_hash(doc: &Value) -> String {
    let bytes = serde_json::to_vec(doc).unwrap_or_default();
    sha256(&bytes).iter().map(|b| format!("{b:02X}")).collect()
}
