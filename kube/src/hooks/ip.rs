//! IP addresses as the built-ins' hooks read them: Go's sloppy parse, and kube's
//! `GetWarningsForIP` and `GetWarningsForCIDR`, where an address or CIDR kube still
//! accepts but a later release will not (IPv4 octets with leading zeros, IPv4-mapped
//! IPv6), one with bits set past its prefix, or IPv6 not written in the RFC 5952
//! canonical form, gets a warning saying what to write instead.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Go's `netutils.ParseIPSloppy`: IPv4 octets may have leading zeros (read as decimal).
pub(crate) fn parse_sloppy(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse().ok();
    }
    let mut octets = [0u8; 4];
    let mut parts = s.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    parts.next().is_none().then(|| IpAddr::from(octets))
}

/// The warning for the address `value` at `path`, if it needs one.
pub fn ip_warning(path: &str, value: &str) -> Option<String> {
    let sloppy = parse_sloppy(value)?;
    // Go prints an IPv4-mapped address as IPv4.
    let go_string = match sloppy {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or_else(|| v6.to_string(), |v4| v4.to_string()),
        IpAddr::V4(v4) => v4.to_string(),
    };
    match value.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) if v6.to_ipv4_mapped().is_none() => (v6.to_string() != value).then(|| {
            format!("{path}: IPv6 address {value:?} should be in RFC 5952 canonical format ({v6:?})", v6 = v6.to_string())
        }),
        Ok(IpAddr::V4(_)) => None,
        _ => Some(format!(
            "{path}: non-standard IP address {value:?} will be considered invalid in a future Kubernetes release: use {go_string:?}"
        )),
    }
}

/// A CIDR as Go's `netutils.ParseCIDRSloppy` reads it: the address (not masked) and
/// the prefix length.
pub(crate) fn parse_cidr_sloppy(s: &str) -> Option<(IpAddr, u8)> {
    let (addr, bits) = s.split_once('/')?;
    let ip = parse_sloppy(addr)?;
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Go's parser sizes the mask by how the address was written, not by its family.
    let max = if addr.contains(':') { 128 } else { 32 };
    let len = bits.parse::<u8>().ok().filter(|n| *n <= max)?;
    Some((ip, len))
}

/// Whether `ip` is a host of the network `net/len` (kube's `GetHostIPPrefixMatches`):
/// inside it, and neither its network address nor, for IPv4, its broadcast address.
pub(crate) fn is_host_of(ip: IpAddr, (net, len): (IpAddr, u8)) -> bool {
    let base = network(net, u32::from(len));
    if ip.is_ipv4() != base.is_ipv4() || network(ip, u32::from(len)) != base || ip == base {
        return false;
    }
    match ip {
        IpAddr::V4(v4) => {
            let host_bits = u32::MAX.checked_shr(u32::from(len)).unwrap_or(0);
            u32::from(v4) & host_bits != host_bits
        }
        IpAddr::V6(_) => true,
    }
}

/// The network of `ip` under a `prefix`-bit mask.
pub(crate) fn network(ip: IpAddr, prefix: u32) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

/// Go's `IPNet.String()` of the network `ip/prefix`: IPv4-mapped networks as IPv4.
fn go_net_string(ip: IpAddr, prefix: u32) -> String {
    match network(ip, prefix) {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) if prefix >= 96 => format!("{v4}/{}", prefix - 96),
            _ => format!("{v6}/{prefix}"),
        },
        v4 => format!("{v4}/{prefix}"),
    }
}

/// The warnings for the CIDR `value` at `path` (kube's `GetWarningsForCIDR`).
pub fn cidr_warnings(path: &str, value: &str) -> Vec<String> {
    let Some((ip_str, prefix_str)) = value.split_once('/') else {
        return Vec::new();
    };
    let Some(ip) = parse_sloppy(ip_str) else {
        return Vec::new();
    };
    let bits = if ip.is_ipv4() { 32 } else { 128 };
    let Some(prefix) = prefix_str
        .parse::<u32>()
        .ok()
        .filter(|p| *p <= bits && prefix_str.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Vec::new();
    };
    let ipnet = go_net_string(ip, prefix);
    let mut warnings = Vec::new();
    if network(ip, prefix) != ip {
        let go_ip = match ip {
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or(v6.to_string(), |v4| v4.to_string()),
            v4 => v4.to_string(),
        };
        warnings.push(format!(
            "{path}: CIDR value {value:?} is ambiguous in this context (should be {ipnet:?} or {single:?}?)",
            single = format!("{go_ip}/{bits}")
        ));
    }
    let mapped = matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some());
    if ip_str.parse::<IpAddr>().is_err() || mapped || prefix_str != prefix.to_string() {
        warnings.push(format!(
            "{path}: non-standard CIDR value {value:?} will be considered invalid in a future Kubernetes release: use {ipnet:?}"
        ));
    }
    if let IpAddr::V6(v6) = ip {
        let canonical = format!("{v6}/{prefix}");
        if warnings.is_empty() && canonical != value {
            warnings.push(format!(
                "{path}: IPv6 CIDR value {value:?} should be in RFC 5952 canonical format ({canonical:?})"
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::{cidr_warnings, ip_warning, is_host_of, parse_cidr_sloppy};

    #[test]
    fn hosts_exclude_the_network_and_broadcast_addresses() {
        let net = parse_cidr_sloppy("10.0.0.0/24").unwrap();
        let host = |s: &str| is_host_of(s.parse().unwrap(), net);
        assert!(host("10.0.0.1") && host("10.0.0.254"));
        assert!(!host("10.0.0.0") && !host("10.0.0.255") && !host("10.0.1.1"));
        assert!(!host("fd00::1"));
        let v6 = parse_cidr_sloppy("fd00::/120").unwrap();
        assert!(is_host_of("fd00::ff".parse().unwrap(), v6));
        assert!(!is_host_of("fd00::".parse().unwrap(), v6));
        let all = parse_cidr_sloppy("0.0.0.0/0").unwrap();
        assert!(is_host_of("8.8.8.8".parse().unwrap(), all));
    }

    /// kube's `TestGetWarningsForCIDR`, less the cases Go's parser alone accepts.
    #[test]
    fn cidr_warnings_as_kube_gives_them() {
        let at = "spec.loadBalancerSourceRanges[0]";
        assert!(cidr_warnings(at, "192.12.2.0/24").is_empty());
        assert!(cidr_warnings(at, "2001:db8::/64").is_empty());
        assert_eq!(
            cidr_warnings(at, "192.12.2.0/024"),
            [
                r#"spec.loadBalancerSourceRanges[0]: non-standard CIDR value "192.12.2.0/024" will be considered invalid in a future Kubernetes release: use "192.12.2.0/24""#
            ]
        );
        assert_eq!(
            cidr_warnings(at, "::ffff:192.12.2.0/120"),
            [
                r#"spec.loadBalancerSourceRanges[0]: non-standard CIDR value "::ffff:192.12.2.0/120" will be considered invalid in a future Kubernetes release: use "192.12.2.0/24""#
            ]
        );
        assert_eq!(
            cidr_warnings(at, "192.12.2.8/24"),
            [
                r#"spec.loadBalancerSourceRanges[0]: CIDR value "192.12.2.8/24" is ambiguous in this context (should be "192.12.2.0/24" or "192.12.2.8/32"?)"#
            ]
        );
        assert_eq!(
            cidr_warnings(at, "2001:db8:0:0::/64"),
            [
                r#"spec.loadBalancerSourceRanges[0]: IPv6 CIDR value "2001:db8:0:0::/64" should be in RFC 5952 canonical format ("2001:db8::/64")"#
            ]
        );
    }

    /// kube's `TestGetWarningsForIP`.
    #[test]
    fn warns_as_kube_does() {
        let at = "spec.clusterIPs[0]";
        assert_eq!(ip_warning(at, "192.12.2.2"), None);
        assert_eq!(ip_warning(at, "2001:db8::2"), None);
        assert_eq!(
            ip_warning(at, "192.012.2.2").as_deref(),
            Some(
                r#"spec.clusterIPs[0]: non-standard IP address "192.012.2.2" will be considered invalid in a future Kubernetes release: use "192.12.2.2""#
            )
        );
        assert_eq!(
            ip_warning(at, "::ffff:192.12.2.2").as_deref(),
            Some(
                r#"spec.clusterIPs[0]: non-standard IP address "::ffff:192.12.2.2" will be considered invalid in a future Kubernetes release: use "192.12.2.2""#
            )
        );
        assert_eq!(
            ip_warning("spec.loadBalancerIP", "2001:db8:0:0::2").as_deref(),
            Some(
                r#"spec.loadBalancerIP: IPv6 address "2001:db8:0:0::2" should be in RFC 5952 canonical format ("2001:db8::2")"#
            )
        );
    }
}
