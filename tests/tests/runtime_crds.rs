//! CustomResourceDefinitions created through the API are served without a restart:
//! names and conditions as kube-apiserver sets them, subresources, printer columns,
//! short names, categories, selectable fields, several versions with `None`
//! conversion, stored versions and their migration, deletion of every object before
//! the CRD goes, name
//! conflicts, replicas that follow a CRD created on another, and restarts.

use std::time::Duration;

use kapi_storage::{EtcdStorage, ListRequest, Storage};
use kapi_tests::{Backend, CRDS, EtcdProcess, Kapi, condition, on_every_backend};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const GIZMOS: &str = "/apis/toys.example.com/v1/namespaces/default/gizmos";
const GIZMOS_BETA: &str = "/apis/toys.example.com/v1beta1/namespaces/default/gizmos";

fn version(name: &str, served: bool, storage: bool) -> Value {
    json!({
        "name": name, "served": served, "storage": storage,
        "subresources": {"status": {}, "scale": {
            "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
        "additionalPrinterColumns": [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Shape", "type": "string", "jsonPath": ".spec.shape"}
        ],
        "selectableFields": [{"jsonPath": ".spec.shape"}],
        "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "required": ["shape"], "properties": {
                    "shape": {"type": "string", "enum": ["round", "square"]},
                    "replicas": {"type": "integer", "minimum": 0, "default": 1}
                }},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
            }
        }}
    })
}

fn gizmo_crd(versions: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.toys.example.com"},
        "spec": {
            "group": "toys.example.com",
            "scope": "Namespaced",
            "names": {"kind": "Gizmo", "plural": "gizmos", "shortNames": ["gz"],
                      "categories": ["toys"]},
            "versions": versions
        }
    })
}

fn gizmo(api_version: &str, name: &str, shape: &str) -> Value {
    json!({"apiVersion": api_version, "kind": "Gizmo",
           "metadata": {"name": name}, "spec": {"shape": shape}})
}

fn crd_path(name: &str) -> String {
    format!("{CRDS}/{name}")
}

#[test]
fn a_crd_is_served_with_names_conditions_subresources_and_versions() {
    on_every_backend(|kapi| {
        let crd = kapi.establish(&gizmo_crd(vec![
            version("v1beta1", true, false),
            version("v1", true, true),
        ]));
        let names = condition(&crd, "NamesAccepted").expect("NamesAccepted");
        assert_eq!(
            (&names["status"], &names["reason"], &names["message"]),
            (
                &json!("True"),
                &json!("NoConflicts"),
                &json!("no conflicts found")
            )
        );
        let established = condition(&crd, "Established").expect("Established");
        assert_eq!(established["reason"], "InitialNamesAccepted");
        assert_eq!(
            crd["status"]["acceptedNames"],
            json!({"kind": "Gizmo", "listKind": "GizmoList", "plural": "gizmos",
                   "singular": "gizmo", "shortNames": ["gz"], "categories": ["toys"]})
        );
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
        // Discovery and OpenAPI know it.
        let (_, v3) = kapi.request("GET", "/openapi/v3", JSON, None);
        assert!(v3["paths"]["apis/toys.example.com/v1"].is_object(), "{v3}");
        let (_, v2) = kapi.request("GET", "/openapi/v2", JSON, None);
        assert!(v2["definitions"]["com.example.toys.v1.Gizmo"].is_object());
        assert!(
            v2["paths"]["/apis/toys.example.com/v1beta1/namespaces/{namespace}/gizmos"].is_object()
        );

        // Written through v1beta1, read through v1: only apiVersion differs (None
        // conversion); defaults applied, status subresource reset on create.
        let (code, created) = kapi.request(
            "POST",
            GIZMOS_BETA,
            JSON,
            Some(&gizmo("toys.example.com/v1beta1", "g1", "round")),
        );
        assert_eq!(code, 201, "{created}");
        assert_eq!(created["apiVersion"], "toys.example.com/v1beta1");
        assert_eq!(created["spec"], json!({"shape": "round", "replicas": 1}));
        let (code, got) = kapi.request("GET", &format!("{GIZMOS}/g1"), JSON, None);
        assert_eq!(code, 200);
        assert_eq!(got["apiVersion"], "toys.example.com/v1");
        let (_, list) = kapi.request("GET", GIZMOS_BETA, JSON, None);
        assert_eq!(list["items"][0]["apiVersion"], "toys.example.com/v1beta1");

        // Validation with the schema's messages.
        let (code, status) = kapi.request(
            "POST",
            GIZMOS,
            JSON,
            Some(&gizmo("toys.example.com/v1", "bad", "oval")),
        );
        assert_eq!(code, 422, "{status}");
        assert_eq!(
            status["message"],
            "Gizmo.toys.example.com \"bad\" is invalid: spec.shape: Unsupported value: \"oval\": supported values: \"round\", \"square\""
        );

        // Status and scale subresources.
        let (code, _) = kapi.request(
            "PATCH",
            &format!("{GIZMOS}/g1/status"),
            MERGE,
            Some(&json!({"status": {"replicas": 4}})),
        );
        assert_eq!(code, 200);
        let (code, scale) = kapi.request(
            "PATCH",
            &format!("{GIZMOS}/g1/scale"),
            MERGE,
            Some(&json!({"spec": {"replicas": 3}})),
        );
        assert_eq!(code, 200, "{scale}");
        assert_eq!(scale["status"]["replicas"], 4);
        assert_eq!(scale["spec"]["replicas"], 3);

        // kubectl: short name, printer columns, category, selectable field.
        let table = kapi.kubectl(&["get", "gz"]);
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        // A CRD with printer columns gets no AGE column unless it asks for one.
        assert_eq!(header, ["NAME", "REPLICAS", "SHAPE"], "{table}");
        assert!(table.lines().nth(1).unwrap().starts_with("g1 "), "{table}");
        assert!(
            kapi.kubectl(&["get", "toys", "-o", "name"])
                .contains("gizmo.toys.example.com/g1")
        );
        let (code, _) = kapi.request(
            "POST",
            GIZMOS,
            JSON,
            Some(&gizmo("toys.example.com/v1", "g2", "square")),
        );
        assert_eq!(code, 201);
        let square = kapi.kubectl(&[
            "get",
            "gizmos",
            "--field-selector",
            "spec.shape=square",
            "-o",
            "name",
        ]);
        assert_eq!(square.trim(), "gizmo.toys.example.com/g2");
        let (code, _) = kapi.request(
            "GET",
            &format!("{GIZMOS}?fieldSelector=spec.color%3Dred"),
            JSON,
            None,
        );
        assert_eq!(code, 400);

        // Moving the storage version adds to storedVersions; an unserved version goes
        // from the API and from discovery.
        let (code, updated) = kapi.request(
            "PATCH",
            &crd_path("gizmos.toys.example.com"),
            MERGE,
            Some(&json!({"spec": {"versions": [
                version("v1beta1", false, true), version("v1", true, false)]}})),
        );
        assert_eq!(code, 200, "{updated}");
        assert_eq!(
            updated["status"]["storedVersions"],
            json!(["v1", "v1beta1"])
        );
        kapi.poll(
            GIZMOS_BETA,
            Duration::from_secs(10),
            "v1beta1 unserved",
            |code, _| code == 404,
        );
        let (_, group) = kapi.request("GET", "/apis/toys.example.com", JSON, None);
        assert_eq!(
            group["versions"],
            json!([{"groupVersion": "toys.example.com/v1", "version": "v1"}])
        );
        // The objects move to v1beta1 and storedVersions is trimmed to it (the
        // storage version migration); v1, no longer stored, could now go, but
        // v1beta1, still stored, may not be dropped from spec.versions.
        kapi.poll(
            &crd_path("gizmos.toys.example.com"),
            Duration::from_secs(20),
            "storedVersions trimmed",
            |_, crd| crd["status"]["storedVersions"] == json!(["v1beta1"]),
        );
        let (code, refused) = kapi.request(
            "PATCH",
            &crd_path("gizmos.toys.example.com"),
            MERGE,
            Some(&json!({"spec": {"versions": [version("v1", true, true)]}})),
        );
        assert_eq!(code, 422, "{refused}");
        assert!(
            refused["message"].as_str().unwrap().contains(
                "status.storedVersions[0]: Invalid value: \"v1beta1\": missing from spec.versions; v1beta1 was previously a storage version"
            ),
            "{refused}"
        );
    });
}

#[test]
fn deleting_a_crd_deletes_its_objects_first() {
    on_every_backend(|kapi| {
        kapi.establish(&gizmo_crd(vec![version("v1", true, true)]));
        for name in ["a", "b"] {
            let (code, _) = kapi.request(
                "POST",
                GIZMOS,
                JSON,
                Some(&gizmo("toys.example.com/v1", name, "round")),
            );
            assert_eq!(code, 201);
        }
        // One object holds on with a finalizer of its own: the CRD waits for it.
        let (code, _) = kapi.request(
            "PATCH",
            &format!("{GIZMOS}/b"),
            MERGE,
            Some(&json!({"metadata": {"finalizers": ["example.com/hold"]}})),
        );
        assert_eq!(code, 200);
        let (code, deleted) =
            kapi.request("DELETE", &crd_path("gizmos.toys.example.com"), JSON, None);
        assert_eq!(code, 200, "{deleted}");
        assert!(
            deleted["metadata"]["deletionTimestamp"].is_string(),
            "{deleted}"
        );
        assert_eq!(
            deleted["metadata"]["finalizers"],
            json!(["customresourcecleanup.apiextensions.k8s.io"])
        );
        kapi.poll(
            &crd_path("gizmos.toys.example.com"),
            Duration::from_secs(10),
            "deleting objects",
            |_, crd| {
                condition(crd, "Terminating").is_some_and(|c| {
                    c["status"] == "True" && c["reason"] == "InstanceDeletionInProgress"
                })
            },
        );
        kapi.poll(
            &format!("{GIZMOS}/a"),
            Duration::from_secs(10),
            "a deleted",
            |code, _| code == 404,
        );
        // While terminating, no new objects.
        let (code, refused) = kapi.request(
            "POST",
            GIZMOS,
            JSON,
            Some(&gizmo("toys.example.com/v1", "c", "round")),
        );
        assert_eq!(code, 403, "{refused}");
        assert_eq!(
            refused["message"],
            "gizmos.toys.example.com \"c\" is forbidden: create not allowed while custom resource definition is terminating"
        );
        let (code, _) = kapi.request("GET", &crd_path("gizmos.toys.example.com"), JSON, None);
        assert_eq!(code, 200, "the CRD stays while an object is left");
        // Letting the last object go lets the CRD go, and the resource with it.
        let (code, _) = kapi.request(
            "PATCH",
            &format!("{GIZMOS}/b"),
            MERGE,
            Some(&json!({"metadata": {"finalizers": null}})),
        );
        assert_eq!(code, 200);
        kapi.poll(
            &crd_path("gizmos.toys.example.com"),
            Duration::from_secs(10),
            "CRD gone",
            |code, _| code == 404,
        );
        kapi.poll(
            GIZMOS,
            Duration::from_secs(10),
            "resource unserved",
            |code, _| code == 404,
        );
        let (_, groups) = kapi.request("GET", "/apis", JSON, None);
        assert!(!groups.to_string().contains("toys.example.com"), "{groups}");
        let (_, v2) = kapi.request("GET", "/openapi/v2", JSON, None);
        assert!(v2["definitions"]["com.example.toys.v1.Gizmo"].is_null());
        let (_, v3) = kapi.request("GET", "/openapi/v3", JSON, None);
        assert!(v3["paths"]["apis/toys.example.com/v1"].is_null());
        // Nothing keeps knocking at the removed resource's closed watch cache: the
        // garbage collector's watch of it used to restart in a tight loop, logging
        // thousands of failures before it was stopped.
        std::thread::sleep(Duration::from_millis(1500));
        let log = kapi.log_text();
        let knocks = log.matches("the watch cache is closed").count();
        assert!(knocks <= 3, "{knocks} failures logged after the CRD went");
    });
}

#[test]
fn name_conflicts_are_reported_and_resolved_when_the_names_free_up() {
    let kapi = Kapi::start(Backend::Embedded);
    kapi.establish(&gizmo_crd(vec![version("v1", true, true)]));
    // Another CRD of the group asks for the same kind and short name.
    let mut other = gizmo_crd(vec![version("v1", true, true)]);
    other["metadata"]["name"] = json!("doodads.toys.example.com");
    other["spec"]["names"] = json!({"kind": "Gizmo", "plural": "doodads", "shortNames": ["gz"]});
    let (code, body) = kapi.request("POST", CRDS, JSON, Some(&other));
    assert_eq!(code, 201, "{body}");
    let crd = kapi.wait_condition("doodads.toys.example.com", "NamesAccepted", "False");
    let names = condition(&crd, "NamesAccepted").unwrap();
    assert_eq!(names["reason"], "ListKindConflict");
    assert_eq!(names["message"], "\"GizmoList\" is already in use");
    let established = condition(&crd, "Established").unwrap();
    assert_eq!(
        (
            &established["status"],
            &established["reason"],
            &established["message"]
        ),
        (
            &json!("False"),
            &json!("NotAccepted"),
            &json!("not all names are accepted")
        )
    );
    assert_eq!(
        crd["status"]["acceptedNames"],
        json!({"plural": "doodads", "kind": ""})
    );
    let (code, _) = kapi.request(
        "GET",
        "/apis/toys.example.com/v1/namespaces/default/doodads",
        JSON,
        None,
    );
    assert_eq!(
        code, 404,
        "a CRD whose names are not accepted is not served"
    );

    // A compiled resource's names are taken too.
    let mut widgets = gizmo_crd(vec![version("v1", true, true)]);
    widgets["metadata"]["name"] = json!("widgets.example.kapi.dev");
    widgets["spec"]["group"] = json!("example.kapi.dev");
    widgets["spec"]["names"] = json!({"kind": "Widget", "plural": "widgets"});
    let (code, body) = kapi.request("POST", CRDS, JSON, Some(&widgets));
    assert_eq!(code, 201, "{body}");
    let crd = kapi.wait_condition("widgets.example.kapi.dev", "NamesAccepted", "False");
    assert_eq!(
        condition(&crd, "NamesAccepted").unwrap()["message"],
        "\"WidgetList\" is already in use"
    );

    // Once the gizmos are gone, the doodads get their names.
    let (code, _) = kapi.request("DELETE", &crd_path("gizmos.toys.example.com"), JSON, None);
    assert_eq!(code, 200);
    let crd = kapi.wait_condition("doodads.toys.example.com", "Established", "True");
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Gizmo");
    let (code, _) = kapi.request(
        "GET",
        "/apis/toys.example.com/v1/namespaces/default/doodads",
        JSON,
        None,
    );
    assert_eq!(code, 200);
    // Deleting the conflicting widgets CRD leaves the compiled widgets alone.
    let (code, _) = kapi.request(
        "POST",
        "/apis/example.kapi.dev/v1/namespaces/default/widgets",
        JSON,
        Some(
            &json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
                     "metadata": {"name": "kept"}, "spec": {"color": "red"}}),
        ),
    );
    assert_eq!(code, 201);
    let (code, _) = kapi.request("DELETE", &crd_path("widgets.example.kapi.dev"), JSON, None);
    assert_eq!(code, 200);
    kapi.poll(
        &crd_path("widgets.example.kapi.dev"),
        Duration::from_secs(10),
        "CRD gone",
        |code, _| code == 404,
    );
    let (code, _) = kapi.request(
        "GET",
        "/apis/example.kapi.dev/v1/namespaces/default/widgets/kept",
        JSON,
        None,
    );
    assert_eq!(code, 200, "compiled objects are not the CRD's to delete");
}

#[test]
fn a_replica_serves_a_crd_created_through_another() {
    let etcd = EtcdProcess::start();
    let a = Kapi::start(Backend::SharedEtcd(etcd.endpoint()));
    let b = Kapi::start(Backend::SharedEtcd(etcd.endpoint()));
    a.establish(&gizmo_crd(vec![version("v1", true, true)]));
    b.poll(
        GIZMOS,
        Duration::from_secs(10),
        "served by the other replica",
        |code, _| code == 200,
    );
    let (code, body) = b.request(
        "POST",
        GIZMOS,
        JSON,
        Some(&gizmo("toys.example.com/v1", "g", "round")),
    );
    assert_eq!(code, 201, "{body}");
    assert!(
        b.kubectl(&[
            "api-resources",
            "--api-group=toys.example.com",
            "-o",
            "name"
        ])
        .contains("gizmos.toys.example.com")
    );
    let (code, _) = b.request("GET", &format!("{GIZMOS}/g"), JSON, None);
    assert_eq!(code, 200);
    let (code, _) = a.request("DELETE", &crd_path("gizmos.toys.example.com"), JSON, None);
    assert_eq!(code, 200);
    b.poll(
        GIZMOS,
        Duration::from_secs(10),
        "unserved on the other replica",
        |code, _| code == 404,
    );
}

#[test]
fn stored_crds_are_served_as_soon_as_a_restarted_server_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut kapi = Kapi::start_in_dir(dir.path());
    kapi.establish(&gizmo_crd(vec![version("v1", true, true)]));
    let (code, _) = kapi.request(
        "POST",
        GIZMOS,
        JSON,
        Some(&gizmo("toys.example.com/v1", "g", "round")),
    );
    assert_eq!(code, 201);
    assert!(kapi.stop());
    let kapi = Kapi::start_in_dir(dir.path());
    // No polling: the first request after the server is ready finds the resource.
    let (code, got) = kapi.request("GET", &format!("{GIZMOS}/g"), JSON, None);
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["spec"]["shape"], "round");
}

/// When the storage version moves, the objects stored in the old one are written again
/// in the new one (read here from etcd underneath the server), and `storedVersions`
/// is trimmed; a write during the migration is kept, and a migration killed midway
/// finishes after a restart.
#[test]
fn a_new_storage_version_migrates_stored_objects() {
    let etcd = EtcdProcess::start();
    let mut kapi = Kapi::start_with(Backend::SharedEtcd(etcd.endpoint()), &[]);
    kapi.establish(&gizmo_crd(vec![
        version("v1beta1", true, false),
        version("v1", true, true),
    ]));
    for i in 0..250 {
        let (code, out) = kapi.request(
            "POST",
            GIZMOS,
            JSON,
            Some(&gizmo("toys.example.com/v1", &format!("g{i:03}"), "round")),
        );
        assert_eq!(code, 201, "{out}");
    }
    let raw_versions = || -> Vec<String> {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let storage = EtcdStorage::connect(&[etcd.endpoint()]).await.unwrap();
            let list = storage
                .list(&ListRequest {
                    prefix: "/registry/toys.example.com/gizmos/".into(),
                    ..ListRequest::default()
                })
                .await
                .unwrap();
            storage.close().await.unwrap();
            list.items
                .iter()
                .map(|kv| {
                    let obj: Value = serde_json::from_slice(&kv.value).unwrap();
                    obj["apiVersion"].as_str().unwrap().to_string()
                })
                .collect()
        })
    };
    assert!(raw_versions().iter().all(|v| v == "toys.example.com/v1"));

    let (code, moved) = kapi.request(
        "PATCH",
        &crd_path("gizmos.toys.example.com"),
        MERGE,
        Some(&json!({"spec": {"versions": [
            version("v1beta1", true, true), version("v1", true, false)]}})),
    );
    assert_eq!(code, 200, "{moved}");
    // A write while the migration runs.
    let (code, out) = kapi.request(
        "PATCH",
        &format!("{GIZMOS}/g200"),
        MERGE,
        Some(&json!({"spec": {"shape": "square"}})),
    );
    assert_eq!(code, 200, "{out}");
    // Killed midway (after about a page), the migration goes on after a restart.
    std::thread::sleep(Duration::from_millis(150));
    kapi.kill();
    let midway = raw_versions();
    eprintln!(
        "killed with {} of 250 objects migrated",
        midway
            .iter()
            .filter(|v| *v == "toys.example.com/v1beta1")
            .count()
    );
    kapi.restart(&[]);
    kapi.poll(
        &crd_path("gizmos.toys.example.com"),
        Duration::from_secs(30),
        "storedVersions trimmed",
        |_, crd| crd["status"]["storedVersions"] == json!(["v1beta1"]),
    );
    let versions = raw_versions();
    assert_eq!(versions.len(), 250);
    assert!(
        versions.iter().all(|v| v == "toys.example.com/v1beta1"),
        "{versions:?}"
    );
    let (_, g200) = kapi.request("GET", &format!("{GIZMOS}/g200"), JSON, None);
    assert_eq!(g200["spec"]["shape"], "square", "{g200}");
    // v1 can now leave spec.versions.
    let (code, out) = kapi.request(
        "PATCH",
        &crd_path("gizmos.toys.example.com"),
        MERGE,
        Some(&json!({"spec": {"versions": [version("v1beta1", true, true)]}})),
    );
    assert_eq!(code, 200, "{out}");
}
