//! ServiceCIDRs as kube-controller-manager's `service-cidr-controller` keeps them: each
//! gets the finalizer `networking.k8s.io/service-cidr-finalizer` and the condition
//! `Ready` (True, "Kubernetes Service CIDR is ready"), which the cluster IP allocator
//! (`crate::allocation`) waits for. A ServiceCIDR being deleted keeps its finalizer
//! while an address the allocator handed out (an IPAddress labelled
//! `ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io`) lies in it and in no other
//! ServiceCIDR, with `Ready` False, reason `Terminating` and kube's message; once none
//! does, the finalizer goes 10 s after the deletion was first seen, kube's grace for an
//! allocation that read the ServiceCIDR just before it.
//!
//! Deliberate difference: kube counts the grace from `deletionTimestamp`; kapi from the
//! moment its leader first saw the deletion (at most a little later, never sooner).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use kapi_apiserver::registry::object::name;
use kapi_apiserver::registry::{ListOptions, Registry, Store, Subresource, WriteOptions};

use super::{condition, items, same_condition, with_condition};
use crate::allocation::service::MANAGED_BY;
use crate::hooks::ip::{is_host_of, parse_cidr_sloppy};

/// kube's field manager and event source for these writes.
const MANAGER: &str = "service-cidr-controller";
/// The finalizer that holds a ServiceCIDR while addresses depend on it.
pub const FINALIZER: &str = "networking.k8s.io/service-cidr-finalizer";
/// kube's `deletionGracePeriod`.
const GRACE: Duration = Duration::from_secs(10);
const GROUP: &str = "networking.k8s.io";

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let (Some(cidrs), Some(addresses)) = (
        registry.get(GROUP, "v1", "servicecidrs"),
        registry.get(GROUP, "v1", "ipaddresses"),
    ) else {
        return;
    };
    let stores = [cidrs.as_ref(), addresses.as_ref()];
    let mut controller = ServiceCidrs {
        cidrs: cidrs.clone(),
        addresses: addresses.clone(),
        deleting: BTreeMap::new(),
    };
    super::run_on_changes(&stores, "servicecidr", &mut shutdown, &mut controller).await;
}

struct ServiceCidrs {
    cidrs: Arc<Store>,
    addresses: Arc<Store>,
    /// When each ServiceCIDR's deletion was first seen, by uid.
    deleting: BTreeMap<String, Instant>,
}

#[async_trait::async_trait]
impl super::Reconciler for ServiceCidrs {
    async fn reconcile(&mut self) -> Option<Instant> {
        reconcile(&self.cidrs, &self.addresses, &mut self.deleting).await
    }
}

/// One pass over every ServiceCIDR; returns when to look again for a deletion still in
/// its grace period (or after a failed read).
async fn reconcile(
    cidrs: &Store,
    addresses: &Store,
    deleting: &mut BTreeMap<String, Instant>,
) -> Option<Instant> {
    let retry = Some(Instant::now() + Duration::from_secs(1));
    let Ok(all) = cidrs.list(None, &ListOptions::default()).await else {
        return retry;
    };
    let all = items(&all);
    let live: BTreeSet<&str> = all
        .iter()
        .filter_map(|c| c["metadata"]["uid"].as_str())
        .collect();
    deleting.retain(|uid, _| live.contains(uid.as_str()));
    let mut wake = None;
    let mut managed: Option<Vec<IpAddr>> = None;
    for cidr in all {
        let being_deleted = cidr["metadata"]
            .get("deletionTimestamp")
            .is_some_and(|t| !t.is_null());
        if !being_deleted {
            keep(cidrs, cidr).await;
            continue;
        }
        if !has_finalizer(cidr) {
            continue;
        }
        if managed.is_none() {
            let Ok(list) = addresses.list(None, &ListOptions::default()).await else {
                return retry;
            };
            managed = Some(managed_addresses(items(&list)));
        }
        if blocked(cidr, all, managed.as_deref().unwrap_or_default()) {
            let wanted = terminating();
            if !condition(cidr, "Ready").is_some_and(|c| same_condition(c, &wanted)) {
                write_status(cidrs, cidr, &wanted).await;
            }
            continue;
        }
        let uid = cidr["metadata"]["uid"].as_str().unwrap_or_default();
        let seen = *deleting.entry(uid.to_string()).or_insert_with(Instant::now);
        if seen.elapsed() < GRACE {
            let at = seen + GRACE;
            wake = Some(wake.map_or(at, |w: Instant| w.min(at)));
            continue;
        }
        release(cidrs, cidr).await;
    }
    wake
}

fn has_finalizer(cidr: &Value) -> bool {
    cidr["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
}

/// A live ServiceCIDR: its finalizer, then `Ready` True unless it already is.
async fn keep(cidrs: &Store, cidr: &Value) {
    let opts = WriteOptions::by(MANAGER);
    if !has_finalizer(cidr) {
        let written = cidrs
            .update_with(None, name(cidr), Subresource::Main, &opts, |stored| {
                let mut next = stored.clone();
                let list = &mut next["metadata"]["finalizers"];
                if !list.is_array() {
                    *list = json!([]);
                }
                if let Some(list) = list
                    .as_array_mut()
                    .filter(|l| !l.iter().any(|f| f == FINALIZER))
                {
                    list.push(json!(FINALIZER));
                }
                Ok(next)
            })
            .await;
        if let Err(e) = written {
            tracing::debug!(cidr = name(cidr), error = %e, "adding the ServiceCIDR finalizer");
        }
    }
    if !condition(cidr, "Ready").is_some_and(|c| c["status"] == "True") {
        write_status(cidrs, cidr, &ready()).await;
    }
}

/// The finalizer removed: nothing depends on the ServiceCIDR any more.
async fn release(cidrs: &Store, cidr: &Value) {
    let opts = WriteOptions::by(MANAGER);
    let written = cidrs
        .update_with(None, name(cidr), Subresource::Main, &opts, |stored| {
            let mut next = stored.clone();
            if let Some(list) = next["metadata"]["finalizers"].as_array_mut() {
                list.retain(|f| f != FINALIZER);
            }
            Ok(next)
        })
        .await;
    if let Err(e) = written {
        tracing::debug!(cidr = name(cidr), error = %e, "removing the ServiceCIDR finalizer");
    }
}

async fn write_status(cidrs: &Store, cidr: &Value, wanted: &Value) {
    let opts = WriteOptions::by(MANAGER);
    let written = cidrs
        .update_with(None, name(cidr), Subresource::Status, &opts, |stored| {
            Ok(with_condition(stored, wanted))
        })
        .await;
    if let Err(e) = written {
        tracing::debug!(cidr = name(cidr), error = %e, "writing a ServiceCIDR condition");
    }
}

fn ready() -> Value {
    json!({"type": "Ready", "status": "True", "reason": "",
        "message": "Kubernetes Service CIDR is ready"})
}

fn terminating() -> Value {
    json!({"type": "Ready", "status": "False", "reason": "Terminating",
        "message": "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"})
}

/// The addresses of the IPAddresses the allocator made.
fn managed_addresses(list: &[Value]) -> Vec<IpAddr> {
    list.iter()
        .filter(|ip| ip["metadata"]["labels"][MANAGED_BY.0] == MANAGED_BY.1)
        .filter_map(|ip| name(ip).parse().ok())
        .collect()
}

/// A ServiceCIDR's networks, parsed.
fn networks(cidr: &Value) -> Vec<(IpAddr, u8)> {
    cidr["spec"]["cidrs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(parse_cidr_sloppy)
        .collect()
}

/// kube's `canDeleteCIDR`, negated: `cidr` may not go while one of its networks has no
/// other ServiceCIDR holding all of it and an allocated address is a host of that
/// network alone, held by no other ServiceCIDR.
fn blocked(cidr: &Value, all: &[Value], managed: &[IpAddr]) -> bool {
    let own = name(cidr);
    // Every network of every ServiceCIDR, with the names holding it.
    let mut held: BTreeMap<(IpAddr, u8), BTreeSet<&str>> = BTreeMap::new();
    for other in all {
        for net in networks(other) {
            held.entry(net).or_default().insert(name(other));
        }
    }
    let contains = |outer: (IpAddr, u8), inner: (IpAddr, u8)| {
        outer.1 <= inner.1
            && outer.0.is_ipv4() == inner.0.is_ipv4()
            && crate::hooks::ip::network(inner.0, u32::from(outer.1))
                == crate::hooks::ip::network(outer.0, u32::from(outer.1))
    };
    let orphaned = networks(cidr).into_iter().any(|net| {
        held.iter()
            .filter(|(outer, _)| contains(**outer, net))
            .flat_map(|(_, names)| names.iter())
            .all(|n| *n == own)
    });
    if !orphaned {
        return false;
    }
    managed.iter().any(|ip| {
        let mut holding = held.iter().filter(|(net, _)| is_host_of(*ip, **net));
        match (holding.next(), holding.next()) {
            (Some((_, names)), None) => names.len() == 1 && names.contains(own),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(name: &str, cidrs: &[&str]) -> Value {
        json!({"metadata": {"name": name}, "spec": {"cidrs": cidrs}})
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    /// kube's `TestController_canDeleteCIDR` cases, in kapi's terms.
    #[test]
    fn a_service_cidr_is_held_while_an_address_depends_on_it_alone() {
        let a = cidr("a", &["10.0.0.0/24"]);
        assert!(blocked(&a, std::slice::from_ref(&a), &ips(&["10.0.0.5"])));
        assert!(!blocked(&a, std::slice::from_ref(&a), &ips(&["10.0.1.5"])));
        // The network and broadcast addresses are no hosts.
        assert!(!blocked(
            &a,
            std::slice::from_ref(&a),
            &ips(&["10.0.0.0", "10.0.0.255"])
        ));
        // Another ServiceCIDR holding the same network, or a wider one, takes over.
        let same = cidr("same", &["10.0.0.0/24"]);
        assert!(!blocked(&a, &[a.clone(), same], &ips(&["10.0.0.5"])));
        let wider = cidr("wider", &["10.0.0.0/16"]);
        assert!(!blocked(&a, &[a.clone(), wider], &ips(&["10.0.0.5"])));
        // A narrower one inside it holds only its own addresses.
        let narrower = cidr("narrower", &["10.0.0.0/28"]);
        let all = [a.clone(), narrower];
        assert!(!blocked(&a, &all, &ips(&["10.0.0.5"])));
        assert!(blocked(&a, &all, &ips(&["10.0.0.100"])));
        // Dual-stack: each family on its own.
        let dual = cidr("dual", &["10.0.0.0/24", "fd00::/120"]);
        let v4 = cidr("v4", &["10.0.0.0/24"]);
        let all = [dual.clone(), v4];
        assert!(!blocked(&dual, &all, &ips(&["10.0.0.5"])));
        assert!(blocked(&dual, &all, &ips(&["fd00::5"])));
    }

    #[test]
    fn only_the_allocators_addresses_count() {
        let list = [
            json!({"metadata": {"name": "10.0.0.1", "labels": {MANAGED_BY.0: MANAGED_BY.1}}}),
            json!({"metadata": {"name": "10.0.0.2", "labels": {MANAGED_BY.0: "someone"}}}),
            json!({"metadata": {"name": "10.0.0.3"}}),
        ];
        assert_eq!(managed_addresses(&list), ips(&["10.0.0.1"]));
    }
}
