//! Storage version migration for CustomResourceDefinitions, as kube-storage-version-
//! migrator runs it beside kube-apiserver: when a CRD's `status.storedVersions` lists
//! versions besides its storage version, every object stored in another version is
//! written again in the storage version (pages of [`PAGE`] keys, a pause between pages,
//! so at most about 1,000 objects a second), and once a pass finds none left,
//! `storedVersions` is trimmed to the storage version. The old versions may then leave
//! `spec.versions`, which kapi, like kube, refuses while they are stored versions.
//!
//! It runs on the leader. A migration stopped midway (a restart, a new leader) starts
//! again from the first key: objects already rewritten cost a read. A write during
//! the migration is in the storage version already, and a rewrite never overwrites
//! one (each is a compare-and-swap on what it read). The trim waits for a pass that
//! starts at least a second after the previous one and rewrites nothing, so an object
//! a replica wrote in the old version before it saw the CRD change is caught.
//!
//! Compiled resources, whose storage version changes only with a new kapi binary, are
//! migrated at the leader's start when their `StorageVersion` does not record a
//! complete migration to it ([`super::storage_versions`]).
//!
//! Deliberate difference: kube-apiserver alone never trims `storedVersions` (the
//! migrator is a separate component, and kube's own `StorageVersionMigration` API is
//! alpha).

use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::watch;

use kapi_apiextensions::conditions;
use kapi_apiserver::registry::object::name;
use kapi_apiserver::registry::{ListOptions, Registry, Store, Subresource, WriteOptions};

use super::{items, storage_versions};

/// The field manager of the trim, as kube-storage-version-migrator names itself.
const MANAGER: &str = "storage-version-migration-migrator";
/// Keys read, and at most rewritten, per page.
const PAGE: usize = 100;
/// The pause after each page.
const PAUSE: Duration = Duration::from_millis(100);
/// The least time between the pass before the trim and the one before it.
const SETTLE: Duration = Duration::from_secs(1);
/// How long after a failed migration (a conversion webhook down) it is tried again,
/// if no change of the CRDs tries it sooner.
const RETRY: Duration = Duration::from_secs(30);

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let Some(crds) = registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions") else {
        return;
    };
    loop {
        let Some(mut events) =
            super::watch_from_now(&crds, "storage version migration", &mut shutdown).await
        else {
            return;
        };
        let mut compiled_done = migrate_compiled(&registry).await;
        let mut failed = !compiled_done;
        loop {
            let retry = tokio::time::sleep(RETRY);
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                event = events.next() => if event.is_none() { break },
                () = retry, if failed => {}
            }
            while let Some(Some(_)) = events.next().now_or_never() {}
            let Ok(list) = crds.list(None, &ListOptions::default()).await else {
                continue;
            };
            if !compiled_done {
                compiled_done = migrate_compiled(&registry).await;
            }
            failed = !compiled_done;
            for crd in items(&list) {
                if let Some(version) = pending(crd) {
                    let migration = migrate(&registry, &crds, crd, &version);
                    tokio::select! {
                        () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                        done = migration => failed |= !done,
                    }
                }
            }
        }
    }
}

/// The storage version of an established CRD whose `storedVersions` lists others.
fn pending(crd: &Value) -> Option<String> {
    let storage = crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"] == true)?["name"]
        .as_str()?
        .to_string();
    let stored = crd["status"]["storedVersions"].as_array()?;
    let done = stored.len() == 1 && stored[0] == storage.as_str();
    let established = conditions::is_true(&crd["status"], conditions::ESTABLISHED);
    (!done && established).then_some(storage)
}

/// Migrates `crd`'s objects to `version`, then trims its `storedVersions`; false when
/// it failed and is to be tried again.
async fn migrate(registry: &Registry, crds: &Store, crd: &Value, version: &str) -> bool {
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
    let api_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    // Any served version's store writes in the storage version (which need not be
    // served). The registry follows the CRD on its own watch: wait until the stores
    // write in the new version, so no write in the old one can follow the pass.
    let versions: Vec<&str> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    let mut store = None;
    for _ in 0..100 {
        store = versions.iter().find_map(|v| {
            registry
                .get(group, v, plural)
                .filter(|s| s.storage_api_version() == api_version)
        });
        if store.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let Some(store) = store else {
        tracing::warn!(
            crd = name(crd),
            "storage version migration: the resource is not served"
        );
        return false;
    };
    // Passes until one rewrites nothing, at least two, each after the first a second
    // later than the one before.
    let mut first = true;
    loop {
        if !first {
            tokio::time::sleep(SETTLE).await;
        }
        let rewritten = match pass(&store).await {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(crd = name(crd), error = %e.message, "storage version migration");
                return false;
            }
        };
        if rewritten > 0 {
            tracing::info!(
                crd = name(crd),
                version,
                rewritten,
                "migrated stored objects"
            );
        } else if !first {
            break;
        }
        first = false;
    }
    trim(crds, crd, version).await;
    true
}

/// Migrates every compiled resource whose StorageVersion does not record a complete
/// migration to its storage version, and records it; false when one failed (tried
/// again later).
async fn migrate_compiled(registry: &Registry) -> bool {
    let mut done = true;
    for c in storage_versions::compiled(registry) {
        let target = c.store.storage_api_version();
        if storage_versions::recorded_migration(registry, &c.name)
            .await
            .as_deref()
            == Some(target.as_str())
        {
            continue;
        }
        match pass(&c.store).await {
            Ok(rewritten) => {
                if rewritten > 0 {
                    tracing::info!(resource = %c.name, version = %target, rewritten, "migrated stored objects");
                }
                done &= storage_versions::record_migration(registry, &c.name, &target).await;
            }
            Err(e) => {
                tracing::warn!(resource = %c.name, error = %e.message, "storage version migration");
                done = false;
            }
        }
    }
    done
}

/// One pass over every key; how many objects it rewrote.
async fn pass(store: &Store) -> Result<usize, kapi_apiserver::status::ApiError> {
    let mut after: Option<String> = None;
    let mut rewritten = 0;
    loop {
        let page = store.migrate_page(after.as_deref(), PAGE).await?;
        rewritten += page.rewritten;
        match page.next {
            Some(next) => after = Some(next),
            None => return Ok(rewritten),
        }
        tokio::time::sleep(PAUSE).await;
    }
}

/// `storedVersions` trimmed to `version`, unless the storage version moved meanwhile.
async fn trim(crds: &Store, crd: &Value, version: &str) {
    let written = crds
        .update_with(
            None,
            name(crd),
            Subresource::Status,
            &WriteOptions::by(MANAGER),
            |stored| {
                let mut next = stored.clone();
                if pending(stored).as_deref() == Some(version) {
                    next["status"]["storedVersions"] = json!([version]);
                }
                Ok(next)
            },
        )
        .await;
    match written {
        Ok(_) => tracing::info!(crd = name(crd), version, "trimmed storedVersions"),
        Err(e) => tracing::warn!(crd = name(crd), error = %e.message, "trimming storedVersions"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(versions: &[(&str, bool)], stored: &[&str], established: bool) -> Value {
        let versions: Vec<Value> = versions
            .iter()
            .map(|(n, s)| json!({"name": n, "served": true, "storage": s}))
            .collect();
        let status = if established { "True" } else { "False" };
        json!({"spec": {"versions": versions},
            "status": {"storedVersions": stored,
                "conditions": [{"type": "Established", "status": status}]}})
    }

    #[test]
    fn only_established_crds_with_other_stored_versions_migrate() {
        let two = [("v1", false), ("v2", true)];
        assert_eq!(
            pending(&crd(&two, &["v1", "v2"], true)).as_deref(),
            Some("v2")
        );
        assert_eq!(pending(&crd(&two, &["v2"], true)), None);
        assert_eq!(pending(&crd(&two, &["v1", "v2"], false)), None);
        // A storage version not yet recorded still needs its pass.
        assert_eq!(pending(&crd(&two, &["v1"], true)).as_deref(), Some("v2"));
    }
}
