//! Server-side apply with field ownership, over raw HTTP on both backends and with
//! every kubectl release: `managedFields` on every write, fields removed when their
//! applier drops them (and kept while another manager still applies them), conflicts
//! in kube's words and `force`, list-map items owned per key, set items, atomic lists
//! replaced whole, the status subresource's manager apart, apply to create, dry runs,
//! no-op applies, and kubectl's move from client-side apply.

use kapi_tests::{Backend, Kapi, kubectl_versions};
use serde_json::{Value, json};

const APPLY: &str = "application/apply-patch+yaml";
const MERGE: &str = "application/merge-patch+json";
const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles";

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
           "metadata": {"name": "w"}, "spec": spec})
}

/// Applies `config` to widget `w` as `manager` (with `extra` query parameters).
fn apply(kapi: &Kapi, manager: &str, extra: &str, config: &Value) -> (u16, Value) {
    let path = format!("{WIDGETS}/w?fieldManager={manager}{extra}");
    kapi.request("PATCH", &path, APPLY, Some(config))
}

/// The `managedFields` entry of `manager`, if any.
fn entry<'a>(obj: &'a Value, manager: &str) -> Option<&'a Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager)
}

fn fields<'a>(obj: &'a Value, manager: &str) -> &'a Value {
    &entry(obj, manager).unwrap_or_else(|| panic!("no entry of {manager}: {obj}"))["fieldsV1"]
}

fn rv(obj: &Value) -> &str {
    obj["metadata"]["resourceVersion"].as_str().unwrap_or("")
}

#[test]
fn ownership_removal_and_conflicts_over_http() {
    for (name, backend) in Backend::all() {
        let kapi = Kapi::start(backend());
        ownership_scenario(&kapi, name);
    }
}

fn ownership_scenario(kapi: &Kapi, backend: &str) {
    let alice = widget(json!({"color": "red", "replicas": 2,
                              "ports": [{"name": "http", "port": 80}], "tags": ["a"]}));
    let (code, created) = apply(kapi, "alice", "", &alice);
    assert_eq!(code, 201, "{backend}: {created}");
    let e = entry(&created, "alice").expect("alice's entry");
    assert_eq!(
        (&e["operation"], &e["apiVersion"], &e["fieldsType"]),
        (
            &json!("Apply"),
            &json!("example.kapi.dev/v1"),
            &json!("FieldsV1")
        )
    );
    assert_eq!(
        e["fieldsV1"],
        json!({"f:spec": {"f:color": {}, "f:replicas": {},
                          "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
                          "f:tags": {"v:\"a\"": {}}}}),
        "{backend}"
    );
    // Defaults are nobody's: the applier owns what it applied.
    assert_eq!(created["spec"]["size"], "medium");

    // Applying the same again writes nothing.
    let (code, same) = apply(kapi, "alice", "", &alice);
    assert_eq!(code, 200, "{same}");
    assert_eq!(rv(&same), rv(&created), "{backend}: a no-op apply wrote");
    // A dry run answers the change and keeps the stored object.
    let dry = widget(json!({"color": "red", "replicas": 4}));
    let (code, answered) = apply(kapi, "alice", "&dryRun=All", &dry);
    assert_eq!((code, &answered["spec"]["replicas"]), (200, &json!(4)));
    let (_, stored) = kapi.request("GET", &format!("{WIDGETS}/w"), "", None);
    assert_eq!(stored["spec"]["replicas"], 2);
    assert_eq!(rv(&stored), rv(&created));

    // Another applier changing alice's field is refused, in kube's words...
    let (code, status) = apply(kapi, "bob", "", &widget(json!({"replicas": 3})));
    assert_eq!(code, 409, "{backend}: {status}");
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"",
                "field": ".spec.replicas"}])
    );
    // ...but the same value is shared, and new list items and set values are bob's.
    let shared =
        widget(json!({"replicas": 2, "ports": [{"name": "metrics", "port": 9090}], "tags": ["b"]}));
    let (code, both) = apply(kapi, "bob", "", &shared);
    assert_eq!(code, 200, "{both}");
    assert_eq!(
        both["spec"]["ports"],
        json!([{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}])
    );
    assert_eq!(both["spec"]["tags"], json!(["a", "b"]));
    assert_eq!(
        fields(&both, "bob"),
        &json!({"f:spec": {"f:replicas": {},
                           "f:ports": {"k:{\"name\":\"metrics\"}": {".": {}, "f:name": {}, "f:port": {}}},
                           "f:tags": {"v:\"b\"": {}}}})
    );

    // A field stays while one of its appliers still applies it.
    let alice_drops =
        widget(json!({"color": "red", "ports": [{"name": "http", "port": 80}], "tags": ["a"]}));
    let (code, kept) = apply(kapi, "alice", "", &alice_drops);
    assert_eq!(
        (code, &kept["spec"]["replicas"]),
        (200, &json!(2)),
        "{kept}"
    );
    // Bob drops his port and the field: both go (replicas back to its default).
    let (code, dropped) = apply(kapi, "bob", "", &widget(json!({"tags": ["b"]})));
    assert_eq!(code, 200, "{dropped}");
    assert_eq!(
        dropped["spec"]["ports"],
        json!([{"name": "http", "port": 80}])
    );
    assert_eq!(dropped["spec"]["replicas"], 1, "removed, then defaulted");

    // Changing alice's port is a conflict; forced, bob takes it.
    let (code, status) = apply(
        kapi,
        "bob",
        "",
        &widget(json!({"tags": ["b"], "ports": [{"name": "http", "port": 81}]})),
    );
    assert_eq!(code, 409, "{status}");
    let forced = widget(json!({"tags": ["b"], "ports": [{"name": "http", "port": 81}]}));
    let (code, taken) = apply(kapi, "bob", "&force=true", &forced);
    assert_eq!(code, 200, "{taken}");
    assert_eq!(
        taken["spec"]["ports"],
        json!([{"name": "http", "port": 81}])
    );
    let alice_fields = fields(&taken, "alice");
    assert!(
        alice_fields["f:spec"]["f:ports"]["k:{\"name\":\"http\"}"]
            .get("f:port")
            .is_none(),
        "alice still owns the port: {alice_fields}"
    );

    // The status subresource's writer is its own manager.
    let status_path = format!("{WIDGETS}/w/status?fieldManager=controller");
    let patch = json!({"status": {"readyReplicas": 1}});
    let (code, with_status) = kapi.request("PATCH", &status_path, MERGE, Some(&patch));
    assert_eq!(code, 200, "{with_status}");
    let e = entry(&with_status, "controller").expect("the controller's entry");
    assert_eq!(
        (&e["operation"], &e["subresource"]),
        (&json!("Update"), &json!("status"))
    );
    assert_eq!(
        e["fieldsV1"],
        json!({"f:status": {".": {}, "f:readyReplicas": {}}})
    );
    assert_eq!(fields(&with_status, "bob"), fields(&taken, "bob"));
    // Updates are named by their manager and version; an empty list resets.
    let edit = json!({"spec": {"labels": {"team": "x"}}});
    let path = format!("{WIDGETS}/w?fieldManager=editor");
    let (code, edited) = kapi.request("PATCH", &path, MERGE, Some(&edit));
    assert_eq!(code, 200, "{edited}");
    let e = entry(&edited, "editor").expect("the editor's entry");
    assert_eq!(
        (&e["operation"], &e["apiVersion"]),
        (&json!("Update"), &json!("example.kapi.dev/v1"))
    );
    let reset = json!({"metadata": {"managedFields": [{}]}});
    let (code, untracked) = kapi.request("PATCH", &format!("{WIDGETS}/w"), MERGE, Some(&reset));
    assert_eq!(code, 200, "{untracked}");
    assert!(
        untracked["metadata"].get("managedFields").is_none(),
        "{untracked}"
    );
    // The next apply starts by recording what was there, which it then shares.
    let (code, restarted) = apply(kapi, "alice", "", &widget(json!({"color": "red"})));
    assert_eq!(code, 200, "{restarted}");
    assert!(
        entry(&restarted, "before-first-apply").is_some(),
        "{restarted}"
    );

    // Apply through a subresource never creates; a bad configuration is a 400.
    let (code, _) = kapi.request(
        "PATCH",
        &format!("{WIDGETS}/nope/status?fieldManager=a"),
        APPLY,
        Some(&json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget", "metadata": {"name": "nope"}})),
    );
    assert_eq!(code, 404);
    let wrong =
        json!({"apiVersion": "example.kapi.dev/v2", "kind": "Widget", "metadata": {"name": "w"}});
    let (code, status) = apply(kapi, "alice", "", &wrong);
    assert_eq!(code, 400, "{status}");
    assert_eq!(
        status["message"],
        "invalid object type: example.kapi.dev/v2, Kind=Widget"
    );
}

#[test]
fn atomic_lists_are_replaced_whole_and_owned_whole() {
    let kapi = Kapi::start(Backend::Embedded);
    let role = |verbs: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "r"},
               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": verbs}]})
    };
    let path = |manager: &str, extra: &str| format!("{ROLES}/r?fieldManager={manager}{extra}");
    let (code, created) = kapi.request(
        "PATCH",
        &path("alice", ""),
        APPLY,
        Some(&role(json!(["get"]))),
    );
    assert_eq!(code, 201, "{created}");
    assert_eq!(fields(&created, "alice"), &json!({"f:rules": {}}));
    let (code, status) = kapi.request(
        "PATCH",
        &path("bob", ""),
        APPLY,
        Some(&role(json!(["list"]))),
    );
    assert_eq!(code, 409, "{status}");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .rules"
    );
    let (code, taken) = kapi.request(
        "PATCH",
        &path("bob", "&force=true"),
        APPLY,
        Some(&role(json!(["list"]))),
    );
    assert_eq!(code, 200, "{taken}");
    assert_eq!(taken["rules"][0]["verbs"], json!(["list"]));
    assert!(
        entry(&taken, "alice").is_none(),
        "alice owned only the rules"
    );
}

/// The applies a kubectl user makes, with every kubectl release, on both backends.
#[test]
fn kubectl_server_side_apply_with_every_release() {
    for (_, backend) in Backend::all() {
        kubectl_scenario(&Kapi::start(backend()));
    }
}

fn kubectl_scenario(kapi: &Kapi) {
    for version in kubectl_versions() {
        let name = format!("ssa-{}", version.replace('.', "-"));
        let manifest = |data: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n{data}"
            )
        };
        let v = Some(version.as_str());
        let ssa = ["apply", "--server-side", "-f", "-"];
        let out = kapi.kubectl_ok(v, &ssa, Some(&manifest("  a: \"1\"\n  b: \"2\"\n")));
        assert_eq!(
            out.trim(),
            format!("configmap/{name} serverside-applied"),
            "{version}"
        );
        // A field dropped from the manifest leaves the cluster.
        kapi.kubectl_ok(v, &ssa, Some(&manifest("  a: \"1\"\n")));
        let data = kapi.kubectl_ok(v, &["get", "cm", &name, "-o", "jsonpath={.data}"], None);
        assert_eq!(data, r#"{"a":"1"}"#, "{version}");
        // Another manager's change is a conflict, unless forced.
        let other = ["apply", "--server-side", "--field-manager=other", "-f", "-"];
        let out = kapi.kubectl_version(v, &other, Some(&manifest("  a: \"2\"\n")));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{version}: {stderr}");
        assert!(
            stderr.contains("Apply failed with 1 conflict: conflict with \"kubectl\": .data.a"),
            "{version}: {stderr}"
        );
        let forced = [
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            "-",
        ];
        kapi.kubectl_ok(v, &forced, Some(&manifest("  a: \"2\"\n")));
        let shown = kapi.kubectl_ok(
            v,
            &[
                "get",
                "cm",
                &name,
                "-o",
                "jsonpath={.metadata.managedFields[*].manager}",
            ],
            None,
        );
        assert_eq!(shown, "other", "{version}");
        // `kubectl diff --server-side` shows what an apply would change (exit 1).
        let diff = kapi.kubectl_version(
            v,
            &["diff", "--server-side", "--field-manager=other", "-f", "-"],
            Some(&manifest("  a: \"3\"\n")),
        );
        let text = String::from_utf8_lossy(&diff.stdout);
        assert_eq!(diff.status.code(), Some(1), "{version}: {text}");
        assert!(
            text.contains("-  a: \"2\"") && text.contains("+  a: \"3\""),
            "{version}: {text}"
        );
    }
}

/// An object made by client-side `kubectl apply` moves to server-side apply as with
/// kube-apiserver: kubectl rewrites its managers, and a field dropped afterwards goes.
#[test]
fn kubectl_moves_from_client_side_apply() {
    let kapi = Kapi::start(Backend::Embedded);
    let manifest = |data: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\n  namespace: default\ndata:\n{data}"
        )
    };
    kapi.kubectl_ok(
        None,
        &["apply", "-f", "-"],
        Some(&manifest("  a: \"1\"\n  b: \"2\"\n")),
    );
    let managers = |kapi: &Kapi| {
        kapi.kubectl_ok(
            None,
            &[
                "get",
                "cm",
                "csa",
                "-o",
                "jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation} {end}",
            ],
            None,
        )
    };
    assert_eq!(managers(&kapi).trim(), "kubectl-client-side-apply/Update");
    let ssa = ["apply", "--server-side", "-f", "-"];
    kapi.kubectl_ok(None, &ssa, Some(&manifest("  a: \"1\"\n  b: \"3\"\n")));
    // kubectl moves client-side apply's fields to its own applier, and the annotation
    // to `kubectl-last-applied`.
    let moved = managers(&kapi);
    let mut moved: Vec<&str> = moved.split_whitespace().collect();
    moved.sort_unstable();
    assert_eq!(moved, ["kubectl-last-applied/Apply", "kubectl/Apply"]);
    kapi.kubectl_ok(None, &ssa, Some(&manifest("  a: \"1\"\n")));
    let data = kapi.kubectl(&["get", "cm", "csa", "-o", "jsonpath={.data}"]);
    assert_eq!(data, r#"{"a":"1"}"#);
}
