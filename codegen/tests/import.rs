//! `kapi-codegen import-openapi`: the built-in schemas are reproducible and current, the
//! conversion rules hold on small documents, every file parses back, and mistakes are
//! reported by name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kapi_codegen::import::config::Config;
use kapi_codegen::import::{HEADER, Import, ImportError, import};
use saphyr::LoadableYamlNode;
use serde_json::{Value, json};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn builtins_config() -> PathBuf {
    workspace_root().join("codegen/builtins.yaml")
}

/// The documents the built-in configuration needs, as scripts/import-builtins passes them.
fn builtin_documents() -> Vec<PathBuf> {
    let dir = kapi_testing::testdata_dir().join("openapi");
    let config = Config::read(&builtins_config()).expect("builtins.yaml");
    config
        .group_versions
        .iter()
        .map(|gv| {
            let name = if gv.group.is_empty() {
                format!("api__{}_openapi.json", gv.version)
            } else {
                format!("apis__{}__{}_openapi.json", gv.group, gv.version)
            };
            dir.join(name)
        })
        .collect()
}

/// The built-in import as scripts/import-builtins runs it, protobuf catalog included.
fn import_builtins() -> Import {
    let protobuf = kapi_codegen::import::ProtobufSources {
        proto_dir: kapi_testing::testdata_dir().join("proto"),
        go_facts: workspace_root().join("codegen/protobuf-go.yaml"),
    };
    kapi_codegen::import::import_with_protobuf(&builtin_documents(), &builtins_config(), &protobuf)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn read_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn parse_yaml(text: &str) -> Vec<Value> {
    saphyr::YamlOwned::load_from_str(text)
        .expect("generated YAML parses")
        .iter()
        .map(kapi_testing::yaml_to_json)
        .filter(|d| !d.is_null())
        .collect()
}

#[test]
fn builtins_are_reproducible_and_checked_in() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let summary = import_builtins().write(first.path()).unwrap();
    assert!(summary.removed.is_empty());
    import_builtins().write(second.path()).unwrap();
    let a = read_tree(first.path());
    let b = read_tree(second.path());
    assert_eq!(a, b, "two imports differ");

    // writing again changes nothing
    let again = import_builtins().write(first.path()).unwrap();
    assert!(again.written.is_empty() && again.removed.is_empty());
    assert_eq!(again.unchanged.len(), a.len());

    let checked_in = read_tree(&workspace_root().join("schemas/kubernetes"));
    let stale: Vec<_> = checked_in.keys().filter(|k| !a.contains_key(*k)).collect();
    let missing: Vec<_> = a.keys().filter(|k| !checked_in.contains_key(*k)).collect();
    assert!(
        stale.is_empty() && missing.is_empty(),
        "schemas/kubernetes is out of date (run scripts/import-builtins): stale {stale:?}, missing {missing:?}"
    );
    for (rel, content) in &a {
        assert!(
            checked_in[rel] == *content,
            "schemas/kubernetes/{} is out of date: run scripts/import-builtins",
            rel.display()
        );
    }
}

#[test]
fn builtin_files_parse_back_to_what_was_meant() {
    let import = import_builtins();
    assert_eq!(import.report.kinds, 62);
    for (rel, file) in &import.files {
        let header = if rel.starts_with("protobuf") {
            kapi_codegen::import::protobuf::HEADER
        } else {
            HEADER
        };
        assert!(file.content.starts_with(header), "{}", rel.display());
        let parsed = parse_yaml(&file.content);
        assert_eq!(
            parsed.len(),
            file.documents.len(),
            "{}: document count",
            rel.display()
        );
        for (i, (got, want)) in parsed.iter().zip(&file.documents).enumerate() {
            assert!(
                got == want,
                "{} document {i} does not parse back",
                rel.display()
            );
        }
    }
}

#[test]
fn builtins_have_kube_shapes() {
    let import = import_builtins();
    let docs = |name: &str| import.files[Path::new(name)].documents.clone();
    let crd = |file: &str, name: &str| {
        docs(file)
            .into_iter()
            .find(|d| d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in {file}"))
    };

    // A kind of two versions that differ: one CRD, stored in v2, converted by hooks.
    let hpa = crd(
        "autoscaling-v2.yaml",
        "horizontalpodautoscalers.autoscaling",
    );
    let versions: Vec<(&Value, &Value)> = hpa["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (&v["name"], &v["storage"]))
        .collect();
    assert_eq!(
        versions,
        [(&json!("v2"), &json!(true)), (&json!("v1"), &json!(false))]
    );
    assert_eq!(
        hpa["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["$ref"],
        "#/definitions/io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec"
    );
    assert_eq!(hpa["spec"]["conversion"]["strategy"], "Webhook");
    assert_eq!(
        hpa["metadata"]["annotations"]["kapi.dev/conversion-hooks"],
        "crate::hooks::HorizontalPodAutoscalerConversion"
    );
    assert_eq!(
        hpa["metadata"]["annotations"]["kapi.dev/conversion-object-hooks"],
        "true"
    );
    assert!(!import.files.contains_key(Path::new("autoscaling-v1.yaml")));

    let pods = crd("core-v1.yaml", "pods");
    assert_eq!(pods["spec"]["group"], "");
    assert_eq!(pods["spec"]["scope"], "Namespaced");
    assert_eq!(
        pods["metadata"]["annotations"],
        json!({"kapi.dev/verbs": "create,delete,deletecollection,get,list,patch,update,watch",
               "kapi.dev/hooks": "crate::hooks::PodHooks",
               "kapi.dev/subresources": "attach=create,get@/v1/PodAttachOptions;binding=create;\
                   ephemeralcontainers=get,patch,update;eviction=create@policy/v1/Eviction;\
                   exec=create,get@/v1/PodExecOptions;log=get;\
                   portforward=create,get@/v1/PodPortForwardOptions;resize=get,patch,update"})
    );
    let v = &pods["spec"]["versions"][0];
    assert_eq!(v["subresources"], json!({"status": {}}));
    let schema = &v["schema"]["openAPIV3Schema"];
    assert_eq!(schema["properties"]["metadata"], json!({"type": "object"}));
    assert_eq!(
        schema["properties"]["spec"]["$ref"],
        "#/definitions/io.k8s.api.core.v1.PodSpec"
    );
    assert!(schema.get("x-kubernetes-group-version-kind").is_none());

    let ns = crd("core-v1.yaml", "namespaces");
    assert_eq!(ns["spec"]["scope"], "Cluster");
    assert_eq!(
        ns["metadata"]["annotations"]["kapi.dev/hooks"],
        "crate::hooks::NamespaceHooks"
    );

    let cs = crd("core-v1.yaml", "componentstatuses");
    assert_eq!(cs["metadata"]["annotations"]["kapi.dev/verbs"], "get,list");
    assert!(cs["spec"]["versions"][0].get("subresources").is_none());

    let deploy = crd("apps-v1.yaml", "deployments.apps");
    assert_eq!(
        deploy["spec"]["versions"][0]["subresources"]["scale"],
        json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
               "labelSelectorPath": ".spec.selector"})
    );
    assert_eq!(deploy["spec"]["names"]["shortNames"], json!(["deploy"]));
    assert_eq!(deploy["spec"]["names"]["categories"], json!(["all"]));
    let columns: Vec<&str> = deploy["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        columns,
        [
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );

    let csr = crd(
        "certificates.k8s.io-v1.yaml",
        "certificatesigningrequests.certificates.k8s.io",
    );
    assert_eq!(
        csr["metadata"]["annotations"]["kapi.dev/subresources"],
        "approval=get,patch,update"
    );

    // the special definitions
    let defs = |pkg: &str| docs(&format!("definitions/{pkg}.yaml"))[0]["definitions"].clone();
    let intstr = &defs("io.k8s.apimachinery.pkg.util.intstr")["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert_eq!(intstr["x-kubernetes-int-or-string"], true);
    assert!(intstr.get("type").is_none() && intstr.get("oneOf").is_none());
    let quantity = &defs("io.k8s.apimachinery.pkg.api.resource")["io.k8s.apimachinery.pkg.api.resource.Quantity"];
    assert_eq!(
        (&quantity["type"], &quantity["format"]),
        (&json!("string"), &json!("quantity"))
    );
    let meta = defs("io.k8s.apimachinery.pkg.apis.meta.v1");
    assert_eq!(
        meta["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]["format"],
        "date-time"
    );
    assert_eq!(
        meta["io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    let ext = defs("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1");
    let json_def = &ext["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"];
    assert_eq!(json_def["x-kubernetes-preserve-unknown-fields"], true);
    assert!(json_def.get("type").is_none());
    // recursion stays a reference
    assert_eq!(
        ext["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]["properties"]
            ["not"]["$ref"],
        "#/definitions/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    );

    // every reference resolves to exactly one written definition
    let mut written = BTreeMap::new();
    for (rel, file) in &import.files {
        if rel.starts_with("definitions") {
            for name in file.documents[0]["definitions"].as_object().unwrap().keys() {
                assert!(
                    written.insert(name.clone(), rel.clone()).is_none(),
                    "{name} twice"
                );
                let pkg = name.rsplit_once('.').unwrap().0;
                assert_eq!(rel, &PathBuf::from(format!("definitions/{pkg}.yaml")));
            }
        }
    }
    assert_eq!(written.len(), import.report.definitions);
    for file in import.files.values() {
        for doc in &file.documents {
            for r in refs(doc) {
                assert!(written.contains_key(&r), "dangling $ref {r}");
            }
        }
    }
}

fn refs(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                if let ("$ref", Value::String(r)) = (k.as_str(), v) {
                    // (JSONSchemaProps also has a property named `$ref`: a schema, not a string)
                    out.push(r.strip_prefix("#/definitions/").expect(r).to_string());
                } else if k != "default" && k != "enum" {
                    out.extend(refs(v));
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|i| out.extend(refs(i))),
        _ => {}
    }
    out
}

// ---------------------------------------------------------------------------
// Small documents

const GROUP: &str = "example.dev";

fn ref_to(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// A document for `example.dev/v1` with a namespaced `widgets` (status, scale, `approve`
/// and `log` subresources) and a read-only cluster-scoped `gadgets`.
fn small_document() -> Value {
    let ops = |actions: &[(&str, &str)], kind: &str| {
        let mut item = serde_json::Map::new();
        for (method, action) in actions {
            item.insert(
                method.to_string(),
                json!({"x-kubernetes-action": action,
                       "x-kubernetes-group-version-kind": {"group": GROUP, "version": "v1", "kind": kind}}),
            );
        }
        Value::Object(item)
    };
    let base = "/apis/example.dev/v1";
    let mut paths = serde_json::Map::new();
    let mut add = |p: &str, v: Value| {
        paths.insert(format!("{base}{p}"), v);
    };
    add("/", json!({"get": {"operationId": "getAPIResources"}}));
    add("/widgets", ops(&[("get", "list")], "Widget"));
    add(
        "/namespaces/{namespace}/widgets",
        ops(
            &[
                ("get", "list"),
                ("post", "post"),
                ("delete", "deletecollection"),
            ],
            "Widget",
        ),
    );
    add(
        "/namespaces/{namespace}/widgets/{name}",
        ops(
            &[
                ("get", "get"),
                ("put", "put"),
                ("patch", "patch"),
                ("delete", "delete"),
            ],
            "Widget",
        ),
    );
    add(
        "/namespaces/{namespace}/widgets/{name}/status",
        ops(&[("get", "get"), ("put", "put")], "Widget"),
    );
    add(
        "/namespaces/{namespace}/widgets/{name}/scale",
        ops(&[("get", "get"), ("put", "put")], "Scale"),
    );
    add(
        "/namespaces/{namespace}/widgets/{name}/approve",
        ops(&[("put", "put")], "Widget"),
    );
    add(
        "/namespaces/{namespace}/widgets/{name}/log",
        ops(&[("get", "get")], "Widget"),
    );
    add(
        "/watch/namespaces/{namespace}/widgets",
        ops(&[("get", "watchlist")], "Widget"),
    );
    add("/gadgets", ops(&[("get", "list")], "Gadget"));
    add("/gadgets/{name}", ops(&[("get", "get")], "Gadget"));

    let meta = "io.k8s.apimachinery.pkg.apis.meta.v1";
    json!({
        "openapi": "3.0.0",
        "paths": paths,
        "components": {"schemas": {
            "dev.example.v1.Widget": {
                "description": "A widget.",
                "type": "object",
                "required": ["spec"],
                "x-kubernetes-group-version-kind": [{"group": GROUP, "version": "v1", "kind": "Widget"}],
                "properties": {
                    "apiVersion": {"type": "string", "description": "APIVersion."},
                    "kind": {"type": "string", "description": "Kind."},
                    "metadata": {"allOf": [ref_to(&format!("{meta}.ObjectMeta"))], "default": {}, "description": "Metadata."},
                    "spec": {"allOf": [ref_to("dev.example.v1.WidgetSpec")], "default": {}, "description": "Spec.",
                             "x-kubernetes-map-type": "atomic"},
                    "status": {"allOf": [ref_to("dev.example.v1.WidgetStatus")], "default": {"phase": "New"}, "nullable": true}
                }
            },
            "dev.example.v1.WidgetSpec": {
                "type": "object",
                "x-kubernetes-unions": [{"discriminator": "mode"}],
                "properties": {
                    "port": ref_to("io.k8s.apimachinery.pkg.util.intstr.IntOrString"),
                    "size": {"allOf": [ref_to("io.k8s.apimachinery.pkg.api.resource.Quantity")], "description": "Size."},
                    "raw": ref_to("io.k8s.apimachinery.pkg.runtime.RawExtension"),
                    "free": ref_to("dev.example.v1.JSON"),
                    "bag": {"type": "object", "description": "Anything."},
                    "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
                    "replicas": {"type": "integer", "format": "int32", "default": 1, "minimum": 0},
                    "mode": {"type": "string", "enum": ["A", "B"], "default": "A"},
                    "items": {"type": "array", "items": {"allOf": [ref_to("dev.example.v1.Item")], "default": {}},
                              "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
                    "at": ref_to(&format!("{meta}.Time")),
                    "cert": {"type": "string", "format": "byte", "x-kubernetes-list-type": "atomic"}
                }
            },
            "dev.example.v1.Item": {"type": "object", "properties": {
                "name": {"type": "string", "default": ""},
                "children": {"type": "array", "items": ref_to("dev.example.v1.Item")}
            }},
            "dev.example.v1.WidgetStatus": {"type": "object", "properties": {"phase": {"type": "string"}}},
            "dev.example.v1.JSON": {"description": "Any JSON."},
            "dev.example.v1.Unused": {"type": "object", "properties": {"x": {"type": "string"}}},
            "dev.example.v1.Gadget": {
                "description": "A gadget.",
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": GROUP, "version": "v1", "kind": "Gadget"}],
                "properties": {"metadata": {"allOf": [ref_to(&format!("{meta}.ObjectMeta"))], "default": {}}}
            },
            format!("{meta}.ObjectMeta"): {"type": "object", "properties": {"name": {"type": "string"}}},
            format!("{meta}.Time"): {"description": "Time.", "type": "string", "format": "date-time"},
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
                "description": "Int or string.", "format": "int-or-string",
                "oneOf": [{"type": "integer"}, {"type": "string"}]},
            "io.k8s.apimachinery.pkg.api.resource.Quantity": {
                "description": "Quantity.", "oneOf": [{"type": "string"}, {"type": "number"}]},
            "io.k8s.apimachinery.pkg.runtime.RawExtension": {"description": "Raw.", "type": "object"}
        }}
    })
}

const SMALL_CONFIG: &str = "\
apiVersion: kapi.dev/v1alpha1
kind: OpenAPIImport
groupVersions:
  - group: example.dev
    version: v1
    kinds:
      - kind: Widget
        shortNames: [wd]
        categories: [all]
        subresources: [approve]
        hooks: crate::hooks::WidgetHooks
        scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
        printerColumns:
          - {name: Mode, type: string, jsonPath: .spec.mode}
          - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
          - {name: Size, type: string, jsonPath: .spec.size, priority: 1}
      - kind: Gadget
";

struct Small {
    dir: tempfile::TempDir,
}

impl Small {
    fn new(doc: &Value, config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("doc.json"), doc.to_string()).unwrap();
        std::fs::write(dir.path().join("config.yaml"), config).unwrap();
        Small { dir }
    }

    fn doc(&self) -> PathBuf {
        self.dir.path().join("doc.json")
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config.yaml")
    }

    fn import(&self) -> Result<Import, ImportError> {
        import(&[self.doc()], &self.config())
    }
}

fn small_import() -> Import {
    Small::new(&small_document(), SMALL_CONFIG)
        .import()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn definitions(import: &Import) -> serde_json::Map<String, Value> {
    let mut all = serde_json::Map::new();
    for (rel, file) in &import.files {
        if rel.starts_with("definitions") {
            assert_eq!(file.documents[0]["kind"], "SchemaDefinitions");
            assert_eq!(file.documents[0]["apiVersion"], "kapi.dev/v1alpha1");
            all.extend(
                file.documents[0]["definitions"]
                    .as_object()
                    .unwrap()
                    .clone(),
            );
        }
    }
    all
}

fn crd(import: &Import, name: &str) -> Value {
    import.files[Path::new("example.dev-v1.yaml")]
        .documents
        .iter()
        .find(|d| d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .clone()
}

#[test]
fn refs_fold_with_their_siblings() {
    let import = small_import();
    let widget = crd(&import, "widgets.example.dev");
    let props = &widget["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    assert_eq!(
        props["spec"],
        json!({"$ref": "#/definitions/dev.example.v1.WidgetSpec", "description": "Spec.",
               "x-kubernetes-map-type": "atomic"})
    );
    assert_eq!(
        props["status"],
        json!({"$ref": "#/definitions/dev.example.v1.WidgetStatus",
               "default": {"phase": "New"}, "nullable": true})
    );
    assert_eq!(props["metadata"], json!({"type": "object"}));
    let defs = definitions(&import);
    let spec = &defs["dev.example.v1.WidgetSpec"]["properties"];
    assert_eq!(
        spec["items"]["items"],
        json!({"$ref": "#/definitions/dev.example.v1.Item"}),
        "default: {{}} beside a $ref is dropped"
    );
    assert_eq!(spec["items"]["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(
        spec["cert"],
        json!({"type": "string", "format": "byte"}),
        "a list type on a Go []byte (a base64 string) is dropped"
    );
    assert_eq!(spec["replicas"]["default"], 1);
    assert_eq!(spec["replicas"]["minimum"], 0);
    assert_eq!(spec["mode"]["enum"], json!(["A", "B"]));
    assert_eq!(
        spec["labels"]["additionalProperties"],
        json!({"type": "string", "default": ""})
    );
    // recursion stays a reference
    assert_eq!(
        defs["dev.example.v1.Item"]["properties"]["children"]["items"],
        json!({"$ref": "#/definitions/dev.example.v1.Item"})
    );
}

#[test]
fn special_definitions_and_open_objects() {
    let defs = definitions(&small_import());
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"],
        json!({"description": "Int or string.", "x-kubernetes-int-or-string": true})
    );
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.api.resource.Quantity"],
        json!({"description": "Quantity.", "type": "string", "format": "quantity"})
    );
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.runtime.RawExtension"],
        json!({"description": "Raw.", "type": "object", "x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        defs["dev.example.v1.JSON"],
        json!({"description": "Any JSON.", "x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.apis.meta.v1.Time"],
        json!({"description": "Time.", "type": "string", "format": "date-time"})
    );
    assert_eq!(
        defs["dev.example.v1.WidgetSpec"]["properties"]["bag"],
        json!({"description": "Anything.", "type": "object", "x-kubernetes-preserve-unknown-fields": true})
    );
}

#[test]
fn only_reachable_definitions_are_written() {
    let import = small_import();
    let defs = definitions(&import);
    let names: Vec<&str> = defs.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "dev.example.v1.Item",
            "dev.example.v1.JSON",
            "dev.example.v1.WidgetSpec",
            "dev.example.v1.WidgetStatus",
            "io.k8s.apimachinery.pkg.api.resource.Quantity",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
            "io.k8s.apimachinery.pkg.runtime.RawExtension",
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        ],
        "ObjectMeta (only under the replaced metadata), Unused and the kinds themselves are not written"
    );
    assert_eq!(import.report.definitions, names.len());
    let files: Vec<&Path> = import.files.keys().map(PathBuf::as_path).collect();
    assert!(files.contains(&Path::new("definitions/dev.example.v1.yaml")));
    assert!(files.contains(&Path::new(
        "definitions/io.k8s.apimachinery.pkg.util.intstr.yaml"
    )));
}

#[test]
fn verbs_scope_and_subresources_come_from_the_paths() {
    let import = small_import();
    let widget = crd(&import, "widgets.example.dev");
    assert_eq!(
        widget["metadata"]["annotations"],
        json!({
            "kapi.dev/hooks": "crate::hooks::WidgetHooks",
            "kapi.dev/subresources": "approve=update",
            "kapi.dev/verbs": "create,delete,deletecollection,get,list,patch,update,watch",
        })
    );
    assert_eq!(widget["spec"]["scope"], "Namespaced");
    assert_eq!(
        widget["spec"]["names"],
        json!({"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
               "singular": "widget", "shortNames": ["wd"], "categories": ["all"]})
    );
    let v = &widget["spec"]["versions"][0];
    assert_eq!(
        v["subresources"],
        json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                       "statusReplicasPath": ".status.replicas"}})
    );
    assert_eq!(
        v["additionalPrinterColumns"][2],
        json!({"name": "Size", "type": "string", "jsonPath": ".spec.size", "priority": 1})
    );
    let root = &v["schema"]["openAPIV3Schema"];
    assert_eq!(root["required"], json!(["spec"]));
    assert_eq!(root["description"], "A widget.");

    let gadget = crd(&import, "gadgets.example.dev");
    assert_eq!(gadget["spec"]["scope"], "Cluster");
    assert_eq!(
        gadget["metadata"]["annotations"],
        json!({"kapi.dev/verbs": "get,list"})
    );
    assert!(gadget["spec"]["versions"][0].get("subresources").is_none());
    assert!(gadget["spec"]["names"].get("shortNames").is_none());

    // sorted by plural
    let names: Vec<&Value> = import.files[Path::new("example.dev-v1.yaml")]
        .documents
        .iter()
        .map(|d| &d["metadata"]["name"])
        .collect();
    assert_eq!(
        names,
        [&json!("gadgets.example.dev"), &json!("widgets.example.dev")]
    );

    let report = &import.report;
    assert_eq!(report.kinds, 2);
    assert_eq!(
        report.unserved_subresources["widgets.example.dev"]
            .iter()
            .collect::<Vec<_>>(),
        ["log"]
    );
    assert_eq!(report.dropped["x-kubernetes-group-version-kind"], 2);
    assert_eq!(report.dropped["x-kubernetes-unions"], 1);
    assert_eq!(report.dropped["x-kubernetes-list-type (not an array)"], 1);
    assert!(report.empty_defaults >= 2);
}

#[test]
fn small_files_parse_back_and_are_deterministic() {
    let a = small_import();
    let b = small_import();
    for (rel, file) in &a.files {
        assert_eq!(file.content, b.files[rel].content, "{}", rel.display());
        assert_eq!(
            parse_yaml(&file.content),
            file.documents,
            "{}",
            rel.display()
        );
    }
}

#[test]
fn tricky_strings_parse_back() {
    let mut doc = small_document();
    let tricky = [
        "line one\nline two\n\n\tindented with a tab",
        "ends with a newline\n",
        " leading space\nsecond",
        "true",
        "1.30",
        "a: b # not a comment",
        "- dash",
        "quote \" and backslash \\ and unicode é \u{2028} \u{7}",
        "",
        "trailing space \nnext",
        "[flow], {map}",
    ];
    let props = doc
        .pointer_mut("/components/schemas/dev.example.v1.WidgetStatus/properties")
        .unwrap()
        .as_object_mut()
        .unwrap();
    for (i, s) in tricky.iter().enumerate() {
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "description": s, "default": s, "enum": [s, "x"]}),
        );
    }
    let import = Small::new(&doc, SMALL_CONFIG).import().unwrap();
    for (rel, file) in &import.files {
        assert_eq!(
            parse_yaml(&file.content),
            file.documents,
            "{}",
            rel.display()
        );
    }
}

#[test]
fn writing_replaces_only_generated_files() {
    let import = small_import();
    let out = tempfile::tempdir().unwrap();
    let stale = out.path().join("definitions/old.package.yaml");
    let mine = out.path().join("hand-written.yaml");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, format!("{HEADER}apiVersion: v1\n")).unwrap();
    std::fs::write(&mine, "apiVersion: v1\n").unwrap();
    let summary = import.write(out.path()).unwrap();
    assert_eq!(summary.removed, std::slice::from_ref(&stale));
    assert!(!stale.exists());
    assert!(mine.exists());
    assert_eq!(summary.written.len(), import.files.len());
    let again = import.write(out.path()).unwrap();
    assert!(again.written.is_empty() && again.removed.is_empty());
}

#[test]
fn a_missing_document_is_named() {
    let small = Small::new(&small_document(), SMALL_CONFIG);
    let missing = small.dir.path().join("apis__nope__v1_openapi.json");
    let err = import(&[small.doc(), missing.clone()], &small.config()).unwrap_err();
    assert!(matches!(err, ImportError::Io { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&missing.display().to_string()),
        "{err}"
    );

    let err = import(&[small.doc()], &small.dir.path().join("nope.yaml")).unwrap_err();
    assert!(err.to_string().contains("nope.yaml"), "{err}");
}

#[test]
fn a_kind_the_documents_lack_is_named() {
    let config = SMALL_CONFIG.replace("kind: Gadget", "kind: Sprocket");
    let small = Small::new(&small_document(), &config);
    let err = small.import().unwrap_err().to_string();
    assert!(err.contains("Sprocket"), "{err}");
    assert!(err.contains("example.dev/v1"), "{err}");
    assert!(err.contains("config.yaml"), "{err}");
    assert!(err.contains("doc.json"), "{err}");
}

#[test]
fn config_mistakes_are_reported_where_they_are() {
    let cases = [
        (
            SMALL_CONFIG.replace("subresources: [approve]", "subresources: [approve, eject]"),
            "eject",
        ),
        (SMALL_CONFIG.replace("shortNames: [wd]", "shortName: [wd]"), "config.yaml:8:"),
        (
            SMALL_CONFIG.replace("type: date", "type: time"),
            "printerColumns[1].type",
        ),
        (
            SMALL_CONFIG.replace(
                "        scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}\n",
                "",
            ),
            "/scale",
        ),
        (SMALL_CONFIG.replace("subresources: [approve]", "subresources: [status]"), "status"),
        // A second version of a kind must name a version of it that stores it, and the
        // storage entry the hooks converting them.
        (
            SMALL_CONFIG.replace("      - kind: Gadget\n", "      - kind: Gadget\n        storedAs: v9\n"),
            "storedAs v9: the configuration lists no Gadget in example.dev/v9",
        ),
        (
            SMALL_CONFIG.replace(
                "hooks: crate::hooks::WidgetHooks",
                "hooks: crate::hooks::WidgetHooks\n        conversionHooks: crate::hooks::WidgetConversion",
            ),
            "conversionHooks without another version (storedAs) to convert",
        ),
        (
            SMALL_CONFIG.replace("kind: Widget\n", "kind: Widget\n        storedAs: v2\n"),
            "kinds[0].shortNames: set it on the storage version's entry",
        ),
    ];
    for (config, needle) in cases {
        let err = Small::new(&small_document(), &config)
            .import()
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}

/// The committed import is what kapi's own generator accepts: every kind, every
/// definition it refers to.
#[test]
fn the_committed_import_passes_the_generator_checks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/kubernetes");
    let checked = kapi_codegen::Builder::new()
        .schemas_dir(&dir)
        .check()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(checked.resource_count(), 62);
}
