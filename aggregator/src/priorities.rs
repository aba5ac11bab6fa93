//! The order of groups and versions: kube-apiserver's priorities for the group-versions
//! it serves itself (its `apiVersionPriorities`), 1000/100 for those of
//! CustomResourceDefinitions, and kube-aggregator's sort of APIServices by them.

use std::cmp::Ordering;

use kapi_apiserver::discovery::compare_versions;

/// `(groupPriorityMinimum, versionPriority)` of a group-version served here: kube's
/// table for its built-ins, and what kube's CRD registration gives every other one.
pub fn local(group: &str, version: &str) -> (i64, i64) {
    let table: &[(&str, &str, i64, i64)] = &[
        ("", "v1", 18000, 1),
        ("apps", "v1", 17800, 15),
        ("events.k8s.io", "v1", 17750, 15),
        ("authentication.k8s.io", "v1", 17700, 15),
        ("authorization.k8s.io", "v1", 17600, 15),
        ("autoscaling", "v1", 17500, 15),
        ("autoscaling", "v2", 17500, 30),
        ("batch", "v1", 17400, 15),
        ("certificates.k8s.io", "v1", 17300, 15),
        ("networking.k8s.io", "v1", 17200, 15),
        ("policy", "v1", 17100, 15),
        ("rbac.authorization.k8s.io", "v1", 17000, 15),
        ("storage.k8s.io", "v1", 16800, 15),
        ("apiextensions.k8s.io", "v1", 16700, 15),
        ("admissionregistration.k8s.io", "v1", 16700, 15),
        ("scheduling.k8s.io", "v1", 16600, 15),
        ("coordination.k8s.io", "v1", 16500, 15),
        ("node.k8s.io", "v1", 16300, 15),
        ("discovery.k8s.io", "v1", 16200, 15),
        ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
        ("internal.apiserver.k8s.io", "v1alpha1", 16000, 9),
    ];
    table
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version)
        .map_or((1000, 100), |&(_, _, gp, vp)| (gp, vp))
}

/// kube-aggregator's order of two group-versions: by group priority (higher first),
/// then group name; within a group by version priority (higher first), then
/// Kubernetes' version order.
pub fn compare(a: (&str, &str, i64, i64), b: (&str, &str, i64, i64)) -> Ordering {
    let (ag, av, agp, avp) = a;
    let (bg, bv, bgp, bvp) = b;
    bgp.cmp(&agp)
        .then_with(|| ag.cmp(bg))
        .then_with(|| bvp.cmp(&avp))
        .then_with(|| compare_versions(av, bv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_before_custom_groups() {
        let mut gvs = [
            ("widgets.example", "v1", 1000, 100),
            ("apps", "v1", 17800, 15),
            ("", "v1", 18000, 1),
            ("widgets.example", "v2", 1000, 100),
        ];
        gvs.sort_by(|a, b| compare(*a, *b));
        assert_eq!(
            gvs.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(),
            [
                ("", "v1"),
                ("apps", "v1"),
                ("widgets.example", "v2"),
                ("widgets.example", "v1")
            ]
        );
        assert_eq!(local("widgets.example", "v1"), (1000, 100));
    }
}
