//! PriorityClass, IngressClass and RuntimeClass.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[
    Kind {
        resource: "priorityclass.scheduling.k8s.io",
        name: "batch-high",
        yaml: "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: batch-high\nvalue: 1000\ndescription: For batch jobs that matter.\n",
        header: &["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
        row: &["batch-high", "1000", "false", "PreemptLowerPriority"],
        described: &[
            "Name:",
            "batch-high",
            "Value:",
            "1000",
            "PreemptionPolicy:",
            "PreemptLowerPriority",
            "Description:",
            "For batch jobs that matter.",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "ingressclass.networking.k8s.io",
        name: "edge",
        yaml: "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: edge\nspec:\n  controller: example.com/ingress\n  parameters:\n    apiGroup: k8s.example.com\n    kind: IngressParameters\n    name: edge-params\n",
        header: &["NAME", "CONTROLLER", "PARAMETERS", "AGE"],
        row: &[
            "edge",
            "example.com/ingress",
            "IngressParameters.k8s.example.com/edge-params",
        ],
        described: &[
            "Name:",
            "edge",
            "Controller:",
            "example.com/ingress",
            "IngressParameters",
            "edge-params",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "runtimeclass.node.k8s.io",
        name: "gvisor",
        yaml: "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n",
        header: &["NAME", "HANDLER", "AGE"],
        row: &["gvisor", "runsc"],
        described: &["Name:", "gvisor", "Handler:", "runsc"],
        describe_since: 0,
    },
];
