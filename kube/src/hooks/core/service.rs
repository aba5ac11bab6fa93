//! Services, as kube-apiserver's strategy for them behaves
//! (`pkg/registry/core/service/strategy.go`, `pkg/apis/core/v1/defaults.go`,
//! `ValidateService` in `pkg/apis/core/validation`, `printService` in
//! `pkg/printers/internalversion`).
//!
//! A Service does not track `metadata.generation`. It gets kube's v1 defaults (type
//! `ClusterIP`, `sessionAffinity: None`, ports' protocol `TCP` and `targetPort` = `port`,
//! `internalTrafficPolicy: Cluster`, `externalTrafficPolicy: Cluster` and
//! `allocateLoadBalancerNodePorts: true` where they apply) and `ipFamilyPolicy:
//! SingleStack` for every type but ExternalName. The port and IP checks here are shared
//! with Endpoints, Ingresses and pod specs.
//!
//! Deliberate differences from kube-apiserver:
//! - No allocation here: `spec.clusterIP`, `spec.clusterIPs` and `ports[].nodePort` are
//!   filled by the server's allocator, before validation. These hooks only mirror
//!   `clusterIP` into `clusterIPs` (as kube's `normalizeClusterIPs` does) and, on update,
//!   keep the stored addresses and node ports when the new object leaves them out (what
//!   kube's REST layer does in `patchAllocatedValues`).
//! - `ipFamilies` is not defaulted (kube's allocator picks the family); a request that
//!   sets it is validated only for its values.
//! - Values that kube prints with Go's `%#v` (`[]string{...}`) are printed as JSON.
//! - The EXTERNAL-IP cell of a LoadBalancer is never shortened: kube truncates it to 16
//!   characters without `-o wide`, and a computed cell does not know the output format.
//! - Topology, session-affinity timeouts, `loadBalancerSourceRanges` and
//!   `trafficDistribution` are not validated.

use crate::hooks::strings;
use std::collections::BTreeSet;
use std::net::IpAddr;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kapi_core::meta::{dns1035_label_errors, dns1123_label_errors, dns1123_subdomain_errors};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::core::v1::{
    ClientIPConfig, ServicePort, ServiceSpec, SessionAffinityConfig,
};
use crate::generated::core::v1::Service;

const CLUSTER_IP: &str = "ClusterIP";
const NODE_PORT: &str = "NodePort";
const LOAD_BALANCER: &str = "LoadBalancer";
const EXTERNAL_NAME: &str = "ExternalName";
const NONE: &str = "None";

/// `IsValidPortNum`'s message.
pub(crate) const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

/// `IsValidPortNum`: the problems with a port number.
pub(crate) fn port_num_errors(port: i32) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![PORT_RANGE.to_string()]
    }
}

/// `IsValidPortName` (an IANA_SVC_NAME): the problems with a port name.
pub(crate) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if !name
        .bytes()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// `IsValidIP`'s message.
pub(super) const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// The hooks of `core/v1` Service.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceHooks;

fn svc_type(spec: &ServiceSpec) -> &str {
    spec.r#type.as_deref().unwrap_or("")
}

fn cluster_ips(spec: &ServiceSpec) -> &[String] {
    spec.cluster_i_ps.as_deref().unwrap_or(&[])
}

/// Service types that carry node ports.
fn needs_node_port(t: &str) -> bool {
    t == NODE_PORT || t == LOAD_BALANCER
}

/// `SetDefaults_Service` and the `ipFamilyPolicy` default.
fn default_service(spec: &mut ServiceSpec) {
    if spec.session_affinity.as_deref().unwrap_or("").is_empty() {
        spec.session_affinity = Some(NONE.into());
    }
    if spec.session_affinity.as_deref() == Some(NONE) {
        spec.session_affinity_config = None;
    } else if spec.session_affinity.as_deref() == Some("ClientIP") {
        // Three hours, as SetDefaults_Service gives a ClientIP affinity.
        let config = spec
            .session_affinity_config
            .get_or_insert_with(SessionAffinityConfig::default);
        config
            .client_ip
            .get_or_insert_with(ClientIPConfig::default)
            .timeout_seconds
            .get_or_insert(10800);
    }
    if svc_type(spec).is_empty() {
        spec.r#type = Some(CLUSTER_IP.into());
    }
    for port in spec.ports.iter_mut().flatten() {
        if port.protocol.as_deref().unwrap_or("").is_empty() {
            port.protocol = Some("TCP".into());
        }
        let unset = match &port.target_port {
            None => true,
            Some(IntOrString::Int(0)) => true,
            Some(IntOrString::String(s)) => s.is_empty(),
            Some(IntOrString::Int(_)) => false,
        };
        if unset {
            port.target_port = Some(IntOrString::Int(port.port));
        }
    }
    let t = svc_type(spec).to_string();
    if needs_node_port(&t)
        && spec
            .external_traffic_policy
            .as_deref()
            .unwrap_or("")
            .is_empty()
    {
        spec.external_traffic_policy = Some("Cluster".into());
    }
    if spec.internal_traffic_policy.is_none() && t != EXTERNAL_NAME {
        spec.internal_traffic_policy = Some("Cluster".into());
    }
    if t == LOAD_BALANCER && spec.allocate_load_balancer_node_ports.is_none() {
        spec.allocate_load_balancer_node_ports = Some(true);
    }
    if t != EXTERNAL_NAME && spec.ip_family_policy.is_none() {
        spec.ip_family_policy = Some("SingleStack".into());
    }
}

/// kube's `normalizeClusterIPs` on create: a lone `clusterIP` becomes `clusterIPs`.
fn normalize_create(spec: &mut ServiceSpec) {
    let ip = spec.cluster_ip.clone().unwrap_or_default();
    if !ip.is_empty() && cluster_ips(spec).is_empty() {
        spec.cluster_i_ps = Some(vec![ip]);
    }
}

/// kube's `normalizeClusterIPs` and `dropTypeDependentFields` on update, and the
/// REST layer's keeping of allocated values the request left out.
fn normalize_update(new: &mut ServiceSpec, old: &ServiceSpec) {
    let (old_t, new_t) = (svc_type(old).to_string(), svc_type(new).to_string());
    // Allocated values the request left out are kept, unless the type drops them.
    if new_t != EXTERNAL_NAME && old_t != EXTERNAL_NAME {
        if new.cluster_ip.as_deref().unwrap_or("").is_empty() && cluster_ips(new).is_empty() {
            new.cluster_ip = old.cluster_ip.clone();
            new.cluster_i_ps = old.cluster_i_ps.clone();
        }
        if needs_node_port(&new_t) && needs_node_port(&old_t) {
            for port in new.ports.iter_mut().flatten() {
                if port.node_port.unwrap_or(0) != 0 {
                    continue;
                }
                port.node_port = old
                    .ports
                    .iter()
                    .flatten()
                    .find(|p| p.port == port.port && p.protocol == port.protocol)
                    .and_then(|p| p.node_port);
            }
        }
    }
    let (old_ip, new_ip) = (
        old.cluster_ip.clone().unwrap_or_default(),
        new.cluster_ip.clone().unwrap_or_default(),
    );
    // A client that only knows `clusterIP` left `clusterIPs` out.
    if !cluster_ips(old).is_empty() && cluster_ips(new).is_empty() && old_ip == new_ip {
        new.cluster_i_ps = old.cluster_i_ps.clone();
    }
    if old_ip != new_ip && cluster_ips(old) == cluster_ips(new) {
        new.cluster_i_ps = (!new_ip.is_empty()).then(|| vec![new_ip.clone()]);
    }
    // Fields the new type does not use, left as they were, are dropped.
    if old_t != EXTERNAL_NAME && new_t == EXTERNAL_NAME {
        if new.cluster_ip == old.cluster_ip && new.cluster_i_ps == old.cluster_i_ps {
            new.cluster_ip = None;
            new.cluster_i_ps = None;
        }
        if new.ip_families == old.ip_families {
            new.ip_families = None;
        }
        if new.ip_family_policy == old.ip_family_policy {
            new.ip_family_policy = None;
        }
    }
    if needs_node_port(&old_t) && !needs_node_port(&new_t) {
        let same = new.ports.iter().flatten().map(|p| p.node_port).eq(old
            .ports
            .iter()
            .flatten()
            .map(|p| p.node_port));
        if same {
            for port in new.ports.iter_mut().flatten() {
                port.node_port = None;
            }
        }
        if new.external_traffic_policy == old.external_traffic_policy {
            new.external_traffic_policy = None;
        }
    }
    if old_t == LOAD_BALANCER
        && new_t != LOAD_BALANCER
        && new.allocate_load_balancer_node_ports == old.allocate_load_balancer_node_ports
    {
        new.allocate_load_balancer_node_ports = None;
    }
}

fn validate_port(
    port: &ServicePort,
    require_name: bool,
    names: &mut BTreeSet<String>,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = port.name.as_deref().unwrap_or("");
    if require_name && name.is_empty() {
        errs.push(FieldError::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        for msg in dns1123_label_errors(name) {
            errs.push(FieldError::invalid(&path.child("name"), name, msg));
        }
        if !names.insert(name.to_string()) {
            errs.push(FieldError::duplicate(&path.child("name"), name));
        }
    }
    for msg in port_num_errors(port.port) {
        errs.push(FieldError::invalid(&path.child("port"), port.port, msg));
    }
    match port.protocol.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(&path.child("protocol"), "")),
        "TCP" | "UDP" | "SCTP" => {}
        other => errs.push(FieldError::not_supported(
            &path.child("protocol"),
            other,
            &strings(&["SCTP", "TCP", "UDP"]),
        )),
    }
    match &port.target_port {
        Some(IntOrString::Int(n)) => {
            for msg in port_num_errors(*n) {
                errs.push(FieldError::invalid(&path.child("targetPort"), *n, msg));
            }
        }
        Some(IntOrString::String(s)) => {
            for msg in port_name_errors(s) {
                errs.push(FieldError::invalid(
                    &path.child("targetPort"),
                    s.as_str(),
                    msg,
                ));
            }
        }
        None => {}
    }
    errs
}

/// `ValidateService` for what the schema cannot say.
fn validate_service(svc: &Service) -> ErrorList {
    let mut errs = ErrorList::new();
    let name = svc.metadata.name.as_deref().unwrap_or("");
    for msg in dns1035_label_errors(name) {
        errs.push(FieldError::invalid(
            &FieldPath::new("metadata.name"),
            name,
            msg,
        ));
    }
    let spec_path = FieldPath::new("spec");
    let default_spec = ServiceSpec::default();
    let spec = svc.spec.as_ref().unwrap_or(&default_spec);
    let t = svc_type(spec);
    let ips = cluster_ips(spec);
    let headless = t == CLUSTER_IP && ips.len() == 1 && ips[0] == NONE;
    let ports = spec.ports.as_deref().unwrap_or(&[]);
    if ports.is_empty() && !headless && t != EXTERNAL_NAME {
        errs.push(FieldError::required(&spec_path.child("ports"), ""));
    }
    // The selector is a set of labels, validated as labels are.
    if let Some(selector) = &spec.selector {
        let selector = serde_json::to_value(selector).unwrap_or_default();
        errs.extend(kapi_core::meta::validate_labels(
            Some(&selector),
            &spec_path.child("selector"),
        ));
    }
    match t {
        "" => errs.push(FieldError::required(&spec_path.child("type"), "")),
        CLUSTER_IP | NODE_PORT | LOAD_BALANCER => {}
        EXTERNAL_NAME => {
            if !ips.is_empty() || !spec.cluster_ip.as_deref().unwrap_or("").is_empty() {
                errs.push(FieldError::forbidden(
                    &spec_path.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            if spec.ip_family_policy.is_some() {
                errs.push(FieldError::forbidden(
                    &spec_path.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            if !spec.ip_families.as_deref().unwrap_or(&[]).is_empty() {
                errs.push(FieldError::forbidden(
                    &spec_path.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            let cname = spec.external_name.as_deref().unwrap_or("");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                errs.push(FieldError::required(&spec_path.child("externalName"), ""));
            } else {
                for msg in dns1123_subdomain_errors(cname) {
                    errs.push(FieldError::invalid(
                        &spec_path.child("externalName"),
                        cname,
                        msg,
                    ));
                }
            }
        }
        other => errs.push(FieldError::not_supported(
            &spec_path.child("type"),
            other,
            &strings(&[CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT]),
        )),
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let path = spec_path.child("ports").index(i);
        errs.extend(validate_port(port, ports.len() > 1, &mut names, &path));
        if port.node_port.unwrap_or(0) != 0 {
            if !needs_node_port(t) {
                errs.push(FieldError::forbidden(
                    &path.child("nodePort"),
                    format!("may not be used when `type` is '{t}'"),
                ));
            } else {
                for msg in port_num_errors(port.node_port.unwrap_or(0)) {
                    errs.push(FieldError::invalid(
                        &path.child("nodePort"),
                        port.node_port.unwrap_or(0),
                        msg,
                    ));
                }
            }
        }
    }
    match spec.session_affinity.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required(
            &spec_path.child("sessionAffinity"),
            "",
        )),
        "None" | "ClientIP" => {}
        other => errs.push(FieldError::not_supported(
            &spec_path.child("sessionAffinity"),
            other,
            &strings(&["ClientIP", "None"]),
        )),
    }
    for (i, ip) in spec.external_i_ps.iter().flatten().enumerate() {
        if ip.parse::<IpAddr>().is_err() {
            errs.push(FieldError::invalid(
                &spec_path.child("externalIPs").index(i),
                ip.as_str(),
                INVALID_IP,
            ));
        }
    }
    if let Some(policy) = spec.external_traffic_policy.as_deref() {
        if !needs_node_port(t) && !policy.is_empty() {
            errs.push(FieldError::invalid(
                &spec_path.child("externalTrafficPolicy"),
                policy,
                "may only be set for externally-accessible services",
            ));
        } else if !["", "Cluster", "Local"].contains(&policy) {
            errs.push(FieldError::not_supported(
                &spec_path.child("externalTrafficPolicy"),
                policy,
                &strings(&["Cluster", "Local"]),
            ));
        }
    }
    if let Some(policy) = spec.internal_traffic_policy.as_deref() {
        if !["Cluster", "Local"].contains(&policy) {
            errs.push(FieldError::not_supported(
                &spec_path.child("internalTrafficPolicy"),
                policy,
                &strings(&["Cluster", "Local"]),
            ));
        }
    }
    if spec.allocate_load_balancer_node_ports.is_some() && t != LOAD_BALANCER {
        errs.push(FieldError::forbidden(
            &spec_path.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if t != EXTERNAL_NAME {
        errs.extend(validate_cluster_ips(spec, &spec_path));
    }
    errs
}

/// kube's `validateServiceClusterIPsRelatedFields`, without the allocator's ranges.
fn validate_cluster_ips(spec: &ServiceSpec, spec_path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let ips = cluster_ips(spec);
    let ips_path = spec_path.child("clusterIPs");
    let ip = spec.cluster_ip.as_deref().unwrap_or("");
    if !ips.is_empty() && ip != ips[0] {
        errs.push(FieldError::invalid(
            &ips_path,
            Value::from(ips.to_vec()),
            "first value must match `clusterIP`",
        ));
    }
    match spec.ip_family_policy.as_deref() {
        None => errs.push(FieldError::required(&spec_path.child("ipFamilyPolicy"), "")),
        Some("SingleStack" | "PreferDualStack" | "RequireDualStack") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &spec_path.child("ipFamilyPolicy"),
            other,
            &strings(&["PreferDualStack", "RequireDualStack", "SingleStack"]),
        )),
    }
    for (i, family) in spec.ip_families.iter().flatten().enumerate() {
        if family != "IPv4" && family != "IPv6" {
            errs.push(FieldError::not_supported(
                &spec_path.child("ipFamilies").index(i),
                family.as_str(),
                &strings(&["IPv4", "IPv6"]),
            ));
        }
    }
    if ips.len() > 2 {
        errs.push(FieldError::invalid(
            &ips_path,
            Value::from(ips.to_vec()),
            "may only hold up to 2 values",
        ));
    }
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == NONE {
            if ips.len() > 1 {
                errs.push(FieldError::invalid(
                    &ips_path,
                    Value::from(ips.to_vec()),
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        if ip.parse::<IpAddr>().is_err() {
            errs.push(FieldError::invalid(
                &ips_path.index(i),
                ip.as_str(),
                INVALID_IP,
            ));
        }
    }
    errs
}

/// kube's `validateUpgradeDowngradeClusterIPs`: the primary address stays.
fn validate_cluster_ip_change(new: &ServiceSpec, old: &ServiceSpec) -> ErrorList {
    let mut errs = ErrorList::new();
    if svc_type(old) == EXTERNAL_NAME || svc_type(new) == EXTERNAL_NAME {
        return errs;
    }
    let path = FieldPath::new("spec.clusterIPs");
    let (old_ips, new_ips) = (cluster_ips(old), cluster_ips(new));
    if let (Some(o), Some(n)) = (old_ips.first(), new_ips.first()) {
        if o != n {
            errs.push(FieldError::invalid(
                &path.index(0),
                n.as_str(),
                "may not change once set",
            ));
        }
    }
    if !old_ips.is_empty() && new_ips.is_empty() {
        errs.push(FieldError::invalid(
            &path,
            Value::Array(Vec::new()),
            "primary clusterIP can not be unset",
        ));
    }
    errs
}

/// `loadBalancerStatusStringer`: ingress IPs or hostnames, joined by ",".
fn load_balancer_addresses(svc: &Service) -> Vec<String> {
    svc.status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|i| load_balancer_address(i.ip.as_ref(), i.hostname.as_ref()))
        .collect()
}

/// One load-balancer ingress point as kube's printers show it: its IP, else its
/// hostname (Services and Ingresses alike).
pub(crate) fn load_balancer_address(
    ip: Option<&String>,
    hostname: Option<&String>,
) -> Option<String> {
    ip.filter(|s| !s.is_empty())
        .or(hostname.filter(|s| !s.is_empty()))
        .cloned()
}

/// `getServiceExternalIP`.
fn external_ip(svc: &Service, spec: &ServiceSpec) -> String {
    let external = spec.external_i_ps.clone().unwrap_or_default();
    match svc_type(spec) {
        CLUSTER_IP | NODE_PORT if !external.is_empty() => external.join(","),
        CLUSTER_IP | NODE_PORT => "<none>".into(),
        LOAD_BALANCER => {
            let mut all = load_balancer_addresses(svc);
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        EXTERNAL_NAME => spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".into(),
    }
}

/// `makePortString`: `80/TCP`, `80:30080/TCP`, joined by ",".
fn port_string(ports: &[ServicePort]) -> String {
    ports
        .iter()
        .map(|p| {
            let proto = p.protocol.as_deref().unwrap_or("");
            match p.node_port.unwrap_or(0) {
                0 => format!("{}/{proto}", p.port),
                n => format!("{}:{n}/{proto}", p.port),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `labels.FormatLabels`: `k=v,...` in key order, `<none>` when empty.
pub(super) fn format_labels<'a>(
    labels: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> String {
    let s = labels
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    if s.is_empty() { "<none>".into() } else { s }
}

impl Hooks<Service> for ServiceHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn warnings_on_create(&self, svc: &Service) -> Vec<String> {
        super::service_warnings::service_warnings(svc)
    }

    fn warnings_on_update(&self, new: &Service, _old: &Service) -> Vec<String> {
        super::service_warnings::service_warnings(new)
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, svc: &mut Service) {
        default_service(svc.spec.get_or_insert_with(Default::default));
    }

    fn prepare_for_create(&self, svc: &mut Service) {
        // The generic preparation already reset status to its default,
        // `{loadBalancer: {}}`, as kube's strategy does.
        normalize_create(svc.spec.get_or_insert_with(Default::default));
    }

    fn prepare_for_update(&self, new: &mut Service, old: &Service) {
        let old_spec = old.spec.clone().unwrap_or_default();
        normalize_update(new.spec.get_or_insert_with(Default::default), &old_spec);
    }

    fn validate(&self, svc: &Service) -> ErrorList {
        validate_service(svc)
    }

    fn validate_update(&self, new: &Service, old: &Service) -> ErrorList {
        let mut errs = validate_service(new);
        errs.extend(validate_cluster_ip_change(
            new.spec.as_ref().unwrap_or(&ServiceSpec::default()),
            old.spec.as_ref().unwrap_or(&ServiceSpec::default()),
        ));
        errs
    }

    fn table_cell(&self, column: &str, svc: &Service) -> Option<Value> {
        let default_spec = ServiceSpec::default();
        let spec = svc.spec.as_ref().unwrap_or(&default_spec);
        let cell = match column {
            "Type" => svc_type(spec).to_string(),
            "Cluster-IP" => cluster_ips(spec)
                .first()
                .cloned()
                .unwrap_or_else(|| "<none>".into()),
            "External-IP" => external_ip(svc, spec),
            "Port(s)" => {
                let s = port_string(spec.ports.as_deref().unwrap_or(&[]));
                if s.is_empty() { "<none>".into() } else { s }
            }
            "Selector" => format_labels(spec.selector.iter().flatten()),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}
