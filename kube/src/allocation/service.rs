//! Service cluster IPs (`--service-cluster-ip-range`, kube-apiserver's default
//! 10.0.0.0/24) and node ports (`--service-node-port-range`, 30000-32767).
//!
//! A new Service gets a free cluster IP unless it asks for one (which must be free and in
//! range) or is headless (`None`) or an `ExternalName`; a `NodePort` or `LoadBalancer`
//! Service gets a free node port for every port that does not name one. The values are
//! chosen at a random place in the range and probed upwards, as kube-apiserver's
//! allocators do, above the range's first few values, which are kept for Services
//! that name theirs (kube's static subranges) and used only when the rest are taken.
//!
//! A cluster IP is held by an `IPAddress` object (networking.k8s.io/v1) named after it,
//! whose `parentRef` is the Service, as kube ≥ 1.33's allocator records it: creating it
//! is the reservation (a create fails when the address is taken, also by another
//! replica over the same etcd), deleting it the release. Node ports are held by keys
//! under `{prefix}/ranges/servicenodeports/`. Addresses that an older kapi held by keys
//! under `{prefix}/ranges/serviceips/` stay taken until their Service is deleted.
//!
//! Addresses come from every ServiceCIDR (networking.k8s.io/v1) that is Ready and not
//! being deleted, as kube ≥ 1.33's allocator takes them (its IPv4 CIDRs, the outermost
//! of nested ones, in name order); `--service-cluster-ip-range` is the default
//! ServiceCIDR `kubernetes`, and is used directly only where no ServiceCIDR exists (a
//! server that does not serve them). The ServiceCIDRs are read from the storage at each
//! allocation, so every replica sees a new one at once.
//!
//! Deliberate differences: IPv4 only (no dual stack); no `healthCheckNodePort`; a
//! change of type on update does not allocate (kube's `BeginUpdate` does); a dry-run
//! create allocates nothing.

use std::net::{IpAddr, Ipv4Addr};
use std::ops::RangeInclusive;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use kapi_core::{FieldError, FieldPath};
use kapi_storage::{ListRequest, ReadAt, Storage, StorageError};
use serde_json::{Value, json};

use kapi_apiserver::registry::{Lifecycle, LifecycleError, keys, object};

use crate::hooks::ip::parse_cidr_sloppy;

/// The ranges Services are allocated from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRanges {
    /// The cluster IP network address.
    pub network: Ipv4Addr,
    /// Its prefix length.
    pub prefix_len: u8,
    /// Node ports.
    pub node_ports: RangeInclusive<u16>,
}

impl Default for ServiceRanges {
    fn default() -> Self {
        Self {
            network: Ipv4Addr::new(10, 0, 0, 0),
            prefix_len: 24,
            node_ports: 30000..=32767,
        }
    }
}

impl ServiceRanges {
    /// Parses `10.0.0.0/24` (an IPv4 CIDR with at least 4 addresses).
    pub fn parse_cidr(s: &str) -> Result<(Ipv4Addr, u8), String> {
        let (ip, len) = s
            .split_once('/')
            .ok_or_else(|| format!("{s:?} is not a CIDR (like 10.0.0.0/24)"))?;
        let ip: Ipv4Addr = ip
            .parse()
            .map_err(|_| format!("{s:?}: {ip:?} is not an IPv4 address"))?;
        let len: u8 = len
            .parse()
            .ok()
            .filter(|l| *l <= 30)
            .ok_or_else(|| format!("{s:?}: the prefix length must be 0 to 30"))?;
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        Ok((Ipv4Addr::from(u32::from(ip) & mask), len))
    }

    /// Parses `30000-32767`.
    pub fn parse_port_range(s: &str) -> Result<RangeInclusive<u16>, String> {
        let (a, b) = s
            .split_once('-')
            .ok_or_else(|| format!("{s:?} is not a port range (like 30000-32767)"))?;
        let (a, b): (u16, u16) = match (a.trim().parse(), b.trim().parse()) {
            (Ok(a), Ok(b)) if a >= 1 && a <= b => (a, b),
            _ => return Err(format!("{s:?} is not a port range (like 30000-32767)")),
        };
        Ok(a..=b)
    }

    /// `--service-cluster-ip-range`.
    fn cluster_ips(&self) -> Network {
        Network {
            base: self.network,
            prefix_len: self.prefix_len,
        }
    }
}

/// An IPv4 network cluster IPs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Network {
    base: Ipv4Addr,
    prefix_len: u8,
}

impl Network {
    /// An IPv4 CIDR as a ServiceCIDR holds it (validated canonical); `None` for IPv6.
    fn parse(cidr: &str) -> Option<Self> {
        match parse_cidr_sloppy(cidr)? {
            (IpAddr::V4(base), prefix_len) => Some(Self { base, prefix_len }),
            (IpAddr::V6(_), _) => None,
        }
    }

    fn size(self) -> u64 {
        1u64 << (32 - u32::from(self.prefix_len))
    }

    /// The usable addresses' offsets: all but the network and broadcast addresses
    /// (none in a /31 or /32).
    fn host_offsets(self) -> Option<RangeInclusive<u32>> {
        let size = self.size();
        (size >= 4).then(|| 1..=(size - 2) as u32)
    }

    fn offset(self, ip: Ipv4Addr) -> u64 {
        u64::from(u32::from(ip).wrapping_sub(u32::from(self.base)))
    }

    /// Whether `ip` is in the network at all.
    fn contains(self, ip: Ipv4Addr) -> bool {
        self.offset(ip) < self.size()
    }

    /// Whether `ip` may be a cluster IP.
    fn has_host(self, ip: Ipv4Addr) -> bool {
        self.contains(ip)
            && self
                .host_offsets()
                .is_some_and(|hosts| hosts.contains(&(self.offset(ip) as u32)))
    }

    /// Whether all of `self` lies in `other`.
    fn within(self, other: Network) -> bool {
        other.prefix_len <= self.prefix_len && other.contains(self.base)
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.base, self.prefix_len)
    }
}

/// Whether a stored ServiceCIDR may be allocated from: Ready and not being deleted.
fn allocates(cidr: &Value) -> bool {
    let ready = cidr["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    ready
        && cidr["metadata"]
            .get("deletionTimestamp")
            .is_none_or(Value::is_null)
}

/// kube's `ErrMismatchedNetwork`: an address in no ServiceCIDR.
const MISMATCHED_NETWORK: &str = "the provided network does not match the current range";

/// The label kube's allocator puts on the IPAddresses it creates, and its value.
pub(crate) const MANAGED_BY: (&str, &str) =
    ("ipaddress.kubernetes.io/managed-by", "ipallocator.k8s.io");
/// The label naming an IPAddress's family.
pub(crate) const IP_FAMILY_LABEL: &str = "ipaddress.kubernetes.io/ip-family";

/// Reserves Service cluster IPs as IPAddress objects and node ports as keys of the
/// storage.
pub struct ServiceAllocator {
    storage: Arc<dyn Storage>,
    /// `{prefix}/ranges/`.
    keys: String,
    /// Where IPAddress objects are stored: `{prefix}/networking.k8s.io/ipaddresses/`.
    addresses: String,
    /// Where ServiceCIDRs are stored.
    service_cidrs: String,
    ranges: ServiceRanges,
}

impl ServiceAllocator {
    /// An allocator over `storage`, with IPAddresses where the API stores them under
    /// `prefix` and node port keys under `{prefix}/ranges/`.
    pub fn new(storage: Arc<dyn Storage>, prefix: &str, ranges: ServiceRanges) -> Self {
        Self {
            storage,
            keys: format!("{}/ranges/", prefix.trim_end_matches('/')),
            addresses: keys::group_resource_prefix(prefix, "networking.k8s.io", "ipaddresses"),
            service_cidrs: keys::group_resource_prefix(prefix, "networking.k8s.io", "servicecidrs"),
            ranges,
        }
    }

    fn ip_key(&self, ip: Ipv4Addr) -> String {
        format!("{}{ip}", self.addresses)
    }

    /// Where an older kapi held `ip`.
    fn legacy_ip_key(&self, ip: Ipv4Addr) -> String {
        format!("{}serviceips/{ip}", self.keys)
    }

    /// The IPAddress object that holds `ip` for the Service `owner`.
    fn ip_address(ip: Ipv4Addr, owner: &Value) -> Value {
        json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IPAddress",
            "metadata": {
                "name": ip.to_string(),
                "uid": uuid::Uuid::new_v4().to_string(),
                "creationTimestamp": object::now(),
                "labels": {IP_FAMILY_LABEL: "IPv4", MANAGED_BY.0: MANAGED_BY.1},
            },
            // The core group is left out, as Go's omitempty leaves it.
            "spec": {"parentRef": {
                "resource": "services",
                "namespace": owner["namespace"],
                "name": owner["name"],
            }},
        })
    }

    /// True when `ip` was free and is now `owner`'s.
    async fn reserve_ip(&self, ip: Ipv4Addr, owner: &Value) -> Result<bool, LifecycleError> {
        let legacy = self
            .storage
            .get(&self.legacy_ip_key(ip), ReadAt::Latest)
            .await
            .map_err(LifecycleError::Storage)?;
        if legacy.is_some() {
            return Ok(false);
        }
        let value = Bytes::from(Self::ip_address(ip, owner).to_string());
        match self.storage.create(&self.ip_key(ip), value).await {
            Ok(_) => Ok(true),
            Err(StorageError::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(LifecycleError::Storage(e)),
        }
    }

    fn port_key(&self, port: u16) -> String {
        format!("{}servicenodeports/{port}", self.keys)
    }

    /// True when `key` was free and is now `owner`'s.
    async fn reserve(&self, key: &str, owner: &Value) -> Result<bool, LifecycleError> {
        match self
            .storage
            .create(key, Bytes::from(owner.to_string()))
            .await
        {
            Ok(_) => Ok(true),
            Err(StorageError::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(LifecycleError::Storage(e)),
        }
    }

    /// Frees `key` if `owner` holds it: an IPAddress whose parent is the Service, or a
    /// key holding its uid.
    async fn release(&self, key: &str, owner: &Value) {
        let Ok(Some(kv)) = self.storage.get(key, ReadAt::Latest).await else {
            return;
        };
        let held: Value = serde_json::from_slice(&kv.value).unwrap_or(Value::Null);
        let parent = &held["spec"]["parentRef"];
        let holds = if parent.is_object() {
            parent["resource"] == "services"
                && parent["namespace"] == owner["namespace"]
                && parent["name"] == owner["name"]
        } else {
            held.get("uid") == owner.get("uid")
        };
        if holds {
            if let Err(e) = self.storage.delete(key, Some(kv.mod_revision)).await {
                tracing::warn!(key, error = %e, "releasing a service allocation");
            }
        }
    }

    /// A free value among the `count` values `nth` gives, reserved: first from the
    /// values above the first `reserved` (probed from a random place), then, when
    /// those are all taken, from the first `reserved`. That lower band is kept for
    /// values clients ask for (kube's static subranges, KEP-3070 and KEP-3668), so an
    /// address or port picked for another Service rarely takes one a manifest names.
    async fn allocate<T: Copy + Reservable>(
        &self,
        (count, reserved): (u64, u64),
        nth: impl Fn(u64) -> T,
        owner: &Value,
    ) -> Result<Option<T>, LifecycleError> {
        let reserved = reserved.min(count);
        for (first, len) in [(reserved, count - reserved), (0, reserved)] {
            if len == 0 {
                continue;
            }
            let start = (uuid::Uuid::new_v4().as_u128() % u128::from(len)) as u64;
            for i in 0..len {
                let value = nth(first + (start + i) % len);
                if value.reserve(self, owner).await? {
                    return Ok(Some(value));
                }
            }
        }
        Ok(None)
    }

    /// The networks cluster IPs come from now: the IPv4 CIDRs of every ServiceCIDR that
    /// [`allocates`], less those inside another, or `--service-cluster-ip-range` where
    /// no ServiceCIDR exists.
    async fn networks(&self) -> Result<Vec<Network>, LifecycleError> {
        let request = ListRequest {
            prefix: self.service_cidrs.clone(),
            ..ListRequest::default()
        };
        let listed = self
            .storage
            .list(&request)
            .await
            .map_err(LifecycleError::Storage)?;
        if listed.items.is_empty() {
            return Ok(vec![self.ranges.cluster_ips()]);
        }
        let mut networks: Vec<Network> = Vec::new();
        for kv in &listed.items {
            let cidr: Value = serde_json::from_slice(&kv.value).unwrap_or(Value::Null);
            if !allocates(&cidr) {
                continue;
            }
            let cidrs = cidr["spec"]["cidrs"].as_array().into_iter().flatten();
            for net in cidrs.filter_map(Value::as_str).filter_map(Network::parse) {
                if !networks.contains(&net) {
                    networks.push(net);
                }
            }
        }
        let all = networks.clone();
        networks.retain(|n| !all.iter().any(|o| o != n && n.within(*o)));
        Ok(networks)
    }

    async fn allocate_ip(
        &self,
        network: Network,
        owner: &Value,
    ) -> Result<Option<Ipv4Addr>, LifecycleError> {
        let Some(offsets) = network.host_offsets() else {
            return Ok(None);
        };
        let first = *offsets.start();
        let count = u64::from(offsets.end() - first + 1);
        let base = u32::from(network.base);
        self.allocate(
            (count, static_band(network.size(), 256, 16)),
            |n| Ipv4Addr::from(base + first + n as u32),
            owner,
        )
        .await
    }

    /// A free address from the first of `networks` that has one, reserved.
    async fn allocate_any_ip(
        &self,
        networks: &[Network],
        owner: &Value,
    ) -> Result<Option<Ipv4Addr>, LifecycleError> {
        for &network in networks {
            if let Some(ip) = self.allocate_ip(network, owner).await? {
                return Ok(Some(ip));
            }
        }
        Ok(None)
    }

    async fn allocate_port(&self, owner: &Value) -> Result<Option<u16>, LifecycleError> {
        let first = *self.ranges.node_ports.start();
        let count = u64::from(self.ranges.node_ports.end() - first) + 1;
        let bands = (count, static_band(count, 128, 32));
        self.allocate(bands, |n| first + n as u16, owner).await
    }

    /// Every key `obj` holds.
    fn held_keys(&self, obj: &Value) -> Vec<String> {
        let spec = &obj["spec"];
        let mut keys = Vec::new();
        let ips = spec["clusterIPs"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![spec["clusterIP"].clone()]);
        for ip in ips.iter().filter_map(Value::as_str) {
            if let Ok(ip) = ip.parse::<Ipv4Addr>() {
                keys.push(self.ip_key(ip));
                keys.push(self.legacy_ip_key(ip));
            }
        }
        for port in spec["ports"].as_array().into_iter().flatten() {
            if let Some(p) = port["nodePort"]
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
            {
                keys.push(self.port_key(p));
            }
        }
        keys
    }

    /// Refuses requested values no allocation could satisfy (an address or node port
    /// outside its range) before anything is reserved, so such a refusal writes
    /// nothing.
    fn check_requested(&self, obj: &Value, networks: &[Network]) -> Result<(), LifecycleError> {
        let spec = &obj["spec"];
        if spec["type"] == "ExternalName" {
            return Ok(());
        }
        let requested = spec["clusterIP"]
            .as_str()
            .or_else(|| spec["clusterIPs"][0].as_str())
            .unwrap_or("");
        if !matches!(requested, "" | "None") {
            let invalid = |why: String| {
                LifecycleError::Invalid(vec![FieldError::invalid(
                    &FieldPath::new("spec.clusterIPs").index(0),
                    json!([requested]),
                    format!("failed to allocate IP {requested}: {why}"),
                )])
            };
            let parsed: Ipv4Addr = requested
                .parse()
                .map_err(|_| invalid("not a valid IPv4 address".into()))?;
            // kube's allocator for the address: a network it is a host of, or else any
            // that holds it.
            let network = networks
                .iter()
                .find(|n| n.has_host(parsed))
                .or_else(|| networks.iter().find(|n| n.contains(parsed)))
                .ok_or_else(|| invalid(MISMATCHED_NETWORK.into()))?;
            if !network.has_host(parsed) {
                return Err(invalid(format!(
                    "the provided IP ({requested}) is not in the valid range. The range of valid IPs is {network}"
                )));
            }
        }
        for (i, port) in spec["ports"].as_array().into_iter().flatten().enumerate() {
            let Some(p) = port["nodePort"].as_u64() else {
                continue;
            };
            if !u16::try_from(p).is_ok_and(|p| self.ranges.node_ports.contains(&p)) {
                return Err(LifecycleError::Invalid(vec![FieldError::invalid(
                    &FieldPath::new("spec.ports").index(i).child("nodePort"),
                    p,
                    format!(
                        "provided port is not in the valid range. The range of valid ports is {}-{}",
                        self.ranges.node_ports.start(),
                        self.ranges.node_ports.end()
                    ),
                )]));
            }
        }
        Ok(())
    }

    async fn reserve_all(
        &self,
        obj: &mut Value,
        owner: &Value,
        reserved: &mut Vec<String>,
    ) -> Result<(), LifecycleError> {
        let networks = self.networks().await?;
        self.check_requested(obj, &networks)?;
        let ty = obj["spec"]["type"]
            .as_str()
            .unwrap_or("ClusterIP")
            .to_string();
        if ty == "ExternalName" {
            return Ok(());
        }
        let spec = &mut obj["spec"];
        // Single-stack IPv4: the family the allocator serves.
        if spec.get("ipFamilies").is_none_or(Value::is_null) {
            spec["ipFamilies"] = json!(["IPv4"]);
        }
        let requested = spec["clusterIP"]
            .as_str()
            .or_else(|| spec["clusterIPs"][0].as_str())
            .unwrap_or("")
            .to_string();
        let ip_path = FieldPath::new("spec.clusterIPs").index(0);
        match requested.as_str() {
            "None" => {
                spec["clusterIP"] = json!("None");
                spec["clusterIPs"] = json!(["None"]);
            }
            "" => {
                let ip = self
                    .allocate_any_ip(&networks, owner)
                    .await?
                    .ok_or_else(|| {
                        LifecycleError::Internal(
                            "failed to allocate a serviceIP: range is full".into(),
                        )
                    })?;
                reserved.push(self.ip_key(ip));
                spec["clusterIP"] = json!(ip.to_string());
                spec["clusterIPs"] = json!([ip.to_string()]);
            }
            ip => {
                let invalid = |why: String| {
                    LifecycleError::Invalid(vec![FieldError::invalid(
                        &ip_path,
                        json!([ip]),
                        format!("failed to allocate IP {ip}: {why}"),
                    )])
                };
                // check_requested refused anything but a host of a network.
                let parsed: Ipv4Addr = ip.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
                if !self.reserve_ip(parsed, owner).await? {
                    return Err(invalid("provided IP is already allocated".into()));
                }
                reserved.push(self.ip_key(parsed));
                spec["clusterIPs"] = json!([ip]);
            }
        }
        let wants_node_ports = ty == "NodePort"
            || (ty == "LoadBalancer" && spec["allocateLoadBalancerNodePorts"] != json!(false));
        if !wants_node_ports {
            return Ok(());
        }
        let count = spec["ports"].as_array().map_or(0, Vec::len);
        for i in 0..count {
            let path = FieldPath::new("spec.ports").index(i).child("nodePort");
            match obj["spec"]["ports"][i]["nodePort"].as_u64() {
                Some(p) => {
                    // check_requested refused ports out of the range.
                    let port = u16::try_from(p).unwrap_or_default();
                    if !self.reserve(&self.port_key(port), owner).await? {
                        return Err(LifecycleError::Invalid(vec![FieldError::invalid(
                            &path,
                            p,
                            "provided port is already allocated",
                        )]));
                    }
                    reserved.push(self.port_key(port));
                }
                None => {
                    let port = self.allocate_port(owner).await?.ok_or_else(|| {
                        LifecycleError::Internal(
                            "failed to allocate a nodePort: range is full".into(),
                        )
                    })?;
                    reserved.push(self.port_key(port));
                    obj["spec"]["ports"][i]["nodePort"] = json!(port);
                }
            }
        }
        Ok(())
    }
}

/// How many of a range's first values are kept for clients that name them:
/// `min(max(16, size / step), max)`, none in a range of 16 or fewer (kube's
/// `calculateRangeOffset`: for IPs `max` 256 and `step` 16, so 16 of a /24; for node
/// ports 128 and 32, so 86 of 30000-32767).
fn static_band(size: u64, max: u64, step: u64) -> u64 {
    const MIN: u64 = 16;
    if size <= MIN {
        return 0;
    }
    (size / step).clamp(MIN, max)
}

/// What [`ServiceAllocator::allocate`] hands out: addresses and ports, each reserved its
/// own way.
#[async_trait]
trait Reservable: Send + Sync {
    /// True when the value was free and is now `owner`'s.
    async fn reserve(
        self,
        allocator: &ServiceAllocator,
        owner: &Value,
    ) -> Result<bool, LifecycleError>;
}

#[async_trait]
impl Reservable for Ipv4Addr {
    async fn reserve(
        self,
        allocator: &ServiceAllocator,
        owner: &Value,
    ) -> Result<bool, LifecycleError> {
        allocator.reserve_ip(self, owner).await
    }
}

#[async_trait]
impl Reservable for u16 {
    async fn reserve(
        self,
        allocator: &ServiceAllocator,
        owner: &Value,
    ) -> Result<bool, LifecycleError> {
        allocator.reserve(&allocator.port_key(self), owner).await
    }
}

fn owner_of(obj: &Value) -> Value {
    json!({
        "namespace": obj["metadata"]["namespace"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    })
}

#[async_trait]
impl Lifecycle for ServiceAllocator {
    async fn begin_create(&self, obj: &mut Value) -> Result<(), LifecycleError> {
        let owner = owner_of(obj);
        let mut reserved = Vec::new();
        let result = self.reserve_all(obj, &owner, &mut reserved).await;
        if result.is_err() {
            for key in &reserved {
                self.release(key, &owner).await;
            }
        }
        result
    }

    async fn abort_create(&self, obj: &Value) {
        self.after_delete(obj).await;
    }

    async fn after_delete(&self, obj: &Value) {
        let owner = owner_of(obj);
        for key in self.held_keys(obj) {
            self.release(&key, &owner).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse() {
        assert_eq!(
            ServiceRanges::parse_cidr("10.96.3.4/12").unwrap(),
            (Ipv4Addr::new(10, 96, 0, 0), 12)
        );
        assert!(ServiceRanges::parse_cidr("10.0.0.0/31").is_err());
        assert!(ServiceRanges::parse_cidr("fd00::/64").is_err());
        assert_eq!(
            ServiceRanges::parse_port_range("30000-32767").unwrap(),
            30000..=32767
        );
        assert!(ServiceRanges::parse_port_range("5-1").is_err());
        let r = ServiceRanges::default().cluster_ips();
        assert!(r.has_host(Ipv4Addr::new(10, 0, 0, 1)));
        assert!(!r.has_host(Ipv4Addr::new(10, 0, 0, 0)));
        assert!(r.contains(Ipv4Addr::new(10, 0, 0, 0)));
        assert!(!r.has_host(Ipv4Addr::new(10, 0, 0, 255)));
        assert!(!r.contains(Ipv4Addr::new(10, 0, 1, 1)));
        let all = Network::parse("0.0.0.0/0").unwrap();
        assert!(all.has_host(Ipv4Addr::new(10, 0, 1, 1)));
        assert!(r.within(all) && !all.within(r));
        assert_eq!(Network::parse("10.0.0.7/32").unwrap().host_offsets(), None);
        assert_eq!(Network::parse("fd00::/64"), None);
    }

    #[test]
    fn static_bands_are_sized_as_kube_sizes_them() {
        assert_eq!(static_band(256, 256, 16), 16); // a /24
        assert_eq!(static_band(1 << 20, 256, 16), 256); // a /12
        assert_eq!(static_band(16, 256, 16), 0); // a /28
        assert_eq!(static_band(2768, 128, 32), 86); // 30000-32767
        assert_eq!(static_band(100, 128, 32), 16);
    }

    #[tokio::test]
    async fn picked_addresses_leave_the_static_band_for_last() {
        let dir = tempfile::tempdir().unwrap();
        let storage: Arc<dyn Storage> =
            Arc::new(kapi_storage::EmbeddedStorage::open(dir.path()).unwrap());
        let ranges = ServiceRanges {
            network: Ipv4Addr::new(10, 0, 0, 0),
            prefix_len: 27, // 30 usable addresses, the first 16 kept
            ..ServiceRanges::default()
        };
        let network = ranges.cluster_ips();
        let allocator = ServiceAllocator::new(storage, "/registry", ranges);
        let mut picked = Vec::new();
        for i in 0..30 {
            let owner = json!({"uid": format!("u{i}")});
            picked.push(
                allocator
                    .allocate_ip(network, &owner)
                    .await
                    .unwrap()
                    .unwrap()
                    .octets()[3],
            );
        }
        let (upper, lower) = picked.split_at(14);
        assert!(upper.iter().all(|&o| (17..=30).contains(&o)), "{upper:?}");
        assert!(lower.iter().all(|&o| (1..=16).contains(&o)), "{lower:?}");
        let owner = json!({"uid": "full"});
        assert_eq!(allocator.allocate_ip(network, &owner).await.unwrap(), None);
    }
}
