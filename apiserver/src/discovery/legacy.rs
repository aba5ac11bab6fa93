//! The unaggregated discovery documents: `APIVersions`, `APIGroupList`, `APIGroup` and
//! `APIResourceList`.

use std::sync::Arc;

use kapi_core::{ObjectStrategy, ResourceInfo, ScaleInfo};
use serde_json::{Map, Value, json};

use super::{SUBRESOURCE_VERBS, group_versions, named_groups, resources_of, storage_hash_for};

/// `GET /api`: `APIVersions` listing `v1`, reachable at `server_address` (`host:port`)
/// from every client network, as a single kube-apiserver answers.
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ]
    })
}

/// `GET /apis`: `APIGroupList` with every served group but the core one, sorted by name.
pub fn api_group_list(resources: &[Arc<dyn ObjectStrategy>]) -> Value {
    let groups: Vec<Value> = named_groups(resources)
        .iter()
        .map(|g| group_body(resources, g))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/{group}`: the group's `APIGroup`, or `None` when nothing in it is served
/// (the caller answers 404).
pub fn api_group(resources: &[Arc<dyn ObjectStrategy>], group: &str) -> Option<Value> {
    if group.is_empty() || group_versions(resources, group).is_empty() {
        return None;
    }
    let mut body = group_body(resources, group);
    let map = body.as_object_mut()?;
    map.insert("kind".into(), "APIGroup".into());
    map.insert("apiVersion".into(), "v1".into());
    Some(body)
}

/// `name`, `versions` and `preferredVersion` of one served group.
fn group_body(resources: &[Arc<dyn ObjectStrategy>], group: &str) -> Value {
    group_document(group, &group_versions(resources, group))
}

/// `name`, `versions` and `preferredVersion` of a group with `versions`, preferred
/// first (also of groups served elsewhere).
pub fn group_document(group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
        "versions": versions,
    })
}

/// `GET /api/v1` (group `""`) or `GET /apis/{group}/{version}`: the `APIResourceList`,
/// each resource followed by its `/status` and `/scale` entries. `None` when the
/// group-version serves nothing, except for the core `v1`, which always exists.
pub fn api_resource_list(
    resources: &[Arc<dyn ObjectStrategy>],
    group: &str,
    version: &str,
) -> Option<Value> {
    let infos = resources_of(resources, group, version);
    if infos.is_empty() && !(group.is_empty() && version == "v1") {
        return None;
    }
    let mut list = Vec::new();
    for info in infos {
        list.push(api_resource(resources, info));
        if info.subresources.status {
            list.push(json!({
                "name": format!("{}/status", info.plural),
                "singularName": "",
                "namespaced": info.namespaced(),
                "kind": info.kind,
                "verbs": SUBRESOURCE_VERBS,
            }));
        }
        if info.subresources.scale.is_some() {
            list.push(json!({
                "name": format!("{}/scale", info.plural),
                "singularName": "",
                "namespaced": info.namespaced(),
                "group": ScaleInfo::GROUP,
                "version": ScaleInfo::VERSION,
                "kind": ScaleInfo::KIND,
                "verbs": SUBRESOURCE_VERBS,
            }));
        }
        for extra in info.subresources.extra.iter() {
            let (g, v, kind) = super::extra_subresource_kind(info, extra);
            let mut entry = json!({
                "name": format!("{}/{}", info.plural, extra.name),
                "singularName": "",
                "namespaced": info.namespaced(),
                "kind": kind,
                "verbs": extra.verbs,
            });
            // Like scale, a kind of another group-version names it.
            if (g.as_str(), v.as_str()) != (info.group.as_ref(), info.version.as_ref()) {
                entry["group"] = json!(g);
                entry["version"] = json!(v);
            }
            list.push(entry);
        }
    }

    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": list,
    }))
}

/// One main-resource `APIResource`; `shortNames` and `categories` are left out when
/// empty, as Go's `omitempty` does.
fn api_resource(resources: &[Arc<dyn ObjectStrategy>], info: &ResourceInfo) -> Value {
    let mut r = Map::new();
    r.insert("name".into(), info.plural.as_ref().into());
    r.insert("singularName".into(), info.singular.as_ref().into());
    r.insert("namespaced".into(), info.namespaced().into());
    r.insert("kind".into(), info.kind.as_ref().into());
    r.insert("verbs".into(), strings(&info.verbs));
    if !info.short_names.is_empty() {
        r.insert("shortNames".into(), strings(&info.short_names));
    }
    if !info.categories.is_empty() {
        r.insert("categories".into(), strings(&info.categories));
    }
    r.insert(
        "storageVersionHash".into(),
        storage_hash_for(resources, info).into(),
    );
    Value::Object(r)
}

/// A JSON array of strings.
pub(super) fn strings<S: AsRef<str>>(items: &[S]) -> Value {
    Value::Array(items.iter().map(|s| s.as_ref().into()).collect())
}
