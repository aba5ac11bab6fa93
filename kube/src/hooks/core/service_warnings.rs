//! kube's `GetWarningsForService` (`pkg/api/service/warnings.go`): what a Service may
//! say that kube accepts but ignores, deprecates, or will refuse in a later release.

use crate::generated::core::v1::Service;
use crate::hooks::ip::{cidr_warnings, ip_warning};

/// The warnings for `svc`, created or updated.
pub(super) fn service_warnings(svc: &Service) -> Vec<String> {
    let mut warnings = Vec::new();
    let hints = "service.kubernetes.io/topology-aware-hints";
    if svc
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(hints))
    {
        warnings.push(format!(
            "annotation {hints} is deprecated, please use service.kubernetes.io/topology-mode instead"
        ));
    }
    let Some(spec) = &svc.spec else {
        return warnings;
    };
    let cluster_ip = spec.cluster_ip.as_deref().unwrap_or_default();
    if !cluster_ip.is_empty() && cluster_ip != "None" {
        for (i, ip) in spec.cluster_i_ps.iter().flatten().enumerate() {
            warnings.extend(ip_warning(&format!("spec.clusterIPs[{i}]"), ip));
        }
    }
    let type_ = spec.r#type.as_deref().unwrap_or("ClusterIP");
    let external_ips = spec.external_i_ps.as_deref().unwrap_or_default();
    let load_balancer_ip = spec.load_balancer_ip.as_deref().unwrap_or_default();
    if type_ == "ClusterIP" && cluster_ip == "None" {
        if !load_balancer_ip.is_empty() {
            warnings.push("spec.loadBalancerIP is ignored for headless services".into());
        }
        if !external_ips.is_empty() {
            warnings.push("spec.externalIPs is ignored for headless services".into());
        }
        if spec.session_affinity.as_deref().unwrap_or("None") != "None" {
            warnings.push("spec.SessionAffinity is ignored for headless services".into());
        }
    }
    for (i, ip) in external_ips.iter().enumerate() {
        warnings.extend(ip_warning(&format!("spec.externalIPs[{i}]"), ip));
    }
    if !load_balancer_ip.is_empty() {
        warnings.extend(ip_warning("spec.loadBalancerIP", load_balancer_ip));
    }
    for (i, cidr) in spec
        .load_balancer_source_ranges
        .iter()
        .flatten()
        .enumerate()
    {
        warnings.extend(cidr_warnings(
            &format!("spec.loadBalancerSourceRanges[{i}]"),
            cidr,
        ));
    }
    if type_ == "ExternalName" && !external_ips.is_empty() {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".into());
    }
    if type_ != "ExternalName" && !spec.external_name.as_deref().unwrap_or_default().is_empty() {
        warnings.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".into());
    }
    if spec.traffic_distribution.as_deref() == Some("PreferClose") {
        warnings.push(
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .into(),
        );
    }
    warnings
}
