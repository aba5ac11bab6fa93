//! API priority and fairness end to end: every answer names its FlowSchema and priority
//! level in kube's `X-Kubernetes-PF-*` headers (kube's bootstrap `exempt` for
//! `system:masters`, `global-default` for an ordinary user); a FlowSchema written at run
//! time takes effect; a flood from one user into a level that rejects its excess gets
//! 429 with `Retry-After`, while another user's requests, in their own level, are all
//! served and nothing answers 5xx; `/metrics` counts both as kube's
//! `apiserver_flowcontrol_*` series.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, Exchange, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const FLOW: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";

fn uid(kapi: &Kapi, path: &str) -> String {
    let (code, obj) = kapi.request("GET", path, JSON, None);
    assert_eq!(code, 200, "{obj}");
    obj["metadata"]["uid"].as_str().expect("a uid").to_string()
}

fn create(kapi: &Kapi, path: &str, body: Value) {
    let (code, out) = kapi.request("POST", path, JSON, Some(&body));
    assert_eq!(code, 201, "POST {path}: {out}");
}

fn get_as(kapi: &Kapi, agent: &ureq::Agent, token: &str) -> Exchange {
    kapi.exchange_as(agent, Some(token), "GET", CONFIGMAPS, JSON, None, None)
}

/// A server with the users `flooder` and `victim`, both able to edit, and 6 seats
/// (divided among priority levels, or two plain in-flight limits with `fairness` off).
fn server(files: &tempfile::TempDir, fairness: bool) -> Kapi {
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "tok-flooder,flooder,uid-f\ntok-victim,victim,uid-v\n",
    )
    .unwrap();
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &[
            "--token-auth-file",
            tokens.to_str().unwrap(),
            "--max-requests-inflight",
            "4",
            "--max-mutating-requests-inflight",
            "2",
            &format!("--enable-priority-and-fairness={fairness}"),
        ],
    );
    create(
        &kapi,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "users-edit"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "flooder"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "victim"}]}),
    );
    kapi
}

/// `get` until `done` holds for its answer (bounded); returns that answer.
fn until(get: impl Fn() -> Exchange, done: impl Fn(&Exchange) -> bool, what: &str) -> Exchange {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let res = get();
        if done(&res) {
            return res;
        }
        assert!(Instant::now() < deadline, "{what}: last {res:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn flows_are_named_and_a_flood_does_not_reach_another_level() {
    let files = tempfile::tempdir().unwrap();
    let kapi = Arc::new(server(&files, true));
    let agent = kapi.agent_without_certificate();

    // The bootstrap objects classify: the admin is exempt, a user is global-default.
    let (exempt_fs, exempt_pl) = (
        uid(&kapi, &format!("{FLOW}/flowschemas/exempt")),
        uid(&kapi, &format!("{FLOW}/prioritylevelconfigurations/exempt")),
    );
    let admin = kapi.exchange("GET", CONFIGMAPS, JSON, None, None);
    assert_eq!(admin.flow, (Some(exempt_fs), Some(exempt_pl)), "{admin:?}");
    let global = (
        uid(&kapi, &format!("{FLOW}/flowschemas/global-default")),
        uid(
            &kapi,
            &format!("{FLOW}/prioritylevelconfigurations/global-default"),
        ),
    );
    let victim = until(
        || get_as(&kapi, &agent, "tok-victim"),
        |r| r.code == 200,
        "the victim's binding",
    );
    assert_eq!(
        victim.flow,
        (Some(global.0.clone()), Some(global.1.clone()))
    );

    // A level of one seat that refuses its excess, and the flooder's schema into it.
    create(
        &kapi,
        &format!("{FLOW}/prioritylevelconfigurations"),
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": "narrow"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "limitResponse": {"type": "Reject"}}}}),
    );
    create(
        &kapi,
        &format!("{FLOW}/flowschemas"),
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "flooder"},
            "spec": {"priorityLevelConfiguration": {"name": "narrow"}, "matchingPrecedence": 500,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                        "namespaces": ["*"], "clusterScope": true}]}]}}),
    );
    let flooder_fs = uid(&kapi, &format!("{FLOW}/flowschemas/flooder"));
    until(
        || get_as(&kapi, &agent, "tok-flooder"),
        |r| r.flow.0.as_deref() == Some(flooder_fs.as_str()),
        "the flooder's schema taking effect",
    );
    // Lists of a few hundred objects keep each read busy for a while.
    for i in 0..300 {
        create(
            &kapi,
            CONFIGMAPS,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")},
                "data": {"k": "v"}}),
        );
    }

    let stop = Arc::new(AtomicBool::new(false));
    let flood_codes = Arc::new(Mutex::new(BTreeMap::<u16, usize>::new()));
    let mut flooders = Vec::new();
    for _ in 0..12 {
        let (kapi, stop, codes) = (kapi.clone(), stop.clone(), flood_codes.clone());
        flooders.push(std::thread::spawn(move || {
            let agent = kapi.agent_without_certificate();
            let mut missing_retry_after = 0;
            while !stop.load(Ordering::Relaxed) {
                let res = get_as(&kapi, &agent, "tok-flooder");
                if res.code == 429 && res.retry_after.as_deref() != Some("1") {
                    missing_retry_after += 1;
                }
                *codes.lock().unwrap().entry(res.code).or_default() += 1;
            }
            missing_retry_after
        }));
    }
    // The victim, meanwhile, one request at a time.
    let mut victim_codes = BTreeMap::<u16, usize>::new();
    for _ in 0..40 {
        let res = get_as(&kapi, &agent, "tok-victim");
        assert_eq!(res.flow.1.as_deref(), Some(global.1.as_str()));
        *victim_codes.entry(res.code).or_default() += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let missing: usize = flooders.into_iter().map(|t| t.join().unwrap()).sum();
    let flood_codes = flood_codes.lock().unwrap().clone();
    assert_eq!(
        victim_codes,
        BTreeMap::from([(200, 40)]),
        "flood: {flood_codes:?}"
    );
    assert!(
        flood_codes.get(&429).copied().unwrap_or(0) > 0,
        "the flood's excess got 429: {flood_codes:?}"
    );
    assert!(
        flood_codes.keys().all(|c| matches!(c, 200 | 429)),
        "only successes and 429: {flood_codes:?}"
    );
    assert_eq!(missing, 0, "every 429 says Retry-After: 1");

    // /metrics counts them as kube's apiserver_flowcontrol_* series.
    let metrics = kapi
        .exchange("GET", "/metrics", "text/plain", None, None)
        .body;
    let value = |series: &str| -> u64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(series))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {series} in\n{metrics}"))
    };
    let rejected = value(
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"flooder\",\
         priority_level=\"narrow\",reason=\"concurrency-limit\"}",
    );
    assert_eq!(rejected as usize, flood_codes[&429], "{metrics}");
    let dispatched = value(
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"global-default\",\
         priority_level=\"global-default\"}",
    );
    assert!(dispatched >= 40, "{metrics}");
    assert_eq!(
        value("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"narrow\"}"),
        1
    );
}

/// Requests per second one sequential client has answered 200 over `for_secs`, sending
/// as fast as it can or, with `qps`, paced as client-go's rate limiter paces a
/// controller (no burst); no answer may be a 5xx.
fn throughput(kapi: &Kapi, token: &str, for_secs: f64, qps: Option<f64>) -> f64 {
    let agent = kapi.agent_without_certificate();
    let start = Instant::now();
    let mut served = 0u32;
    let mut sent = 0u32;
    while start.elapsed().as_secs_f64() < for_secs {
        if let Some(qps) = qps {
            let due = start + Duration::from_secs_f64(f64::from(sent) / qps);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        let res = get_as(kapi, &agent, token);
        assert!(res.code < 500, "{res:?}");
        sent += 1;
        served += u32::from(res.code == 200);
    }
    f64::from(served) / start.elapsed().as_secs_f64()
}

/// The figures in RELIABILITY.md ("Priority and fairness"), with
/// `KAPI_FAIRNESS_FIGURES=1` (and `KAPI_BIN` for a release server): the victim's
/// throughput alone and beside a flood of 12 clients, with the flooder in a level of
/// its own or in the victim's (or priority and fairness off), its clients retrying at
/// once or after `Retry-After` as client-go does; the victim sends as fast as it can,
/// then paced at 50/s. A measure, not a check: it asserts only that nothing is a 5xx.
#[test]
fn fairness_figures() {
    if std::env::var_os("KAPI_FAIRNESS_FIGURES").is_none() {
        eprintln!("set KAPI_FAIRNESS_FIGURES=1 for the figures");
        return;
    }
    for (setup, own_level, patient, fairness) in [
        ("own level", true, false, true),
        ("same level", false, false, true),
        ("own level, Retry-After honoured", true, true, true),
        ("priority and fairness off", false, false, false),
    ] {
        let files = tempfile::tempdir().unwrap();
        let kapi = Arc::new(server(&files, fairness));
        let agent = kapi.agent_without_certificate();
        until(
            || get_as(&kapi, &agent, "tok-victim"),
            |r| r.code == 200,
            "binding",
        );
        if own_level {
            create(
                &kapi,
                &format!("{FLOW}/prioritylevelconfigurations"),
                json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
                    "kind": "PriorityLevelConfiguration", "metadata": {"name": "narrow"},
                    "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                        "limitResponse": {"type": "Reject"}}}}),
            );
            create(
                &kapi,
                &format!("{FLOW}/flowschemas"),
                json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                    "metadata": {"name": "flooder"},
                    "spec": {"priorityLevelConfiguration": {"name": "narrow"},
                        "matchingPrecedence": 500,
                        "rules": [{"subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                "resources": ["*"], "namespaces": ["*"], "clusterScope": true}]}]}}),
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        for i in 0..300 {
            create(
                &kapi,
                CONFIGMAPS,
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}}),
            );
        }
        for qps in [None, Some(50.0)] {
            let alone = throughput(&kapi, "tok-victim", 5.0, qps);
            let stop = Arc::new(AtomicBool::new(false));
            let flooders: Vec<_> = (0..12)
                .map(|_| {
                    let (kapi, stop) = (kapi.clone(), stop.clone());
                    std::thread::spawn(move || {
                        let agent = kapi.agent_without_certificate();
                        while !stop.load(Ordering::Relaxed) {
                            let res = get_as(&kapi, &agent, "tok-flooder");
                            if patient && res.code == 429 {
                                std::thread::sleep(Duration::from_secs(1));
                            }
                        }
                    })
                })
                .collect();
            std::thread::sleep(Duration::from_millis(500));
            let flooded = throughput(&kapi, "tok-victim", 5.0, qps);
            stop.store(true, Ordering::Relaxed);
            flooders.into_iter().for_each(|t| t.join().unwrap());
            let pace = qps.map_or("as fast as it can".to_string(), |q| format!("at {q}/s"));
            println!(
                "fairness {setup}, victim {pace}: alone {alone:.0}/s, beside the flood \
                 {flooded:.0}/s ({:.2})",
                flooded / alone
            );
        }
    }
}
