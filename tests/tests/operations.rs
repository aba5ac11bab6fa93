//! Running kapi: several replicas over one etcd, an etcd outage answered with 5xx
//! Status objects (never a crash), compaction surfacing as 410 Gone for watches and
//! continue tokens, HTTP/2, and restarts of the embedded store.

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::time::{Duration, Instant};

use kapi_tests::{Backend, EtcdProcess, Kapi};
use serde_json::{Value, json};

const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const JSON: &str = "application/json";

fn widget(name: &str) -> Value {
    json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": {"color": "red"}})
}

/// The first `n` watch events of a watch URL (bounded by the URL's timeoutSeconds).
fn watch_events(kapi: &Kapi, path_and_query: &str, n: usize) -> Vec<Value> {
    let res = kapi
        .agent()
        .get(&format!("{}{path_and_query}", kapi.url()))
        .call()
        .expect("watch starts");
    let mut events = Vec::new();
    for line in BufReader::new(res.into_body().into_reader()).lines() {
        let line = line.expect("a line");
        if !line.trim().is_empty() {
            events.push(serde_json::from_str(&line).expect("JSON lines"));
        }
        if events.len() == n {
            break;
        }
    }
    events
}

#[test]
fn replicas_share_one_etcd() {
    let etcd = EtcdProcess::start();
    let a = Kapi::start(Backend::SharedEtcd(etcd.endpoint()));
    let b = Kapi::start(Backend::SharedEtcd(etcd.endpoint()));
    let (_, list) = b.request("GET", WIDGETS, JSON, None);
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, created) = a.request("POST", WIDGETS, JSON, Some(&widget("shared")));
    assert_eq!(code, 201, "{created}");
    // The other replica sees the object, and its watch sees the change.
    let (code, got) = b.request("GET", &format!("{WIDGETS}/shared"), JSON, None);
    assert_eq!(
        (code, &got["metadata"]["uid"]),
        (200, &created["metadata"]["uid"])
    );
    let events = watch_events(
        &b,
        &format!("{WIDGETS}?watch=true&resourceVersion={rv}&timeoutSeconds=10"),
        1,
    );
    assert_eq!(events[0]["type"], "ADDED");
    // Optimistic concurrency holds across replicas.
    let mut update = created.clone();
    update["spec"]["replicas"] = json!(3);
    assert_eq!(
        b.request("PUT", &format!("{WIDGETS}/shared"), JSON, Some(&update))
            .0,
        200
    );
    let (code, stale) = a.request("PUT", &format!("{WIDGETS}/shared"), JSON, Some(&update));
    assert_eq!((code, stale["reason"].as_str()), (409, Some("Conflict")));
    // Both replicas' bootstrap created the system namespaces once.
    let (_, namespaces) = a.request("GET", "/api/v1/namespaces", JSON, None);
    let names: Vec<&str> = namespaces["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
}

#[test]
fn an_etcd_outage_is_a_5xx_status_not_a_crash() {
    let etcd = EtcdProcess::start();
    let kapi = Kapi::start(Backend::SharedEtcd(etcd.endpoint()));
    assert_eq!(
        kapi.request("POST", WIDGETS, JSON, Some(&widget("before")))
            .0,
        201
    );
    drop(etcd);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (code, status) = kapi.request("POST", WIDGETS, JSON, Some(&widget("during")));
    assert!(Instant::now() < deadline);
    assert!((500..600).contains(&code), "{code}: {status}");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["reason"], "ServiceUnavailable", "{status}");
    let (code, _) = kapi.request("GET", "/healthz", JSON, None);
    assert_eq!(code, 200, "the server is still up:\n{}", kapi.log_text());
}

#[test]
fn compaction_makes_old_versions_gone() {
    for (name, backend) in Backend::all() {
        let kapi = Kapi::start_with(backend(), &["--compaction-interval", "1s"]);
        for i in 0..3 {
            kapi.request("POST", WIDGETS, JSON, Some(&widget(&format!("c{i}"))));
        }
        let (_, page) = kapi.request("GET", &format!("{WIDGETS}?limit=1"), JSON, None);
        let token = page["metadata"]["continue"]
            .as_str()
            .expect("a continue token")
            .to_string();
        let old_rv = page["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        // Two compaction ticks after a newer write forget old_rv.
        kapi.request("POST", WIDGETS, JSON, Some(&widget("newer")));
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let events = watch_events(
                &kapi,
                &format!("{WIDGETS}?watch=true&resourceVersion={old_rv}&timeoutSeconds=1"),
                1,
            );
            if events.first().is_some_and(|e| e["type"] == "ERROR") {
                let status = &events[0]["object"];
                assert_eq!(
                    (status["code"].as_i64(), status["reason"].as_str()),
                    (Some(410), Some("Expired")),
                    "{name}: {status}"
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: resourceVersion {old_rv} never expired:\n{}",
                kapi.log_text()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let (code, gone) = kapi.request(
            "GET",
            &format!("{WIDGETS}?limit=1&continue={token}"),
            JSON,
            None,
        );
        assert_eq!(
            (code, gone["reason"].as_str()),
            (410, Some("Expired")),
            "{name}: {gone}"
        );
    }
}

/// curl's `%{http_version} %{http_code}` for `GET /api/v1/namespaces` with `args`.
fn curl_namespaces(kapi: &Kapi, args: &[&str]) -> String {
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_version} %{http_code}",
        ])
        .args(args)
        .arg(format!("{}/api/v1/namespaces", kapi.url()))
        .output()
        .expect("curl is installed");
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn http2_over_tls_and_plain_http2_with_insecure_http() {
    let kapi = Kapi::start(Backend::Embedded);
    assert!(kapi.url().starts_with("https://"), "{}", kapi.url());
    let pki = |f: &str| kapi.data_dir().join("pki").join(f).display().to_string();
    let (ca, cert, key) = (pki("ca.crt"), pki("admin.crt"), pki("admin.key"));
    let admin = ["--cacert", &ca, "--cert", &cert, "--key", &key];
    // ALPN picks h2; HTTP/1.1 still works; no certificate is a 401.
    assert_eq!(
        curl_namespaces(&kapi, &[&["--http2"], &admin[..]].concat()),
        "2 200"
    );
    assert_eq!(
        curl_namespaces(&kapi, &[&["--http1.1"], &admin[..]].concat()),
        "1.1 200"
    );
    assert_eq!(curl_namespaces(&kapi, &["--cacert", &ca]), "2 401");

    let plain = Kapi::start_with(Backend::Embedded, &["--insecure-http"]);
    assert!(plain.url().starts_with("http://"), "{}", plain.url());
    assert_eq!(
        curl_namespaces(&plain, &["--http2-prior-knowledge"]),
        "2 200"
    );
    assert!(
        plain
            .log_text()
            .contains("--insecure-http: serving plain HTTP"),
        "the log warns: {}",
        plain.log_text()
    );
}

/// Watches sharing one HTTP/2 connection get their events as they happen, with the
/// connection's writes gathered per turn (`kapi_apiserver::coalesce`): twenty watches
/// of the namespaces on one HTTP/2 connection (TLS, ALPN `h2`) each get every
/// namespace's initial event and then the event of one created on the same connection,
/// every wait bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_sharing_an_http2_connection_get_their_events_at_once() {
    use http_body_util::{BodyExt, Full};
    let kapi = Kapi::start(Backend::Embedded);
    let (code, list) = kapi.request("GET", "/api/v1/namespaces", JSON, None);
    assert_eq!(code, 200, "{list}");
    let namespaces = list["items"].as_array().map_or(0, Vec::len);
    let address = kapi.url().trim_start_matches("https://").to_string();
    let mut tls = kapi.tls_client_config(true);
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let tcp = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls))
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(tcp.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tcp),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let request = |method: &str, path: &str, body: String| {
        let req = hyper::Request::builder()
            .method(method)
            .uri(format!("https://{address}{path}"))
            .header("content-type", "application/json")
            .body(Full::new(bytes::Bytes::from(body)))
            .unwrap();
        let mut sender = sender.clone();
        async move {
            let sent = tokio::time::timeout(Duration::from_secs(10), sender.send_request(req));
            sent.await.expect("an answer within 10 s").unwrap()
        }
    };
    let mut watches = Vec::new();
    for _ in 0..20 {
        let res = request(
            "GET",
            "/api/v1/namespaces?watch=1&timeoutSeconds=60",
            String::new(),
        )
        .await;
        assert_eq!(res.status(), 200);
        watches.push(res.into_body());
    }
    // Reads `body` until `n` more events have come, within 10 s.
    async fn events(body: &mut hyper::body::Incoming, n: usize) -> String {
        let mut text = String::new();
        let read = async {
            while text.matches('\n').count() < n {
                let frame = body.frame().await.expect("the watch goes on").unwrap();
                if let Ok(data) = frame.into_data() {
                    text.push_str(&String::from_utf8_lossy(&data));
                }
            }
        };
        let done = tokio::time::timeout(Duration::from_secs(10), read).await;
        assert!(done.is_ok(), "{n} events did not come within 10 s: {text}");
        text
    }
    for body in &mut watches {
        let initial = events(body, namespaces).await;
        assert_eq!(
            initial.matches(r#""type":"ADDED""#).count(),
            namespaces,
            "{initial}"
        );
    }
    let created = request(
        "POST",
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shared-h2"}})
            .to_string(),
    )
    .await;
    assert_eq!(created.status(), 201);
    for body in &mut watches {
        let event = events(body, 1).await;
        assert!(event.contains(r#""name":"shared-h2""#), "{event}");
    }
}

#[test]
fn restart_keeps_everything_and_watches_resume() {
    let dir = tempfile::tempdir().unwrap();
    let mut kapi = Kapi::start_in_dir(dir.path());
    for i in 0..3 {
        assert_eq!(
            kapi.request("POST", WIDGETS, JSON, Some(&widget(&format!("r{i}"))))
                .0,
            201
        );
    }
    let (_, list) = kapi.request("GET", WIDGETS, JSON, None);
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    kapi.request("DELETE", &format!("{WIDGETS}/r0"), JSON, None);
    kapi.request(
        "PATCH",
        &format!("{WIDGETS}/r1"),
        "application/merge-patch+json",
        Some(&json!({"spec": {"replicas": 5}})),
    );
    assert!(kapi.stop(), "kapi exits 0 on SIGTERM:\n{}", kapi.log_text());
    let kapi = Kapi::start_in_dir(dir.path());
    let (_, after) = kapi.request("GET", WIDGETS, JSON, None);
    let names: Vec<&str> = after["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["r1", "r2"]);
    assert_eq!(after["items"][0]["spec"]["replicas"], 5);
    // A watch resumed from before the restart misses nothing.
    let events = watch_events(
        &kapi,
        &format!("{WIDGETS}?watch=true&resourceVersion={rv}&timeoutSeconds=3"),
        2,
    );
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["object"]["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("DELETED", "r0"), ("MODIFIED", "r1")]);
}

#[test]
fn sigterm_ends_watches_and_exits_cleanly() {
    let mut kapi = Kapi::start(Backend::Embedded);
    let res = kapi
        .agent()
        .get(&format!("{}{WIDGETS}?watch=true", kapi.url()))
        .call()
        .expect("watch starts");
    let reader = std::thread::spawn(move || {
        // Reads until the server ends the stream.
        BufReader::new(res.into_body().into_reader())
            .lines()
            .count()
    });
    let started = Instant::now();
    assert!(kapi.stop(), "kapi exits 0 on SIGTERM:\n{}", kapi.log_text());
    assert!(started.elapsed() < Duration::from_secs(20));
    reader.join().expect("the watch stream ended");
    assert!(kapi.log_text().contains("stopped"), "{}", kapi.log_text());
}
