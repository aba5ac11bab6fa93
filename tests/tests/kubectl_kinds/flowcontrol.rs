//! FlowSchema and PriorityLevelConfiguration.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[
    Kind {
        resource: "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io",
        name: "batch-jobs",
        yaml: "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\nmetadata:\n  name: batch-jobs\nspec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: 15\n    limitResponse:\n      type: Queue\n      queuing:\n        queues: 32\n        handSize: 4\n",
        header: &[
            "NAME",
            "TYPE",
            "NOMINALCONCURRENCYSHARES",
            "QUEUES",
            "HANDSIZE",
            "QUEUELENGTHLIMIT",
            "AGE",
        ],
        row: &["batch-jobs", "Limited", "15", "32", "4", "50"],
        described: &["Name:", "batch-jobs", "Limited", "15", "Queue", "32"],
        describe_since: 0,
    },
    Kind {
        resource: "flowschema.flowcontrol.apiserver.k8s.io",
        name: "batch-jobs",
        yaml: "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata:\n  name: batch-jobs\nspec:\n  priorityLevelConfiguration:\n    name: workload-low\n  matchingPrecedence: 2000\n  distinguisherMethod:\n    type: ByUser\n  rules:\n  - subjects:\n    - kind: Group\n      group:\n        name: batch-runners\n    resourceRules:\n    - verbs: [list, watch]\n      apiGroups: [batch]\n      resources: [jobs]\n      namespaces: [\"*\"]\n",
        header: &[
            "NAME",
            "PRIORITYLEVEL",
            "MATCHINGPRECEDENCE",
            "DISTINGUISHERMETHOD",
            "AGE",
            "MISSINGPL",
        ],
        row: &["batch-jobs", "workload-low", "2000", "ByUser", "False"],
        described: &[
            "Name:",
            "batch-jobs",
            "workload-low",
            "2000",
            "ByUser",
            "batch-runners",
        ],
        describe_since: 0,
    },
];
