//! One schema engine for both paths: the compiled Widget (schemas/widget.yaml, built
//! into the binary) and the same file applied at run time as a CustomResourceDefinition
//! (with another group) answer the same requests with the same bytes — status codes,
//! warnings and bodies, errors included — once the group name and the values the server
//! makes up (uid, resourceVersion, timestamps) are set aside.

use kapi_tests::{Backend, Exchange, Kapi};
use serde_json::{Value, json};

const COMPILED: &str = "example.kapi.dev";
const RUNTIME: &str = "runtime.kapi.dev";
const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const JSON_PATCH: &str = "application/json-patch+json";
const APPLY: &str = "application/apply-patch+yaml";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// schemas/widget.yaml as a CRD of `group`.
fn widget_crd(group: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/widget.yaml");
    let mut crd = kapi_testing::yaml_documents(&path).remove(0);
    crd["spec"]["group"] = json!(group);
    crd["metadata"]["name"] = json!(format!("widgets.{group}"));
    crd
}

/// One request, written once for both resources: `{group}` in the path and body
/// stands for the resource's group.
struct Step {
    what: &'static str,
    method: &'static str,
    path: &'static str,
    content_type: &'static str,
    accept: Option<&'static str>,
    body: Option<Value>,
    /// The status code kube-apiserver answers with.
    expect: u16,
}

fn step(what: &'static str, method: &'static str, path: &'static str, expect: u16) -> Step {
    Step {
        what,
        method,
        path,
        expect,
        content_type: JSON,
        accept: None,
        body: None,
    }
}

impl Step {
    fn body(mut self, content_type: &'static str, body: Value) -> Self {
        self.content_type = content_type;
        self.body = Some(body);
        self
    }

    fn accept(mut self, accept: &'static str) -> Self {
        self.accept = Some(accept);
        self
    }

    fn run(&self, kapi: &Kapi, group: &str) -> Exchange {
        let path = format!("/apis/{group}/v1/namespaces/default/widgets{}", self.path);
        let body = self
            .body
            .as_ref()
            .map(|b| b.to_string().replace("{group}", group).into_bytes());
        let res = kapi.exchange(
            self.method,
            &path,
            self.content_type,
            self.accept,
            body.as_deref(),
        );
        normalize(res, group)
    }
}

/// Sets aside what the server makes up and the group name.
fn normalize(mut res: Exchange, group: &str) -> Exchange {
    let mut body = managed_fields_by_manager(&res.body).replace(group, "{group}");
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "lastTransitionTime",
        // managedFields' times.
        "time",
    ] {
        body = replace_string_values(&body, field);
    }
    res.body = mask_ages(&body);
    res.warnings = res
        .warnings
        .iter()
        .map(|w| w.replace(group, "{group}"))
        .collect();
    res
}

/// `body` with each object's `managedFields` in manager order: kube sorts them by
/// time, and the two runs' writes may fall on either side of a second.
fn managed_fields_by_manager(body: &str) -> String {
    fn sort(v: &mut Value) -> bool {
        let mut sorted = false;
        if let Some(entries) = v
            .pointer_mut("/metadata/managedFields")
            .and_then(Value::as_array_mut)
            .filter(|e| e.len() > 1)
        {
            entries.sort_by_key(|e| e["manager"].as_str().unwrap_or("").to_string());
            sorted = true;
        }
        if let Some(items) = v.get_mut("items").and_then(Value::as_array_mut) {
            for item in items {
                sorted |= sort(item);
            }
        }
        sorted
    }
    let Ok(mut v) = serde_json::from_str::<Value>(body) else {
        return body.to_string();
    };
    if sort(&mut v) {
        format!("{v}\n")
    } else {
        body.to_string()
    }
}

/// A Table row's last cell, its Age (`"0s"`), → `"…"`: the two requests compared may
/// fall on either side of a second.
fn mask_ages(text: &str) -> String {
    const END: &str = "\"],\"object\":";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(END) {
        let start = rest[..at].rfind('"').map_or(at, |q| q + 1);
        out.push_str(&rest[..start]);
        out.push('…');
        out.push_str(END);
        rest = &rest[at + END.len()..];
    }
    out.push_str(rest);
    out
}

/// `"field":"anything"` → `"field":"…"`, in JSON text as the server writes it.
fn replace_string_values(text: &str, field: &str) -> String {
    let key = format!("\"{field}\":\"");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&key) {
        let value_start = at + key.len();
        out.push_str(&rest[..value_start]);
        let tail = &rest[value_start..];
        let end = tail.find('"').unwrap_or(tail.len());
        out.push('…');
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn widget(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "{group}/v1", "kind": "Widget",
        "metadata": {"name": name, "labels": {"app": "demo"}},
        "spec": spec,
    })
}

fn steps() -> Vec<Step> {
    vec![
        step(
            "create a valid widget, unknown fields pruned with warnings",
            "POST",
            "",
            201,
        )
        .body(
            JSON,
            widget(
                "w1",
                json!({
                    "color": "red", "replicas": 3, "unknownField": 1,
                    "ports": [{"name": "http", "port": 80, "targetPort": "web"},
                              {"name": "metrics", "port": 9090, "targetPort": 9090}],
                    "tags": ["a", "b"], "labels": {"tier": "front"},
                    "config": {"anything": {"nested": [1, "two", null]}}
                }),
            ),
        ),
        step("create with defaults only", "POST", "", 201)
            .body(JSON, widget("w2", json!({"color": "blue"}))),
        step("create a duplicate", "POST", "", 409)
            .body(JSON, widget("w2", json!({"color": "blue"}))),
        step("CEL rule on spec", "POST", "", 422).body(
            JSON,
            widget(
                "bad1",
                json!({"color": "red", "replicas": 20, "size": "small"}),
            ),
        ),
        step("every keyword at once", "POST", "", 422).body(
            JSON,
            widget(
                "bad2",
                json!({
                    "color": "Red1", "size": "huge", "replicas": -1,
                    "ports": [{"name": "a", "port": 0}, {"name": "a", "port": 1}, {"port": 2}],
                    "tags": ["x", "x"], "labels": {"k": 1}
                }),
            ),
        ),
        step("missing required spec field", "POST", "", 422).body(JSON, widget("bad3", json!({}))),
        step("wrong types", "POST", "", 422).body(
            JSON,
            widget(
                "bad4",
                json!({"color": 5, "replicas": "many", "ports": {"name": "x"}}),
            ),
        ),
        step("get", "GET", "/w1", 200),
        step(
            "list with a field selector",
            "GET",
            "?fieldSelector=spec.size%3Dmedium",
            200,
        ),
        step("list as a Table", "GET", "", 200).accept(TABLE),
        step("merge patch: replicas", "PATCH", "/w1", 200)
            .body(MERGE, json!({"spec": {"replicas": 5}})),
        step(
            "merge patch: transition rule (color is immutable)",
            "PATCH",
            "/w1",
            422,
        )
        .body(MERGE, json!({"spec": {"color": "green"}})),
        step("JSON patch", "PATCH", "/w1", 200).body(
            JSON_PATCH,
            json!([{"op": "add", "path": "/spec/tags/-", "value": "c"}]),
        ),
        step("JSON patch: a duplicate in a set", "PATCH", "/w1", 422).body(
            JSON_PATCH,
            json!([{"op": "add", "path": "/spec/tags/-", "value": "a"}]),
        ),
        step("update without resourceVersion", "PUT", "/w2", 422)
            .body(JSON, widget("w2", json!({"color": "blue", "replicas": 2}))),
        step("status: merge patch", "PATCH", "/w1/status", 200).body(
            MERGE,
            json!({"status": {"replicas": 5, "readyReplicas": 2, "phase": "Running",
                              "selector": "app=demo", "spec": "ignored"}}),
        ),
        step("status: invalid phase", "PATCH", "/w1/status", 422)
            .body(MERGE, json!({"status": {"phase": "Sleeping"}})),
        step("scale: get", "GET", "/w1/scale", 200),
        step("scale: patch", "PATCH", "/w1/scale", 200)
            .body(MERGE, json!({"spec": {"replicas": 7}})),
        step("scale: over the maximum", "PATCH", "/w1/scale", 422)
            .body(MERGE, json!({"spec": {"replicas": 500}})),
        step("apply: create", "PATCH", "/w3?fieldManager=alice", 201).body(
            APPLY,
            widget(
                "w3",
                json!({"color": "red", "replicas": 2, "ports": [{"name": "http", "port": 80}]}),
            ),
        ),
        step("apply: a conflict", "PATCH", "/w3?fieldManager=bob", 409)
            .body(APPLY, widget("w3", json!({"color": "red", "replicas": 3}))),
        step(
            "apply: forced",
            "PATCH",
            "/w3?fieldManager=bob&force=true",
            200,
        )
        .body(APPLY, widget("w3", json!({"color": "red", "replicas": 3}))),
        step(
            "apply: a field dropped",
            "PATCH",
            "/w3?fieldManager=alice",
            200,
        )
        .body(APPLY, widget("w3", json!({"color": "red"}))),
        step("get after the writes", "GET", "/w1", 200),
        step("delete", "DELETE", "/w2", 200),
        step("get a deleted widget", "GET", "/w2", 404),
    ]
}

#[test]
fn a_run_time_crd_answers_like_the_compiled_resource_byte_for_byte() {
    let kapi = Kapi::start(Backend::Embedded);
    kapi.establish(&widget_crd(RUNTIME));
    let mut differences = Vec::new();
    for step in steps() {
        let compiled = step.run(&kapi, COMPILED);
        let runtime = step.run(&kapi, RUNTIME);
        if compiled != runtime {
            differences.push(format!(
                "{}:\n  compiled: {compiled:?}\n  run-time: {runtime:?}",
                step.what
            ));
        }
        // Both answers are also the right one, not the same mistake twice.
        assert_eq!(compiled.code, step.expect, "{}: {compiled:?}", step.what);
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
