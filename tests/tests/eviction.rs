//! `pods/eviction` under PodDisruptionBudgets, on both backends, as kube-apiserver's
//! eviction answers: a budget not yet observed, or without disruptions to give, is a
//! 429 in kube's words; an allowed eviction takes one disruption and deletes the pod;
//! pending pods, dry runs and unready pods under `AlwaysAllow` as kube treats them;
//! and `kubectl drain` through it.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const PODS: &str = "/api/v1/namespaces/default/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

fn ok(kapi: &Kapi, method: &str, path: &str, body: &Value) -> Value {
    let (code, out) = kapi.request(method, path, JSON, Some(body));
    assert!(code == 200 || code == 201, "{method} {path}: {code} {out}");
    out
}

/// A pod of the `web` app, running and ready (or not) as a kubelet would report.
fn running_pod(kapi: &Kapi, name: &str, node: Option<&str>, ready: bool) {
    let mut spec = json!({"containers": [{"name": "c", "image": "nginx"}]});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    let mut pod = ok(
        kapi,
        "POST",
        PODS,
        &json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "web"}}, "spec": spec}),
    );
    let status = if ready { "True" } else { "False" };
    pod["status"] = json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": status}]});
    ok(kapi, "PUT", &format!("{PODS}/{name}/status"), &pod);
}

/// The budget's status as a disruption controller would write it.
fn budget_status(kapi: &Kapi, allowed: i64, current: i64, desired: i64) -> Value {
    let path = format!("{PDBS}/web");
    let (_, mut pdb) = kapi.request("GET", &path, JSON, None);
    pdb["status"] = json!({"observedGeneration": pdb["metadata"]["generation"],
        "disruptionsAllowed": allowed, "currentHealthy": current, "desiredHealthy": desired,
        "expectedPods": 2});
    ok(kapi, "PUT", &format!("{path}/status"), &pdb)
}

fn evict(kapi: &Kapi, name: &str, delete_options: Value) -> (u16, Value) {
    let mut eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name, "namespace": "default"}});
    if !delete_options.is_null() {
        eviction["deleteOptions"] = delete_options;
    }
    kapi.request(
        "POST",
        &format!("{PODS}/{name}/eviction"),
        JSON,
        Some(&eviction),
    )
}

fn exists(kapi: &Kapi, name: &str) -> bool {
    kapi.request("GET", &format!("{PODS}/{name}"), JSON, None).0 == 200
}

fn refused(kapi: &Kapi, name: &str, cause: &str) {
    let (code, status) = evict(kapi, name, Value::Null);
    assert_eq!(
        (code, &status["reason"], &status["message"]),
        (
            429,
            &json!("TooManyRequests"),
            &json!("Cannot evict pod as it would violate the pod's disruption budget.")
        ),
        "{status}"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "DisruptionBudget", "message": cause}])
    );
    assert!(exists(kapi, name), "{name} is kept");
}

fn budgets_decide_evictions(backend: Backend) {
    let kapi = Kapi::start(backend);
    ok(
        &kapi,
        "POST",
        PDBS,
        &json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    running_pod(&kapi, "web-1", None, true);
    running_pod(&kapi, "web-2", None, true);

    refused(
        &kapi,
        "web-1",
        "The disruption budget web is still being processed by the server.",
    );
    budget_status(&kapi, 0, 1, 1);
    refused(
        &kapi,
        "web-1",
        "The disruption budget web needs 1 healthy pods and has 1 currently",
    );

    // A dry run takes nothing and deletes nothing.
    budget_status(&kapi, 1, 2, 1);
    let (code, out) = evict(&kapi, "web-1", json!({"dryRun": ["All"]}));
    assert_eq!(code, 201, "{out}");
    assert!(exists(&kapi, "web-1"));
    let (_, pdb) = kapi.request("GET", &format!("{PDBS}/web"), JSON, None);
    assert_eq!(pdb["status"]["disruptionsAllowed"], 1, "{pdb}");

    let (code, out) = evict(&kapi, "web-1", Value::Null);
    assert_eq!(
        (code, &out),
        (
            201,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Success", "code": 201})
        )
    );
    assert!(!exists(&kapi, "web-1"), "web-1 is deleted");
    let (_, pdb) = kapi.request("GET", &format!("{PDBS}/web"), JSON, None);
    let status = &pdb["status"];
    assert_eq!(status["disruptionsAllowed"], 0, "{pdb}");
    assert!(status["disruptedPods"]["web-1"].is_string(), "{pdb}");
    assert_eq!(
        (
            &status["conditions"][0]["type"],
            &status["conditions"][0]["status"],
            &status["conditions"][0]["reason"]
        ),
        (
            &json!("DisruptionAllowed"),
            &json!("False"),
            &json!("InsufficientPods")
        ),
        "{pdb}"
    );
    refused(
        &kapi,
        "web-2",
        "The disruption budget web needs 1 healthy pods and has 2 currently",
    );

    // A pending pod is not protected.
    ok(
        &kapi,
        "POST",
        PODS,
        &json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-3", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    );
    assert_eq!(evict(&kapi, "web-3", Value::Null).0, 201);
    assert!(!exists(&kapi, "web-3"));

    // An unready pod goes, without taking a disruption, while the budget is healthy
    // (IfHealthyBudget, the default)...
    running_pod(&kapi, "web-4", None, false);
    budget_status(&kapi, 0, 1, 1);
    assert_eq!(evict(&kapi, "web-4", Value::Null).0, 201);
    assert!(!exists(&kapi, "web-4"));
    // ...and not while it is not...
    running_pod(&kapi, "web-5", None, false);
    budget_status(&kapi, 0, 0, 1);
    refused(
        &kapi,
        "web-5",
        "The disruption budget web needs 1 healthy pods and has 0 currently",
    );
    // ...unless the budget says AlwaysAllow.
    let path = format!("{PDBS}/web");
    let (_, mut pdb) = kapi.request("GET", &path, JSON, None);
    pdb["spec"]["unhealthyPodEvictionPolicy"] = json!("AlwaysAllow");
    ok(&kapi, "PUT", &path, &pdb);
    budget_status(&kapi, 0, 0, 1);
    assert_eq!(evict(&kapi, "web-5", Value::Null).0, 201);
    assert!(!exists(&kapi, "web-5"));

    let (code, out) = kapi.request(
        "POST",
        &format!("{PODS}/web-2/eviction"),
        JSON,
        Some(
            &json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "other"}}),
        ),
    );
    assert_eq!(
        (code, &out["message"]),
        (
            400,
            &json!("name in URL does not match name in Eviction object")
        )
    );
}

#[test]
fn budgets_decide_evictions_on_both_backends() {
    for (_, backend) in Backend::all() {
        budgets_decide_evictions(backend());
    }
}

#[test]
fn discovery_and_kubectl_drain() {
    let kapi = Kapi::start(Backend::Embedded);
    let (_, core) = kapi.request("GET", "/api/v1", JSON, None);
    let eviction = core["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == "pods/eviction"))
        .cloned();
    assert_eq!(
        eviction,
        Some(
            json!({"name": "pods/eviction", "singularName": "", "namespaced": true,
            "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})
        )
    );

    ok(
        &kapi,
        "POST",
        "/api/v1/nodes",
        &json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
    );
    ok(
        &kapi,
        "POST",
        PDBS,
        &json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}}}),
    );
    running_pod(&kapi, "web-1", Some("n1"), true);
    budget_status(&kapi, 0, 1, 1);
    let out = kapi.kubectl_version(None, &["drain", "n1", "--force", "--timeout=2s"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{stderr}"
    );
    budget_status(&kapi, 1, 1, 0);
    let out = kapi.kubectl(&["drain", "n1", "--force", "--timeout=20s"]);
    assert!(out.contains("evicted"), "{out}");
    assert!(out.contains("node/n1 drained"), "{out}");
    assert!(!exists(&kapi, "web-1"));
}
