//! Controllers built into the server: those that make delete semantics real (in
//! kube-apiserver's world they live in kube-controller-manager, so a lone apiserver
//! silently ignores the finalizers they own; kapi runs them itself), and those that
//! write the status kube's own loops write.
//!
//! - [`namespace`]: empties a terminating namespace, then lets it go;
//! - [`garbage_collector`]: `ownerReferences` with Background, Foreground and Orphan
//!   propagation;
//! - [`service_account`]: a `default` ServiceAccount in every namespace;
//! - [`resource_quota`]: ResourceQuota usage;
//! - [`admission_policy_status`]: ValidatingAdmissionPolicies' type checking;
//! - [`flow_schema_dangling`]: FlowSchemas' `Dangling` condition (kube-apiserver's own
//!   priority-and-fairness config controller);
//! - [`service_cidr`]: ServiceCIDRs' finalizer, `Ready` condition and deletion
//!   protection;
//! - [`cluster_ip_repair`]: Services' cluster IPs and their IPAddresses kept in step
//!   (kube-apiserver's own repair loop);
//! - [`storage_version_migration`]: a CRD's objects rewritten in its storage version,
//!   then its `storedVersions` trimmed (kube-storage-version-migrator), and through
//!   [`storage_versions`] those of compiled resources whose storage version changed.
//!
//! [`events`] writes the Events they report.

/// The field manager of the controllers' writes, as kube's controllers run in
/// `kube-controller-manager`.
pub(crate) const MANAGER: &str = "kube-controller-manager";

pub mod admission_policy_status;
pub mod cluster_ip_repair;
pub(crate) mod events;
pub mod flow_schema_dangling;
pub mod garbage_collector;
pub mod namespace;
pub mod resource_quota;
pub mod service_account;
pub mod service_cidr;
pub mod storage_version_migration;
pub mod storage_versions;

use std::sync::Arc;

use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use kapi_apiserver::registry::watch::EventStream;
use kapi_apiserver::registry::{Registry, Store, WatchOptions};

/// Runs every built-in controller until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, shutdown: watch::Receiver<bool>) {
    tokio::join!(
        namespace::run(registry.clone(), shutdown.clone()),
        service_account::run(registry.clone(), shutdown.clone()),
        resource_quota::run(registry.clone(), shutdown.clone()),
        admission_policy_status::run(registry.clone(), shutdown.clone()),
        flow_schema_dangling::run(registry.clone(), shutdown.clone()),
        service_cidr::run(registry.clone(), shutdown.clone()),
        cluster_ip_repair::run(registry.clone(), shutdown.clone()),
        storage_version_migration::run(registry.clone(), shutdown.clone()),
        garbage_collector::run(registry, shutdown),
    );
}

/// A watch of `store` from its current objects on, tried again every second while it
/// fails; `None` once the server shuts down. `controller` names who asks, in the log.
pub(crate) async fn watch_from_now(
    store: &Store,
    controller: &str,
    shutdown: &mut watch::Receiver<bool>,
) -> Option<EventStream> {
    loop {
        match store.watch(None, &WatchOptions::default()).await {
            Ok(events) => return Some(events),
            Err(e) => tracing::warn!(error = %e, "{controller} controller: watch failed"),
        }
        tokio::select! {
            () = kapi_apiserver::shutdown::stopped(shutdown) => return None,
            _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
    }
}

/// A controller's pass over everything it keeps, run by [`run_on_changes`].
#[async_trait::async_trait]
pub(crate) trait Reconciler: Send {
    /// One pass; when to run again without a change, if ever.
    async fn reconcile(&mut self) -> Option<Instant>;
}

/// Runs `reconciler` after each burst of changes to `stores` (the first burst being
/// their current objects) and at the time a pass asks for, until `shutdown` turns
/// true; when a watch ends, all are started again. `controller` names it in the log.
pub(crate) async fn run_on_changes(
    stores: &[&Store],
    controller: &str,
    shutdown: &mut watch::Receiver<bool>,
    reconciler: &mut impl Reconciler,
) {
    loop {
        let mut watches = Vec::new();
        for store in stores {
            let Some(events) = watch_from_now(store, controller, shutdown).await else {
                return;
            };
            // `None` marks the end of one watch.
            let marked = events
                .map(Some)
                .chain(futures_util::stream::once(async { None }));
            watches.push(marked.boxed());
        }
        let mut events = futures_util::stream::select_all(watches);
        let mut wake: Option<Instant> = None;
        loop {
            let timer = async {
                match wake {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = kapi_apiserver::shutdown::stopped(shutdown) => return,
                event = events.next() => if !matches!(event, Some(Some(_))) { break },
                () = timer => {}
            }
            // Events already waiting (the initial ones, or a burst) share one pass.
            let mut ended = false;
            while let Some(event) = events.next().now_or_never() {
                if !matches!(event, Some(Some(_))) {
                    ended = true;
                    break;
                }
            }
            if ended {
                break;
            }
            wake = reconciler.reconcile().await;
        }
    }
}

/// The condition of `type` in `obj`'s `status.conditions`.
pub(crate) fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Whether two conditions say the same (transition times aside).
pub(crate) fn same_condition(have: &Value, want: &Value) -> bool {
    ["status", "reason", "message"]
        .iter()
        .all(|k| have[*k] == want[*k])
}

/// `stored` with its condition of `wanted`'s type replaced by `wanted`; the transition
/// time moves only when the status does.
pub(crate) fn with_condition(stored: &Value, wanted: &Value) -> Value {
    let type_ = wanted["type"].as_str().unwrap_or_default();
    let mut next = stored.clone();
    let mut wanted = wanted.clone();
    let transitioned = condition(stored, type_)
        .filter(|c| c["status"] == wanted["status"])
        .and_then(|c| c.get("lastTransitionTime").cloned());
    wanted["lastTransitionTime"] =
        transitioned.unwrap_or_else(|| json!(kapi_apiserver::registry::object::now()));
    let conditions = next["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut kept: Vec<Value> = conditions
        .into_iter()
        .filter(|c| c["type"] != type_)
        .collect();
    kept.push(wanted);
    next["status"]["conditions"] = Value::Array(kept);
    next
}

/// The items of a list answer.
pub(crate) fn items(list: &Value) -> &[Value] {
    list["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}
