//! Authentication end to end: HTTPS by default with the server's own CA, and each way
//! of proving who one is — the kubeconfig's admin certificate, a certificate from
//! `--client-ca-file`, a `--token-auth-file` token, a ServiceAccount token from the
//! TokenRequest API, anonymous with `--anonymous-auth` — accepted, and each kind of bad
//! credential refused with a 401 `Status`: an unknown token, a certificate from an
//! unknown CA, an expired certificate, an expired ServiceAccount token, a deleted
//! ServiceAccount's token. Also `--insecure-http`'s loopback rule, the TLS versions
//! offered, `--tls-cert-file`, TokenReview, and `kubectl auth whoami`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi, https_agent, kapi_binary};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const SSR: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";

fn ssr_body() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"
    }))
    .unwrap()
}

/// `SelfSubjectReview` through `agent` with an optional token: (code, body).
fn whoami(kapi: &Kapi, agent: &ureq::Agent, token: Option<&str>) -> (u16, Value) {
    let res = kapi.exchange_as(agent, token, "POST", SSR, JSON, None, Some(&ssr_body()));
    (
        res.code,
        serde_json::from_str(&res.body).unwrap_or(Value::String(res.body)),
    )
}

fn assert_unauthorized(code: u16, body: &Value, what: &str) {
    assert_eq!(code, 401, "{what}: {body}");
    assert_eq!(body["kind"], "Status", "{what}: {body}");
    assert_eq!(body["reason"], "Unauthorized", "{what}: {body}");
    assert_eq!(body["message"], "Unauthorized", "{what}: {body}");
}

/// A CA of the test's own, and a client certificate it signs.
struct TestCa {
    cert: String,
    key: KeyPair,
}

impl TestCa {
    fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, name);
        params.distinguished_name = dn;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap().pem();
        Self { cert, key }
    }

    /// A client certificate (PEM cert, PEM key) for `user` in `groups`, valid from
    /// `days_from` to `days_to` days from now.
    fn client(
        &self,
        user: &str,
        groups: &[&str],
        days_from: i64,
        days_to: i64,
    ) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, user);
        for g in groups {
            dn.push(DnType::OrganizationName, *g);
        }
        params.distinguished_name = dn;
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now + time::Duration::days(days_from);
        params.not_after = now + time::Duration::days(days_to);
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let issuer = Issuer::from_ca_cert_pem(&self.cert, &self.key).unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap().pem();
        (cert, key.serialize_pem())
    }

    /// A serving certificate for 127.0.0.1, then this CA: a `--tls-cert-file`.
    fn server(&self) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "operator-kapi");
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let issuer = Issuer::from_ca_cert_pem(&self.cert, &self.key).unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap().pem();
        (format!("{cert}{}", self.cert), key.serialize_pem())
    }
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn every_method_accepted_and_every_bad_credential_refused() {
    let files = tempfile::tempdir().unwrap();
    let extra_ca = TestCa::new("partner-ca");
    let tokens = write(
        files.path(),
        "tokens.csv",
        "tok-alice,alice,uid-alice,\"devs,ops\"\n",
    );
    let client_ca = write(files.path(), "client-ca.crt", &extra_ca.cert);
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--token-auth-file", &tokens, "--client-ca-file", &client_ca],
    );
    let ca = kapi.credentials().expect("HTTPS").ca.clone();
    let bare = kapi.agent_without_certificate();

    // The kubeconfig's admin certificate.
    let (code, me) = whoami(&kapi, &kapi.agent(), None);
    assert_eq!(code, 201, "{me}");
    assert_eq!(me["status"]["userInfo"]["username"], "kapi-admin");
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );

    // A token from the token file.
    let (code, me) = whoami(&kapi, &bare, Some("tok-alice"));
    assert_eq!(code, 201, "{me}");
    assert_eq!(
        me["status"]["userInfo"],
        json!({"username": "alice", "uid": "uid-alice", "groups": ["devs", "ops", "system:authenticated"]})
    );

    // A certificate from --client-ca-file: CN is the user, O the groups.
    let (cert, key) = extra_ca.client("carol", &["qa"], -1, 30);
    let carol = https_agent(Some(&ca), Some((&cert, &key)));
    let (code, me) = whoami(&kapi, &carol, None);
    assert_eq!(code, 201, "{me}");
    assert_eq!(
        me["status"]["userInfo"],
        json!({"username": "carol", "groups": ["qa", "system:authenticated"]})
    );

    // Refused: no credential (no --anonymous-auth), an unknown token, a certificate
    // from a CA the server does not trust, an expired certificate.
    let (code, body) = whoami(&kapi, &bare, None);
    assert_unauthorized(code, &body, "anonymous without --anonymous-auth");
    let (code, body) = whoami(&kapi, &bare, Some("tok-mallory"));
    assert_unauthorized(code, &body, "an unknown token");
    let stranger = TestCa::new("stranger-ca");
    let (cert, key) = stranger.client("mallory", &["system:masters"], -1, 30);
    let (code, body) = whoami(&kapi, &https_agent(Some(&ca), Some((&cert, &key))), None);
    assert_unauthorized(code, &body, "a certificate from an unknown CA");
    let (cert, key) = extra_ca.client("carol", &["qa"], -30, -1);
    let (code, body) = whoami(&kapi, &https_agent(Some(&ca), Some((&cert, &key))), None);
    assert_unauthorized(code, &body, "an expired certificate");
    // A bad certificate does not spoil a good token beside it (kube's union).
    let (code, me) = whoami(
        &kapi,
        &https_agent(Some(&ca), Some((&cert, &key))),
        Some("tok-alice"),
    );
    assert_eq!(
        (code, &me["status"]["userInfo"]["username"]),
        (201, &json!("alice"))
    );

    // ServiceAccount tokens: issued by TokenRequest, checked against the account.
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces/default/serviceaccounts",
        JSON,
        Some(&json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})),
    );
    assert_eq!(code, 201, "{body}");
    let uid = body["metadata"]["uid"].as_str().unwrap().to_string();
    let (code, issued) = kapi.request(
        "POST",
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        JSON,
        Some(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                     "spec": {"expirationSeconds": 3600}}),
        ),
    );
    assert_eq!(code, 201, "{issued}");
    assert_eq!(issued["kind"], "TokenRequest");
    assert_eq!(issued["spec"]["expirationSeconds"], 3600);
    let token = issued["status"]["token"].as_str().unwrap().to_string();
    let (code, me) = whoami(&kapi, &bare, Some(&token));
    assert_eq!(code, 201, "{me}");
    let user = &me["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert_eq!(user["uid"], uid.as_str());
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    // TokenReview answers for it.
    let (code, review) = kapi.request(
        "POST",
        TOKEN_REVIEWS,
        JSON,
        Some(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})),
    );
    assert_eq!(code, 201, "{review}");
    assert_eq!(review["status"]["authenticated"], true, "{review}");
    assert_eq!(
        review["status"]["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    // A too-short expiry is refused as kube refuses it.
    let (code, body) = kapi.request(
        "POST",
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        JSON,
        Some(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                     "spec": {"expirationSeconds": 60}}),
        ),
    );
    assert_eq!(code, 422, "{body}");

    // An expired token, signed with the server's own key.
    let pki = kapi.data_dir().join("pki");
    let signer = kapi_auth::authn::ServiceAccountTokens::new(
        "https://kubernetes.default.svc.cluster.local",
        &[],
        &std::fs::read(pki.join("sa.key")).unwrap(),
        &[&std::fs::read(pki.join("sa.pub")).unwrap()],
    )
    .unwrap();
    let long_ago = chrono::Utc::now().timestamp() - 7200;
    let (expired, _) = signer
        .issue("default", "robot", &uid, &[], 600, long_ago)
        .unwrap();
    let (code, body) = whoami(&kapi, &bare, Some(&expired));
    assert_unauthorized(code, &body, "an expired ServiceAccount token");

    // Deleting the ServiceAccount revokes its tokens.
    let (code, body) = kapi.request(
        "DELETE",
        "/api/v1/namespaces/default/serviceaccounts/robot",
        JSON,
        None,
    );
    assert_eq!(code, 200, "{body}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (code, body) = whoami(&kapi, &bare, Some(&token));
        if code == 401 {
            assert_unauthorized(code, &body, "a deleted ServiceAccount's token");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the token still works: {code} {body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, review) = kapi.request(
        "POST",
        TOKEN_REVIEWS,
        JSON,
        Some(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})),
    );
    assert!(
        review["status"]
            .get("authenticated")
            .is_none_or(|a| a == false),
        "{review}"
    );
    assert!(
        review["status"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("deleted"),
        "{review}"
    );
}

#[test]
fn anonymous_requests_only_with_anonymous_auth() {
    let kapi = Kapi::start_with(Backend::Embedded, &["--anonymous-auth"]);
    let bare = kapi.agent_without_certificate();
    // Anonymous is let in (no 401) and is system:anonymous, who may not even ask who
    // it is: system:basic-user is bound to system:authenticated only, as in kube.
    let (code, body) = whoami(&kapi, &bare, None);
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("User \"system:anonymous\" cannot create resource \"selfsubjectreviews\""),
        "{body}"
    );
    // system:public-info-viewer lets anyone read health and version; nothing else.
    for path in ["/healthz", "/livez", "/readyz", "/version"] {
        let res = kapi.exchange_as(&bare, None, "GET", path, JSON, None, None);
        assert_eq!(res.code, 200, "{path}: {}", res.body);
    }
    let res = kapi.exchange_as(&bare, None, "GET", "/api/v1/namespaces", JSON, None, None);
    assert_eq!(res.code, 403, "{}", res.body);
    let status: Value = serde_json::from_str(&res.body).unwrap();
    assert_eq!(
        status["message"],
        "namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
    );
    // An unknown token is still a 401, not anonymous.
    let (code, body) = whoami(&kapi, &bare, Some("nobody-knows-this"));
    assert_unauthorized(code, &body, "a bad token with --anonymous-auth");
}

#[test]
fn tls_by_default_and_insecure_http_only_on_loopback() {
    let kapi = Kapi::start(Backend::Embedded);
    assert!(
        kapi.url().starts_with("https://127.0.0.1:"),
        "{}",
        kapi.url()
    );
    // kubectl verifies the server with the kubeconfig alone, and whoami says who it is.
    let out = kapi.kubectl(&["auth", "whoami"]);
    assert!(out.contains("kapi-admin"), "{out}");
    assert!(
        out.contains("[system:masters system:authenticated]"),
        "{out}"
    );
    // TLS 1.2 and 1.3 only.
    let ca = kapi.data_dir().join("pki/ca.crt");
    let curl = |args: &[&str]| {
        Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(&ca)
            .args(args)
            .arg(format!("{}/version", kapi.url()))
            .output()
            .expect("curl")
    };
    let tls11 = curl(&["--tlsv1.1", "--tls-max", "1.1"]);
    assert!(!tls11.status.success(), "TLS 1.1 was accepted");
    for version in ["1.2", "1.3"] {
        let out = curl(&[&format!("--tlsv{version}"), "--tls-max", version]);
        // No credential: the handshake works and the answer is a 401.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "401", "TLS {version}");
    }
    // Plain HTTP to the HTTPS port is not served.
    let plain = ureq::get(&kapi.url().replace("https://", "http://")).call();
    assert!(plain.is_err() || plain.is_ok_and(|r| r.status() == 400));

    // --insecure-http is refused on a non-loopback address.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(kapi_binary())
        .args([
            "serve",
            "--insecure-http",
            "--listen",
            "0.0.0.0:0",
            "--data-dir",
        ])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("running kapi");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--insecure-http") && stderr.contains("loopback"),
        "{stderr}"
    );
}

#[test]
fn the_operator_s_certificate_and_certificates_reused_across_restarts() {
    let files = tempfile::tempdir().unwrap();
    let ca = TestCa::new("operator-ca");
    let (cert, key) = ca.server();
    let cert_file = write(files.path(), "serving.crt", &cert);
    let key_file = write(files.path(), "serving.key", &key);
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &[
            "--tls-cert-file",
            &cert_file,
            "--tls-private-key-file",
            &key_file,
        ],
    );
    // The kubeconfig trusts the operator's chain; kubectl works with it.
    assert!(
        kapi.credentials()
            .unwrap()
            .ca
            .contains(&ca.cert.trim().to_string())
    );
    let out = kapi.kubectl(&["get", "namespaces", "-o", "name"]);
    assert!(out.contains("namespace/default"), "{out}");
    // The server's own CA does not sign what it serves.
    let own = std::fs::read_to_string(kapi.data_dir().join("pki/ca.crt")).unwrap();
    let strict = https_agent(Some(&own), None);
    assert!(
        strict
            .get(&format!("{}/version", kapi.url()))
            .call()
            .is_err()
    );

    // The server's own certificates are made once and kept.
    let dir = tempfile::tempdir().unwrap();
    let mut first = Kapi::start_in_dir(dir.path());
    let ca_before = std::fs::read_to_string(dir.path().join("pki/ca.crt")).unwrap();
    let serving_before = std::fs::read_to_string(dir.path().join("pki/apiserver.crt")).unwrap();
    assert!(first.stop());
    let second = Kapi::start_in_dir(dir.path());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pki/ca.crt")).unwrap(),
        ca_before
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pki/apiserver.crt")).unwrap(),
        serving_before
    );
    assert_eq!(second.request("GET", "/version", JSON, None).0, 200);
}
