//! Aggregated discovery: `apidiscovery.k8s.io` `APIGroupDiscoveryList`.

use std::sync::Arc;

use kapi_core::{ObjectStrategy, ResourceInfo, ScaleInfo, Scope};
use serde_json::{Map, Value, json};

use super::legacy::strings;
use super::{SUBRESOURCE_VERBS, group_versions, named_groups, resources_of};

/// The `apidiscovery.k8s.io` version of an aggregated discovery document. Both have the
/// same shape; the version only shows in `apiVersion` and the `Content-Type`, which
/// client-go reads to pick the type it decodes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggregatedVersion {
    /// `apidiscovery.k8s.io/v2`, asked for first by kubectl 1.30+.
    V2,
    /// `apidiscovery.k8s.io/v2beta1`, the only one kubectl 1.27–1.29 asks for.
    V2Beta1,
}

impl AggregatedVersion {
    /// `v2` or `v2beta1`.
    pub fn as_str(self) -> &'static str {
        match self {
            AggregatedVersion::V2 => "v2",
            AggregatedVersion::V2Beta1 => "v2beta1",
        }
    }

    /// The document's `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            AggregatedVersion::V2 => "apidiscovery.k8s.io/v2",
            AggregatedVersion::V2Beta1 => "apidiscovery.k8s.io/v2beta1",
        }
    }
}

/// `GET /api` asked for in aggregated form: one `APIGroupDiscovery` for the core group
/// (no name), always with its `v1`, even when that serves nothing yet.
pub fn aggregated_api(resources: &[Arc<dyn ObjectStrategy>], version: AggregatedVersion) -> Value {
    let mut versions = group_versions(resources, "");
    if !versions.iter().any(|v| v == "v1") {
        versions.push("v1".into());
    }
    list(version, vec![group_discovery(resources, "", &versions)])
}

/// `GET /apis` asked for in aggregated form: every served group but the core one, sorted
/// by name (every custom resource group has the same priority in kube-apiserver, which
/// then sorts by name), each version with its resources.
pub fn aggregated_apis(resources: &[Arc<dyn ObjectStrategy>], version: AggregatedVersion) -> Value {
    let items = named_groups(resources)
        .iter()
        .map(|g| group_discovery(resources, g, &group_versions(resources, g)))
        .collect();
    list(version, items)
}

fn list(version: AggregatedVersion, items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": version.api_version(),
        "metadata": {},
        "items": items,
    })
}

/// One `APIGroupDiscovery`. Its `metadata` is an `ObjectMeta`, whose zero
/// `creationTimestamp` Go serializes as `null`; the core group has no name.
fn group_discovery(
    resources: &[Arc<dyn ObjectStrategy>],
    group: &str,
    versions: &[String],
) -> Value {
    let mut metadata = Map::new();
    if !group.is_empty() {
        metadata.insert("name".into(), group.into());
    }
    metadata.insert("creationTimestamp".into(), Value::Null);
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| {
            let resources: Vec<Value> = resources_of(resources, group, v)
                .into_iter()
                .map(resource_discovery)
                .collect();
            json!({"version": v, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": metadata, "versions": versions})
}

/// One `APIResourceDiscovery`, with `responseKind` in the resource's own group-version
/// as the apiextensions-apiserver writes it for custom resources.
fn resource_discovery(info: &ResourceInfo) -> Value {
    let kind = json!({"group": info.group, "version": info.version, "kind": info.kind});
    let mut r = Map::new();
    r.insert("resource".into(), info.plural.as_ref().into());
    r.insert("responseKind".into(), kind.clone());
    r.insert(
        "scope".into(),
        match info.scope {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        }
        .into(),
    );
    r.insert("singularResource".into(), info.singular.as_ref().into());
    r.insert("verbs".into(), strings(&info.verbs));
    if !info.short_names.is_empty() {
        r.insert("shortNames".into(), strings(&info.short_names));
    }
    if !info.categories.is_empty() {
        r.insert("categories".into(), strings(&info.categories));
    }
    let mut subresources = Vec::new();
    if info.subresources.status {
        subresources.push(json!({
            "subresource": "status",
            "responseKind": kind,
            "verbs": SUBRESOURCE_VERBS,
        }));
    }
    if info.subresources.scale.is_some() {
        subresources.push(json!({
            "subresource": "scale",
            "responseKind": {
                "group": ScaleInfo::GROUP,
                "version": ScaleInfo::VERSION,
                "kind": ScaleInfo::KIND,
            },
            "verbs": SUBRESOURCE_VERBS,
        }));
    }
    for extra in info.subresources.extra.iter() {
        let (group, version, kind) = super::extra_subresource_kind(info, extra);
        let response_kind = json!({"group": group, "version": version, "kind": kind});
        subresources.push(json!({
            "subresource": extra.name,
            "responseKind": response_kind,
            "verbs": extra.verbs,
        }));
    }
    if !subresources.is_empty() {
        r.insert("subresources".into(), subresources.into());
    }
    Value::Object(r)
}
