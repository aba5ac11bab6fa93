//! Server-side apply, without field ownership: the applied configuration creates a
//! missing object and is merged into an existing one by the schema's list types and
//! map keys; `fieldManager` is required as in kube-apiserver.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const APPLY: &str = "application/apply-patch+yaml";
const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";

fn config(ports: Value) -> Value {
    json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
           "metadata": {"name": "w"}, "spec": {"color": "red", "ports": ports}})
}

#[test]
fn apply_creates_then_merges_by_the_schema() {
    let kapi = Kapi::start(Backend::Embedded);
    let path = format!("{WIDGETS}/w?fieldManager=test");
    let (code, created) = kapi.request(
        "PATCH",
        &path,
        APPLY,
        Some(&config(json!([{"name": "http", "port": 80}]))),
    );
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["spec"]["replicas"], 1, "defaults applied");
    // A list of type map merges by its key: a new port joins, a known one changes.
    let (code, merged) = kapi.request(
        "PATCH",
        &path,
        APPLY,
        Some(&config(
            json!([{"name": "metrics", "port": 9090}, {"name": "http", "port": 8080}]),
        )),
    );
    assert_eq!(code, 200, "{merged}");
    assert_eq!(
        merged["spec"]["ports"],
        json!([{"name": "http", "port": 8080}, {"name": "metrics", "port": 9090}])
    );
    assert_eq!(merged["metadata"]["generation"], 2);
    // Validation runs as on any write.
    let (code, refused) = kapi.request(
        "PATCH",
        &path,
        APPLY,
        Some(&config(json!([{"name": "http", "port": 0}]))),
    );
    assert_eq!(code, 422, "{refused}");

    let (code, status) = kapi.request(
        "PATCH",
        &format!("{WIDGETS}/w"),
        APPLY,
        Some(&config(json!([]))),
    );
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "FieldValueRequired"
    );
}

#[test]
fn kubectl_apply_server_side_creates_and_updates() {
    let kapi = Kapi::start(Backend::Embedded);
    let manifest = |replicas: u32| {
        format!(
            "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: ssa\n  namespace: default\nspec:\n  color: blue\n  replicas: {replicas}\n"
        )
    };
    let first = kapi.kubectl_ok(
        None,
        &["apply", "--server-side", "-f", "-"],
        Some(&manifest(2)),
    );
    assert_eq!(
        first.trim(),
        "widget.example.kapi.dev/ssa serverside-applied"
    );
    let second = kapi.kubectl_ok(
        None,
        &["apply", "--server-side", "-f", "-"],
        Some(&manifest(4)),
    );
    assert_eq!(
        second.trim(),
        "widget.example.kapi.dev/ssa serverside-applied"
    );
    let replicas = kapi.kubectl(&["get", "widget", "ssa", "-o", "jsonpath={.spec.replicas}"]);
    assert_eq!(replicas, "4");
}
