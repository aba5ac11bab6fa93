//! kapi's built-in admission plugins end to end, over real HTTPS and kubectl:
//! ServiceAccount (a Pod's account and its token volume, a missing account refused)
//! and ResourceQuota object counts (creates over the limit refused with kube's
//! `exceeded quota`, concurrent creates never overshoot, deletes give quota back).

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
