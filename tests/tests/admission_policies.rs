//! ValidatingAdmissionPolicies enforced end to end, as kube-apiserver enforces them:
//! a binding's `Deny` refuses with the validation's reason and kube's message, `Warn`
//! reaches kubectl as a warning, `Audit` and the policy's `auditAnnotations` reach the
//! audit log; parameters by name (in the request's namespace) and by selector, with
//! `parameterNotFoundAction`; namespace selectors and match conditions; an expression
//! that fails under each `failurePolicy`, and one over its cost limit.

use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

fn create(kapi: &Kapi, path: &str, body: Value) {
    let (code, out) = kapi.request("POST", path, JSON, Some(&body));
    assert_eq!(code, 201, "POST {path}: {out}");
}

fn namespace(kapi: &Kapi, name: &str, labels: Value) {
    create(
        kapi,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": labels}}),
    );
}

fn config_map(kapi: &Kapi, ns: &str, name: &str, labels: Value, data: Value) {
    create(
        kapi,
        &format!("/api/v1/namespaces/{ns}/configmaps"),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": data}),
    );
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

/// A dry-run create of `body` until the answer's code is `code` (policies take effect
/// once the server's informer has read them), bounded; returns the answer.
fn until(kapi: &Kapi, path: &str, body: &Value, code: u16) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    let path = format!("{path}?dryRun=All");
    loop {
        let (got, out) = kapi.request("POST", &path, JSON, Some(body));
        if got == code {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "POST {path}: never {code}; last {got}: {out}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn deployments(ns: &str) -> String {
    format!("/apis/apps/v1/namespaces/{ns}/deployments")
}

#[test]
fn deny_with_params_by_name_and_by_selector() {
    let kapi = Kapi::start(Backend::Embedded);
    namespace(&kapi, "prod", json!({"env": "prod"}));
    namespace(&kapi, "staging", json!({"env": "staging"}));
    namespace(&kapi, "dev", json!({}));
    namespace(&kapi, "params", json!({}));
    config_map(&kapi, "prod", "limits", json!({}), json!({"max": "3"}));
    config_map(
        &kapi,
        "params",
        "loose",
        json!({"tier": "limits"}),
        json!({"max": "10"}),
    );
    config_map(
        &kapi,
        "params",
        "tight",
        json!({"tier": "limits"}),
        json!({"max": "2"}),
    );
    create(
        &kapi,
        POLICIES,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "replica-limit"},
            "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
                "variables": [{"name": "max", "expression": "int(params.data.max)"}],
                "validations": [{"expression": "object.spec.replicas <= variables.max",
                    "messageExpression": "'replicas must be no greater than ' + string(variables.max)"}]}}),
    );
    // By name, in the request's namespace, only where env=prod.
    create(
        &kapi,
        BINDINGS,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "prod-limit"},
            "spec": {"policyName": "replica-limit", "validationActions": ["Deny"],
                "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"},
                "matchResources": {"namespaceSelector": {"matchLabels": {"env": "prod"}}}}}),
    );
    let denied = until(&kapi, &deployments("prod"), &deployment("big", 5), 422);
    assert_eq!(
        (&denied["reason"], &denied["message"]),
        (
            &json!("Invalid"),
            &json!(
                "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' \
                 with binding 'prod-limit' denied request: replicas must be no greater than 3"
            )
        ),
        "{denied}"
    );
    assert_eq!(
        denied["details"]["causes"][0]["message"],
        json!(
            "ValidatingAdmissionPolicy 'replica-limit' with binding 'prod-limit' denied request: \
             replicas must be no greater than 3"
        ),
        "{denied}"
    );
    until(&kapi, &deployments("prod"), &deployment("small", 3), 201);
    // The namespace selector leaves other namespaces alone.
    until(&kapi, &deployments("dev"), &deployment("big", 50), 201);

    // Without its parameter, `Deny` refuses everything the binding matches.
    let (code, out) = kapi.request(
        "DELETE",
        "/api/v1/namespaces/prod/configmaps/limits",
        JSON,
        None,
    );
    assert_eq!(code, 200, "{out}");
    let denied = until(&kapi, &deployments("prod"), &deployment("small", 1), 422);
    assert!(
        denied["message"].as_str().unwrap_or_default().ends_with(
            "denied request: no params found for policy binding with `Deny` parameterNotFoundAction"
        ),
        "{denied}"
    );

    // By selector in another namespace: each parameter object is checked, the
    // tightest refuses.
    create(
        &kapi,
        BINDINGS,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "staging-limit"},
            "spec": {"policyName": "replica-limit", "validationActions": ["Deny"],
                "paramRef": {"namespace": "params", "selector": {"matchLabels": {"tier": "limits"}},
                    "parameterNotFoundAction": "Allow"},
                "matchResources": {"namespaceSelector": {"matchLabels": {"env": "staging"}}}}}),
    );
    let denied = until(&kapi, &deployments("staging"), &deployment("mid", 4), 422);
    assert!(
        denied["message"].as_str().unwrap_or_default().ends_with(
            "with binding 'staging-limit' denied request: replicas must be no greater than 2"
        ),
        "{denied}"
    );
    until(&kapi, &deployments("staging"), &deployment("mid", 2), 201);
    // No parameters found under `Allow`: the binding lets everything through.
    for name in ["loose", "tight"] {
        let path = format!("/api/v1/namespaces/params/configmaps/{name}");
        assert_eq!(kapi.request("DELETE", &path, JSON, None).0, 200);
    }
    until(&kapi, &deployments("staging"), &deployment("mid", 40), 201);

    // The policies' own objects are never subject to policies.
    let (code, out) = kapi.request("DELETE", &format!("{BINDINGS}/prod-limit"), JSON, None);
    assert_eq!(code, 200, "{out}");
}

#[test]
fn warn_audit_match_conditions_and_failure_policies() {
    let files = tempfile::tempdir().unwrap();
    let log = files.path().join("audit.log");
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--audit-log-path", log.to_str().unwrap()],
    );
    for (name, labels) in [
        ("watched", json!({"policy": "watched"})),
        ("strict", json!({"failure": "fail"})),
        ("lenient", json!({"failure": "ignore"})),
    ] {
        namespace(&kapi, name, labels);
    }
    create(
        &kapi,
        POLICIES,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "few-keys"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}],
                    "namespaceSelector": {"matchLabels": {"policy": "watched"}}},
                "matchConditions": [{"name": "not-skipped",
                    "expression": "!object.metadata.name.startsWith('skip-')"}],
                "validations": [{"expression": "!has(object.data) || size(object.data) <= 2",
                    "message": "at most two keys"}],
                "auditAnnotations": [{"key": "keys",
                    "valueExpression": "string(has(object.data) ? size(object.data) : 0)"}]}}),
    );
    create(
        &kapi,
        BINDINGS,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "few-keys-warn"},
            "spec": {"policyName": "few-keys", "validationActions": ["Warn", "Audit"]}}),
    );
    let three = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\n  namespace: watched\ndata:\n  a: '1'\n  b: '2'\n  c: '3'\n";
    let warning = "Warning: Validation failed for ValidatingAdmissionPolicy 'few-keys' with \
                   binding 'few-keys-warn': at most two keys";
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut attempt = 0;
    loop {
        // A new name each time: the write is let through, only warned about.
        attempt += 1;
        let yaml = three.replace("NAME", &format!("wide-{attempt}"));
        let out = kapi.kubectl_version(None, &["create", "-f", "-"], Some(&yaml));
        assert!(out.status.success(), "{out:?}");
        if String::from_utf8_lossy(&out.stderr).contains(warning) {
            break;
        }
        assert!(Instant::now() < deadline, "no warning: {out:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A match condition that does not hold skips the policy.
    let yaml = three.replace("NAME", "skip-me");
    let out = kapi.kubectl_version(None, &["create", "-f", "-"], Some(&yaml));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{out:?}");

    // Audit: the failure and the policy's own annotation are in the record.
    let uri = "/api/v1/namespaces/watched/configmaps";
    let deadline = Instant::now() + Duration::from_secs(10);
    let event = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| {
                e["verb"] == "create"
                    && e["stage"] == "ResponseComplete"
                    && e["requestURI"].as_str().is_some_and(|u| u.starts_with(uri))
                    && e["annotations"]["few-keys/keys"].is_string()
            });
        if let Some(e) = found {
            break e;
        }
        assert!(Instant::now() < deadline, "no audited policy:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let annotations = &event["annotations"];
    assert_eq!(annotations["few-keys/keys"], "3", "{event}");
    let failures: Value = serde_json::from_str(
        annotations["validation.policy.admission.k8s.io/validation_failure"]
            .as_str()
            .unwrap_or_else(|| panic!("no validation_failure annotation: {event}")),
    )
    .expect("JSON");
    assert_eq!(
        failures,
        json!([{"expressionIndex": 0, "message": "at most two keys",
            "validationActions": ["Warn", "Audit"], "binding": "few-keys-warn", "policy": "few-keys"}])
    );

    // An expression that fails to evaluate: refused under Fail, let through under Ignore.
    // Ignore's first: once Fail's refusal is seen, the informer has read both (each
    // kind's events arrive in order).
    for (name, failure_policy, label) in [
        ("broken-ignore", "Ignore", "ignore"),
        ("broken-fail", "Fail", "fail"),
    ] {
        create(
            &kapi,
            POLICIES,
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                "metadata": {"name": name},
                "spec": {"failurePolicy": failure_policy,
                    "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                        "operations": ["CREATE"], "resources": ["secrets"]}]},
                    "validations": [{"expression": "object.spec.nope == 1"}]}}),
        );
        create(
            &kapi,
            BINDINGS,
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": name},
                "spec": {"policyName": name, "validationActions": ["Deny"],
                    "matchResources": {"namespaceSelector": {"matchLabels": {"failure": label}}}}}),
        );
    }
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
        "stringData": {"k": "v"}});
    let denied = until(&kapi, "/api/v1/namespaces/strict/secrets", &secret, 422);
    assert_eq!(
        denied["message"],
        json!(
            "secrets \"s\" is forbidden: ValidatingAdmissionPolicy 'broken-fail' with binding \
             'broken-fail' denied request: expression 'object.spec.nope == 1' resulted in error: \
             no such key: spec"
        ),
        "{denied}"
    );
    until(&kapi, "/api/v1/namespaces/lenient/secrets", &secret, 201);

    // An expression over its cost limit fails like any other: refused under Fail.
    namespace(&kapi, "costly", json!({"cost": "high"}));
    create(
        &kapi,
        POLICIES,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "expensive"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}],
                    "namespaceSelector": {"matchLabels": {"cost": "high"}}},
                "validations": [{"expression": "object.data.all(k, object.data.exists(j, j == k))"}]}}),
    );
    create(
        &kapi,
        BINDINGS,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "expensive"},
            "spec": {"policyName": "expensive", "validationActions": ["Deny"]}}),
    );
    let data: serde_json::Map<String, Value> =
        (0..1200).map(|i| (format!("k{i}"), json!("v"))).collect();
    let wide = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wide"},
        "data": data});
    let denied = until(&kapi, "/api/v1/namespaces/costly/configmaps", &wide, 422);
    assert_eq!(
        denied["message"],
        json!(
            "configmaps \"wide\" is forbidden: ValidatingAdmissionPolicy 'expensive' with binding \
             'expensive' denied request: expression 'object.data.all(k, object.data.exists(j, j == k))' \
             resulted in error: operation cancelled: actual cost limit exceeded"
        ),
        "{denied}"
    );
    // The same policy passes a small object.
    let narrow = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "narrow"},
        "data": {"a": "1", "b": "2"}});
    until(&kapi, "/api/v1/namespaces/costly/configmaps", &narrow, 201);
}

/// The policy's status once it has observed `generation`, polled (the status
/// controller writes it after the policy is stored), bounded.
fn status_at(kapi: &Kapi, name: &str, generation: i64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, out) = kapi.request("GET", &format!("{POLICIES}/{name}"), JSON, None);
        assert_eq!(code, 200, "{out}");
        if out["status"]["observedGeneration"] == generation {
            return out["status"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "never observed {generation}: {out}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn type_checking_warnings_are_written_to_status() {
    let kapi = Kapi::start(Backend::Embedded);
    let rules = json!([{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
        "resources": ["replicasets", "deployments"]}]);
    create(
        &kapi,
        POLICIES,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "typed"},
        "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": rules},
            "validations": [
                {"expression": "object.spec.replica > 1",
                 "messageExpression": "'has ' + string(object.spec.replicas)"},
                {"expression": "object.metadata.labels.size() < 10 && params.data.size() > 0",
                 "messageExpression": "'max ' + params.dta.max"}
            ]}}),
    );
    let per_kind = |issue: &str| {
        format!("apps/v1, Kind=Deployment: {issue}\n\napps/v1, Kind=ReplicaSet: {issue}\n")
    };
    let status = status_at(&kapi, "typed", 1);
    assert_eq!(
        status["typeChecking"],
        json!({"expressionWarnings": [
            {"fieldRef": "spec.validations[0].expression", "warning": per_kind(
                "ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^")},
            {"fieldRef": "spec.validations[1].messageExpression", "warning": per_kind(
                "ERROR: <input>:1:16: undefined field 'dta'\n | 'max ' + params.dta.max\n | ...............^")}
        ]}),
        "{status}"
    );

    // Fixed, the next generation has no warnings left.
    let (code, out) = kapi.request(
        "PATCH",
        &format!("{POLICIES}/typed"),
        "application/merge-patch+json",
        Some(&json!({"spec": {"validations": [{"expression": "object.spec.replicas > 1"}]}})),
    );
    assert_eq!(code, 200, "{out}");
    assert_eq!(status_at(&kapi, "typed", 2)["typeChecking"], json!({}));

    // Wildcards name no kind to check against, as in kube.
    create(
        &kapi,
        POLICIES,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "wild"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"],
                    "operations": ["CREATE"], "resources": ["*"]}]},
                "validations": [{"expression": "object.nothing.here == 1"}]}}),
    );
    assert_eq!(status_at(&kapi, "wild", 1)["typeChecking"], json!({}));
}

/// Expressions ask the server's authorizer through `authorizer`, as the request's user
/// or as a ServiceAccount, as in kube.
#[test]
fn expressions_ask_the_authorizer() {
    let files = tempfile::tempdir().unwrap();
    let tokens = files.path().join("tokens.csv");
    std::fs::write(&tokens, "bob-token,bob,2,\"devs\"\n").unwrap();
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--token-auth-file", tokens.to_str().unwrap()],
    );
    // bob may create ConfigMaps in `default`, and read Secrets nowhere.
    create(
        &kapi,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "cm-writer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]}),
    );
    create(
        &kapi,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "bob-writes"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}),
    );
    create(
        &kapi,
        POLICIES,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "secret-readers"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
                "validations": [
                    {"expression": "authorizer.requestResource.check('create').allowed()"},
                    {"expression": "!authorizer.serviceAccount('default', 'nobody').group('').resource('secrets').check('list').allowed()"},
                    {"expression": "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()",
                     "message": "only those who may read secrets may write configmaps"}]}}),
    );
    create(
        &kapi,
        BINDINGS,
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "secret-readers"},
            "spec": {"policyName": "secret-readers", "validationActions": ["Deny"]}}),
    );
    let agent = kapi.agent_without_certificate();
    let post_as_bob = |name: &str| {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        let bytes = serde_json::to_vec(&body).unwrap();
        kapi.exchange_as(
            &agent,
            Some("bob-token"),
            "POST",
            "/api/v1/namespaces/default/configmaps?dryRun=All",
            JSON,
            None,
            Some(&bytes),
        )
    };
    // bob may create, but may not read secrets: refused once the policy is read.
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let out = post_as_bob("from-bob");
        if out.code == 422 {
            break out;
        }
        assert_eq!(out.code, 201, "{}", out.body);
        assert!(Instant::now() < deadline, "never refused: {}", out.body);
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        refused.body.contains(
            "ValidatingAdmissionPolicy 'secret-readers' with binding 'secret-readers' denied request: only those who may read secrets may write configmaps"
        ),
        "{}",
        refused.body
    );
    // The administrator (system:masters) may do all three.
    until(
        &kapi,
        "/api/v1/namespaces/default/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-admin"}}),
        201,
    );
}
