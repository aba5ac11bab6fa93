//! The audit log end to end: `--audit-log-path` with an `--audit-policy-file` choosing
//! a level per rule; what each level records, Secret contents kept out below
//! RequestResponse, authorization decisions and impersonation recorded, health checks
//! left out by a `None` rule; and the Metadata default without a policy.

use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["configmaps"]
  - level: Request
    resources:
      - group: ""
        resources: ["secrets"]
  - level: Metadata
"#;

/// The log's events, once `done` holds for them (bounded).
fn events(path: &std::path::Path, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let events: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is one JSON event"))
            .collect();
        if done(&events) {
            return events;
        }
        assert!(
            Instant::now() < deadline,
            "the audit log never had it:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn find<'a>(events: &'a [Value], verb: &str, uri_part: &str) -> Option<&'a Value> {
    events.iter().find(|e| {
        e["verb"] == verb
            && e["stage"] == "ResponseComplete"
            && e["requestURI"]
                .as_str()
                .unwrap_or_default()
                .contains(uri_part)
    })
}

#[test]
fn the_policy_chooses_what_is_recorded() {
    let files = tempfile::tempdir().unwrap();
    let policy = files.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = files.path().join("audit.log");
    let tokens = files.path().join("tokens.csv");
    std::fs::write(&tokens, "tok-bob,bob,uid-bob\n").unwrap();
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &[
            "--audit-log-path",
            log.to_str().unwrap(),
            "--audit-policy-file",
            policy.to_str().unwrap(),
            "--token-auth-file",
            tokens.to_str().unwrap(),
        ],
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "audited"}, "data": {"k": "v"}});
    assert_eq!(
        kapi.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            JSON,
            Some(&cm)
        )
        .0,
        201
    );
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
                        "stringData": {"password": "hunter2-very-secret"}});
    assert_eq!(
        kapi.request(
            "POST",
            "/api/v1/namespaces/default/secrets",
            JSON,
            Some(&secret)
        )
        .0,
        201
    );
    assert_eq!(
        kapi.request(
            "GET",
            "/api/v1/namespaces/default/secrets/creds",
            JSON,
            None
        )
        .0,
        200
    );
    assert_eq!(kapi.request("GET", "/healthz", JSON, None).0, 200);
    assert_eq!(kapi.request("GET", "/api/v1/namespaces", JSON, None).0, 200);
    let bob = kapi.exchange_as(
        &kapi.agent_without_certificate(),
        Some("tok-bob"),
        "GET",
        "/api/v1/namespaces/default/pods",
        JSON,
        None,
        None,
    );
    assert_eq!(bob.code, 403);
    // Impersonated by the admin; `someone` may not read it (403), which is recorded too.
    let out = kapi.kubectl_version(
        None,
        &["get", "configmap", "audited", "--as", "someone"],
        None,
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("forbidden"),
        "{out:?}"
    );

    let events = events(&log, |e| {
        find(e, "list", "/pods").is_some() && find(e, "get", "/configmaps/audited").is_some()
    });
    for e in &events {
        assert_eq!(e["kind"], "Event");
        assert_eq!(e["apiVersion"], "audit.k8s.io/v1");
        assert!(
            e["auditID"].as_str().is_some_and(|id| id.len() == 36),
            "{e}"
        );
        assert_ne!(e["stage"], "RequestReceived", "omitted by the policy: {e}");
        assert!(
            !e["requestURI"].as_str().unwrap().starts_with("/healthz"),
            "level None: {e}"
        );
        assert!(
            e["stageTimestamp"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z')),
            "{e}"
        );
    }
    // RequestResponse: both bodies.
    let created = find(&events, "create", "/configmaps").expect("the ConfigMap's create");
    assert_eq!(created["level"], "RequestResponse");
    assert_eq!(created["objectRef"]["resource"], "configmaps");
    assert_eq!(created["objectRef"]["namespace"], "default");
    assert_eq!(created["requestObject"]["data"]["k"], "v");
    assert_eq!(created["responseObject"]["metadata"]["name"], "audited");
    assert_eq!(created["responseStatus"]["code"], 201);
    assert_eq!(created["user"]["username"], "kapi-admin");
    assert_eq!(
        created["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    // Request level for Secrets: the request, but not its contents; no response.
    let secret_create = find(&events, "create", "/secrets").expect("the Secret's create");
    assert_eq!(secret_create["level"], "Request");
    assert!(
        secret_create.get("responseObject").is_none(),
        "{secret_create}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("hunter2-very-secret"),
        "Secret contents in the log"
    );
    assert!(
        !text.contains(&base64_of("hunter2-very-secret")),
        "Secret data in the log"
    );
    // Metadata for the rest: no bodies.
    let listed = find(&events, "list", "/api/v1/namespaces").expect("the namespaces list");
    assert_eq!(listed["level"], "Metadata");
    assert!(listed.get("requestObject").is_none() && listed.get("responseObject").is_none());
    // A refused request, with the decision.
    let refused = find(&events, "list", "/pods").unwrap();
    assert_eq!(refused["user"]["username"], "bob");
    assert_eq!(refused["responseStatus"]["code"], 403);
    assert_eq!(
        refused["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    // Impersonation: the real user and the one acted as.
    let impersonated = events
        .iter()
        .find(|e| e["impersonatedUser"]["username"] == "someone")
        .expect("kubectl --as recorded");
    assert_eq!(impersonated["user"]["username"], "kapi-admin");
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[test]
fn without_a_policy_everything_is_logged_at_metadata() {
    let files = tempfile::tempdir().unwrap();
    let log = files.path().join("audit.log");
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--audit-log-path", log.to_str().unwrap()],
    );
    assert_eq!(
        kapi.request("GET", "/api/v1/namespaces/default", JSON, None)
            .0,
        200
    );
    let events = events(&log, |e| find(e, "get", "/namespaces/default").is_some());
    let got = find(&events, "get", "/namespaces/default").unwrap();
    assert_eq!(got["level"], "Metadata");
    assert_eq!(got["objectRef"]["name"], "default");
    assert!(got.get("responseObject").is_none());
}
