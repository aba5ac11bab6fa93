//! The RBAC authorizer's policy (kube's `plugin/pkg/auth/authorizer/rbac`): the policy
//! as it is stored, kept in memory by watching the four `rbac.authorization.k8s.io`
//! resources (kube-apiserver's RBAC authorizer reads informers the same way) for the
//! generic [`Authorizer`](kapi_apiserver::authorization::Authorizer), and ClusterRole
//! aggregation: a ClusterRole with an
//! `aggregationRule` gets the rules of the ClusterRoles it selects written into it.

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_auth::authz::PolicySnapshot;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use kapi_apiserver::authorization::LivePolicy;
use kapi_apiserver::registry::informer::{self, Mirror, Watched};
use kapi_apiserver::registry::watch::WatchEventType;
use kapi_apiserver::registry::{Registry, Subresource, WriteOptions};

const GROUP: &str = "rbac.authorization.k8s.io";
const KINDS: [&str; 4] = [
    "roles",
    "clusterroles",
    "rolebindings",
    "clusterrolebindings",
];

/// Starts watching the policy; the receiver turns `true` once every kind's current
/// objects are in.
pub fn start(
    registry: Arc<Registry>,
    shutdown: watch::Receiver<bool>,
) -> (Arc<LivePolicy>, watch::Receiver<bool>, JoinHandle<()>) {
    let watched = Watched {
        group: GROUP,
        kinds: &KINDS,
        what: "the RBAC policy",
    };
    informer::start::<Policy>(registry, watched, shutdown)
}

/// The policy being read, and whether a ClusterRole changed since aggregation last ran
/// (it waits for the full policy).
#[derive(Default)]
struct Policy {
    snapshot: PolicySnapshot,
    aggregation_due: bool,
}

impl Mirror for Policy {
    type Snapshot = PolicySnapshot;

    fn apply(&mut self, kind: &'static str, type_: WatchEventType, object: Value) {
        self.aggregation_due |= kind == "clusterroles";
        apply(&mut self.snapshot, kind, type_, object);
    }

    fn snapshot(&self) -> PolicySnapshot {
        self.snapshot.clone()
    }

    async fn published(&mut self, registry: &Registry, snapshot: &PolicySnapshot) {
        if std::mem::take(&mut self.aggregation_due) {
            aggregate(registry, snapshot).await;
        }
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
                &WriteOptions::by(crate::controllers::MANAGER),
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
