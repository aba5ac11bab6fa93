//! A Pod's quality of service class (kube's `qos.GetPodQOS`), from its containers'
//! requests and limits.

use std::collections::BTreeMap;

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::generated::api::core::v1::{Container, PodSpec};

/// A quantity's value, for comparisons (`100m`, `1Gi`, `2e3`).
pub(super) fn quantity_value(q: &Quantity) -> f64 {
    let s = q.0.trim();
    let suffixes: [(&str, f64); 13] = [
        ("Ki", 1024f64),
        ("Mi", 1024f64.powi(2)),
        ("Gi", 1024f64.powi(3)),
        ("Ti", 1024f64.powi(4)),
        ("Pi", 1024f64.powi(5)),
        ("Ei", 1024f64.powi(6)),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
    ];
    for (suffix, factor) in suffixes {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.parse::<f64>().unwrap_or(0.0) * factor;
        }
    }
    for (suffix, factor) in [("P", 1e15), ("E", 1e18)] {
        if let Some(n) = s.strip_suffix(suffix) {
            return n.parse::<f64>().unwrap_or(0.0) * factor;
        }
    }
    s.parse().unwrap_or(0.0)
}

/// `qos.GetPodQOS` over the containers and init containers.
pub(super) fn qos_class(spec: &PodSpec) -> &'static str {
    let mut requests: BTreeMap<&str, f64> = BTreeMap::new();
    let mut limits: BTreeMap<&str, f64> = BTreeMap::new();
    let mut guaranteed = true;
    let all: Vec<&Container> = spec
        .init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .collect();
    for c in all {
        let res = c.resources.as_ref();
        for (name, q) in res.and_then(|r| r.requests.as_ref()).into_iter().flatten() {
            let name = name.as_str();
            if (name == "cpu" || name == "memory") && quantity_value(q) > 0.0 {
                *requests.entry(name).or_default() += quantity_value(q);
            }
        }
        let mut found = Vec::new();
        for (name, q) in res.and_then(|r| r.limits.as_ref()).into_iter().flatten() {
            let name = name.as_str();
            if (name == "cpu" || name == "memory") && quantity_value(q) > 0.0 {
                found.push(name);
                *limits.entry(name).or_default() += quantity_value(q);
            }
        }
        if !(found.contains(&"cpu") && found.contains(&"memory")) {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed {
        for (name, req) in &requests {
            if limits.get(name) != Some(req) {
                guaranteed = false;
            }
        }
    }
    if guaranteed && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities() {
        assert_eq!(quantity_value(&Quantity("100m".into())), 0.1);
        assert_eq!(quantity_value(&Quantity("1Gi".into())), 1024f64.powi(3));
        assert_eq!(quantity_value(&Quantity("2".into())), 2.0);
    }
}
