//! kube's `GetWarningsForIP`: an address kube still accepts but a later release will
//! not (IPv4 octets with leading zeros, IPv4-mapped IPv6), or IPv6 not written in the
//! RFC 5952 canonical form, gets a warning saying what to write instead.

use std::net::IpAddr;

/// Go's `netutils.ParseIPSloppy`: IPv4 octets may have leading zeros.
fn parse_sloppy(s: &str) -> Option<IpAddr> {
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

#[cfg(test)]
mod tests {
    use super::ip_warning;

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
