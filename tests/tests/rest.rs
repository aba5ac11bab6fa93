//! The REST surface over raw HTTP, on both backends: every verb, the semantics kubectl
//! and controllers rely on, and each error path with its `Status`.

use std::io::{BufRead, BufReader};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const JSON: &str = "application/json";

fn widget(name: &str) -> Value {
    json!({
        "apiVersion": "example.kapi.dev/v1",
        "kind": "Widget",
        "metadata": {"name": name, "labels": {"app": "demo", "tier": name}},
        "spec": {"size": "small", "color": "red"}
    })
}

fn status_of(v: &Value) -> (&str, i64) {
    (
        v["reason"].as_str().unwrap_or(""),
        v["code"].as_i64().unwrap_or(0),
    )
}

/// Reads watch events (one JSON object per line) until `n` arrived or the stream ends.
fn watch_events(kapi: &Kapi, path_and_query: &str, n: usize) -> Vec<Value> {
    let res = kapi
        .agent()
        .get(&format!("{}{path_and_query}", kapi.url()))
        .call()
        .expect("watch starts");
    let reader = BufReader::new(res.into_body().into_reader());
    let mut events = Vec::new();
    for line in reader.lines() {
        let line = line.expect("a line");
        if line.trim().is_empty() {
            continue;
        }
        events.push(serde_json::from_str::<Value>(&line).expect("each line is JSON"));
        if events.len() == n {
            break;
        }
    }
    events
}

fn crud_and_conflicts(kapi: &Kapi) {
    let (code, created) = kapi.request("POST", WIDGETS, JSON, Some(&widget("w1")));
    assert_eq!(code, 201, "{created}");
    let meta = &created["metadata"];
    assert!(meta["uid"].as_str().is_some_and(|u| u.len() == 36));
    assert!(meta["creationTimestamp"].as_str().is_some());
    assert_eq!(meta["generation"], 1);
    let rv1: i64 = meta["resourceVersion"].as_str().unwrap().parse().unwrap();

    let (code, dup) = kapi.request("POST", WIDGETS, JSON, Some(&widget("w1")));
    assert_eq!((code, status_of(&dup)), (409, ("AlreadyExists", 409)));
    assert_eq!(
        dup["message"],
        "widgets.example.kapi.dev \"w1\" already exists"
    );

    // generateName gets a five-character suffix.
    let mut gen_widget = widget("");
    gen_widget["metadata"] = json!({"generateName": "gen-"});
    let (code, generated) = kapi.request("POST", WIDGETS, JSON, Some(&gen_widget));
    assert_eq!(code, 201, "{generated}");
    let name = generated["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    // Update with the current resourceVersion, then with a stale one.
    let mut update = created.clone();
    update["spec"]["size"] = json!("large");
    let (code, updated) = kapi.request("PUT", &format!("{WIDGETS}/w1"), JSON, Some(&update));
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["metadata"]["generation"], 2);
    let rv2: i64 = updated["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv2 > rv1);
    let (code, stale) = kapi.request("PUT", &format!("{WIDGETS}/w1"), JSON, Some(&update));
    assert_eq!((code, status_of(&stale)), (409, ("Conflict", 409)));
    assert_eq!(
        stale["message"],
        "Operation cannot be fulfilled on widgets.example.kapi.dev \"w1\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // A custom resource's update must name the version it replaces.
    let mut blind = update.clone();
    blind["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let (code, refused) = kapi.request("PUT", &format!("{WIDGETS}/w1"), JSON, Some(&blind));
    assert_eq!((code, status_of(&refused).0), (422, "Invalid"), "{refused}");
    assert_eq!(
        refused["details"]["causes"][0]["field"],
        "metadata.resourceVersion"
    );

    // Validation: a 422 with one cause per field.
    let mut bad = widget("bad");
    bad["spec"]["size"] = json!("huge");
    let (code, invalid) = kapi.request("POST", WIDGETS, JSON, Some(&bad));
    assert_eq!((code, status_of(&invalid)), (422, ("Invalid", 422)));
    assert_eq!(invalid["details"]["causes"][0]["field"], "spec.size");
    assert_eq!(
        invalid["details"]["causes"][0]["reason"],
        "FieldValueNotSupported"
    );

    let (code, missing) = kapi.request("GET", &format!("{WIDGETS}/nope"), JSON, None);
    assert_eq!((code, status_of(&missing)), (404, ("NotFound", 404)));
    let (code, no_ns) = kapi.request(
        "POST",
        "/apis/example.kapi.dev/v1/namespaces/missing/widgets",
        JSON,
        Some(&widget("x")),
    );
    assert_eq!(
        (code, no_ns["message"].as_str()),
        (404, Some("namespaces \"missing\" not found"))
    );
    let (code, _) = kapi.request(
        "GET",
        "/apis/example.kapi.dev/v1/namespaces/default/gizmos",
        JSON,
        None,
    );
    assert_eq!(code, 404);
    let (code, bad_body) = kapi.request("POST", WIDGETS, JSON, Some(&json!("not an object")));
    assert_eq!((code, status_of(&bad_body).0), (400, "BadRequest"));
}

fn patches(kapi: &Kapi) {
    kapi.request("POST", WIDGETS, JSON, Some(&widget("p1")));
    let url = format!("{WIDGETS}/p1");
    let (code, merged) = kapi.request(
        "PATCH",
        &url,
        "application/merge-patch+json",
        Some(&json!({"spec": {"replicas": 3}})),
    );
    assert_eq!(
        (code, &merged["spec"]["replicas"]),
        (200, &json!(3)),
        "{merged}"
    );
    let (code, jp) = kapi.request(
        "PATCH",
        &url,
        "application/json-patch+json",
        Some(&json!([{"op": "replace", "path": "/spec/size", "value": "large"}])),
    );
    assert_eq!((code, &jp["spec"]["size"]), (200, &json!("large")), "{jp}");
    let (code, smp) = kapi.request(
        "PATCH",
        &url,
        "application/strategic-merge-patch+json",
        Some(&json!({"metadata": {"labels": {"patched": "yes"}}})),
    );
    assert_eq!(
        (code, &smp["metadata"]["labels"]["patched"]),
        (200, &json!("yes")),
        "{smp}"
    );
    assert_eq!(smp["metadata"]["labels"]["app"], "demo");
    let (code, unsupported) = kapi.request("PATCH", &url, "text/plain", Some(&json!({})));
    assert_eq!(
        (code, status_of(&unsupported).0),
        (415, "UnsupportedMediaType")
    );
    let (code, failed) = kapi.request(
        "PATCH",
        &url,
        "application/json-patch+json",
        Some(&json!([{"op": "test", "path": "/spec/size", "value": "small"}])),
    );
    assert_eq!(code, 422, "{failed}");
}

fn lists_and_selectors(kapi: &Kapi) {
    for i in 0..5 {
        let mut w = widget(&format!("l{i}"));
        w["metadata"]["labels"] = json!({"group": "list", "index": i.to_string()});
        assert_eq!(kapi.request("POST", WIDGETS, JSON, Some(&w)).0, 201);
    }
    let (_, list) = kapi.request(
        "GET",
        &format!("{WIDGETS}?labelSelector=group%3Dlist,index+notin+(0,1)"),
        JSON,
        None,
    );
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["l2", "l3", "l4"]);
    assert_eq!(list["kind"], "WidgetList");
    let (_, by_name) = kapi.request(
        "GET",
        &format!("{WIDGETS}?fieldSelector=metadata.name%3Dl3"),
        JSON,
        None,
    );
    assert_eq!(by_name["items"].as_array().unwrap().len(), 1);
    let (code, bad_field) = kapi.request(
        "GET",
        &format!("{WIDGETS}?fieldSelector=spec.nothing%3Dx"),
        JSON,
        None,
    );
    assert_eq!(
        (code, bad_field["message"].as_str()),
        (400, Some("field label not supported: spec.nothing"))
    );

    // Pagination: pages of two over one snapshot, unaffected by a later write.
    let mut seen = Vec::new();
    let (_, page) = kapi.request(
        "GET",
        &format!("{WIDGETS}?labelSelector=group%3Dlist&limit=2"),
        JSON,
        None,
    );
    let snapshot_rv = page["metadata"]["resourceVersion"].clone();
    let mut page = page;
    kapi.request(
        "POST",
        WIDGETS,
        JSON,
        Some(&{
            let mut w = widget("l9");
            w["metadata"]["labels"] = json!({"group": "list"});
            w
        }),
    );
    loop {
        for item in page["items"].as_array().unwrap() {
            seen.push(item["metadata"]["name"].as_str().unwrap().to_string());
        }
        assert_eq!(page["metadata"]["resourceVersion"], snapshot_rv);
        let Some(token) = page["metadata"]["continue"]
            .as_str()
            .filter(|c| !c.is_empty())
        else {
            break;
        };
        let (code, next) = kapi.request(
            "GET",
            &format!("{WIDGETS}?labelSelector=group%3Dlist&limit=2&continue={token}"),
            JSON,
            None,
        );
        assert_eq!(code, 200, "{next}");
        page = next;
    }
    assert_eq!(seen, ["l0", "l1", "l2", "l3", "l4"]);
    let (code, _) = kapi.request("GET", &format!("{WIDGETS}?continue=garbage"), JSON, None);
    assert_eq!(code, 400);
}

fn status_scale_and_finalizers(kapi: &Kapi) {
    let (_, created) = kapi.request("POST", WIDGETS, JSON, Some(&widget("s1")));
    let url = format!("{WIDGETS}/s1");
    // Status is ignored on the main resource and written through /status.
    let mut with_status = created.clone();
    with_status["status"] = json!({"replicas": 4});
    let (_, main) = kapi.request("PUT", &url, JSON, Some(&with_status));
    assert!(
        main.get("status").is_none() || main["status"].get("replicas").is_none(),
        "{main}"
    );
    let (code, st) = kapi.request(
        "PATCH",
        &format!("{url}/status"),
        "application/merge-patch+json",
        Some(&json!({"status": {"replicas": 4}})),
    );
    assert_eq!((code, &st["status"]["replicas"]), (200, &json!(4)), "{st}");
    assert_eq!(st["metadata"]["generation"], main["metadata"]["generation"]);

    let (code, scale) = kapi.request("GET", &format!("{url}/scale"), JSON, None);
    assert_eq!(
        (code, &scale["kind"], &scale["status"]["replicas"]),
        (200, &json!("Scale"), &json!(4)),
        "{scale}"
    );
    let (code, scaled) = kapi.request(
        "PATCH",
        &format!("{url}/scale"),
        "application/merge-patch+json",
        Some(&json!({"spec": {"replicas": 7}})),
    );
    assert_eq!(
        (code, &scaled["spec"]["replicas"]),
        (200, &json!(7)),
        "{scaled}"
    );
    let (_, obj) = kapi.request("GET", &url, JSON, None);
    assert_eq!(obj["spec"]["replicas"], 7);

    // A finalizer keeps a deleted object, with a deletionTimestamp, until it is removed.
    kapi.request(
        "PATCH",
        &url,
        "application/merge-patch+json",
        Some(&json!({"metadata": {"finalizers": ["example.kapi.dev/keep"]}})),
    );
    // 200 with the object, as kube-apiserver answers (202 only for the legacy
    // `orphanDependents: false`).
    let (code, pending) = kapi.request("DELETE", &url, JSON, None);
    assert_eq!(code, 200, "{pending}");
    assert!(pending["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = kapi.request(
        "DELETE",
        &url,
        JSON,
        Some(&json!({"orphanDependents": false})),
    );
    assert_eq!(code, 202);
    let (code, still) = kapi.request("GET", &url, JSON, None);
    assert_eq!(code, 200, "{still}");
    let (code, _) = kapi.request(
        "PATCH",
        &url,
        "application/merge-patch+json",
        Some(&json!({"metadata": {"finalizers": null}})),
    );
    assert_eq!(code, 200);
    assert_eq!(kapi.request("GET", &url, JSON, None).0, 404);

    // Preconditions.
    let (_, d1) = kapi.request("POST", WIDGETS, JSON, Some(&widget("d1")));
    let (code, pre) = kapi.request(
        "DELETE",
        &format!("{WIDGETS}/d1"),
        JSON,
        Some(&json!({"preconditions": {"uid": "wrong"}})),
    );
    assert_eq!((code, status_of(&pre).0), (409, "Conflict"));
    let uid = d1["metadata"]["uid"].as_str().unwrap();
    let (code, _) = kapi.request(
        "DELETE",
        &format!("{WIDGETS}/d1"),
        JSON,
        Some(&json!({"preconditions": {"uid": uid}, "propagationPolicy": "Background"})),
    );
    assert_eq!(code, 200);
}

fn watches(kapi: &Kapi) {
    let (_, list) = kapi.request("GET", WIDGETS, JSON, None);
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let existing = list["items"].as_array().unwrap().len();
    kapi.request("POST", WIDGETS, JSON, Some(&widget("watched")));
    kapi.request(
        "PATCH",
        &format!("{WIDGETS}/watched"),
        "application/merge-patch+json",
        Some(&json!({"spec": {"replicas": 2}})),
    );
    kapi.request("DELETE", &format!("{WIDGETS}/watched"), JSON, None);
    // From the list's resourceVersion: only what happened after it.
    let events = watch_events(
        kapi,
        &format!("{WIDGETS}?watch=true&resourceVersion={rv}&timeoutSeconds=5"),
        3,
    );
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["ADDED", "MODIFIED", "DELETED"]);
    // Without a resourceVersion: the current state first, as ADDED.
    let events = watch_events(
        kapi,
        &format!("{WIDGETS}?watch=true&timeoutSeconds=2"),
        existing,
    );
    assert!(events.iter().all(|e| e["type"] == "ADDED"));
    assert_eq!(events.len(), existing);
    // The watch-list protocol ends its initial events with an annotated bookmark.
    let events = watch_events(
        kapi,
        &format!(
            "{WIDGETS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=5"
        ),
        existing + 1,
    );
    let last = events.last().unwrap();
    assert_eq!(last["type"], "BOOKMARK");
    assert_eq!(
        last["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
}

fn request_options(kapi: &Kapi) {
    // fieldValidation: unknown fields are refused under Strict, dropped otherwise.
    let mut unknown = widget("fv1");
    unknown["spec"]["bogus"] = json!(1);
    let (code, strict) = kapi.request(
        "POST",
        &format!("{WIDGETS}?fieldValidation=Strict"),
        JSON,
        Some(&unknown),
    );
    assert_eq!(
        (code, strict["message"].as_str()),
        (
            400,
            Some("strict decoding error: unknown field \"spec.bogus\"")
        ),
        "{strict}"
    );
    let (code, warned) = kapi.request(
        "POST",
        &format!("{WIDGETS}?fieldValidation=Warn"),
        JSON,
        Some(&unknown),
    );
    assert_eq!(code, 201, "{warned}");
    assert!(warned["spec"].get("bogus").is_none(), "pruned: {warned}");
    let mut in_meta = widget("fv3");
    in_meta["metadata"]["colour"] = json!("blue");
    let (code, strict) = kapi.request(
        "POST",
        &format!("{WIDGETS}?fieldValidation=Strict"),
        JSON,
        Some(&in_meta),
    );
    assert_eq!(
        (code, strict["message"].as_str()),
        (
            400,
            Some("strict decoding error: unknown field \"metadata.colour\"")
        ),
        "{strict}"
    );
    let (code, bad) = kapi.request(
        "POST",
        &format!("{WIDGETS}?fieldValidation=Sometimes"),
        JSON,
        Some(&widget("fv2")),
    );
    // kube validates CreateOptions whole: 422 Invalid of CreateOptions.meta.k8s.io.
    assert_eq!((code, status_of(&bad)), (422, ("Invalid", 422)), "{bad}");
    assert_eq!(bad["details"]["kind"], "CreateOptions", "{bad}");

    // dryRun=All validates and answers, and stores nothing.
    let (code, dry) = kapi.request(
        "POST",
        &format!("{WIDGETS}?dryRun=All"),
        JSON,
        Some(&widget("dry")),
    );
    assert_eq!(
        (code, &dry["metadata"]["name"]),
        (201, &json!("dry")),
        "{dry}"
    );
    assert_eq!(
        kapi.request("GET", &format!("{WIDGETS}/dry"), JSON, None).0,
        404
    );
    let (code, _) = kapi.request("DELETE", &format!("{WIDGETS}/fv1?dryRun=All"), JSON, None);
    assert_eq!(code, 200);
    assert_eq!(
        kapi.request("GET", &format!("{WIDGETS}/fv1"), JSON, None).0,
        200
    );

    // A watch of one object by its path sees only that object.
    let (_, list) = kapi.request("GET", WIDGETS, JSON, None);
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    kapi.request("POST", WIDGETS, JSON, Some(&widget("other")));
    kapi.request("DELETE", &format!("{WIDGETS}/fv1"), JSON, None);
    let events = watch_events(
        kapi,
        &format!(
            "/apis/example.kapi.dev/v1/watch/namespaces/default/widgets/fv1?resourceVersion={rv}&timeoutSeconds=3"
        ),
        1,
    );
    assert_eq!(
        (
            events[0]["type"].as_str(),
            events[0]["object"]["metadata"]["name"].as_str()
        ),
        (Some("DELETED"), Some("fv1"))
    );

    // Reads at a resourceVersion newer than the store's wait, then time out with 504.
    let (code, too_new) = kapi.request(
        "GET",
        &format!("{WIDGETS}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan"),
        JSON,
        None,
    );
    assert_eq!(
        (code, too_new["reason"].as_str()),
        (504, Some("Timeout")),
        "{too_new}"
    );
    let (code, _) = kapi.request(
        "GET",
        &format!("{WIDGETS}?resourceVersionMatch=Exact"),
        JSON,
        None,
    );
    // ListOptions that fail validation are 422 Invalid, as kube answers.
    assert_eq!(code, 422);
}

fn core_kind_rules(kapi: &Kapi) {
    let cms = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": true});
    let (code, created) = kapi.request("POST", cms, JSON, Some(&cm));
    assert_eq!(code, 201, "{created}");
    assert!(created["metadata"].get("generation").is_none(), "{created}");
    let (code, refused) = kapi.request(
        "PATCH",
        &format!("{cms}/frozen"),
        "application/merge-patch+json",
        Some(&json!({"data": {"a": "2"}})),
    );
    assert_eq!(
        (code, refused["reason"].as_str()),
        (422, Some("Invalid")),
        "{refused}"
    );
    assert_eq!(
        refused["message"],
        "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
    // ConfigMaps, as most built-in kinds, take unconditional updates.
    let blind = json!({"metadata": {"name": "plain"}, "data": {"a": "1"}});
    assert_eq!(kapi.request("POST", cms, JSON, Some(&blind)).0, 201);
    let (code, replaced) = kapi.request(
        "PUT",
        &format!("{cms}/plain"),
        JSON,
        Some(&json!({"metadata": {"name": "plain"}, "data": {"a": "2"}})),
    );
    assert_eq!(
        (code, &replaced["data"]["a"]),
        (200, &json!("2")),
        "{replaced}"
    );
    // Metadata stays writable.
    let (code, _) = kapi.request(
        "PATCH",
        &format!("{cms}/frozen"),
        "application/merge-patch+json",
        Some(&json!({"metadata": {"labels": {"x": "y"}}})),
    );
    assert_eq!(code, 200);
}

#[test]
fn rest_semantics_on_every_backend() {
    for (name, backend) in Backend::all() {
        let kapi = Kapi::start(backend());
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crud_and_conflicts(&kapi);
            patches(&kapi);
            lists_and_selectors(&kapi);
            status_scale_and_finalizers(&kapi);
            watches(&kapi);
            request_options(&kapi);
            core_kind_rules(&kapi);
        }));
        if let Err(e) = run {
            eprintln!("backend {name} failed; server log:\n{}", kapi.log_text());
            std::panic::resume_unwind(e);
        }
    }
}

#[test]
fn metrics_count_requests_watches_and_storage_operations() {
    let kapi = Kapi::start(Backend::Embedded);
    kapi.request("POST", WIDGETS, JSON, Some(&widget("m1")));
    kapi.request("GET", WIDGETS, JSON, None);
    kapi.request("GET", &format!("{WIDGETS}/missing"), JSON, None);
    // An open watch, held while the metrics are read.
    let watch = kapi
        .agent()
        .get(&format!(
            "{}{WIDGETS}?watch=true&timeoutSeconds=30",
            kapi.url()
        ))
        .call()
        .expect("a watch starts");
    let (code, text) = kapi.request("GET", "/metrics", JSON, None);
    drop(watch);
    assert_eq!(code, 200);
    let text = text.as_str().expect("text format").to_string();
    let has = |needle: &str| text.lines().any(|l| l.contains(needle));
    assert!(
        has(
            r#"apiserver_request_total{verb="LIST",group="example.kapi.dev",version="v1",resource="widgets",subresource="",code="200"} 1"#
        ),
        "{text}"
    );
    assert!(
        has(
            r#"verb="POST",group="example.kapi.dev",version="v1",resource="widgets",subresource="",code="201"}"#
        ),
        "{text}"
    );
    assert!(
        has(
            r#"verb="GET",group="example.kapi.dev",version="v1",resource="widgets",subresource="",code="404"}"#
        ),
        "{text}"
    );
    assert!(has("apiserver_request_duration_seconds_bucket{"), "{text}");
    assert!(
        has(r#"kapi_storage_operation_duration_seconds_count{operation="create"}"#),
        "{text}"
    );
    assert!(
        has(
            r#"apiserver_longrunning_requests{verb="WATCH",group="example.kapi.dev",resource="widgets"} 1"#
        ),
        "{text}"
    );
}
