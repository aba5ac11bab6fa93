//! kube-apiserver's bootstrap configuration of API Priority and Fairness, as kube 1.35's
//! `k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go` defines it: the
//! mandatory PriorityLevelConfigurations and FlowSchemas (`exempt` and `catch-all`),
//! which validation pins, and the suggested ones (`system`, `node-high`,
//! `leader-election`, `workload-high`, `workload-low`, `global-default` and the schemas
//! that lead to them).
//!
//! Each spec is written in its defaulted v1 form (kube's bootstrap objects are ones its
//! defaulting leaves as they are), so a stored object can be compared with it as JSON.

use serde_json::{Value, json};

/// The annotation telling kube-apiserver whether it may keep a bootstrap object's spec
/// up to date (`"true"`) or must leave it as an operator set it (`"false"`).
pub const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

/// One bootstrap configuration object: its name, whether it is mandatory, and its spec.
#[derive(Clone, Debug, PartialEq)]
pub struct BootstrapObject {
    /// `metadata.name`.
    pub name: &'static str,
    /// Mandatory objects are kept to their spec; suggested ones only created.
    pub mandatory: bool,
    /// `spec`, in its defaulted v1 JSON form.
    pub spec: Value,
}

/// The group of the privileged (`system:masters`).
const MASTERS: &str = "system:masters";
/// The group of every authenticated user.
const AUTHENTICATED: &str = "system:authenticated";
/// The group of every unauthenticated request.
const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group of the kubelets.
const NODES: &str = "system:nodes";
/// The group of every service account.
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// kube-controller-manager's user.
const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
/// kube-scheduler's user.
const SCHEDULER: &str = "system:kube-scheduler";

/// A level limited to `shares`, lending `lendable` percent, queuing in `queues` queues
/// of hands of `hand` and at most 50 requests each.
fn queuing_level(shares: i32, lendable: i32, queues: i32, hand: i32) -> Value {
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

/// kube's bootstrap PriorityLevelConfigurations, the mandatory ones first.
pub fn bootstrap_priority_levels() -> Vec<BootstrapObject> {
    let level = |name, mandatory, spec| BootstrapObject {
        name,
        mandatory,
        spec,
    };
    vec![
        level(
            "exempt",
            true,
            json!({
                "type": "Exempt",
                "exempt": { "nominalConcurrencyShares": 0, "lendablePercent": 0 },
            }),
        ),
        level(
            "catch-all",
            true,
            json!({
                "type": "Limited",
                "limited": {
                    "nominalConcurrencyShares": 5,
                    "lendablePercent": 0,
                    "limitResponse": { "type": "Reject" },
                },
            }),
        ),
        level("system", false, queuing_level(30, 33, 64, 6)),
        level("node-high", false, queuing_level(40, 25, 64, 6)),
        level("leader-election", false, queuing_level(10, 0, 16, 4)),
        level("workload-high", false, queuing_level(40, 50, 128, 6)),
        level("workload-low", false, queuing_level(100, 90, 128, 6)),
        level("global-default", false, queuing_level(20, 50, 128, 6)),
    ]
}

/// Group subjects.
fn groups(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "Group", "group": { "name": n } }))
        .collect()
}

/// User subjects.
fn users(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({ "kind": "User", "user": { "name": n } }))
        .collect()
}

/// Subjects of service accounts of `kube-system` (`*`: all of them).
fn kube_system_service_accounts(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| {
            json!({
                "kind": "ServiceAccount",
                "serviceAccount": { "namespace": "kube-system", "name": n },
            })
        })
        .collect()
}

/// A resource rule; `clusterScope` is left out when false, as v1's `omitempty` does.
fn resource_rule(
    verbs: &[&str],
    api_groups: &[&str],
    resources: &[&str],
    namespaces: &[&str],
    cluster_scope: bool,
) -> Value {
    let mut rule = json!({
        "verbs": verbs,
        "apiGroups": api_groups,
        "resources": resources,
        "namespaces": namespaces,
    });
    if cluster_scope {
        rule["clusterScope"] = json!(true);
    }
    rule
}

/// The rule of `subjects` matching every request, resource or not.
fn everything(subjects: Vec<Value>) -> Value {
    json!({
        "subjects": subjects,
        "resourceRules": [resource_rule(&["*"], &["*"], &["*"], &["*"], true)],
        "nonResourceRules": [{ "verbs": ["*"], "nonResourceURLs": ["*"] }],
    })
}

/// The rule of `subjects` matching their leader-election writes: leases anywhere, and
/// `legacy` (endpoints, configmaps) in `legacy_namespace` when given.
fn leader_election(subjects: Vec<Value>, legacy_namespace: Option<&str>) -> Value {
    let verbs = &["get", "create", "update"];
    let mut rules = Vec::new();
    if let Some(ns) = legacy_namespace {
        rules.push(resource_rule(
            verbs,
            &[""],
            &["endpoints", "configmaps"],
            &[ns],
            false,
        ));
    }
    rules.push(resource_rule(
        verbs,
        &["coordination.k8s.io"],
        &["leases"],
        &["*"],
        false,
    ));
    json!({ "subjects": subjects, "resourceRules": rules })
}

/// A FlowSchema's spec.
fn schema_spec(level: &str, precedence: i32, distinguisher: Option<&str>, rule: Value) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": { "name": level },
        "matchingPrecedence": precedence,
        "rules": [rule],
    });
    if let Some(method) = distinguisher {
        spec["distinguisherMethod"] = json!({ "type": method });
    }
    spec
}

/// kube's bootstrap FlowSchemas, the mandatory ones first, then by precedence.
pub fn bootstrap_flow_schemas() -> Vec<BootstrapObject> {
    let schema = |name, mandatory, level, precedence, distinguisher, rule| BootstrapObject {
        name,
        mandatory,
        spec: schema_spec(level, precedence, distinguisher, rule),
    };
    let by_user = Some("ByUser");
    let by_namespace = Some("ByNamespace");
    let everyone = || groups(&[UNAUTHENTICATED, AUTHENTICATED]);
    let mut system_components = users(&[CONTROLLER_MANAGER, SCHEDULER]);
    system_components.extend(kube_system_service_accounts(&["*"]));
    let mut endpoint_writers = users(&[CONTROLLER_MANAGER]);
    endpoint_writers.extend(kube_system_service_accounts(&[
        "endpoint-controller",
        "endpointslicemirroring-controller",
    ]));
    let node_high = json!({
        "subjects": groups(&[NODES]),
        "resourceRules": [
            resource_rule(&["*"], &[""], &["nodes", "nodes/status"], &["*"], true),
            resource_rule(&["*"], &["coordination.k8s.io"], &["leases"], &["*"], false),
        ],
    });
    let probes = json!({
        "subjects": everyone(),
        "nonResourceRules": [{
            "verbs": ["get"],
            "nonResourceURLs": ["/healthz", "/readyz", "/livez"],
        }],
    });
    let endpoints = json!({
        "subjects": endpoint_writers,
        "resourceRules": [
            resource_rule(&["get", "create", "update"], &[""], &["endpoints"], &["*"], false),
        ],
    });
    vec![
        schema(
            "exempt",
            true,
            "exempt",
            1,
            None,
            everything(groups(&[MASTERS])),
        ),
        schema(
            "catch-all",
            true,
            "catch-all",
            10000,
            by_user,
            everything(everyone()),
        ),
        schema("probes", false, "exempt", 2, None, probes),
        schema(
            "system-leader-election",
            false,
            "leader-election",
            100,
            by_user,
            leader_election(system_components, None),
        ),
        schema(
            "endpoint-controller",
            false,
            "workload-high",
            150,
            by_user,
            endpoints,
        ),
        schema(
            "workload-leader-election",
            false,
            "leader-election",
            200,
            by_user,
            leader_election(kube_system_service_accounts(&["*"]), Some("*")),
        ),
        schema(
            "system-node-high",
            false,
            "node-high",
            400,
            by_user,
            node_high,
        ),
        schema(
            "system-nodes",
            false,
            "system",
            500,
            by_user,
            everything(groups(&[NODES])),
        ),
        schema(
            "kube-controller-manager",
            false,
            "workload-high",
            800,
            by_namespace,
            everything(users(&[CONTROLLER_MANAGER])),
        ),
        schema(
            "kube-scheduler",
            false,
            "workload-high",
            800,
            by_namespace,
            everything(users(&[SCHEDULER])),
        ),
        schema(
            "kube-system-service-accounts",
            false,
            "workload-high",
            900,
            by_namespace,
            everything(kube_system_service_accounts(&["*"])),
        ),
        schema(
            "service-accounts",
            false,
            "workload-low",
            9000,
            by_user,
            everything(groups(&[SERVICE_ACCOUNTS])),
        ),
        schema(
            "global-default",
            false,
            "global-default",
            9900,
            by_user,
            everything(everyone()),
        ),
    ]
}

/// The fixed spec of the mandatory FlowSchema `name`, if it is one.
pub fn mandatory_flow_schema_spec(name: &str) -> Option<Value> {
    bootstrap_flow_schemas()
        .into_iter()
        .find(|o| o.mandatory && o.name == name)
        .map(|o| o.spec)
}

/// The fixed spec of the mandatory PriorityLevelConfiguration `name`, if it is one.
pub fn mandatory_priority_level_spec(name: &str) -> Option<Value> {
    bootstrap_priority_levels()
        .into_iter()
        .find(|o| o.mandatory && o.name == name)
        .map(|o| o.spec)
}

/// Whether two specs are equal as Go's semantic equality sees them: `false`, `""`,
/// empty lists and empty objects are the same as absent (an unset `clusterScope`, a nil
/// slice, a zero value struct).
pub fn same_spec(a: &Value, b: &Value) -> bool {
    normalized(a) == normalized(b)
}

/// `value` without the members Go's semantic equality does not tell from absent.
fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), normalized(v)))
                .filter(|(_, v)| !is_zero(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// Whether a normalized value is one Go's semantic equality does not tell from absent.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        _ => false,
    }
}
