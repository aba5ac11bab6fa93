//! FlowSchema and PriorityLevelConfiguration against a real server, as `builtins_core.rs`
//! tests kinds (kube's defaults, messages, status handling and Table cells), and
//! kube-apiserver's bootstrap configuration of API Priority and Fairness, there from the
//! start.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

const LEVELS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";
const SCHEMAS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const MERGE: &str = "application/merge-patch+json";
const LEVEL_COLUMNS: &[&str] = &[
    "Type",
    "NominalConcurrencyShares",
    "Queues",
    "HandSize",
    "QueueLengthLimit",
];
const SCHEMA_COLUMNS: &[&str] = &[
    "PriorityLevel",
    "MatchingPrecedence",
    "DistinguisherMethod",
    "MissingPL",
];

fn level(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name},
        "spec": spec,
    })
}

fn schema(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "spec": spec,
    })
}

fn get(kapi: &Kapi, path: &str) -> Value {
    let (code, obj) = kapi.request("GET", path, JSON, None);
    assert_eq!(code, 200, "GET {path}: {obj}");
    obj
}

/// The schema's `Dangling` condition once its status is `status`, polled (the config
/// controller writes it after the schema or its level changes), bounded.
fn dangling(kapi: &Kapi, path: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let obj = get(kapi, path);
        let condition = obj["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Dangling"))
            .cloned();
        if let Some(c) = condition.filter(|c| c["status"] == status) {
            return c;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never Dangling={status}: {obj}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn names(kapi: &Kapi, path: &str) -> Vec<String> {
    let mut names: Vec<String> = get(kapi, path)["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn bootstrap_configuration() {
    let mut kapi = Kapi::start(Backend::Embedded);
    assert_eq!(
        names(&kapi, LEVELS),
        strs(&[
            "catch-all",
            "exempt",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low",
        ])
    );
    assert_eq!(
        names(&kapi, SCHEMAS),
        strs(&[
            "catch-all",
            "endpoint-controller",
            "exempt",
            "global-default",
            "kube-controller-manager",
            "kube-scheduler",
            "kube-system-service-accounts",
            "probes",
            "service-accounts",
            "system-leader-election",
            "system-node-high",
            "system-nodes",
            "workload-leader-election",
        ])
    );

    // kube's values, each object annotated for auto-update.
    let exempt = get(&kapi, &format!("{LEVELS}/exempt"));
    assert_eq!(
        exempt["spec"],
        json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}})
    );
    assert_eq!(
        exempt["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
    let catch_all = get(&kapi, &format!("{LEVELS}/catch-all"));
    assert_eq!(
        catch_all["spec"],
        json!({"type": "Limited", "limited": {
            "nominalConcurrencyShares": 5, "lendablePercent": 0,
            "limitResponse": {"type": "Reject"},
        }})
    );
    let global = get(&kapi, &format!("{LEVELS}/global-default"));
    assert_eq!(
        global["spec"]["limited"],
        json!({
            "nominalConcurrencyShares": 20, "lendablePercent": 50,
            "limitResponse": {"type": "Queue", "queuing": {
                "queues": 128, "handSize": 6, "queueLengthLimit": 50,
            }},
        })
    );
    let all = json!({
        "resourceRules": [{
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "clusterScope": true, "namespaces": ["*"],
        }],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    });
    let mut masters = all.clone();
    masters["subjects"] = json!([{"kind": "Group", "group": {"name": "system:masters"}}]);
    let exempt = get(&kapi, &format!("{SCHEMAS}/exempt"));
    assert_eq!(
        exempt["spec"],
        json!({
            "priorityLevelConfiguration": {"name": "exempt"},
            "matchingPrecedence": 1,
            "rules": [masters],
        })
    );
    let leader = get(&kapi, &format!("{SCHEMAS}/system-leader-election"));
    assert_eq!(
        leader["spec"],
        json!({
            "priorityLevelConfiguration": {"name": "leader-election"},
            "matchingPrecedence": 100,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{
                "subjects": [
                    {"kind": "User", "user": {"name": "system:kube-controller-manager"}},
                    {"kind": "User", "user": {"name": "system:kube-scheduler"}},
                    {"kind": "ServiceAccount",
                     "serviceAccount": {"namespace": "kube-system", "name": "*"}},
                ],
                "resourceRules": [{
                    "verbs": ["get", "create", "update"],
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "namespaces": ["*"],
                }],
            }],
        })
    );
    assert_eq!(
        leader["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
        "true"
    );
    let global = get(&kapi, &format!("{SCHEMAS}/global-default"));
    assert_eq!(
        (
            &global["spec"]["matchingPrecedence"],
            &global["spec"]["priorityLevelConfiguration"]["name"],
            &global["spec"]["rules"][0]["subjects"],
        ),
        (
            &json!(9900),
            &json!("global-default"),
            &json!([
                {"kind": "Group", "group": {"name": "system:unauthenticated"}},
                {"kind": "Group", "group": {"name": "system:authenticated"}},
            ]),
        )
    );

    // Tables as kube prints them: `<none>` where a level has no such setting (kapi
    // gives every cell of a string column as a string).
    assert_eq!(
        row(&kapi, LEVELS, "exempt", LEVEL_COLUMNS),
        vec![
            json!("Exempt"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>")
        ]
    );
    assert_eq!(
        row(&kapi, LEVELS, "catch-all", LEVEL_COLUMNS),
        vec![
            json!("Limited"),
            json!("5"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>")
        ]
    );
    assert_eq!(
        row(&kapi, LEVELS, "workload-low", LEVEL_COLUMNS),
        vec![
            json!("Limited"),
            json!("100"),
            json!("128"),
            json!("6"),
            json!("50")
        ]
    );
    // Every bootstrap schema names a bootstrap level: none is Dangling.
    for name in names(&kapi, SCHEMAS) {
        dangling(&kapi, &format!("{SCHEMAS}/{name}"), "False");
    }
    assert_eq!(
        row(&kapi, SCHEMAS, "exempt", SCHEMA_COLUMNS),
        vec![json!("exempt"), json!("1"), json!("<none>"), json!("False")]
    );
    assert_eq!(
        row(&kapi, SCHEMAS, "catch-all", SCHEMA_COLUMNS),
        vec![
            json!("catch-all"),
            json!("10000"),
            json!("ByUser"),
            json!("False")
        ]
    );

    // The mandatory objects' specs are fixed, but for the exempt level's `exempt`.
    let mut changed = catch_all.clone();
    changed["spec"]["limited"]["nominalConcurrencyShares"] = json!(6);
    let message = invalid(&kapi, "PUT", &format!("{LEVELS}/catch-all"), &changed);
    assert!(
        message.starts_with(
            "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"catch-all\" is invalid: \
             spec: Invalid value: "
        ) && message.ends_with(": spec of 'catch-all' must equal the fixed value"),
        "{message}"
    );
    let (code, tuned) = kapi.request(
        "PATCH",
        &format!("{LEVELS}/exempt"),
        MERGE,
        Some(&json!({"spec": {"exempt": {"nominalConcurrencyShares": 10}}})),
    );
    assert_eq!(code, 200, "{tuned}");
    assert_eq!(
        tuned["spec"]["exempt"],
        json!({"nominalConcurrencyShares": 10, "lendablePercent": 0})
    );
    // Read again: the controller writes the schemas' status after their first read
    // above, and a PUT of that older state would be a 409, not the 422 checked here.
    let mut changed = get(&kapi, &format!("{SCHEMAS}/exempt"));
    changed["spec"]["matchingPrecedence"] = json!(2);
    let message = invalid(&kapi, "PUT", &format!("{SCHEMAS}/exempt"), &changed);
    assert!(
        message.ends_with(": spec of 'exempt' must equal the fixed value"),
        "{message}"
    );

    // At the next start, kube's ensurer revises what it may: the exempt level's tuning
    // and a changed suggested level go back to kube's spec while annotated "true"; one
    // annotated "false" is left; a deleted suggested schema is created again.
    let annotate = |value: &str| json!({"apf.kubernetes.io/autoupdate-spec": value});
    let shares = json!({"spec": {"limited": {"nominalConcurrencyShares": 7}}});
    for (name, annotations) in [
        ("workload-high", annotate("true")),
        ("workload-low", annotate("false")),
    ] {
        let mut patch = shares.clone();
        patch["metadata"] = json!({"annotations": annotations});
        let (code, obj) = kapi.request("PATCH", &format!("{LEVELS}/{name}"), MERGE, Some(&patch));
        assert_eq!(code, 200, "{obj}");
    }
    let (code, status) = kapi.request("DELETE", &format!("{SCHEMAS}/probes"), JSON, None);
    assert_eq!(code, 200, "{status}");
    kapi.restart(&[]);
    let shares_of = |name: &str| {
        let obj = get(&kapi, &format!("{LEVELS}/{name}"));
        let spec = &obj["spec"];
        let shares = spec["limited"]["nominalConcurrencyShares"].clone();
        (spec["exempt"]["nominalConcurrencyShares"].clone(), shares)
    };
    assert_eq!(shares_of("exempt"), (json!(0), Value::Null));
    assert_eq!(shares_of("workload-high"), (Value::Null, json!(40)));
    assert_eq!(shares_of("workload-low"), (Value::Null, json!(7)));
    let probes = get(&kapi, &format!("{SCHEMAS}/probes"));
    assert_eq!(probes["spec"]["matchingPrecedence"], 2, "{probes}");
}

#[test]
fn priority_level_configurations() {
    let kapi = Kapi::start(Backend::Embedded);
    // v1 defaults: 30 shares, nothing lendable, kube's queuing; an explicit 0 stays.
    let queued = create(
        &kapi,
        LEVELS,
        level(
            "batch",
            json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}),
        ),
    );
    assert_eq!(
        queued["spec"]["limited"],
        json!({
            "nominalConcurrencyShares": 30, "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {
                "queues": 64, "handSize": 8, "queueLengthLimit": 50,
            }},
        })
    );
    assert_eq!(queued["metadata"]["generation"], 1, "{queued}");
    let jail = create(
        &kapi,
        LEVELS,
        level(
            "jail",
            json!({"type": "Limited", "limited": {
                "nominalConcurrencyShares": 0, "limitResponse": {"type": "Reject"},
            }}),
        ),
    );
    assert_eq!(jail["spec"]["limited"]["nominalConcurrencyShares"], 0);

    // ValidatePriorityLevelConfiguration, in kube's words.
    let prefix = "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io";
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            LEVELS,
            &level(
                "bad",
                json!({"type": "Limited", "limited": {
                    "lendablePercent": 101,
                    "borrowingLimitPercent": -1,
                    "limitResponse": {"type": "Queue", "queuing": {
                        "queues": 4, "handSize": 5, "queueLengthLimit": -1,
                    }},
                }}),
            )
        ),
        format!(
            "{prefix} \"bad\" is invalid: [spec.limited.limitResponse.queuing.queueLengthLimit: \
             Invalid value: -1: must be positive, spec.limited.limitResponse.queuing.handSize: \
             Invalid value: 5: should not be greater than queues (4), \
             spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, \
             inclusive, spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, \
             must be a non-negative integer]"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            LEVELS,
            &level(
                "wide",
                json!({"type": "Limited", "limited": {"limitResponse": {
                    "type": "Queue", "queuing": {"queues": 128, "handSize": 9},
                }}}),
            )
        ),
        format!(
            "{prefix} \"wide\" is invalid: spec.limited.limitResponse.queuing.handSize: Invalid \
             value: 9: required entropy bits of deckSize 128 and handSize 9 should not be \
             greater than 60"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            LEVELS,
            &level(
                "mixed",
                json!({"type": "Limited", "exempt": {}, "limited": {"limitResponse": {
                    "type": "Reject", "queuing": {},
                }}}),
            )
        ),
        format!(
            "{prefix} \"mixed\" is invalid: [spec.exempt: Forbidden: must be nil if the type is \
             Limited, spec.limited.limitResponse.queuing: Forbidden: must be nil if \
             limited.limitResponse.type is not Limited]"
        )
    );
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            LEVELS,
            &level("free", json!({"type": "Exempt"}))
        ),
        format!(
            "{prefix} \"free\" is invalid: spec.type: Invalid value: \"Exempt\": type must be \
             'Exempt' if and only if name is 'exempt'"
        )
    );

    // Status only through /status; the generation follows the spec alone.
    let path = format!("{LEVELS}/batch");
    let condition = json!({"type": "ConcurrencyShared", "status": "True", "reason": "Test"});
    let mut with_status = queued.clone();
    with_status["status"] = json!({"conditions": [condition]});
    with_status["metadata"]["labels"] = json!({"tier": "batch"});
    let updated = update(&kapi, &path, &with_status);
    assert_eq!(updated["status"], json!({}), "{updated}");
    assert_eq!(updated["metadata"]["generation"], 1, "{updated}");
    let mut with_status = updated.clone();
    with_status["status"] = json!({"conditions": [condition]});
    let updated = update(&kapi, &format!("{path}/status"), &with_status);
    assert_eq!(
        updated["status"]["conditions"][0]["type"],
        "ConcurrencyShared"
    );
    let (code, patched) = kapi.request(
        "PATCH",
        &path,
        MERGE,
        Some(&json!({"spec": {"limited": {"nominalConcurrencyShares": 40}}})),
    );
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 2, "{patched}");
    assert_eq!(
        patched["status"]["conditions"][0]["type"],
        "ConcurrencyShared"
    );
    let mut twice = patched.clone();
    twice["status"] = json!({"conditions": [{"type": ""}]});
    assert_eq!(
        invalid(&kapi, "PUT", &format!("{path}/status"), &twice),
        format!(
            "{prefix} \"batch\" is invalid: status.conditions[0].type: Required value: must not be empty"
        )
    );
    assert_eq!(
        row(&kapi, LEVELS, "batch", LEVEL_COLUMNS),
        vec![
            json!("Limited"),
            json!("40"),
            json!("64"),
            json!("8"),
            json!("50")
        ]
    );
}

#[test]
fn flow_schemas() {
    let kapi = Kapi::start(Backend::Embedded);
    // matchingPrecedence defaults to 1000.
    let spec = json!({
        "priorityLevelConfiguration": {"name": "workload-low"},
        "rules": [{
            "subjects": [{"kind": "Group", "group": {"name": "batch"}}],
            "resourceRules": [{
                "verbs": ["list", "watch"], "apiGroups": ["batch"], "resources": ["jobs"],
                "namespaces": ["*"],
            }],
        }],
    });
    let created = create(&kapi, SCHEMAS, schema("batch", spec));
    assert_eq!(created["spec"]["matchingPrecedence"], 1000, "{created}");
    assert_eq!(created["metadata"]["generation"], 1, "{created}");
    assert_eq!(created["status"], json!({}), "{created}");

    // ValidateFlowSchema, in kube's words.
    let bad = json!({
        "priorityLevelConfiguration": {"name": "workload-low"},
        "matchingPrecedence": 1,
        "distinguisherMethod": {"type": "ByFoo"},
        "rules": [{
            "subjects": [{"kind": "User"}, {"kind": "Robot"}],
            "resourceRules": [{
                "verbs": ["*", "get"], "apiGroups": [""], "resources": ["pods"],
            }],
            "nonResourceRules": [{"verbs": ["fly"], "nonResourceURLs": ["healthz"]}],
        }],
    });
    assert_eq!(
        invalid(&kapi, "POST", SCHEMAS, &schema("bad", bad)),
        "FlowSchema.flowcontrol.apiserver.k8s.io \"bad\" is invalid: \
         [spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have \
         matchingPrecedence 1, spec.distinguisherMethod.type: Unsupported value: \
         flowcontrol.FlowDistinguisherMethod{Type:\"ByFoo\"}: supported values: \
         \"ByNamespace\", \"ByUser\", spec.rules[0].subjects[0].user: Required value: user is \
         required when subject kind is 'User', spec.rules[0].subjects[1].kind: Unsupported \
         value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\", \
         spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if \
         '*' is present, must not specify other verbs, \
         spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are \
         not cluster scoped must supply at least one namespace, \
         spec.rules[0].nonResourceRules[0].verbs: Unsupported value: []string{\"fly\"}: \
         supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \
         \"patch\", \"proxy\", \"update\", \"watch\", \
         spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": \
         must start with slash]"
    );
    let empty = json!({
        "priorityLevelConfiguration": {"name": ""},
        "matchingPrecedence": 10001,
        "rules": [{"subjects": []}],
    });
    assert_eq!(
        invalid(&kapi, "POST", SCHEMAS, &schema("empty", empty)),
        "FlowSchema.flowcontrol.apiserver.k8s.io \"empty\" is invalid: \
         [spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000, \
         spec.priorityLevelConfiguration.name: Required value: must reference a priority \
         level, spec.rules[0].subjects: Required value: subjects must contain at least one \
         value, spec.rules[0]: Required value: at least one of resourceRules and \
         nonResourceRules has to be non-empty]"
    );

    // kube-apiserver's config controller writes the Dangling condition, which shows as
    // MissingPL: False while the level named exists.
    let path = format!("{SCHEMAS}/batch");
    let found = dangling(&kapi, &path, "False");
    assert_eq!(found["reason"], "Found", "{found}");
    assert_eq!(
        found["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"workload-low\" \
         and it exists"
    );
    // Status only through /status: an update of the object keeps the stored one.
    let stored = get(&kapi, &path);
    let mut with_status = stored.clone();
    with_status["status"] = json!({"conditions": []});
    assert_eq!(
        update(&kapi, &path, &with_status)["status"],
        stored["status"]
    );
    assert_eq!(
        row(&kapi, SCHEMAS, "batch", SCHEMA_COLUMNS),
        vec![
            json!("workload-low"),
            json!("1000"),
            json!("<none>"),
            json!("False")
        ]
    );
    let (code, patched) = kapi.request(
        "PATCH",
        &path,
        MERGE,
        Some(&json!({"spec": {"distinguisherMethod": {"type": "ByNamespace"}}})),
    );
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 2, "{patched}");
    assert_eq!(
        row(&kapi, SCHEMAS, "batch", SCHEMA_COLUMNS),
        vec![
            json!("workload-low"),
            json!("1000"),
            json!("ByNamespace"),
            json!("False")
        ]
    );

    // A schema naming a level that does not exist is Dangling until the level appears.
    let orphan = json!({
        "priorityLevelConfiguration": {"name": "nowhere"},
        "rules": [{"subjects": [{"kind": "Group", "group": {"name": "lost"}}],
                   "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/lost"]}]}],
    });
    create(&kapi, SCHEMAS, schema("orphan", orphan));
    let orphan_path = format!("{SCHEMAS}/orphan");
    let missing = dangling(&kapi, &orphan_path, "True");
    assert_eq!(missing["reason"], "NotFound", "{missing}");
    assert_eq!(
        missing["message"],
        "This FlowSchema references the PriorityLevelConfiguration object named \"nowhere\" \
         but there is no such object"
    );
    assert_eq!(
        row(&kapi, SCHEMAS, "orphan", SCHEMA_COLUMNS)[3],
        json!("True")
    );
    create(
        &kapi,
        LEVELS,
        level(
            "nowhere",
            json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}),
        ),
    );
    let now_found = dangling(&kapi, &orphan_path, "False");
    assert_eq!(now_found["reason"], "Found", "{now_found}");

    // kubectl prints kube's columns.
    let rows = kubectl_rows(&kapi, &["get", "flowschemas", "batch"]);
    assert_eq!(
        rows,
        vec![
            strs(&[
                "NAME",
                "PRIORITYLEVEL",
                "MATCHINGPRECEDENCE",
                "DISTINGUISHERMETHOD",
                "MISSINGPL"
            ]),
            strs(&["batch", "workload-low", "1000", "ByNamespace", "False"]),
        ]
    );
}
