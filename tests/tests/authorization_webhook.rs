//! The `Webhook` authorization mode: kapi asks an HTTPS service in the test process
//! with `SubjectAccessReview`s, as kube-apiserver asks the one its
//! `--authorization-webhook-config-file` names; the answers decide requests in the
//! chain's order, are remembered, reach CEL's `authorizer`, access reviews and rules
//! reviews, and a webhook that cannot be asked gives kube's 500.

use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

#[path = "support/https.rs"]
mod https;
use https::{HttpsServer, Received};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const SECRETS: &str = "/api/v1/namespaces/default/secrets";
/// bob and dave hold no role; carol may list ConfigMaps in `default` through RBAC.
const TOKENS: &str = "tok-bob-5d1e,bob,uid-bob,\"\"\ntok-carol-8a2f,carol,uid-carol,\"\"\ntok-dave-77c0,dave,uid-dave,\"\"\n";
/// The token kapi presents to the webhook.
const WEBHOOK_TOKEN: &str = "kapi-to-webhook-3c9e";

/// The webhook's policy: bob and dave may use ConfigMaps, dave may read Secrets and bob
/// is denied them; on everything else it has no opinion.
async fn decide(received: Received) -> Value {
    let mut review = received.body;
    let spec = &review["spec"];
    let user = spec["user"].as_str().unwrap_or_default();
    let resource = spec["resourceAttributes"]["resource"]
        .as_str()
        .unwrap_or_default();
    review["status"] = match (user, resource) {
        ("bob" | "dave", "configmaps") => {
            json!({"allowed": true, "reason": "the webhook lets them use configmaps"})
        }
        ("dave", "secrets") => json!({"allowed": true}),
        ("bob", "secrets") => {
            json!({"allowed": false, "denied": true, "reason": "bob may not read secrets"})
        }
        _ => json!({"allowed": false, "reason": "the webhook has no opinion"}),
    };
    review
}

/// A webhook, and kapi chaining `modes` with it (the review version `version`).
struct Rig {
    kapi: Kapi,
    webhook: Option<HttpsServer>,
    _files: tempfile::TempDir,
}

impl Rig {
    fn start(modes: &str, version: &str) -> Self {
        let webhook = HttpsServer::start(&[], std::sync::Arc::new(|r| Box::pin(decide(r))));
        let files = tempfile::tempdir().expect("a temporary directory");
        let tokens = files.path().join("tokens.csv");
        std::fs::write(&tokens, TOKENS).unwrap();
        // JSON is YAML: the kubeconfig as kube's docs write it for this flag.
        let kubeconfig = json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "authz", "cluster": {
                "server": webhook.url("/authorize"),
                "certificate-authority-data": webhook.ca_bundle}}],
            "users": [{"name": "kapi", "user": {"token": WEBHOOK_TOKEN}}],
            "contexts": [{"name": "webhook", "context": {"cluster": "authz", "user": "kapi"}}],
            "current-context": "webhook",
        });
        let config = files.path().join("authz-webhook.yaml");
        std::fs::write(&config, kubeconfig.to_string()).unwrap();
        let kapi = Kapi::start_with(
            Backend::Embedded,
            &[
                "--token-auth-file",
                tokens.to_str().unwrap(),
                "--authorization-mode",
                modes,
                "--authorization-webhook-config-file",
                config.to_str().unwrap(),
                "--authorization-webhook-version",
                version,
            ],
        );
        Rig {
            kapi,
            webhook: Some(webhook),
            _files: files,
        }
    }

    fn as_user(&self, token: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.kapi.json_as(token, method, path, body)
    }

    /// The reviews the webhook has been sent.
    fn reviews(&self) -> Vec<Received> {
        self.webhook
            .as_ref()
            .map_or_else(Vec::new, HttpsServer::received)
    }
}

#[test]
fn the_webhook_decides_after_rbac_and_its_answers_are_remembered() {
    let rig = Rig::start("RBAC,Webhook", "v1");
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "carol-view", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}]});
    rig.kapi.send_ok(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        JSON,
        &binding,
    );

    // RBAC has no opinion on bob: the webhook is asked, with kube's v1 review.
    let (code, body) = rig.as_user("tok-bob-5d1e", "GET", CONFIGMAPS, None);
    assert_eq!(code, 200, "{body}");
    let reviews = rig.reviews();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    let review = &reviews[0];
    assert_eq!(review.path, "/authorize");
    assert_eq!(
        review.authorization.as_deref(),
        Some(format!("Bearer {WEBHOOK_TOKEN}").as_str())
    );
    assert_eq!(
        review.body,
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": null},
            "spec": {"user": "bob", "uid": "uid-bob", "groups": ["system:authenticated"],
                "resourceAttributes": {"namespace": "default", "verb": "list",
                    "version": "v1", "resource": "configmaps"}},
            "status": {"allowed": false}})
    );
    // Remembered: the same question is not asked again.
    assert_eq!(rig.as_user("tok-bob-5d1e", "GET", CONFIGMAPS, None).0, 200);
    assert_eq!(rig.reviews().len(), 1);

    // RBAC decides first when it allows: carol's list never reaches the webhook (polled
    // until the RoleBinding reaches RBAC).
    let deadline = Instant::now() + Duration::from_secs(15);
    while rig.as_user("tok-carol-8a2f", "GET", CONFIGMAPS, None).0 != 200 {
        assert!(Instant::now() < deadline, "carol never could list");
        std::thread::sleep(Duration::from_millis(100));
    }
    let asked_for_carol = |rig: &Rig| {
        rig.reviews()
            .iter()
            .filter(|r| r.body["spec"]["user"] == "carol")
            .count()
    };
    let before = asked_for_carol(&rig);
    assert_eq!(
        rig.as_user("tok-carol-8a2f", "GET", CONFIGMAPS, None).0,
        200
    );
    assert_eq!(asked_for_carol(&rig), before, "RBAC allowed: no review");

    // A denial is a 403 with the webhook's reason, in kube's words.
    let (code, refused) = rig.as_user("tok-bob-5d1e", "GET", SECRETS, None);
    assert_eq!(code, 403, "{refused}");
    assert_eq!(
        refused["message"],
        "secrets is forbidden: User \"bob\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\": bob may not read secrets"
    );

    // kubectl auth can-i's reviews ask the chain too; a rules review is incomplete, as
    // kube's webhook authorizer lists no rules.
    let ssar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "configmaps"}}});
    let (code, answer) = rig.as_user(
        "tok-bob-5d1e",
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        Some(&ssar),
    );
    assert_eq!(code, 201, "{answer}");
    assert_eq!(
        answer["status"],
        json!({"allowed": true, "reason": "the webhook lets them use configmaps"})
    );
    let rules = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"}});
    let (code, answer) = rig.as_user(
        "tok-bob-5d1e",
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        Some(&rules),
    );
    assert_eq!(code, 201, "{answer}");
    assert_eq!(answer["status"]["incomplete"], true, "{answer}");
    assert_eq!(
        answer["status"]["evaluationError"],
        "webhook authorizer does not support user rule resolution"
    );
}

#[test]
fn cel_authorizer_checks_reach_the_webhook_and_a_webhook_down_is_a_500() {
    let mut rig = Rig::start("RBAC,Webhook", "v1beta1");
    rig.kapi.send_ok(
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        JSON,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "secret-readers"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"]}]},
                "validations": [{
                    "expression": "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()",
                    "message": "only those who may read secrets may write configmaps"}]}}),
    );
    rig.kapi.send_ok(
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        JSON,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "secret-readers"},
            "spec": {"policyName": "secret-readers", "validationActions": ["Deny"]}}),
    );
    let post = |rig: &Rig, token: &str, name: &str| {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        rig.as_user(
            token,
            "POST",
            &format!("{CONFIGMAPS}?dryRun=All"),
            Some(&cm),
        )
    };
    // bob may create ConfigMaps but the webhook denies him Secrets: refused once the
    // policy is read (polled, bounded).
    let deadline = Instant::now() + Duration::from_secs(15);
    let refused = loop {
        let (code, body) = post(&rig, "tok-bob-5d1e", "from-bob");
        if code == 422 {
            break body;
        }
        assert_eq!(code, 201, "{body}");
        assert!(Instant::now() < deadline, "never refused: {body}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .ends_with("denied request: only those who may read secrets may write configmaps"),
        "{refused}"
    );
    // dave's Secrets question is first asked from inside CEL, and allowed.
    let (code, body) = post(&rig, "tok-dave-77c0", "from-dave");
    assert_eq!(code, 201, "{body}");
    let asked = rig.reviews();
    let secrets_for_dave = asked.iter().find(|r| {
        r.body["spec"]["user"] == "dave"
            && r.body["spec"]["resourceAttributes"]["resource"] == "secrets"
    });
    // v1beta1 names the groups `group`.
    assert_eq!(
        secrets_for_dave.expect("dave's review").body["spec"]["group"],
        json!(["system:authenticated"])
    );

    // The webhook goes away: what it answered is still remembered (dave's create and
    // his Secrets question), a new question is kube's 500, and the admin
    // (system:masters) is not affected.
    let port = rig.webhook.as_ref().unwrap().port;
    rig.webhook = None;
    let (code, body) = post(&rig, "tok-dave-77c0", "again");
    assert_eq!(code, 201, "{body}");
    let (code, failed) = rig.as_user(
        "tok-dave-77c0",
        "GET",
        "/api/v1/namespaces/default/pods",
        None,
    );
    assert_eq!(code, 500, "{failed}");
    let message = failed["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "Internal error occurred: Post \"https://127.0.0.1:{port}/authorize"
        )) && message.ends_with(&format!(
            "dial tcp 127.0.0.1:{port}: connect: connection refused"
        )),
        "{failed}"
    );
    assert_eq!(failed["reason"], "InternalError");
    assert_eq!(
        rig.kapi
            .request("GET", "/api/v1/namespaces/default/pods", JSON, None)
            .0,
        200
    );
}

#[test]
fn webhook_flags_are_checked_in_kubes_words() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("authz.yaml");
    std::fs::write(&config, "clusters: []\n").unwrap();
    for (args, message) in [
        (
            vec!["--authorization-mode=RBAC,Webhook".to_string()],
            "authorization-mode Webhook's authorization config file not passed",
        ),
        (
            vec![format!(
                "--authorization-webhook-config-file={}",
                config.display()
            )],
            "cannot specify --authorization-webhook-config-file without mode Webhook",
        ),
        (
            vec![
                "--authorization-mode=Webhook".to_string(),
                format!("--authorization-webhook-config-file={}", config.display()),
            ],
            "invalid configuration: no configuration has been provided",
        ),
    ] {
        let out = std::process::Command::new(kapi_tests::kapi_binary())
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .args(&args)
            .output()
            .expect("running kapi");
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
