//! The namespace controller: empties a namespace that is being deleted (every namespaced
//! resource, every object in it), then removes its `kubernetes` finalizer so that the
//! namespace itself goes (kube-controller-manager's namespace controller).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use kapi_apiserver::registry::object::{is_being_deleted, name};
use kapi_apiserver::registry::{
    DeleteOptions, ListOptions, Registry, Store, Subresource, WatchOptions, WriteOptions,
};
use kapi_apiserver::status::ApiError;

use crate::hooks::KUBERNETES_FINALIZER;

/// How often terminating namespaces are looked at again while their content drains
/// (objects with finalizers can take a while).
const RESYNC: Duration = Duration::from_secs(1);

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let Some(namespaces) = registry.get("", "v1", "namespaces") else {
        return;
    };
    loop {
        let mut events = match namespaces.watch(None, &WatchOptions::default()).await {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "namespace controller: watch failed");
                if wait(&mut shutdown, RESYNC).await {
                    return;
                }
                continue;
            }
        };
        let mut tick = tokio::time::interval(RESYNC);
        loop {
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                event = events.next() => match event {
                    Some(ev) if is_being_deleted(&ev.object) => {
                        finalize(&registry, &namespaces, name(&ev.object)).await;
                    }
                    Some(_) => {}
                    None => break, // the watch ended: start a new one
                },
                _ = tick.tick() => sweep(&registry, &namespaces).await,
            }
        }
    }
}

/// Sleeps; true when the server shuts down meanwhile.
async fn wait(shutdown: &mut watch::Receiver<bool>, d: Duration) -> bool {
    tokio::select! {
        () = kapi_apiserver::shutdown::stopped(shutdown) => true,
        _ = tokio::time::sleep(d) => false,
    }
}

async fn sweep(registry: &Registry, namespaces: &Arc<Store>) {
    let Ok(list) = namespaces.list(None, &ListOptions::default()).await else {
        return;
    };
    for ns in list["items"].as_array().into_iter().flatten() {
        if is_being_deleted(ns) {
            finalize(registry, namespaces, name(ns)).await;
        }
    }
}

/// Deletes what is left in namespace `ns`; once nothing is left, removes the
/// `kubernetes` finalizer (the store then deletes the namespace).
async fn finalize(registry: &Registry, namespaces: &Arc<Store>, ns: &str) {
    let mut remaining = 0;
    for store in registry.stores().iter().filter(|s| s.info().namespaced()) {
        let info = store.info();
        if !info.serves("deletecollection") && !info.serves("delete") {
            continue;
        }
        match store
            .delete_collection(Some(ns), &ListOptions::default(), &DeleteOptions::default())
            .await
        {
            // Objects still here wait for their own finalizers.
            Ok(list) => {
                remaining += list["items"].as_array().map_or(0, |items| {
                    items.iter().filter(|o| is_being_deleted(o)).count()
                })
            }
            Err(e) => {
                tracing::warn!(namespace = ns, resource = %store.info().plural, error = %e, "namespace controller: deleting content");
                remaining += 1;
            }
        }
    }
    if remaining > 0 {
        return;
    }
    let removed = namespaces
        .update_with(
            None,
            ns,
            Subresource::Extra("finalize".into()),
            &WriteOptions::by(crate::controllers::MANAGER),
            |current| {
                let mut next = current.clone();
                let finalizers: Vec<Value> = current
                    .pointer("/spec/finalizers")
                    .and_then(Value::as_array)
                    .map(|f| {
                        f.iter()
                            .filter(|v| *v != KUBERNETES_FINALIZER)
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                next["spec"] = json!({ "finalizers": finalizers });
                Ok(next)
            },
        )
        .await;
    match removed {
        Ok(_) => tracing::info!(namespace = ns, "namespace finalized"),
        Err(ApiError {
            reason: "NotFound", ..
        }) => {}
        Err(e) => tracing::warn!(namespace = ns, error = %e, "namespace controller: finalizing"),
    }
}
