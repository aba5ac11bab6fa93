//! The protobuf catalog the `kapi` binary is built with, against independent encoders:
//! for every served built-in kind, a sample filled from kube-apiserver's published
//! OpenAPI (every property set, as kube's round-trip fixtures are) goes JSON → protobuf
//! → JSON unchanged, alone, in its list and in a watch frame; its bytes read back
//! through prost-reflect with descriptors compiled from Kubernetes' own `.proto` files
//! (no field unknown to them), and what prost-reflect writes back decodes to the same
//! JSON. k8s-pb's typed messages (kube-rs's prost bindings) write objects with Go's
//! zero values and read kapi's bytes.

use std::collections::BTreeMap;

use kapi_core::protobuf::{decode, encode, envelope};
use kapi_kube::generated::protobuf::CATALOG;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde_json::{Map, Value, json};

const COMPONENT_REF: &str = "#/components/schemas/";

/// Every definition of kube's OpenAPI documents in the shared test data.
fn definitions() -> BTreeMap<String, Value> {
    let dir = kapi_testing::testdata_dir().join("openapi");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("testdata/openapi") {
        let path = entry.unwrap().path();
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if let Some(schemas) = doc["components"]["schemas"].as_object() {
            out.extend(schemas.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    out
}

fn pool() -> DescriptorPool {
    let dir = kapi_testing::testdata_dir().join("proto");
    let mut files = Vec::new();
    fn walk(root: &std::path::Path, dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "proto") {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    walk(&dir, &dir, &mut files);
    let mut compiler = protox::Compiler::new([&dir]).unwrap();
    compiler.include_imports(true);
    compiler.open_files(&files).unwrap();
    compiler.descriptor_pool()
}

/// Fills a schema as kube's round-trip fixtures are filled: every property set, to a
/// value that survives Go (times in whole seconds, MicroTime in microseconds).
struct Filler<'a> {
    defs: &'a BTreeMap<String, Value>,
    counter: i64,
}

impl Filler<'_> {
    fn fill(&mut self, name: &str, schema: &Value, depth: usize) -> Value {
        if let Some(r) = schema
            .get("$ref")
            .or_else(|| schema.pointer("/allOf/0/$ref"))
            .and_then(Value::as_str)
        {
            let def = r.strip_prefix(COMPONENT_REF).unwrap();
            return self.definition(name, def, depth);
        }
        self.counter += 1;
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => {
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    let mut out = Map::new();
                    if depth > 12 {
                        return Value::Object(out);
                    }
                    // A kind inside another object (a StatefulSet's claim templates)
                    // has no apiVersion/kind on the wire: Go's TypeMeta is not in its
                    // message, so protobuf cannot carry them (kube drops them too).
                    let nested_kind =
                        depth > 0 && schema.get("x-kubernetes-group-version-kind").is_some();
                    for (k, v) in props {
                        if nested_kind && (k == "apiVersion" || k == "kind") {
                            continue;
                        }
                        out.insert(k.clone(), self.fill(k, v, depth + 1));
                    }
                    Value::Object(out)
                } else if let Some(ap) = schema.get("additionalProperties") {
                    json!({ format!("{name}Key"): self.fill(name, ap, depth + 1) })
                } else {
                    // An empty Go struct (`CustomResourceSubresourceStatus`): free-form
                    // JSON lives in RawExtension and JSON, filled above.
                    json!({})
                }
            }
            Some("array") => json!([self.fill(name, &schema["items"], depth + 1)]),
            Some("string") => match schema.get("format").and_then(Value::as_str) {
                Some("byte") => json!("AAEC/w=="),
                Some("date-time") => json!("2024-05-06T07:08:09Z"),
                _ => match schema.get("enum").and_then(|e| e.get(0)) {
                    Some(v) => v.clone(),
                    None => json!(format!("{name}Value")),
                },
            },
            Some("integer") => json!(self.counter),
            Some("number") => json!(self.counter as f64 + 0.5),
            Some("boolean") => json!(true),
            _ => json!({"free": "form"}),
        }
    }

    fn definition(&mut self, name: &str, def: &str, depth: usize) -> Value {
        let short = def.rsplit('.').next().unwrap();
        match short {
            "Time" => return json!("2024-05-06T07:08:09Z"),
            "MicroTime" => return json!("2024-05-06T07:08:09.123456Z"),
            "Quantity" => return json!("1500m"),
            "IntOrString" => {
                self.counter += 1;
                return if self.counter % 2 == 0 {
                    json!(8080)
                } else {
                    json!("http")
                };
            }
            "Duration" => return json!("1h2m3s"),
            "JSON" | "RawExtension" => return json!({"raw": ["json", 1]}),
            "FieldsV1" => return json!({"f:metadata": {"f:name": {}}}),
            "JSONSchemaPropsOrArray" | "JSONSchemaPropsOrBool" => {
                return if depth > 6 {
                    json!({"type": "string"})
                } else {
                    self.definition(name, &def.replace(short, "JSONSchemaProps"), depth + 3)
                };
            }
            "JSONSchemaPropsOrStringArray" => return json!(["a", "b"]),
            "JSONSchemaProps" if depth > 6 => return json!({"type": "string"}),
            _ => {}
        }
        let schema = self
            .defs
            .get(def)
            .unwrap_or_else(|| panic!("{def}"))
            .clone();
        self.fill(name, &schema, depth)
    }
}

/// The served built-in kinds: (group, version, kind, list kind, listable).
fn served_kinds() -> Vec<(String, String, String, String, bool)> {
    let mut resources = kapi_apiserver::registry::Resources::new();
    kapi_kube::generated::register(&mut resources);
    let mut out: Vec<_> = resources
        .strategies()
        .iter()
        .map(|s| {
            let i = s.info();
            (
                i.group.to_string(),
                i.version.to_string(),
                i.kind.to_string(),
                i.list_kind.to_string(),
                i.verbs.iter().any(|v| v == "list"),
            )
        })
        .filter(|(g, ..)| !g.ends_with("kapi.dev"))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn definition_of(defs: &BTreeMap<String, Value>, group: &str, version: &str, kind: &str) -> String {
    defs.iter()
        .find(|(_, d)| {
            d["x-kubernetes-group-version-kind"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|g| g["group"] == group && g["version"] == version && g["kind"] == kind)
        })
        .map(|(n, _)| n.clone())
        .unwrap_or_else(|| panic!("no OpenAPI definition for {group}/{version} {kind}"))
}

fn encode_object(obj: &Value) -> Vec<u8> {
    let api_version = obj["apiVersion"].as_str().unwrap();
    let kind = obj["kind"].as_str().unwrap();
    let (g, v) = api_version.split_once('/').unwrap_or(("", api_version));
    let message = CATALOG
        .kind(g, v, kind)
        .unwrap_or_else(|| panic!("{kind} not catalogued"));
    let mut out = Vec::new();
    let mark = envelope::begin_wrap(api_version, kind, &mut out);
    encode::encode(&CATALOG, message, obj.as_object().unwrap(), &mut out)
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    envelope::end_wrap(&mut out, mark);
    out
}

fn decode_object(body: &[u8]) -> Value {
    let env = envelope::unwrap(body).unwrap();
    let (g, v) = env
        .api_version
        .split_once('/')
        .unwrap_or(("", env.api_version));
    let message = CATALOG.kind(g, v, env.kind).unwrap();
    let d =
        decode::decode(&CATALOG, message, env.raw).unwrap_or_else(|e| panic!("{}: {e}", env.kind));
    assert!(d.unknown.is_empty(), "{}: {:?}", env.kind, d.unknown);
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!(env.api_version));
    obj.insert("kind".into(), json!(env.kind));
    obj.extend(d.object);
    Value::Object(obj)
}

#[test]
fn every_served_kind_round_trips_and_reads_as_the_proto_files_say() {
    let defs = definitions();
    let pool = pool();
    let kinds = served_kinds();
    assert!(kinds.len() >= 40, "served built-in kinds: {kinds:?}");
    for (group, version, kind, list_kind, listable) in &kinds {
        let api_version = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
        let def = definition_of(&defs, group, version, kind);
        let mut filler = Filler {
            defs: &defs,
            counter: 0,
        };
        let mut sample = filler.definition("object", &def, 0);
        sample["apiVersion"] = json!(api_version);
        sample["kind"] = json!(kind);

        // JSON → protobuf → JSON, alone.
        let body = encode_object(&sample);
        assert_eq!(
            decode_object(&body),
            sample,
            "{kind} changed on the way back"
        );

        // The .proto files' own reading: nothing unknown, and what prost-reflect writes
        // back decodes to the same JSON.
        let name = format!("k8s.io.{}", &def["io.k8s.".len()..]).replace('-', "_");
        let desc = pool
            .get_message_by_name(&name)
            .unwrap_or_else(|| panic!("{name}"));
        let raw = envelope::unwrap(&body).unwrap().raw;
        let dynamic = DynamicMessage::decode(desc, raw).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(
            dynamic.unknown_fields().count(),
            0,
            "{kind}: fields the .proto files lack"
        );
        let mut rewritten = Vec::new();
        envelope::wrap(&api_version, kind, &dynamic.encode_to_vec(), &mut rewritten);
        assert_eq!(
            decode_object(&rewritten),
            sample,
            "{kind} as prost-reflect writes it"
        );

        // In its list (the review kinds are only created: kube has no list of them),
        // and in a watch frame.
        assert_eq!(
            CATALOG.kind(group, version, list_kind).is_some(),
            *listable,
            "{list_kind}"
        );
        let mut item = sample.clone();
        let item_obj = item.as_object_mut().unwrap();
        item_obj.remove("apiVersion");
        item_obj.remove("kind");
        let list = json!({
            "apiVersion": api_version, "kind": list_kind,
            "metadata": {"resourceVersion": "12", "continue": "abc"},
            "items": [item.clone(), item],
        });
        if *listable {
            assert_eq!(decode_object(&encode_object(&list)), list, "{list_kind}");
        }
        let mut stream = Vec::new();
        envelope::watch_frame("MODIFIED", &body, &mut stream);
        let (event, rest) = envelope::next_watch_frame(&stream).unwrap().unwrap();
        assert_eq!(event.event_type, "MODIFIED");
        assert!(rest.is_empty());
        assert_eq!(
            decode_object(event.object),
            sample,
            "{kind} in a watch frame"
        );
    }
}

#[test]
fn objects_k8s_pb_writes_with_go_zero_values_decode_as_kube_shows_them() {
    use k8s_pb::api::apps::v1::{Deployment, DeploymentSpec};
    use k8s_pb::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
    use k8s_pb::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};

    // What a Go client sets explicitly and what it leaves at Go's zero: the zero plain
    // fields are on the wire (a Go client writes them) but kube's JSON leaves them out.
    let meta = ObjectMeta {
        name: Some("web".into()),
        generate_name: Some(String::new()),
        namespace: Some(String::new()),
        uid: Some(String::new()),
        generation: Some(0),
        creation_timestamp: Some(Time::default()),
        labels: [("app".to_string(), "web".to_string())].into(),
        ..Default::default()
    };
    let deployment = Deployment {
        metadata: Some(meta.clone()),
        spec: Some(DeploymentSpec {
            replicas: Some(0),
            min_ready_seconds: Some(0),
            paused: Some(false),
            selector: Some(LabelSelector {
                match_labels: [("app".to_string(), "web".to_string())].into(),
                ..Default::default()
            }),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: [("app".to_string(), "web".to_string())].into(),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: Some("nginx".into()),
                        image: Some("nginx".into()),
                        image_pull_policy: Some(String::new()),
                        ..Default::default()
                    }],
                    automount_service_account_token: Some(false),
                    host_network: Some(false),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let mut body = Vec::new();
    envelope::wrap(
        "apps/v1",
        "Deployment",
        &deployment.encode_to_vec(),
        &mut body,
    );
    assert_eq!(
        decode_object(&body),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [{"name": "nginx", "image": "nginx"}],
                        "automountServiceAccountToken": false
                    }
                }
            }
        })
    );

    // kapi's bytes read by k8s-pb.
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "ns", "creationTimestamp": "2024-05-06T07:08:09Z"},
        "data": {"k": "v"}, "binaryData": {"b": "AAEC"}, "immutable": false
    });
    let read = ConfigMap::decode(envelope::unwrap(&encode_object(&cm)).unwrap().raw).unwrap();
    assert_eq!(read.metadata.as_ref().unwrap().name.as_deref(), Some("a"));
    assert_eq!(
        read.metadata.unwrap().creation_timestamp.unwrap().seconds,
        Some(1_714_979_289)
    );
    assert_eq!(read.data["k"], "v");
    assert_eq!(read.binary_data["b"], vec![0, 1, 2]);
    assert_eq!(read.immutable, Some(false));
}

/// The inputs the `protobuf` fuzz target found (kept in `fuzz/regressions/protobuf`),
/// under the target's own property, on stable Rust: what decodes encodes, and decodes
/// again to the same JSON with nothing unknown.
#[test]
fn the_fuzz_targets_findings_round_trip_twice() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/protobuf");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/regressions/protobuf") {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        // As the target picks the message: the envelope's kind, else the first byte's.
        let (message, raw) = match envelope::unwrap(&data) {
            Ok(env) => {
                let (g, v) = env
                    .api_version
                    .split_once('/')
                    .unwrap_or(("", env.api_version));
                match CATALOG.kind(g, v, env.kind) {
                    Some(m) => (m, env.raw),
                    None => continue,
                }
            }
            Err(_) => {
                let Some((first, rest)) = data.split_first() else {
                    continue;
                };
                let kind = &CATALOG.kinds[usize::from(*first) % CATALOG.kinds.len()];
                (CATALOG.message(kind.message), rest)
            }
        };
        replayed += 1;
        let Ok(decoded) = decode::decode(&CATALOG, message, raw) else {
            continue;
        };
        let mut bytes = Vec::new();
        encode::encode(&CATALOG, message, &decoded.object, &mut bytes)
            .unwrap_or_else(|e| panic!("{}: decoded JSON does not encode: {e}", path.display()));
        let again = decode::decode(&CATALOG, message, &bytes)
            .unwrap_or_else(|e| panic!("{}: encoded bytes do not decode: {e}", path.display()));
        assert_eq!(
            again.object,
            decoded.object,
            "{}: a second round trip changed it",
            path.display()
        );
        assert!(again.unknown.is_empty(), "{}", path.display());
    }
    assert!(
        replayed >= 2,
        "the regressions were not found in {}",
        dir.display()
    );
}
