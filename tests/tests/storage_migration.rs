//! A CRD's storage version moved while the recorded mixed load of the fault tests
//! (`kapi_tests::load`) writes its objects: the migration rewrites every object in the
//! new version and trims `storedVersions`, and the load's checker finds every
//! acknowledged write in the history at the resourceVersion answered, no refused one,
//! each update applied to the version it was conditional on, the watchers agreeing
//! with the history and the final list its last state. The rewrites themselves are in
//! the history as changes that keep their object's value.

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

/// The `apiVersion` of every stored record, read from etcd underneath the server.
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
    assert!(rewrites > 0, "no rewrite in the history");
    let versions = stored_versions(&etcd);
    assert!(
        !versions.is_empty() && versions.iter().all(|v| v == "example.com/v2"),
        "{versions:?}"
    );
}
