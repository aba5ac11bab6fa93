//! Events expire `--event-ttl` after their last write, as kube-apiserver's Event registry
//! makes them expire (an etcd lease on the etcd backend; a deadline the embedded store
//! keeps), on both Event APIs; other kinds do not.

use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";

fn core_event(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Tested",
        "message": "an event",
        "type": "Normal"
    })
}

/// Polls `path` until it answers 404, for at most `limit`.
fn gone_within(kapi: &Kapi, path: &str, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if kapi.request("GET", path, JSON, None).0 == 404 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    false
}

fn events_expire(backend: Backend) {
    let kapi = Kapi::start_with(backend, &["--event-ttl", "2s"]);
    let events = "/api/v1/namespaces/default/events";
    let (code, created) = kapi.request("POST", events, JSON, Some(&core_event("e1")));
    assert_eq!(code, 201, "{created}");
    let v1 = "/apis/events.k8s.io/v1/namespaces/default/events";
    let (code, created) = kapi.request(
        "POST",
        v1,
        JSON,
        Some(&json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "e2"},
            "eventTime": "2026-11-30T12:00:00.000000Z",
            "reportingController": "kapi.dev/test",
            "reportingInstance": "test-1",
            "action": "Testing",
            "reason": "Tested",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
            "type": "Normal"
        })),
    );
    assert_eq!(code, 201, "{created}");
    let (code, _) = kapi.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "stays"}})),
    );
    assert_eq!(code, 201);

    // Present right after the write, gone a little after the TTL.
    assert_eq!(
        kapi.request("GET", &format!("{events}/e1"), JSON, None).0,
        200
    );
    assert!(gone_within(
        &kapi,
        &format!("{events}/e1"),
        Duration::from_secs(15)
    ));
    assert!(gone_within(
        &kapi,
        &format!("{v1}/e2"),
        Duration::from_secs(15)
    ));
    // Expiry is a delete: lists no longer show them; other kinds stay.
    let (_, list) = kapi.request("GET", events, JSON, None);
    assert_eq!(list["items"], json!([]));
    assert_eq!(
        kapi.request(
            "GET",
            "/api/v1/namespaces/default/configmaps/stays",
            JSON,
            None
        )
        .0,
        200
    );
}

#[test]
fn events_expire_on_the_embedded_store() {
    events_expire(Backend::Embedded);
}

#[test]
fn events_expire_on_etcd() {
    events_expire(Backend::Etcd(kapi_testing::EtcdProcess::start()));
}
