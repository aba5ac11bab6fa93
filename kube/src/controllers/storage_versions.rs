//! `StorageVersion` objects (`internal.apiserver.k8s.io/v1alpha1`), as kube-apiserver's
//! storage version manager writes them, and the storage version migration of compiled
//! resources, whose storage version changes only with a new kapi binary.
//!
//! Every server, at start, writes its entry in the StorageVersion of each compiled
//! resource (named `<group>.<plural>`, `core.<plural>` for the core group): its
//! `apiServerID`, the version it encodes objects in and the versions it decodes and
//! serves; `commonEncodingVersion` and the `AllEncodingVersionsEqual` condition say
//! whether every server listed agrees. The leader's storage version migration
//! ([`super::storage_version_migration`]) migrates each resource whose StorageVersion
//! does not say (annotation [`MIGRATED_TO`]) that its objects were all rewritten in the
//! current encoding version, and records it here.
//!
//! Deliberate differences: entries are kept per `apiServerID` (the server's host and
//! listening address, so a restart replaces its own) and never garbage collected with
//! the servers' identity Leases; CRDs get no StorageVersion (their `storedVersions`
//! says the same).

use std::collections::BTreeMap;
use std::sync::Arc;

use kapi_storage::ReadAt;
use serde_json::{Value, json};

use kapi_apiserver::registry::{Registry, Store, Subresource, WriteOptions};

/// The annotation the leader sets once every object of the resource is stored in the
/// version it names.
pub const MIGRATED_TO: &str = "kapi.dev/migrated-to";

const GROUP: &str = "internal.apiserver.k8s.io";

/// The name of `(group, plural)`'s StorageVersion.
fn name_of(group: &str, plural: &str) -> String {
    let group = if group.is_empty() { "core" } else { group };
    format!("{group}.{plural}")
}

/// A compiled resource: its StorageVersion's name, the store of its storage version,
/// and every served `apiVersion`.
pub struct Compiled {
    /// `<group>.<plural>`.
    pub name: String,
    /// The store that writes in the storage version.
    pub store: Arc<Store>,
    /// Every served `apiVersion`.
    pub served: Vec<String>,
}

/// Each compiled resource, once.
pub fn compiled(registry: &Registry) -> Vec<Compiled> {
    let mut out: BTreeMap<(String, String), (Arc<Store>, Vec<String>)> = BTreeMap::new();
    for store in registry.stores() {
        let info = store.info();
        // Only what is stored: not what is only created (bindings) or only read.
        let stored = ["create", "get"]
            .iter()
            .all(|v| info.verbs.iter().any(|x| x == v));
        if !registry.is_compiled(&info.group, &info.plural) || !stored {
            continue;
        }
        let key = (info.group.to_string(), info.plural.to_string());
        let entry = out
            .entry(key)
            .or_insert_with(|| (store.clone(), Vec::new()));
        entry.1.push(info.api_version());
        if info.api_version() == store.storage_api_version() {
            entry.0 = store.clone();
        }
    }
    out.into_iter()
        .map(|((group, plural), (store, served))| Compiled {
            name: name_of(&group, &plural),
            store,
            served,
        })
        .collect()
}

/// This server's entry in `status`, replacing the one it wrote before; the common
/// encoding version and its condition recomputed.
fn with_entry(status: &Value, entry: &Value) -> Value {
    let id = &entry["apiServerID"];
    let mut entries: Vec<Value> = status["storageVersions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| &e["apiServerID"] != id)
        .collect();
    entries.push(entry.clone());
    entries.sort_by(|a, b| a["apiServerID"].as_str().cmp(&b["apiServerID"].as_str()));
    let first = &entries[0]["encodingVersion"];
    let equal = entries.iter().all(|e| &e["encodingVersion"] == first);
    // The condition's transition time moves only when its status does.
    let was = &status["conditions"][0];
    let now = match was["status"].as_str() {
        Some(s) if (s == "True") == equal => was["lastTransitionTime"].clone(),
        _ => json!(kapi_apiserver::registry::object::now()),
    };
    let mut status = json!({
        "storageVersions": entries,
        "conditions": [{
            "type": "AllEncodingVersionsEqual",
            "status": if equal { "True" } else { "False" },
            "reason": if equal { "CommonEncodingVersionSet" } else { "CommonEncodingVersionUnset" },
            "message": if equal { "Common encoding version set" } else { "Common encoding version unset" },
            "lastTransitionTime": now,
        }],
    });
    if equal {
        status["commonEncodingVersion"] = first.clone();
    }
    status
}

/// Creates StorageVersion `name` if there is none; false when it could not.
async fn ensure(versions: &Store, name: &str, opts: &WriteOptions) -> bool {
    let empty = json!({"metadata": {"name": name}, "spec": {}, "status": {}});
    match versions.create(None, empty, opts).await {
        Ok(_) => true,
        Err(e) if e.reason == "AlreadyExists" => true,
        Err(e) => {
            tracing::warn!(storage_version = %name, error = %e.message, "StorageVersion not written");
            false
        }
    }
}

/// Writes this server's entry (`server_id`) in every compiled resource's
/// StorageVersion.
pub async fn publish(registry: &Registry, server_id: &str) {
    let Some(versions) = registry.get(GROUP, "v1alpha1", "storageversions") else {
        return;
    };
    for Compiled {
        name,
        store,
        served,
    } in compiled(registry)
    {
        let entry = json!({"apiServerID": server_id,
            "encodingVersion": store.storage_api_version(),
            "decodableVersions": served, "servedVersions": served});
        let opts = WriteOptions::by("kube-apiserver");
        if !ensure(&versions, &name, &opts).await {
            continue;
        }
        let written = versions
            .update_with(None, &name, Subresource::Status, &opts, |cur| {
                let mut next = cur.clone();
                next["status"] = with_entry(&cur["status"], &entry);
                Ok(next)
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(storage_version = %name, error = %e.message, "StorageVersion not written");
        }
    }
}

/// The version every object of `name`'s resource was last recorded as rewritten in
/// (annotation [`MIGRATED_TO`]).
pub async fn recorded_migration(registry: &Registry, name: &str) -> Option<String> {
    let versions = registry.get(GROUP, "v1alpha1", "storageversions")?;
    let sv = versions.get(None, name, ReadAt::Latest).await.ok()?;
    sv["metadata"]["annotations"][MIGRATED_TO]
        .as_str()
        .map(str::to_string)
}

/// Records that every object of `name`'s resource is stored in `version`; whether
/// it was recorded.
pub async fn record_migration(registry: &Registry, name: &str, version: &str) -> bool {
    let Some(versions) = registry.get(GROUP, "v1alpha1", "storageversions") else {
        return true;
    };
    let opts = WriteOptions::by("storage-version-migration-migrator");
    if !ensure(&versions, name, &opts).await {
        return false;
    }
    versions
        .update_with(None, name, Subresource::Main, &opts, |cur| {
            let mut next = cur.clone();
            next["metadata"]["annotations"][MIGRATED_TO] = json!(version);
            Ok(next)
        })
        .await
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_per_server_and_agreement_is_reported() {
        let a = json!({"apiServerID": "a", "encodingVersion": "apps/v1"});
        let b = json!({"apiServerID": "b", "encodingVersion": "apps/v2"});
        let one = with_entry(&json!({}), &a);
        assert_eq!(one["commonEncodingVersion"], "apps/v1");
        assert_eq!(one["conditions"][0]["status"], "True");
        let two = with_entry(&one, &b);
        assert!(two.get("commonEncodingVersion").is_none());
        assert_eq!(two["conditions"][0]["reason"], "CommonEncodingVersionUnset");
        let again = with_entry(
            &two,
            &json!({"apiServerID": "b", "encodingVersion": "apps/v1"}),
        );
        assert_eq!(again["storageVersions"].as_array().unwrap().len(), 2);
        assert_eq!(again["commonEncodingVersion"], "apps/v1");
        let mut stamped = one.clone();
        stamped["conditions"][0]["lastTransitionTime"] = json!("2020-01-01T00:00:00Z");
        let republished = with_entry(&stamped, &a);
        assert_eq!(
            republished["conditions"][0]["lastTransitionTime"], "2020-01-01T00:00:00Z",
            "a restart that changes nothing keeps the condition's time"
        );
        assert_eq!(name_of("", "pods"), "core.pods");
    }
}
