//! `application/vnd.kubernetes.protobuf` over raw HTTP, as Go's typed clients speak it:
//! bodies in and out for a built-in kind (objects, lists, watch frames), kube's
//! negotiation for a custom resource (which has no protobuf form), and bad bytes
//! refused with a 400 in kube's words, never a panic.

use kapi_core::protobuf::{decode, encode, envelope};
use kapi_kube::generated::protobuf::CATALOG;
use kapi_tests::{Backend, Kapi, on_every_backend};
use serde_json::{Map, Value, json};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What client-go's typed clients send in `Accept`.
const TYPED_ACCEPT: &str = "application/vnd.kubernetes.protobuf, application/json";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";

struct Answer {
    code: u16,
    content_type: String,
    warnings: Vec<String>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)))
    }
}

fn send(
    kapi: &Kapi,
    method: &str,
    path: &str,
    content_type: &str,
    accept: &str,
    body: Option<Vec<u8>>,
) -> Answer {
    let mut req = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{}{path}", kapi.url()))
        .header("Accept", accept);
    let agent = kapi.agent();
    let res = match body {
        Some(b) => agent.run(req.header("Content-Type", content_type).body(b).unwrap()),
        None => {
            req = req.header("Content-Type", content_type);
            agent.run(req.body(()).unwrap())
        }
    }
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let header = |n: &str| {
        res.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    Answer {
        code: res.status().as_u16(),
        content_type: header("content-type"),
        warnings: res
            .headers()
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect(),
        body: res.into_body().read_to_vec().unwrap_or_default(),
    }
}

/// An object in its envelope, as a Go client writes it.
fn enveloped(obj: &Value) -> Vec<u8> {
    let api_version = obj["apiVersion"].as_str().unwrap();
    let kind = obj["kind"].as_str().unwrap();
    let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
    let message = CATALOG.kind(g, v, kind).unwrap();
    let mut raw = Vec::new();
    encode::encode(&CATALOG, message, obj.as_object().unwrap(), &mut raw).unwrap();
    let mut out = Vec::new();
    envelope::wrap(api_version, kind, &raw, &mut out);
    out
}

/// A protobuf answer read back as JSON.
fn read(body: &[u8]) -> Value {
    let env = envelope::unwrap(body).expect("an enveloped body");
    let (g, v) = env
        .api_version
        .split_once('/')
        .unwrap_or(("", env.api_version));
    let message = CATALOG
        .kind(g, v, env.kind)
        .unwrap_or_else(|| panic!("{}", env.kind));
    let d = decode::decode(&CATALOG, message, env.raw).unwrap();
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!(env.api_version));
    obj.insert("kind".into(), json!(env.kind));
    obj.extend(d.object);
    Value::Object(obj)
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

/// Creates `obj` in `collection`, in JSON; its `resourceVersion`.
fn create_in_json(kapi: &Kapi, collection: &str, obj: &Value) -> String {
    let json = "application/json";
    let made = send(
        kapi,
        "POST",
        collection,
        json,
        json,
        Some(serde_json::to_vec(obj).unwrap()),
    );
    assert_eq!(made.code, 201, "{}", String::from_utf8_lossy(&made.body));
    made.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A list's items without `apiVersion` and `kind`: items in protobuf carry none (Go's
/// list items have no TypeMeta on the wire), so lists are compared without.
fn items_without_type_meta(list: &Value) -> Vec<Value> {
    let mut items = list["items"].as_array().unwrap().clone();
    for item in &mut items {
        let item = item.as_object_mut().unwrap();
        item.remove("apiVersion");
        item.remove("kind");
    }
    items
}

#[test]
fn a_built_in_kind_goes_in_and_out_in_protobuf() {
    on_every_backend(|kapi| {
        let created = send(
            kapi,
            "POST",
            CONFIGMAPS,
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&configmap("a"))),
        );
        assert_eq!(
            created.code,
            201,
            "{}",
            String::from_utf8_lossy(&created.body)
        );
        assert_eq!(created.content_type, PROTOBUF);
        let obj = read(&created.body);
        assert_eq!(obj["metadata"]["name"], "a");
        assert_eq!(obj["metadata"]["namespace"], "default");
        assert_eq!(obj["data"], json!({"k": "v"}));

        // get: protobuf for a typed client, the same object as JSON for a JSON one.
        let got = send(
            kapi,
            "GET",
            &format!("{CONFIGMAPS}/a"),
            "",
            TYPED_ACCEPT,
            None,
        );
        assert_eq!((got.code, got.content_type.as_str()), (200, PROTOBUF));
        let as_json = send(
            kapi,
            "GET",
            &format!("{CONFIGMAPS}/a"),
            "",
            "application/json",
            None,
        );
        assert_eq!(read(&got.body), as_json.json());

        // update in protobuf, list in protobuf.
        let mut changed = read(&got.body);
        changed["data"]["k"] = json!("w");
        let updated = send(
            kapi,
            "PUT",
            &format!("{CONFIGMAPS}/a"),
            PROTOBUF,
            PROTOBUF,
            Some(enveloped(&changed)),
        );
        assert_eq!(
            updated.code,
            200,
            "{}",
            String::from_utf8_lossy(&updated.body)
        );
        assert_eq!(read(&updated.body)["data"]["k"], "w");
        let list = send(kapi, "GET", CONFIGMAPS, "", TYPED_ACCEPT, None);
        let list = read(&list.body);
        assert_eq!(list["kind"], "ConfigMapList");
        assert!(list["metadata"]["resourceVersion"].is_string(), "{list}");
        let names: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["metadata"]["name"].as_str())
            .collect();
        assert!(names.contains(&"a"), "{names:?}");

        // A watch in protobuf frames.
        let watch = send(
            kapi,
            "GET",
            &format!("{CONFIGMAPS}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name=a"),
            "",
            TYPED_ACCEPT,
            None,
        );
        assert_eq!(watch.content_type, envelope::WATCH_MEDIA_TYPE);
        let (event, rest) = envelope::next_watch_frame(&watch.body)
            .unwrap()
            .expect("a frame");
        assert_eq!(event.event_type, "ADDED");
        assert_eq!(read(event.object)["data"]["k"], "w");
        assert!(rest.is_empty(), "one event");

        // The scale subresource: autoscaling/v1 Scale, read and written in protobuf.
        let deployments = "/apis/apps/v1/namespaces/default/deployments";
        let web = json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}
                }
            }
        });
        let made = send(
            kapi,
            "POST",
            deployments,
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&web)),
        );
        assert_eq!(made.code, 201, "{}", String::from_utf8_lossy(&made.body));
        assert_eq!(read(&made.body)["spec"]["replicas"], 1, "defaulted");
        let scale_path = format!("{deployments}/web/scale");
        let scale = send(kapi, "GET", &scale_path, "", TYPED_ACCEPT, None);
        assert_eq!(scale.content_type, PROTOBUF);
        let mut scale = read(&scale.body);
        assert_eq!(scale["kind"], "Scale");
        scale["spec"]["replicas"] = json!(0);
        let scaled = send(
            kapi,
            "PUT",
            &scale_path,
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&scale)),
        );
        assert_eq!(
            scaled.code,
            200,
            "{}",
            String::from_utf8_lossy(&scaled.body)
        );
        let got = send(
            kapi,
            "GET",
            &format!("{deployments}/web"),
            "",
            "application/json",
            None,
        );
        assert_eq!(
            got.json()["spec"]["replicas"],
            0,
            "an explicit 0 through protobuf"
        );

        // A subresource's body in protobuf, as the scheduler posts it: a Binding.
        let pods = "/api/v1/namespaces/default/pods";
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}
        });
        let made = send(
            kapi,
            "POST",
            pods,
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&pod)),
        );
        assert_eq!(made.code, 201, "{}", String::from_utf8_lossy(&made.body));
        let binding = json!({
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}
        });
        let bound = send(
            kapi,
            "POST",
            &format!("{pods}/p/binding"),
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&binding)),
        );
        assert_eq!(bound.code, 201, "{}", String::from_utf8_lossy(&bound.body));
        let got = send(
            kapi,
            "GET",
            &format!("{pods}/p"),
            "",
            "application/json",
            None,
        );
        assert_eq!(got.json()["spec"]["nodeName"], "n1");

        // A delete with protobuf DeleteOptions (a precondition that does not hold).
        let opts = json!({"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "not-it"}});
        let refused = send(
            kapi,
            "DELETE",
            &format!("{CONFIGMAPS}/a"),
            PROTOBUF,
            "application/json",
            Some(enveloped(&opts)),
        );
        assert_eq!(
            refused.code,
            409,
            "{}",
            String::from_utf8_lossy(&refused.body)
        );
        let opts = json!({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0});
        let deleted = send(
            kapi,
            "DELETE",
            &format!("{CONFIGMAPS}/a"),
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&opts)),
        );
        assert_eq!(
            deleted.code,
            200,
            "{}",
            String::from_utf8_lossy(&deleted.body)
        );
    });
}

/// A version converted in process (autoscaling/v1 HorizontalPodAutoscaler, stored as
/// v2) reads and writes its own messages.
#[test]
fn a_converted_version_goes_in_and_out_in_protobuf() {
    let kapi = Kapi::start(Backend::Embedded);
    let hpas = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
    let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 4}});
    let made = send(
        &kapi,
        "POST",
        hpas,
        PROTOBUF,
        TYPED_ACCEPT,
        Some(enveloped(&hpa)),
    );
    assert_eq!(made.code, 201, "{}", String::from_utf8_lossy(&made.body));
    assert_eq!(made.content_type, PROTOBUF);
    let made = read(&made.body);
    assert_eq!(made["spec"]["targetCPUUtilizationPercentage"], 80, "{made}");
    let got = send(&kapi, "GET", &format!("{hpas}/h"), "", TYPED_ACCEPT, None);
    let as_json = send(
        &kapi,
        "GET",
        &format!("{hpas}/h"),
        "",
        "application/json",
        None,
    );
    assert_eq!(read(&got.body), as_json.json());
    let list = read(&send(&kapi, "GET", hpas, "", TYPED_ACCEPT, None).body);
    assert_eq!(
        (&list["apiVersion"], &list["kind"]),
        (
            &json!("autoscaling/v1"),
            &json!("HorizontalPodAutoscalerList")
        )
    );
    assert_eq!(list["items"][0]["spec"]["maxReplicas"], 4);
}

/// Reads from the watch cache (`resourceVersion` set) answer protobuf from each
/// object's memoised message: the same objects JSON shows, and a changed object's new
/// state as soon as the cache has it.
#[test]
fn protobuf_reads_from_the_watch_cache_follow_every_change() {
    on_every_backend(|kapi| {
        let ns = "/api/v1/namespaces/memo/configmaps";
        let made = send(
            kapi,
            "POST",
            "/api/v1/namespaces",
            "application/json",
            "application/json",
            Some(
                serde_json::to_vec(
                    &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "memo"}}),
                )
                .unwrap(),
            ),
        );
        assert_eq!(made.code, 201);
        let mut rv = String::new();
        for name in ["a", "b", "c"] {
            rv = create_in_json(kapi, ns, &configmap(name));
        }
        let items = items_without_type_meta;
        let from_cache = |rv: &str, accept: &str| {
            let path = format!("{ns}?resourceVersion={rv}&resourceVersionMatch=NotOlderThan");
            let answer = send(kapi, "GET", &path, "", accept, None);
            assert_eq!(
                answer.code,
                200,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
            answer
        };
        let first = from_cache(&rv, TYPED_ACCEPT);
        let again = from_cache(&rv, TYPED_ACCEPT);
        assert_eq!(first.content_type, PROTOBUF);
        assert_eq!(first.body, again.body, "a memoised list reads the same");
        assert_eq!(
            items(&read(&first.body)),
            items(&from_cache(&rv, "application/json").json())
        );
        assert_eq!(items(&read(&first.body)).len(), 3);

        let mut changed = configmap("a");
        changed["data"]["k"] = json!("changed");
        let updated = send(
            kapi,
            "PUT",
            &format!("{ns}/a"),
            "application/json",
            "application/json",
            Some(serde_json::to_vec(&changed).unwrap()),
        );
        assert_eq!(
            updated.code,
            200,
            "{}",
            String::from_utf8_lossy(&updated.body)
        );
        let rv = updated.json()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let list = read(&from_cache(&rv, TYPED_ACCEPT).body);
        assert_eq!(list["items"][0]["data"]["k"], "changed", "{list}");
        assert_eq!(list["items"][0]["metadata"]["resourceVersion"], rv.as_str());
        assert_eq!(
            items(&list),
            items(&from_cache(&rv, "application/json").json())
        );
        let got = send(
            kapi,
            "GET",
            &format!("{ns}/a?resourceVersion={rv}"),
            "",
            TYPED_ACCEPT,
            None,
        );
        assert_eq!(got.content_type, PROTOBUF);
        let as_json = send(
            kapi,
            "GET",
            &format!("{ns}/a?resourceVersion={rv}"),
            "",
            "application/json",
            None,
        );
        assert_eq!(read(&got.body), as_json.json());
        // A consistent read (from the store, no memo) shows the same objects.
        let consistent = send(kapi, "GET", ns, "", TYPED_ACCEPT, None);
        assert_eq!(items(&read(&consistent.body)), items(&list));
    });
}

/// A list over 4 MiB goes out a chunk at a time in protobuf as in JSON: the whole
/// envelope arrives, its announced length is its length, and its items are the JSON
/// list's, whether they come from the watch cache or from the store.
#[test]
fn a_large_list_in_protobuf_is_the_json_list() {
    on_every_backend(|kapi| {
        let ns = "/api/v1/namespaces/default/configmaps";
        let mut rv = String::new();
        for i in 0..12 {
            let mut cm = configmap(&format!("big-{i:02}"));
            cm["data"]["k"] = json!(format!("{i}").repeat(400_000));
            rv = create_in_json(kapi, ns, &cm);
        }
        // Only the ConfigMaps made here (the namespace has kube-root-ca.crt too).
        let strip = |list: &Value| {
            let mut items = items_without_type_meta(list);
            items.retain(|item| {
                item["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("big-")
            });
            items
        };
        for query in [format!("?resourceVersion={rv}"), String::new()] {
            let path = format!("{ns}{query}");
            let res = kapi
                .agent()
                .get(format!("{}{path}", kapi.url()))
                .header("Accept", TYPED_ACCEPT)
                .call()
                .unwrap();
            let announced: usize = res.headers()["content-length"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            let body = res.into_body().read_to_vec().unwrap();
            assert!(body.len() > 1 << 20, "{} bytes", body.len());
            assert_eq!(body.len(), announced);
            let list = read(&body);
            assert_eq!(list["kind"], "ConfigMapList");
            let json = send(kapi, "GET", &path, "", "application/json", None).json();
            let items = strip(&list);
            assert_eq!(items.len(), 12);
            assert_eq!(items, strip(&json), "{path}");
        }
    });
}

/// An error answers in the format the object would have, as kube's ErrorNegotiated
/// does: a `Status` in protobuf for a typed client of a built-in kind, JSON otherwise.
#[test]
fn errors_answer_in_the_format_negotiated() {
    let kapi = Kapi::start(Backend::Embedded);
    let missing = format!("{CONFIGMAPS}/nope");
    let typed = send(&kapi, "GET", &missing, "", TYPED_ACCEPT, None);
    assert_eq!((typed.code, typed.content_type.as_str()), (404, PROTOBUF));
    let status = read(&typed.body);
    let as_json = send(&kapi, "GET", &missing, "", "application/json", None);
    assert_eq!(as_json.content_type, "application/json");
    assert_eq!(status, as_json.json());
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["message"], "configmaps \"nope\" not found");
    // A refused write of a typed client, in protobuf too.
    let twice = || {
        send(
            &kapi,
            "POST",
            CONFIGMAPS,
            PROTOBUF,
            TYPED_ACCEPT,
            Some(enveloped(&configmap("x"))),
        )
    };
    assert_eq!(twice().code, 201);
    let again = twice();
    assert_eq!((again.code, again.content_type.as_str()), (409, PROTOBUF));
    assert_eq!(read(&again.body)["reason"], "AlreadyExists");
    // A custom resource has no protobuf form: its errors stay JSON.
    let widget = send(
        &kapi,
        "GET",
        &format!("{WIDGETS}/nope"),
        "",
        TYPED_ACCEPT,
        None,
    );
    assert_eq!(
        (widget.code, widget.content_type.as_str()),
        (404, "application/json")
    );
}

#[test]
fn custom_resources_have_no_protobuf_form() {
    let kapi = Kapi::start(Backend::Embedded);
    let widget = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"color": "red"}});
    // A protobuf body: 415, naming the types a custom resource is read in.
    let mut body = Vec::new();
    envelope::wrap("example.kapi.dev/v1", "Widget", b"", &mut body);
    let refused = send(&kapi, "POST", WIDGETS, PROTOBUF, TYPED_ACCEPT, Some(body));
    assert_eq!(refused.code, 415);
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap()
            .ends_with("accepted media types include: application/json, application/yaml"),
        "{}",
        refused.json()
    );
    // A typed client's Accept gets JSON; protobuf alone is 406.
    let created = send(
        &kapi,
        "POST",
        WIDGETS,
        "application/json",
        TYPED_ACCEPT,
        Some(serde_json::to_vec(&widget).unwrap()),
    );
    assert_eq!(
        (created.code, created.content_type.as_str()),
        (201, "application/json")
    );
    let only = send(&kapi, "GET", &format!("{WIDGETS}/w"), "", PROTOBUF, None);
    assert_eq!(only.code, 406);
    assert_eq!(
        only.json()["message"],
        "only the following media types are accepted: application/json, application/yaml"
    );
    // A built-in kind's 406 names protobuf among them.
    let html = send(&kapi, "GET", CONFIGMAPS, "", "text/html", None);
    assert_eq!(
        html.json()["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
}

#[test]
fn bad_bytes_are_refused_in_kubes_words() {
    let kapi = Kapi::start(Backend::Embedded);
    let post = |body: Vec<u8>, query: &str| {
        send(
            &kapi,
            "POST",
            &format!("{CONFIGMAPS}{query}"),
            PROTOBUF,
            "application/json",
            Some(body),
        )
    };
    let message = |a: &Answer| a.json()["message"].as_str().unwrap_or_default().to_string();

    // Not an envelope at all.
    let a = post(b"{\"kind\":\"ConfigMap\"}".to_vec(), "");
    assert_eq!(a.code, 400);
    assert_eq!(
        message(&a),
        "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({\"kind\":\"ConfigMap\"})"
    );

    // Truncated: the envelope cut inside the object.
    let whole = enveloped(&configmap("t"));
    let a = post(whole[..whole.len() - 12].to_vec(), "");
    assert_eq!(a.code, 400, "{}", message(&a));
    // kube quotes the start of a body it cannot read, in hex when it is not JSON.
    assert!(
        message(&a).starts_with(
            "the object provided is unrecognized (must be of type ConfigMap): unexpected EOF (6b387300"
        ),
        "{}",
        message(&a)
    );

    // The object cut inside its own message: kube's decode error, named by kind.
    let mut raw = Vec::new();
    encode::encode(
        &CATALOG,
        CATALOG.kind("", "v1", "ConfigMap").unwrap(),
        configmap("t").as_object().unwrap(),
        &mut raw,
    )
    .unwrap();
    let mut cut = Vec::new();
    envelope::wrap("v1", "ConfigMap", &raw[..raw.len() - 2], &mut cut);
    let a = post(cut, "");
    assert_eq!(
        message(&a),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: unexpected EOF"
    );

    // Another kind: refused as kube refuses it.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
    let a = post(enveloped(&secret), "");
    assert_eq!(a.code, 400);
    assert!(
        message(&a).starts_with("Secret in version \"v1\" cannot be handled as a ConfigMap"),
        "{}",
        message(&a)
    );

    // A field number ConfigMap lacks: a warning by default, refused under Strict.
    let mut raw = Vec::new();
    encode::encode(
        &CATALOG,
        CATALOG.kind("", "v1", "ConfigMap").unwrap(),
        configmap("u").as_object().unwrap(),
        &mut raw,
    )
    .unwrap();
    raw.extend_from_slice(&[0xf8, 0x06, 0x07]); // field 111, varint 7
    let mut body = Vec::new();
    envelope::wrap("v1", "ConfigMap", &raw, &mut body);
    let a = post(body.clone(), "?fieldValidation=Strict");
    assert_eq!(a.code, 400);
    assert_eq!(
        message(&a),
        "strict decoding error: unknown field number 111"
    );
    let a = post(body, "");
    assert_eq!(a.code, 201, "{}", message(&a));
    assert!(
        a.warnings
            .iter()
            .any(|w| w.contains("unknown field number 111")),
        "{:?}",
        a.warnings
    );

    // A varint of a megabyte, and messages nested past any real object.
    let mut raw = vec![0x08];
    raw.extend(std::iter::repeat_n(0xff, 1 << 20));
    let mut body = Vec::new();
    envelope::wrap("v1", "ConfigMap", &raw, &mut body);
    let a = post(body, "");
    assert_eq!(
        message(&a),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: proto: integer overflow"
    );
    // A CRD whose schema nests `not` (JSONSchemaProps field 28) 200 deep: spec (2) →
    // versions (7) → schema (4) → openAPIV3Schema (1) → not → not → …
    let nest = |key: &[u8], inner: Vec<u8>| {
        let mut out = key.to_vec();
        prost_len(inner.len(), &mut out);
        out.extend(inner);
        out
    };
    let mut schema = Vec::new();
    for _ in 0..200 {
        schema = nest(&[0xe2, 0x01], schema);
    }
    let raw = nest(&[0x12], nest(&[0x3a], nest(&[0x22], nest(&[0x0a], schema))));
    let mut body = Vec::new();
    envelope::wrap(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        &raw,
        &mut body,
    );
    let a = send(
        &kapi,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        PROTOBUF,
        "application/json",
        Some(body),
    );
    assert_eq!(a.code, 400);
    assert_eq!(
        message(&a),
        "CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition: exceeded max depth of 128 nested messages"
    );
    // The server is still there.
    assert_eq!(
        send(&kapi, "GET", CONFIGMAPS, "", TYPED_ACCEPT, None).code,
        200
    );
}

fn prost_len(n: usize, out: &mut Vec<u8>) {
    let mut n = n as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}
