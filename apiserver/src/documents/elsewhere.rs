//! Group-versions served by other servers, merged into this server's documents, as
//! kube-aggregator merges its remote APIServices' discovery and OpenAPI with the local
//! servers': `/apis` (both forms), `/apis/{group}` and the OpenAPI v2 and v3 documents.
//! What is elsewhere, and in which order groups come, is the front server's to say
//! ([`Elsewhere`]); this module only lays it into the documents.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::{Doc, Documents, OpenApiV2, V3, aggregated_key};
use crate::discovery::{AggregatedVersion, compare_versions, group_document};

/// What other servers serve, for this server's documents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Elsewhere {
    /// Every group's name in discovery order (kube-aggregator's: highest
    /// `groupPriorityMinimum` first, then by name); groups it leaves out come after
    /// them, by name.
    pub group_order: Vec<String>,
    /// The groups served elsewhere, each with its versions in priority order.
    pub groups: Vec<RemoteGroup>,
    /// OpenAPI v3 documents of remote group-versions.
    pub openapi_v3: Vec<RemoteOpenApiV3>,
    /// OpenAPI v2 documents of the remote servers, whose paths and definitions join
    /// this server's.
    pub openapi_v2: Vec<Arc<Value>>,
}

/// One group served elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteGroup {
    /// The group's name.
    pub name: String,
    /// Its versions, preferred first.
    pub versions: Vec<RemoteVersion>,
}

/// One remote group-version.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteVersion {
    /// The version.
    pub version: String,
    /// Its `APIVersionDiscovery` as the remote server lists it in aggregated discovery
    /// (`None` when it could not be read: the version is then listed with no resources
    /// and `freshness: Stale`, as kube-aggregator lists an unreachable one).
    pub discovery: Option<Value>,
}

/// One remote group-version's OpenAPI v3 document.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteOpenApiV3 {
    /// `apis/{group}/{version}`.
    pub path: String,
    /// The document, as the remote server sent it.
    pub document: Bytes,
    /// Its hash, as the remote server's index gives it.
    pub hash: String,
}

impl Elsewhere {
    /// The rank of a group in discovery order.
    fn rank<'a>(&'a self, group: &'a str) -> (usize, &'a str) {
        let at = self.group_order.iter().position(|g| g == group);
        (at.unwrap_or(usize::MAX), group)
    }
}

fn parse(doc: &Doc) -> Value {
    serde_json::from_slice(&doc.0).unwrap_or(Value::Null)
}

/// The versions of a legacy `APIGroup` body.
fn versions_of(body: &Value) -> Vec<String> {
    body["versions"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .filter_map(|v| v["version"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The local versions, then the remote ones it lacks, in version priority (the local
/// preferred version stays first).
fn merged_versions(local: Vec<String>, remote: &RemoteGroup) -> Vec<String> {
    let mut versions = local;
    let mut extra: Vec<String> = remote
        .versions
        .iter()
        .map(|v| v.version.clone())
        .filter(|v| !versions.contains(v))
        .collect();
    extra.sort_by(|a, b| compare_versions(a, b));
    versions.extend(extra);
    versions
}

impl Documents {
    /// These documents with what `elsewhere` serves merged in, every group in its
    /// order. The local documents are left as they are.
    pub fn with(&self, elsewhere: &Elsewhere) -> Documents {
        let mut aggregated = self.aggregated.clone();
        for version in [AggregatedVersion::V2, AggregatedVersion::V2Beta1] {
            let key = (false, aggregated_key(version));
            let merged = merge_aggregated(parse(&self.aggregated[&key]), elsewhere);
            aggregated.insert(key, Doc::api(&merged));
        }
        let mut openapi_v3: BTreeMap<String, Arc<V3>> = self.openapi_v3.clone();
        for remote in &elsewhere.openapi_v3 {
            let doc = Doc(remote.document.clone());
            let hash = remote.hash.clone();
            let v3 = V3 {
                from: Vec::new(),
                doc,
                hash,
            };
            openapi_v3.insert(remote.path.clone(), Arc::new(v3));
        }
        let index: Map<String, Value> = openapi_v3
            .iter()
            .map(|(path, v3)| {
                let url = format!("/openapi/v3/{path}?hash={}", v3.hash);
                (path.clone(), json!({ "serverRelativeURL": url }))
            })
            .collect();
        Documents {
            resources: self.resources.clone(),
            api_versions: self.api_versions.clone(),
            api_groups: Doc::api(&merge_groups(parse(&self.api_groups), elsewhere)),
            aggregated,
            openapi_v2: std::sync::OnceLock::new(),
            openapi_v3_index: Doc::new(&json!({ "paths": index })),
            openapi_v3,
            remote_groups: elsewhere
                .groups
                .iter()
                .map(|g| (g.name.clone(), g.clone()))
                .collect(),
            remote_openapi_v2: elsewhere.openapi_v2.clone(),
        }
    }

    /// `/apis/{group}` of a group served elsewhere (its local versions too, if any).
    pub(super) fn remote_group(&self, group: &str) -> Option<Value> {
        let remote = self.remote_groups.get(group)?;
        let local = crate::discovery::api_group(&self.resources, group)
            .map(|g| versions_of(&g))
            .unwrap_or_default();
        let mut body = group_document(group, &merged_versions(local, remote));
        let map = body.as_object_mut()?;
        map.insert("kind".into(), "APIGroup".into());
        map.insert("apiVersion".into(), "v1".into());
        Some(body)
    }

    /// OpenAPI v2 with the remote documents' paths and definitions added to the local
    /// ones (a local entry is kept where both have one).
    pub(super) fn merged_openapi_v2(&self, mut local: Value) -> OpenApiV2 {
        for remote in &self.remote_openapi_v2 {
            for section in ["paths", "definitions"] {
                let (Some(into), Some(from)) = (
                    local.get_mut(section).and_then(Value::as_object_mut),
                    remote.get(section).and_then(Value::as_object),
                ) else {
                    continue;
                };
                for (k, v) in from {
                    into.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        OpenApiV2::new(&local)
    }
}

/// `APIGroupList` with the remote groups added, every group in order.
fn merge_groups(mut list: Value, elsewhere: &Elsewhere) -> Value {
    let Some(groups) = list.get_mut("groups").and_then(Value::as_array_mut) else {
        return list;
    };
    for remote in &elsewhere.groups {
        match groups
            .iter_mut()
            .find(|g| g["name"] == remote.name.as_str())
        {
            Some(local) => {
                *local = group_document(&remote.name, &merged_versions(versions_of(local), remote));
            }
            None => {
                let versions: Vec<String> =
                    remote.versions.iter().map(|v| v.version.clone()).collect();
                groups.push(group_document(&remote.name, &versions));
            }
        }
    }
    groups.sort_by(|a, b| {
        let (a, b) = (a["name"].as_str(), b["name"].as_str());
        elsewhere
            .rank(a.unwrap_or(""))
            .cmp(&elsewhere.rank(b.unwrap_or("")))
    });
    list
}

/// A remote version's `APIVersionDiscovery`, or a stale one without resources.
fn version_discovery(remote: &RemoteVersion) -> Value {
    remote.discovery.clone().unwrap_or_else(
        || json!({"version": remote.version, "resources": [], "freshness": "Stale"}),
    )
}

/// `APIGroupDiscoveryList` of `/apis` with the remote groups added, in order.
fn merge_aggregated(mut list: Value, elsewhere: &Elsewhere) -> Value {
    let Some(items) = list.get_mut("items").and_then(Value::as_array_mut) else {
        return list;
    };
    for remote in &elsewhere.groups {
        let found = items
            .iter_mut()
            .find(|g| g["metadata"]["name"] == remote.name.as_str());
        match found.and_then(|g| g["versions"].as_array_mut()) {
            Some(versions) => {
                for v in &remote.versions {
                    if !versions.iter().any(|l| l["version"] == v.version.as_str()) {
                        versions.push(version_discovery(v));
                    }
                }
            }
            None => items.push(json!({
                "metadata": {"name": remote.name, "creationTimestamp": null},
                "versions": remote.versions.iter().map(version_discovery).collect::<Vec<_>>(),
            })),
        }
    }
    items.sort_by(|a, b| {
        let (a, b) = (
            a["metadata"]["name"].as_str().unwrap_or(""),
            b["metadata"]["name"].as_str().unwrap_or(""),
        );
        elsewhere.rank(a).cmp(&elsewhere.rank(b))
    });
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elsewhere() -> Elsewhere {
        Elsewhere {
            group_order: vec!["apps".into(), "remote.example".into(), "batch".into()],
            groups: vec![RemoteGroup {
                name: "remote.example".into(),
                versions: vec![RemoteVersion {
                    version: "v1".into(),
                    discovery: None,
                }],
            }],
            ..Elsewhere::default()
        }
    }

    #[test]
    fn remote_groups_join_the_list_in_order() {
        let list = json!({"kind": "APIGroupList", "groups": [
            group_document("batch", &["v1".into()]),
            group_document("apps", &["v1".into()]),
            group_document("zeta.example", &["v1".into()]),
        ]});
        let merged = merge_groups(list, &elsewhere());
        let names: Vec<&str> = merged["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["apps", "remote.example", "batch", "zeta.example"]);
        assert_eq!(
            merged["groups"][1]["preferredVersion"]["groupVersion"],
            "remote.example/v1"
        );
    }

    #[test]
    fn an_unread_remote_version_is_stale() {
        let list = json!({"items": []});
        let merged = merge_aggregated(list, &elsewhere());
        assert_eq!(merged["items"][0]["metadata"]["name"], "remote.example");
        assert_eq!(merged["items"][0]["versions"][0]["freshness"], "Stale");
    }
}
