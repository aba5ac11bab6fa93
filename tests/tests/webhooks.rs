//! Admission webhooks end to end: a real HTTPS webhook in the test process (rustls with
//! a certificate of the test's own CA, given to kapi as `caBundle`) that allows,
//! denies, patches or answers too late, and records every `AdmissionReview` it gets.
//! Through the API (raw HTTP, and kubectl): a webhook that allows sees the operation,
//! the user, the object and, on update, the old object; a denial is the client's error
//! in kube-apiserver's words; a JSONPatch is stored; a webhook that times out or cannot
//! be reached fails the write with `failurePolicy: Fail` and is skipped with `Ignore`;
//! `namespaceSelector`, `objectSelector`, `matchConditions` and the rules' operations
//! choose which writes a webhook sees; a dry run is refused by a webhook with side effects; a delete can be
//! denied.
//!
//! Configurations reach the server through a watch: each one carries a sentinel
//! webhook, and the test creates probe objects until the sentinel has seen one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/https.rs"]
mod https;
use https::{HttpsServer, Received};

const JSON: &str = "application/json";
const MUTATING: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const VALIDATING: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
/// How long the slow webhook takes; its configurations allow one second.
const SLOW: Duration = Duration::from_secs(5);

/// The HTTPS webhook. The first path segment says what it answers: `allow`, `deny`
/// (403 with a message), `patch` (a JSONPatch adding a label and an annotation),
/// `slow` (allows after [`SLOW`]).
struct WebhookServer(HttpsServer);

impl WebhookServer {
    fn start() -> Self {
        Self(HttpsServer::start(
            &["hooks.default.svc"],
            Arc::new(|r: Received| Box::pin(answer(r))),
        ))
    }

    fn url(&self, path: &str) -> String {
        self.0.url(path)
    }

    fn ca_bundle(&self) -> &str {
        &self.0.ca_bundle
    }

    /// The reviews received on `path` (without the query) about object `name`.
    fn reviews(&self, path: &str, name: &str) -> Vec<Value> {
        self.0
            .received()
            .into_iter()
            .filter(|r| r.path == path)
            .map(|r| r.body)
            .filter(|review| {
                let req = &review["request"];
                req["name"] == name
                    || req["object"]["metadata"]["name"] == name
                    || req["oldObject"]["metadata"]["name"] == name
            })
            .collect()
    }

    /// The last review on `path` about `name`. (A refused update or delete may be
    /// reviewed twice: kapi, as kube-apiserver, decides again on the latest state when
    /// a refusal came from its cache.)
    fn review(&self, path: &str, name: &str) -> Value {
        let all = self.reviews(path, name);
        all.last()
            .unwrap_or_else(|| panic!("no review on {path} about {name}"))
            .clone()
    }

    fn saw_any(&self, path: &str) -> bool {
        self.0.received().iter().any(|r| r.path == path)
    }
}

async fn answer(received: Received) -> Value {
    let Received {
        path,
        query,
        body: review,
        ..
    } = received;
    let has_timeout = query.contains("timeout=");
    let mut response = json!({"uid": review["request"]["uid"], "allowed": true});
    match path.split('/').nth(1).unwrap_or_default() {
        "allow" => {}
        "deny" => {
            response["allowed"] = json!(false);
            response["status"] =
                json!({"code": 403, "reason": "Forbidden", "message": "no writes today"});
        }
        "patch" => {
            let meta = &review["request"]["object"]["metadata"];
            let mut ops = Vec::new();
            for field in ["labels", "annotations"] {
                if meta[field].is_null() {
                    ops.push(
                        json!({"op": "add", "path": format!("/metadata/{field}"), "value": {}}),
                    );
                }
            }
            ops.push(json!({"op": "add", "path": "/metadata/labels/patched", "value": "yes"}));
            ops.push(
                json!({"op": "add", "path": "/metadata/annotations/webhook", "value": "saw it"}),
            );
            response["patchType"] = json!("JSONPatch");
            response["patch"] = json!(
                base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&ops).unwrap())
            );
        }
        "slow" => tokio::time::sleep(SLOW).await,
        _ => {
            response["allowed"] = json!(false);
            response["status"] = json!({"message": format!("unknown path {path}")});
        }
    }
    if !has_timeout {
        response["allowed"] = json!(false);
        response["status"] = json!({"message": "kube-apiserver sends ?timeout="});
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": response})
}

/// A test's server and webhook.
struct Setup {
    kapi: Kapi,
    hooks: WebhookServer,
}

/// Rules for configmaps and the given operations.
fn configmap_rules(operations: &[&str]) -> Value {
    json!([{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"],
        "resources": ["configmaps"]}])
}

impl Setup {
    fn start() -> Self {
        Self {
            hooks: WebhookServer::start(),
            kapi: Kapi::start(Backend::Embedded),
        }
    }

    fn namespace(&self, name: &str, labels: Value) {
        let (code, body) = self.kapi.request(
            "POST",
            "/api/v1/namespaces",
            JSON,
            Some(&json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": labels}})),
        );
        assert_eq!(code, 201, "{body}");
    }

    /// A webhook called at `path`, for configmap creates in namespaces labelled
    /// `case=<case>`, never for probes; `extra` overrides any field.
    fn hook(&self, case: &str, name: &str, path: &str, extra: Value) -> Value {
        let mut h = json!({
            "name": name,
            "clientConfig": {"url": self.hooks.url(path), "caBundle": self.hooks.ca_bundle()},
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "timeoutSeconds": 5,
            "rules": configmap_rules(&["CREATE"]),
            "namespaceSelector": {"matchLabels": {"case": case}},
            "objectSelector": {"matchExpressions": [{"key": "probe", "operator": "DoesNotExist"}]},
        });
        for (k, v) in extra.as_object().unwrap() {
            h[k] = v.clone();
        }
        h
    }

    /// Creates a configuration of `hooks` (at `collection`) behind a sentinel webhook,
    /// and creates probe configmaps in `probe_namespace` until the sentinel has seen
    /// one: then the whole configuration is in effect.
    fn configure(&self, collection: &str, case: &str, probe_namespace: &str, hooks: Vec<Value>) {
        let sentinel_path = format!("/allow/sentinel-{case}");
        let mut webhooks = vec![self.hook(
            case,
            "sentinel.kapi.test",
            &sentinel_path,
            json!({"objectSelector": {"matchLabels": {"probe": "true"}}}),
        )];
        webhooks.extend(hooks);
        let kind = if collection == MUTATING {
            "MutatingWebhookConfiguration"
        } else {
            "ValidatingWebhookConfiguration"
        };
        let (code, body) = self.kapi.request(
            "POST",
            collection,
            JSON,
            Some(
                &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": case}, "webhooks": webhooks}),
            ),
        );
        assert_eq!(code, 201, "{body}");
        let deadline = Instant::now() + Duration::from_secs(20);
        for i in 0.. {
            let (code, body) = self.configmap(
                probe_namespace,
                &format!("probe-{case}-{i}"),
                json!({"probe": "true"}),
            );
            assert_eq!(code, 201, "a probe: {body}");
            if self.hooks.saw_any(&sentinel_path) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "configuration {case} never took effect"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn configmap(&self, ns: &str, name: &str, labels: Value) -> (u16, Value) {
        self.write("POST", ns, None, &configmap(name, labels, "1"), "")
    }

    fn write(
        &self,
        method: &str,
        ns: &str,
        name: Option<&str>,
        body: &Value,
        query: &str,
    ) -> (u16, Value) {
        let path = match name {
            Some(n) => format!("/api/v1/namespaces/{ns}/configmaps/{n}{query}"),
            None => format!("/api/v1/namespaces/{ns}/configmaps{query}"),
        };
        self.kapi.request(method, &path, JSON, Some(body))
    }

    fn get(&self, ns: &str, name: &str) -> Value {
        let (code, body) = self.kapi.request(
            "GET",
            &format!("/api/v1/namespaces/{ns}/configmaps/{name}"),
            JSON,
            None,
        );
        assert_eq!(code, 200, "{body}");
        body
    }

    fn delete(&self, ns: &str, name: &str) -> (u16, Value) {
        self.kapi.request(
            "DELETE",
            &format!("/api/v1/namespaces/{ns}/configmaps/{name}"),
            JSON,
            None,
        )
    }
}

fn configmap(name: &str, labels: Value, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": {"v": value}})
}

/// A ConfigMap for kubectl's stdin.
fn manifest(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  a: b\n"
    )
}

fn assert_status(code: u16, body: &Value, want_code: u16, reason: &str, message: &str) {
    assert_eq!(code, want_code, "{body}");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["code"], want_code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
    assert_eq!(body["message"], message, "{body}");
}

#[test]
fn webhooks_allow_deny_and_patch_and_see_the_request() {
    let s = Setup::start();
    let run = std::panic::AssertUnwindSafe(|| {
        // Allow: the review carries the request.
        s.namespace("case-allow", json!({"case": "allow"}));
        let update_rules = configmap_rules(&["CREATE", "UPDATE"]);
        s.configure(
            VALIDATING,
            "allow",
            "case-allow",
            vec![s.hook(
                "allow",
                "allow.kapi.test",
                "/allow/allow",
                json!({"rules": update_rules}),
            )],
        );
        let (code, body) = s.configmap("case-allow", "a1", json!({}));
        assert_eq!(code, 201, "{body}");
        let review = s.hooks.review("/allow/allow", "a1");
        assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(review["kind"], "AdmissionReview");
        let r = &review["request"];
        assert!(!r["uid"].as_str().unwrap().is_empty(), "{r}");
        assert_eq!(r["operation"], "CREATE");
        assert_eq!(
            r["kind"],
            json!({"group": "", "version": "v1", "kind": "ConfigMap"})
        );
        assert_eq!(
            r["resource"],
            json!({"group": "", "version": "v1", "resource": "configmaps"})
        );
        assert_eq!(r["requestResource"], r["resource"]);
        assert_eq!(r["namespace"], "case-allow");
        assert_eq!(r["name"], "a1");
        assert_eq!(r["userInfo"]["username"], "kapi-admin");
        assert!(
            r["userInfo"]["groups"]
                .as_array()
                .unwrap()
                .contains(&json!("system:masters")),
            "{r}"
        );
        assert_eq!(r["object"]["data"]["v"], "1");
        assert_eq!(r["oldObject"], Value::Null);
        assert_eq!(r["dryRun"], false);
        assert_eq!(r["options"]["kind"], "CreateOptions");

        let mut updated = s.get("case-allow", "a1");
        updated["data"]["v"] = json!("2");
        let (code, body) = s.write("PUT", "case-allow", Some("a1"), &updated, "");
        assert_eq!(code, 200, "{body}");
        let reviews = s.hooks.reviews("/allow/allow", "a1");
        let r = &reviews.last().unwrap()["request"];
        assert_eq!(r["operation"], "UPDATE");
        assert_eq!(r["object"]["data"]["v"], "2");
        assert_eq!(r["oldObject"]["data"]["v"], "1");
        assert_eq!(r["options"]["kind"], "UpdateOptions");

        // A dry run reaches a webhook without side effects, and says so.
        let (code, body) = s.write(
            "POST",
            "case-allow",
            None,
            &configmap("dry", json!({}), "1"),
            "?dryRun=All",
        );
        assert_eq!(code, 201, "{body}");
        let r = &s.hooks.review("/allow/allow", "dry")["request"];
        assert_eq!(r["dryRun"], true);
        assert_eq!(r["options"]["dryRun"], json!(["All"]));

        // Deny: the webhook's code, reason and message, in kube's words.
        s.namespace("case-deny", json!({"case": "deny"}));
        s.configure(
            VALIDATING,
            "deny",
            "case-deny",
            vec![s.hook("deny", "deny.kapi.test", "/deny/deny", json!({}))],
        );
        let (code, body) = s.configmap("case-deny", "d1", json!({}));
        assert_status(
            code,
            &body,
            403,
            "Forbidden",
            "admission webhook \"deny.kapi.test\" denied the request: no writes today",
        );
        let stderr = s
            .kapi
            .kubectl_err(&["create", "-f", "-"], Some(&manifest("case-deny", "d2")));
        assert!(
            stderr.contains(
                "admission webhook \"deny.kapi.test\" denied the request: no writes today"
            ),
            "{stderr}"
        );
        assert_eq!(s.hooks.reviews("/deny/deny", "d2").len(), 1);

        // Patch: what the mutating webhook adds is stored, through the API and kubectl.
        s.namespace("case-patch", json!({"case": "patch"}));
        s.configure(
            MUTATING,
            "patch",
            "case-patch",
            vec![s.hook("patch", "patch.kapi.test", "/patch/patch", json!({}))],
        );
        let (code, body) = s.configmap("case-patch", "p1", json!({"mine": "kept"}));
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["metadata"]["labels"]["patched"], "yes", "{body}");
        let stored = s.get("case-patch", "p1");
        assert_eq!(
            stored["metadata"]["labels"],
            json!({"mine": "kept", "patched": "yes"})
        );
        assert_eq!(stored["metadata"]["annotations"]["webhook"], "saw it");
        s.kapi.kubectl_ok(
            None,
            &["create", "-f", "-"],
            Some(&manifest("case-patch", "p2")),
        );
        let label = s.kapi.kubectl(&[
            "get",
            "configmap",
            "p2",
            "-n",
            "case-patch",
            "-o",
            "jsonpath={.metadata.labels.patched}",
        ]);
        assert_eq!(label, "yes");

        // A webhook named by a Service is called at an address of its Endpoints, with
        // the Service's DNS name as the TLS server name.
        let port = s.hooks.0.port;
        let (code, body) = s.kapi.request(
            "POST",
            "/api/v1/namespaces/default/services",
            JSON,
            Some(&json!({"metadata": {"name": "hooks"}, "spec": {"ports": [
                {"name": "https", "port": 443, "targetPort": port}]}})),
        );
        assert_eq!(code, 201, "{body}");
        let (code, body) = s.kapi.request(
            "POST",
            "/api/v1/namespaces/default/endpoints",
            JSON,
            Some(&json!({"metadata": {"name": "hooks"}, "subsets": [{
                "addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}]})),
        );
        assert_eq!(code, 201, "{body}");
        s.namespace("case-service", json!({"case": "service"}));
        let mut through_service = s.hook("service", "service.kapi.test", "/", json!({}));
        through_service["clientConfig"] = json!({"caBundle": s.hooks.ca_bundle(),
            "service": {"namespace": "default", "name": "hooks", "path": "/deny/service"}});
        s.configure(VALIDATING, "service", "case-service", vec![through_service]);
        let (code, body) = s.configmap("case-service", "s1", json!({}));
        assert_status(
            code,
            &body,
            403,
            "Forbidden",
            "admission webhook \"service.kapi.test\" denied the request: no writes today",
        );
        assert_eq!(s.hooks.reviews("/deny/service", "s1").len(), 1);

        // A webhook with side effects is refused in v1, as kube refuses it (kapi still
        // refuses a dry run against one kept from an older API, before any call).
        let effects = s.hook(
            "effects",
            "side-effects.kapi.test",
            "/allow/effects",
            json!({"sideEffects": "Unknown"}),
        );
        let (code, body) = s.kapi.request(
            "POST",
            VALIDATING,
            JSON,
            Some(&json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "effects"},
                "webhooks": [effects]})),
        );
        assert_status(
            code,
            &body,
            422,
            "Invalid",
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"effects\" is invalid: \
             webhooks[0].sideEffects: Unsupported value: \"Unknown\": supported values: \"None\", \
             \"NoneOnDryRun\"",
        );
    });
    finish(&s, run);
}

#[test]
fn failure_policy_decides_timeouts_and_unreachable_webhooks() {
    let s = Setup::start();
    let run = std::panic::AssertUnwindSafe(|| {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let unreachable = |case: &str, name: &str, policy: &str| {
            let mut h = s.hook(case, name, "/allow/x", json!({"failurePolicy": policy}));
            h["clientConfig"]["url"] = json!(format!("https://127.0.0.1:{closed_port}/allow"));
            h
        };
        let slow = |case: &str, name: &str, policy: &str| {
            s.hook(
                case,
                name,
                &format!("/slow/{case}"),
                json!({"failurePolicy": policy, "timeoutSeconds": 1}),
            )
        };
        for case in ["slow-fail", "slow-ignore", "down-fail", "down-ignore"] {
            s.namespace(&format!("case-{case}"), json!({"case": case}));
        }
        s.configure(
            VALIDATING,
            "slow-fail",
            "case-slow-fail",
            vec![slow("slow-fail", "slow-fail.kapi.test", "Fail")],
        );
        s.configure(
            VALIDATING,
            "slow-ignore",
            "case-slow-ignore",
            vec![slow("slow-ignore", "slow-ignore.kapi.test", "Ignore")],
        );
        s.configure(
            MUTATING,
            "down-fail",
            "case-down-fail",
            vec![unreachable("down-fail", "down-fail.kapi.test", "Fail")],
        );
        s.configure(
            VALIDATING,
            "down-ignore",
            "case-down-ignore",
            vec![unreachable(
                "down-ignore",
                "down-ignore.kapi.test",
                "Ignore",
            )],
        );

        // A webhook slower than its timeoutSeconds: 500 after about a second.
        let started = Instant::now();
        let (code, body) = s.configmap("case-slow-fail", "s1", json!({}));
        let took = started.elapsed();
        assert_eq!(code, 500, "{body}");
        assert_eq!(body["reason"], "InternalError", "{body}");
        let message = body["message"].as_str().unwrap();
        let url = s.hooks.url("/slow/slow-fail?timeout=1s");
        assert_eq!(
            message,
            format!(
                "Internal error occurred: failed calling webhook \"slow-fail.kapi.test\": failed to call webhook: Post \"{url}\": context deadline exceeded"
            ),
        );
        assert!(
            took >= Duration::from_millis(900) && took < SLOW - Duration::from_millis(500),
            "the write took {took:?}"
        );
        assert_eq!(s.hooks.reviews("/slow/slow-fail", "s1").len(), 1);
        assert_eq!(
            s.kapi
                .request(
                    "GET",
                    "/api/v1/namespaces/case-slow-fail/configmaps/s1",
                    JSON,
                    None
                )
                .0,
            404
        );

        // The same with failurePolicy Ignore: the write goes through.
        let (code, body) = s.configmap("case-slow-ignore", "s2", json!({}));
        assert_eq!(code, 201, "{body}");
        assert_eq!(s.hooks.reviews("/slow/slow-ignore", "s2").len(), 1);

        // Nobody listening: Fail refuses (a mutating webhook), Ignore lets through.
        let (code, body) = s.configmap("case-down-fail", "u1", json!({}));
        assert_eq!(code, 500, "{body}");
        assert_eq!(
            body["message"],
            format!(
                "Internal error occurred: failed calling webhook \"down-fail.kapi.test\": failed to call webhook: Post \"https://127.0.0.1:{closed_port}/allow?timeout=5s\": dial tcp 127.0.0.1:{closed_port}: connect: connection refused"
            ),
            "{body}"
        );
        let stderr = s.kapi.kubectl_err(
            &["create", "-f", "-"],
            Some(&manifest("case-down-fail", "u2")),
        );
        assert!(
            stderr.contains("failed calling webhook \"down-fail.kapi.test\""),
            "{stderr}"
        );
        let (code, body) = s.configmap("case-down-ignore", "u3", json!({}));
        assert_eq!(code, 201, "{body}");
    });
    finish(&s, run);
}

#[test]
fn selectors_and_operations_choose_the_writes_a_webhook_sees() {
    let s = Setup::start();
    let run = std::panic::AssertUnwindSafe(|| {
        // namespaceSelector: the namespace's labels.
        s.namespace("case-prod", json!({"case": "ns", "env": "prod"}));
        s.namespace("case-dev", json!({"case": "ns", "env": "dev"}));
        s.configure(
            VALIDATING,
            "ns",
            "case-dev",
            vec![s.hook(
                "ns",
                "namespaces.kapi.test",
                "/deny/ns",
                json!({"namespaceSelector": {"matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["prod"]}]}}),
            )],
        );
        let (code, body) = s.configmap("case-prod", "n1", json!({}));
        assert_eq!(code, 403, "{body}");
        let (code, body) = s.configmap("case-dev", "n2", json!({}));
        assert_eq!(code, 201, "{body}");
        assert!(s.hooks.reviews("/deny/ns", "n2").is_empty());

        // objectSelector: the new object's labels (or the old one's).
        s.namespace("case-obj", json!({"case": "obj"}));
        s.configure(
            VALIDATING,
            "obj",
            "case-obj",
            vec![s.hook(
                "obj",
                "objects.kapi.test",
                "/deny/obj",
                json!({"objectSelector": {"matchLabels": {"guarded": "true"}},
                    "rules": configmap_rules(&["CREATE", "UPDATE"])}),
            )],
        );
        let (code, body) = s.configmap("case-obj", "o1", json!({"guarded": "true"}));
        assert_eq!(code, 403, "{body}");
        let (code, body) = s.configmap("case-obj", "o2", json!({"guarded": "false"}));
        assert_eq!(code, 201, "{body}");
        assert!(s.hooks.reviews("/deny/obj", "o2").is_empty());
        let mut guarded = body.clone();
        guarded["metadata"]["labels"]["guarded"] = json!("true");
        let (code, body) = s.write("PUT", "case-obj", Some("o2"), &guarded, "");
        assert_eq!(code, 403, "{body}");

        // Rules for UPDATE only: creates pass unseen, updates are denied.
        s.namespace("case-upd", json!({"case": "upd"}));
        s.configure(
            VALIDATING,
            "upd",
            "case-upd",
            vec![s.hook(
                "upd",
                "updates.kapi.test",
                "/deny/upd",
                json!({"rules": configmap_rules(&["UPDATE"])}),
            )],
        );
        let (code, created) = s.configmap("case-upd", "r1", json!({}));
        assert_eq!(code, 201, "{created}");
        assert!(s.hooks.reviews("/deny/upd", "r1").is_empty());
        let mut changed = created.clone();
        changed["data"]["v"] = json!("2");
        let (code, body) = s.write("PUT", "case-upd", Some("r1"), &changed, "");
        assert_status(
            code,
            &body,
            403,
            "Forbidden",
            "admission webhook \"updates.kapi.test\" denied the request: no writes today",
        );
        let r = &s.hooks.review("/deny/upd", "r1")["request"];
        assert_eq!(r["operation"], "UPDATE");
        assert_eq!(r["oldObject"]["data"]["v"], "1");
        assert_eq!(r["object"]["data"]["v"], "2");
        assert_eq!(s.get("case-upd", "r1")["data"]["v"], "1");

        // matchConditions (CEL): only the objects they accept reach the webhook.
        s.namespace("case-cel", json!({"case": "cel"}));
        s.configure(
            VALIDATING,
            "cel",
            "case-cel",
            vec![s.hook(
                "cel",
                "conditions.kapi.test",
                "/deny/cel",
                json!({"matchConditions": [
                    {"name": "named", "expression": "object.metadata.name.startsWith('mc-')"},
                    {"name": "by-admin", "expression": "request.userInfo.username == 'kapi-admin'"},
                ]}),
            )],
        );
        let (code, body) = s.configmap("case-cel", "mc-1", json!({}));
        assert_eq!(code, 403, "{body}");
        let (code, body) = s.configmap("case-cel", "other", json!({}));
        assert_eq!(code, 201, "{body}");
        assert!(s.hooks.reviews("/deny/cel", "other").is_empty());
        // A condition may ask the authorizer: a ServiceAccount that may not read Secrets
        // makes this one false, so the denying webhook is not called.
        s.namespace("case-cel-authz", json!({"case": "cel-authz"}));
        s.configure(
            VALIDATING,
            "cel-authz",
            "case-cel-authz",
            vec![s.hook(
                "cel-authz",
                "authz.kapi.test",
                "/deny/cel-authz",
                json!({"matchConditions": [{"name": "sa-reads-secrets", "expression":
                    "authorizer.serviceAccount('case-cel-authz', 'nobody').group('').resource('secrets').check('list').allowed()"}]}),
            )],
        );
        let (code, body) = s.configmap("case-cel-authz", "authz-1", json!({}));
        assert_eq!(code, 201, "{body}");
        assert!(s.hooks.reviews("/deny/cel-authz", "authz-1").is_empty());

        // A validating webhook on DELETE.
        s.namespace("case-del", json!({"case": "del"}));
        s.configure(
            VALIDATING,
            "del",
            "case-del",
            vec![s.hook(
                "del",
                "deletes.kapi.test",
                "/deny/del",
                json!({"rules": configmap_rules(&["DELETE"])}),
            )],
        );
        let (code, body) = s.configmap("case-del", "x1", json!({}));
        assert_eq!(code, 201, "{body}");
        let (code, body) = s.delete("case-del", "x1");
        assert_status(
            code,
            &body,
            403,
            "Forbidden",
            "admission webhook \"deletes.kapi.test\" denied the request: no writes today",
        );
        let r = &s.hooks.review("/deny/del", "x1")["request"];
        assert_eq!(r["operation"], "DELETE");
        assert_eq!(r["name"], "x1");
        assert_eq!(r["object"], Value::Null);
        assert_eq!(r["oldObject"]["metadata"]["name"], "x1");
        assert_eq!(r["options"]["kind"], "DeleteOptions");
        s.get("case-del", "x1");
        let stderr = s
            .kapi
            .kubectl_err(&["delete", "configmap", "x1", "-n", "case-del"], None);
        assert!(
            stderr.contains("admission webhook \"deletes.kapi.test\" denied the request"),
            "{stderr}"
        );
    });
    finish(&s, run);
}

/// Re-raises a failed scenario with the server's log.
fn finish(s: &Setup, run: impl FnOnce() + std::panic::UnwindSafe) {
    if let Err(e) = std::panic::catch_unwind(run) {
        eprintln!("server log:\n{}", s.kapi.log_text());
        std::panic::resume_unwind(e);
    }
}
