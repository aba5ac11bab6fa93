//! Local APIServices, as kube-aggregator's autoregister controller keeps them: one per
//! group-version this server serves itself (compiled ones labelled `automanaged:
//! onstart`, those of CustomResourceDefinitions `automanaged: true`), with no
//! `service`, coming and going with the registry; and the `Available` condition of
//! every local APIService (`Local`), as kube's local availability controller writes it.

use std::collections::BTreeMap;

use kapi_apiserver::registry::{Registry, Store, Subresource, WriteOptions};
use serde_json::{Value, json};

use crate::api_service::{AUTOMANAGED, Availability, GROUP, Spec, VERSION, status_with};
use crate::priorities;

/// The name of a group-version's APIService: `<version>.<group>` (`v1.` for core).
pub fn name_of(group: &str, version: &str) -> String {
    format!("{version}.{group}")
}

/// The local APIServices the registry calls for, by name.
pub fn desired(registry: &Registry) -> BTreeMap<String, Value> {
    let mut wanted = BTreeMap::new();
    for strategy in registry.strategies() {
        let info = strategy.info();
        if !info.served {
            continue;
        }
        let (group, version) = (info.group.as_ref(), info.version.as_ref());
        let name = name_of(group, version);
        let compiled = registry.is_compiled(group, &info.plural);
        let managed = if compiled { "onstart" } else { "true" };
        let entry = wanted.entry(name.clone()).or_insert_with(|| {
            let (gp, vp) = priorities::local(group, version);
            json!({
                "apiVersion": format!("{GROUP}/{VERSION}"),
                "kind": "APIService",
                "metadata": {"name": name, "labels": {AUTOMANAGED: managed}},
                "spec": {
                    "group": group,
                    "version": version,
                    "groupPriorityMinimum": gp,
                    "versionPriority": vp,
                },
            })
        });
        // A group-version with any compiled resource is the server's own.
        if compiled {
            entry["metadata"]["labels"][AUTOMANAGED] = json!("onstart");
        }
    }
    wanted
}

fn options() -> WriteOptions {
    WriteOptions::by("kube-apiserver")
}

fn is_automanaged(object: &Value) -> bool {
    object["metadata"]["labels"][AUTOMANAGED].is_string()
}

/// Creates the local APIServices that are missing, puts back the spec of those that
/// were changed, removes the automanaged ones no longer served, and marks every local
/// one available. `stored` is every APIService, as listed.
pub async fn sync(store: &Store, desired: &BTreeMap<String, Value>, stored: &[Value]) {
    let by_name: BTreeMap<&str, &Value> = stored
        .iter()
        .map(|o| (o["metadata"]["name"].as_str().unwrap_or_default(), o))
        .collect();
    for (name, want) in desired {
        match by_name.get(name.as_str()) {
            None => match store.create(None, want.clone(), &options()).await {
                Ok(_) => {}
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => tracing::warn!(apiservice = %name, error = %e, "not registered"),
            },
            // An APIService a user took over (one with a service) is theirs.
            Some(have) if is_automanaged(have) && Spec::of(have) != Spec::of(want) => {
                let spec = want["spec"].clone();
                write(store, name, Subresource::Main, move |next| {
                    next["spec"] = spec.clone();
                })
                .await;
            }
            Some(_) => {}
        }
    }
    for (name, have) in &by_name {
        if is_automanaged(have) && !desired.contains_key(*name) {
            if let Err(e) = store.delete(None, name, &Default::default()).await {
                if e.reason != "NotFound" {
                    tracing::warn!(apiservice = %name, error = %e, "not removed");
                }
            }
            continue;
        }
        if Spec::of(have).service.is_none() {
            if let Some(status) = status_with(have, &Availability::local()) {
                write(store, name, Subresource::Status, move |next| {
                    next["status"] = status.clone();
                })
                .await;
            }
        }
    }
}

/// Writes a change to the stored APIService `name`; a lost race is seen next round.
pub async fn write(
    store: &Store,
    name: &str,
    sub: Subresource,
    change: impl Fn(&mut Value) + Send + Sync,
) {
    let result = store
        .update_with(None, name, sub, &options(), |current| {
            let mut next = current.clone();
            change(&mut next);
            Ok(next)
        })
        .await;
    if let Err(e) = result {
        if !matches!(e.reason, "Conflict" | "NotFound") {
            tracing::warn!(apiservice = %name, error = %e, "not written");
        }
    }
}
