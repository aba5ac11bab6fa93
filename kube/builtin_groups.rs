// Read by build.rs and by the tests that check the features (`include!`).

/// Each built-in group's feature and schema file in `schemas/kubernetes/`.
const GROUPS: [(&str, &str); 21] = [
    ("admissionregistration", "admissionregistration.k8s.io-v1.yaml"),
    ("apiextensions", "apiextensions.k8s.io-v1.yaml"),
    ("apiregistration", "apiregistration.k8s.io-v1.yaml"),
    ("apiserverinternal", "internal.apiserver.k8s.io-v1alpha1.yaml"),
    ("apps", "apps-v1.yaml"),
    ("authentication", "authentication.k8s.io-v1.yaml"),
    ("authorization", "authorization.k8s.io-v1.yaml"),
    ("autoscaling", "autoscaling-v2.yaml"),
    ("batch", "batch-v1.yaml"),
    ("certificates", "certificates.k8s.io-v1.yaml"),
    ("coordination", "coordination.k8s.io-v1.yaml"),
    ("core", "core-v1.yaml"),
    ("discovery", "discovery.k8s.io-v1.yaml"),
    ("events", "events.k8s.io-v1.yaml"),
    ("flowcontrol", "flowcontrol.apiserver.k8s.io-v1.yaml"),
    ("networking", "networking.k8s.io-v1.yaml"),
    ("node", "node.k8s.io-v1.yaml"),
    ("policy", "policy-v1.yaml"),
    ("rbac", "rbac.authorization.k8s.io-v1.yaml"),
    ("scheduling", "scheduling.k8s.io-v1.yaml"),
    ("storage", "storage.k8s.io-v1.yaml"),
];

/// Features of single kinds of a group, for a crate that needs one kind of a large
/// group: the feature, the group's schema file, and the kind's plural. The group's
/// own feature turns them on.
const KINDS: [(&str, &str, &str); 1] = [("namespaces", "core-v1.yaml", "namespaces")];
