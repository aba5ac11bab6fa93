//! EndpointSlices, as kube-apiserver's strategy (`pkg/registry/discovery/endpointslice/
//! strategy.go`), v1 defaults (`pkg/apis/discovery/v1/defaults.go`), validation
//! (`ValidateEndpointSliceCreate`, `ValidateEndpointSliceUpdate` in
//! `pkg/apis/discovery/validation`) and printer (`printEndpointSlice` in
//! `pkg/printers/internalversion`) treat them.
//!
//! `metadata.generation` is 1 on create and bumped when anything but metadata changes,
//! or the labels do. A port's `name` defaults to `""` and its `protocol` to `TCP`.
//! `deprecatedTopology` is not writable through v1: it is dropped on create, and on an
//! update that changes the endpoints (its `kubernetes.io/hostname` moving to `nodeName`
//! when the stored slice had that node), as kube's `dropTopologyOnV1` does for v1.
//!
//! Checks: `addressType` is `IPv4`, `IPv6` or `FQDN` and immutable; at most 1000
//! endpoints, each with 1 to 100 addresses valid for the type (an IPv4 or IPv6 address
//! that is not unspecified, loopback or link-local, or a fully qualified domain name),
//! a `nodeName` that is a DNS-1123 subdomain, a `hostname` that is a DNS-1123 label, and
//! hints of at most 8 unique zones (label values) and 8 unique nodes; at most 20000
//! ports (kube's `maxPorts`), with unique names that are DNS-1123 labels, a protocol of
//! `TCP`, `UDP` or `SCTP` and an `appProtocol` that is a qualified name. kube checks no
//! port numbers and no labels beyond the generic ones (`kubernetes.io/service-name`
//! included).
//!
//! Columns, as kube's `printEndpointSlice`: AddressType, Ports (the first three port
//! numbers, or names, then ` + N more...`; `<unset>` without ports) and Endpoints (the
//! first three addresses in the same way).
//!
//! Deliberate differences from kube-apiserver: the warnings kube returns (FQDN slices
//! are deprecated, IPs not in canonical form) are not returned; `deprecatedTopology` is
//! not validated, as v1 writes never keep it.

use std::collections::BTreeSet;
use std::net::IpAddr;

use kapi_core::meta::{
    dns1123_label_errors, dns1123_subdomain_errors, label_value_errors, qualified_name_errors,
};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::discovery::v1::{Endpoint, EndpointHints, EndpointPort};
use crate::generated::discovery_k8s_io::v1::EndpointSlice;
use crate::hooks::ip::{ip_warning, parse_sloppy};
use crate::hooks::strings;

/// The hooks of EndpointSlice.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointSliceHooks;

/// The address types kube accepts, sorted as its `sets.String.List()` gives them.
const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
/// The port protocols kube accepts, sorted.
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
/// A port's protocol when none is given.
const DEFAULT_PROTOCOL: &str = "TCP";
const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20000;
const MAX_ZONE_HINTS: usize = 8;
const MAX_NODE_HINTS: usize = 8;
/// How many ports or addresses kube's printer lists before ` + N more...`.
const MAX_LISTED: usize = 3;
/// The label v1beta1 kept an endpoint's node name under.
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// `ip` as Go sees it: an IPv4-mapped IPv6 address is IPv4.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// kube's `ValidateEndpointIP`: addresses no endpoint may have.
fn endpoint_ip_errors(value: &str) -> Vec<String> {
    let Some(ip) = parse_sloppy(value).map(unmapped) else {
        return vec!["must be a valid IP address".into()];
    };
    let (link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (
                o[0] == 169 && o[1] == 254,
                o[0] == 224 && o[1] == 0 && o[2] == 0,
            )
        }
        IpAddr::V6(v6) => {
            let o = v6.octets();
            (
                o[0] == 0xfe && o[1] & 0xc0 == 0x80,
                o[0] == 0xff && o[1] & 0x0f == 0x02,
            )
        }
    };
    let mut errs = Vec::new();
    if ip.is_unspecified() {
        errs.push(format!("may not be unspecified ({value})"));
    }
    if ip.is_loopback() {
        errs.push("may not be in the loopback range (127.0.0.0/8, ::1/128)".into());
    }
    if link_local {
        errs.push("may not be in the link-local range (169.254.0.0/16, fe80::/10)".into());
    }
    if link_local_multicast {
        errs.push("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)".into());
    }
    errs
}

/// apimachinery's `IsFullyQualifiedDomainName`, for a non-empty `name`.
fn fqdn_error(path: &FieldPath, name: &str) -> Option<FieldError> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let errs = dns1123_subdomain_errors(name);
    if !errs.is_empty() {
        return Some(FieldError::invalid(path, name, errs.join(",")));
    }
    if !name.contains('.') {
        return Some(FieldError::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    name.split('.').find_map(|label| {
        let errs = dns1123_label_errors(label);
        (!errs.is_empty()).then(|| FieldError::invalid(path, label, errs.join(",")))
    })
}

/// The problems with one address of a slice of `address_type`; unknown types are not
/// checked, as in kube.
fn address_errors(errs: &mut ErrorList, path: &FieldPath, address_type: &str, address: &str) {
    let family = match address_type {
        "IPv4" => Some(true),
        "IPv6" => Some(false),
        "FQDN" => {
            if address.is_empty() {
                errs.push(FieldError::required(path, ""));
            } else if let Some(e) = fqdn_error(path, address) {
                errs.push(e);
            }
            None
        }
        _ => None,
    };
    let Some(v4) = family else { return };
    let parsed = parse_sloppy(address).map(unmapped);
    if parsed.is_none_or(|ip| ip.is_ipv4() != v4) {
        let which = if v4 { "IPv4" } else { "IPv6" };
        errs.push(FieldError::invalid(
            path,
            address,
            format!("must be a valid {which} address"),
        ));
    }
    for msg in endpoint_ip_errors(address) {
        errs.push(FieldError::invalid(path, address, msg));
    }
}

/// kube's `validateHints`.
fn hints_errors(hints: &EndpointHints, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let zones = hints.for_zones.as_deref().unwrap_or(&[]);
    let zones_path = path.child("forZones");
    if zones.len() > MAX_ZONE_HINTS {
        errs.push(FieldError::too_many(
            &zones_path,
            zones.len() as u64,
            MAX_ZONE_HINTS as u64,
        ));
        return errs;
    }
    let mut seen = BTreeSet::new();
    for (i, zone) in zones.iter().enumerate() {
        let p = zones_path.index(i).child("name");
        if !seen.insert(zone.name.as_str()) {
            errs.push(FieldError::duplicate(&p, zone.name.as_str()));
        }
        for msg in label_value_errors(&zone.name) {
            errs.push(FieldError::invalid(&p, zone.name.as_str(), msg));
        }
    }
    let nodes = hints.for_nodes.as_deref().unwrap_or(&[]);
    let nodes_path = path.child("forNodes");
    if nodes.len() > MAX_NODE_HINTS {
        errs.push(FieldError::too_many(
            &nodes_path,
            nodes.len() as u64,
            MAX_NODE_HINTS as u64,
        ));
        return errs;
    }
    let mut seen = BTreeSet::new();
    for (i, node) in nodes.iter().enumerate() {
        let p = nodes_path.index(i).child("name");
        if !seen.insert(node.name.as_str()) {
            errs.push(FieldError::duplicate(&p, node.name.as_str()));
        }
        for msg in dns1123_subdomain_errors(&node.name) {
            errs.push(FieldError::invalid(&p, node.name.as_str(), msg));
        }
    }
    errs
}

/// The checks of one endpoint (`validateEndpoints`' loop body).
fn endpoint_errors(endpoint: &Endpoint, address_type: &str, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let addresses_path = path.child("addresses");
    let addresses = &endpoint.addresses;
    if addresses.is_empty() {
        errs.push(FieldError::required(
            &addresses_path,
            "must contain at least 1 address",
        ));
    } else if addresses.len() > MAX_ADDRESSES {
        errs.push(FieldError::too_many(
            &addresses_path,
            addresses.len() as u64,
            MAX_ADDRESSES as u64,
        ));
    }
    for (i, address) in addresses.iter().enumerate() {
        address_errors(&mut errs, &addresses_path.index(i), address_type, address);
    }
    if let Some(node) = &endpoint.node_name {
        for msg in dns1123_subdomain_errors(node) {
            errs.push(FieldError::invalid(
                &path.child("nodeName"),
                node.as_str(),
                msg,
            ));
        }
    }
    if let Some(hostname) = &endpoint.hostname {
        for msg in dns1123_label_errors(hostname) {
            errs.push(FieldError::invalid(
                &path.child("hostname"),
                hostname.as_str(),
                msg,
            ));
        }
    }
    if let Some(hints) = &endpoint.hints {
        errs.extend(hints_errors(hints, &path.child("hints")));
    }
    errs
}

/// kube's `validatePorts`.
fn ports_errors(ports: &[EndpointPort]) -> ErrorList {
    let path = FieldPath::new("ports");
    let mut errs = ErrorList::new();
    if ports.len() > MAX_PORTS {
        errs.push(FieldError::too_many(
            &path,
            ports.len() as u64,
            MAX_PORTS as u64,
        ));
        return errs;
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let p = path.index(i);
        let name = port.name.as_deref().unwrap_or("");
        // An unnamed port is fine; two of them are duplicates.
        if !name.is_empty() {
            for msg in dns1123_label_errors(name) {
                errs.push(FieldError::invalid(&p.child("name"), name, msg));
            }
        }
        if !names.insert(name) {
            errs.push(FieldError::duplicate(&p.child("name"), name));
        }
        match port.protocol.as_deref() {
            None => errs.push(FieldError::required(&p.child("protocol"), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(FieldError::not_supported(
                &p.child("protocol"),
                proto,
                &strings(PROTOCOLS),
            )),
            Some(_) => {}
        }
        if let Some(app) = &port.app_protocol {
            for msg in qualified_name_errors(app) {
                errs.push(FieldError::invalid(
                    &p.child("appProtocol"),
                    app.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

/// kube's `ValidateEndpointSlice`, after the generic metadata checks.
fn validate_slice(slice: &EndpointSlice) -> ErrorList {
    let mut errs = ErrorList::new();
    let address_type = slice.address_type.as_str();
    let type_path = FieldPath::new("addressType");
    if address_type.is_empty() {
        errs.push(FieldError::required(&type_path, ""));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errs.push(FieldError::not_supported(
            &type_path,
            address_type,
            &strings(ADDRESS_TYPES),
        ));
    }
    let path = FieldPath::new("endpoints");
    if slice.endpoints.len() > MAX_ENDPOINTS {
        errs.push(FieldError::too_many(
            &path,
            slice.endpoints.len() as u64,
            MAX_ENDPOINTS as u64,
        ));
    } else {
        for (i, endpoint) in slice.endpoints.iter().enumerate() {
            errs.extend(endpoint_errors(endpoint, address_type, &path.index(i)));
        }
    }
    errs.extend(ports_errors(slice.ports.as_deref().unwrap_or(&[])));
    errs
}

/// kube's `dropTopologyOnV1`, for a v1 write: `old` is the stored slice on update.
fn drop_topology(new: &mut EndpointSlice, old: Option<&EndpointSlice>) {
    if old.is_some_and(|o| o.endpoints == new.endpoints) {
        return;
    }
    // Only node names the stored slice had may move from the old label to nodeName.
    let previous: BTreeSet<&str> = old
        .into_iter()
        .flat_map(|o| &o.endpoints)
        .filter_map(|e| e.deprecated_topology.as_ref()?.get(HOSTNAME_LABEL))
        .map(String::as_str)
        .filter(|n| !n.is_empty())
        .collect();
    for endpoint in &mut new.endpoints {
        let Some(topology) = endpoint.deprecated_topology.take() else {
            continue;
        };
        if let Some(node) = topology.get(HOSTNAME_LABEL) {
            if endpoint.node_name.is_none()
                && previous.contains(node.as_str())
                && dns1123_subdomain_errors(node).is_empty()
            {
                endpoint.node_name = Some(node.clone());
            }
        }
    }
}

/// kube's `listWithMoreString` over the first [`MAX_LISTED`] of `items`.
fn list_with_more(items: impl Iterator<Item = String>) -> String {
    let mut count = 0;
    let mut listed = Vec::new();
    for item in items {
        if listed.len() < MAX_LISTED {
            listed.push(item);
        }
        count += 1;
    }
    let joined = listed.join(",");
    if count > MAX_LISTED {
        format!("{joined} + {} more...", count - MAX_LISTED)
    } else if joined.is_empty() {
        "<unset>".into()
    } else {
        joined
    }
}

/// kube's `formatDiscoveryPorts`: the number, else the name, else `*`.
fn ports_cell(ports: &[EndpointPort]) -> String {
    list_with_more(ports.iter().map(|p| match (p.port, &p.name) {
        (Some(n), _) => n.to_string(),
        (None, Some(name)) => name.clone(),
        (None, None) => "*".into(),
    }))
}

/// kube's `formatDiscoveryEndpoints`.
fn endpoints_cell(endpoints: &[Endpoint]) -> String {
    list_with_more(endpoints.iter().flat_map(|e| e.addresses.iter().cloned()))
}

/// Whether `new` differs from `old` as kube's generation rule sees it: anything but
/// metadata, or the labels (nil and empty alike, as `Semantic.DeepEqual` has them).
fn changed(new: &EndpointSlice, old: &EndpointSlice) -> bool {
    let ports = |s: &EndpointSlice| s.ports.clone().unwrap_or_default();
    let labels = |s: &EndpointSlice| s.metadata.labels.clone().unwrap_or_default();
    new.address_type != old.address_type
        || new.endpoints != old.endpoints
        || ports(new) != ports(old)
        || labels(new) != labels(old)
}

/// kube's `warnOnBadIPs`, which trusts the slices its own controllers write.
fn address_warnings(slice: &EndpointSlice) -> Vec<String> {
    let managed_by = slice
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("endpointslice.kubernetes.io/managed-by"));
    let trusted = [
        "endpointslice-controller.k8s.io",
        "endpointslicemirroring-controller.k8s.io",
    ];
    if managed_by.is_some_and(|m| trusted.contains(&m.as_str())) {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (i, endpoint) in slice.endpoints.iter().enumerate() {
        for (j, address) in endpoint.addresses.iter().enumerate() {
            let path = format!("endpoints[{i}].addresses[{j}]");
            warnings.extend(ip_warning(&path, address));
        }
    }
    warnings
}

impl Hooks<EndpointSlice> for EndpointSliceHooks {
    /// A slice with no endpoints, as Go clients send it (`endpoints: null`), is empty.
    fn normalize(&self, obj: &mut Value) {
        kapi_core::hooks::empty_list_if_null(obj, &["endpoints"]);
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// kube's `SetDefaults_EndpointPort`.
    fn apply_defaults(&self, slice: &mut EndpointSlice) {
        for port in slice.ports.iter_mut().flatten() {
            port.name.get_or_insert_with(String::new);
            port.protocol.get_or_insert_with(|| DEFAULT_PROTOCOL.into());
        }
    }

    fn prepare_for_create(&self, slice: &mut EndpointSlice) {
        drop_topology(slice, None);
    }

    fn prepare_for_update(&self, new: &mut EndpointSlice, old: &EndpointSlice) {
        // Compared before the topology is dropped, as kube's strategy does.
        let old_gen = old.metadata.generation.unwrap_or(1);
        new.metadata.generation = Some(if changed(new, old) {
            old_gen + 1
        } else {
            old_gen
        });
        drop_topology(new, Some(old));
    }

    fn validate(&self, slice: &EndpointSlice) -> ErrorList {
        validate_slice(slice)
    }

    /// kube's `WarningsOnCreate`: FQDN slices are deprecated, and addresses not in
    /// their standard form are named.
    fn warnings_on_create(&self, slice: &EndpointSlice) -> Vec<String> {
        let mut warnings = Vec::new();
        if slice.address_type == "FQDN" {
            warnings.push("spec.addressType: FQDN endpoints are deprecated".to_string());
        }
        warnings.extend(address_warnings(slice));
        warnings
    }

    /// kube's `WarningsOnUpdate`: the addresses only.
    fn warnings_on_update(&self, new: &EndpointSlice, _old: &EndpointSlice) -> Vec<String> {
        address_warnings(new)
    }

    fn validate_update(&self, new: &EndpointSlice, old: &EndpointSlice) -> ErrorList {
        let mut errs = validate_slice(new);
        if new.address_type != old.address_type {
            errs.push(FieldError::invalid(
                &FieldPath::new("addressType"),
                new.address_type.as_str(),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, slice: &EndpointSlice) -> Option<Value> {
        let cell = match column {
            "Ports" => ports_cell(slice.ports.as_deref().unwrap_or(&[])),
            "Endpoints" => endpoints_cell(&slice.endpoints),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_ips() {
        assert!(endpoint_ip_errors("10.1.2.3").is_empty());
        assert_eq!(
            endpoint_ip_errors("127.0.0.1"),
            vec!["may not be in the loopback range (127.0.0.0/8, ::1/128)"]
        );
        assert_eq!(
            endpoint_ip_errors("::"),
            vec!["may not be unspecified (::)"]
        );
        assert_eq!(endpoint_ip_errors("fe80::1").len(), 1);
        assert_eq!(endpoint_ip_errors("224.0.0.5").len(), 1);
        assert_eq!(endpoint_ip_errors("ff02::1").len(), 1);
    }

    #[test]
    fn fqdns() {
        let path = FieldPath::new("a");
        assert!(fqdn_error(&path, "example.com.").is_none());
        assert!(fqdn_error(&path, "example").is_some());
        assert!(fqdn_error(&path, "Example.com").is_some());
    }

    #[test]
    fn lists() {
        let items = |n: usize| (0..n).map(|i| i.to_string());
        assert_eq!(list_with_more(items(0)), "<unset>");
        assert_eq!(list_with_more(items(3)), "0,1,2");
        assert_eq!(list_with_more(items(5)), "0,1,2 + 2 more...");
    }
}
