//! The cluster-wide classes among the built-ins against a real server, as
//! `builtins_core.rs` tests kinds (kube's defaults, messages, immutable fields and
//! Table cells): PriorityClass, IngressClass and RuntimeClass.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/builtins.rs"]
mod support;
use support::*;

const PRIORITY_CLASSES: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";

fn priority_class(name: &str, fields: Value) -> Value {
    let mut pc = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}});
    for (k, v) in fields.as_object().expect("fields") {
        pc[k] = v.clone();
    }
    pc
}

#[test]
fn priority_classes() {
    let kapi = Kapi::start(Backend::Embedded);
    // kube-apiserver's two system classes exist from the start.
    for (name, value, description) in [
        (
            "system-node-critical",
            2000001000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        (
            "system-cluster-critical",
            2000000000,
            "Used for system critical pods that must run in the cluster, but can be moved to \
             another node if necessary.",
        ),
    ] {
        let (code, pc) = kapi.request("GET", &format!("{PRIORITY_CLASSES}/{name}"), JSON, None);
        assert_eq!(code, 200, "{pc}");
        assert_eq!(
            (
                &pc["value"],
                &pc["description"],
                &pc["preemptionPolicy"],
                pc.get("globalDefault")
            ),
            (
                &json!(value),
                &json!(description),
                &json!("PreemptLowerPriority"),
                None
            ),
            "{pc}"
        );
    }

    // preemptionPolicy defaults; the generation is 1 and stays so.
    let high = create(
        &kapi,
        PRIORITY_CLASSES,
        priority_class("high", json!({"value": 1000, "description": "important"})),
    );
    assert_eq!(high["preemptionPolicy"], "PreemptLowerPriority", "{high}");
    assert_eq!(high["metadata"]["generation"], 1, "{high}");
    let high_path = format!("{PRIORITY_CLASSES}/high");
    let mut described = high.clone();
    described["description"] = json!("very important");
    let updated = update(&kapi, &high_path, &described);
    assert_eq!(updated["description"], "very important");
    assert_eq!(updated["metadata"]["generation"], 1, "{updated}");

    // ValidatePriorityClass, in kube's words.
    let reserved = "PriorityClass.scheduling.k8s.io \"{name}\" is invalid: metadata.name: \
                    Forbidden: priority class names with 'system-' prefix are reserved for \
                    system use only. error: ";
    for (name, fields, why) in [
        (
            "system-mine",
            json!({"value": 10}),
            "system-mine is not a known system priority class",
        ),
        (
            "system-node-critical",
            json!({"value": 10}),
            "value of system-node-critical PriorityClass must be 2000001000",
        ),
        (
            "system-cluster-critical",
            json!({"value": 2000000000, "globalDefault": true}),
            "globalDefault of system-cluster-critical PriorityClass must be false",
        ),
    ] {
        assert_eq!(
            invalid(
                &kapi,
                "POST",
                PRIORITY_CLASSES,
                &priority_class(name, fields)
            ),
            format!("{}{why}", reserved.replace("{name}", name))
        );
    }
    assert_eq!(
        invalid(
            &kapi,
            "POST",
            PRIORITY_CLASSES,
            &priority_class(
                "too-high",
                json!({"value": 1000000001, "preemptionPolicy": "Sometimes"})
            )
        ),
        "PriorityClass.scheduling.k8s.io \"too-high\" is invalid: [value: Forbidden: maximum \
         allowed value of a user defined priority is 1000000000, preemptionPolicy: Unsupported \
         value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\"]"
    );
    // A user class may have the highest user value.
    create(
        &kapi,
        PRIORITY_CLASSES,
        priority_class(
            "highest",
            json!({"value": 1000000000, "preemptionPolicy": "Never"}),
        ),
    );

    // ValidatePriorityClassUpdate: value and preemptionPolicy may not change.
    let mut changed = updated.clone();
    changed["value"] = json!(2000);
    changed["preemptionPolicy"] = json!("Never");
    assert_eq!(
        invalid(&kapi, "PUT", &high_path, &changed),
        "PriorityClass.scheduling.k8s.io \"high\" is invalid: [value: Forbidden: may not be \
         changed in an update., preemptionPolicy: Invalid value: \"Never\": field is immutable]"
    );

    // The Priority admission plugin: one global default at most, 403 otherwise.
    create(
        &kapi,
        PRIORITY_CLASSES,
        priority_class("default-a", json!({"value": 5, "globalDefault": true})),
    );
    let (code, status) = kapi.request(
        "POST",
        PRIORITY_CLASSES,
        JSON,
        Some(&priority_class(
            "default-b",
            json!({"value": 6, "globalDefault": true}),
        )),
    );
    assert_eq!(code, 403, "{status}");
    assert_eq!(
        (&status["reason"], &status["message"]),
        (
            &json!("Forbidden"),
            &json!(
                "priorityclasses.scheduling.k8s.io \"default-b\" is forbidden: PriorityClass \
                 default-a is already marked as default. Only one default can exist"
            )
        ),
        "{status}"
    );
    // The default itself may be updated; another class may not become a default.
    let merge = "application/merge-patch+json";
    let (code, patched) = kapi.request(
        "PATCH",
        &format!("{PRIORITY_CLASSES}/default-a"),
        merge,
        Some(&json!({"description": "the default"})),
    );
    assert_eq!(code, 200, "{patched}");
    let (code, status) = kapi.request(
        "PATCH",
        &high_path,
        merge,
        Some(&json!({"globalDefault": true})),
    );
    assert_eq!(code, 403, "{status}");
    assert_eq!(
        status["message"],
        "priorityclasses.scheduling.k8s.io \"high\" is forbidden: PriorityClass default-a is \
         already marked as default. Only one default can exist"
    );

    // Table cells as kube's printPriorityClass prints them.
    assert_eq!(
        row(
            &kapi,
            PRIORITY_CLASSES,
            "high",
            &["Value", "Global-Default", "PreemptionPolicy"]
        ),
        vec![json!(1000), json!(false), json!("PreemptLowerPriority")]
    );
    let rows = kubectl_rows(&kapi, &["get", "pc"]);
    assert_eq!(
        rows[0],
        strs(&["NAME", "VALUE", "GLOBAL-DEFAULT", "PREEMPTIONPOLICY"])
    );
    for expected in [
        ["default-a", "5", "true", "PreemptLowerPriority"],
        ["highest", "1000000000", "false", "Never"],
        [
            "system-node-critical",
            "2000001000",
            "false",
            "PreemptLowerPriority",
        ],
    ] {
        assert!(rows.contains(&strs(&expected)), "{rows:?}");
    }
}

const INGRESS_CLASSES: &str = "/apis/networking.k8s.io/v1/ingressclasses";

fn ingress_class(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
           "metadata": {"name": name}, "spec": spec})
}

#[test]
fn ingress_classes() {
    let kapi = Kapi::start(Backend::Embedded);
    // The parameters' scope defaults to Cluster; the generation is 1.
    let nginx = create(
        &kapi,
        INGRESS_CLASSES,
        ingress_class(
            "nginx",
            json!({"controller": "k8s.io/ingress-nginx",
                   "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}),
        ),
    );
    assert_eq!(nginx["spec"]["parameters"]["scope"], "Cluster", "{nginx}");
    assert_eq!(nginx["metadata"]["generation"], 1, "{nginx}");
    // kube bumps the generation for a spec change only.
    let nginx_path = format!("{INGRESS_CLASSES}/nginx");
    let mut labelled = nginx.clone();
    labelled["metadata"]["labels"] = json!({"tier": "edge"});
    let labelled = update(&kapi, &nginx_path, &labelled);
    assert_eq!(labelled["metadata"]["generation"], 1, "{labelled}");
    let mut renamed = labelled.clone();
    renamed["spec"]["parameters"]["name"] = json!("internal-lb");
    let renamed = update(&kapi, &nginx_path, &renamed);
    assert_eq!(renamed["metadata"]["generation"], 2, "{renamed}");
    // Leaving the defaulted scope out changes nothing.
    let mut unscoped = renamed.clone();
    unscoped["spec"]["parameters"]
        .as_object_mut()
        .unwrap()
        .remove("scope");
    let unscoped = update(&kapi, &nginx_path, &unscoped);
    assert_eq!(unscoped["metadata"]["generation"], 2, "{unscoped}");

    // ValidateIngressClass, in kube's words.
    let invalid_class = |name: &str, spec: Value| {
        invalid(&kapi, "POST", INGRESS_CLASSES, &ingress_class(name, spec))
    };
    assert_eq!(
        invalid_class("none", json!({})),
        "IngressClass.networking.k8s.io \"none\" is invalid: spec.controller: Required value"
    );
    assert_eq!(
        invalid_class("flat", json!({"controller": "nginx"})),
        "IngressClass.networking.k8s.io \"flat\" is invalid: spec.controller: Invalid value: \
         \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
    );
    assert_eq!(
        invalid_class("spaced", json!({"controller": "acme.io/a b"})),
        "IngressClass.networking.k8s.io \"spaced\" is invalid: spec.controller: Invalid value: \
         \"a b\": Invalid path (regex used for validation is \
         '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"
    );
    assert_eq!(
        invalid_class(
            "long",
            json!({"controller": format!("acme.io/{}", "a".repeat(250))})
        ),
        "IngressClass.networking.k8s.io \"long\" is invalid: spec.controller: Too long: may not \
         be more than 250 bytes"
    );
    assert_eq!(
        invalid_class(
            "params",
            json!({"controller": "acme.io/lb",
                   "parameters": {"kind": "a/b", "name": "..", "scope": "Namespace"}})
        ),
        "IngressClass.networking.k8s.io \"params\" is invalid: [spec.parameters.kind: Invalid \
         value: \"a/b\": may not contain '/', spec.parameters.name: Invalid value: \"..\": may \
         not be '..', spec.parameters.namespace: Required value: `parameters.scope` is set to \
         'Namespace']"
    );
    assert_eq!(
        invalid_class(
            "cluster",
            json!({"controller": "acme.io/lb",
                   "parameters": {"kind": "K", "name": "n", "scope": "Cluster", "namespace": "default"}})
        ),
        "IngressClass.networking.k8s.io \"cluster\" is invalid: spec.parameters.namespace: \
         Forbidden: `parameters.scope` is set to 'Cluster'"
    );
    assert_eq!(
        invalid_class(
            "global",
            json!({"controller": "acme.io/lb",
                   "parameters": {"kind": "K", "name": "n", "scope": "Global"}})
        ),
        "IngressClass.networking.k8s.io \"global\" is invalid: spec.parameters.scope: \
         Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespace\""
    );
    // A namespaced reference with its namespace is fine.
    create(
        &kapi,
        INGRESS_CLASSES,
        ingress_class(
            "namespaced",
            json!({"controller": "acme.io/lb",
                   "parameters": {"kind": "ConfigMap", "name": "lb", "scope": "Namespace", "namespace": "kube-system"}}),
        ),
    );
    create(
        &kapi,
        INGRESS_CLASSES,
        ingress_class("plain", json!({"controller": "acme.io/plain"})),
    );

    // ValidateIngressClassUpdate: the controller is immutable.
    let mut moved = unscoped.clone();
    moved["spec"]["controller"] = json!("other.io/lb");
    assert_eq!(
        invalid(&kapi, "PUT", &nginx_path, &moved),
        "IngressClass.networking.k8s.io \"nginx\" is invalid: spec.controller: Invalid value: \
         \"other.io/lb\": field is immutable"
    );

    // Table cells as kube's printIngressClass prints them.
    assert_eq!(
        row(
            &kapi,
            INGRESS_CLASSES,
            "nginx",
            &["Controller", "Parameters"]
        ),
        vec![
            json!("k8s.io/ingress-nginx"),
            json!("IngressParameters.k8s.example.com/internal-lb")
        ]
    );
    let rows = kubectl_rows(&kapi, &["get", "ingressclasses"]);
    assert_eq!(rows[0], strs(&["NAME", "CONTROLLER", "PARAMETERS"]));
    for expected in [
        ["namespaced", "acme.io/lb", "ConfigMap/lb"],
        ["plain", "acme.io/plain", "<none>"],
    ] {
        assert!(rows.contains(&strs(&expected)), "{rows:?}");
    }
}

const RUNTIME_CLASSES: &str = "/apis/node.k8s.io/v1/runtimeclasses";

fn runtime_class(name: &str, fields: Value) -> Value {
    let mut rc =
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}});
    for (k, v) in fields.as_object().expect("fields") {
        rc[k] = v.clone();
    }
    rc
}

#[test]
fn runtime_classes() {
    let kapi = Kapi::start(Backend::Embedded);
    // No generation, no defaults.
    let runc = create(
        &kapi,
        RUNTIME_CLASSES,
        runtime_class(
            "runc",
            json!({"handler": "runc",
                   "overhead": {"podFixed": {"cpu": "100m", "memory": "64Mi", "example.com/dongle": "1"}},
                   "scheduling": {"nodeSelector": {"kubernetes.io/os": "linux"},
                                  "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}),
        ),
    );
    assert_eq!(runc["metadata"].get("generation"), None, "{runc}");
    assert_eq!(runc["scheduling"]["tolerations"][0]["key"], "sandbox");

    // kube's strategy takes no update without a resourceVersion.
    let runc_path = format!("{RUNTIME_CLASSES}/runc");
    let mut unconditional = runc.clone();
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    assert_eq!(
        invalid(&kapi, "PUT", &runc_path, &unconditional),
        "RuntimeClass.node.k8s.io \"runc\" is invalid: metadata.resourceVersion: Invalid value: \
         0: must be specified for an update"
    );

    // ValidateRuntimeClass, in kube's words.
    let invalid_class = |name: &str, fields: Value| {
        invalid(&kapi, "POST", RUNTIME_CLASSES, &runtime_class(name, fields))
    };
    // kube decodes a missing handler as "" and gives the DNS-label message.
    assert_eq!(
        invalid_class("nohandler", json!({})),
        "RuntimeClass.node.k8s.io \"nohandler\" is invalid: handler: Required value"
    );
    assert_eq!(
        invalid_class("upper", json!({"handler": "Runc_1"})),
        "RuntimeClass.node.k8s.io \"upper\" is invalid: handler: Invalid value: \"Runc_1\": a \
         lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and \
         must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex \
         used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    );
    assert_eq!(
        invalid_class(
            "overhead",
            json!({"handler": "kata",
                   "overhead": {"podFixed": {"cpu": "-1", "example.com/dongle": "500m", "foo": "1"}}})
        ),
        "RuntimeClass.node.k8s.io \"overhead\" is invalid: [overhead.limits[cpu]: Invalid value: \
         \"-1\": must be greater than or equal to 0, overhead.limits[example.com/dongle]: Invalid \
         value: \"500m\": must be an integer, overhead.limits[foo]: Invalid value: \"foo\": must \
         be a standard resource type or fully qualified, overhead.limits[foo]: Invalid value: \
         \"foo\": must be a standard resource for containers]"
    );
    assert_eq!(
        invalid_class(
            "hugepages",
            json!({"handler": "kata", "overhead": {"podFixed": {"hugepages-2Mi": "2Mi"}}})
        ),
        "RuntimeClass.node.k8s.io \"hugepages\" is invalid: overhead: Forbidden: HugePages \
         require cpu or memory"
    );
    let label_value = "a valid label must be an empty string or consist of alphanumeric \
                       characters, '-', '_' or '.', and must start and end with an alphanumeric \
                       character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for \
                       validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    assert_eq!(
        invalid_class(
            "scheduling",
            json!({"handler": "kata", "scheduling": {
            "nodeSelector": {"pool": "-x"},
            "tolerations": [
                {"operator": "Equal", "value": "v"},
                {"key": "k", "operator": "In", "effect": "Sometimes", "tolerationSeconds": 5},
                {"key": "k", "value": "-x"},
            ]}})
        ),
        format!(
            "RuntimeClass.node.k8s.io \"scheduling\" is invalid: [scheduling.nodeSelector: \
             Invalid value: \"-x\": {label_value}, scheduling.tolerations[0].operator: Invalid \
             value: \"Equal\": operator must be Exists when `key` is empty, which means \"match \
             all values and all keys\", scheduling.tolerations[1].effect: Invalid value: \
             \"Sometimes\": effect must be 'NoExecute' when `tolerationSeconds` is set, \
             scheduling.tolerations[1].operator: Unsupported value: \"In\": supported values: \
             \"Equal\", \"Exists\", scheduling.tolerations[1].effect: Unsupported value: \
             \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \
             \"NoExecute\", scheduling.tolerations[2].operator: Invalid value: \"-x\": \
             {label_value}]"
        )
    );
    // A value with Exists, and a toleration twice (kube shows the Go struct as the value).
    let message = invalid_class(
        "tolerations",
        json!({"handler": "kata", "scheduling": {"tolerations": [
            {"key": "k", "operator": "Exists", "value": "v"},
            {"key": "d", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1},
            {"key": "d", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 2},
        ]}}),
    );
    for part in [
        "scheduling.tolerations[0].operator: Invalid value: ",
        ": value must be empty when `operator` is 'Exists'",
        "scheduling.tolerations[2]: Duplicate value: ",
    ] {
        assert!(message.contains(part), "{message}");
    }

    // ValidateRuntimeClassUpdate: the handler is immutable.
    let mut moved = runc.clone();
    moved["handler"] = json!("crun");
    assert_eq!(
        invalid(&kapi, "PUT", &runc_path, &moved),
        "RuntimeClass.node.k8s.io \"runc\" is invalid: handler: Invalid value: \"crun\": field \
         is immutable"
    );
    // Other fields may change.
    let mut relabelled = runc.clone();
    relabelled["scheduling"]["nodeSelector"] = json!({"kubernetes.io/arch": "amd64"});
    let relabelled = update(&kapi, &runc_path, &relabelled);
    assert_eq!(
        relabelled["metadata"].get("generation"),
        None,
        "{relabelled}"
    );

    // Table cells as kube's printRuntimeClass prints them.
    assert_eq!(
        row(&kapi, RUNTIME_CLASSES, "runc", &["Handler"]),
        vec![json!("runc")]
    );
    let rows = kubectl_rows(&kapi, &["get", "runtimeclasses"]);
    assert_eq!(
        rows,
        vec![strs(&["NAME", "HANDLER"]), strs(&["runc", "runc"])]
    );
}

/// Node labels kube has deprecated get kube's warnings where objects select nodes by
/// them: RuntimeClass `scheduling.nodeSelector`, StorageClass `allowedTopologies` and
/// CSIStorageCapacity `nodeTopology`, on create and on update.
#[test]
fn deprecated_node_labels_get_warnings() {
    let kapi = Kapi::start(Backend::Embedded);
    let send = |method: &str, path: &str, body: &Value| {
        let bytes = serde_json::to_vec(body).expect("json");
        let out = kapi.exchange(method, path, JSON, None, Some(&bytes));
        assert!(out.code < 300, "{method} {path}: {}", out.body);
        out.warnings
    };
    let quoted = |w: &str| format!("299 - \"{}\"", w.replace('"', "\\\""));
    let rc = runtime_class(
        "legacy",
        json!({"handler": "runc",
            "scheduling": {"nodeSelector": {"beta.kubernetes.io/arch": "amd64"}}}),
    );
    let want =
        [r#"scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/arch" instead"#]
            .map(quoted);
    assert_eq!(
        send("POST", "/apis/node.k8s.io/v1/runtimeclasses", &rc),
        want
    );
    let path = "/apis/node.k8s.io/v1/runtimeclasses/legacy";
    let (_, mut stored) = kapi.request("GET", path, JSON, None);
    stored["metadata"]["labels"] = json!({"touched": "yes"});
    assert_eq!(send("PUT", path, &stored), want);

    let sc = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "zonal"}, "provisioner": "example.com/disk",
        "allowedTopologies": [{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/region", "values": ["r"]},
            {"key": "failure-domain.beta.kubernetes.io/zone", "values": ["a"]}]}]});
    assert_eq!(
        send("POST", "/apis/storage.k8s.io/v1/storageclasses", &sc),
        [r#"allowedTopologies[0].matchLabelExpressions[1].key: deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#]
            .map(quoted)
    );

    let capacity = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
        "metadata": {"name": "zone-a"}, "storageClassName": "zonal",
        "nodeTopology": {"matchLabels": {"beta.kubernetes.io/instance-type": "big"},
            "matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/region",
                "operator": "In", "values": ["r"]}]}});
    assert_eq!(
        send("POST", "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities", &capacity),
        [
            r#"nodeTopology.matchExpressions[0].key: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead"#,
            r#"nodeTopology.matchLabels.beta.kubernetes.io/instance-type: deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#,
        ]
        .map(quoted)
    );
}
