//! `pods/ephemeralcontainers` and `pods/resize`, as kube-apiserver 1.35 serves them:
//! each takes the whole Pod (PUT, strategic merge and JSON merge PATCH) but keeps only
//! what it may change, refuses what kube refuses in kube's words, and answers the Pod;
//! discovery lists both; and `kubectl debug` adds an ephemeral container through it.

use kapi_tests::{Backend, Kapi, causes};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const PODS: &str = "/api/v1/namespaces/default/pods";

/// kube's message for a main-resource update that changes more than it may.
const POD_UPDATE_FORBIDDEN: &str = "spec: Forbidden: pod updates may not change fields other \
    than `spec.containers[*].image`,`spec.initContainers[*].image`,\
    `spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing \
    tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it \
    was previously negative)";

/// The causes of a 422 as `field: message` lines.
fn rejected(kapi: &Kapi, method: &str, path: &str, ct: &str, body: &Value) -> Vec<String> {
    let (code, status) = kapi.request(method, path, ct, Some(body));
    assert_eq!(code, 422, "{method} {path}: {status}");
    assert_eq!(status["reason"], "Invalid", "{status}");
    let causes = causes(&status);
    assert!(!causes.is_empty(), "no causes in {status}");
    causes
}

fn ok(kapi: &Kapi, method: &str, path: &str, ct: &str, body: &Value) -> Value {
    let (code, out) = kapi.request(method, path, ct, Some(body));
    assert!(code == 200 || code == 201, "{method} {path}: {code} {out}");
    out
}

/// A Burstable pod with one container `app` and a volume `v`.
fn create_pod(kapi: &Kapi, name: &str) -> Value {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"volumes": [{"name": "v", "emptyDir": {}}],
            "containers": [{"name": "app", "image": "nginx:1.25",
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                          "limits": {"cpu": "200m", "memory": "128Mi"}}}]}});
    ok(kapi, "POST", PODS, JSON, &pod)
}

fn names(pod: &Value) -> Vec<&str> {
    pod["spec"]["ephemeralContainers"]
        .as_array()
        .map(|l| l.iter().map(|c| c["name"].as_str().unwrap_or("")).collect())
        .unwrap_or_default()
}

fn ephemeral_containers(kapi: &Kapi) {
    let created = create_pod(kapi, "x");
    assert_eq!(created["metadata"]["generation"], 1);
    let path = format!("{PODS}/x/ephemeralcontainers");

    // GET answers the Pod.
    let (code, got) = kapi.request("GET", &path, JSON, None);
    assert_eq!(
        (code, &got["kind"], &got["metadata"]["name"]),
        (200, &json!("Pod"), &json!("x"))
    );

    // A PUT adds the container; its other changes are dropped.
    let mut put = got.clone();
    put["spec"]["ephemeralContainers"] =
        json!([{"name": "debugger", "image": "busybox", "targetContainerName": "app"}]);
    put["spec"]["containers"][0]["image"] = json!("nginx:1.26");
    put["spec"]["activeDeadlineSeconds"] = json!(30);
    put["metadata"]["labels"] = json!({"app": "other"});
    let pod = ok(kapi, "PUT", &path, JSON, &put);
    assert_eq!(pod["kind"], "Pod");
    assert_eq!(names(&pod), ["debugger"]);
    let debugger = &pod["spec"]["ephemeralContainers"][0];
    assert_eq!(debugger["targetContainerName"], "app");
    assert_eq!(debugger["imagePullPolicy"], "Always");
    assert_eq!(debugger["terminationMessagePolicy"], "File");
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx:1.25");
    assert_eq!(pod["spec"]["activeDeadlineSeconds"], Value::Null);
    assert_eq!(pod["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(pod["metadata"]["generation"], 2);
    assert_eq!(pod["status"]["qosClass"], "Burstable");

    // A strategic merge patch merges by name.
    let patch = json!({"metadata": {"labels": {"x": "y"}},
        "spec": {"ephemeralContainers": [{"name": "debugger2", "image": "busybox:1.36"}]}});
    let pod = ok(kapi, "PATCH", &path, STRATEGIC, &patch);
    assert_eq!(names(&pod), ["debugger", "debugger2"]);
    assert_eq!(
        pod["spec"]["ephemeralContainers"][1]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(pod["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(pod["metadata"]["generation"], 3);

    // A JSON merge patch replaces the list, so it carries the existing ones.
    let mut list = pod["spec"]["ephemeralContainers"].clone();
    list.as_array_mut()
        .unwrap()
        .push(json!({"name": "debugger3", "image": "alpine"}));
    let pod = ok(
        kapi,
        "PATCH",
        &path,
        MERGE,
        &json!({"spec": {"ephemeralContainers": list}}),
    );
    assert_eq!(names(&pod), ["debugger", "debugger2", "debugger3"]);
    assert_eq!(pod["metadata"]["generation"], 4);

    // Existing ephemeral containers may be neither removed nor changed.
    let fewer = json!({"spec": {"ephemeralContainers": [list[0], list[1]]}});
    assert_eq!(
        rejected(kapi, "PATCH", &path, MERGE, &fewer),
        [
            "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger3\" may not be removed\n"
        ]
    );
    let mut changed = pod.clone();
    changed["spec"]["ephemeralContainers"][0]["image"] = json!("busybox:1.37");
    assert_eq!(
        rejected(kapi, "PUT", &path, JSON, &changed),
        [
            "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be changed"
        ]
    );

    // What an ephemeral container may not have, a duplicate name, an unknown target.
    let bad = json!({"spec": {"ephemeralContainers": [
        {"name": "bad", "image": "busybox", "ports": [{"containerPort": 80}],
         "resources": {"limits": {"cpu": "1"}},
         "readinessProbe": {"exec": {"command": ["true"]}},
         "lifecycle": {"preStop": {"exec": {"command": ["true"]}}},
         "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "s"}]},
        {"name": "app", "image": "busybox"},
        {"name": "noimage", "targetContainerName": "nope"}]}});
    assert_eq!(
        rejected(kapi, "PATCH", &path, STRATEGIC, &bad),
        [
            "spec.ephemeralContainers[3].ports: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[3].resources: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[3].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[3].lifecycle: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[3].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[4].name: Duplicate value: \"app\"",
            "spec.ephemeralContainers[5].image: Required value",
            "spec.ephemeralContainers[5].targetContainerName: Not found: \"nope\"",
        ]
    );

    // The main resource refuses ephemeral containers, on create and on update.
    let mut add = pod.clone();
    add["spec"]["ephemeralContainers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "sneaky", "image": "busybox"}));
    assert_eq!(
        rejected(kapi, "PUT", &format!("{PODS}/x"), JSON, &add),
        [POD_UPDATE_FORBIDDEN]
    );
    let new_pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "y"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}],
                 "ephemeralContainers": [{"name": "d", "image": "busybox"}]}});
    assert_eq!(
        rejected(kapi, "POST", PODS, JSON, &new_pod),
        ["spec.ephemeralContainers: Forbidden: cannot be set on create"]
    );
}

fn resize(kapi: &Kapi) {
    create_pod(kapi, "r");
    let path = format!("{PODS}/r/resize");

    // cpu changes; memory, the image and the labels stay as they were.
    let patch = json!({"metadata": {"labels": {"app": "other"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.26",
            "resources": {"requests": {"cpu": "150m"}, "limits": {"cpu": "300m"}}}]}});
    let pod = ok(kapi, "PATCH", &path, STRATEGIC, &patch);
    assert_eq!(pod["kind"], "Pod");
    let c = &pod["spec"]["containers"][0];
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "150m", "memory": "64Mi"},
               "limits": {"cpu": "300m", "memory": "128Mi"}})
    );
    assert_eq!(c["image"], "nginx:1.25");
    assert_eq!(pod["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(pod["metadata"]["generation"], 2);

    // A PUT of the whole pod: memory grows, the rest of the spec is ignored.
    let mut put = pod.clone();
    put["spec"]["containers"][0]["resources"]["requests"]["memory"] = json!("96Mi");
    put["spec"]["containers"][0]["resources"]["limits"]["memory"] = json!("256Mi");
    put["spec"]["activeDeadlineSeconds"] = json!(30);
    let pod = ok(kapi, "PUT", &path, JSON, &put);
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["limits"]["memory"],
        "256Mi"
    );
    assert_eq!(pod["spec"]["activeDeadlineSeconds"], Value::Null);
    assert_eq!(pod["metadata"]["generation"], 3);

    // Other resources, a QoS change and a smaller memory limit are refused.
    let container = |resources: Value| json!({"spec": {"containers": [{"name": "app", "resources": resources}]}});
    assert_eq!(
        rejected(
            kapi,
            "PATCH",
            &path,
            STRATEGIC,
            &container(json!({"requests": {"ephemeral-storage": "1Gi"}}))
        ),
        ["spec: Forbidden: only cpu and memory resources are mutable"]
    );
    assert_eq!(
        rejected(
            kapi,
            "PATCH",
            &path,
            STRATEGIC,
            &container(json!({"requests": {"cpu": "300m", "memory": "256Mi"}}))
        ),
        [
            "spec: Invalid value: \"Burstable\": Pod QOS Class may not change as a result of resizing"
        ]
    );
    assert_eq!(
        rejected(
            kapi,
            "PATCH",
            &path,
            STRATEGIC,
            &container(json!({"limits": {"memory": "200Mi"}}))
        ),
        [
            "spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer"
        ]
    );
    let restart = json!({"spec": {"containers": [{"name": "app",
        "resizePolicy": [{"resourceName": "memory", "restartPolicy": "RestartContainer"}],
        "resources": {"limits": {"memory": "200Mi"}}}]}});
    assert_eq!(
        rejected(kapi, "PATCH", &path, STRATEGIC, &restart),
        ["spec: Forbidden: only cpu and memory resources are mutable"],
        "resizePolicy itself may not change"
    );

    // The main resource still refuses resource changes.
    assert_eq!(
        rejected(
            kapi,
            "PATCH",
            &format!("{PODS}/r"),
            STRATEGIC,
            &container(json!({"requests": {"cpu": "160m"}}))
        ),
        [POD_UPDATE_FORBIDDEN]
    );
}

/// Discovery lists both subresources as kube does.
fn discovery(kapi: &Kapi) {
    let (_, discovery) = kapi.request("GET", "/api/v1", JSON, None);
    for name in ["pods/ephemeralcontainers", "pods/resize"] {
        let entry = discovery["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned();
        assert_eq!(
            entry,
            Some(json!({"name": name, "singularName": "", "namespaced": true,
                        "kind": "Pod", "verbs": ["get", "patch", "update"]}))
        );
    }
}

#[test]
fn pod_subresources_over_http() {
    let kapi = Kapi::start(Backend::Embedded);
    ephemeral_containers(&kapi);
    resize(&kapi);
    discovery(&kapi);
}

#[test]
fn kubectl_debug_adds_an_ephemeral_container() {
    let kapi = Kapi::start(Backend::Embedded);
    create_pod(&kapi, "k");
    kapi.kubectl(&[
        "debug",
        "k",
        "--image=busybox",
        "-c",
        "debugger",
        "--target=app",
    ]);
    // A second one: kubectl's patch now lists the first one's place too.
    kapi.kubectl(&["debug", "k", "--image=alpine:3.20", "-c", "second"]);
    let out = kapi.kubectl(&[
        "get",
        "pod",
        "k",
        "-o",
        "jsonpath={range .spec.ephemeralContainers[*]}{.name}/{.image}/{.targetContainerName} {end}",
    ]);
    assert_eq!(out.trim(), "debugger/busybox/app second/alpine:3.20/");
}
