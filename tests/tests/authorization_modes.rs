//! `--authorization-mode` as kube-apiserver chains it: `AlwaysAllow`, `AlwaysDeny` and
//! `RBAC`, in the order given, the first to allow deciding, `system:masters` before
//! all of them; each chain served and asked as users with and without an RBAC grant
//! (static tokens), and a list kube refuses refused in its words.

use std::process::Command;

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const RULES: &str = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
/// bob holds no role; carol may list ConfigMaps in `default` through a RoleBinding.
const TOKENS: &str = "tok-bob-5d1e,bob,uid-bob,\"\"\ntok-carol-8a2f,carol,uid-carol,\"\"\n";

/// A server with the token file and `modes`, and carol's RoleBinding.
struct Server {
    kapi: Kapi,
    _tokens: tempfile::TempDir,
}

impl Server {
    fn start(modes: &str) -> Self {
        let tokens = tempfile::tempdir().expect("a temporary directory");
        let file = tokens.path().join("tokens.csv");
        std::fs::write(&file, TOKENS).expect("writing the token file");
        let kapi = Kapi::start_with(
            Backend::Embedded,
            &[
                "--token-auth-file",
                file.to_str().unwrap(),
                "--authorization-mode",
                modes,
            ],
        );
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "carol-view", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}]});
        kapi.send_ok(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            JSON,
            &binding,
        );
        Server {
            kapi,
            _tokens: tokens,
        }
    }

    /// `method path` as `token`'s user: the status code and body.
    fn as_user(&self, token: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.kapi.json_as(token, method, path, body)
    }

    /// Polls (bounded) until carol may list, as the RBAC policy reaches the authorizer.
    fn until_carol_lists(&self) {
        for _ in 0..150 {
            if self.as_user("tok-carol-8a2f", "GET", CONFIGMAPS, None).0 == 200 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("carol never could list");
    }
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

#[test]
fn always_allow_lets_everyone_do_everything() {
    let s = Server::start("AlwaysAllow");
    let (code, made) = s.as_user("tok-bob-5d1e", "POST", CONFIGMAPS, Some(&configmap("bob")));
    assert_eq!(code, 201, "{made}");
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"}});
    let (code, rules) = s.as_user("tok-bob-5d1e", "POST", RULES, Some(&review));
    assert_eq!(code, 201, "{rules}");
    assert_eq!(
        rules["status"]["resourceRules"][0],
        json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
    );
}

#[test]
fn always_deny_forbids_all_but_system_masters_in_kubes_words() {
    let s = Server::start("AlwaysDeny");
    let (code, refused) = s.as_user("tok-carol-8a2f", "GET", CONFIGMAPS, None);
    assert_eq!(code, 403, "{refused}");
    assert_eq!(
        refused["message"],
        "configmaps is forbidden: User \"carol\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\": Everything is forbidden."
    );
    // The admin (system:masters) still may.
    assert_eq!(s.kapi.request("GET", CONFIGMAPS, JSON, None).0, 200);
}

#[test]
fn modes_decide_in_their_order() {
    // Kubernetes' own kubectl test rig: RBAC, then everything else allowed.
    let s = Server::start("RBAC,AlwaysAllow");
    let (code, made) = s.as_user("tok-bob-5d1e", "POST", CONFIGMAPS, Some(&configmap("bob")));
    assert_eq!(code, 201, "{made}");
    drop(s);

    // AlwaysDeny has no opinion: RBAC after it still allows carol, and bob's 403 gives
    // both modes' reasons (RBAC has none).
    let s = Server::start("AlwaysDeny,RBAC");
    s.until_carol_lists();
    let (code, refused) = s.as_user("tok-bob-5d1e", "GET", CONFIGMAPS, None);
    assert_eq!(code, 403, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .ends_with(": Everything is forbidden."),
        "{refused}"
    );
    let (code, _) = s.as_user(
        "tok-carol-8a2f",
        "POST",
        CONFIGMAPS,
        Some(&configmap("carol")),
    );
    assert_eq!(code, 403, "view does not create");
}

#[test]
fn a_list_kube_refuses_is_refused_in_its_words() {
    let dir = tempfile::tempdir().unwrap();
    for (modes, message) in [
        (
            "RBAC,Foo",
            "kapi: authorization-mode \"Foo\" is not a valid mode",
        ),
        (
            "RBAC,RBAC",
            "kapi: authorization-mode \"RBAC\" has mode specified more than once",
        ),
        ("", "kapi: at least one authorization-mode must be passed"),
    ] {
        let out = Command::new(kapi_tests::kapi_binary())
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .arg(format!("--authorization-mode={modes}"))
            .output()
            .expect("running kapi");
        assert_eq!(out.status.code(), Some(2), "{modes:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{modes:?}: {stderr}");
    }
}
