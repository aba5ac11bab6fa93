//! The bad-input suite (issue #8, "Nothing lost"): hostile and malformed requests
//! against a real server, each answered as kube-apiserver answers it.
//!
//! - A hand-written table of requests, each with the exact status code and reason of the
//!   `Status` kube-apiserver sends: malformed JSON and YAML, wrong types, unknown and
//!   duplicate fields under each `fieldValidation` mode, bodies and objects over their
//!   limits, deep nesting, huge strings, invalid names, labels and annotations, bad
//!   selectors, bad JSON patches and patches that would change an object's identity,
//!   merge-patch bombs, wrong `apiVersion` or `kind`, unknown resources, bad `continue`
//!   tokens, invalid `resourceVersion`s, bad watch and request options. Every mismatch
//!   is reported at once.
//! - A generated set of more than 10,000 mutations of valid objects and requests, from
//!   a seeded PRNG (`BAD_INPUT_SEED` replays another seed), sent by several clients at
//!   once: every answer is a 4xx `Status`, or a success for a mutation that happens to
//!   be valid (then checked stored, and deleted), never a 5xx or a dropped connection.
//! - After every rejected write (per row in the table, per batch in the generated set)
//!   the storage revision is unchanged: a list's `metadata.resourceVersion` at
//!   `resourceVersion=""` is the store's current revision, read from storage.
//! - After all of it the server still serves, and its memory is back near where it
//!   started.
//! - Slow clients (headers or a body dribbled in) are cut off within a bound while
//!   others are served; clients that vanish mid-body leave nothing stored.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const YAML: &str = "application/yaml";
const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const SERVICES: &str = "/api/v1/namespaces/default/services";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
/// kube-apiserver's request body limit (`--max-request-body-bytes`, 3 MiB).
const BODY_LIMIT: usize = 3 * 1024 * 1024;
/// The largest object stored (etcd's request limit, 1.5 MiB).
const OBJECT_LIMIT: usize = 1536 * 1024;

// ---------------------------------------------------------------------------------
// Requests and answers

/// One request of the suite and the answer it must get.
#[derive(Clone)]
struct Case {
    name: String,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Option<Vec<u8>>,
    /// The expected status code (for the generated set: 0, any 4xx).
    code: u16,
    /// The expected `reason` (for the generated set: empty, any).
    reason: &'static str,
    /// An `Accept` header, if any.
    accept: Option<&'static str>,
}

impl Case {
    fn is_write(&self) -> bool {
        self.method != "GET"
    }
}

/// What came back: the status code and body, or how the connection failed.
type Answer = Result<(u16, String), String>;

/// Sends a case on `agent`; a hung or dropped connection is an `Err`.
fn send(kapi: &Kapi, agent: &ureq::Agent, case: &Case, timeout: Duration) -> Answer {
    use ureq::RequestExt;
    let url = format!("{}{}", kapi.url(), case.path);
    let mut builder = ureq::http::Request::builder().method(case.method).uri(&url);
    if !case.content_type.is_empty() {
        builder = builder.header("Content-Type", case.content_type);
    }
    if let Some(accept) = case.accept {
        builder = builder.header("Accept", accept);
    }
    let request = builder
        .body(case.body.clone().unwrap_or_default())
        .map_err(|e| format!("building the request: {e}"))?;
    let res = request
        .with_agent(agent)
        .configure()
        .timeout_global(Some(timeout))
        .allow_non_standard_methods(true)
        .build()
        .run()
        .map_err(|e| format!("transport error: {e}"))?;
    let code = res.status().as_u16();
    // A successful watch streams until its timeout: its body is not needed.
    if (200..300).contains(&code) && case.path.contains("watch") {
        return Ok((code, String::new()));
    }
    let body = res
        .into_body()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| format!("reading the answer: {e}"))?;
    Ok((code, body))
}

/// Why `answer` is not the `Status` of `code` and `reason` (any 4xx when `code` is 0,
/// any reason when `reason` is empty), if it is not.
fn status_mismatch(answer: &Answer, code: u16, reason: &str) -> Option<String> {
    let (got, body) = match answer {
        Ok(a) => a,
        Err(e) => return Some(e.clone()),
    };
    let short = || body.chars().take(400).collect::<String>();
    let code_ok = if code == 0 {
        (400..500).contains(got)
    } else {
        *got == code
    };
    if !code_ok {
        return Some(format!("got {got}: {}", short()));
    }
    let Ok(status) = serde_json::from_str::<Value>(body) else {
        return Some(format!("got {got} without a Status: {}", short()));
    };
    let well_formed = status["kind"] == "Status"
        && status["apiVersion"] == "v1"
        && status["status"] == "Failure"
        && status["code"] == *got
        && status["message"].is_string();
    if !well_formed {
        return Some(format!("got {got}, not a Failure Status: {}", short()));
    }
    if !reason.is_empty() && status["reason"] != reason {
        return Some(format!("got {got} {}: {}", status["reason"], short()));
    }
    None
}

/// The server's resident memory in KiB.
fn rss_kib(kapi: &Kapi) -> u64 {
    kapi_tests::rss_bytes(kapi.pid().expect("the server runs")) / 1024
}

// ---------------------------------------------------------------------------------
// Valid objects, the starting points

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "demo"}, "annotations": {"note": "x"}},
        "data": {"key": "value", "other": "text"}})
}

fn widget(name: &str) -> Value {
    json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
        "metadata": {"name": name, "labels": {"app": "demo"}},
        "spec": {"size": "small", "color": "red", "replicas": 2,
            "ports": [{"name": "http", "port": 80}], "tags": ["a", "b"],
            "labels": {"part": "x"}, "config": {"free": {"form": 1}}}})
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25",
                    "ports": [{"containerPort": 80}]}]}}}})
}

fn service(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}})
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("JSON")
}

/// `v` with `f` applied.
fn with(mut v: Value, f: impl FnOnce(&mut Value)) -> Value {
    f(&mut v);
    v
}

/// `n` levels of `[` ... `]` around `1`, as text (no recursion anywhere).
fn deep_array(n: usize) -> String {
    format!("{}1{}", "[".repeat(n), "]".repeat(n))
}

/// `n` levels of `{"a":` ... `}` around `1`.
fn deep_object(n: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))
}

/// A YAML "billion laughs": ten aliases of ten aliases ..., `levels` deep.
fn yaml_bomb(levels: usize) -> String {
    let mut doc = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..=levels {
        let prev = format!("*a{}", i - 1);
        doc.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(",")
        ));
    }
    doc
}

// ---------------------------------------------------------------------------------
// The hand-written table

/// Builds the table's rows.
struct Table(Vec<Case>);

impl Table {
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        name: &str,
        method: &'static str,
        path: &str,
        content_type: &'static str,
        body: impl Into<Option<Vec<u8>>>,
        code: u16,
        reason: &'static str,
    ) {
        self.0.push(Case {
            name: name.to_string(),
            method,
            path: path.to_string(),
            content_type,
            body: body.into(),
            code,
            reason,
            accept: None,
        });
    }

    fn get(&mut self, name: &str, path: &str, code: u16, reason: &'static str) {
        self.row(name, "GET", path, "", None, code, reason);
    }
}

fn s(text: &str) -> Vec<u8> {
    text.as_bytes().to_vec()
}

/// Every hand-written row.
fn table() -> Vec<Case> {
    let mut t = Table(Vec::new());
    let cm_target = format!("{CONFIGMAPS}/target");
    let w_target = format!("{WIDGETS}/target");
    let d_target = format!("{DEPLOYMENTS}/target");
    malformed_bodies(&mut t);
    wrong_types_and_invalid_values(&mut t);
    field_validation(&mut t, &cm_target, &w_target);
    limits(&mut t, &cm_target, &w_target);
    names_labels_annotations(&mut t);
    identity(&mut t, &cm_target, &w_target, &d_target);
    patches(&mut t, &cm_target, &w_target, &d_target);
    routes_and_media_types(&mut t, &cm_target);
    list_and_watch_parameters(&mut t, &cm_target);
    request_options(&mut t, &cm_target, &w_target);
    t.0
}

fn malformed_bodies(t: &mut Table) {
    let bad_json: &[(&str, &str)] = &[
        ("empty body", ""),
        ("only whitespace", " \n\t "),
        (
            "truncated object",
            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"",
        ),
        ("truncated string", "{\"metadata\":{\"name\":\"a"),
        ("trailing comma", "{\"metadata\":{\"name\":\"a\"},}"),
        ("single quotes", "{'metadata':{'name':'a'}}"),
        ("unquoted keys", "{metadata:{name:\"a\"}}"),
        (
            "NaN",
            "{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":NaN}}",
        ),
        (
            "Infinity",
            "{\"metadata\":{\"name\":\"a\"},\"data\":Infinity}",
        ),
        ("comment", "/* hi */ {\"metadata\":{\"name\":\"a\"}}"),
        (
            "trailing garbage",
            "{\"metadata\":{\"name\":\"a\"}} trailing",
        ),
        (
            "two documents",
            "{\"metadata\":{\"name\":\"a\"}}{\"metadata\":{\"name\":\"b\"}}",
        ),
        ("bad escape", "{\"metadata\":{\"name\":\"a\\x\"}}"),
        (
            "control character in string",
            "{\"metadata\":{\"name\":\"a\u{1}b\"}}",
        ),
        ("byte order mark", "\u{feff}{\"metadata\":{\"name\":\"a\"}}"),
        ("missing colon", "{\"metadata\" {\"name\":\"a\"}}"),
        ("unbalanced brackets", "{\"metadata\":{\"name\":\"a\"]}"),
        (
            "number overflow",
            "{\"metadata\":{\"name\":\"a\",\"generation\":1e999}}",
        ),
        ("an array", "[{\"metadata\":{\"name\":\"a\"}}]"),
        ("a string", "\"ConfigMap\""),
        ("a number", "42"),
        ("a boolean", "true"),
        (
            "leading zeros",
            "{\"metadata\":{\"name\":\"a\",\"generation\":007}}",
        ),
        (
            "lone minus",
            "{\"metadata\":{\"name\":\"a\",\"generation\":-}}",
        ),
    ];
    for (name, body) in bad_json {
        t.row(
            &format!("create: malformed JSON, {name}"),
            "POST",
            CONFIGMAPS,
            JSON,
            s(body),
            400,
            "BadRequest",
        );
    }
    t.row(
        "create: invalid UTF-8 around JSON",
        "POST",
        CONFIGMAPS,
        JSON,
        vec![0xff, 0xfe, b'{', b'}'],
        400,
        "BadRequest",
    );
    t.row(
        "create: random binary",
        "POST",
        CONFIGMAPS,
        JSON,
        (0..=255u8).rev().collect::<Vec<u8>>(),
        400,
        "BadRequest",
    );
    t.row(
        "create: JSON nested 100,000 arrays deep",
        "POST",
        CONFIGMAPS,
        JSON,
        s(&deep_array(100_000)),
        400,
        "BadRequest",
    );
    t.row(
        "create: data nested 100,000 objects deep",
        "POST",
        CONFIGMAPS,
        JSON,
        s(&format!(
            "{{\"metadata\":{{\"name\":\"deep\"}},\"data\":{}}}",
            deep_object(100_000)
        )),
        400,
        "BadRequest",
    );
    t.row(
        "create: widget config nested 100,000 deep (preserve-unknown-fields)",
        "POST",
        WIDGETS,
        JSON,
        s(&format!(
            "{{\"metadata\":{{\"name\":\"deep\"}},\"spec\":{{\"color\":\"red\",\"config\":{}}}}}",
            deep_object(100_000)
        )),
        400,
        "BadRequest",
    );
    t.row(
        "create: JSON 200 deep (over the 127 decodable)",
        "POST",
        WIDGETS,
        JSON,
        s(&format!(
            "{{\"metadata\":{{\"name\":\"deep\"}},\"spec\":{{\"color\":\"red\",\"config\":{}}}}}",
            deep_object(200)
        )),
        400,
        "BadRequest",
    );

    let bad_yaml: &[(&str, &str)] = &[
        ("unclosed flow sequence", "metadata:\n  name: a\ndata: [1\n"),
        ("unclosed quote", "metadata:\n  name: \"a\n"),
        ("tab indentation", "metadata:\n\tname: a\n"),
        ("mapping value in a scalar", "metadata:\n  name: a: b: c\n"),
        ("bad indentation", "metadata:\n    name: a\n  labels: {}\n"),
        ("a bare scalar", "just a string\n"),
        ("a sequence", "- a\n- b\n"),
        ("a complex key", "? [a, b]\n: c\n"),
        ("unclosed mapping", "{metadata: {name: a}\n"),
        ("undefined alias", "metadata: *nothing\n"),
        ("a number", "42\n"),
    ];
    for (name, body) in bad_yaml {
        t.row(
            &format!("create: malformed YAML, {name}"),
            "POST",
            CONFIGMAPS,
            YAML,
            s(body),
            400,
            "BadRequest",
        );
    }
    t.row(
        "create: YAML nested 100,000 deep",
        "POST",
        CONFIGMAPS,
        YAML,
        s(&format!("data: {}\n", deep_array(100_000))),
        400,
        "BadRequest",
    );
    let block: String = (0..600)
        .map(|i| format!("{}a:\n", "  ".repeat(i)))
        .collect();
    t.row(
        "create: YAML block mappings 600 deep",
        "POST",
        WIDGETS,
        YAML,
        s(&format!(
            "metadata:\n  name: deep\nspec:\n  color: red\n  config:\n{}",
            block
                .lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>()
        )),
        400,
        "BadRequest",
    );
    t.row(
        "create: YAML billion laughs",
        "POST",
        CONFIGMAPS,
        YAML,
        s(&format!("{}metadata:\n  name: lol\n", yaml_bomb(9))),
        400,
        "BadRequest",
    );
    t.row(
        "create: YAML not UTF-8",
        "POST",
        CONFIGMAPS,
        YAML,
        vec![b'a', b':', b' ', 0xff, 0xfe, b'\n'],
        400,
        "BadRequest",
    );
    t.row(
        "update: malformed JSON",
        "PUT",
        &format!("{CONFIGMAPS}/target"),
        JSON,
        s("{\"metadata\":"),
        400,
        "BadRequest",
    );
    t.row(
        "update: malformed YAML",
        "PUT",
        &format!("{CONFIGMAPS}/target"),
        YAML,
        s("metadata: [\n"),
        400,
        "BadRequest",
    );
    t.row(
        "update: an array",
        "PUT",
        &format!("{WIDGETS}/target"),
        JSON,
        s("[]"),
        400,
        "BadRequest",
    );
}

fn wrong_types_and_invalid_values(t: &mut Table) {
    // A custom resource's schema validation: 422 Invalid.
    let w = |f: &dyn Fn(&mut Value)| bytes(&with(widget("typed"), f));
    let widget_rows: Vec<(&str, Vec<u8>)> = vec![
        (
            "replicas a string",
            w(&|v| v["spec"]["replicas"] = json!("three")),
        ),
        (
            "replicas a float",
            w(&|v| v["spec"]["replicas"] = json!(1.5)),
        ),
        (
            "replicas an object",
            w(&|v| v["spec"]["replicas"] = json!({"n": 1})),
        ),
        (
            "replicas over the maximum",
            w(&|v| v["spec"]["replicas"] = json!(101)),
        ),
        (
            "replicas negative",
            w(&|v| v["spec"]["replicas"] = json!(-1)),
        ),
        (
            "replicas over int32",
            w(&|v| v["spec"]["replicas"] = json!(4_294_967_296i64)),
        ),
        (
            "size not in the enum",
            w(&|v| v["spec"]["size"] = json!("huge")),
        ),
        ("size a number", w(&|v| v["spec"]["size"] = json!(5))),
        ("color a list", w(&|v| v["spec"]["color"] = json!(["red"]))),
        (
            "color against the pattern",
            w(&|v| v["spec"]["color"] = json!("Red!")),
        ),
        (
            "color too long",
            w(&|v| v["spec"]["color"] = json!("r".repeat(33))),
        ),
        (
            "color missing",
            w(&|v| {
                v["spec"].as_object_mut().unwrap().remove("color");
            }),
        ),
        (
            "spec missing",
            w(&|v| {
                v.as_object_mut().unwrap().remove("spec");
            }),
        ),
        ("spec a string", w(&|v| v["spec"] = json!("big"))),
        ("spec null", w(&|v| v["spec"] = Value::Null)),
        ("ports a string", w(&|v| v["spec"]["ports"] = json!("80"))),
        (
            "port a string",
            w(&|v| v["spec"]["ports"][0]["port"] = json!("80")),
        ),
        (
            "port out of range",
            w(&|v| v["spec"]["ports"][0]["port"] = json!(70000)),
        ),
        (
            "port without its key",
            w(&|v| v["spec"]["ports"] = json!([{"port": 80}])),
        ),
        (
            "ports with a duplicate key",
            w(&|v| {
                v["spec"]["ports"] = json!([{"name": "a", "port": 1}, {"name": "a", "port": 2}])
            }),
        ),
        (
            "tags duplicated in a set",
            w(&|v| v["spec"]["tags"] = json!(["a", "a"])),
        ),
        (
            "tags an object",
            w(&|v| v["spec"]["tags"] = json!({"a": 1})),
        ),
        (
            "labels a number value",
            w(&|v| v["spec"]["labels"] = json!({"a": 1})),
        ),
        (
            "CEL rule broken",
            w(&|v| {
                v["spec"]["replicas"] = json!(50);
                v["spec"]["size"] = json!("small");
            }),
        ),
    ];
    for (name, body) in widget_rows {
        t.row(
            &format!("create widget: {name}"),
            "POST",
            WIDGETS,
            JSON,
            body,
            422,
            "Invalid",
        );
    }
    // Built-ins with validation: 422 Invalid.
    let d = |f: &dyn Fn(&mut Value)| bytes(&with(deployment("d"), f));
    let deployment_rows: Vec<(&str, Vec<u8>)> = vec![
        (
            "selector does not match the template",
            d(&|v| v["spec"]["selector"]["matchLabels"] = json!({"app": "other"})),
        ),
        (
            "negative replicas",
            d(&|v| v["spec"]["replicas"] = json!(-3)),
        ),
        (
            "no containers",
            d(&|v| v["spec"]["template"]["spec"]["containers"] = json!([])),
        ),
        (
            "container name invalid",
            d(&|v| v["spec"]["template"]["spec"]["containers"][0]["name"] = json!("Web_1")),
        ),
        (
            "container without an image",
            d(&|v| {
                v["spec"]["template"]["spec"]["containers"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("image");
            }),
        ),
        (
            "duplicate container names",
            d(&|v| {
                v["spec"]["template"]["spec"]["containers"] =
                    json!([{"name": "a", "image": "x"}, {"name": "a", "image": "y"}])
            }),
        ),
        (
            "container port out of range",
            d(&|v| {
                v["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] =
                    json!(0)
            }),
        ),
        (
            "restartPolicy Never",
            d(&|v| v["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")),
        ),
        (
            "strategy type unknown",
            d(&|v| v["spec"]["strategy"] = json!({"type": "Sideways"})),
        ),
        (
            "no selector",
            d(&|v| {
                v["spec"].as_object_mut().unwrap().remove("selector");
            }),
        ),
        ("empty selector", d(&|v| v["spec"]["selector"] = json!({}))),
        (
            "selector with a bad operator",
            d(
                &|v| v["spec"]["selector"] = json!({"matchLabels": {"app": "d"}, "matchExpressions": [{"key": "a", "operator": "Near", "values": ["b"]}]}),
            ),
        ),
        (
            "revisionHistoryLimit negative",
            d(&|v| v["spec"]["revisionHistoryLimit"] = json!(-1)),
        ),
        (
            "minReadySeconds negative",
            d(&|v| v["spec"]["minReadySeconds"] = json!(-1)),
        ),
    ];
    for (name, body) in deployment_rows {
        t.row(
            &format!("create deployment: {name}"),
            "POST",
            DEPLOYMENTS,
            JSON,
            body,
            422,
            "Invalid",
        );
    }
    let v = |f: &dyn Fn(&mut Value)| bytes(&with(service("s"), f));
    let service_rows: Vec<(&str, Vec<u8>)> = vec![
        (
            "type unknown",
            v(&|v| v["spec"]["type"] = json!("Sideways")),
        ),
        (
            "port zero",
            v(&|v| v["spec"]["ports"][0]["port"] = json!(0)),
        ),
        (
            "port too big",
            v(&|v| v["spec"]["ports"][0]["port"] = json!(65536)),
        ),
        ("no ports", v(&|v| v["spec"]["ports"] = json!([]))),
        (
            "duplicate port names",
            v(&|v| {
                v["spec"]["ports"] = json!([{"name": "a", "port": 1}, {"name": "a", "port": 2}])
            }),
        ),
        (
            "unnamed ports among several",
            v(&|v| v["spec"]["ports"] = json!([{"port": 1}, {"port": 2}])),
        ),
        (
            "protocol unknown",
            v(&|v| v["spec"]["ports"][0]["protocol"] = json!("QUIC")),
        ),
        (
            "clusterIP garbage",
            v(&|v| v["spec"]["clusterIP"] = json!("not-an-ip")),
        ),
        (
            "clusterIP out of the range",
            v(&|v| v["spec"]["clusterIP"] = json!("192.0.2.1")),
        ),
        (
            "nodePort out of the range",
            v(&|v| {
                v["spec"]["type"] = json!("NodePort");
                v["spec"]["ports"][0]["nodePort"] = json!(80);
            }),
        ),
        (
            "selector label key invalid",
            v(&|v| v["spec"]["selector"] = json!({"a b": "c"})),
        ),
        (
            "sessionAffinity unknown",
            v(&|v| v["spec"]["sessionAffinity"] = json!("Sticky")),
        ),
        (
            "externalName on a ClusterIP service",
            v(&|v| {
                v["spec"]["type"] = json!("ExternalName");
            }),
        ),
        (
            "name not a DNS label",
            v(&|v| v["metadata"]["name"] = json!("a.b")),
        ),
        (
            "name starting with a digit",
            v(&|v| v["metadata"]["name"] = json!("1abc")),
        ),
    ];
    for (name, body) in service_rows {
        t.row(
            &format!("create service: {name}"),
            "POST",
            SERVICES,
            JSON,
            body,
            422,
            "Invalid",
        );
    }
    t.row(
        "create configmap: data and binaryData share a key",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("dup"), |v| {
            v["binaryData"] = json!({"key": "aGk="})
        })),
        422,
        "Invalid",
    );
    t.row(
        "create configmap: data key invalid",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("k"), |v| v["data"] = json!({"a b": "c"}))),
        422,
        "Invalid",
    );
    t.row(
        "update widget: color is immutable",
        "PUT",
        &format!("{WIDGETS}/target"),
        JSON,
        bytes(&with(widget("target"), |v| {
            v["spec"]["color"] = json!("blue")
        })),
        422,
        "Invalid",
    );
    t.row(
        "update deployment: selector is immutable",
        "PUT",
        &format!("{DEPLOYMENTS}/target"),
        JSON,
        bytes(&with(deployment("target"), |v| {
            v["spec"]["selector"]["matchLabels"] = json!({"app": "target", "x": "y"});
            v["spec"]["template"]["metadata"]["labels"] = json!({"app": "target", "x": "y"});
        })),
        422,
        "Invalid",
    );
    t.row(
        "update service: clusterIP is immutable",
        "PUT",
        &format!("{SERVICES}/target"),
        JSON,
        // Outside the allocation range (10.0.0.0/24), so never the IP it was given.
        bytes(&with(service("target"), |v| {
            v["spec"]["clusterIP"] = json!("10.0.1.250")
        })),
        422,
        "Invalid",
    );
}

fn field_validation(t: &mut Table, cm: &str, w: &str) {
    let strict = |path: &str| format!("{path}?fieldValidation=Strict");
    t.row(
        "Strict: unknown top-level field",
        "POST",
        &strict(CONFIGMAPS),
        JSON,
        bytes(&with(configmap("s1"), |v| v["bogus"] = json!(1))),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: unknown field in metadata",
        "POST",
        &strict(CONFIGMAPS),
        JSON,
        bytes(&with(configmap("s2"), |v| {
            v["metadata"]["colour"] = json!("blue")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: unknown field in a widget's spec",
        "POST",
        &strict(WIDGETS),
        JSON,
        bytes(&with(widget("s3"), |v| v["spec"]["bogus"] = json!(true))),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: unknown field in a container",
        "POST",
        &strict(DEPLOYMENTS),
        JSON,
        bytes(&with(deployment("s4"), |v| {
            v["spec"]["template"]["spec"]["containers"][0]["colour"] = json!(1)
        })),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: unknown field in a service port",
        "POST",
        &strict(SERVICES),
        JSON,
        bytes(&with(service("s5"), |v| {
            v["spec"]["ports"][0]["speed"] = json!("fast")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: duplicate field",
        "POST",
        &strict(CONFIGMAPS),
        JSON,
        s("{\"metadata\":{\"name\":\"s6\",\"name\":\"s7\"}}"),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: duplicate data key",
        "POST",
        &strict(CONFIGMAPS),
        JSON,
        s("{\"metadata\":{\"name\":\"s8\"},\"data\":{\"a\":\"1\",\"a\":\"2\"}}"),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: duplicate field in a widget",
        "POST",
        &strict(WIDGETS),
        JSON,
        s("{\"metadata\":{\"name\":\"s9\"},\"spec\":{\"color\":\"red\",\"color\":\"blue\"}}"),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: unknown field in YAML",
        "POST",
        &strict(CONFIGMAPS),
        YAML,
        s("metadata:\n  name: s10\nbogus: 1\n"),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: unknown field on update",
        "PUT",
        &strict(cm),
        JSON,
        bytes(&with(configmap("target"), |v| v["bogus"] = json!(1))),
        400,
        "BadRequest",
    );
    t.row("Strict: duplicate field on update", "PUT", &strict(w), JSON,
        s("{\"metadata\":{\"name\":\"target\"},\"spec\":{\"color\":\"red\",\"size\":\"small\",\"size\":\"large\"}}"), 400, "BadRequest");
    t.row(
        "Strict: a merge patch adding an unknown field",
        "PATCH",
        &strict(cm),
        MERGE_PATCH,
        s("{\"bogus\":1}"),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: a JSON patch adding an unknown field",
        "PATCH",
        &strict(w),
        JSON_PATCH,
        s("[{\"op\":\"add\",\"path\":\"/spec/bogus\",\"value\":1}]"),
        400,
        "BadRequest",
    );
    t.row(
        "Strict: a strategic patch adding an unknown field",
        "PATCH",
        &strict(cm),
        STRATEGIC,
        s("{\"metadata\":{\"colour\":\"x\"}}"),
        400,
        "BadRequest",
    );
    for mode in ["Sometimes", "strict", "warn", "IGNORE"] {
        t.row(
            &format!("fieldValidation={mode}"),
            "POST",
            &format!("{CONFIGMAPS}?fieldValidation={mode}"),
            JSON,
            bytes(&configmap("fv")),
            422,
            "Invalid",
        );
    }
    t.row(
        "fieldValidation=Sometimes on a patch",
        "PATCH",
        &format!("{cm}?fieldValidation=Sometimes"),
        MERGE_PATCH,
        s("{}"),
        422,
        "Invalid",
    );
    t.row(
        "fieldValidation=Sometimes on an update",
        "PUT",
        &format!("{w}?fieldValidation=Sometimes"),
        JSON,
        bytes(&widget("target")),
        422,
        "Invalid",
    );
}

fn limits(t: &mut Table, cm: &str, w: &str) {
    // The body limit: one byte over is refused before anything is read into an object.
    let over = |name: &str| {
        let pad = BODY_LIMIT + 1 - bytes(&configmap(name)).len() - "\"pad\":\"\",".len();
        let mut v = configmap(name);
        v["data"]["pad"] = json!("p".repeat(pad));
        let b = bytes(&v);
        assert_eq!(b.len(), BODY_LIMIT + 1);
        b
    };
    t.row(
        "create: body one byte over 3 MiB",
        "POST",
        CONFIGMAPS,
        JSON,
        over("big"),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "update: body one byte over 3 MiB",
        "PUT",
        cm,
        JSON,
        over("target"),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "patch: body one byte over 3 MiB",
        "PATCH",
        cm,
        MERGE_PATCH,
        over("target"),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "create: 3 MiB and 4 KiB of spaces",
        "POST",
        CONFIGMAPS,
        JSON,
        vec![b' '; BODY_LIMIT + 4096],
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "create widget: body over 3 MiB in YAML",
        "POST",
        WIDGETS,
        YAML,
        s(&format!(
            "metadata:\n  name: big\nspec:\n  color: red\n  config:\n    pad: {}\n",
            "y".repeat(BODY_LIMIT)
        )),
        413,
        "RequestEntityTooLarge",
    );
    // Objects over 1.5 MiB in bodies under 3 MiB: 413 from storage.
    let big = "b".repeat(OBJECT_LIMIT + 1000);
    let big_widget = |name: &str| {
        bytes(&with(widget(name), |v| {
            v["spec"]["config"]["big"] = json!(big)
        }))
    };
    t.row(
        "update deployment: object over 1.5 MiB",
        "PUT",
        &format!("{DEPLOYMENTS}/target"),
        JSON,
        bytes(&with(deployment("target"), |v| {
            v["spec"]["template"]["spec"]["containers"][0]["env"] =
                json!([{"name": "BIG", "value": big}]);
        })),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "merge patch: object over 1.5 MiB",
        "PATCH",
        w,
        MERGE_PATCH,
        bytes(&json!({"spec": {"config": {"big": big}}})),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "JSON patch: object over 1.5 MiB",
        "PATCH",
        w,
        JSON_PATCH,
        bytes(&json!([{"op": "add", "path": "/spec/config/big", "value": big}])),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "strategic patch: object over 1.5 MiB",
        "PATCH",
        w,
        STRATEGIC,
        bytes(&json!({"spec": {"config": {"big": big}}})),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "apply: object over 1.5 MiB",
        "PATCH",
        &format!("{w}?fieldManager=t"),
        APPLY,
        big_widget("target"),
        413,
        "RequestEntityTooLarge",
    );
    // A ConfigMap's data is limited to 1 MiB first: 422, as kube validates it.
    t.row(
        "create configmap: data over 1 MiB",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("huge"), |v| v["data"]["big"] = json!(big))),
        422,
        "Invalid",
    );
    t.row(
        "create configmap: binaryData over 1 MiB",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("huge"), |v| {
            v["binaryData"] = json!({"bin": "QUFB".repeat(400_000)})
        })),
        422,
        "Invalid",
    );
    t.row(
        "create configmap: a body of exactly 3 MiB",
        "POST",
        CONFIGMAPS,
        JSON,
        {
            let mut b = over("exact");
            // One byte less: the body is at the limit, the data far over its own.
            b.remove(b.iter().rposition(|c| *c == b'p').expect("padding"));
            b
        },
        422,
        "Invalid",
    );
    t.row(
        "update configmap: data over 1 MiB",
        "PUT",
        cm,
        JSON,
        bytes(&with(configmap("target"), |v| {
            v["data"]["big"] = json!(big)
        })),
        422,
        "Invalid",
    );
    t.row(
        "merge patch configmap: data over 1 MiB",
        "PATCH",
        cm,
        MERGE_PATCH,
        bytes(&json!({"data": {"big": "b".repeat(1024 * 1024)}})),
        422,
        "Invalid",
    );
    t.row(
        "create widget: object over 1.5 MiB",
        "POST",
        WIDGETS,
        JSON,
        bytes(&with(widget("huge"), |v| {
            v["spec"]["config"]["big"] = json!(big)
        })),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "create: 40,000 keys over 1.5 MiB",
        "POST",
        WIDGETS,
        JSON,
        bytes(&with(widget("keys"), |v| {
            v["spec"]["config"] = (0..40_000)
                .map(|i| {
                    (
                        format!("key-{i:06}"),
                        json!("0123456789012345678901234567890"),
                    )
                })
                .collect::<serde_json::Map<_, _>>()
                .into();
        })),
        413,
        "RequestEntityTooLarge",
    );
    // Multi-megabyte strings where a short one is required: invalid first.
    let huge = "h".repeat(2 * 1024 * 1024);
    t.row(
        "create: 2 MiB name",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["name"] = json!(huge)
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: 2 MiB label value",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["labels"]["a"] = json!(huge)
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: 2 MiB label key",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["labels"] = json!({huge.clone(): "a"})
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: 2 MiB annotation",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["annotations"]["a"] = json!(huge)
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: 256 KiB generateName",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&json!({"metadata": {"generateName": "g".repeat(256 * 1024)}})),
        422,
        "Invalid",
    );
    t.row(
        "create widget: 2 MiB color",
        "POST",
        WIDGETS,
        JSON,
        bytes(&with(widget("x"), |v| v["spec"]["color"] = json!(huge))),
        422,
        "Invalid",
    );
    t.row(
        "create: 2 MiB namespace in the body",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["namespace"] = json!(huge)
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create: 2 MiB finalizer",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["finalizers"] = json!([huge])
        })),
        422,
        "Invalid",
    );
}

fn names_labels_annotations(t: &mut Table) {
    let names = [
        ("uppercase", "Upper"),
        ("underscore", "a_b"),
        ("leading dash", "-a"),
        ("trailing dash", "a-"),
        ("leading dot", ".a"),
        ("double dot", "a..b"),
        ("a dot", "."),
        ("two dots", ".."),
        ("a slash", "a/b"),
        ("a percent", "a%b"),
        ("a space", "a b"),
        ("unicode", "caf\u{e9}"),
        ("254 characters", &"a".repeat(254)),
        ("a colon", "a:b"),
    ];
    for (what, name) in names {
        t.row(
            &format!("create configmap: name with {what}"),
            "POST",
            CONFIGMAPS,
            JSON,
            bytes(&configmap(name)),
            422,
            "Invalid",
        );
        t.row(
            &format!("create widget: name with {what}"),
            "POST",
            WIDGETS,
            JSON,
            bytes(&widget(name)),
            422,
            "Invalid",
        );
    }
    t.row(
        "create deployment: name with uppercase",
        "POST",
        DEPLOYMENTS,
        JSON,
        bytes(&deployment("Web")),
        422,
        "Invalid",
    );
    t.row(
        "create: no name and no generateName",
        "POST",
        CONFIGMAPS,
        JSON,
        s("{\"metadata\":{}}"),
        422,
        "Invalid",
    );
    t.row(
        "create: no metadata",
        "POST",
        CONFIGMAPS,
        JSON,
        s("{\"data\":{}}"),
        422,
        "Invalid",
    );
    t.row(
        "create: empty name",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&configmap("")),
        422,
        "Invalid",
    );
    t.row(
        "create: generateName invalid",
        "POST",
        CONFIGMAPS,
        JSON,
        s("{\"metadata\":{\"generateName\":\"Bad_\"}}"),
        422,
        "Invalid",
    );
    t.row(
        "create: null body",
        "POST",
        CONFIGMAPS,
        JSON,
        s("null"),
        422,
        "Invalid",
    );
    t.row(
        "create: empty object",
        "POST",
        CONFIGMAPS,
        JSON,
        s("{}"),
        422,
        "Invalid",
    );
    t.row(
        "create: empty YAML document",
        "POST",
        CONFIGMAPS,
        YAML,
        s("---\n"),
        422,
        "Invalid",
    );

    let label_keys = [
        ("a space", "a b"),
        ("an empty prefix", "/a"),
        ("an invalid prefix", "Bad_Prefix/a"),
        ("a 64-character name", &"k".repeat(64)),
        ("a 254-character prefix", &format!("{}/a", "p".repeat(254))),
        ("two slashes", "a/b/c"),
        ("a trailing dash", "a-"),
        ("nothing", ""),
    ];
    for (what, key) in label_keys {
        t.row(
            &format!("create: label key with {what}"),
            "POST",
            CONFIGMAPS,
            JSON,
            bytes(&with(configmap("l"), |v| {
                v["metadata"]["labels"] = json!({key: "v"})
            })),
            422,
            "Invalid",
        );
        t.row(
            &format!("create: annotation key with {what}"),
            "POST",
            CONFIGMAPS,
            JSON,
            bytes(&with(configmap("a"), |v| {
                v["metadata"]["annotations"] = json!({key: "v"})
            })),
            422,
            "Invalid",
        );
    }
    let label_values = [
        ("a space", "a b"),
        ("64 characters", &"v".repeat(64)),
        ("a leading dash", "-v"),
        ("a slash", "a/b"),
        ("unicode", "\u{1f600}"),
    ];
    for (what, value) in label_values {
        t.row(
            &format!("create: label value with {what}"),
            "POST",
            CONFIGMAPS,
            JSON,
            bytes(&with(configmap("l"), |v| {
                v["metadata"]["labels"] = json!({"k": value})
            })),
            422,
            "Invalid",
        );
        t.row(
            &format!("create widget: label value with {what}"),
            "POST",
            WIDGETS,
            JSON,
            bytes(&with(widget("l"), |v| {
                v["metadata"]["labels"] = json!({"k": value})
            })),
            422,
            "Invalid",
        );
    }
    t.row(
        "create deployment: template label value invalid",
        "POST",
        DEPLOYMENTS,
        JSON,
        bytes(&with(deployment("l"), |v| {
            v["spec"]["template"]["metadata"]["labels"] = json!({"app": "l", "x": "a b"})
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: annotations over 256 KiB in total",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("a"), |v| {
            v["metadata"]["annotations"] = (0..5)
                .map(|i| (format!("k{i}"), json!("a".repeat(60_000))))
                .collect::<serde_json::Map<_, _>>()
                .into()
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: a finalizer name invalid",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("f"), |v| {
            v["metadata"]["finalizers"] = json!(["not a finalizer"])
        })),
        422,
        "Invalid",
    );
    t.row(
        "create: an ownerReference without a uid",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("o"), |v| {
            v["metadata"]["ownerReferences"] =
                json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "x"}])
        })),
        422,
        "Invalid",
    );
}

fn identity(t: &mut Table, cm: &str, w: &str, d: &str) {
    t.row(
        "create: apiVersion of another group",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["apiVersion"] = json!("apps/v1")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create: apiVersion v2",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| v["apiVersion"] = json!("v2"))),
        400,
        "BadRequest",
    );
    t.row(
        "create: apiVersion a number",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| v["apiVersion"] = json!(1))),
        400,
        "BadRequest",
    );
    t.row(
        "create: kind of another resource",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| v["kind"] = json!("Secret"))),
        400,
        "BadRequest",
    );
    t.row(
        "create: kind unknown",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| v["kind"] = json!("Nonsense"))),
        400,
        "BadRequest",
    );
    t.row(
        "create: kind an object",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| v["kind"] = json!({"a": 1}))),
        400,
        "BadRequest",
    );
    t.row(
        "create deployment: StatefulSet kind",
        "POST",
        DEPLOYMENTS,
        JSON,
        bytes(&with(deployment("x"), |v| v["kind"] = json!("StatefulSet"))),
        400,
        "BadRequest",
    );
    t.row(
        "create deployment: extensions/v1beta1",
        "POST",
        DEPLOYMENTS,
        JSON,
        bytes(&with(deployment("x"), |v| {
            v["apiVersion"] = json!("extensions/v1beta1")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create widget: a version not served",
        "POST",
        WIDGETS,
        JSON,
        bytes(&with(widget("x"), |v| {
            v["apiVersion"] = json!("example.kapi.dev/v9")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create widget: another group",
        "POST",
        WIDGETS,
        JSON,
        bytes(&with(widget("x"), |v| {
            v["apiVersion"] = json!("other.kapi.dev/v1")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create: namespace of the body differs",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["namespace"] = json!("kube-system")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create: resourceVersion set",
        "POST",
        CONFIGMAPS,
        JSON,
        bytes(&with(configmap("x"), |v| {
            v["metadata"]["resourceVersion"] = json!("5")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "create service: namespace differs",
        "POST",
        SERVICES,
        JSON,
        bytes(&with(service("x"), |v| {
            v["metadata"]["namespace"] = json!("other")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "update: name differs from the URL",
        "PUT",
        cm,
        JSON,
        bytes(&configmap("other")),
        400,
        "BadRequest",
    );
    t.row(
        "update: namespace differs",
        "PUT",
        cm,
        JSON,
        bytes(&with(configmap("target"), |v| {
            v["metadata"]["namespace"] = json!("kube-system")
        })),
        400,
        "BadRequest",
    );
    // A custom resource decodes whatever its kind; the validator refuses it
    // (ValidateTypeMeta in apiextensions-apiserver's registry/customresource).
    t.row(
        "update: kind differs",
        "PUT",
        w,
        JSON,
        bytes(&with(widget("target"), |v| v["kind"] = json!("Gadget"))),
        422,
        "Invalid",
    );
    t.row(
        "update: apiVersion differs",
        "PUT",
        d,
        JSON,
        bytes(&with(deployment("target"), |v| {
            v["apiVersion"] = json!("apps/v1beta2")
        })),
        400,
        "BadRequest",
    );
    t.row(
        "update: another uid",
        "PUT",
        cm,
        JSON,
        bytes(&with(configmap("target"), |v| {
            v["metadata"]["uid"] = json!("6b4f8a0c-0000-4000-8000-000000000000")
        })),
        409,
        "Conflict",
    );
    t.row(
        "update: a stale resourceVersion",
        "PUT",
        cm,
        JSON,
        bytes(&with(configmap("target"), |v| {
            v["metadata"]["resourceVersion"] = json!("1")
        })),
        409,
        "Conflict",
    );
    t.row(
        "update: a resourceVersion that is no number",
        "PUT",
        w,
        JSON,
        bytes(&with(widget("target"), |v| {
            v["metadata"]["resourceVersion"] = json!("abc")
        })),
        409,
        "Conflict",
    );
    t.row(
        "update: an object that is not there",
        "PUT",
        &format!("{CONFIGMAPS}/absent"),
        JSON,
        bytes(&configmap("absent")),
        404,
        "NotFound",
    );
    t.row(
        "update status: name differs",
        "PUT",
        &format!("{w}/status"),
        JSON,
        bytes(&widget("other")),
        400,
        "BadRequest",
    );
}

fn patches(t: &mut Table, cm: &str, w: &str, d: &str) {
    let bad_ops: &[(&str, &str, u16, &str)] = &[
        (
            "an object, not a list",
            "{\"op\":\"add\",\"path\":\"/data/a\",\"value\":\"1\"}",
            400,
            "BadRequest",
        ),
        (
            "an unknown op",
            "[{\"op\":\"merge\",\"path\":\"/data\"}]",
            400,
            "BadRequest",
        ),
        (
            "no op",
            "[{\"path\":\"/data/a\",\"value\":\"1\"}]",
            400,
            "BadRequest",
        ),
        (
            "no path",
            "[{\"op\":\"add\",\"value\":\"1\"}]",
            400,
            "BadRequest",
        ),
        (
            "add without a value",
            "[{\"op\":\"add\",\"path\":\"/data/a\"}]",
            400,
            "BadRequest",
        ),
        (
            "a path not a pointer",
            "[{\"op\":\"add\",\"path\":\"data/a\",\"value\":\"1\"}]",
            400,
            "BadRequest",
        ),
        (
            "op a number",
            "[{\"op\":1,\"path\":\"/data/a\"}]",
            400,
            "BadRequest",
        ),
        ("malformed JSON", "[{\"op\":\"add\",", 400, "BadRequest"),
        ("empty body", "", 400, "BadRequest"),
        ("an op a string", "[\"add\"]", 400, "BadRequest"),
        (
            "remove what is not there",
            "[{\"op\":\"remove\",\"path\":\"/data/absent\"}]",
            422,
            "Invalid",
        ),
        (
            "replace what is not there",
            "[{\"op\":\"replace\",\"path\":\"/spec/absent/deeper\",\"value\":1}]",
            422,
            "Invalid",
        ),
        (
            "a failing test",
            "[{\"op\":\"test\",\"path\":\"/data/key\",\"value\":\"not the value\"}]",
            422,
            "Invalid",
        ),
        (
            "move from nowhere",
            "[{\"op\":\"move\",\"from\":\"/data/absent\",\"path\":\"/data/b\"}]",
            422,
            "Invalid",
        ),
        (
            "copy from nowhere",
            "[{\"op\":\"copy\",\"from\":\"/nothing\",\"path\":\"/data/b\"}]",
            422,
            "Invalid",
        ),
        (
            "add under a missing parent",
            "[{\"op\":\"add\",\"path\":\"/a/b/c\",\"value\":1}]",
            422,
            "Invalid",
        ),
        (
            "an index out of range",
            "[{\"op\":\"add\",\"path\":\"/metadata/finalizers/5\",\"value\":\"x\"}]",
            422,
            "Invalid",
        ),
        (
            "a value of the wrong type",
            "[{\"op\":\"add\",\"path\":\"/data/n\",\"value\":5}]",
            422,
            "Invalid",
        ),
        (
            "data replaced by a list",
            "[{\"op\":\"replace\",\"path\":\"/data\",\"value\":[1]}]",
            422,
            "Invalid",
        ),
        (
            "a label value invalid",
            "[{\"op\":\"add\",\"path\":\"/metadata/labels/x\",\"value\":\"a b\"}]",
            422,
            "Invalid",
        ),
        (
            "name changed",
            "[{\"op\":\"replace\",\"path\":\"/metadata/name\",\"value\":\"other\"}]",
            400,
            "BadRequest",
        ),
        (
            "name removed",
            "[{\"op\":\"remove\",\"path\":\"/metadata/name\"}]",
            400,
            "BadRequest",
        ),
        (
            "metadata removed",
            "[{\"op\":\"remove\",\"path\":\"/metadata\"}]",
            400,
            "BadRequest",
        ),
        (
            "namespace changed",
            "[{\"op\":\"replace\",\"path\":\"/metadata/namespace\",\"value\":\"kube-system\"}]",
            400,
            "BadRequest",
        ),
        (
            "uid changed",
            "[{\"op\":\"replace\",\"path\":\"/metadata/uid\",\"value\":\"6b4f8a0c-0000-4000-8000-000000000000\"}]",
            422,
            "Invalid",
        ),
        (
            "kind changed",
            "[{\"op\":\"replace\",\"path\":\"/kind\",\"value\":\"Secret\"}]",
            422,
            "Invalid",
        ),
        (
            "kind removed",
            "[{\"op\":\"remove\",\"path\":\"/kind\"}]",
            422,
            "Invalid",
        ),
        (
            "apiVersion changed",
            "[{\"op\":\"replace\",\"path\":\"/apiVersion\",\"value\":\"v2\"}]",
            422,
            "Invalid",
        ),
        (
            "the whole object replaced",
            "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"a\":1}}]",
            422,
            "Invalid",
        ),
        (
            "a stale resourceVersion",
            "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"1\"}]",
            409,
            "Conflict",
        ),
    ];
    for (name, body, code, reason) in bad_ops {
        t.row(
            &format!("JSON patch: {name}"),
            "PATCH",
            cm,
            JSON_PATCH,
            s(body),
            *code,
            reason,
        );
    }
    t.row(
        "JSON patch: widget kind changed",
        "PATCH",
        w,
        JSON_PATCH,
        s("[{\"op\":\"replace\",\"path\":\"/kind\",\"value\":\"Gadget\"}]"),
        422,
        "Invalid",
    );
    t.row(
        "JSON patch: widget apiVersion changed",
        "PATCH",
        w,
        JSON_PATCH,
        s("[{\"op\":\"replace\",\"path\":\"/apiVersion\",\"value\":\"example.kapi.dev/v2\"}]"),
        422,
        "Invalid",
    );
    t.row(
        "JSON patch: widget replicas a string",
        "PATCH",
        w,
        JSON_PATCH,
        s("[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":\"many\"}]"),
        422,
        "Invalid",
    );
    t.row(
        "JSON patch: deployment replicas negative",
        "PATCH",
        d,
        JSON_PATCH,
        s("[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":-1}]"),
        422,
        "Invalid",
    );
    t.row(
        "JSON patch: deployment containers removed",
        "PATCH",
        d,
        JSON_PATCH,
        s("[{\"op\":\"remove\",\"path\":\"/spec/template/spec/containers\"}]"),
        422,
        "Invalid",
    );
    let many = |n: usize| {
        bytes(&Value::Array(vec![
            json!({"op": "test", "path": "/data/key", "value": "value"});
            n
        ]))
    };
    t.row(
        "JSON patch: 10,001 operations",
        "PATCH",
        cm,
        JSON_PATCH,
        many(10_001),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "JSON patch: 20,000 operations",
        "PATCH",
        w,
        JSON_PATCH,
        bytes(&Value::Array(vec![
            json!({"op": "test", "path": "/spec/color", "value": "red"});
            20_000
        ])),
        413,
        "RequestEntityTooLarge",
    );
    t.row(
        "JSON patch: 10,001 operations on nothing",
        "PATCH",
        &format!("{CONFIGMAPS}/absent"),
        JSON_PATCH,
        many(10_001),
        404,
        "NotFound",
    );
    // Nesting grown by a patch past what can be read back.
    let nest = |n: usize| (0..n).fold(json!(1), |v, _| json!({"a": v}));
    t.row("JSON patch: copying a subtree into itself until too deep", "PATCH", w, JSON_PATCH,
        bytes(&json!([
            {"op": "add", "path": "/spec/config/deep", "value": nest(100)},
            {"op": "copy", "from": "/spec/config/deep", "path": format!("/spec/config/deep{}", "/a".repeat(99))},
        ])), 422, "Invalid");
    t.row("JSON patch: a value 120 deep under a path 120 deep", "PATCH", w, JSON_PATCH,
        bytes(&json!([
            {"op": "add", "path": "/spec/config/deep", "value": nest(100)},
            {"op": "replace", "path": format!("/spec/config/deep{}", "/a".repeat(99)), "value": nest(100)},
        ])), 422, "Invalid");

    // Copies that double the document (issue #17): refused once they have copied
    // kube's JSONPatchMaxCopyBytes (3 MiB), with or without a final remove.
    let kib: serde_json::Map<String, Value> = (0..16)
        .map(|i| (format!("k{i:02}"), Value::from("v".repeat(56))))
        .collect();
    for (copies, remove) in [(20, true), (20, false), (30, true)] {
        let mut ops = vec![json!({"op": "add", "path": "/metadata/annotations/a", "value": kib})];
        ops.extend((0..copies).map(|i| {
            json!({"op": "copy", "from": "/metadata/annotations/a", "path": format!("/metadata/annotations/a/c{i}")})
        }));
        if remove {
            ops.push(json!({"op": "remove", "path": "/metadata/annotations/a"}));
        }
        let name = format!(
            "JSON patch: {copies} copies doubling a 1 KiB map{}",
            if remove { ", then removed" } else { "" }
        );
        t.row(
            &name,
            "PATCH",
            cm,
            JSON_PATCH,
            bytes(&Value::Array(ops)),
            422,
            "Invalid",
        );
    }

    let bad_merge: &[(&str, &str, u16, &str)] = &[
        ("a list", "[1,2]", 400, "BadRequest"),
        ("a string", "\"x\"", 400, "BadRequest"),
        ("a number", "5", 400, "BadRequest"),
        ("malformed", "{\"data\":", 400, "BadRequest"),
        ("empty body", "", 400, "BadRequest"),
        ("100,000 deep", "", 400, "BadRequest"),
        (
            "name changed",
            "{\"metadata\":{\"name\":\"other\"}}",
            400,
            "BadRequest",
        ),
        (
            "name removed",
            "{\"metadata\":{\"name\":null}}",
            400,
            "BadRequest",
        ),
        (
            "namespace changed",
            "{\"metadata\":{\"namespace\":\"kube-system\"}}",
            400,
            "BadRequest",
        ),
        (
            "uid changed",
            "{\"metadata\":{\"uid\":\"6b4f8a0c-0000-4000-8000-000000000000\"}}",
            422,
            "Invalid",
        ),
        ("kind changed", "{\"kind\":\"Secret\"}", 422, "Invalid"),
        ("kind removed", "{\"kind\":null}", 422, "Invalid"),
        (
            "apiVersion changed",
            "{\"apiVersion\":\"apps/v1\"}",
            422,
            "Invalid",
        ),
        (
            "a value of the wrong type",
            "{\"data\":{\"k\":[1]}}",
            422,
            "Invalid",
        ),
        ("data a string", "{\"data\":\"x\"}", 422, "Invalid"),
        (
            "labels invalid",
            "{\"metadata\":{\"labels\":{\"a b\":\"c\"}}}",
            422,
            "Invalid",
        ),
        (
            "a stale resourceVersion",
            "{\"metadata\":{\"resourceVersion\":\"1\"}}",
            409,
            "Conflict",
        ),
    ];
    for (name, body, code, reason) in bad_merge {
        let body = if *name == "100,000 deep" {
            format!("{{\"data\":{}}}", deep_object(100_000))
        } else {
            body.to_string()
        };
        t.row(
            &format!("merge patch: {name}"),
            "PATCH",
            cm,
            MERGE_PATCH,
            s(&body),
            *code,
            reason,
        );
        if matches!(
            *name,
            "a list" | "malformed" | "name changed" | "kind changed" | "uid changed"
        ) {
            t.row(
                &format!("strategic merge patch: {name}"),
                "PATCH",
                cm,
                STRATEGIC,
                s(&body),
                *code,
                reason,
            );
        }
    }
    t.row(
        "merge patch: widget color changed (immutable)",
        "PATCH",
        w,
        MERGE_PATCH,
        s("{\"spec\":{\"color\":\"blue\"}}"),
        422,
        "Invalid",
    );
    t.row(
        "merge patch: widget spec removed",
        "PATCH",
        w,
        MERGE_PATCH,
        s("{\"spec\":null}"),
        422,
        "Invalid",
    );
    t.row(
        "merge patch: widget kind changed",
        "PATCH",
        w,
        MERGE_PATCH,
        s("{\"kind\":\"Gadget\"}"),
        422,
        "Invalid",
    );
    t.row("merge patch: a bomb of 100,000 keys", "PATCH", w, MERGE_PATCH,
        bytes(&json!({"spec": {"config": (0..100_000).map(|i| (format!("key{i:07}"), json!("0123456789"))).collect::<serde_json::Map<_, _>>()}})), 413, "RequestEntityTooLarge");
    t.row("merge patch: a bomb of 50,000 nulls", "PATCH", w, MERGE_PATCH,
        bytes(&json!({"spec": {"config": (0..50_000).map(|i| (format!("k{i}"), Value::Null)).collect::<serde_json::Map<_, _>>(), "color": "blue"}})), 422, "Invalid");
    t.row(
        "strategic merge patch: deployment selector broken",
        "PATCH",
        d,
        STRATEGIC,
        s("{\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"nope\"}}}}"),
        422,
        "Invalid",
    );
    t.row(
        "strategic merge patch: widget ports of the wrong type",
        "PATCH",
        w,
        STRATEGIC,
        s("{\"spec\":{\"ports\":\"http\"}}"),
        422,
        "Invalid",
    );
    t.row(
        "apply: without fieldManager",
        "PATCH",
        cm,
        APPLY,
        bytes(&configmap("target")),
        422,
        "Invalid",
    );
    t.row(
        "apply: malformed YAML",
        "PATCH",
        &format!("{cm}?fieldManager=t"),
        APPLY,
        s("metadata: [\n"),
        400,
        "BadRequest",
    );
    t.row(
        "apply: YAML billion laughs",
        "PATCH",
        &format!("{cm}?fieldManager=t"),
        APPLY,
        s(&format!("{}metadata:\n  name: target\n", yaml_bomb(9))),
        400,
        "BadRequest",
    );
    t.row(
        "apply: name differs",
        "PATCH",
        &format!("{cm}?fieldManager=t"),
        APPLY,
        bytes(&configmap("other")),
        400,
        "BadRequest",
    );
    t.row(
        "apply: an invalid value",
        "PATCH",
        // Forced: the replicas are another manager's, and a conflict comes first.
        &format!("{w}?fieldManager=t&force=true"),
        APPLY,
        bytes(&with(widget("target"), |v| {
            v["spec"]["replicas"] = json!(1000)
        })),
        422,
        "Invalid",
    );
    t.row(
        "apply: a list",
        "PATCH",
        &format!("{cm}?fieldManager=t"),
        APPLY,
        s("- a\n"),
        400,
        "BadRequest",
    );
    t.row(
        "apply: fieldManager over 128 characters",
        "PATCH",
        &format!("{cm}?fieldManager={}", "m".repeat(129)),
        APPLY,
        bytes(&configmap("target")),
        422,
        "Invalid",
    );
    t.row(
        "patch: force on a merge patch",
        "PATCH",
        &format!("{cm}?force=true"),
        MERGE_PATCH,
        s("{}"),
        422,
        "Invalid",
    );
    for ct in [
        "application/json",
        "text/plain",
        "application/json-patch+yaml",
        "application/apply-patch+cbor",
        "",
        "application/merge-patch+json-x",
    ] {
        t.row(
            &format!("patch: content type {ct:?}"),
            "PATCH",
            cm,
            ct,
            s("{}"),
            415,
            "UnsupportedMediaType",
        );
    }
}

fn routes_and_media_types(t: &mut Table, cm: &str) {
    let not_found = [
        ("an unknown resource", "/api/v1/namespaces/default/gizmos"),
        ("an unknown group", "/apis/gizmo.example.com/v1/gizmos"),
        (
            "an unknown version of a group",
            "/apis/apps/v9/namespaces/default/deployments",
        ),
        (
            "an unknown core version",
            "/api/v2/namespaces/default/configmaps",
        ),
        (
            "a custom resource version not served",
            "/apis/example.kapi.dev/v2/namespaces/default/widgets",
        ),
        (
            "an unknown subresource",
            "/api/v1/namespaces/default/configmaps/target/bogus",
        ),
        (
            "a subresource configmaps lack",
            "/api/v1/namespaces/default/configmaps/target/status",
        ),
        (
            "too many segments",
            "/api/v1/namespaces/default/configmaps/target/status/more",
        ),
        (
            "a namespaced object without its namespace",
            "/api/v1/configmaps/target",
        ),
        (
            "a cluster-scoped resource in a namespace",
            "/api/v1/namespaces/default/nodes",
        ),
        (
            "namespaces inside a namespace",
            "/api/v1/namespaces/default/namespaces",
        ),
        (
            "an object that is not there",
            "/api/v1/namespaces/default/configmaps/absent",
        ),
        (
            "a namespace that is not there",
            "/api/v1/namespaces/absent/configmaps/target",
        ),
        (
            "a resource of another group",
            "/apis/apps/v1/namespaces/default/configmaps",
        ),
        ("an empty segment", "/api/v1/namespaces/default//configmaps"),
        (
            "the legacy watch prefix on an unknown resource",
            "/api/v1/watch/namespaces/default/gizmos",
        ),
        ("outside the API", "/nothing/here"),
        (
            "scale of a configmap",
            "/api/v1/namespaces/default/configmaps/target/scale",
        ),
    ];
    for (name, path) in not_found {
        t.get(&format!("GET {name}"), path, 404, "NotFound");
    }
    t.row(
        "create: an unknown resource",
        "POST",
        "/api/v1/namespaces/default/gizmos",
        JSON,
        bytes(&json!({"metadata": {"name": "g"}})),
        404,
        "NotFound",
    );
    t.row(
        "create: an unknown group",
        "POST",
        "/apis/gizmo.example.com/v1/namespaces/default/gizmos",
        JSON,
        bytes(&json!({"metadata": {"name": "g"}})),
        404,
        "NotFound",
    );
    t.row(
        "create: in a namespace that is not there",
        "POST",
        "/api/v1/namespaces/absent/configmaps",
        JSON,
        bytes(&configmap("x")),
        404,
        "NotFound",
    );
    t.row(
        "delete: an unknown resource",
        "DELETE",
        "/api/v1/namespaces/default/gizmos/g",
        "",
        None,
        404,
        "NotFound",
    );
    t.row(
        "patch: an object that is not there",
        "PATCH",
        &format!("{CONFIGMAPS}/absent"),
        MERGE_PATCH,
        s("{}"),
        404,
        "NotFound",
    );
    t.row(
        "delete: an object that is not there",
        "DELETE",
        &format!("{CONFIGMAPS}/absent"),
        "",
        None,
        404,
        "NotFound",
    );
    t.row(
        "POST to a named object",
        "POST",
        cm,
        JSON,
        bytes(&configmap("target")),
        405,
        "MethodNotAllowed",
    );
    t.row(
        "PUT to a collection",
        "PUT",
        CONFIGMAPS,
        JSON,
        bytes(&configmap("target")),
        405,
        "MethodNotAllowed",
    );
    t.row(
        "PATCH a collection",
        "PATCH",
        CONFIGMAPS,
        MERGE_PATCH,
        s("{}"),
        405,
        "MethodNotAllowed",
    );
    t.row(
        "an unknown method",
        "BREW",
        cm,
        "",
        None,
        405,
        "MethodNotAllowed",
    );
    t.row(
        "create a binding of a configmap",
        "POST",
        &format!("{cm}/binding"),
        JSON,
        s("{}"),
        404,
        "NotFound",
    );
    for ct in [
        "text/plain",
        "application/xml",
        "application/cbor",
        "multipart/form-data",
        "application/json-patch+json",
        "application/x-www-form-urlencoded",
    ] {
        t.row(
            &format!("create: content type {ct}"),
            "POST",
            CONFIGMAPS,
            ct,
            bytes(&configmap("ct")),
            415,
            "UnsupportedMediaType",
        );
    }
    // A JSON body labelled protobuf: a built-in kind reads protobuf, and this is none.
    t.row(
        "create: JSON labelled application/vnd.kubernetes.protobuf",
        "POST",
        CONFIGMAPS,
        "application/vnd.kubernetes.protobuf",
        bytes(&configmap("ct")),
        400,
        "BadRequest",
    );
    t.row(
        "update: content type text/plain",
        "PUT",
        cm,
        "text/plain",
        bytes(&configmap("target")),
        415,
        "UnsupportedMediaType",
    );
}

fn list_and_watch_parameters(t: &mut Table, cm: &str) {
    let label_selectors = [
        "a%20in%20(b",
        "!!a",
        "a%3D%3D%3Db",
        "a%20in%20b",
        "(",
        "a%20notin",
        "%3Db",
        "a%3D(b)",
        "a%20b",
        "a!%3D%3Db",
        "a%3Db%20c",
        "a%2C%2C",
        "%2C",
    ];
    for sel in label_selectors {
        t.get(
            &format!("list: labelSelector {sel}"),
            &format!("{CONFIGMAPS}?labelSelector={sel}"),
            400,
            "BadRequest",
        );
    }
    t.get(
        "list: labelSelector key too long",
        &format!("{CONFIGMAPS}?labelSelector={}", "k".repeat(64)),
        400,
        "BadRequest",
    );
    t.get(
        "list: labelSelector value too long",
        &format!("{CONFIGMAPS}?labelSelector=a%3D{}", "v".repeat(64)),
        400,
        "BadRequest",
    );
    t.get(
        "list: labelSelector prefix invalid",
        &format!("{CONFIGMAPS}?labelSelector=Bad_Prefix%2Fa"),
        400,
        "BadRequest",
    );
    let field_selectors = [
        "a",
        "metadata.name",
        "spec.x%3D1",
        "metadata.name%3D%3Da%3Db",
        "metadata.name%3Da%2Cb",
        "data.key%3Dvalue",
        "%3Da",
        "metadata.uid%3Dx",
        "status.phase%3DRunning",
    ];
    for sel in field_selectors {
        t.get(
            &format!("list: fieldSelector {sel}"),
            &format!("{CONFIGMAPS}?fieldSelector={sel}"),
            400,
            "BadRequest",
        );
    }
    t.get(
        "list widgets: fieldSelector on a field not selectable",
        &format!("{WIDGETS}?fieldSelector=spec.color%3Dred"),
        400,
        "BadRequest",
    );
    t.get(
        "get: fieldSelector of another name",
        &format!("{cm}?watch=true&fieldSelector=metadata.name%3Dother"),
        400,
        "BadRequest",
    );
    use base64::Engine;
    let b64 = |v: &Value| base64::engine::general_purpose::STANDARD.encode(v.to_string());
    let tokens = [
        ("not base64", "!!!".to_string()),
        (
            "base64 of garbage",
            base64::engine::general_purpose::STANDARD.encode("garbage"),
        ),
        (
            "another version",
            b64(&json!({"v": "meta.k8s.io/v2", "rv": 5, "start": "target"})),
        ),
        (
            "a zero revision",
            b64(&json!({"v": "meta.k8s.io/v1", "rv": 0, "start": "target"})),
        ),
        // A negative revision is no error: kube-apiserver reads it as "go on at the
        // latest revision", the token its 410 for a compacted one carries.
        (
            "a start escaping the prefix",
            b64(&json!({"v": "meta.k8s.io/v1", "rv": 5, "start": "../../secrets/"})),
        ),
        (
            "an absolute start",
            b64(&json!({"v": "meta.k8s.io/v1", "rv": 5, "start": "/registry"})),
        ),
        ("no start", b64(&json!({"v": "meta.k8s.io/v1", "rv": 5}))),
        (
            "a string revision",
            b64(&json!({"v": "meta.k8s.io/v1", "rv": "5", "start": "target"})),
        ),
    ];
    for (name, token) in tokens {
        t.get(
            &format!("list: continue token {name}"),
            &format!("{CONFIGMAPS}?limit=1&continue={}", urlencode(&token)),
            400,
            "BadRequest",
        );
    }
    t.get(
        "list: continue with a resourceVersion",
        &format!(
            "{CONFIGMAPS}?limit=1&resourceVersion=5&continue={}",
            b64(&json!({"v": "meta.k8s.io/v1", "rv": 5, "start": "target"}))
        ),
        400,
        "BadRequest",
    );
    for limit in ["abc", "1.5", "", "99999999999999999999", "0x10"] {
        t.get(
            &format!("list: limit {limit:?}"),
            &format!("{CONFIGMAPS}?limit={limit}"),
            400,
            "BadRequest",
        );
    }
    for rv in ["abc", "-1", "1.5", "0x10", "%201", "99999999999999999999"] {
        t.get(
            &format!("list: resourceVersion {rv:?}"),
            &format!("{CONFIGMAPS}?resourceVersion={rv}"),
            400,
            "BadRequest",
        );
        t.get(
            &format!("get: resourceVersion {rv:?}"),
            &format!("{cm}?resourceVersion={rv}"),
            400,
            "BadRequest",
        );
        t.get(
            &format!("watch: resourceVersion {rv:?}"),
            &format!("{CONFIGMAPS}?watch=true&timeoutSeconds=1&resourceVersion={rv}"),
            400,
            "BadRequest",
        );
    }
    let invalid_lists = [
        "resourceVersionMatch=Exact",
        "resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch=Bogus&resourceVersion=1",
        "resourceVersionMatch=exact&resourceVersion=1",
        "resourceVersionMatch=Exact&resourceVersion=0",
        "sendInitialEvents=true",
        "sendInitialEvents=false",
    ];
    for q in invalid_lists {
        t.get(
            &format!("list: {q}"),
            &format!("{CONFIGMAPS}?{q}"),
            422,
            "Invalid",
        );
    }
    let invalid_watches = [
        "sendInitialEvents=true",
        "sendInitialEvents=true&resourceVersionMatch=Exact",
        "resourceVersionMatch=NotOlderThan",
        "resourceVersionMatch=Exact&resourceVersion=1",
        "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=x",
    ];
    for q in invalid_watches {
        t.get(
            &format!("watch: {q}"),
            &format!("{CONFIGMAPS}?watch=true&timeoutSeconds=1&{q}"),
            422,
            "Invalid",
        );
    }
    for q in [
        "timeoutSeconds=abc",
        "timeoutSeconds=",
        "timeoutSeconds=1.5",
        "labelSelector=!!a",
        "fieldSelector=spec.x%3D1",
        "limit=x",
        "timeoutSeconds=1&limit=-x",
    ] {
        t.get(
            &format!("watch: {q}"),
            &format!("{CONFIGMAPS}?watch=true&{q}"),
            400,
            "BadRequest",
        );
    }
    t.get(
        "watch: legacy prefix with a bad selector",
        "/api/v1/watch/namespaces/default/configmaps?labelSelector=!!a",
        400,
        "BadRequest",
    );
    t.get(
        "list: timeoutSeconds not a number",
        &format!("{CONFIGMAPS}?timeoutSeconds=soon"),
        400,
        "BadRequest",
    );
    t.get(
        "list: includeObject unknown",
        &format!("{CONFIGMAPS}?includeObject=Everything"),
        400,
        "BadRequest",
    );
    t.row(
        "deletecollection: a bad selector",
        "DELETE",
        &format!("{CONFIGMAPS}?labelSelector=!!a"),
        "",
        None,
        400,
        "BadRequest",
    );
    t.row(
        "deletecollection: resourceVersionMatch without resourceVersion",
        "DELETE",
        &format!("{CONFIGMAPS}?resourceVersionMatch=Exact"),
        "",
        None,
        422,
        "Invalid",
    );
}

fn request_options(t: &mut Table, cm: &str, w: &str) {
    for (method, path, ct, body) in [
        (
            "POST",
            CONFIGMAPS.to_string(),
            JSON,
            bytes(&configmap("opt")),
        ),
        ("PUT", cm.to_string(), JSON, bytes(&configmap("target"))),
        ("PATCH", cm.to_string(), MERGE_PATCH, s("{}")),
        ("DELETE", cm.to_string(), "", Vec::new()),
    ] {
        let body = (!body.is_empty()).then_some(body);
        t.row(
            &format!("{method}: dryRun=Bogus"),
            method,
            &format!("{path}?dryRun=Bogus"),
            ct,
            body.clone(),
            422,
            "Invalid",
        );
        t.row(
            &format!("{method}: dryRun=all"),
            method,
            &format!("{path}?dryRun=all"),
            ct,
            body.clone(),
            422,
            "Invalid",
        );
    }
    t.row(
        "create: fieldManager over 128 characters",
        "POST",
        &format!("{CONFIGMAPS}?fieldManager={}", "m".repeat(200)),
        JSON,
        bytes(&configmap("fm")),
        422,
        "Invalid",
    );
    t.row(
        "update: fieldManager with a control character",
        "PUT",
        &format!("{w}?fieldManager=a%07b"),
        JSON,
        bytes(&widget("target")),
        422,
        "Invalid",
    );
    t.row(
        "delete: propagationPolicy unknown",
        "DELETE",
        &format!("{cm}?propagationPolicy=Sideways"),
        "",
        None,
        422,
        "Invalid",
    );
    t.row(
        "delete: propagationPolicy in the body unknown",
        "DELETE",
        cm,
        JSON,
        s("{\"propagationPolicy\":\"Sideways\"}"),
        422,
        "Invalid",
    );
    t.row(
        "delete: orphanDependents and propagationPolicy",
        "DELETE",
        &format!("{cm}?orphanDependents=true&propagationPolicy=Background"),
        "",
        None,
        422,
        "Invalid",
    );
    t.row(
        "delete: dryRun in the body unknown",
        "DELETE",
        cm,
        JSON,
        s("{\"dryRun\":[\"Later\"]}"),
        422,
        "Invalid",
    );
    t.row(
        "delete: gracePeriodSeconds not a number",
        "DELETE",
        &format!("{cm}?gracePeriodSeconds=soon"),
        "",
        None,
        400,
        "BadRequest",
    );
    t.row(
        "delete: gracePeriodSeconds a string in the body",
        "DELETE",
        cm,
        JSON,
        s("{\"gracePeriodSeconds\":\"soon\"}"),
        400,
        "BadRequest",
    );
    t.row(
        "delete: preconditions a string",
        "DELETE",
        cm,
        JSON,
        s("{\"preconditions\":\"uid\"}"),
        400,
        "BadRequest",
    );
    t.row(
        "delete: dryRun a string in the body",
        "DELETE",
        cm,
        JSON,
        s("{\"dryRun\":\"All\"}"),
        400,
        "BadRequest",
    );
    t.row(
        "delete: malformed body",
        "DELETE",
        cm,
        JSON,
        s("{\"propagationPolicy\":"),
        400,
        "BadRequest",
    );
    t.row(
        "delete: another uid",
        "DELETE",
        cm,
        JSON,
        s("{\"preconditions\":{\"uid\":\"6b4f8a0c-0000-4000-8000-000000000000\"}}"),
        409,
        "Conflict",
    );
    t.row(
        "delete: a stale resourceVersion",
        "DELETE",
        w,
        JSON,
        s("{\"preconditions\":{\"resourceVersion\":\"1\"}}"),
        409,
        "Conflict",
    );
    t.row(
        "delete: a resourceVersion that is no number",
        "DELETE",
        w,
        JSON,
        s("{\"preconditions\":{\"resourceVersion\":\"abc\"}}"),
        409,
        "Conflict",
    );
    for accept in [
        "text/html",
        "application/xml",
        "application/cbor;q=1,text/plain",
    ] {
        t.row(
            &format!("create: Accept {accept}"),
            "POST",
            CONFIGMAPS,
            JSON,
            bytes(&configmap("acc")),
            406,
            "NotAcceptable",
        );
        t.0.last_mut().expect("a row").accept = Some(accept);
        t.row(
            &format!("get: Accept {accept}"),
            "GET",
            cm,
            "",
            None,
            406,
            "NotAcceptable",
        );
        t.0.last_mut().expect("a row").accept = Some(accept);
    }
}

/// Percent-encodes a query value.
fn urlencode(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// The generated set

/// The load's seeded PRNG ([`kapi_tests::load::Rng`]), seeded per case, with what the
/// generated set wants of it.
struct Rng(kapi_tests::load::Rng);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(kapi_tests::load::Rng::new(seed))
    }
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// A short string of characters that are mostly not allowed anywhere.
    fn garbage(&mut self) -> String {
        const CHARS: &[char] = &[
            'A',
            'Z',
            '_',
            ' ',
            '.',
            '-',
            '/',
            '%',
            '\u{e9}',
            '\u{1f600}',
            '"',
            '\\',
            ':',
            '@',
            '\u{0}',
            '\n',
            '*',
            '!',
            '=',
            ',',
            '(',
            ')',
            '~',
        ];
        let n = 1 + self.below(12);
        (0..n).map(|_| *self.pick(CHARS)).collect()
    }
}

/// Values that are the wrong type for almost any field.
fn wrong_value(rng: &mut Rng) -> Value {
    // No null or empty string: those often just unset an optional field.
    match rng.below(7) {
        0 => json!(rng.next() as i64),
        1 => json!(-1.5),
        2 => json!(true),
        3 => json!([rng.garbage()]),
        4 => json!({"x": rng.garbage()}),
        5 => json!(format!(" {}", rng.garbage())),
        _ => json!([[[]]]),
    }
}

/// The valid starting points: (collection, a valid object).
fn bases() -> Vec<(&'static str, Value)> {
    vec![
        (CONFIGMAPS, configmap("gen")),
        (WIDGETS, widget("gen")),
        (DEPLOYMENTS, deployment("gen")),
        (SERVICES, service("gen")),
    ]
}

/// Paths of fields a mutation may replace, per collection.
fn fields_of(collection: &str) -> &'static [&'static str] {
    match collection {
        CONFIGMAPS => &[
            "/metadata/name",
            "/metadata/labels",
            "/metadata/annotations",
            "/data",
            "/data/key",
            "/metadata",
            "/apiVersion",
            "/kind",
            "/immutable",
            "/binaryData",
        ],
        WIDGETS => &[
            "/metadata/name",
            "/metadata/labels/app",
            "/spec",
            "/spec/size",
            "/spec/color",
            "/spec/replicas",
            "/spec/ports",
            "/spec/ports/0/port",
            "/spec/ports/0/name",
            "/spec/tags",
            "/spec/labels",
            "/kind",
            "/apiVersion",
            "/metadata/finalizers",
        ],
        DEPLOYMENTS => &[
            "/metadata/name",
            "/spec/replicas",
            "/spec/selector",
            "/spec/selector/matchLabels",
            "/spec/template",
            "/spec/template/spec/containers",
            "/spec/template/spec/containers/0/image",
            "/spec/template/spec/containers/0/name",
            "/spec/template/metadata/labels",
            "/spec/strategy",
            "/spec/template/spec/restartPolicy",
        ],
        _ => &[
            "/metadata/name",
            "/spec/ports",
            "/spec/ports/0/port",
            "/spec/ports/0/protocol",
            "/spec/type",
            "/spec/selector",
            "/spec/clusterIP",
            "/spec/sessionAffinity",
            "/spec/ports/0/targetPort",
            "/spec/externalTrafficPolicy",
        ],
    }
}

/// Sets the value at a JSON pointer (creating objects on the way).
fn set_pointer(v: &mut Value, pointer: &str, value: Value) {
    let mut cur = v;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        if let Ok(n) = part.parse::<usize>()
            && cur.as_array().is_some_and(|items| n < items.len())
        {
            if last {
                cur[n] = value;
                return;
            }
            cur = &mut cur[n];
            continue;
        }
        if !cur.is_object() {
            *cur = json!({});
        }
        let map = cur.as_object_mut().expect("an object");
        if last {
            map.insert(part.to_string(), value);
            return;
        }
        cur = map.entry(part.to_string()).or_insert_with(|| json!({}));
    }
}

fn remove_pointer(v: &mut Value, pointer: &str) {
    let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(last);
        }
        Some(Value::Array(a)) => {
            if let Ok(n) = last.parse::<usize>()
                && n < a.len()
            {
                a.remove(n);
            }
        }
        _ => {}
    }
}

/// One generated case: a mutation of a valid object or request, made from `seed`.
fn generated_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let bases = bases();
    let (collection, base) = rng.pick(&bases).clone();
    let mut obj = base;
    let unique = format!("gen-{seed}");
    set_pointer(&mut obj, "/metadata/name", json!(unique));
    let kind = rng.below(20);
    let mut case = Case {
        name: format!("seed {seed}"),
        method: "POST",
        path: collection.to_string(),
        content_type: JSON,
        body: None,
        code: 0,
        reason: "",
        accept: None,
    };
    let field = *rng.pick(fields_of(collection));
    match kind {
        // A field of the wrong type.
        0..=2 => {
            set_pointer(&mut obj, field, wrong_value(&mut rng));
            case.name += &format!(": {field} of a wrong type");
        }
        // A required field removed, or the whole spec.
        3 => {
            for f in [
                "/spec/ports/0/port",
                "/spec/color",
                "/spec/selector",
                "/spec/template/spec/containers/0/image",
                "/metadata/name",
            ] {
                if rng.chance(50) {
                    remove_pointer(&mut obj, f);
                }
            }
            remove_pointer(&mut obj, "/metadata/name");
            case.name += ": required fields removed";
        }
        // An invalid name, label or annotation.
        4 | 5 => {
            let bad = rng.garbage();
            match rng.below(4) {
                0 => set_pointer(&mut obj, "/metadata/name", json!(format!("{unique}{bad}"))),
                1 => set_pointer(
                    &mut obj,
                    "/metadata/labels",
                    json!({format!("k{bad}"): "v"}),
                ),
                2 => set_pointer(
                    &mut obj,
                    "/metadata/labels",
                    json!({"k": format!("v{bad}")}),
                ),
                _ => set_pointer(
                    &mut obj,
                    "/metadata/annotations",
                    json!({format!("{bad}/k{bad}"): "v"}),
                ),
            }
            case.name += &format!(": metadata with {bad:?}");
        }
        // Random bytes, whole or spliced in.
        6 => {
            let mut b = bytes(&obj);
            let at = rng.below(b.len());
            let n = 1 + rng.below(16);
            let junk = rng.bytes(n);
            b.splice(at..at, junk);
            case.body = Some(b);
            case.name += ": bytes spliced in";
        }
        // Truncated.
        7 => {
            let mut b = bytes(&obj);
            b.truncate(rng.below(b.len()));
            case.body = Some(b);
            case.name += ": truncated";
        }
        // Nested past what can be read.
        8 => {
            let depth = 128 + rng.below(20_000);
            let text = String::from_utf8(bytes(&obj)).expect("UTF-8");
            let nested = text.replacen(
                "{\"apiVersion\"",
                &format!("{{\"nest\":{},\"apiVersion\"", deep_array(depth)),
                1,
            );
            case.body = Some(nested.into_bytes());
            case.name += &format!(": {depth} deep");
        }
        // A huge string: over the object limit, the body limit, or a field's own.
        // (Rare: they are slow to send.)
        9 if rng.chance(10) => {
            let size = if rng.chance(50) {
                OBJECT_LIMIT + rng.below(256 * 1024)
            } else {
                BODY_LIMIT + 1 + rng.below(32 * 1024)
            };
            if rng.chance(50) {
                set_pointer(&mut obj, field, json!("x".repeat(size)));
            } else {
                set_pointer(
                    &mut obj,
                    "/metadata/annotations/huge",
                    json!("x".repeat(size)),
                );
            }
            case.name += &format!(": a {size}-byte string");
        }
        // The wrong kind or apiVersion.
        9 | 10 => {
            let kinds = [
                "Secret",
                "Gadget",
                "",
                "ConfigMapList",
                "Status",
                "v1",
                "apps/v1",
                "example.kapi.dev/v2",
            ];
            let choice = json!(format!(
                "{}{}",
                rng.pick(&kinds),
                if rng.chance(50) {
                    rng.garbage()
                } else {
                    String::new()
                }
            ));
            let f = if rng.chance(50) {
                "/kind"
            } else {
                "/apiVersion"
            };
            set_pointer(&mut obj, f, choice);
            // An empty one is defaulted from the URL: make it wrong some other way.
            set_pointer(&mut obj, "/metadata/labels/bad", json!(rng.garbage() + " "));
            case.name += ": wrong kind or apiVersion";
        }
        // Unknown or duplicate fields under Strict.
        11 => {
            case.path = format!("{collection}?fieldValidation=Strict");
            if rng.chance(50) {
                set_pointer(
                    &mut obj,
                    &format!(
                        "{}/{}",
                        field.rsplit_once('/').map_or("", |p| p.0),
                        "zzUnknown"
                    ),
                    json!(1),
                );
                case.name += ": unknown field, Strict";
            } else {
                let text = String::from_utf8(bytes(&obj)).expect("UTF-8");
                case.body = Some(
                    text.replacen("\"metadata\":{", "\"metadata\":{\"name\":\"dup\",", 1)
                        .into_bytes(),
                );
                case.name += ": duplicate field, Strict";
            }
        }
        // A byte flipped somewhere (sometimes still valid).
        12 => {
            let mut b = bytes(&obj);
            let at = rng.below(b.len());
            b[at] ^= 1 << rng.below(8);
            case.body = Some(b);
            case.path = format!("{collection}?dryRun=All");
            case.name += ": a byte flipped (dry run)";
        }
        // Bad query parameters on a list or watch.
        13 => {
            let params = [
                "limit",
                "labelSelector",
                "fieldSelector",
                "resourceVersion",
                "resourceVersionMatch",
                "continue",
                "sendInitialEvents",
                "timeoutSeconds",
            ];
            let p = *rng.pick(&params);
            let value = urlencode(&rng.garbage());
            let watch = rng.chance(20);
            case.method = "GET";
            case.path = if watch {
                format!("{collection}?watch=true&timeoutSeconds=1&{p}={value}")
            } else {
                format!("{collection}?{p}={value}")
            };
            case.name += &format!(": {p}={value}");
        }
        // A bad path.
        14 => {
            let segments = [
                "gizmos",
                "v9",
                "..",
                "%00",
                "status",
                "scale",
                "namespaces",
                "",
                "a%2Fb",
                "watch",
                "apis",
                "default",
            ];
            let mut path = collection.to_string();
            for _ in 0..1 + rng.below(4) {
                path.push('/');
                let segment: &&str = rng.pick(&segments[..]);
                path.push_str(segment);
            }
            if rng.chance(50) {
                path = path.replacen("default", &urlencode(&rng.garbage()), 1);
            }
            case.method = *rng.pick(&["GET", "POST", "PUT", "DELETE", "PATCH"]);
            case.path = path;
            case.content_type = if case.method == "PATCH" {
                MERGE_PATCH
            } else {
                JSON
            };
            case.name += ": a bad path";
        }
        // A bad content type.
        15 => {
            let types = [
                "text/plain",
                "application/xml",
                "application/vnd.kubernetes.protobuf",
                "image/png",
                "application/jsonx",
                "*/*",
                "application",
                "json",
            ];
            case.content_type = *rng.pick(&types[..]);
            case.name += &format!(": content type {}", case.content_type);
        }
        // A bad patch on a target.
        16 | 17 => {
            let target = format!("{collection}/target");
            case.method = "PATCH";
            case.path = target;
            let ops = ["add", "remove", "replace", "move", "copy", "test", "bogus"];
            match rng.below(3) {
                0 => {
                    case.content_type = JSON_PATCH;
                    let n = 1 + rng.below(4);
                    let patch: Vec<Value> = (0..n)
                        .map(|_| {
                            let p = format!("{}/{}", rng.pick(fields_of(collection)), rng.garbage());
                            json!({"op": rng.pick(&ops), "path": p, "from": "/nope", "value": wrong_value(&mut rng)})
                        })
                        .collect();
                    case.body = Some(bytes(&Value::Array(patch)));
                    case.name += ": a JSON patch";
                }
                1 => {
                    case.content_type = *rng.pick(&[MERGE_PATCH, STRATEGIC]);
                    let mut patch = json!({});
                    set_pointer(&mut patch, field, wrong_value(&mut rng));
                    set_pointer(&mut patch, "/metadata/name", json!(rng.garbage()));
                    case.body = Some(bytes(&patch));
                    case.name += ": a merge patch renaming";
                }
                _ => {
                    case.content_type = *rng.pick(&[JSON_PATCH, MERGE_PATCH, STRATEGIC, APPLY]);
                    let mut b = bytes(&obj);
                    b.truncate(rng.below(b.len()));
                    case.body = Some(b);
                    case.path += "?fieldManager=gen";
                    case.name += ": a truncated patch";
                }
            }
        }
        // An update of a target with something wrong.
        18 => {
            case.method = "PUT";
            case.path = format!("{collection}/target");
            set_pointer(&mut obj, "/metadata/name", json!("target"));
            match rng.below(3) {
                0 => set_pointer(&mut obj, "/metadata/resourceVersion", json!(rng.garbage())),
                1 => set_pointer(&mut obj, "/metadata/uid", json!(rng.garbage())),
                _ => set_pointer(&mut obj, field, wrong_value(&mut rng)),
            }
            case.name += ": an update";
        }
        // Bad write options.
        _ => {
            let options = [
                "dryRun",
                "fieldValidation",
                "fieldManager",
                "propagationPolicy",
                "gracePeriodSeconds",
            ];
            let o = *rng.pick(&options);
            let value = urlencode(&rng.garbage());
            case.path = format!("{collection}?{o}={value}");
            if o == "fieldManager" {
                case.path = format!(
                    "{collection}?fieldManager={}",
                    "m".repeat(129 + rng.below(100))
                );
            }
            if matches!(o, "propagationPolicy" | "gracePeriodSeconds") {
                case.method = "DELETE";
                case.path = format!("{collection}/target?{o}={value}");
            }
            case.name += &format!(": {o}={value}");
        }
    }
    if case.body.is_none() && matches!(case.method, "POST" | "PUT") {
        case.body = Some(bytes(&obj));
    }
    case
}

/// What the generated set found.
#[derive(Default)]
struct Generated {
    failures: Vec<String>,
    /// Writes that succeeded (valid mutations), as (collection path, name).
    accepted: Vec<(String, String)>,
    answered: usize,
}

// ---------------------------------------------------------------------------------
// The suite

fn create_targets(kapi: &Kapi) {
    for (collection, obj) in [
        (CONFIGMAPS, configmap("target")),
        (WIDGETS, widget("target")),
        (DEPLOYMENTS, deployment("target")),
        (SERVICES, service("target")),
    ] {
        let (code, body) = kapi.request("POST", collection, JSON, Some(&obj));
        assert_eq!(code, 201, "creating {collection}/target: {body}");
    }
}

/// Runs the table: each answer checked, the revision compared around every write.
fn run_table(kapi: &Kapi, agent: &ureq::Agent, rows: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut slowest = Vec::new();
    for case in rows {
        let began = Instant::now();
        let before = case.is_write().then(|| kapi.revision());
        let answer = send(kapi, agent, case, Duration::from_secs(20));
        let (code, reason) = (case.code, case.reason);
        if let Some(why) = status_mismatch(&answer, code, reason) {
            failures.push(format!(
                "{}: {} {}: want {code} {reason}, {why}",
                case.name,
                case.method,
                short(&case.path)
            ));
        }
        if let Some(before) = before {
            let after = kapi.revision();
            if after != before {
                failures.push(format!(
                    "{}: the revision moved from {before} to {after} on a rejected write",
                    case.name
                ));
            }
        }
        slowest.push((began.elapsed(), case.name.clone()));
    }
    slowest.sort();
    eprintln!(
        "slowest rows: {:?}",
        &slowest[slowest.len().saturating_sub(12)..]
    );
    failures
}

fn short(path: &str) -> String {
    if path.len() > 160 {
        format!("{}…", &path[..160])
    } else {
        path.to_string()
    }
}

/// Runs the generated cases on `threads` clients at once, in batches between which
/// the revision is compared.
fn run_generated(kapi: &Arc<Kapi>, seed: u64, count: usize, threads: usize) -> Generated {
    let batch = 50;
    let result = Arc::new(Mutex::new(Generated::default()));
    let mut unchecked_batches = 0;
    let mut start = 0;
    while start < count {
        let end = (start + batch).min(count);
        let before = kapi.revision();
        let accepted_before = result.lock().unwrap().accepted.len();
        let next = Arc::new(AtomicUsize::new(start));
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (kapi, result, next) = (kapi.clone(), result.clone(), next.clone());
                std::thread::spawn(move || {
                    let agent = kapi.agent();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= end {
                            break;
                        }
                        let case = generated_case(seed.wrapping_add(i as u64));
                        let answer = send(&kapi, &agent, &case, Duration::from_secs(20));
                        let mut r = result.lock().unwrap();
                        r.answered += 1;
                        match &answer {
                            Ok((code, body)) if (200..300).contains(code) => {
                                if case.is_write() && !case.path.contains("dryRun=All") {
                                    let name = serde_json::from_str::<Value>(body)
                                        .ok()
                                        .and_then(|v| {
                                            v["metadata"]["name"].as_str().map(str::to_string)
                                        })
                                        .unwrap_or_default();
                                    eprintln!(
                                        "valid mutation: {} {} {}",
                                        case.name,
                                        case.method,
                                        short(&case.path)
                                    );
                                    r.accepted.push((
                                        case.path.split('?').next().unwrap_or("").to_string(),
                                        name,
                                    ));
                                }
                            }
                            _ => {
                                if let Some(why) = status_mismatch(&answer, 0, "") {
                                    r.failures.push(format!(
                                        "{}: {} {}: {why}",
                                        case.name,
                                        case.method,
                                        short(&case.path)
                                    ));
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("a client thread");
        }
        let after = kapi.revision();
        let mut r = result.lock().unwrap();
        // A batch where a mutation happened to be valid wrote; others must not have.
        let accepted_now: Vec<(String, String)> = r.accepted[accepted_before..].to_vec();
        if accepted_now.is_empty() {
            if after != before {
                r.failures.push(format!("cases {start}..{end}: every write was refused, yet the revision moved from {before} to {after}"));
            }
        } else {
            unchecked_batches += 1;
            for (path, name) in accepted_now {
                // A create that was accepted is really stored; then it goes.
                if path.ends_with('s') && !name.is_empty() && !name.starts_with("target") {
                    let (code, got) = kapi.request("GET", &format!("{path}/{name}"), JSON, None);
                    if code != 200 {
                        r.failures.push(format!(
                            "{path}/{name} was accepted but is not stored: {code} {got}"
                        ));
                    }
                    let (code, _) = kapi.request("DELETE", &format!("{path}/{name}"), JSON, None);
                    if code != 200 {
                        r.failures
                            .push(format!("{path}/{name} could not be deleted: {code}"));
                    }
                }
            }
        }
        drop(r);
        start = end;
    }
    let mut r = Arc::try_unwrap(result)
        .ok()
        .expect("workers are done")
        .into_inner()
        .unwrap();
    eprintln!(
        "generated: {} cases, {} accepted as valid, {unchecked_batches} of {} batches had valid writes",
        r.answered,
        r.accepted.len(),
        count.div_ceil(batch)
    );
    r.failures.truncate(200);
    r
}

/// Runs `scenario`; when it panics, prints the end of the server's log first.
fn showing_log(kapi: &Kapi, scenario: impl FnOnce()) {
    if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(scenario)) {
        let log = kapi.log_text();
        let tail: Vec<&str> = log.lines().rev().take(60).collect();
        eprintln!(
            "the server's log ends:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
        std::panic::resume_unwind(e);
    }
}

#[test]
fn hostile_requests_get_4xx_statuses_and_change_nothing() {
    let kapi = Arc::new(Kapi::start(Backend::Embedded));
    showing_log(&kapi.clone(), || hostile_requests(kapi));
}

fn hostile_requests(kapi: Arc<Kapi>) {
    let started = Instant::now();
    create_targets(&kapi);
    // The built-in controllers' writes (a new namespace's ServiceAccount) come first.
    kapi.settle();
    // The revision probe reads the store's revision: a write anywhere moves it to
    // exactly the new object's resourceVersion.
    let (code, probe) = kapi.request("POST", CONFIGMAPS, JSON, Some(&configmap("probe")));
    assert_eq!(code, 201, "{probe}");
    assert_eq!(
        kapi.revision().to_string(),
        probe["metadata"]["resourceVersion"].as_str().unwrap(),
        "the revision probe follows writes in other collections"
    );
    let agent = kapi.agent();
    // Warm up the paths the suite takes, then take the baseline.
    let built = Instant::now();
    let rows = table();
    eprintln!("the table was built in {:?}", built.elapsed());
    run_table(&kapi, &agent, &rows[..40]);
    let rss_before = rss_kib(&kapi);

    assert!(rows.len() >= 200, "the table has {} rows", rows.len());
    let mut failures = run_table(&kapi, &agent, &rows);
    let table_time = started.elapsed();

    let seed: u64 = std::env::var("BAD_INPUT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6b61_7069);
    let count = 10_200;
    let generated = run_generated(&kapi, seed, count, 4);
    assert_eq!(generated.answered, count);
    failures.extend(generated.failures.iter().cloned());

    // Still serving, and with its memory back near where it started.
    let (code, _) = kapi.request("GET", "/readyz", JSON, None);
    assert_eq!(code, 200);
    // The targets are still there (valid mutations among the generated updates may
    // have changed them).
    for collection in [CONFIGMAPS, WIDGETS, DEPLOYMENTS, SERVICES] {
        let (code, target) = kapi.request("GET", &format!("{collection}/target"), JSON, None);
        assert_eq!(code, 200, "{collection}/target: {target}");
    }
    let rss_after = rss_kib(&kapi);
    eprintln!(
        "bad input: {} table rows, {count} generated cases (seed {seed}) in {:?} (table {table_time:?}); RSS {rss_before} KiB before, {rss_after} KiB after",
        rows.len(),
        started.elapsed()
    );
    assert!(
        rss_after < 2 * rss_before + 64 * 1024,
        "memory grew from {rss_before} KiB to {rss_after} KiB"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------
// Slow and vanishing clients

/// Reads an HTTP/1.1 answer's status code from a raw connection (`None` if the server
/// closed it without one).
fn status_code(conn: &mut kapi_tests::RawTls) -> Option<u16> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n") {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    String::from_utf8_lossy(&head)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
}

/// Reads what the server has sent within `wait` into `head`; whether an answer's status
/// line has begun arriving (or the connection ended).
fn answer_started(conn: &mut kapi_tests::RawTls, head: &mut Vec<u8>, wait: Duration) -> bool {
    conn.sock
        .set_read_timeout(Some(wait))
        .expect("a read timeout");
    let mut byte = [0u8; 1];
    match conn.read(&mut byte) {
        Ok(1) => {
            head.push(byte[0]);
            // The rest of the status line follows at once.
            while !head.ends_with(b"\r\n") {
                match conn.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            true
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            false
        }
        _ => true,
    }
}

/// Whether the server has closed `conn`: waits up to `wait` for it to.
fn closed_within(conn: &mut kapi_tests::RawTls, wait: Duration) -> bool {
    conn.sock
        .set_read_timeout(Some(wait))
        .expect("a read timeout");
    let mut sink = [0u8; 4096];
    loop {
        match conn.read(&mut sink) {
            // Whatever the server says before closing (a 408, or nothing) is fine.
            Ok(n) if n > 0 => continue,
            Ok(_) => return true,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// Headers of a `POST` of `len` bytes of JSON to the configmaps.
fn post_head(len: usize) -> String {
    format!(
        "POST {CONFIGMAPS} HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
    )
}

#[test]
fn slow_clients_are_cut_off_while_others_are_served() {
    let kapi = Arc::new(Kapi::start_with(
        Backend::Embedded,
        &["--request-timeout", "3s"],
    ));
    let started = Instant::now();
    let mut slow = Vec::new();
    // Headers dribbled a byte at a time, and a connection that never says anything:
    // both cut off by the header timeout (kube-apiserver's 32 s).
    for dribble in [true, false] {
        let kapi = kapi.clone();
        slow.push(std::thread::spawn(move || {
            let mut conn = kapi.raw_tls(true);
            conn.write_all(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: kapi\r\n")
                .expect("the start of a request");
            conn.flush().expect("flushing");
            let begun = Instant::now();
            while begun.elapsed() < Duration::from_secs(50) {
                if dribble && conn.write_all(b"X").and_then(|()| conn.flush()).is_err() {
                    return begun.elapsed();
                }
                if closed_within(&mut conn, Duration::from_secs(1)) {
                    return begun.elapsed();
                }
            }
            panic!("a slow client (dribbling headers: {dribble}) was never cut off");
        }));
    }
    // A body slower than its Content-Length promised, with and without a client
    // certificate: answered within the request timeout (504 or the refusal, 401).
    let mut bodies = Vec::new();
    for (with_certificate, want) in [(true, 504), (false, 401)] {
        let kapi = kapi.clone();
        bodies.push(std::thread::spawn(move || {
            let mut conn = kapi.raw_tls(with_certificate);
            let body = bytes(&configmap("slow-body"));
            conn.write_all(post_head(body.len() + 1000).as_bytes())
                .expect("headers");
            conn.write_all(&body[..10]).expect("a little of the body");
            conn.flush().expect("flushing");
            let begun = Instant::now();
            let code = status_code(&mut conn);
            (with_certificate, want, code, begun.elapsed())
        }));
    }
    // A body dribbled a byte every 200 ms: the request timeout still applies.
    let dribbled = {
        let kapi = kapi.clone();
        std::thread::spawn(move || {
            let mut conn = kapi.raw_tls(true);
            let body = bytes(&configmap("dribbled"));
            conn.write_all(post_head(body.len()).as_bytes())
                .expect("headers");
            let begun = Instant::now();
            // Between bytes, look for the answer: once the server has answered, more
            // bytes would only make it reset the connection.
            let mut head = Vec::new();
            for b in &body {
                if conn.write_all(&[*b]).and_then(|()| conn.flush()).is_err() {
                    break;
                }
                if answer_started(&mut conn, &mut head, Duration::from_millis(200)) {
                    break;
                }
                if begun.elapsed() > Duration::from_secs(10) {
                    break;
                }
            }
            conn.sock
                .set_read_timeout(Some(Duration::from_secs(20)))
                .expect("a read timeout");
            let rest = status_code(&mut conn);
            let code = String::from_utf8_lossy(&head)
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .or(rest);
            (code, begun.elapsed())
        })
    };
    // Meanwhile everyone else is served promptly.
    let agent = kapi.agent();
    let mut slowest = Duration::ZERO;
    while started.elapsed() < Duration::from_secs(8) {
        let t = Instant::now();
        let res = kapi.exchange_as(&agent, None, "GET", CONFIGMAPS, JSON, None, None);
        assert_eq!(res.code, 200, "{}", res.body);
        slowest = slowest.max(t.elapsed());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        slowest < Duration::from_secs(2),
        "an ordinary list took {slowest:?} beside slow clients"
    );
    for b in bodies {
        let (with_certificate, want, code, took) = b.join().expect("a slow body");
        assert_eq!(
            code,
            Some(want),
            "a stalled body (client certificate: {with_certificate}) after {took:?}"
        );
        assert!(
            took < Duration::from_secs(10),
            "a stalled body was answered after {took:?}"
        );
    }
    let (code, took) = dribbled.join().expect("a dribbled body");
    assert_eq!(code, Some(504), "a dribbled body after {took:?}");
    for s in slow {
        let took = s.join().expect("a slow client");
        assert!(
            took < Duration::from_secs(45),
            "a client that never finished its headers was cut off after {took:?}"
        );
    }
    // Nothing of them was stored, and the server is fine.
    for name in ["slow-body", "dribbled"] {
        let (code, _) = kapi.request("GET", &format!("{CONFIGMAPS}/{name}"), JSON, None);
        assert_eq!(code, 404, "{name}");
    }
    assert_eq!(kapi.request("GET", "/readyz", JSON, None).0, 200);
    assert!(!kapi.log_text().contains("panicked"), "{}", kapi.log_text());
}

#[test]
fn clients_that_vanish_mid_body_leave_nothing_behind() {
    let kapi = Kapi::start(Backend::Embedded);
    create_targets(&kapi);
    let before = kapi.settle();
    let mut names = Vec::new();
    for i in 0..24 {
        let name = format!("vanished-{i}");
        let (path, body) = match i % 3 {
            0 => (
                CONFIGMAPS.to_string(),
                with(configmap(&name), |v| {
                    v["data"]["pad"] = json!("p".repeat(200_000))
                }),
            ),
            1 => (
                WIDGETS.to_string(),
                with(widget(&name), |v| {
                    v["spec"]["config"]["pad"] = json!("p".repeat(200_000))
                }),
            ),
            _ => (
                format!("{CONFIGMAPS}/target"),
                with(configmap("target"), |v| v["data"]["key"] = json!(name)),
            ),
        };
        let body = bytes(&body);
        let method = if i % 3 == 2 { "PUT" } else { "POST" };
        let mut conn = kapi.raw_tls(true);
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        conn.write_all(head.as_bytes()).expect("headers");
        // Cut anywhere from the first byte to the last but one.
        let cut = 1 + (i * 7919) % (body.len() - 1);
        conn.write_all(&body[..cut]).expect("part of the body");
        conn.flush().expect("flushing");
        if i % 2 == 0 {
            // Gone without a word, or with TLS's close_notify first.
            conn.conn.send_close_notify();
            let _ = conn.flush();
        }
        drop(conn);
        names.push((path, name));
    }
    // A chunked body that goes on past the limit is refused like any other.
    let mut conn = kapi.raw_tls(true);
    conn.write_all(format!("POST {CONFIGMAPS} HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").as_bytes()).expect("headers");
    let chunk = vec![b' '; 64 * 1024];
    let mut sent = 0;
    let mut code = None;
    while sent <= BODY_LIMIT + chunk.len() {
        let ok = conn
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .and_then(|()| conn.write_all(&chunk))
            .and_then(|()| conn.write_all(b"\r\n"))
            .and_then(|()| conn.flush());
        if ok.is_err() {
            break;
        }
        sent += chunk.len();
    }
    if code.is_none() {
        code = status_code(&mut conn);
    }
    assert_eq!(
        code,
        Some(413),
        "a chunked body over 3 MiB after {sent} bytes"
    );
    drop(conn);
    // The server handled them all (a request from a gone client still ends), and
    // stored nothing.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && kapi.revision() != before {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        kapi.revision(),
        before,
        "a vanished client's request was stored"
    );
    for (path, name) in &names {
        if path.ends_with("/target") {
            let (code, target) = kapi.request("GET", path, JSON, None);
            assert_eq!(
                (code, &target["data"]["key"]),
                (200, &json!("value")),
                "{target}"
            );
        } else {
            assert_eq!(
                kapi.request("GET", &format!("{path}/{name}"), JSON, None).0,
                404,
                "{name}"
            );
        }
    }
    let (code, created) = kapi.request("POST", CONFIGMAPS, JSON, Some(&configmap("after")));
    assert_eq!(code, 201, "{created}");
    assert!(!kapi.log_text().contains("panicked"), "{}", kapi.log_text());
}
