//! IPAddresses, as kube-apiserver's strategy (`pkg/registry/networking/ipaddress/
//! strategy.go`), validation (`ValidateIPAddress`, `ValidateIPAddressUpdate` in
//! `pkg/apis/networking/validation`) and printer (`printIPAddress` in
//! `pkg/printers/internalversion`) treat them: no `metadata.generation`, no defaults.
//!
//! Checks: the name is an IP address in canonical form (kube's strict `IsValidIP`:
//! `10.0.0.1` or `2001:db8::1`, not `010.0.0.1`, `::ffff:10.0.0.1` or `2001:DB8::1`);
//! `spec.parentRef` is required, with a `resource` and a `name` that are path segments,
//! a `group` that is a DNS-1123 subdomain when given and a `namespace` that is a path
//! segment when given; on update the parent reference may not change.
//!
//! Column, as kube's `printIPAddress`: ParentRef, `<resource>[.<group>][/<namespace>]/
//! <name>` (`services/default/kubernetes`), `<none>` without one.
//!
//! The strict IP and CIDR rules of apimachinery's `util/validation/ip.go` live here for
//! the ServiceCIDR hooks too.
//!
//! Deliberate differences from kube-apiserver:
//! - The name is first checked as a path segment (kapi's generic name rules have no IP
//!   rule), so a name with `/` or `%` also gets that message.
//! - A `generateName` gets kapi's random suffix; kube's IPAddress strategy generates no
//!   names, so such a create fails on the name check there.
//! - The immutable `spec.parentRef` is shown as JSON in the message, where kube prints
//!   its Go struct.

use std::net::IpAddr;

use kapi_core::meta::{NameRule, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::networking::v1::ParentReference;
use crate::generated::networking_k8s_io::v1::IPAddress;
use crate::hooks::ip::{network, parse_cidr_sloppy, parse_sloppy};

/// The hooks of IPAddress.
#[derive(Clone, Copy, Debug, Default)]
pub struct IpAddressHooks;

/// apimachinery's message for a value that is no IP address at all.
const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// apimachinery's message for a value that is no CIDR at all.
const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// Whether `ip` is IPv4 as Go's `To4() != nil` says: IPv4, or IPv4-mapped IPv6.
pub(super) fn is_ipv4(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    }
}

/// Whether `ip` is an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`).
fn is_4in6(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// Go's `net.IP.String()` of a parsed address.
fn go_ip_string(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or_else(|| v6.to_string(), |v4| v4.to_string()),
        v4 => v4.to_string(),
    }
}

/// apimachinery's `IsValidIP`: the problems with `value` as an IP address written
/// strictly (no leading zeros, no IPv4-mapped IPv6) and in canonical form.
pub(super) fn strict_ip_errors(value: &str) -> Vec<String> {
    let Some(ip) = parse_sloppy(value) else {
        return vec![INVALID_IP.into()];
    };
    let mut errs = Vec::new();
    // Rust's parser is as strict as Go's netip: it refuses leading zeros.
    if value.parse::<IpAddr>().is_err() {
        errs.push("must not have leading 0s".into());
    }
    if is_4in6(ip) {
        errs.push("must not be an IPv4-mapped IPv6 address".into());
    }
    if errs.is_empty() && value != go_ip_string(ip) {
        errs.push(format!(
            "must be in canonical form (\"{}\")",
            go_ip_string(ip)
        ));
    }
    errs
}

/// apimachinery's `IsValidCIDR`: the problems with `value` as a CIDR written strictly
/// (no leading zeros, no IPv4-mapped IPv6, no bits beyond the prefix) and canonically.
pub(super) fn strict_cidr_errors(value: &str) -> Vec<String> {
    let Some((ip, len)) = parse_cidr_sloppy(value) else {
        return vec![INVALID_CIDR.into()];
    };
    let (addr, bits) = value.split_once('/').unwrap_or_default();
    let leading_zero = bits.len() > 1 && bits.starts_with('0');
    if leading_zero || addr.parse::<IpAddr>().is_err() {
        return vec!["must not have leading 0s in IP or prefix length".into()];
    }
    if is_4in6(ip) {
        return vec!["must not have an IPv4-mapped IPv6 address".into()];
    }
    if network(ip, u32::from(len)) != ip {
        return vec!["must not have bits set beyond the prefix length".into()];
    }
    let canonical = format!("{}/{len}", go_ip_string(ip));
    if value != canonical {
        return vec![format!("must be in canonical form (\"{canonical}\")")];
    }
    Vec::new()
}

/// Path-segment problems of a reference's part, as `IsValidPathSegmentName` words them.
fn path_segment(errs: &mut ErrorList, path: &FieldPath, value: &str) {
    for msg in NameRule::PathSegment.errors(value, false) {
        errs.push(FieldError::invalid(path, value, msg));
    }
}

/// kube's `validateIPAddressParentReference`.
fn parent_ref_errors(parent: Option<&ParentReference>) -> ErrorList {
    let path = FieldPath::new("spec").child("parentRef");
    let mut errs = ErrorList::new();
    let Some(parent) = parent else {
        errs.push(FieldError::required(&path, ""));
        return errs;
    };
    // The core group of Services is "", so a group cannot be required.
    if let Some(group) = parent.group.as_deref().filter(|g| !g.is_empty()) {
        for msg in dns1123_subdomain_errors(group) {
            errs.push(FieldError::invalid(&path.child("group"), group, msg));
        }
    }
    for (field, value) in [("resource", &parent.resource), ("name", &parent.name)] {
        if value.is_empty() {
            errs.push(FieldError::required(&path.child(field), ""));
        } else {
            path_segment(&mut errs, &path.child(field), value);
        }
    }
    if let Some(ns) = parent.namespace.as_deref().filter(|n| !n.is_empty()) {
        path_segment(&mut errs, &path.child("namespace"), ns);
    }
    errs
}

/// kube's `ValidateIPAddress`, after the generic metadata checks.
fn validate_ip_address(ip: &IPAddress) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = ip.metadata.name.as_deref().unwrap_or_default();
    if !name.is_empty() {
        for msg in strict_ip_errors(name) {
            errs.push(FieldError::invalid(
                &FieldPath::new("metadata.name"),
                name,
                msg,
            ));
        }
    }
    errs.extend(parent_ref_errors(ip.spec.as_ref().map(|s| &s.parent_ref)));
    errs
}

/// A parent reference with unset optional parts as "", as kube's internal type holds it.
fn normalized(parent: Option<&ParentReference>) -> Option<ParentReference> {
    parent.map(|p| ParentReference {
        group: Some(p.group.clone().unwrap_or_default()),
        namespace: Some(p.namespace.clone().unwrap_or_default()),
        ..p.clone()
    })
}

/// kube's `printIPAddress` ParentRef cell.
fn parent_ref_cell(parent: Option<&ParentReference>) -> String {
    let Some(parent) = parent else {
        return "<none>".into();
    };
    // schema.GroupResource's String(), lowercased.
    let mut cell = match parent.group.as_deref().filter(|g| !g.is_empty()) {
        Some(group) => format!("{}.{group}", parent.resource),
        None => parent.resource.clone(),
    }
    .to_lowercase();
    if let Some(ns) = parent.namespace.as_deref().filter(|n| !n.is_empty()) {
        cell = format!("{cell}/{ns}");
    }
    format!("{cell}/{}", parent.name)
}

impl Hooks<IPAddress> for IpAddressHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// An IPv6 address is no DNS subdomain; the IP rule is [`Hooks::validate`]'s.
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn validate(&self, ip: &IPAddress) -> ErrorList {
        validate_ip_address(ip)
    }

    fn validate_update(&self, new: &IPAddress, old: &IPAddress) -> ErrorList {
        let mut errs = validate_ip_address(new);
        let parent = |ip: &IPAddress| normalized(ip.spec.as_ref().map(|s| &s.parent_ref));
        if parent(new) != parent(old) {
            let value = new
                .spec
                .as_ref()
                .and_then(|s| serde_json::to_value(&s.parent_ref).ok())
                .unwrap_or(Value::Null);
            errs.push(FieldError::invalid(
                &FieldPath::new("spec").child("parentRef"),
                value,
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, ip: &IPAddress) -> Option<Value> {
        (column == "ParentRef")
            .then(|| Value::String(parent_ref_cell(ip.spec.as_ref().map(|s| &s.parent_ref))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_ips() {
        assert!(strict_ip_errors("10.0.0.1").is_empty());
        assert!(strict_ip_errors("2001:db8::1").is_empty());
        assert_eq!(strict_ip_errors("foo"), vec![INVALID_IP]);
        assert_eq!(
            strict_ip_errors("010.0.0.1"),
            vec!["must not have leading 0s"]
        );
        assert_eq!(
            strict_ip_errors("::ffff:10.0.0.1"),
            vec!["must not be an IPv4-mapped IPv6 address"]
        );
        assert_eq!(
            strict_ip_errors("2001:DB8:0::1"),
            vec!["must be in canonical form (\"2001:db8::1\")"]
        );
    }

    #[test]
    fn strict_cidrs() {
        assert!(strict_cidr_errors("10.0.0.0/24").is_empty());
        assert!(strict_cidr_errors("2001:db8::/64").is_empty());
        assert_eq!(strict_cidr_errors("10.0.0.0"), vec![INVALID_CIDR]);
        assert_eq!(strict_cidr_errors("10.0.0.0/33"), vec![INVALID_CIDR]);
        assert_eq!(
            strict_cidr_errors("10.0.0.0/08"),
            vec!["must not have leading 0s in IP or prefix length"]
        );
        assert_eq!(
            strict_cidr_errors("10.0.0.1/24"),
            vec!["must not have bits set beyond the prefix length"]
        );
        assert_eq!(
            strict_cidr_errors("2001:DB8::/64"),
            vec!["must be in canonical form (\"2001:db8::/64\")"]
        );
    }

    #[test]
    fn parent_cells() {
        let parent = ParentReference {
            group: Some(String::new()),
            resource: "services".into(),
            namespace: Some("default".into()),
            name: "kubernetes".into(),
        };
        assert_eq!(
            parent_ref_cell(Some(&parent)),
            "services/default/kubernetes"
        );
        let gateway = ParentReference {
            group: Some("gateway.networking.k8s.io".into()),
            resource: "gateways".into(),
            namespace: None,
            name: "edge".into(),
        };
        assert_eq!(
            parent_ref_cell(Some(&gateway)),
            "gateways.gateway.networking.k8s.io/edge"
        );
        assert_eq!(parent_ref_cell(None), "<none>");
    }
}
