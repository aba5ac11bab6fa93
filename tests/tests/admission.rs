//! kapi's built-in admission plugins end to end, over real HTTPS and kubectl:
//! ServiceAccount (a Pod's account and its token volume, a missing account refused),
//! ResourceQuota object counts (creates over the limit refused with kube's
//! `exceeded quota`, concurrent creates never overshoot, deletes give quota back), and
//! Priority, RuntimeClass and DefaultIngressClass (what a Pod or Ingress gets from its
//! class, and the refusals in kube's words).

use std::sync::{Arc, Barrier};
use std::time::Duration;

use kapi_tests::{Backend, Kapi, on_every_backend};
use serde_json::{Value, json};

const JSON: &str = "application/json";

fn namespace(kapi: &Kapi, name: &str) {
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})),
    );
    assert_eq!(code, 201, "{body}");
}

fn pod(name: &str, account: Option<&str>) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [
                {"name": "app", "image": "nginx"},
                {"name": "side", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
        },
    });
    if let Some(a) = account {
        pod["spec"]["serviceAccountName"] = json!(a);
    }
    pod
}

fn token_volume(pod: &Value) -> Option<&Value> {
    pod["spec"]["volumes"].as_array()?.iter().find(|v| {
        v["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("kube-api-access-"))
    })
}

#[test]
fn service_account_admission_sets_the_account_and_mounts_its_token() {
    let kapi = Kapi::start(Backend::Embedded);
    // A fresh namespace: its `default` account comes from a controller, which the
    // plugin waits for briefly.
    namespace(&kapi, "apps");
    let (code, created) = kapi.request(
        "POST",
        "/api/v1/namespaces/apps/pods",
        JSON,
        Some(&pod("web", None)),
    );
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["spec"]["serviceAccountName"], "default");
    assert_eq!(created["spec"]["serviceAccount"], "default");
    let volume = token_volume(&created).unwrap_or_else(|| panic!("no token volume: {created}"));
    let sources = volume["projected"]["sources"].as_array().expect("sources");
    assert_eq!(sources[0]["serviceAccountToken"]["path"], "token");
    assert_eq!(sources[0]["serviceAccountToken"]["expirationSeconds"], 3607);
    assert_eq!(sources[1]["configMap"]["name"], "kube-root-ca.crt");
    assert_eq!(
        sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"],
        "metadata.namespace"
    );
    for field in ["initContainers", "containers"] {
        for c in created["spec"][field].as_array().expect("containers") {
            let mount = c["volumeMounts"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["name"] == volume["name"]))
                .unwrap_or_else(|| panic!("{} has no token mount: {created}", c["name"]));
            assert_eq!(
                mount["mountPath"],
                "/var/run/secrets/kubernetes.io/serviceaccount"
            );
            assert_eq!(mount["readOnly"], true);
        }
    }
    // The side container keeps its own mount too.
    assert_eq!(
        created["spec"]["containers"][1]["volumeMounts"][0]["name"],
        "data"
    );

    // An account that does not exist: 403 in kube's words, nothing stored.
    let (code, status) = kapi.request(
        "POST",
        "/api/v1/namespaces/apps/pods",
        JSON,
        Some(&pod("ghost", Some("nobody"))),
    );
    assert_eq!(code, 403, "{status}");
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"ghost\" is forbidden: error looking up service account apps/nobody: serviceaccount \"nobody\" not found"
    );
    let (code, _) = kapi.request("GET", "/api/v1/namespaces/apps/pods/ghost", JSON, None);
    assert_eq!(code, 404);
    let err = kapi.kubectl_err(
        &[
            "run",
            "ghost2",
            "-n",
            "apps",
            "--image=nginx",
            "--overrides",
            r#"{"spec":{"serviceAccountName":"nobody"}}"#,
        ],
        None,
    );
    assert!(
        err.contains("error looking up service account apps/nobody"),
        "{err}"
    );

    // An account that opts out of automounting: the account is set, no volume.
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces/apps/serviceaccounts",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "quiet"}, "automountServiceAccountToken": false})),
    );
    assert_eq!(code, 201, "{body}");
    let (code, quiet) = kapi.request(
        "POST",
        "/api/v1/namespaces/apps/pods",
        JSON,
        Some(&pod("quiet", Some("quiet"))),
    );
    assert_eq!(code, 201, "{quiet}");
    assert_eq!(quiet["spec"]["serviceAccountName"], "quiet");
    assert!(token_volume(&quiet).is_none(), "{quiet}");
    // The Pod's own opt-in wins over the account's opt-out.
    let mut opted_in = pod("loud", Some("quiet"));
    opted_in["spec"]["automountServiceAccountToken"] = json!(true);
    let (code, loud) = kapi.request(
        "POST",
        "/api/v1/namespaces/apps/pods",
        JSON,
        Some(&opted_in),
    );
    assert_eq!(code, 201, "{loud}");
    assert!(token_volume(&loud).is_some(), "{loud}");

    // Only creates are admitted: an update keeps the pod's volumes as they are.
    let mut update = created.clone();
    update["spec"]["containers"][0]["image"] = json!("nginx:2");
    let (code, updated) = kapi.request(
        "PUT",
        "/api/v1/namespaces/apps/pods/web",
        JSON,
        Some(&update),
    );
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["spec"]["volumes"], created["spec"]["volumes"]);
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

fn quota(name: &str, hard: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard}})
}

#[test]
fn resource_quota_counts_objects() {
    on_every_backend(|kapi| {
        namespace(kapi, "q");
        let (code, body) = kapi.request(
            "POST",
            "/api/v1/namespaces/q/resourcequotas",
            JSON,
            Some(&quota(
                "objects",
                json!({"count/configmaps": "2", "secrets": "1"}),
            )),
        );
        assert_eq!(code, 201, "{body}");
        // The controller fills in status.hard and status.used.
        kapi.poll(
            "/api/v1/namespaces/q/resourcequotas/objects",
            Duration::from_secs(10),
            "quota status",
            |_, q| {
                q["status"]["hard"]["count/configmaps"] == "2"
                    && q["status"]["used"]["secrets"] == "0"
            },
        );
        for name in ["a", "b"] {
            let (code, body) = kapi.request(
                "POST",
                "/api/v1/namespaces/q/configmaps",
                JSON,
                Some(&configmap(name)),
            );
            assert_eq!(code, 201, "{body}");
        }
        let (_, q) = kapi.request(
            "GET",
            "/api/v1/namespaces/q/resourcequotas/objects",
            JSON,
            None,
        );
        assert_eq!(q["status"]["used"]["count/configmaps"], "2", "{q}");
        let (code, status) = kapi.request(
            "POST",
            "/api/v1/namespaces/q/configmaps",
            JSON,
            Some(&configmap("c")),
        );
        assert_eq!(code, 403, "{status}");
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(
            status["message"],
            "configmaps \"c\" is forbidden: exceeded quota: objects, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2"
        );
        // A dry run is checked the same way.
        let (code, _) = kapi.request(
            "POST",
            "/api/v1/namespaces/q/configmaps?dryRun=All",
            JSON,
            Some(&configmap("c")),
        );
        assert_eq!(code, 403);
        // Legacy names count too; another namespace is not limited.
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}});
        let (code, body) =
            kapi.request("POST", "/api/v1/namespaces/q/secrets", JSON, Some(&secret));
        assert_eq!(code, 201, "{body}");
        let mut second = secret.clone();
        second["metadata"]["name"] = json!("s2");
        let (code, status) =
            kapi.request("POST", "/api/v1/namespaces/q/secrets", JSON, Some(&second));
        assert_eq!(code, 403, "{status}");
        assert!(
            status["message"].as_str().unwrap_or_default().contains(
                "exceeded quota: objects, requested: secrets=1, used: secrets=1, limited: secrets=1"
            ),
            "{status}"
        );
        let (code, body) = kapi.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            JSON,
            Some(&configmap("free")),
        );
        assert_eq!(code, 201, "{body}");
        // kubectl shows the same refusal.
        let err = kapi.kubectl_err(
            &["create", "-n", "q", "-f", "-"],
            Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n"),
        );
        assert!(err.contains("exceeded quota: objects"), "{err}");
        // A delete gives the unit back once the controller has recounted.
        let (code, body) = kapi.request("DELETE", "/api/v1/namespaces/q/configmaps/a", JSON, None);
        assert_eq!(code, 200, "{body}");
        kapi.poll(
            "/api/v1/namespaces/q/resourcequotas/objects",
            Duration::from_secs(10),
            "usage recounted after the delete",
            |_, q| q["status"]["used"]["count/configmaps"] == "1",
        );
        let (code, body) = kapi.request(
            "POST",
            "/api/v1/namespaces/q/configmaps",
            JSON,
            Some(&configmap("c")),
        );
        assert_eq!(code, 201, "{body}");
    });
}

#[test]
fn concurrent_creates_never_overshoot_a_quota() {
    let kapi = Arc::new(Kapi::start(Backend::Embedded));
    namespace(&kapi, "race");
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces/race/resourcequotas",
        JSON,
        Some(&quota("five", json!({"count/configmaps": "5"}))),
    );
    assert_eq!(code, 201, "{body}");
    let clients = 20;
    let barrier = Arc::new(Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let kapi = kapi.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                kapi.request(
                    "POST",
                    "/api/v1/namespaces/race/configmaps",
                    JSON,
                    Some(&configmap(&format!("cm-{i}"))),
                )
            })
        })
        .collect();
    let mut created = 0;
    for t in threads {
        let (code, body) = t.join().expect("client thread");
        match code {
            201 => created += 1,
            403 => assert!(
                body["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("exceeded quota: five"),
                "{body}"
            ),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(created, 5);
    let (_, list) = kapi.request("GET", "/api/v1/namespaces/race/configmaps", JSON, None);
    assert_eq!(list["items"].as_array().map(Vec::len), Some(5), "{list}");
}

/// Creates `body` at `path`; returns the answer's code and body.
fn post(kapi: &Kapi, path: &str, body: Value) -> (u16, Value) {
    kapi.request("POST", path, JSON, Some(&body))
}

fn created(kapi: &Kapi, path: &str, body: Value) -> Value {
    let (code, out) = post(kapi, path, body);
    assert_eq!(code, 201, "POST {path}: {out}");
    out
}

fn refused(kapi: &Kapi, path: &str, body: Value, message: &str) {
    let (code, out) = post(kapi, path, body);
    assert_eq!(
        (code, &out["reason"], &out["message"]),
        (403, &json!("Forbidden"), &json!(message)),
        "{out}"
    );
}

fn simple_pod(name: &str, spec: Value) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    for (k, v) in spec.as_object().expect("spec fields") {
        pod["spec"][k] = v.clone();
    }
    pod
}

#[test]
fn priority_default_tolerations_runtime_class_and_default_ingress_class() {
    let kapi = Kapi::start(Backend::Embedded);
    let pods = "/api/v1/namespaces/default/pods";
    let classes = "/apis/scheduling.k8s.io/v1/priorityclasses";

    // Priority: none without a default class; the class's value and policy otherwise.
    let p = created(&kapi, pods, simple_pod("plain", json!({})));
    assert_eq!(
        (
            &p["spec"]["priority"],
            &p["spec"]["preemptionPolicy"],
            p["spec"].get("priorityClassName")
        ),
        (&json!(0), &json!("PreemptLowerPriority"), None)
    );
    // DefaultTolerationSeconds: five minutes on unready and unreachable nodes.
    assert_eq!(
        p["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300},
        ])
    );
    created(
        &kapi,
        classes,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}),
    );
    let p = created(
        &kapi,
        pods,
        simple_pod("high", json!({"priorityClassName": "high"})),
    );
    assert_eq!(
        (&p["spec"]["priority"], &p["spec"]["preemptionPolicy"]),
        (&json!(1000), &json!("Never"))
    );
    refused(
        &kapi,
        pods,
        simple_pod("nope", json!({"priorityClassName": "nope"})),
        "pods \"nope\" is forbidden: no PriorityClass with name nope was found",
    );
    refused(
        &kapi,
        pods,
        simple_pod("given", json!({"priorityClassName": "high", "priority": 5})),
        "pods \"given\" is forbidden: the integer value of priority (5) must not be provided \
         in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
    );
    created(
        &kapi,
        classes,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "standard"}, "value": 100, "globalDefault": true}),
    );
    let p = created(&kapi, pods, simple_pod("defaulted", json!({})));
    assert_eq!(
        (&p["spec"]["priorityClassName"], &p["spec"]["priority"]),
        (&json!("standard"), &json!(100))
    );

    // RuntimeClass: overhead and scheduling from the class.
    created(
        &kapi,
        "/apis/node.k8s.io/v1/runtimeclasses",
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
            "handler": "kata", "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {"nodeSelector": {"sandbox": "true"},
                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}}),
    );
    let p = created(
        &kapi,
        pods,
        simple_pod(
            "sandboxed",
            json!({"runtimeClassName": "kata", "nodeSelector": {"zone": "a"}}),
        ),
    );
    assert_eq!(
        p["spec"]["overhead"],
        json!({"cpu": "250m", "memory": "120Mi"})
    );
    assert_eq!(
        p["spec"]["nodeSelector"],
        json!({"sandbox": "true", "zone": "a"})
    );
    let tolerations = p["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        tolerations
            .contains(&json!({"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"})),
        "{p}"
    );
    // The same overhead written otherwise is the same overhead.
    created(
        &kapi,
        pods,
        simple_pod(
            "same",
            json!({"runtimeClassName": "kata",
            "overhead": {"cpu": "0.25", "memory": "120Mi"}}),
        ),
    );
    refused(
        &kapi,
        pods,
        simple_pod("missing", json!({"runtimeClassName": "missing"})),
        "pods \"missing\" is forbidden: pod rejected: RuntimeClass \"missing\" not found",
    );
    refused(
        &kapi,
        pods,
        simple_pod(
            "conflict",
            json!({"runtimeClassName": "kata", "nodeSelector": {"sandbox": "false"}}),
        ),
        "pods \"conflict\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = \
         true; pod.spec.nodeSelector[sandbox] = false",
    );
    refused(
        &kapi,
        pods,
        simple_pod(
            "other",
            json!({"runtimeClassName": "kata", "overhead": {"cpu": "1"}}),
        ),
        "pods \"other\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's \
         defined Overhead",
    );
    refused(
        &kapi,
        pods,
        simple_pod("classless", json!({"overhead": {"cpu": "1"}})),
        "pods \"classless\" is forbidden: pod rejected: Pod Overhead set without corresponding \
         RuntimeClass defined Overhead",
    );

    // DefaultIngressClass: the newest default class, unless the Ingress names one.
    let ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
    let ingress = |name: &str, annotations: Value| {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}})
    };
    let i = created(&kapi, ingresses, ingress("before", json!({})));
    assert_eq!(i["spec"].get("ingressClassName"), None, "{i}");
    for (n, name) in ["older", "newer"].iter().enumerate() {
        if n > 0 {
            // Creation timestamps have whole seconds.
            std::thread::sleep(Duration::from_millis(1100));
        }
        created(
            &kapi,
            "/apis/networking.k8s.io/v1/ingressclasses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                "metadata": {"name": name,
                    "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
                "spec": {"controller": "example.com/ingress"}}),
        );
    }
    let i = created(&kapi, ingresses, ingress("after", json!({})));
    assert_eq!(i["spec"]["ingressClassName"], "newer", "{i}");
    let i = created(
        &kapi,
        ingresses,
        ingress("legacy", json!({"kubernetes.io/ingress.class": "nginx"})),
    );
    assert_eq!(i["spec"].get("ingressClassName"), None, "{i}");
}
