//! kubectl's typed commands, which speak protobuf (`Content-Type:
//! application/vnd.kubernetes.protobuf`, `Accept: application/vnd.kubernetes.protobuf,
//! application/json`): each generator creates what the same generator's manifest
//! (`--dry-run=client -o json`, sent as JSON by `create -f`) creates, with every
//! kubectl release beside the default one; then `get`, `describe`, `wait`, `get -w`,
//! `expose`, `run`, `create token` and `delete` (a protobuf `DeleteOptions`) against
//! what they made, on both backends.

use std::time::Duration;

use kapi_tests::{Backend, Kapi, LineReader, kubectl_versions, on_every_backend};
use serde_json::Value;

/// The generator commands, each creating one object (kind, name) in the namespace.
fn generators(dir: &str) -> Vec<(Vec<String>, &'static str, &'static str)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            s(&[
                "create",
                "configmap",
                "cm",
                "--from-literal=k=v",
                "--from-literal=empty=",
            ]),
            "configmap",
            "cm",
        ),
        (
            s(&["create", "secret", "generic", "sec", "--from-literal=k=v"]),
            "secret",
            "sec",
        ),
        (
            vec![
                "create".into(),
                "secret".into(),
                "tls".into(),
                "tls".into(),
                format!("--cert={dir}/pki/admin.crt"),
                format!("--key={dir}/pki/admin.key"),
            ],
            "secret",
            "tls",
        ),
        (
            s(&[
                "create",
                "secret",
                "docker-registry",
                "reg",
                "--docker-server=r.example",
                "--docker-username=u",
                "--docker-password=p",
            ]),
            "secret",
            "reg",
        ),
        (
            s(&[
                "create",
                "deployment",
                "web",
                "--image=nginx:1.27",
                "--replicas=0",
            ]),
            "deployment",
            "web",
        ),
        (
            s(&[
                "create",
                "deployment",
                "api",
                "--image=nginx",
                "--port=8080",
            ]),
            "deployment",
            "api",
        ),
        (
            s(&["create", "job", "once", "--image=busybox"]),
            "job",
            "once",
        ),
        (
            s(&[
                "create",
                "cronjob",
                "tick",
                "--image=busybox",
                "--schedule=*/5 * * * *",
            ]),
            "cronjob",
            "tick",
        ),
        (
            s(&["create", "serviceaccount", "robot"]),
            "serviceaccount",
            "robot",
        ),
        (
            s(&[
                "create",
                "role",
                "reader",
                "--verb=get,list",
                "--resource=pods",
            ]),
            "role",
            "reader",
        ),
        (
            s(&[
                "create",
                "rolebinding",
                "reads",
                "--role=reader",
                "--user=alice",
            ]),
            "rolebinding",
            "reads",
        ),
        (
            s(&["create", "quota", "q", "--hard=pods=3,requests.cpu=1"]),
            "resourcequota",
            "q",
        ),
        (
            s(&[
                "create",
                "pdb",
                "budget",
                "--selector=app=web",
                "--min-available=1",
            ]),
            "poddisruptionbudget",
            "budget",
        ),
        (
            s(&[
                "create",
                "ingress",
                "ing",
                "--rule=foo.example/bar=svc:8080",
            ]),
            "ingress",
            "ing",
        ),
        (
            s(&["create", "service", "clusterip", "svc", "--tcp=80:8080"]),
            "service",
            "svc",
        ),
        (
            s(&["create", "service", "nodeport", "np", "--tcp=81:8081"]),
            "service",
            "np",
        ),
    ]
}

/// An object as stored, without what the server makes per object.
fn comparable(obj: Value) -> Value {
    // The uid recurs where the server copies it (a Job's controller-uid labels).
    let uid = obj["metadata"]["uid"]
        .as_str()
        .unwrap_or("no-uid")
        .to_string();
    let text = serde_json::to_string(&obj).unwrap().replace(&uid, "UID");
    let mut obj: Value = serde_json::from_str(&text).unwrap();
    let meta = obj["metadata"].as_object_mut().expect("metadata");
    for k in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "namespace",
        "managedFields",
    ] {
        meta.remove(k);
    }
    // Written by a controller, whenever it gets to it: a quota's usage.
    if obj["kind"] == "ResourceQuota" {
        obj.as_object_mut().unwrap().remove("status");
    }
    // Allocated per object: a Service's cluster IPs and node ports.
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports {
                p.as_object_mut().unwrap().remove("nodePort");
            }
        }
    }
    obj
}

fn get_json(kapi: &Kapi, version: Option<&str>, ns: &str, kind: &str, name: &str) -> Value {
    let out = kapi.kubectl_ok(version, &["get", kind, name, "-n", ns, "-o", "json"], None);
    serde_json::from_str(&out).expect("kubectl get -o json")
}

/// Every generator with `version`, then the same manifest over JSON: equal objects.
fn generators_match_their_manifests(kapi: &Kapi, version: Option<&str>, tag: &str) {
    let dir = kapi.data_dir().display().to_string();
    let (typed, manifest) = (format!("pb-{tag}"), format!("json-{tag}"));
    for ns in [&typed, &manifest] {
        kapi.kubectl_ok(version, &["create", "namespace", ns], None);
    }
    for (args, kind, name) in generators(&dir) {
        let mut typed_args: Vec<&str> = args.iter().map(String::as_str).collect();
        typed_args.extend(["-n", &typed]);
        kapi.kubectl_ok(version, &typed_args, None);
        let mut dry: Vec<&str> = args.iter().map(String::as_str).collect();
        dry.extend(["-n", &manifest, "--dry-run=client", "-o", "json"]);
        let doc = kapi.kubectl_ok(version, &dry, None);
        kapi.kubectl_ok(version, &["create", "-n", &manifest, "-f", "-"], Some(&doc));
        let a = comparable(get_json(kapi, version, &typed, kind, name));
        let b = comparable(get_json(kapi, version, &manifest, kind, name));
        assert_eq!(
            a, b,
            "kubectl {version:?} {args:?}: protobuf and JSON differ"
        );
    }
    // Go's zero values: what the generator left unset is not in the object.
    let web = get_json(kapi, version, &typed, "deployment", "web");
    assert_eq!(web["spec"]["replicas"], 0, "an explicit 0 is kept: {web}");
    assert!(web["metadata"].get("generateName").is_none(), "{web}");
    let container = &web["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["imagePullPolicy"], "IfNotPresent",
        "defaulted: {container}"
    );
    let cm = get_json(kapi, version, &typed, "configmap", "cm");
    assert_eq!(cm["data"], serde_json::json!({"k": "v", "empty": ""}));
}

#[test]
fn typed_commands_speak_protobuf_with_every_release() {
    on_every_backend(|kapi| {
        // The default kubectl (1.33 against kapi) and 1.32 on both backends; every
        // release on the embedded one.
        let mut versions: Vec<Option<String>> = vec![None, Some("1.32".into())];
        if matches!(kapi.backend(), Backend::Embedded) {
            versions.extend(
                kubectl_versions()
                    .into_iter()
                    .filter(|v| v != "1.32")
                    .map(Some),
            );
        }
        for v in &versions {
            let tag = v.as_deref().unwrap_or("default").replace('.', "-");
            generators_match_their_manifests(kapi, v.as_deref(), &tag);
        }
    });
}

#[test]
fn reads_waits_watches_and_deletes_in_protobuf() {
    on_every_backend(|kapi| {
        kapi.kubectl(&["create", "namespace", "pb"]);
        kapi.kubectl(&[
            "create",
            "deployment",
            "web",
            "-n",
            "pb",
            "--image=nginx",
            "--replicas=2",
        ]);
        kapi.kubectl(&["create", "serviceaccount", "robot", "-n", "pb"]);

        // get (a Table) and describe (typed gets and lists in protobuf).
        let table = kapi.kubectl(&["get", "deployments", "-n", "pb"]);
        assert!(table.lines().any(|l| l.starts_with("web ")), "{table}");
        let described = kapi.kubectl(&["describe", "deployment", "web", "-n", "pb"]);
        assert!(described.contains("Replicas:"), "{described}");
        assert!(described.contains("nginx"), "{described}");
        let described = kapi.kubectl(&["describe", "namespace", "pb"]);
        assert!(described.contains("Status:"), "{described}");

        // expose and run.
        kapi.kubectl(&[
            "expose",
            "deployment",
            "web",
            "-n",
            "pb",
            "--port=80",
            "--target-port=8080",
        ]);
        let svc = get_json(kapi, None, "pb", "service", "web");
        assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080, "{svc}");
        kapi.kubectl(&[
            "run",
            "one",
            "-n",
            "pb",
            "--image=busybox",
            "--restart=Never",
        ]);
        let pod = get_json(kapi, None, "pb", "pod", "one");
        assert_eq!(pod["spec"]["restartPolicy"], "Never", "{pod}");

        // A token (TokenRequest in and out).
        let token = kapi.kubectl(&["create", "token", "robot", "-n", "pb"]);
        assert_eq!(token.trim().split('.').count(), 3, "a JWT: {token}");

        // wait on a condition that already holds, and a watch seeing a change.
        kapi.kubectl(&[
            "wait",
            "--for=jsonpath={.spec.replicas}=2",
            "deployment/web",
            "-n",
            "pb",
            "--timeout=20s",
        ]);
        let mut watch = LineReader::new(kapi.kubectl_spawn(&[
            "get",
            "configmaps",
            "-n",
            "pb",
            "-w",
            "--output-watch-events",
        ]));
        kapi.kubectl(&[
            "create",
            "configmap",
            "seen",
            "-n",
            "pb",
            "--from-literal=a=b",
        ]);
        watch.wait_for(Duration::from_secs(20), |l| {
            l.contains("ADDED") && l.contains("seen")
        });
        kapi.kubectl(&["delete", "configmap", "seen", "-n", "pb"]);
        watch.wait_for(Duration::from_secs(20), |l| {
            l.contains("DELETED") && l.contains("seen")
        });
        watch.stop();

        // delete sends DeleteOptions in protobuf; a missing object is kube's 404.
        let out = kapi.kubectl(&[
            "delete",
            "deployment",
            "web",
            "-n",
            "pb",
            "--cascade=orphan",
        ]);
        assert!(out.contains("deployment.apps \"web\" deleted"), "{out}");
        let err = kapi.kubectl_err(&["get", "deployment", "web", "-n", "pb"], None);
        assert!(err.contains("deployments.apps \"web\" not found"), "{err}");
        let err = kapi.kubectl_err(&["delete", "configmap", "never", "-n", "pb"], None);
        assert!(err.contains("configmaps \"never\" not found"), "{err}");
        // A typed create's error comes back as a protobuf Status, read as kube's.
        let create = ["create", "configmap", "twice", "-n", "pb"];
        kapi.kubectl(&create);
        let err = kapi.kubectl_err(&create, None);
        assert!(err.contains("configmaps \"twice\" already exists"), "{err}");
    });
}
