//! Test fixtures: kube 1.35's bootstrap PriorityLevelConfigurations and FlowSchemas
//! (`k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go`, as
//! `kapi-kube`'s `hooks/flowcontrol/bootstrap.rs` writes them) as whole v1 objects,
//! each with the uid `uid-pl-<name>` or `uid-fs-<name>`.

// The whole file is test code (mod.rs includes it for tests only); saying so here
// keeps the layout tests' reader out of its fixtures too.
#[cfg(test)]
use serde_json::{Value, json};

use super::config::Config;

/// A whole object of `kind` with `name` and `spec`.
fn object(kind: &str, name: &str, spec: Value) -> Value {
    let short = if kind == "FlowSchema" { "fs" } else { "pl" };
    json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": kind,
        "metadata": { "name": name, "uid": format!("uid-{short}-{name}") },
        "spec": spec,
    })
}

/// A queuing level.
fn queuing(shares: u32, lendable: u32, queues: u32, hand: u32) -> Value {
    json!({
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": shares,
            "lendablePercent": lendable,
            "limitResponse": {
                "type": "Queue",
                "queuing": { "queues": queues, "handSize": hand, "queueLengthLimit": 50 },
            },
        },
    })
}

/// The bootstrap PriorityLevelConfigurations.
pub fn bootstrap_levels() -> Vec<Value> {
    let pl = |name, spec| object("PriorityLevelConfiguration", name, spec);
    vec![
        pl(
            "exempt",
            json!({ "type": "Exempt", "exempt": { "nominalConcurrencyShares": 0, "lendablePercent": 0 } }),
        ),
        pl(
            "catch-all",
            json!({ "type": "Limited", "limited": {
                "nominalConcurrencyShares": 5, "lendablePercent": 0,
                "limitResponse": { "type": "Reject" },
            } }),
        ),
        pl("system", queuing(30, 33, 64, 6)),
        pl("node-high", queuing(40, 25, 64, 6)),
        pl("leader-election", queuing(10, 0, 16, 4)),
        pl("workload-high", queuing(40, 50, 128, 6)),
        pl("workload-low", queuing(100, 90, 128, 6)),
        pl("global-default", queuing(20, 50, 128, 6)),
    ]
}

fn groups(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "Group", "group": { "name": n } }))
        .collect()
}

fn users(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "User", "user": { "name": n } }))
        .collect()
}

fn kube_system_sas(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "ServiceAccount", "serviceAccount": { "namespace": "kube-system", "name": n } }))
        .collect()
}

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], ns: &[&str], cluster: bool) -> Value {
    let mut rule =
        json!({ "verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": ns });
    if cluster {
        rule["clusterScope"] = json!(true);
    }
    rule
}

fn everything(subjects: Vec<Value>) -> Value {
    json!({
        "subjects": subjects,
        "resourceRules": [rule(&["*"], &["*"], &["*"], &["*"], true)],
        "nonResourceRules": [{ "verbs": ["*"], "nonResourceURLs": ["*"] }],
    })
}

fn leader_election(subjects: Vec<Value>, legacy: bool) -> Value {
    let verbs = &["get", "create", "update"];
    let mut rules = Vec::new();
    if legacy {
        rules.push(rule(
            verbs,
            &[""],
            &["endpoints", "configmaps"],
            &["*"],
            false,
        ));
    }
    rules.push(rule(
        verbs,
        &["coordination.k8s.io"],
        &["leases"],
        &["*"],
        false,
    ));
    json!({ "subjects": subjects, "resourceRules": rules })
}

/// The bootstrap FlowSchemas.
pub fn bootstrap_schemas() -> Vec<Value> {
    let fs = |name: &str, level: &str, precedence: u32, method: Option<&str>, rule: Value| {
        let mut spec = json!({
            "priorityLevelConfiguration": { "name": level },
            "matchingPrecedence": precedence,
            "rules": [rule],
        });
        if let Some(method) = method {
            spec["distinguisherMethod"] = json!({ "type": method });
        }
        object("FlowSchema", name, spec)
    };
    let everyone = || groups(&["system:unauthenticated", "system:authenticated"]);
    let mut components = users(&["system:kube-controller-manager", "system:kube-scheduler"]);
    components.extend(kube_system_sas(&["*"]));
    let mut endpoint_writers = users(&["system:kube-controller-manager"]);
    endpoint_writers.extend(kube_system_sas(&[
        "endpoint-controller",
        "endpointslicemirroring-controller",
    ]));
    let (user, ns) = (Some("ByUser"), Some("ByNamespace"));
    vec![
        fs(
            "exempt",
            "exempt",
            1,
            None,
            everything(groups(&["system:masters"])),
        ),
        fs(
            "catch-all",
            "catch-all",
            10000,
            user,
            everything(everyone()),
        ),
        fs(
            "probes",
            "exempt",
            2,
            None,
            json!({
                "subjects": everyone(),
                "nonResourceRules": [{ "verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"] }],
            }),
        ),
        fs(
            "system-leader-election",
            "leader-election",
            100,
            user,
            leader_election(components, false),
        ),
        fs(
            "endpoint-controller",
            "workload-high",
            150,
            user,
            json!({
                "subjects": endpoint_writers,
                "resourceRules": [rule(&["get", "create", "update"], &[""], &["endpoints"], &["*"], false)],
            }),
        ),
        fs(
            "workload-leader-election",
            "leader-election",
            200,
            user,
            leader_election(kube_system_sas(&["*"]), true),
        ),
        fs(
            "system-node-high",
            "node-high",
            400,
            user,
            json!({
                "subjects": groups(&["system:nodes"]),
                "resourceRules": [
                    rule(&["*"], &[""], &["nodes", "nodes/status"], &["*"], true),
                    rule(&["*"], &["coordination.k8s.io"], &["leases"], &["*"], false),
                ],
            }),
        ),
        fs(
            "system-nodes",
            "system",
            500,
            user,
            everything(groups(&["system:nodes"])),
        ),
        fs(
            "kube-controller-manager",
            "workload-high",
            800,
            ns,
            everything(users(&["system:kube-controller-manager"])),
        ),
        fs(
            "kube-scheduler",
            "workload-high",
            800,
            ns,
            everything(users(&["system:kube-scheduler"])),
        ),
        fs(
            "kube-system-service-accounts",
            "workload-high",
            900,
            ns,
            everything(kube_system_sas(&["*"])),
        ),
        fs(
            "service-accounts",
            "workload-low",
            9000,
            user,
            everything(groups(&["system:serviceaccounts"])),
        ),
        fs(
            "global-default",
            "global-default",
            9900,
            user,
            everything(everyone()),
        ),
    ]
}

/// The bootstrap configuration.
pub fn bootstrap_config() -> Config {
    let config = Config::from_objects(&bootstrap_schemas(), &bootstrap_levels());
    assert!(config.skipped.is_empty(), "{:?}", config.skipped);
    config
}
