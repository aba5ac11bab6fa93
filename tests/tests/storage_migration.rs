//! A CRD's storage version moved while the recorded mixed load of the fault tests
//! (`kapi_tests::load`) writes its objects: the migration rewrites every object in the
//! new version and trims `storedVersions`, and the load's checker finds every
//! acknowledged write in the history at the resourceVersion answered, no refused one,
//! each update applied to the version it was conditional on, the watchers agreeing
//! with the history and the final list its last state. Records no writer touches are
//! rewritten with their value kept.

use std::collections::HashMap;
use std::time::Duration;

use kapi_storage::{EtcdStorage, ListRequest, Storage};
use kapi_tests::load::{self, Collection, Endpoints, Load, LoadConfig};
use kapi_tests::{Backend, CRDS, EtcdProcess, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const CRD: &str = "records.example.com";
const NAMESPACE: &str = "migrating";

fn version(name: &str, storage: bool) -> Value {
    json!({"name": name, "served": true, "storage": storage,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
            "data": {"type": "object", "additionalProperties": {"type": "string"}}}}}})
}

fn records_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Record", "plural": "records"},
            "versions": [version("v1", true), version("v2", false)]}})
}

/// The `apiVersion` of every stored record (in every namespace), read from etcd
/// underneath the server.
fn stored_versions(etcd: &EtcdProcess) -> Vec<String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let storage = EtcdStorage::connect(&[etcd.endpoint()]).await.unwrap();
        let request = ListRequest {
            prefix: "/registry/example.com/records/".into(),
            ..ListRequest::default()
        };
        let list = storage.list(&request).await.unwrap();
        storage.close().await.unwrap();
        list.items
            .iter()
            .map(|kv| {
                let obj: Value = serde_json::from_slice(&kv.value).unwrap();
                obj["apiVersion"].as_str().unwrap_or_default().to_string()
            })
            .collect()
    })
}

#[test]
fn a_migration_under_load_loses_no_write() {
    let etcd = EtcdProcess::start();
    let kapi = Kapi::start_with(Backend::SharedEtcd(etcd.endpoint()), &[]);
    kapi.establish(&records_crd());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    assert_eq!(
        kapi.request("POST", "/api/v1/namespaces", JSON, Some(&ns))
            .0,
        201
    );
    let collection = Collection {
        api_path: "/apis/example.com/v1".into(),
        plural: "records".into(),
        api_version: "example.com/v1".into(),
        kind: "Record".into(),
    };
    let path = collection.path(NAMESPACE);
    let (_, list) = kapi.request("GET", &path, JSON, None);
    let from: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .expect("a list resourceVersion");

    // Records no writer touches, in a namespace of their own: the migration must
    // rewrite them (the writers may rewrite every one of theirs first).
    let quiet = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "quiet"}});
    assert_eq!(
        kapi.request("POST", "/api/v1/namespaces", JSON, Some(&quiet))
            .0,
        201
    );
    let quiet_path = "/apis/example.com/v1/namespaces/quiet/records";
    let mut quiet_before = Vec::new();
    for i in 0..3 {
        let record = json!({"metadata": {"name": format!("q{i}")}, "data": {"n": i.to_string()}});
        let (code, body) = kapi.request("POST", quiet_path, JSON, Some(&record));
        assert_eq!(code, 201, "{body}");
        quiet_before.push(body);
    }

    let endpoints = Endpoints::of(std::slice::from_ref(&kapi));
    let mut load = Load::start(
        endpoints.clone(),
        LoadConfig {
            collection,
            namespace: NAMESPACE.into(),
            writers: 4,
            keys: 16,
            listers: 1,
            watchers: 2,
            seed: 11,
        },
    );
    std::thread::sleep(Duration::from_millis(500));
    load.start_watchers();
    std::thread::sleep(Duration::from_millis(500));
    let (code, moved) = kapi.request(
        "PATCH",
        &format!("{CRDS}/{CRD}"),
        MERGE,
        Some(&json!({"spec": {"versions": [version("v1", false), version("v2", true)]}})),
    );
    assert_eq!(code, 200, "{moved}");
    kapi.poll(
        &format!("{CRDS}/{CRD}"),
        Duration::from_secs(60),
        "storedVersions trimmed",
        |_, crd| crd["status"]["storedVersions"] == json!(["v2"]),
    );
    std::thread::sleep(Duration::from_millis(500));
    let recorded = load.stop("sentinel");
    let history = load::replay(&endpoints, 0, &path, from);
    let (_, final_state) = kapi.request("GET", &path, JSON, None);
    let (figures, problems) = load::check(&recorded, &history, &final_state);
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(recorded.errors.is_empty(), "{:?}", recorded.errors);
    assert!(figures.acked > 100, "{figures:?}");
    // The migration's rewrites: changes that keep their object's value.
    let mut last: HashMap<&str, &str> = HashMap::new();
    let mut rewrites = 0;
    for c in &history {
        if c.kind == "MODIFIED" && last.get(c.key.as_str()) == Some(&c.value.as_str()) {
            rewrites += 1;
        }
        last.insert(&c.key, &c.value);
    }
    eprintln!(
        "{figures:?}; {rewrites} rewrites in {} changes",
        history.len()
    );
    for before in &quiet_before {
        let name = before["metadata"]["name"].as_str().unwrap();
        let (_, after) = kapi.request("GET", &format!("{quiet_path}/{name}"), JSON, None);
        assert_eq!(after["data"], before["data"], "a rewrite keeps the object");
        assert_ne!(
            after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
            "{name} was rewritten"
        );
    }
    let versions = stored_versions(&etcd);
    assert!(
        !versions.is_empty() && versions.iter().all(|v| v == "example.com/v2"),
        "{versions:?}"
    );
}

/// The StorageVersion of the compiled Widget.
const WIDGETS_SV: &str =
    "/apis/internal.apiserver.k8s.io/v1alpha1/storageversions/example.kapi.dev.widgets";

/// Writes `value` at `key` in etcd underneath the server; returns what is there after.
fn raw(etcd: &EtcdProcess, key: &str, value: Option<&Value>) -> Option<Value> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let storage = EtcdStorage::connect(&[etcd.endpoint()]).await.unwrap();
        if let Some(v) = value {
            storage
                .create(key, serde_json::to_vec(v).unwrap().into())
                .await
                .unwrap();
        }
        let kv = storage
            .get(key, kapi_storage::ReadAt::Latest)
            .await
            .unwrap();
        storage.close().await.unwrap();
        kv.map(|kv| serde_json::from_slice(&kv.value).unwrap())
    })
}

#[test]
fn a_compiled_resource_is_migrated_when_its_storage_version_moved() {
    let etcd = EtcdProcess::start();
    let mut kapi = Kapi::start_with(Backend::SharedEtcd(etcd.endpoint()), &[]);
    // Every server reports what it stores; the leader records the migration done.
    let (_, sv) = kapi.poll(
        WIDGETS_SV,
        Duration::from_secs(30),
        "the Widget StorageVersion",
        |c, sv| {
            c == 200
                && sv["metadata"]["annotations"]["kapi.dev/migrated-to"] == "example.kapi.dev/v1"
        },
    );
    let status = &sv["status"];
    assert_eq!(
        status["commonEncodingVersion"], "example.kapi.dev/v1",
        "{sv}"
    );
    let entry = &status["storageVersions"][0];
    assert_eq!(entry["encodingVersion"], "example.kapi.dev/v1");
    assert_eq!(
        entry["decodableVersions"],
        json!(["example.kapi.dev/v1", "example.kapi.dev/v1alpha1"])
    );
    assert_eq!(status["conditions"][0]["type"], "AllEncodingVersionsEqual");

    // What an older kapi, which stored Widgets in v1alpha1, left behind.
    let key = "/registry/example.kapi.dev/widgets/default/old";
    let old = json!({"apiVersion": "example.kapi.dev/v1alpha1", "kind": "Widget",
        "metadata": {"name": "old", "namespace": "default", "uid": "u-old",
            "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"colour": "red", "replicas": 1, "size": "medium"},
        "status": {"ready": "1/2"}});
    raw(&etcd, key, Some(&old));
    let (code, body) = kapi.request(
        "PATCH",
        WIDGETS_SV,
        MERGE,
        Some(&json!({"metadata":
        {"annotations": {"kapi.dev/migrated-to": "example.kapi.dev/v1alpha1"}}})),
    );
    assert_eq!(code, 200, "{body}");

    // The next start migrates it through the generated conversion, and records it.
    assert!(kapi.stop(), "a clean stop");
    kapi.restart(&[]);
    kapi.poll(
        WIDGETS_SV,
        Duration::from_secs(30),
        "the migration recorded",
        |_, sv| sv["metadata"]["annotations"]["kapi.dev/migrated-to"] == "example.kapi.dev/v1",
    );
    let stored = raw(&etcd, key, None).expect("still stored");
    assert_eq!(stored["apiVersion"], "example.kapi.dev/v1", "{stored}");
    assert_eq!(stored["spec"]["color"], "red");
    assert_eq!(
        (
            &stored["status"]["readyReplicas"],
            &stored["status"]["replicas"]
        ),
        (&json!(1), &json!(2))
    );
    assert_eq!(stored["metadata"]["uid"], "u-old");
}
