//! The ServiceAccount controller: every namespace that is not being deleted has a
//! `default` ServiceAccount (kube-controller-manager's serviceaccounts-controller), so
//! that `kubectl create token default` and Pods without `serviceAccountName` work.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::watch;

use kapi_apiserver::registry::object::{is_being_deleted, name};
use kapi_apiserver::registry::watch::WatchEventType;
use kapi_apiserver::registry::{Registry, Store, WatchOptions, WriteOptions};

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let (Some(namespaces), Some(accounts)) = (
        registry.get("", "v1", "namespaces"),
        registry.get("", "v1", "serviceaccounts"),
    ) else {
        return;
    };
    loop {
        // Namespaces as they come and go, and `default` accounts as they are deleted.
        let streams = async {
            let ns = namespaces.watch(None, &WatchOptions::default()).await?;
            let sa = accounts
                .watch(
                    None,
                    &WatchOptions {
                        field_selector: kapi_core::selector::FieldSelector::parse(
                            "metadata.name=default",
                        )
                        .unwrap_or_default(),
                        ..WatchOptions::default()
                    },
                )
                .await?;
            Ok::<_, kapi_apiserver::status::ApiError>((ns, sa))
        };
        let (mut ns_events, mut sa_events) = match streams.await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "serviceaccount controller: watch failed");
                tokio::select! {
                    () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        loop {
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(&mut shutdown) => return,
                event = ns_events.next() => match event {
                    Some(ev) if matches!(ev.type_, WatchEventType::Added | WatchEventType::Modified)
                        && !is_being_deleted(&ev.object) =>
                    {
                        ensure_default(&accounts, name(&ev.object)).await;
                    }
                    Some(_) => {}
                    None => break,
                },
                event = sa_events.next() => match event {
                    Some(ev) if ev.type_ == WatchEventType::Deleted => {
                        let ns = ev.object["metadata"]["namespace"].as_str().unwrap_or_default();
                        if let Ok(namespace) = namespaces.get(None, ns, kapi_storage::ReadAt::Latest).await {
                            if !is_being_deleted(&namespace) {
                                ensure_default(&accounts, ns).await;
                            }
                        }
                    }
                    Some(_) => {}
                    None => break,
                },
            }
        }
    }
}

async fn ensure_default(accounts: &Store, namespace: &str) {
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": { "name": "default", "namespace": namespace },
    });
    match accounts
        .create(
            Some(namespace),
            account,
            &WriteOptions::by(crate::controllers::MANAGER),
        )
        .await
    {
        Ok(_) => tracing::debug!(namespace, "created the default ServiceAccount"),
        // Already there, or the namespace went meanwhile.
        Err(e) if matches!(e.reason, "AlreadyExists" | "NotFound" | "Forbidden") => {}
        Err(e) => tracing::warn!(namespace, error = %e, "creating the default ServiceAccount"),
    }
}
