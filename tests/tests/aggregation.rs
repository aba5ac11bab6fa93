//! The aggregation layer end to end, with no foreign binary: kapi A aggregates kapi B,
//! which serves a group A does not (`wardle.example.com`, from a CRD on B). B trusts
//! A's front-proxy CA. Through A, kubectl (every release) creates, lists, watches,
//! patches, explains and deletes B's resources; B sees the user A authenticated and no
//! one else; when B stops, A marks the APIService unavailable with kube's reason, B's
//! group answers 503 and the rest keeps working, until B is back. Run with A and B on
//! each backend in turn.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use kapi_tests::{Backend, Kapi, LineReader, condition, https_agent, kubectl_versions};
use serde_json::{Value, json};

#[path = "support/https.rs"]
mod https;
use https::{HttpsServer, Received};

const APISERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";
const WARDLE: &str = "v1alpha1.wardle.example.com";
const FLUNDERS: &str = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders";

fn flunder_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "flunders.wardle.example.com"},
        "spec": {
            "group": "wardle.example.com",
            "scope": "Namespaced",
            "names": {"plural": "flunders", "singular": "flunder", "kind": "Flunder",
                      "shortNames": ["fl"]},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "additionalPrinterColumns": [
                    {"name": "Reference", "type": "string", "jsonPath": ".spec.reference"}
                ],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object",
                             "description": "What a flunder refers to.",
                             "properties": {
                        "reference": {"type": "string",
                                      "description": "The name of another flunder."}
                    }}
                }}}
            }]
        }
    })
}

fn port_of(kapi: &Kapi) -> u16 {
    kapi.url()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("the server's URL has a port")
}

/// The Service and Endpoints in A that reach B on 127.0.0.1.
fn point_at(a: &Kapi, b_port: u16) {
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kapi-b", "namespace": "default"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": b_port}]}});
    let (code, body) = a.request(
        "POST",
        "/api/v1/namespaces/default/services",
        "application/json",
        Some(&service),
    );
    assert!(code == 201 || code == 409, "{body}");
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kapi-b", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                     "ports": [{"name": "https", "port": b_port}]}]});
    let path = "/api/v1/namespaces/default/endpoints/kapi-b";
    let (code, _) = a.request("GET", path, "application/json", None);
    let (code, body) = if code == 404 {
        a.request(
            "POST",
            "/api/v1/namespaces/default/endpoints",
            "application/json",
            Some(&endpoints),
        )
    } else {
        a.request("PUT", path, "application/json", Some(&endpoints))
    };
    assert!(code == 200 || code == 201, "{body}");
}

fn api_service(ca_pem: &str) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": WARDLE},
        "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                 "groupPriorityMinimum": 1000, "versionPriority": 15,
                 "service": {"namespace": "default", "name": "kapi-b", "port": 443},
                 "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem)}})
}

/// Waits until A's APIService `name` has `Available` = `status`; returns it.
fn wait_available(a: &Kapi, name: &str, status: &str) -> Value {
    a.poll(
        &format!("{APISERVICES}/{name}"),
        Duration::from_secs(30),
        &format!("{name} Available={status}"),
        |code, body| {
            code == 200 && condition(body, "Available").is_some_and(|c| c["status"] == status)
        },
    )
    .1
}

/// B, trusting A's front-proxy CA and named as the Service A reaches it by.
fn start_b(a: &Kapi, backend: Backend) -> Kapi {
    let ca = a.data_dir().join("pki/front-proxy-ca.crt");
    let ca = ca.to_str().expect("a UTF-8 path").to_string();
    let audit = a.data_dir().join("b-audit.log");
    let b = Kapi::start_with(
        backend,
        &[
            "--requestheader-client-ca-file",
            &ca,
            "--requestheader-allowed-names",
            "front-proxy-client",
            "--tls-san",
            "kapi-b.default.svc",
            "--audit-log-path",
            audit.to_str().expect("a UTF-8 path"),
        ],
    );
    b.establish(&flunder_crd());
    b
}

/// The audit events B logged (into A's data directory) for requests whose URI
/// contains `needle`.
fn audited(a: &Kapi, needle: &str) -> Vec<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = std::fs::read_to_string(a.data_dir().join("b-audit.log")).unwrap_or_default();
        let events: Vec<Value> = log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| {
                e["requestURI"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(needle)
            })
            .filter(|e| e["stage"] == "ResponseComplete")
            .collect();
        if !events.is_empty() || std::time::Instant::now() > deadline {
            return events;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn kapi_aggregates_kapi_on_both_backends() {
    for ((a_name, a_backend), (b_name, b_backend)) in Backend::all()
        .into_iter()
        .zip(Backend::all().into_iter().rev())
    {
        let a = Kapi::start(a_backend());
        let mut b = start_b(&a, b_backend());
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scenario(&a, &mut b, a_name == "embedded");
        }));
        if let Err(e) = run {
            eprintln!(
                "A on {a_name}, B on {b_name} failed; A's log:\n{}\nB's log:\n{}",
                a.log_text(),
                b.log_text()
            );
            std::panic::resume_unwind(e);
        }
    }
}

fn scenario(a: &Kapi, b: &mut Kapi, every_kubectl: bool) {
    local_api_services(a);
    point_at(a, port_of(b));
    let b_ca = b.credentials().expect("B serves HTTPS").ca.clone();
    let (code, body) = a.request(
        "POST",
        APISERVICES,
        "application/json",
        Some(&api_service(&b_ca)),
    );
    assert_eq!(code, 201, "{body}");
    let available = wait_available(a, WARDLE, "True");
    let cond = condition(&available, "Available").unwrap();
    assert_eq!(
        (&cond["reason"], &cond["message"]),
        (&json!("Passed"), &json!("all checks passed"))
    );

    discovery_through_a(a);
    kubectl_through_a(a, every_kubectl);
    users_b_sees(a, b);
    b_down_and_back(a, b);
}

/// Every group-version A serves itself has a local APIService, available.
fn local_api_services(a: &Kapi) {
    let apps = wait_available(a, "v1.apps", "True");
    assert!(
        apps["spec"].get("service").is_none_or(Value::is_null),
        "{apps}"
    );
    assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800, "{apps}");
    let cond = condition(&apps, "Available").unwrap();
    assert_eq!(
        (&cond["reason"], &cond["message"]),
        (
            &json!("Local"),
            &json!("Local APIServices are always available")
        )
    );
    assert_eq!(
        apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    wait_available(a, "v1.", "True");
    // kubectl's table: NAME SERVICE AVAILABLE AGE.
    let table = a.kubectl(&["get", "apiservices", "v1.apps"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "SERVICE", "AVAILABLE", "AGE"], "{table}");
    assert!(table.contains("Local"), "{table}");
}

fn discovery_through_a(a: &Kapi) {
    let (code, groups) = a.request("GET", "/apis", "application/json", None);
    assert_eq!(code, 200);
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"wardle.example.com"), "{names:?}");
    // kube-aggregator's order: by group priority, so apps (17800) before batch (17400),
    // and the custom group (1000) after every built-in.
    let at = |g: &str| names.iter().position(|n| *n == g).unwrap();
    assert!(
        at("apps") < at("batch") && at("batch") < at("wardle.example.com"),
        "{names:?}"
    );
    let (code, group) = a.request("GET", "/apis/wardle.example.com", "application/json", None);
    assert_eq!(code, 200, "{group}");
    assert_eq!(
        group["preferredVersion"]["groupVersion"],
        "wardle.example.com/v1alpha1"
    );
    let aggregated = a.exchange(
        "GET",
        "/apis",
        "",
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        None,
    );
    let list: Value = serde_json::from_str(&aggregated.body).unwrap();
    let wardle = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "wardle.example.com")
        .unwrap_or_else(|| panic!("no wardle group: {list}"));
    assert_eq!(
        wardle["versions"][0]["resources"][0]["resource"], "flunders",
        "{wardle}"
    );
    // B's own discovery, proxied.
    let (code, resources) = a.request(
        "GET",
        "/apis/wardle.example.com/v1alpha1",
        "application/json",
        None,
    );
    assert_eq!(code, 200, "{resources}");
    assert_eq!(resources["resources"][0]["name"], "flunders");
    // OpenAPI v3 lists B's group-version with B's hash.
    let (_, index) = a.request("GET", "/openapi/v3", "application/json", None);
    let url = index["paths"]["apis/wardle.example.com/v1alpha1"]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("no wardle in the OpenAPI v3 index: {index}"))
        .to_string();
    let (code, doc) = a.request("GET", &url, "application/json", None);
    assert_eq!(code, 200);
    assert!(
        doc["paths"]
            .get(FLUNDERS.replace("default", "{namespace}"))
            .is_some()
    );
}

fn kubectl_through_a(a: &Kapi, every_kubectl: bool) {
    let manifest = "apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: f1\nspec:\n  reference: nothing\n";
    a.kubectl_ok(None, &["create", "-f", "-"], Some(manifest));
    let table = a.kubectl(&["get", "fl"]);
    assert!(
        table.starts_with("NAME") && table.contains("REFERENCE"),
        "{table}"
    );
    assert!(table.contains("f1") && table.contains("nothing"), "{table}");
    a.kubectl(&[
        "patch",
        "flunder",
        "f1",
        "--type=merge",
        "-p",
        r#"{"spec":{"reference":"f0"}}"#,
    ]);
    let got: Value =
        serde_json::from_str(&a.kubectl(&["get", "flunder", "f1", "-o", "json"])).unwrap();
    assert_eq!(got["spec"]["reference"], "f0");
    let mut watch =
        LineReader::new(a.kubectl_spawn(&["get", "flunders", "--watch", "--output-watch-events"]));
    watch.wait_for(Duration::from_secs(30), |l| {
        l.contains("ADDED") && l.contains("f1")
    });
    a.kubectl_ok(
        None,
        &["create", "-f", "-"],
        Some(&manifest.replace("f1", "f2")),
    );
    watch.wait_for(Duration::from_secs(30), |l| {
        l.contains("ADDED") && l.contains("f2")
    });
    a.kubectl(&["delete", "flunder", "f2"]);
    watch.wait_for(Duration::from_secs(30), |l| {
        l.contains("DELETED") && l.contains("f2")
    });
    drop(watch);
    let versions = if every_kubectl {
        kubectl_versions()
    } else {
        vec![kubectl_versions().pop().expect("a kubectl")]
    };
    for v in &versions {
        let own = manifest.replace("f1", &format!("f-{}", v.replace('.', "-")));
        a.kubectl_ok(Some(v), &["create", "-f", "-"], Some(&own));
        a.kubectl_ok(Some(v), &["delete", "-f", "-"], Some(&own));
        let resources = a.kubectl_ok(
            Some(v),
            &["api-resources", "--api-group=wardle.example.com"],
            None,
        );
        assert!(
            resources.contains("flunders") && resources.contains("fl "),
            "kubectl {v}: {resources}"
        );
        let explained = a.kubectl_ok(Some(v), &["explain", "flunders.spec.reference"], None);
        assert!(
            explained.contains("The name of another flunder."),
            "kubectl {v}: {explained}"
        );
        let table = a.kubectl_ok(Some(v), &["get", "flunders"], None);
        assert!(
            table.contains("f1") && table.contains("f0"),
            "kubectl {v}: {table}"
        );
        let listed = a.kubectl_ok(Some(v), &["get", "apiservices", WARDLE], None);
        assert!(
            listed.contains("default/kapi-b") && listed.contains("True"),
            "kubectl {v}: {listed}"
        );
    }
}

/// B sees the user A authenticated, never one a client names in headers, and takes
/// front-proxy headers only from A's proxy certificate.
fn users_b_sees(a: &Kapi, b: &Kapi) {
    let agent = a.agent();
    let res = agent
        .get(format!("{}{FLUNDERS}/f1?audit=plain", a.url()))
        .header("X-Remote-User", "mallory")
        .header("X-Remote-Group", "system:masters")
        .call()
        .unwrap();
    assert_eq!(res.status(), 200);
    // jane may read flunders in A, which lets her request through to B, whose own
    // RBAC then decides.
    a.kubectl(&[
        "create",
        "clusterrole",
        "wardle-reader",
        "--verb=get",
        "--resource=flunders.wardle.example.com",
    ]);
    a.kubectl(&[
        "create",
        "clusterrolebinding",
        "wardle-readers",
        "--clusterrole=wardle-reader",
        "--group=wardle-readers",
    ]);
    let res = agent
        .get(format!("{}{FLUNDERS}/f1?audit=impersonated", a.url()))
        .header("Impersonate-User", "jane")
        .header("Impersonate-Group", "wardle-readers")
        .call()
        .unwrap();
    // jane has no rights on B: B's RBAC decides for the user A passed on.
    let code = res.status();
    let text = res.into_body().read_to_string().unwrap_or_default();
    assert_eq!(code, 403, "{text}");
    assert!(
        text.contains(r#"User \"jane\" cannot get resource \"flunders\""#),
        "{text}"
    );
    let plain = audited(a, "audit=plain");
    let user = &plain
        .first()
        .unwrap_or_else(|| panic!("B logged no request"))["user"];
    assert_eq!(user["username"], "kapi-admin", "{user}");
    assert!(
        user["groups"]
            .as_array()
            .unwrap()
            .contains(&json!("system:masters")),
        "{user}"
    );
    let impersonated = audited(a, "audit=impersonated");
    let event = impersonated
        .first()
        .expect("B logged the impersonated request");
    assert_eq!(event["user"]["username"], "jane", "{event}");
    assert_eq!(
        event["user"]["groups"],
        json!(["wardle-readers", "system:authenticated"]),
        "{event}"
    );
    assert!(event.get("impersonatedUser").is_none(), "{event}");

    // Directly to B: headers without A's proxy certificate are nobody's.
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let reviews = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let body = serde_json::to_vec(&review).unwrap();
    let as_user = |agent: &ureq::Agent| {
        let res = agent
            .post(format!("{}{reviews}", b.url()))
            .header("X-Remote-User", "mallory")
            .header("Content-Type", "application/json")
            .send(&body[..])
            .unwrap();
        let code = res.status().as_u16();
        let text = res.into_body().read_to_string().unwrap_or_default();
        (
            code,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
        )
    };
    let (code, _) = as_user(&b.agent_without_certificate());
    assert_eq!(code, 401);
    // A's admin certificate is from A's CA, which B does not trust.
    let a_creds = a.credentials().unwrap();
    let b_ca = &b.credentials().unwrap().ca;
    let (code, _) = as_user(&https_agent(
        Some(b_ca),
        Some((&a_creds.client_cert, &a_creds.client_key)),
    ));
    assert_eq!(code, 401);
    // B's own admin certificate is B's admin, whatever the headers say.
    let (code, reviewed) = as_user(&b.agent());
    assert_eq!(
        (code, &reviewed["status"]["userInfo"]["username"]),
        (201, &json!("kapi-admin"))
    );
    // A's proxy certificate makes the headers the user.
    let pki = a.data_dir().join("pki");
    let read = |f: &str| std::fs::read_to_string(pki.join(f)).unwrap();
    let proxy = https_agent(
        Some(b_ca),
        Some((
            &read("front-proxy-client.crt"),
            &read("front-proxy-client.key"),
        )),
    );
    let (code, reviewed) = as_user(&proxy);
    assert_eq!(code, 201, "{reviewed}");
    assert_eq!(reviewed["status"]["userInfo"]["username"], "mallory");
}

/// B stops: A's APIService turns unavailable, B's group answers 503, the rest works;
/// B comes back on another port, the Endpoints follow, and so does A.
fn b_down_and_back(a: &Kapi, b: &mut Kapi) {
    b.kill();
    let (code, body) = a.request("GET", FLUNDERS, "application/json", None);
    assert_eq!(code, 503, "{body}");
    let down = wait_available(a, WARDLE, "False");
    let cond = condition(&down, "Available").unwrap();
    assert_eq!(cond["reason"], "FailedDiscoveryCheck", "{cond}");
    let message = cond["message"].as_str().unwrap();
    assert!(
        message.starts_with("failing or missing response from https://127.0.0.1:")
            && message.contains("connection refused"),
        "{message}"
    );
    let (code, body) = a.request("GET", FLUNDERS, "application/json", None);
    assert_eq!((code, body), (503, json!("service unavailable\n")));
    let (code, _) = a.request(
        "GET",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        None,
    );
    assert_eq!(code, 200);
    assert!(a.kubectl(&["get", "ns"]).contains("default"));

    // The Endpoints gone: kube's reason says so.
    let (code, _) = a.request(
        "DELETE",
        "/api/v1/namespaces/default/endpoints/kapi-b",
        "application/json",
        None,
    );
    assert_eq!(code, 200);
    let gone = a.poll(
        &format!("{APISERVICES}/{WARDLE}"),
        Duration::from_secs(30),
        "EndpointsNotFound",
        |_, body| condition(body, "Available").is_some_and(|c| c["reason"] == "EndpointsNotFound"),
    );
    assert_eq!(
        condition(&gone.1, "Available").unwrap()["message"],
        "cannot find endpoints for service/kapi-b in \"default\""
    );

    // Endpoints without the Service's port name: kube's MissingEndpoints.
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kapi-b", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "other", "port": 1}]}]});
    let (code, body) = a.request(
        "POST",
        "/api/v1/namespaces/default/endpoints",
        "application/json",
        Some(&endpoints),
    );
    assert_eq!(code, 201, "{body}");
    let missing = a.poll(
        &format!("{APISERVICES}/{WARDLE}"),
        Duration::from_secs(30),
        "MissingEndpoints",
        |_, body| condition(body, "Available").is_some_and(|c| c["reason"] == "MissingEndpoints"),
    );
    assert_eq!(
        condition(&missing.1, "Available").unwrap()["message"],
        "endpoints for service/kapi-b in \"default\" have no addresses with port name \"https\""
    );

    b.restart(&[
        "--requestheader-client-ca-file",
        a.data_dir()
            .join("pki/front-proxy-ca.crt")
            .to_str()
            .unwrap(),
        "--requestheader-allowed-names",
        "front-proxy-client",
        "--tls-san",
        "kapi-b.default.svc",
    ]);
    point_at(a, port_of(b));
    wait_available(a, WARDLE, "True");
    let (code, body) = a.request("GET", &format!("{FLUNDERS}/f1"), "application/json", None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["spec"]["reference"], "f0");
}

#[test]
fn api_service_validation_and_conflicts() {
    let a = Kapi::start(Backend::Embedded);
    let missing = json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.nowhere.example.com"},
        "spec": {"group": "nowhere.example.com", "version": "v1",
                 "groupPriorityMinimum": 100, "versionPriority": 10,
                 "service": {"namespace": "default", "name": "nowhere"}}});
    let yaml = serde_json::to_string(&missing).unwrap();
    a.kubectl_ok(None, &["create", "-f", "-"], Some(&yaml));
    let again = a.kubectl_err(&["create", "-f", "-"], Some(&yaml));
    assert!(
        again.contains(
            r#"apiservices.apiregistration.k8s.io "v1.nowhere.example.com" already exists"#
        ),
        "{again}"
    );
    let unavailable = wait_available(&a, "v1.nowhere.example.com", "False");
    let cond = condition(&unavailable, "Available").unwrap();
    assert_eq!(
        (&cond["reason"], &cond["message"]),
        (
            &json!("ServiceNotFound"),
            &json!("service/nowhere in \"default\" is not present")
        )
    );
    // Its group answers 503, not 404: it is registered but unreachable.
    let (code, _) = a.request(
        "GET",
        "/apis/nowhere.example.com/v1/things",
        "application/json",
        None,
    );
    assert_eq!(code, 503);

    let mut bad = missing.clone();
    bad["metadata"]["name"] = json!("v2.nowhere.example.com");
    bad["spec"]["caBundle"] = json!("Zm9v");
    bad["spec"]["insecureSkipTLSVerify"] = json!(true);
    let (code, status) = a.request("POST", APISERVICES, "application/json", Some(&bad));
    assert_eq!(code, 422, "{status}");
    let message = status["message"].as_str().unwrap();
    assert!(message.contains("metadata.name: Invalid value: \"v2.nowhere.example.com\": must be `spec.version+\".\"+spec.group`"), "{message}");
    assert!(message.contains("spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"), "{message}");
}

/// A backend that offers no HTTP/2 (the tests' own HTTPS server speaks HTTP/1.1 only)
/// gets its watches on HTTP/1.1 connections like every other request: A shares HTTP/2
/// connections among watches only with a backend that negotiates it.
#[test]
fn watches_reach_a_backend_without_http2() {
    let backend = HttpsServer::start(
        &["kapi-b.default.svc"],
        Arc::new(|r: Received| {
            Box::pin(async move {
                if r.path == "/apis/wardle.example.com/v1alpha1" {
                    json!({"kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": "wardle.example.com/v1alpha1",
                        "resources": [{"name": "flunders", "singularName": "flunder",
                            "namespaced": true, "kind": "Flunder",
                            "verbs": ["get", "list", "watch"]}]})
                } else {
                    json!({"type": "ADDED", "object": {"kind": "Flunder",
                        "apiVersion": "wardle.example.com/v1alpha1",
                        "metadata": {"name": "w", "namespace": "default"},
                        "spec": {"reference": r.query}}})
                }
            })
        }),
    );
    let a = Kapi::start(Backend::Embedded);
    point_at(&a, backend.port);
    let mut registration = api_service("");
    registration["spec"]["caBundle"] = json!(backend.ca_bundle);
    let (code, body) = a.request("POST", APISERVICES, "application/json", Some(&registration));
    assert_eq!(code, 201, "{body}");
    wait_available(&a, WARDLE, "True");
    // The second watch comes after A has found the backend speaks no HTTP/2.
    for _ in 0..2 {
        let (code, event) = a.request(
            "GET",
            &format!("{FLUNDERS}?watch=true"),
            "application/json",
            None,
        );
        assert_eq!(code, 200, "{event}");
        assert_eq!(
            event["object"]["spec"]["reference"], "watch=true",
            "{event}"
        );
    }
    let watches = backend
        .received()
        .into_iter()
        .filter(|r| r.query == "watch=true")
        .count();
    assert_eq!(watches, 2);
}
