//! kapi as a library (issue #24): a server started in this process with
//! `kapi::server::start` on a free loopback port and a temporary data directory,
//! every built-in or only a few taken out of the generated `register`
//! (`kapi_core::Only`), answering, then stopped cleanly. Plain HTTP on loopback keeps
//! the client a few lines of TCP.

use std::time::Duration;

use kapi::server::{SecurityConfig, ServeConfig, start};
use kapi_apiserver::registry::Resources;
use kapi_core::Only;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `method path` with a JSON `body` over plain HTTP/1.1: the status and body.
async fn http(
    address: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    http_as(None, address, method, path, body).await
}

/// [`http`] with a bearer token (without one, plain HTTP acts as `system:masters`).
async fn http_as(
    token: Option<&str>,
    address: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    let mut tcp = tokio::net::TcpStream::connect(address)
        .await
        .expect("connecting");
    let credentials = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: kapi\r\nConnection: close\r\n{credentials}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.expect("writing");
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).await.expect("reading");
    let code = answer
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (code, body.to_string())
}

/// What the `kapi` binary compiles in (the built-ins and the repository's own kinds)
/// that `keep` keeps.
fn compiled(keep: impl Fn(&kapi_core::ResourceInfo) -> bool) -> Resources {
    let mut resources = Resources::new();
    kapi_kube::generated::register(&mut Only::new(&mut resources, &keep));
    kapi_custom::generated::register(&mut Only::new(&mut resources, &keep));
    resources
}

fn config(dir: &std::path::Path) -> ServeConfig {
    ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: dir.to_path_buf(),
        security: SecurityConfig {
            insecure_http: true,
            ..SecurityConfig::default()
        },
        ..ServeConfig::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

#[test]
fn every_built_in_starts_in_process_answers_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let server = start(config(dir.path()), compiled(|_| true))
            .await
            .expect("started");
        let ready = server.ready().clone();
        assert!(ready.url.starts_with("http://127.0.0.1:"), "{ready:?}");
        assert_ne!(ready.address.port(), 0);
        assert!(ready.kubeconfig.exists());
        let (code, _) = http(ready.address, "GET", "/readyz", "").await;
        assert_eq!(code, 200);
        server.stop().await.expect("a clean stop");
        // Stopped: nothing listens there any more.
        assert!(
            tokio::net::TcpStream::connect(ready.address).await.is_err(),
            "still listening"
        );
    });
}

#[test]
fn a_server_of_a_few_kinds_is_ready_without_waiting_for_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        // The Widget, Namespaces and the RBAC kinds: no webhook configurations, CRDs,
        // flow control or admission policies to wait for.
        let resources = compiled(|r| {
            r.group == "example.kapi.dev"
                || (r.group.is_empty() && r.kind == "Namespace")
                || r.group == "rbac.authorization.k8s.io"
        });
        let kinds: std::collections::BTreeSet<String> = resources
            .strategies()
            .iter()
            .map(|s| s.info().kind.to_string())
            .collect();
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [
                "ClusterRole",
                "ClusterRoleBinding",
                "Namespace",
                "Role",
                "RoleBinding",
                "Widget"
            ]
        );
        // Bounded well below the 60 s a missing informer would wait.
        let server = tokio::time::timeout(
            Duration::from_secs(30),
            start(config(dir.path()), resources),
        )
        .await
        .expect("ready without waiting out a missing kind")
        .expect("started");
        let address = server.ready().address;
        let widgets = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
        let (code, made) = http(
            address,
            "POST",
            widgets,
            r#"{"metadata":{"name":"w"},"spec":{"color":"red"}}"#,
        )
        .await;
        assert_eq!(code, 201, "{made}");
        let (code, _) = http(address, "GET", &format!("{widgets}/w"), "").await;
        assert_eq!(code, 200);
        // What is not served is not there.
        let (code, _) = http(address, "GET", "/api/v1/namespaces/default/pods", "").await;
        assert_eq!(code, 404);
        server.stop().await.expect("a clean stop");
    });
}

#[test]
fn what_a_server_needs_at_the_least_is_enforced_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        // A namespaced kind without Namespaces.
        let err = start(
            config(dir.path()),
            compiled(|r| r.group == "example.kapi.dev" || r.group == "rbac.authorization.k8s.io"),
        )
        .await
        .expect_err("no Namespaces");
        assert!(
            err.to_string().starts_with(
                "namespaced resources (rolebindings.rbac.authorization.k8s.io, roles.rbac.authorization.k8s.io, widgets.example.kapi.dev) need the Namespace kind"
            ),
            "{err}"
        );
        // RBAC authorization (the default) without the RBAC kinds.
        let own = |r: &kapi_core::ResourceInfo| {
            r.group == "example.kapi.dev" || (r.group.is_empty() && r.kind == "Namespace")
        };
        let err = start(config(dir.path()), compiled(own))
            .await
            .expect_err("no RBAC kinds");
        assert!(
            err.to_string()
                .starts_with("the RBAC authorization mode reads its policy from the RBAC kinds"),
            "{err}"
        );
        // The same kinds with AlwaysAllow: a control plane that delegates nothing.
        let mut allow_all = config(dir.path());
        allow_all.security.authorization_modes =
            vec![kapi_apiserver::authorization::Mode::AlwaysAllow];
        let server = start(allow_all, compiled(own)).await.expect("started");
        let (code, _) = http(
            server.ready().address,
            "GET",
            "/apis/example.kapi.dev/v1/widgets",
            "",
        )
        .await;
        assert_eq!(code, 200);
        server.stop().await.expect("a clean stop");
    });
}

/// The modes a control plane of its own kinds can run under, each asked as a user with
/// no grant: AlwaysAllow lets him in, AlwaysDeny and RBAC (with the RBAC kinds) keep
/// him out, and Webhook asks another kapi, in process, whose AlwaysAllow answers its
/// SubjectAccessReviews (the kubeconfig it wrote, with its admin's client certificate,
/// is the webhook's), as a control plane delegating authorization would.
#[test]
fn a_control_plane_of_its_own_kinds_runs_under_each_authorization_mode() {
    use kapi_apiserver::authorization::Mode;
    use kapi_apiserver::authorization::webhook::WebhookConfig;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "tok-bob,bob,uid-bob,\"\"\n").unwrap();
    let widgets = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
    runtime().block_on(async {
        let own = |rbac: bool| {
            compiled(move |r| {
                r.group == "example.kapi.dev"
                    || (r.group.is_empty() && r.kind == "Namespace")
                    || (rbac && r.group == "rbac.authorization.k8s.io")
            })
        };
        // The authorizing server: HTTPS, only the SubjectAccessReview kinds, AlwaysAllow.
        let mut decider = config(&dir.path().join("decider"));
        decider.security.insecure_http = false;
        decider.security.authorization_modes = vec![Mode::AlwaysAllow];
        let mut reviews = Resources::new();
        kapi_kube::generated::register(&mut Only::new(&mut reviews, |r| {
            r.group == "authorization.k8s.io"
        }));
        let decider = start(decider, reviews).await.expect("the decider started");
        let webhook = dir.path().join("webhook.kubeconfig");
        let url = &decider.ready().url;
        let kubeconfig = std::fs::read_to_string(&decider.ready().kubeconfig).unwrap();
        let sar = format!("{url}/apis/authorization.k8s.io/v1/subjectaccessreviews");
        std::fs::write(
            &webhook,
            kubeconfig.replace(&format!("server: {url}\n"), &format!("server: {sar}\n")),
        )
        .unwrap();

        for (modes, rbac, wanted) in [
            (vec![Mode::AlwaysAllow], false, 200),
            (vec![Mode::AlwaysDeny], false, 403),
            (vec![Mode::Rbac], true, 403),
            (vec![Mode::Webhook], false, 200),
        ] {
            let mut cfg = config(&dir.path().join(format!("{modes:?}")));
            cfg.security.token_auth_file = Some(tokens.clone());
            if modes == [Mode::Webhook] {
                cfg.security.authorization_webhook = Some(WebhookConfig {
                    version: "v1".into(),
                    ..WebhookConfig::new(&webhook)
                });
            }
            cfg.security.authorization_modes = modes.clone();
            let server = start(cfg, own(rbac)).await.expect("started");
            let address = server.ready().address;
            let (code, body) = http_as(Some("tok-bob"), address, "GET", widgets, "").await;
            assert_eq!(code, wanted, "{modes:?}: {body}");
            // The admin (system:masters) whatever the modes.
            assert_eq!(http(address, "GET", widgets, "").await.0, 200, "{modes:?}");
            server.stop().await.expect("a clean stop");
        }
        decider.stop().await.expect("a clean stop");
    });
}
