//! Cluster IPs and IPAddresses kept in step, as kube-apiserver's `RepairIPAddress` loop
//! (`ipallocator-repair-controller`) keeps them after a crash, a restore or a hand edit:
//! - a Service's cluster IP without its IPAddress gets one again (Warning
//!   `ClusterIPNotAllocated`), as does one whose IPAddress names another parent that no
//!   longer exists or lacks the allocator's labels; two Services with one address get
//!   `ClusterIPAlreadyAllocated`, and an address in no ServiceCIDR `ClusterIPOutOfRange`
//!   (both are left for the user to recreate, as kube leaves them);
//! - an IPAddress the allocator made (`ipaddress.kubernetes.io/managed-by:
//!   ipallocator.k8s.io`) is deleted when its parent is no Service, when its Service
//!   does not hold the address (`IPAddressWrongReference`), or 60 s after it was first
//!   seen without its Service (`IPAddressNotAllocated`, "appears to have leaked"): a
//!   Service being created has its address before it is stored.
//!
//! The loop runs on the leader, over every Service and IPAddress after each burst of
//! changes (kube keeps informers and works per key).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use kapi_apiserver::registry::object::name;
use kapi_apiserver::registry::{DeleteOptions, ListOptions, Registry, Store, WriteOptions};

use super::events::{Recorder, Regarding};
use super::items;
use crate::allocation::service::{IP_FAMILY_LABEL, MANAGED_BY};
use crate::hooks::ip::{is_host_of, parse_cidr_sloppy, parse_sloppy};

const CONTROLLER: &str = "ipallocator-repair-controller";
/// How long an allocated address may lack its Service (kube's grace: a request's
/// longest time).
const LEAK_GRACE: Duration = Duration::from_secs(60);
const GROUP: &str = "networking.k8s.io";

/// The stores the loop reads and writes.
struct Stores {
    services: Arc<Store>,
    addresses: Arc<Store>,
    /// ServiceCIDRs, when served: without them no address is out of range.
    cidrs: Option<Arc<Store>>,
}

/// Runs until `shutdown` turns true.
pub async fn run(registry: Arc<Registry>, mut shutdown: watch::Receiver<bool>) {
    let (Some(services), Some(addresses)) = (
        registry.get("", "v1", "services"),
        registry.get(GROUP, "v1", "ipaddresses"),
    ) else {
        return;
    };
    let watched = [services.as_ref(), addresses.as_ref()];
    let mut repair = Repair {
        stores: Stores {
            services: services.clone(),
            addresses: addresses.clone(),
            cidrs: registry.get(GROUP, "v1", "servicecidrs"),
        },
        recorder: Recorder::new(&registry, CONTROLLER),
        orphans: BTreeMap::new(),
    };
    super::run_on_changes(&watched, "cluster IP repair", &mut shutdown, &mut repair).await;
}

struct Repair {
    stores: Stores,
    recorder: Recorder,
    /// When each orphaned IPAddress was first seen so, by uid.
    orphans: BTreeMap<String, Instant>,
}

#[async_trait::async_trait]
impl super::Reconciler for Repair {
    async fn reconcile(&mut self) -> Option<Instant> {
        repair(&self.stores, &mut self.recorder, &mut self.orphans).await
    }
}

/// One pass; returns when to look again at an orphan still in its grace period.
async fn repair(
    stores: &Stores,
    recorder: &mut Recorder,
    orphans: &mut BTreeMap<String, Instant>,
) -> Option<Instant> {
    let retry = Some(Instant::now() + Duration::from_secs(1));
    // Addresses first: a Service stored since is then seen with its address already
    // made, and one deleted since is an orphan for a while, never a missing address.
    let Ok(addresses) = stores.addresses.list(None, &ListOptions::default()).await else {
        return retry;
    };
    let Ok(services) = stores.services.list(None, &ListOptions::default()).await else {
        return retry;
    };
    let networks = match &stores.cidrs {
        Some(cidrs) => match cidrs.list(None, &ListOptions::default()).await {
            Ok(list) => Some(service_cidr_networks(items(&list))),
            Err(_) => return retry,
        },
        None => None,
    };
    let by_address: BTreeMap<&str, &Value> =
        items(&addresses).iter().map(|a| (name(a), a)).collect();
    let by_service: BTreeMap<(&str, &str), &Value> = items(&services)
        .iter()
        .map(|s| (namespace(s), name(s)))
        .zip(items(&services))
        .collect();
    for svc in items(&services) {
        for ip in cluster_ips(svc) {
            let in_range = networks
                .as_ref()
                .is_none_or(|nets| nets.iter().any(|net| is_host_of(ip, *net)));
            if !in_range {
                let note = format!(
                    "Cluster IP [{}]: {ip} is not within any configured Service CIDR; please recreate service",
                    family(ip)
                );
                recorder
                    .warn(
                        service(svc),
                        "ClusterIPOutOfRange",
                        "ClusterIPAllocation",
                        note,
                    )
                    .await;
                continue;
            }
            let held = by_address.get(ip.to_string().as_str()).copied();
            check_service_ip(stores, recorder, svc, ip, held, &by_service).await;
        }
    }
    let mut wake = None;
    let now = Instant::now();
    let live: BTreeSet<&str> = items(&addresses).iter().map(uid).collect();
    orphans.retain(|u, _| live.contains(u.as_str()));
    for address in items(&addresses) {
        if address["metadata"]["labels"][MANAGED_BY.0] != MANAGED_BY.1 {
            continue;
        }
        let parent = &address["spec"]["parentRef"];
        let parent_is_service = parent["group"].as_str().unwrap_or_default().is_empty()
            && parent["resource"] == "services";
        let owner = by_service
            .get(&(
                parent["namespace"].as_str().unwrap_or_default(),
                parent["name"].as_str().unwrap_or_default(),
            ))
            .copied();
        let (reason, note) = match owner {
            _ if !parent_is_service => (
                "IPAddressNotAllocated",
                format!(
                    "IPAddress {} appears to have been modified, not referencing a Service {parent}: cleaning up",
                    name(address)
                ),
            ),
            None => {
                let seen = *orphans.entry(uid(address).to_string()).or_insert(now);
                if seen.elapsed() < LEAK_GRACE {
                    let at = seen + LEAK_GRACE;
                    wake = Some(wake.map_or(at, |w: Instant| w.min(at)));
                    continue;
                }
                (
                    "IPAddressNotAllocated",
                    format!(
                        "IPAddress: {} for Service {}/{} appears to have leaked: cleaning up",
                        name(address),
                        parent["namespace"].as_str().unwrap_or_default(),
                        parent["name"].as_str().unwrap_or_default()
                    ),
                )
            }
            Some(svc) if holds(svc, name(address)) => continue,
            Some(svc) => (
                "IPAddressWrongReference",
                format!(
                    "IPAddress: {} for Service {}/{} has a wrong reference; cleaning up",
                    name(address),
                    namespace(svc),
                    name(svc)
                ),
            ),
        };
        let regarding = Regarding {
            api_version: "networking.k8s.io/v1",
            kind: "IPAddress",
            object: address,
        };
        recorder
            .warn(regarding, reason, "IPAddressAllocation", note)
            .await;
        delete(stores, address).await;
    }
    wake
}

/// kube's `syncService` for one cluster IP of `svc`, `held` being its IPAddress.
async fn check_service_ip(
    stores: &Stores,
    recorder: &mut Recorder,
    svc: &Value,
    ip: IpAddr,
    held: Option<&Value>,
    by_service: &BTreeMap<(&str, &str), &Value>,
) {
    let family = family(ip);
    let Some(address) = held else {
        if create(stores, svc, ip).await {
            let note = format!("Cluster IP [{family}]: {ip} is not allocated; repairing");
            not_allocated(recorder, svc, note).await;
        }
        return;
    };
    let parent = &address["spec"]["parentRef"];
    if !parent["group"].as_str().unwrap_or_default().is_empty() || parent["resource"] != "services"
    {
        return reparent(stores, recorder, address, svc, ip).await;
    }
    let parent_key = (
        parent["namespace"].as_str().unwrap_or_default(),
        parent["name"].as_str().unwrap_or_default(),
    );
    if parent_key != (namespace(svc), name(svc)) {
        match by_service.get(&parent_key) {
            None => return reparent(stores, recorder, address, svc, ip).await,
            Some(other) if holds(other, &ip.to_string()) => {
                let note = format!(
                    "Cluster IP [{family}]:{ip} was assigned to multiple services; please recreate service"
                );
                recorder
                    .warn(
                        service(svc),
                        "ClusterIPAlreadyAllocated",
                        "ClusterIPAllocation",
                        note,
                    )
                    .await;
            }
            Some(_) => {}
        }
    }
    let labels = &address["metadata"]["labels"];
    if labels[IP_FAMILY_LABEL] != family || labels[MANAGED_BY.0] != MANAGED_BY.1 {
        recreate(stores, address, svc, ip).await;
    }
}

/// kube's Warning that a Service's cluster IP is not (rightly) allocated.
async fn not_allocated(recorder: &mut Recorder, svc: &Value, note: String) {
    let (reason, action) = ("ClusterIPNotAllocated", "ClusterIPAllocation");
    recorder.warn(service(svc), reason, action, note).await;
}

fn service(svc: &Value) -> Regarding<'_> {
    Regarding {
        api_version: "v1",
        kind: "Service",
        object: svc,
    }
}

fn namespace(obj: &Value) -> &str {
    obj["metadata"]["namespace"].as_str().unwrap_or_default()
}

fn uid(obj: &Value) -> &str {
    obj["metadata"]["uid"].as_str().unwrap_or_default()
}

fn family(ip: IpAddr) -> &'static str {
    if ip.is_ipv4() { "IPv4" } else { "IPv6" }
}

/// A Service's cluster IPs (none for headless and ExternalName Services).
fn cluster_ips(svc: &Value) -> Vec<IpAddr> {
    svc["spec"]["clusterIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(parse_sloppy)
        .collect()
}

/// Whether `svc` has the cluster IP `address`.
fn holds(svc: &Value, address: &str) -> bool {
    svc["spec"]["clusterIPs"]
        .as_array()
        .is_some_and(|ips| ips.iter().any(|ip| ip == address))
}

/// Every network of every ServiceCIDR.
fn service_cidr_networks(cidrs: &[Value]) -> Vec<(IpAddr, u8)> {
    cidrs
        .iter()
        .flat_map(|c| c["spec"]["cidrs"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .filter_map(parse_cidr_sloppy)
        .collect()
}

/// The allocator's IPAddress for `ip`, parented by `svc`; whether it was made.
async fn create(stores: &Stores, svc: &Value, ip: IpAddr) -> bool {
    let address = json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IPAddress",
        "metadata": {
            "name": ip.to_string(),
            "labels": {IP_FAMILY_LABEL: family(ip), MANAGED_BY.0: MANAGED_BY.1},
        },
        "spec": {"parentRef": {
            "resource": "services",
            "namespace": namespace(svc),
            "name": name(svc),
        }},
    });
    let opts = WriteOptions::by(CONTROLLER);
    match stores.addresses.create(None, address, &opts).await {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(%ip, error = %e, "repairing a cluster IP");
            false
        }
    }
}

async fn delete(stores: &Stores, address: &Value) {
    let opts = DeleteOptions {
        precondition_uid: Some(uid(address).to_string()),
        ..DeleteOptions::default()
    };
    if let Err(e) = stores.addresses.delete(None, name(address), &opts).await {
        tracing::debug!(address = name(address), error = %e, "deleting an IPAddress");
    }
}

/// `address`, which names another parent than `svc`, made again for `svc`, with kube's
/// warning.
async fn reparent(
    stores: &Stores,
    recorder: &mut Recorder,
    address: &Value,
    svc: &Value,
    ip: IpAddr,
) {
    let note = format!(
        "the ClusterIP [{}]: {ip} for Service {}/{} has a wrong reference; repairing",
        family(ip),
        namespace(svc),
        name(svc)
    );
    not_allocated(recorder, svc, note).await;
    recreate(stores, address, svc, ip).await;
}

async fn recreate(stores: &Stores, address: &Value, svc: &Value, ip: IpAddr) {
    delete(stores, address).await;
    create(stores, svc, ip).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ips_skip_headless_services() {
        let svc = json!({"spec": {"clusterIPs": ["10.0.0.7"]}});
        assert_eq!(
            cluster_ips(&svc),
            vec!["10.0.0.7".parse::<IpAddr>().unwrap()]
        );
        assert!(holds(&svc, "10.0.0.7") && !holds(&svc, "10.0.0.8"));
        assert!(cluster_ips(&json!({"spec": {"clusterIPs": ["None"]}})).is_empty());
        assert!(cluster_ips(&json!({"spec": {"type": "ExternalName"}})).is_empty());
    }

    #[test]
    fn every_network_of_every_service_cidr() {
        let cidrs = [
            json!({"spec": {"cidrs": ["10.0.0.0/24", "fd00::/120"]}}),
            json!({"spec": {"cidrs": ["10.1.0.0/16"]}}),
        ];
        let nets = service_cidr_networks(&cidrs);
        assert_eq!(nets.len(), 3);
        assert!(
            nets.iter()
                .any(|n| is_host_of("10.1.2.3".parse().unwrap(), *n))
        );
    }
}
