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
//!   priority-and-fairness config controller).

/// The field manager of the controllers' writes, as kube's controllers run in
/// `kube-controller-manager`.
pub(crate) const MANAGER: &str = "kube-controller-manager";

pub mod admission_policy_status;
pub mod flow_schema_dangling;
pub mod garbage_collector;
pub mod namespace;
pub mod resource_quota;
pub mod service_account;

use std::sync::Arc;

use tokio::sync::watch;

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
