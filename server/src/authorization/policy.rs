//! The RBAC policy as it is stored, kept in memory by watching the four
//! `rbac.authorization.k8s.io` resources (kube-apiserver's RBAC authorizer reads
//! informers the same way), and ClusterRole aggregation: a ClusterRole with an
//! `aggregationRule` gets the rules of the ClusterRoles it selects written into it.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_auth::authz::PolicySnapshot;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::registry::watch::WatchEventType;
use crate::registry::watch::{KindChange, watch_kinds};
use crate::registry::{Registry, Subresource, WriteOptions};

const GROUP: &str = "rbac.authorization.k8s.io";
const KINDS: [&str; 4] = [
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
];

/// The policy the authorizer reads: the latest complete snapshot.
#[derive(Default)]
pub struct LivePolicy {
    snapshot: RwLock<Arc<PolicySnapshot>>,
}

impl LivePolicy {
    /// The current policy.
    pub fn snapshot(&self) -> Arc<PolicySnapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn publish(&self, snapshot: PolicySnapshot) {
        *self.snapshot.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
    }
}

/// Starts watching the policy; the receiver turns `true` once every kind's current
/// objects are in.
pub fn start(
    registry: Arc<Registry>,
    shutdown: watch::Receiver<bool>,
) -> (Arc<LivePolicy>, watch::Receiver<bool>, JoinHandle<()>) {
    let policy = Arc::new(LivePolicy::default());
    let (synced_tx, synced_rx) = watch::channel(false);
    let task = tokio::spawn(run(registry, policy.clone(), synced_tx, shutdown));
    (policy, synced_rx, task)
}

async fn run(
    registry: Arc<Registry>,
    policy: Arc<LivePolicy>,
    synced: watch::Sender<bool>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        // Each round starts from the stored state; a watch that ends (compaction, a
        // storage outage) starts a new round.
        let (tx, mut rx) = mpsc::channel(1024);
        let (watchers, missing) = watch_kinds(&registry, GROUP, &KINDS, &tx, "the RBAC policy");
        let mut pending = KINDS.len() - missing;
        drop(tx);
        let mut snapshot = PolicySnapshot::new();
        let mut ended = false;
        // ClusterRoles changed since aggregation last ran (it waits for the full policy).
        let mut aggregation_due = false;
        while !ended {
            let first = tokio::select! {
                c = rx.recv() => c,
                _ = crate::controllers::stopped(&mut shutdown) => {
                    watchers.iter().for_each(JoinHandle::abort);
                    return;
                }
            };
            let Some(first) = first else { break };
            let mut change = Some(first);
            // Everything already queued goes into one snapshot.
            while let Some(c) = change.take().or_else(|| rx.try_recv().ok()) {
                match c {
                    KindChange::Ended => ended = true,
                    KindChange::Event(kind, type_, object) => {
                        if type_ == WatchEventType::Bookmark {
                            if object["metadata"]["annotations"]["k8s.io/initial-events-end"]
                                == "true"
                            {
                                pending = pending.saturating_sub(1);
                            }
                            continue;
                        }
                        aggregation_due |= kind == "clusterroles";
                        apply(&mut snapshot, kind, type_, object);
                    }
                }
            }
            policy.publish(snapshot.clone());
            if pending == 0 {
                synced.send_if_modified(|s| !std::mem::replace(s, true));
                if std::mem::take(&mut aggregation_due) {
                    aggregate(&registry, &snapshot).await;
                }
            }
        }
        watchers.iter().for_each(JoinHandle::abort);
        if *shutdown.borrow() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn apply(snapshot: &mut PolicySnapshot, kind: &str, type_: WatchEventType, object: Value) {
    let deleted = type_ == WatchEventType::Deleted;
    let ns = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let parsed = match kind {
        "roles" if deleted => snapshot.remove_role(&ns, &name).map(|_| ()).ok_or(()),
        "clusterroles" if deleted => snapshot.remove_cluster_role(&name).map(|_| ()).ok_or(()),
        "rolebindings" if deleted => snapshot
            .remove_role_binding(&ns, &name)
            .map(|_| ())
            .ok_or(()),
        "clusterrolebindings" if deleted => snapshot
            .remove_cluster_role_binding(&name)
            .map(|_| ())
            .ok_or(()),
        "roles" => serde_json::from_value::<Role>(object)
            .map(|r| {
                snapshot.insert_role(r);
            })
            .map_err(|_| ()),
        "clusterroles" => serde_json::from_value::<ClusterRole>(object)
            .map(|r| {
                snapshot.insert_cluster_role(r);
            })
            .map_err(|_| ()),
        "rolebindings" => serde_json::from_value::<RoleBinding>(object)
            .map(|r| {
                snapshot.insert_role_binding(r);
            })
            .map_err(|_| ()),
        "clusterrolebindings" => serde_json::from_value::<ClusterRoleBinding>(object)
            .map(|r| {
                snapshot.insert_cluster_role_binding(r);
            })
            .map_err(|_| ()),
        _ => Ok(()),
    };
    if parsed.is_err() && !deleted {
        tracing::warn!(kind, namespace = %ns, name = %name, "an RBAC object the policy cannot read");
    }
}

/// Writes the rules of every aggregated ClusterRole that changed (kube's
/// clusterrole-aggregation controller).
async fn aggregate(registry: &Registry, snapshot: &PolicySnapshot) {
    let all: Vec<ClusterRole> = snapshot.cluster_roles().cloned().collect();
    let Some(store) = registry.get(GROUP, "v1", "clusterroles") else {
        return;
    };
    for role in kapi_auth::authz::aggregation::aggregate(&all) {
        let name = role.metadata.name.clone().unwrap_or_default();
        let rules = serde_json::to_value(&role.rules).unwrap_or(Value::Null);
        let result = store
            .update_with(
                None,
                &name,
                Subresource::Main,
                &WriteOptions::default(),
                move |current| {
                    let mut role = current.clone();
                    role["rules"] = rules.clone();
                    Ok(role)
                },
            )
            .await;
        if let Err(e) = result {
            tracing::debug!(role = %name, error = %e, "aggregating a ClusterRole");
        }
    }
}
