//! Bodies byte for byte as kube-apiserver writes them, over raw HTTP: a `Status` in its
//! Go struct's field order and every API document ended by a newline (Go's
//! `json.Encoder`); indented JSON (`json.MarshalIndent`, no newline) for `?pretty=true`
//! and for curl, Wget and browsers, but never for watch streams; `/version` always
//! indented; and a body of the wrong kind refused in kube's words.

use kapi_tests::{Backend, Kapi};

const JSON: &str = "application/json";
const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A raw request with extra headers; the code and the body exactly as it came.
fn send(
    kapi: &Kapi,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, String) {
    let mut builder = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{}{path}", kapi.url()));
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let res = match body {
        Some(b) => kapi.agent().run(
            builder
                .header("Content-Type", JSON)
                .body(b.as_bytes().to_vec())
                .expect("a request"),
        ),
        None => kapi.agent().run(builder.body(()).expect("a request")),
    }
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let code = res.status().as_u16();
    (code, res.into_body().read_to_string().expect("a body"))
}

/// The bytes kube-apiserver sends for a failure `Status` without details.
fn failure(message: &str, reason: &str, code: u16) -> String {
    format!(
        "{{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{{}},\"status\":\"Failure\",\
         \"message\":{},\"reason\":\"{reason}\",\"code\":{code}}}\n",
        serde_json::to_string(message).unwrap()
    )
}

fn status_is_kubes_bytes_compact_or_indented(kapi: &Kapi) {
    let missing = format!("{WIDGETS}/missing");
    let compact = concat!(
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
        r#""message":"widgets.example.kapi.dev \"missing\" not found","reason":"NotFound","#,
        r#""details":{"name":"missing","group":"example.kapi.dev","kind":"widgets"},"code":404}"#,
        "\n"
    );
    assert_eq!(
        send(kapi, "GET", &missing, &[], None),
        (404, compact.into())
    );
    // What json.MarshalIndent(status, "", "  ") writes: no trailing newline.
    let indented = r#"{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "widgets.example.kapi.dev \"missing\" not found",
  "reason": "NotFound",
  "details": {
    "name": "missing",
    "group": "example.kapi.dev",
    "kind": "widgets"
  },
  "code": 404
}"#;
    let pretty = |path: &str, headers: &[(&str, &str)]| send(kapi, "GET", path, headers, None);
    for (path, headers) in [
        (format!("{missing}?pretty=true"), vec![]),
        (format!("{missing}?pretty=1"), vec![]),
        (missing.clone(), vec![("User-Agent", "curl/8.5.0")]),
        (missing.clone(), vec![("User-Agent", "Wget/1.21.4")]),
        (
            missing.clone(),
            vec![("Accept", "application/json;pretty=1")],
        ),
    ] {
        assert_eq!(
            pretty(&path, &headers),
            (404, indented.into()),
            "{path} {headers:?}"
        );
    }
    // `pretty=false` wins over curl; any other user agent gets compact JSON.
    let curl = [("User-Agent", "curl/8.5.0")];
    assert_eq!(pretty(&format!("{missing}?pretty=false"), &curl).1, compact);
    assert_eq!(
        pretty(&missing, &[("User-Agent", "kubectl/v1.33.0")]).1,
        compact
    );
    // An error that no type the client accepts can carry is indented (WriteRawJSON).
    let (code, body) = pretty(&missing, &[("Accept", "text/html")]);
    assert_eq!(code, 406);
    assert!(body.starts_with("{\n  \"kind\": \"Status\",\n") && !body.ends_with('\n'));
}

fn documents_end_with_a_newline_and_indent_on_request(kapi: &Kapi) {
    let cm =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nl"},"data":{"a":"<b>"}}"#;
    let (code, created) = send(kapi, "POST", CONFIGMAPS, &[], Some(cm));
    assert_eq!(code, 201, "{created}");
    let one_line = |body: &str| body.ends_with("}\n") && body.matches('\n').count() == 1;
    assert!(one_line(&created), "{created:?}");
    for path in [
        format!("{CONFIGMAPS}/nl"),
        CONFIGMAPS.to_string(),
        "/api".into(),
        "/apis".into(),
    ] {
        let (code, body) = send(kapi, "GET", &path, &[], None);
        assert!(code == 200 && one_line(&body), "{path}: {code} {body:?}");
        let (code, indented) = send(kapi, "GET", &path, &curl(), None);
        assert_eq!(code, 200, "{path}: {indented}");
        assert!(
            indented.starts_with("{\n  \"") && indented.ends_with("\n}"),
            "{path}: {indented:?}"
        );
        let same = |b: &str| serde_json::from_str::<serde_json::Value>(b).unwrap();
        assert_eq!(same(&indented)["kind"], same(&body)["kind"], "{path}");
    }
    // A watch stays one event a line, whatever the request says.
    let watch = format!("{CONFIGMAPS}?watch=1&resourceVersion=0&timeoutSeconds=1&pretty=true");
    let (code, events) = send(kapi, "GET", &watch, &curl(), None);
    assert_eq!(code, 200);
    let lines: Vec<&str> = events.lines().collect();
    assert!(!lines.is_empty(), "{events:?}");
    for line in lines {
        assert!(
            line.starts_with("{\"type\":\"ADDED\",\"object\":{"),
            "{line}"
        );
    }
    // /version is always indented, in version.Info's field order, with no newline.
    let (code, version) = send(kapi, "GET", "/version", &[], None);
    assert_eq!(code, 200);
    assert!(
        version.starts_with("{\n  \"major\": \"1\",\n  \"minor\": \"33\",\n  \"gitVersion\": ")
            && version.ends_with("\n  \"platform\": \"linux/amd64\"\n}"),
        "{version:?}"
    );
}

fn curl() -> Vec<(&'static str, &'static str)> {
    vec![("User-Agent", "curl/8.5.0")]
}

fn wrong_kinds_are_refused_in_kubes_words(kapi: &Kapi) {
    let namespaces = "/api/v1/namespaces";
    let cases = [
        (
            "POST",
            namespaces.to_string(),
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
            failure(
                "ConfigMap in version \"v1\" cannot be handled as a Namespace: converting (v1.ConfigMap) to (core.Namespace): unknown conversion",
                "BadRequest",
                400,
            ),
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods".into(),
            r#"{"apiVersion":"v1","kind":"pod","metadata":{"name":"x"}}"#,
            failure(
                "pod in version \"v1\" cannot be handled as a Pod: no kind \"pod\" is registered for version \"v1\" in scheme \"k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30\"",
                "BadRequest",
                400,
            ),
        ),
        (
            "POST",
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers".into(),
            r#"{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"x"}}"#,
            failure(
                "the API version in the data (autoscaling/v1) does not match the expected API version (autoscaling/v2)",
                "BadRequest",
                400,
            ),
        ),
        (
            "PUT",
            format!("{CONFIGMAPS}/nl"),
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"nl"}}"#,
            failure(
                "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion",
                "BadRequest",
                400,
            ),
        ),
        (
            "POST",
            namespaces.to_string(),
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"t""#,
            failure(
                r#"the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Nam ...)"#,
                "BadRequest",
                400,
            ),
        ),
        (
            "POST",
            WIDGETS.to_string(),
            r#"{"apiVersion":"example.kapi.dev/v2","kind":"Widget","metadata":{"name":"w"}}"#,
            failure(
                "the API version in the data (example.kapi.dev/v2) does not match the expected API version (example.kapi.dev/v1)",
                "BadRequest",
                400,
            ),
        ),
        (
            "POST",
            WIDGETS.to_string(),
            r#"{"apiVersion":"example.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g1"}}"#,
            concat!(
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","#,
                r#""message":"Widget.example.kapi.dev \"g1\" is invalid: kind: Invalid value: \"Gadget\": must be Widget","#,
                r#""reason":"Invalid","details":{"name":"g1","group":"example.kapi.dev","kind":"Widget","#,
                r#""causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Gadget\": must be Widget","field":"kind"}]},"#,
                r#""code":422}"#,
                "\n"
            )
            .to_string(),
        ),
    ];
    for (method, path, body, expected) in cases {
        let (code, got) = send(kapi, method, &path, &[], Some(body));
        assert_eq!(got, expected, "{method} {path} {body}");
        assert_eq!(code, if expected.contains(":422}") { 422 } else { 400 });
    }
}

#[test]
fn bodies_are_kube_apiservers_bytes() {
    let kapi = Kapi::start(Backend::Embedded);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        status_is_kubes_bytes_compact_or_indented(&kapi);
        documents_end_with_a_newline_and_indent_on_request(&kapi);
        wrong_kinds_are_refused_in_kubes_words(&kapi);
    }));
    if let Err(e) = run {
        eprintln!("server log:\n{}", kapi.log_text());
        std::panic::resume_unwind(e);
    }
}
