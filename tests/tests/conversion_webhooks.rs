//! CRD conversion webhooks end to end: a real HTTPS conversion webhook in the test
//! process converts `Gadget`s between `v1` (`spec.host` and `spec.port`) and
//! `v1beta1` (`spec.address`, the two joined). Through the API and kubectl: an object
//! written in one version is read, listed, watched and patched in the other; a list of
//! objects stored in both versions converts each page in one review with only the
//! objects in the other version; a webhook named by a Service is reached through the
//! Service's Endpoints; a webhook that is down, fails, or returns objects that are not
//! the ones sent gives kube-apiserver's 500 on reads and refuses writes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kapi_tests::{Backend, Kapi, on_every_backend};
use serde_json::{Value, json};

#[path = "support/https.rs"]
mod https;
use https::{HttpsServer, Received};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRD: &str = "gadgets.conv.kapi.dev";
const V1: &str = "/apis/conv.kapi.dev/v1/namespaces/default/gadgets";
const V1BETA1: &str = "/apis/conv.kapi.dev/v1beta1/namespaces/default/gadgets";

/// One object converted as the test webhook converts it: a Gadget's `host` and `port`
/// are v1beta1's `address`; an OpenTelemetryCollector's `spec.config` is text in
/// v1alpha1 (here JSON, which is YAML) and an object in v1beta1; a tekton Pipeline's
/// versions differ only in name here.
fn convert(mut obj: Value, to: &str) -> Value {
    match obj["kind"].as_str() {
        Some("Gadget") => obj["spec"] = convert_gadget(obj["spec"].take(), to),
        Some("OpenTelemetryCollector") => {
            let config = obj["spec"]["config"].take();
            obj["spec"]["config"] = match config {
                Value::String(text) if to.ends_with("/v1beta1") => {
                    serde_json::from_str(&text).expect("the config is JSON")
                }
                Value::Object(_) if to.ends_with("/v1alpha1") => json!(config.to_string()),
                other => other,
            };
        }
        _ => {}
    }
    obj["apiVersion"] = json!(to);
    obj
}

fn convert_gadget(spec: Value, to: &str) -> Value {
    let mut out = json!({"replicas": spec["replicas"]});
    if to.ends_with("/v1") {
        let address = spec["address"].as_str().unwrap_or(":0");
        let (host, port) = address.rsplit_once(':').unwrap_or((address, "0"));
        out["host"] = json!(host);
        out["port"] = json!(port.parse::<u64>().unwrap_or(0));
    } else {
        let host = spec["host"].as_str().unwrap_or_default();
        out["address"] = json!(format!("{host}:{}", spec["port"]));
    }
    out
}

/// The webhook: `/convert` converts; `/bad-uid` changes the objects' uid; `/drop-one`
/// returns one object fewer; `/fail` answers a failure.
async fn answer(received: Received) -> Value {
    let request = &received.body["request"];
    let to = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let mut converted: Vec<Value> = objects.into_iter().map(|o| convert(o, to)).collect();
    let mut result = json!({"status": "Success"});
    match received.path.as_str() {
        "/bad-uid" => {
            for o in &mut converted {
                o["metadata"]["uid"] = json!("not-the-uid");
            }
        }
        "/drop-one" => {
            converted.pop();
        }
        "/fail" => result = json!({"status": "Failure", "message": "no conversion today"}),
        _ => {}
    }
    // Answered in the review's own version.
    json!({"apiVersion": received.body["apiVersion"], "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": result, "convertedObjects": converted}})
}

/// The Services the webhook is named by, as `namespace/name`.
const SERVICES: [(&str, &str); 3] = [
    ("default", "conv"),
    (
        "opentelemetry-operator-system",
        "opentelemetry-operator-webhook-service",
    ),
    ("tekton-pipelines", "tekton-pipelines-webhook"),
];

fn webhook() -> HttpsServer {
    let names: Vec<String> = SERVICES
        .iter()
        .map(|(ns, n)| format!("{n}.{ns}.svc"))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    HttpsServer::start(&names, Arc::new(|r: Received| Box::pin(answer(r))))
}

/// The CRD, `storage` its storage version, converting through `client_config`.
fn crd(storage: &str, client_config: Value) -> Value {
    let version = |name: &str, spec: Value| {
        json!({"name": name, "served": true, "storage": name == storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": spec}}}}})
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD},
    "spec": {"group": "conv.kapi.dev", "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
            "listKind": "GadgetList"},
        "conversion": {"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"], "clientConfig": client_config}},
        "versions": [
            version("v1", json!({"host": {"type": "string"}, "port": {"type": "integer"},
                "replicas": {"type": "integer"}})),
            version("v1beta1", json!({"address": {"type": "string"},
                "replicas": {"type": "integer"}})),
        ]}})
}

fn url_config(hook: &HttpsServer, path: &str) -> Value {
    json!({"url": hook.url(path), "caBundle": hook.ca_bundle})
}

/// Replaces the CRD's conversion client configuration, then waits until reading `name`
/// in v1beta1 answers `code`.
fn reconfigure(kapi: &Kapi, client_config: Value, name: &str, code: u16) {
    let (status, mut current) = kapi.request("GET", &format!("{CRDS}/{CRD}"), JSON, None);
    assert_eq!(status, 200, "{current}");
    current["spec"]["conversion"]["webhook"]["clientConfig"] = client_config;
    let (status, body) = kapi.request("PUT", &format!("{CRDS}/{CRD}"), JSON, Some(&current));
    assert_eq!(status, 200, "{body}");
    kapi.poll(
        &format!("{V1BETA1}/{name}"),
        Duration::from_secs(30),
        "the new conversion configuration",
        |c, _| c == code,
    );
}

fn create(kapi: &Kapi, path: &str, name: &str, spec: Value) -> Value {
    let (code, body) = kapi.request(
        "POST",
        path,
        JSON,
        Some(&json!({"metadata": {"name": name}, "spec": spec})),
    );
    assert_eq!(code, 201, "create {name}: {body}");
    body
}

fn get(kapi: &Kapi, path: &str, name: &str) -> Value {
    let (code, body) = kapi.request("GET", &format!("{path}/{name}"), JSON, None);
    assert_eq!(code, 200, "get {path}/{name}: {body}");
    body
}

/// The reviews the webhook received after the first `skip`.
fn reviews_after(hook: &HttpsServer, skip: usize) -> Vec<Value> {
    hook.received()
        .into_iter()
        .skip(skip)
        .map(|r| r.body)
        .collect()
}

/// Makes Service `namespace/name` (port 443) lead to the webhook: its Endpoints hold
/// the webhook's address, as the aggregator routes an APIService's Service.
fn route_service(kapi: &Kapi, hook: &HttpsServer, namespace: &str, name: &str) {
    if namespace != "default" {
        let ns = json!({"metadata": {"name": namespace}});
        let (code, body) = kapi.request("POST", "/api/v1/namespaces", JSON, Some(&ns));
        assert_eq!(code, 201, "{body}");
    }
    let svc = json!({"ports": [{"name": "https", "port": 443, "targetPort": hook.port}]});
    create(
        kapi,
        &format!("/api/v1/namespaces/{namespace}/services"),
        name,
        svc,
    );
    let eps = json!({"metadata": {"name": name}, "subsets": [{
        "addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": hook.port}]}]});
    let path = format!("/api/v1/namespaces/{namespace}/endpoints");
    let (code, body) = kapi.request("POST", &path, JSON, Some(&eps));
    assert_eq!(code, 201, "{body}");
}

#[test]
fn each_version_reads_writes_patches_and_watches_the_other_through_a_service() {
    let kapi = Kapi::start(Backend::Embedded);
    let hook = webhook();
    route_service(&kapi, &hook, "default", "conv");
    kapi.establish(&crd(
        "v1",
        json!({"service": {"namespace": "default", "name": "conv", "path": "/convert"},
            "caBundle": hook.ca_bundle}),
    ));

    // Written in v1 (the storage version): no conversion. Read in v1beta1: converted.
    let a = create(
        &kapi,
        V1,
        "a",
        json!({"host": "h", "port": 80, "replicas": 1}),
    );
    assert!(
        hook.received().is_empty(),
        "a write in the storage version converts nothing"
    );
    let seen = get(&kapi, V1BETA1, "a");
    assert_eq!(seen["apiVersion"], "conv.kapi.dev/v1beta1");
    assert_eq!(seen["spec"], json!({"address": "h:80", "replicas": 1}));
    assert_eq!(seen["metadata"]["uid"], a["metadata"]["uid"]);
    assert_eq!(
        seen["metadata"]["resourceVersion"],
        a["metadata"]["resourceVersion"]
    );
    let review = hook.received().pop().unwrap();
    assert_eq!(review.path, "/convert");
    assert!(review.query.contains("timeout=30s"), "{}", review.query);
    assert_eq!(review.body["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(
        review.body["request"]["desiredAPIVersion"],
        "conv.kapi.dev/v1beta1"
    );
    assert_eq!(review.body["request"]["objects"][0]["spec"]["host"], "h");

    // Written in v1beta1: stored in v1, answered in v1beta1.
    let b = create(&kapi, V1BETA1, "b", json!({"address": "k:81"}));
    assert_eq!(b["apiVersion"], "conv.kapi.dev/v1beta1");
    assert_eq!(b["spec"]["address"], "k:81");
    assert_eq!(
        get(&kapi, V1, "b")["spec"],
        json!({"host": "k", "port": 81, "replicas": null})
    );

    // A merge patch through v1beta1 changes the v1 fields.
    let (code, patched) = kapi.request(
        "PATCH",
        &format!("{V1BETA1}/a"),
        MERGE,
        Some(&json!({"spec": {"address": "p:82"}})),
    );
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["spec"], json!({"address": "p:82", "replicas": 1}));
    assert_eq!(
        get(&kapi, V1, "a")["spec"],
        json!({"host": "p", "port": 82, "replicas": 1})
    );

    // A watch in v1beta1 sees a change written in v1 in its own shape.
    let rv = get(&kapi, V1BETA1, "a")["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    create(&kapi, V1, "c", json!({"host": "w", "port": 83}));
    let events = kapi.watch_events(&format!("{V1BETA1}?watch=true&resourceVersion={rv}"));
    let added = events
        .iter()
        .find(|e| e["object"]["metadata"]["name"] == "c")
        .expect("c's event");
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["apiVersion"], "conv.kapi.dev/v1beta1");
    assert_eq!(added["object"]["spec"]["address"], "w:83");

    // kubectl reads either version.
    let address = kapi.kubectl(&[
        "get",
        "gadgets.v1beta1.conv.kapi.dev",
        "a",
        "-o",
        "jsonpath={.spec.address}",
    ]);
    assert_eq!(address, "p:82");
    let host = kapi.kubectl(&[
        "get",
        "gadgets.v1.conv.kapi.dev",
        "c",
        "-o",
        "jsonpath={.spec.host}",
    ]);
    assert_eq!(host, "w");

    // Every kubectl release writes through v1beta1 (a server-side apply, then one that
    // changes it) and reads the object back in v1.
    for release in kapi_tests::KUBECTL_RELEASES {
        let name = format!("k-{}", release.replace('.', "-"));
        let manifest = |address: &str| {
            json!({"apiVersion": "conv.kapi.dev/v1beta1", "kind": "Gadget",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"address": address}})
            .to_string()
        };
        let apply = |args: &[&str], address: &str| {
            let mut all = vec!["apply", "-f", "-"];
            all.extend_from_slice(args);
            kapi.kubectl_ok(Some(release), &all, Some(&manifest(address)));
        };
        apply(&["--server-side"], "s:84");
        apply(&["--server-side", "--force-conflicts"], "t:85");
        let host = kapi.kubectl_ok(
            Some(release),
            &[
                "get",
                "gadgets.v1.conv.kapi.dev",
                &name,
                "-o",
                "jsonpath={.spec.host}:{.spec.port}",
            ],
            None,
        );
        assert_eq!(host, "t:85", "kubectl {release}");
    }
}

/// A webhook that fails every review of a single object into v1 (what the storage
/// version migration sends), logging them; it converts everything else.
fn webhook_failing_migrations(failed: Arc<Mutex<Vec<Value>>>) -> HttpsServer {
    HttpsServer::start(
        &[],
        Arc::new(move |mut r: Received| {
            let request = &r.body["request"];
            let single = request["objects"].as_array().is_some_and(|o| o.len() == 1);
            if single && request["desiredAPIVersion"] == "conv.kapi.dev/v1" {
                failed.lock().unwrap().push(r.body.clone());
                r.path = "/fail".into();
            }
            Box::pin(answer(r))
        }),
    )
}

/// The names of the objects each review since the first `skip` asked to convert into
/// `api_version`.
fn sent_into(hook: &HttpsServer, skip: usize, api_version: &str) -> Vec<Vec<String>> {
    reviews_after(hook, skip)
        .iter()
        .filter(|r| r["request"]["desiredAPIVersion"] == api_version)
        .map(|r| {
            let objects = r["request"]["objects"].as_array().unwrap();
            objects
                .iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn a_page_of_objects_stored_in_both_versions_converts_in_one_review() {
    on_every_backend(|kapi| {
        let failed = Arc::new(Mutex::new(Vec::new()));
        let hook = webhook_failing_migrations(failed.clone());
        kapi.establish(&crd("v1beta1", url_config(&hook, "/convert")));
        let stored_in_v1beta1 = ["a1", "a2", "a3", "a4", "a5", "a6"];
        for name in stored_in_v1beta1 {
            create(kapi, V1BETA1, name, json!({"address": format!("{name}:1")}));
        }
        // The storage version becomes v1; its migration fails at the first object (the
        // webhook refuses it), which leaves the six stored in v1beta1.
        let (_, mut current) = kapi.request("GET", &format!("{CRDS}/{CRD}"), JSON, None);
        current["spec"]["versions"][0]["storage"] = json!(true);
        current["spec"]["versions"][1]["storage"] = json!(false);
        let (code, body) = kapi.request("PUT", &format!("{CRDS}/{CRD}"), JSON, Some(&current));
        assert_eq!(code, 200, "{body}");
        let migration_tried = || !failed.lock().unwrap().is_empty();
        for _ in 0..600 {
            if migration_tried() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The migration starts once the stores write in v1: this create is stored so.
        assert!(migration_tried(), "the migration never started");
        let before = hook.received().len();
        create(kapi, V1, "b", json!({"host": "b", "port": 2}));
        let into_v1 = sent_into(&hook, before, "conv.kapi.dev/v1");
        assert!(!into_v1.iter().flatten().any(|n| n == "b"), "{into_v1:?}");

        // Listed in v1 in pages of three: one review per page, with only the objects
        // stored in v1beta1 (background readers may add reviews of their own). The
        // pages are read from the store (an exact resourceVersion): a consistent list
        // from the watch cache would find conversions memoised beside cached objects
        // and send no review for them.
        let before = hook.received().len();
        let mut items = Vec::new();
        let mut path = format!(
            "{V1}?limit=3&resourceVersion={}&resourceVersionMatch=Exact",
            kapi.revision()
        );
        loop {
            let (code, page) = kapi.request("GET", &path, JSON, None);
            assert_eq!(code, 200, "{page}");
            items.extend(page["items"].as_array().unwrap().clone());
            match page["metadata"]["continue"].as_str() {
                Some(token) => path = format!("{V1}?limit=3&continue={token}"),
                None => break,
            }
        }
        let names: Vec<&str> = items
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a1", "a2", "a3", "a4", "a5", "a6", "b"]);
        for item in &items {
            assert_eq!(item["apiVersion"], "conv.kapi.dev/v1", "{item}");
            assert!(item["spec"]["host"].is_string(), "{item}");
        }
        let sent = sent_into(&hook, before, "conv.kapi.dev/v1");
        assert!(
            sent.contains(&vec!["a1".into(), "a2".into(), "a3".into()]),
            "{sent:?}"
        );
        assert!(
            sent.contains(&vec!["a4".into(), "a5".into(), "a6".into()]),
            "{sent:?}"
        );
        assert!(
            !sent.iter().flatten().any(|n| n == "b"),
            "b is stored in v1: {sent:?}"
        );

        // Watched in v1beta1 from the start: the object stored in v1 arrives converted.
        let events = kapi.watch_events(&format!("{V1BETA1}?watch=true"));
        let b = events
            .iter()
            .find(|e| e["object"]["metadata"]["name"] == "b")
            .expect("b's event");
        assert_eq!(b["object"]["spec"]["address"], "b:2");
        assert_eq!(b["object"]["apiVersion"], "conv.kapi.dev/v1beta1");
        assert_eq!(events.len(), 7, "every object, once");
    });
}

#[test]
fn failed_conversions_are_kubes_500_on_reads_and_refuse_writes() {
    let kapi = Kapi::start(Backend::Embedded);
    let hook = webhook();
    kapi.establish(&crd("v1", url_config(&hook, "/convert")));
    create(&kapi, V1, "a", json!({"host": "h", "port": 80}));
    let gvk = "conv.kapi.dev/v1, Kind=Gadget";
    let refused = |path: &str, name: &str, spec: Value| {
        let (code, body) = kapi.request(
            "POST",
            path,
            JSON,
            Some(&json!({"metadata": {"name": name}, "spec": spec})),
        );
        assert_eq!(
            (code, body["reason"].as_str()),
            (500, Some("InternalError")),
            "{body}"
        );
        let (code, _) = kapi.request("GET", &format!("{V1}/{name}"), JSON, None);
        assert_eq!(code, 404, "a refused write stores nothing");
        body["message"].as_str().unwrap().to_string()
    };

    // Objects that are not the ones sent.
    reconfigure(&kapi, url_config(&hook, "/bad-uid"), "a", 500);
    let (_, body) = kapi.request("GET", &format!("{V1BETA1}/a"), JSON, None);
    assert_eq!(
        body["message"],
        format!(
            "Internal error occurred: conversion for {gvk} returned invalid converted object at index 1: must have the same UID: {} != not-the-uid",
            get(&kapi, V1, "a")["metadata"]["uid"].as_str().unwrap()
        )
    );
    let message = refused(V1BETA1, "x", json!({"address": "x:1"}));
    assert!(message.contains("must have the same UID"), "{message}");
    reconfigure(&kapi, url_config(&hook, "/drop-one"), "a", 500);
    let (code, body) = kapi.request("GET", V1BETA1, JSON, None);
    assert_eq!(code, 500);
    assert_eq!(
        body["message"],
        format!("Internal error occurred: conversion for {gvk} returned 0 objects, expected 1")
    );

    // A webhook that answers a failure.
    reconfigure(&kapi, url_config(&hook, "/fail"), "a", 500);
    let (_, body) = kapi.request("GET", &format!("{V1BETA1}/a"), JSON, None);
    assert_eq!(
        body["message"],
        format!(
            "Internal error occurred: conversion for {gvk} failed: conversion webhook for {gvk} failed: no conversion today"
        )
    );

    // A webhook that is down: reads in the storage version still work.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down =
        json!({"url": format!("https://127.0.0.1:{port}/convert"), "caBundle": hook.ca_bundle});
    reconfigure(&kapi, down, "a", 500);
    let (_, body) = kapi.request("GET", &format!("{V1BETA1}/a"), JSON, None);
    assert_eq!(
        body["message"],
        format!(
            "Internal error occurred: conversion for {gvk} failed: conversion webhook for {gvk} failed: Post \"https://127.0.0.1:{port}/convert?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    let message = refused(V1BETA1, "y", json!({"address": "y:1"}));
    assert!(message.contains("connection refused"), "{message}");
    assert_eq!(get(&kapi, V1, "a")["spec"]["host"], "h");
    // Back up: everything reads again.
    reconfigure(&kapi, url_config(&hook, "/convert"), "a", 200);
    assert_eq!(get(&kapi, V1BETA1, "a")["spec"]["address"], "h:80");
}

/// POSTs `body` until it is not refused for a failed conversion (a CRD's new client
/// configuration reaches the server through a watch); the last answer.
fn post_once_converting(kapi: &Kapi, path: &str, body: &Value) -> (u16, Value) {
    for _ in 0..600 {
        let (code, answer) = kapi.request("POST", path, JSON, Some(body));
        if code != 500 {
            return (code, answer);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    kapi.request("POST", path, JSON, Some(body))
}

/// The testdata CRDs that convert through a webhook, installed unchanged but for the
/// `caBundle` (what cert-manager's CA injector adds), their Services routed to the test
/// webhook. Both name review versions before `v1`, so they get `v1beta1` reviews.
#[test]
fn the_testdata_crds_with_webhook_conversion_convert_through_their_services() {
    let kapi = Kapi::start(Backend::Embedded);
    let hook = webhook();
    for (namespace, name) in &SERVICES[1..] {
        route_service(&kapi, &hook, namespace, name);
    }
    let dir = kapi_testing::testdata_dir().join("crds");
    for (file, crd) in [
        (
            "opentelemetry-operator-opentelemetrycollector.yaml",
            "opentelemetrycollectors.opentelemetry.io",
        ),
        ("tekton-pipeline.yaml", "pipelines.tekton.dev"),
    ] {
        let path = dir.join(file);
        kapi.kubectl(&["create", "-f", path.to_str().unwrap()]);
        kapi.wait_condition(crd, "Established", "True");
        let inject = json!({"spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": hook.ca_bundle}}}}});
        let (code, body) = kapi.request("PATCH", &format!("{CRDS}/{crd}"), MERGE, Some(&inject));
        assert_eq!(code, 200, "{body}");
    }

    // An OpenTelemetryCollector written in v1alpha1 (config as text) is stored in
    // v1beta1 (config as an object) and read back in either.
    let config = json!({"receivers": {"otlp": {}}, "exporters": {"debug": {}},
        "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}}}});
    let alpha = "/apis/opentelemetry.io/v1alpha1/namespaces/default/opentelemetrycollectors";
    let beta = "/apis/opentelemetry.io/v1beta1/namespaces/default/opentelemetrycollectors";
    let body = json!({"metadata": {"name": "otel"}, "spec": {"config": config.to_string()}});
    let (code, created) = post_once_converting(&kapi, alpha, &body);
    assert_eq!(code, 201, "{created}");
    assert_eq!(get(&kapi, beta, "otel")["spec"]["config"], config);
    let text = get(&kapi, alpha, "otel")["spec"]["config"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), config);
    let exporter = kapi.kubectl(&[
        "get",
        "opentelemetrycollectors.v1beta1.opentelemetry.io",
        "otel",
        "-o",
        "jsonpath={.spec.config.service.pipelines.traces.exporters[0]}",
    ]);
    assert_eq!(exporter, "debug");

    // A tekton Pipeline written in v1beta1 is stored in v1.
    let pipeline = json!({"metadata": {"name": "build"}, "spec": {"tasks": [
        {"name": "compile", "taskRef": {"name": "compiler"}}]}});
    let v1beta1 = "/apis/tekton.dev/v1beta1/namespaces/default/pipelines";
    let (code, created) = post_once_converting(&kapi, v1beta1, &pipeline);
    assert_eq!(code, 201, "{created}");
    let read = get(
        &kapi,
        "/apis/tekton.dev/v1/namespaces/default/pipelines",
        "build",
    );
    assert_eq!(read["spec"]["tasks"][0]["taskRef"]["name"], "compiler");

    let reviews: Vec<Value> = hook.received().into_iter().map(|r| r.body).collect();
    for desired in [
        "opentelemetry.io/v1beta1",
        "opentelemetry.io/v1alpha1",
        "tekton.dev/v1",
    ] {
        let review = reviews
            .iter()
            .find(|r| r["request"]["desiredAPIVersion"] == desired)
            .unwrap_or_else(|| panic!("no review into {desired}"));
        assert_eq!(
            review["apiVersion"], "apiextensions.k8s.io/v1beta1",
            "{review}"
        );
    }
}
