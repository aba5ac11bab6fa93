//! kubectl 1.27 and 1.28 against kapi: they validate manifests (`apply -f`, `create -f`
//! with the default `--validate=strict`) with the OpenAPI v2 document fetched as
//! gnostic protobuf, so `/openapi/v2` must answer
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`. Checks the
//! negotiation of that endpoint over raw HTTP, then that both releases create valid
//! manifests and reject unknown fields naming them.

use kapi_tests::{Backend, Kapi, kubectl_dir};

/// What kubectl up to 1.28 sends in `Accept` for `/openapi/v2`.
const PROTOBUF_ACCEPT: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// What kube-apiserver (and kapi) answer it with.
const PROTOBUF_CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `GET /openapi/v2` with `headers`: status, the named response headers and the body.
fn get_v2(kapi: &Kapi, headers: &[(&str, &str)]) -> (u16, ureq::http::HeaderMap, Vec<u8>) {
    let agent = kapi.agent();
    let mut req = ureq::http::Request::builder()
        .method("GET")
        .uri(format!("{}/openapi/v2", kapi.url()));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = agent
        .run(req.body(()).expect("a request"))
        .expect("GET /openapi/v2");
    let code = res.status().as_u16();
    let headers = res.headers().clone();
    let body = res.into_body().read_to_vec().unwrap_or_default();
    (code, headers, body)
}

fn header<'a>(headers: &'a ureq::http::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

#[test]
fn openapi_v2_is_served_as_protobuf_on_request() {
    let kapi = Kapi::start(Backend::Embedded);

    let (code, json_headers, json) = get_v2(&kapi, &[("Accept", "application/json")]);
    assert_eq!(code, 200);
    assert_eq!(header(&json_headers, "content-type"), "application/json");
    let doc: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
    assert_eq!(doc["swagger"], "2.0");

    for accept in [
        PROTOBUF_ACCEPT,
        PROTOBUF_CONTENT_TYPE,
        // A client preferring protobuf over JSON gets protobuf.
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json;q=0.5",
    ] {
        let (code, headers, body) = get_v2(&kapi, &[("Accept", accept)]);
        assert_eq!(code, 200, "{accept}");
        assert_eq!(
            header(&headers, "content-type"),
            PROTOBUF_CONTENT_TYPE,
            "{accept}"
        );
        assert_eq!(header(&headers, "vary"), "Accept");
        // One ETag for both encodings (they differ by `Vary: Accept`), as kube-openapi.
        assert_eq!(header(&headers, "etag"), header(&json_headers, "etag"));
        assert!(header(&headers, "etag").starts_with('"'));
        // A protobuf message, not JSON: starts with field 1 (`swagger`, "2.0").
        assert_eq!(&body[..5], b"\x0a\x032.0", "{accept}");
        assert!(
            body.windows(b"dev.kapi.example.v1.Widget".len())
                .any(|w| w == b"dev.kapi.example.v1.Widget")
        );
    }

    // JSON stays the default, for wildcards too.
    for accept in ["*/*", "application/*", "application/json, */*"] {
        let (code, headers, _) = get_v2(&kapi, &[("Accept", accept)]);
        assert_eq!(code, 200, "{accept}");
        assert_eq!(
            header(&headers, "content-type"),
            "application/json",
            "{accept}"
        );
    }

    // Unknown media types are still refused.
    let (code, _, _) = get_v2(&kapi, &[("Accept", "application/vnd.kubernetes.protobuf")]);
    assert_eq!(code, 406);

    // A matching If-None-Match is answered 304, without a body.
    let etag = header(&json_headers, "etag").to_string();
    let (code, headers, body) = get_v2(
        &kapi,
        &[
            ("Accept", PROTOBUF_ACCEPT),
            ("If-None-Match", etag.as_str()),
        ],
    );
    assert_eq!(code, 304);
    assert_eq!(header(&headers, "etag"), etag);
    assert!(body.is_empty());
}

/// A widget in `default`, with an extra `spec` member when `extra` is given.
fn widget(name: &str, extra: Option<&str>) -> String {
    let extra = extra.map(|e| format!("  {e}\n")).unwrap_or_default();
    format!(
        "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  color: red\n  replicas: 2\n{extra}"
    )
}

#[test]
fn kubectl_1_27_and_1_28_validate_strictly() {
    let kapi = Kapi::start(Backend::Embedded);
    for v in ["1.27", "1.28"] {
        assert!(
            kubectl_dir().join(format!("kubectl.{v}")).exists(),
            "kubectl.{v} is not installed beside kubectl"
        );
        let name = format!("w{}", v.replace('.', "-"));

        // An unknown field: refused, naming the field, and nothing is created.
        for verb in ["apply", "create"] {
            let out = kapi.kubectl_version(
                Some(v),
                &[verb, "--validate=strict", "-f", "-"],
                Some(&widget(&name, Some("bogusField: 1"))),
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "kubectl {v} {verb} accepted an unknown field:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert!(
                stderr.contains("bogusField"),
                "kubectl {v} {verb}: the error does not name the field:\n{stderr}"
            );
            assert!(
                !stderr.contains("could not find the requested resource"),
                "kubectl {v} {verb}: {stderr}"
            );
        }
        let out = kapi.kubectl_version(Some(v), &["get", "wd", &name], None);
        assert!(!out.status.success(), "kubectl {v}: {name} was created");

        // The same manifest without it: applied, then applied again after an edit, and
        // created by `create -f` under another name.
        let out = kapi.kubectl_ok(
            Some(v),
            &["apply", "--validate=strict", "-f", "-"],
            Some(&widget(&name, None)),
        );
        assert_eq!(
            out.trim(),
            format!("widget.example.kapi.dev/{name} created"),
            "kubectl {v}"
        );
        let out = kapi.kubectl_ok(
            Some(v),
            &["apply", "-f", "-"],
            Some(&widget(&name, Some("size: large"))),
        );
        assert_eq!(
            out.trim(),
            format!("widget.example.kapi.dev/{name} configured"),
            "kubectl {v}"
        );
        let other = format!("{name}-created");
        let out = kapi.kubectl_ok(
            Some(v),
            &["create", "--validate=strict", "-f", "-"],
            Some(&widget(&other, None)),
        );
        assert_eq!(
            out.trim(),
            format!("widget.example.kapi.dev/{other} created"),
            "kubectl {v}"
        );
        let size = kapi.kubectl_ok(
            Some(v),
            &["get", "wd", &name, "-o", "jsonpath={.spec.size}"],
            None,
        );
        assert_eq!(size, "large", "kubectl {v}");

        // A built-in kind too.
        let out = kapi.kubectl_version(
            Some(v),
            &["create", "-f", "-"],
            Some(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\nbogusTop: 1\n"
            )),
        );
        assert!(!out.status.success(), "kubectl {v}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("bogusTop"),
            "kubectl {v}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
