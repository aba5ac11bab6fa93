//! The built-in controllers, on both backends: namespace deletion (Terminating, content
//! deleted, then the namespace), and garbage collection over ownerReferences with
//! Background, Foreground and Orphan propagation.

use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";

/// Polls `check` until it holds (at most 20 s).
fn eventually(what: &str, kapi: &Kapi, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "timed out waiting for {what}; server log:\n{}",
        kapi.log_text()
    );
}

fn widgets(ns: &str) -> String {
    format!("/apis/example.kapi.dev/v1/namespaces/{ns}/widgets")
}

fn configmaps(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

fn create_widget(kapi: &Kapi, ns: &str, name: &str) -> Value {
    let (code, w) = kapi.request(
        "POST",
        &widgets(ns),
        JSON,
        Some(
            &json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
            "metadata": {"name": name}, "spec": {"color": "red"}}),
        ),
    );
    assert_eq!(code, 201, "{w}");
    w
}

fn create_dependent(
    kapi: &Kapi,
    ns: &str,
    name: &str,
    owner: &Value,
    block: bool,
    finalizers: &[&str],
) {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name,
        "finalizers": finalizers,
        "ownerReferences": [{
            "apiVersion": "example.kapi.dev/v1", "kind": "Widget",
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": block,
        }]
    }});
    let (code, body) = kapi.request("POST", &configmaps(ns), JSON, Some(&cm));
    assert_eq!(code, 201, "{body}");
}

fn exists(kapi: &Kapi, path: &str) -> bool {
    kapi.request("GET", path, JSON, None).0 == 200
}

fn namespace_lifecycle(kapi: &Kapi) {
    let (code, refused) = kapi.request("DELETE", "/api/v1/namespaces/default", JSON, None);
    assert_eq!(
        (code, refused["message"].as_str()),
        (
            403,
            Some("namespaces \"default\" is forbidden: this namespace may not be deleted")
        ),
        "{refused}"
    );
    let (code, ns) = kapi.request(
        "POST",
        "/api/v1/namespaces",
        JSON,
        Some(&json!({"metadata": {"name": "doomed"}})),
    );
    assert_eq!(code, 201, "{ns}");
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    create_widget(kapi, "doomed", "a");
    let held = create_widget(kapi, "doomed", "held");
    kapi.request(
        "PATCH",
        &format!("{}/held", widgets("doomed")),
        MERGE,
        Some(&json!({"metadata": {"finalizers": ["test.kapi.dev/hold"]}})),
    );
    let _ = held;
    kapi.request(
        "POST",
        &configmaps("doomed"),
        JSON,
        Some(&json!({"metadata": {"name": "c"}})),
    );

    let (code, deleting) = kapi.request("DELETE", "/api/v1/namespaces/doomed", JSON, None);
    assert_eq!(code, 200, "{deleting}");
    assert_eq!(deleting["status"]["phase"], "Terminating");
    // Nothing new may be created in a terminating namespace.
    let (code, refused) = kapi.request(
        "POST",
        &configmaps("doomed"),
        JSON,
        Some(&json!({"metadata": {"name": "late"}})),
    );
    assert_eq!(
        (code, refused["reason"].as_str()),
        (403, Some("Forbidden")),
        "{refused}"
    );
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("because it is being terminated")
    );

    eventually("the namespace's content to go", kapi, || {
        !exists(kapi, &format!("{}/a", widgets("doomed")))
            && !exists(kapi, &format!("{}/c", configmaps("doomed")))
    });
    // The widget with a finalizer is marked, and holds the namespace.
    let (_, marked) = kapi.request("GET", &format!("{}/held", widgets("doomed")), JSON, None);
    assert!(
        marked["metadata"]["deletionTimestamp"].is_string(),
        "{marked}"
    );
    assert!(exists(kapi, "/api/v1/namespaces/doomed"));
    kapi.request(
        "PATCH",
        &format!("{}/held", widgets("doomed")),
        MERGE,
        Some(&json!({"metadata": {"finalizers": null}})),
    );
    eventually("the namespace to go", kapi, || {
        !exists(kapi, "/api/v1/namespaces/doomed")
    });
}

fn garbage_collection(kapi: &Kapi) {
    // Background: the dependent goes after its owner.
    let owner = create_widget(kapi, "default", "bg-owner");
    create_dependent(kapi, "default", "bg-dep", &owner, false, &[]);
    let (code, _) = kapi.request(
        "DELETE",
        &format!("{}/bg-owner", widgets("default")),
        JSON,
        Some(&json!({"propagationPolicy": "Background"})),
    );
    assert_eq!(code, 200);
    eventually("the background dependent to go", kapi, || {
        !exists(kapi, &format!("{}/bg-dep", configmaps("default")))
    });

    // Foreground: the owner waits, marked, until its blocking dependent is gone.
    let owner = create_widget(kapi, "default", "fg-owner");
    create_dependent(
        kapi,
        "default",
        "fg-dep",
        &owner,
        true,
        &["test.kapi.dev/hold"],
    );
    let (code, pending) = kapi.request(
        "DELETE",
        &format!("{}/fg-owner", widgets("default")),
        JSON,
        Some(&json!({"propagationPolicy": "Foreground"})),
    );
    assert_eq!(code, 200, "{pending}");
    assert!(
        pending["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!("foregroundDeletion"))
    );
    eventually("the foreground dependent to be deleted", kapi, || {
        let (_, dep) = kapi.request(
            "GET",
            &format!("{}/fg-dep", configmaps("default")),
            JSON,
            None,
        );
        dep["metadata"]["deletionTimestamp"].is_string()
    });
    assert!(
        exists(kapi, &format!("{}/fg-owner", widgets("default"))),
        "the owner waits for its blocking dependent"
    );
    kapi.request(
        "PATCH",
        &format!("{}/fg-dep", configmaps("default")),
        MERGE,
        Some(&json!({"metadata": {"finalizers": null}})),
    );
    eventually("the foreground owner to go", kapi, || {
        !exists(kapi, &format!("{}/fg-owner", widgets("default")))
    });

    // Orphan: the dependent stays, without its owner reference.
    let owner = create_widget(kapi, "default", "or-owner");
    create_dependent(kapi, "default", "or-dep", &owner, false, &[]);
    let (code, _) = kapi.request(
        "DELETE",
        &format!("{}/or-owner", widgets("default")),
        JSON,
        Some(&json!({"propagationPolicy": "Orphan"})),
    );
    assert_eq!(code, 200);
    eventually("the orphaning owner to go", kapi, || {
        !exists(kapi, &format!("{}/or-owner", widgets("default")))
    });
    let (code, orphan) = kapi.request(
        "GET",
        &format!("{}/or-dep", configmaps("default")),
        JSON,
        None,
    );
    assert_eq!(code, 200);
    assert!(
        orphan["metadata"].get("ownerReferences").is_none(),
        "{orphan}"
    );

    // A resource served in two versions is watched once, whichever version its
    // objects are written in: a Widget written as v1alpha1 goes with its owner.
    let (code, owner) = kapi.request(
        "POST",
        &configmaps("default"),
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-owner"}})),
    );
    assert_eq!(code, 201, "{owner}");
    let old_widgets = "/apis/example.kapi.dev/v1alpha1/namespaces/default/widgets";
    let (code, body) = kapi.request(
        "POST",
        old_widgets,
        JSON,
        Some(
            &json!({"apiVersion": "example.kapi.dev/v1alpha1", "kind": "Widget",
            "metadata": {"name": "alpha-dep", "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": "cm-owner",
                "uid": owner["metadata"]["uid"]}]},
            "spec": {"colour": "red"}}),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let (code, _) = kapi.request(
        "DELETE",
        &format!("{}/cm-owner", configmaps("default")),
        JSON,
        None,
    );
    assert_eq!(code, 200);
    eventually("the v1alpha1 dependent to go", kapi, || {
        !exists(kapi, &format!("{old_widgets}/alpha-dep"))
    });
    assert!(!exists(kapi, &format!("{}/alpha-dep", widgets("default"))));

    // A reference to an owner that never existed is dangling: the object goes.
    let ghost =
        json!({"metadata": {"name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}});
    create_dependent(kapi, "default", "dangling", &ghost, false, &[]);
    eventually("the dangling dependent to go", kapi, || {
        !exists(kapi, &format!("{}/dangling", configmaps("default")))
    });
}

#[test]
fn controllers_on_every_backend() {
    for (name, backend) in Backend::all() {
        let kapi = Kapi::start(backend());
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            namespace_lifecycle(&kapi);
            garbage_collection(&kapi);
        }));
        if let Err(e) = run {
            eprintln!("backend {name} failed; server log:\n{}", kapi.log_text());
            std::panic::resume_unwind(e);
        }
    }
}
