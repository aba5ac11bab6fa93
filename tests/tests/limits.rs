//! Request limits end to end, each with its status code: 200 clients against limits of
//! 20 reads and 10 writes in flight (priority and fairness off) get 429 with
//! `Retry-After` for the excess and never a 5xx, while `/healthz` keeps answering; a body over `--max-request-body-bytes` and
//! an object over `--max-object-size-bytes` get 413; a request stuck on a frozen etcd
//! gets 504 after `--request-timeout`; `--max-watches-per-user` bounds open watches
//! (429). Limits apply to ordinary users; `system:masters` is exempt, as in
//! kube-apiserver.

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, EtcdProcess, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A token file with `worker` and a ClusterRoleBinding giving it `edit`.
fn worker_server(args: &[&str]) -> (Kapi, tempfile::TempDir) {
    let files = tempfile::tempdir().unwrap();
    let tokens = files.path().join("tokens.csv");
    std::fs::write(&tokens, "tok-worker,worker,uid-worker\n").unwrap();
    let tokens = tokens.display().to_string();
    let mut all = vec!["--token-auth-file", tokens.as_str()];
    all.extend_from_slice(args);
    let kapi = Kapi::start_with(Backend::Embedded, &all);
    bind_edit(&kapi);
    (kapi, files)
}

fn bind_edit(kapi: &Kapi) {
    let (code, body) = kapi.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        JSON,
        Some(&json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "worker-edit"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "worker"}],
        })),
    );
    assert_eq!(code, 201, "{body}");
    // The policy reaches the authorizer through a watch.
    let deadline = Instant::now() + Duration::from_secs(10);
    let agent = kapi.agent_without_certificate();
    while kapi
        .exchange_as(
            &agent,
            Some("tok-worker"),
            "GET",
            CONFIGMAPS,
            JSON,
            None,
            None,
        )
        .code
        != 200
    {
        assert!(Instant::now() < deadline, "the binding never took effect");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn configmap(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}})
}

#[test]
fn overload_gets_429_with_retry_after_never_5xx_and_healthz_answers() {
    // The in-flight limits as they are, without priority and fairness (which would
    // queue the excess; see priority_and_fairness.rs).
    let (kapi, _files) = worker_server(&[
        "--max-requests-inflight",
        "20",
        "--max-mutating-requests-inflight",
        "10",
        "--enable-priority-and-fairness=false",
    ]);
    // Lists of a few hundred objects keep each read busy for a while.
    for i in 0..300 {
        let (code, body) = kapi.request(
            "POST",
            CONFIGMAPS,
            JSON,
            Some(&configmap(&format!("seed-{i}"), "x")),
        );
        assert_eq!(code, 201, "{body}");
    }
    let kapi = Arc::new(kapi);
    let clients = 200;
    // The clients, the health checker and this thread start together.
    let barrier = Arc::new(Barrier::new(clients + 2));
    let codes = Arc::new(Mutex::new(BTreeMap::<u16, usize>::new()));
    let missing_retry_after = Arc::new(Mutex::new(0usize));
    let mut threads = Vec::new();
    for c in 0..clients {
        let (kapi, barrier, codes, missing) = (
            kapi.clone(),
            barrier.clone(),
            codes.clone(),
            missing_retry_after.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let agent = kapi.agent_without_certificate();
            barrier.wait();
            for i in 0..5 {
                let res = if c % 2 == 0 {
                    kapi.exchange_as(
                        &agent,
                        Some("tok-worker"),
                        "GET",
                        CONFIGMAPS,
                        JSON,
                        None,
                        None,
                    )
                } else {
                    let body =
                        serde_json::to_vec(&configmap(&format!("load-{c}-{i}"), "y")).unwrap();
                    kapi.exchange_as(
                        &agent,
                        Some("tok-worker"),
                        "POST",
                        CONFIGMAPS,
                        JSON,
                        None,
                        Some(&body),
                    )
                };
                *codes.lock().unwrap().entry(res.code).or_default() += 1;
                if res.code == 429 {
                    let status: Value = serde_json::from_str(&res.body).unwrap();
                    assert_eq!(status["reason"], "TooManyRequests", "{status}");
                    if res.retry_after.as_deref() != Some("1") {
                        *missing.lock().unwrap() += 1;
                    }
                }
            }
        }));
    }
    // Health checks during the storm, as the limited user.
    let health = {
        let kapi = kapi.clone();
        let barrier = barrier.clone();
        std::thread::spawn(move || {
            let agent = kapi.agent_without_certificate();
            barrier.wait();
            (0..40)
                .map(|_| {
                    let code = kapi
                        .exchange_as(
                            &agent,
                            Some("tok-worker"),
                            "GET",
                            "/healthz",
                            JSON,
                            None,
                            None,
                        )
                        .code;
                    std::thread::sleep(Duration::from_millis(5));
                    code
                })
                .collect::<Vec<u16>>()
        })
    };
    barrier.wait();
    for t in threads {
        t.join().expect("a client thread");
    }
    let health = health.join().unwrap();
    let codes = codes.lock().unwrap().clone();
    assert!(
        health.iter().all(|c| *c == 200),
        "/healthz under load: {health:?}"
    );
    assert!(
        codes.keys().all(|c| *c < 500),
        "no 5xx under overload: {codes:?}"
    );
    assert!(
        codes.get(&429).copied().unwrap_or(0) > 0,
        "the excess got 429: {codes:?}"
    );
    assert!(
        codes.get(&200).copied().unwrap_or(0) > 0,
        "reads went through: {codes:?}"
    );
    assert!(
        codes.get(&201).copied().unwrap_or(0) > 0,
        "writes went through: {codes:?}"
    );
    assert_eq!(
        *missing_retry_after.lock().unwrap(),
        0,
        "every 429 says Retry-After: 1"
    );
    assert!(
        codes.keys().all(|c| matches!(c, 200 | 201 | 429)),
        "only successes and 429: {codes:?}"
    );
}

#[test]
fn bodies_and_objects_over_their_limits_get_413() {
    let kapi = Kapi::start(Backend::Embedded);
    // A body over 3 MiB.
    let big = "x".repeat(3 * 1024 * 1024 + 10);
    let body = serde_json::to_vec(&configmap("huge-body", &big)).unwrap();
    let res = kapi.exchange("POST", CONFIGMAPS, JSON, None, Some(&body));
    assert_eq!(res.code, 413, "{}", &res.body[..res.body.len().min(300)]);
    let status: Value = serde_json::from_str(&res.body).unwrap();
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert_eq!(
        status["message"],
        "Request entity too large: limit is 3145728"
    );
    // An object over 1.5 MiB in a body under 3 MiB (a Widget: a ConfigMap's data is
    // refused over 1 MiB first, 422, as kube-apiserver validates it).
    let widgets = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
    let huge = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
        "metadata": {"name": "huge-object"},
        "spec": {"color": "red", "config": {"big": "y".repeat(2_000_000)}}});
    let (code, status) = kapi.request("POST", widgets, JSON, Some(&huge));
    assert_eq!(code, 413, "{status}");
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("widgets.example.kapi.dev \"huge-object\" is too large"),
        "{status}"
    );
    let (code, status) = kapi.request(
        "POST",
        CONFIGMAPS,
        JSON,
        Some(&configmap("huge-data", &"y".repeat(2_000_000))),
    );
    assert_eq!(
        (code, status["reason"].as_str()),
        (422, Some("Invalid")),
        "{status}"
    );
    // Nothing of either was stored; an object under the limits is.
    assert_eq!(
        kapi.request("GET", &format!("{widgets}/huge-object"), JSON, None)
            .0,
        404
    );
    assert_eq!(
        kapi.request(
            "POST",
            CONFIGMAPS,
            JSON,
            Some(&configmap("fits", &"z".repeat(1_000_000)))
        )
        .0,
        201
    );
    // The limits are flags.
    let small = Kapi::start_with(
        Backend::Embedded,
        &[
            "--max-request-body-bytes",
            "2000",
            "--max-object-size-bytes",
            "1000",
        ],
    );
    let (code, status) = small.request(
        "POST",
        CONFIGMAPS,
        JSON,
        Some(&configmap("a", &"a".repeat(3000))),
    );
    assert_eq!(
        (code, status["message"].as_str()),
        (413, Some("Request entity too large: limit is 2000"))
    );
    let (code, status) = small.request(
        "POST",
        CONFIGMAPS,
        JSON,
        Some(&configmap("b", &"b".repeat(1200))),
    );
    assert_eq!(code, 413, "{status}");
    let (code, status) = small.request(
        "PUT",
        &format!("{CONFIGMAPS}/c"),
        JSON,
        Some(&configmap("c", "c")),
    );
    assert!(code == 201 || code == 404, "{code} {status}");
}

#[test]
fn a_request_stuck_in_storage_gets_504_after_the_request_timeout() {
    let etcd = EtcdProcess::start();
    let kapi = Kapi::start_with(
        Backend::SharedEtcd(etcd.endpoint()),
        &["--request-timeout", "2s"],
    );
    assert_eq!(
        kapi.request("POST", CONFIGMAPS, JSON, Some(&configmap("before", "1")))
            .0,
        201
    );
    let pid = etcd.pid().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let (code, status) = kapi.request("GET", &format!("{CONFIGMAPS}/before"), JSON, None);
    let took = started.elapsed();
    assert!(
        std::process::Command::new("kill")
            .args(["-CONT", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(code, 504, "{status}");
    assert_eq!(status["reason"], "Timeout", "{status}");
    assert!(took < Duration::from_secs(20), "answered after {took:?}");
    // etcd back: the server is fine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while kapi
        .request("GET", &format!("{CONFIGMAPS}/before"), JSON, None)
        .0
        != 200
    {
        assert!(Instant::now() < deadline, "no recovery after etcd resumed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn watches_per_user_are_bounded() {
    let (kapi, _files) = worker_server(&["--max-watches-per-user", "2"]);
    let agent = kapi.agent_without_certificate();
    let watch = |agent: &ureq::Agent| {
        agent
            .get(&format!(
                "{}{CONFIGMAPS}?watch=true&timeoutSeconds=30",
                kapi.url()
            ))
            .header("Authorization", "Bearer tok-worker")
            .call()
            .expect("a response")
    };
    let first = watch(&agent);
    let second = watch(&agent);
    assert_eq!(
        (first.status().as_u16(), second.status().as_u16()),
        (200, 200)
    );
    let third = watch(&agent);
    assert_eq!(third.status().as_u16(), 429);
    assert_eq!(
        third
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    // The admin is exempt, and a closed watch frees its slot.
    assert_eq!(
        kapi.agent()
            .get(&format!(
                "{}{CONFIGMAPS}?watch=true&timeoutSeconds=1",
                kapi.url()
            ))
            .call()
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let again = watch(&agent);
        if again.status().as_u16() == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the closed watch's slot was not freed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
