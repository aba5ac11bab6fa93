//! Bounded work per request and private files (issue #17, the security review).
//!
//! - The JSON patch that doubles a document with `copy` (with and without the final
//!   `remove`) is refused with kube's error before it grows: the server's memory stays
//!   where it was, and the answer and the audit line stay small.
//! - Other paths whose work could grow faster than the request answer within the
//!   request timeout, in a bounded body: strategic merge of long keyed lists with
//!   `$setElementOrder`, merge patches of long lists, label selectors of many values,
//!   field errors of huge values and of very many fields, CEL rules over long lists
//!   (time linear in the list; a cost limit on rules nested over lists comes with
//!   issue #22's CEL work).
//! - Everything under a fresh data directory is its owner's alone, and a start over a
//!   wide one tightens it; the audit log keeps the operator's mode when named.
//! - kube's two divergences: `Bearer  token` (two spaces) is no credential, and path
//!   segments are percent-decoded.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const SERVICES: &str = "/api/v1/namespaces/default/services";

/// The server's resident memory in KiB.
fn rss_kib(kapi: &Kapi) -> u64 {
    kapi_tests::rss_bytes(kapi.pid().expect("the server runs")) / 1024
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn send(kapi: &Kapi, method: &str, path: &str, content_type: &str, body: &Value) -> (u16, String) {
    let bytes = serde_json::to_vec(body).expect("JSON");
    let res = kapi.exchange(method, path, content_type, None, Some(&bytes));
    (res.code, res.body)
}

/// The security review's patch: a 1 KiB map added as an annotation, copied into itself
/// `copies` times (each copy doubles it), then, if `remove`, removed again.
fn doubling_patch(copies: usize, remove: bool) -> Value {
    let map: serde_json::Map<String, Value> = (0..16)
        .map(|i| (format!("k{i:02}"), Value::from("v".repeat(56))))
        .collect();
    let mut ops = vec![json!({"op": "add", "path": "/metadata/annotations/a", "value": map})];
    for i in 0..copies {
        ops.push(json!({"op": "copy", "from": "/metadata/annotations/a",
            "path": format!("/metadata/annotations/a/c{i}")}));
    }
    if remove {
        ops.push(json!({"op": "remove", "path": "/metadata/annotations/a"}));
    }
    Value::Array(ops)
}

#[test]
fn copy_doubling_patch_is_refused_before_it_grows() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.log");
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--audit-log-path", audit.to_str().unwrap()],
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "doubled", "annotations": {"keep": "me"}}, "data": {"k": "v"}});
    let (code, created) = send(&kapi, "POST", CONFIGMAPS, JSON, &cm);
    assert_eq!(code, 201, "{created}");
    let path = format!("{CONFIGMAPS}/doubled");
    // Warm up the patch path, so that what it allocates once is in the baseline.
    let (code, body) = send(&kapi, "PATCH", &path, JSON_PATCH, &doubling_patch(2, true));
    assert_eq!(code, 200, "{body}");
    let warmed: Value = serde_json::from_str(&body).unwrap();
    // What the server does in the background after it is ready is in the baseline too.
    kapi.settle();
    let before = rss_kib(&kapi);
    let mut peak = before;
    for (copies, remove) in [(20, true), (20, false), (24, true), (40, false)] {
        let (code, body) = send(
            &kapi,
            "PATCH",
            &path,
            JSON_PATCH,
            &doubling_patch(copies, remove),
        );
        let status: Value = serde_json::from_str(&body).expect("a Status");
        assert_eq!(
            (code, status["reason"].as_str()),
            (422, Some("Invalid")),
            "{body}"
        );
        let message = status["message"].as_str().unwrap();
        assert!(
            message.starts_with("the server rejected our request due to an error in our request: Unable to complete the copy, the accumulated size increase of copy is ")
                && message.ends_with(", exceeding the limit 3145728"),
            "{message}"
        );
        assert!(body.len() < 1024, "{} bytes", body.len());
        peak = peak.max(rss_kib(&kapi));
    }
    let (code, now) = kapi.request("GET", &path, JSON, None);
    assert_eq!(code, 200);
    assert_eq!(now["metadata"]["annotations"], json!({"keep": "me"}));
    assert_eq!(
        now["metadata"]["resourceVersion"], warmed["metadata"]["resourceVersion"],
        "nothing was written after the warm-up patch"
    );
    let grown = peak.saturating_sub(before);
    eprintln!("copy-doubling patches: RSS {before} KiB before, peak {peak} KiB (+{grown} KiB)");
    // Up to 2 MiB of document is built before the copy that passes 3 MiB is refused,
    // and copies of it are briefly alive: a few MiB, never the gigabytes of the doubling.
    assert!(grown < 24 * 1024, "RSS grew by {grown} KiB");

    kapi.request("GET", "/healthz", JSON, None);
    let text = std::fs::read_to_string(&audit).unwrap();
    let longest = text.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 8 * 1024, "an audit line of {longest} bytes");
    assert!(
        text.len() < 256 * 1024,
        "an audit log of {} bytes",
        text.len()
    );
    assert!(
        text.contains("Unable to complete the copy"),
        "the refusals are audited"
    );
}

/// A request the server must answer within its request timeout (`--request-timeout
/// 20s` below): a 504 would say its work grew faster than its input.
fn answered(
    kapi: &Kapi,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (u16, String) {
    let started = Instant::now();
    let (code, text) = send(kapi, method, path, content_type, body);
    eprintln!(
        "{method} {} ({} bytes): {code} in {:?}, {} bytes back",
        path.split('?').next().unwrap_or(path),
        serde_json::to_vec(body).unwrap().len(),
        started.elapsed(),
        text.len()
    );
    assert!(code < 500, "{code}: {}", &text[..text.len().min(500)]);
    assert!(text.len() < 128 * 1024, "an answer of {} bytes", text.len());
    (code, text)
}

#[test]
fn work_that_could_grow_faster_than_the_request_is_bounded() {
    let kapi = Kapi::start_with(Backend::Embedded, &["--request-timeout", "20s"]);

    // Strategic merge of a keyed list of 20,000 items with `$setElementOrder`: every
    // item is found by its key in a hash map, not by a scan of the list, and the list's
    // keys are checked unique through a hash set (both took minutes, quadratic, before).
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "wide"},
        "spec": {"ports": [{"port": 1, "protocol": "TCP"}]}});
    let (code, body) = send(&kapi, "POST", SERVICES, JSON, &svc);
    assert_eq!(code, 201, "{body}");
    let n = 20_000;
    let ports: Vec<Value> = (1..=n)
        .map(|p| json!({"port": p, "protocol": "TCP"}))
        .collect();
    let order: Vec<Value> = (1..=n).rev().map(|p| json!({"port": p})).collect();
    let patch = json!({"spec": {"ports": ports, "$setElementOrder/ports": order}});
    let (code, _) = answered(
        &kapi,
        "PATCH",
        &format!("{SERVICES}/wide"),
        STRATEGIC,
        &patch,
    );
    assert!(matches!(code, 413 | 422), "{code}");
    // Deleting many items of a long primitive list and keyed items with `$patch: delete`.
    let finalizers: Vec<Value> = (0..n).map(|i| Value::from(format!("x/{i}"))).collect();
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": finalizers},
        "spec": {"ports": (1..=n).map(|p| json!({"port": p, "$patch": "delete"})).collect::<Vec<_>>()}});
    answered(
        &kapi,
        "PATCH",
        &format!("{SERVICES}/wide"),
        STRATEGIC,
        &patch,
    );

    // A merge patch replacing a list with one of 3 MB: bounded by the object limit.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lists"}});
    let (code, body) = send(&kapi, "POST", CONFIGMAPS, JSON, &cm);
    assert_eq!(code, 201, "{body}");
    let long: Vec<Value> = (0..250_000).map(|i| Value::from(format!("f{i}"))).collect();
    let patch = json!({"metadata": {"finalizers": long}});
    let (code, _) = answered(
        &kapi,
        "PATCH",
        &format!("{CONFIGMAPS}/lists"),
        MERGE_PATCH,
        &patch,
    );
    assert!(matches!(code, 413 | 422), "{code}");

    // A label selector of 2,000 values twice over the namespace's ConfigMaps (a URI holds at
    // most 64 KiB): each value is found by a binary search, not a scan.
    let values: Vec<String> = (0..2_000).map(|i| format!("v{i}")).collect();
    let selector = format!(
        "app in ({}),tier notin ({})",
        values.join(","),
        values.join(",")
    );
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("labelSelector", &selector)
        .finish();
    let res = kapi.exchange("GET", &format!("{CONFIGMAPS}?{query}"), JSON, None, None);
    assert_eq!(res.code, 200, "{}", &res.body[..res.body.len().min(300)]);

    // Field errors quote a bounded prefix of a huge value, and a bounded number of them.
    let huge = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "huge", "labels": {"app": "x".repeat(1 << 20)}}});
    let (code, body) = answered(&kapi, "POST", CONFIGMAPS, JSON, &huge);
    assert_eq!(code, 422);
    assert!(
        body.contains("(1048576 bytes, truncated)"),
        "{}",
        &body[..body.len().min(600)]
    );
    let labels: serde_json::Map<String, Value> = (0..50_000)
        .map(|i| (format!("bad key {i}"), Value::from("v")))
        .collect();
    let many = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "many", "labels": labels}});
    let (code, body) = answered(&kapi, "POST", CONFIGMAPS, JSON, &many);
    assert_eq!(code, 422);
    let status: Value = serde_json::from_str(&body).unwrap();
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains(" more errors]"),
        "{}",
        &message[message.len().saturating_sub(200)..]
    );
}

#[test]
fn cel_rules_over_long_lists_answer_in_bounds() {
    let kapi = Kapi::start_with(Backend::Embedded, &["--request-timeout", "20s"]);
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "lists.bounds.kapi.dev"},
        "spec": {"group": "bounds.kapi.dev", "scope": "Namespaced",
            "names": {"plural": "lists", "singular": "list", "kind": "List", "listKind": "ListList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "items": {"type": "array", "items": {"type": "string",
                        "x-kubernetes-validations": [{"rule": "self.size() < 3"}]},
                        "x-kubernetes-validations": [{"rule": "self.all(x, x != 'forbidden')"}]}}}}}}}]}});
    kapi.establish(&crd);
    // A rule on each of 100,000 items, and one over the list: time linear in the list,
    // one error per item, a bounded answer.
    let items: Vec<Value> = (0..100_000)
        .map(|i| Value::from(format!("{i:05}")))
        .collect();
    let obj = json!({"apiVersion": "bounds.kapi.dev/v1", "kind": "List",
        "metadata": {"name": "long"}, "spec": {"items": items}});
    let (code, body) = answered(
        &kapi,
        "POST",
        "/apis/bounds.kapi.dev/v1/namespaces/default/lists",
        JSON,
        &obj,
    );
    assert_eq!(code, 422, "{}", &body[..body.len().min(300)]);
    // Go's JSON encoder writes `<` as \u003c, and so does kapi (as kube-apiserver).
    assert!(
        body.contains("failed rule: self.size() \\u003c 3") && body.contains(" more errors]"),
        "{}",
        &body[..body.len().min(600)]
    );
}

/// Starts `kapi serve` on a data directory that does not exist yet, waits for its
/// kubeconfig, and stops it: the harness makes its data directory itself.
fn first_start(data_dir: &Path, audit: &Path) {
    let mut child = Command::new(kapi_tests::kapi_binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .arg("--audit-log-path")
        .arg(audit)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting kapi");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(data_dir.join("kubeconfig").exists() && audit.exists()) {
        assert!(
            Instant::now() < deadline,
            "no kubeconfig and audit log within 60 s"
        );
        assert!(child.try_wait().unwrap().is_none(), "kapi exited");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn what_the_server_keeps_on_disk_is_private() {
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = root.path().join("data");
    let audit = root.path().join("logs/audit.log");
    first_start(&data, &audit);
    let keys: Vec<_> = std::fs::read_dir(data.join("pki"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "key"))
        .collect();
    assert!(keys.len() >= 4, "{keys:?}");
    let private = |what: &str| {
        assert_eq!(mode(&data), 0o700, "{what}: the data directory");
        assert_eq!(mode(&data.join("pki")), 0o700, "{what}: pki/");
        assert_eq!(mode(&data.join("kapi.redb")), 0o600, "{what}: the database");
        assert_eq!(
            mode(&data.join("kubeconfig")),
            0o600,
            "{what}: the kubeconfig"
        );
        for key in &keys {
            assert_eq!(mode(key), 0o600, "{what}: {}", key.display());
        }
        assert_eq!(mode(&audit), 0o600, "{what}: the audit log");
    };
    private("fresh");

    // Widened by hand (or an older kapi): the next start tightens it, and says so.
    let wide = |path: &Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap()
    };
    wide(&data, 0o755);
    wide(&data.join("pki"), 0o755);
    wide(&data.join("kapi.redb"), 0o644);
    wide(&audit, 0o644);
    for key in &keys {
        wide(key, 0o644);
    }
    let mut kapi = Kapi::start_in_dir_with(&data, &["--audit-log-path", audit.to_str().unwrap()]);
    private("restarted");
    let log = kapi.log_text();
    assert!(
        log.contains("tightened") && log.contains("readable by others"),
        "{log}"
    );

    // A mode the operator names is the audit log's.
    kapi.restart(&[
        "--audit-log-path",
        audit.to_str().unwrap(),
        "--audit-log-file-mode",
        "0640",
    ]);
    assert_eq!(mode(&audit), 0o640);
}

#[test]
fn bearer_tokens_and_paths_are_read_as_kube_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "s3cret,alice,1,\"system:masters\"\n").unwrap();
    let kapi = Kapi::start_with(
        Backend::Embedded,
        &["--token-auth-file", tokens.to_str().unwrap()],
    );
    let agent = kapi.agent_without_certificate();
    let get = |token: &str| {
        kapi.exchange_as(
            &agent,
            Some(token),
            "GET",
            "/api/v1/namespaces/default",
            JSON,
            None,
            None,
        )
    };
    assert_eq!(get("s3cret").code, 200);
    assert_eq!(get("s3cret  ").code, 200, "trailing spaces are trimmed");
    let spaced = get(" s3cret");
    assert_eq!(spaced.code, 401, "{}", spaced.body);
    assert_eq!(
        spaced.warnings,
        [
            "299 - \"the provided Authorization header contains extra space before the bearer token, and is ignored\""
        ]
    );
    assert_eq!(
        get("s3cret extra").code,
        200,
        "the word after the first space is the token"
    );

    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let (code, body) = send(&kapi, "POST", CONFIGMAPS, JSON, &cm);
    assert_eq!(code, 201, "{body}");
    let (code, found) = kapi.request("GET", &format!("{CONFIGMAPS}/%61"), JSON, None);
    assert_eq!((code, found["metadata"]["name"].as_str()), (200, Some("a")));
    let (code, missing) = kapi.request("GET", &format!("{CONFIGMAPS}/%C3%A9"), JSON, None);
    assert_eq!(code, 404);
    assert_eq!(missing["message"], "configmaps \"é\" not found");
    let (code, _) = kapi.request(
        "GET",
        "/api/v1/namespaces/d%65fault/configmaps/a",
        JSON,
        None,
    );
    assert_eq!(code, 200, "a namespace is decoded too");
}
