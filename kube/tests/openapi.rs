//! OpenAPI documents against kube-apiserver's shapes (the published v3 documents in the
//! shared testdata) and what kubectl reads from them.

mod common;

use std::collections::BTreeSet;

use kapi_apiserver::openapi::{
    OpenApiOptions, definition_name, group_version_path, v2, v3_document, v3_hash, v3_index,
};
use serde_json::{Value, json};

use common::{all_testdata, builtin_schema, repo_schema, testdata_crd, testdata_dir};

const WIDGET: &str = "dev.kapi.example.v1.Widget";

fn widget_doc() -> Value {
    v3_document(
        &repo_schema("widget"),
        &OpenApiOptions::default(),
        "apis/example.kapi.dev/v1",
    )
    .expect("widget document")
}

fn published(name: &str) -> Value {
    let path = testdata_dir().join("openapi").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("testdata openapi")).unwrap()
}

/// Every `$ref` in `doc`.
fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

/// The definition a schema refers to, directly or through a one-element `allOf`.
fn target(s: &Value) -> Option<&str> {
    s.get("$ref")
        .or_else(|| s.pointer("/allOf/0/$ref"))
        .and_then(Value::as_str)
}

/// Checks every reference resolves and no `$ref` has siblings (as in kube's v3 output).
fn check_v3(doc: &Value) {
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut all = Vec::new();
    refs(doc, &mut all);
    for r in all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{r}"));
        assert!(schemas.contains_key(name), "dangling {r}");
    }
    fn no_siblings(v: &Value) {
        match v {
            Value::Object(m) => {
                if m.get("$ref").is_some_and(Value::is_string) {
                    assert_eq!(m.len(), 1, "$ref with siblings: {v}");
                }
                m.values().for_each(no_siblings);
            }
            Value::Array(a) => a.iter().for_each(no_siblings),
            _ => {}
        }
    }
    no_siblings(doc);
}

/// The component schema of a kind, found as kubectl finds it: by its
/// `x-kubernetes-group-version-kind`.
fn by_gvk<'a>(doc: &'a Value, group: &str, version: &str, kind: &str) -> &'a Value {
    let want = json!({"group": group, "version": version, "kind": kind});
    doc["components"]["schemas"]
        .as_object()
        .unwrap()
        .values()
        .find(|s| {
            s["x-kubernetes-group-version-kind"]
                .as_array()
                .is_some_and(|l| l.contains(&want))
        })
        .unwrap_or_else(|| panic!("no schema for {group}/{version} {kind}"))
}

#[test]
fn widget_schema_follows_the_crd_builder() {
    let doc = widget_doc();
    check_v3(&doc);
    assert_eq!(doc["openapi"], "3.0.0");
    let w = &doc["components"]["schemas"][WIDGET];
    assert_eq!(by_gvk(&doc, "example.kapi.dev", "v1", "Widget"), w);
    assert_eq!(w["type"], "object");
    assert_eq!(
        w["description"],
        "A Widget is an example resource served by kapi."
    );
    assert_eq!(w["required"], json!(["spec"]));
    assert_eq!(
        w["properties"]["metadata"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
    );
    assert!(
        w["properties"]["metadata"]["description"]
            .as_str()
            .unwrap()
            .starts_with("Standard object's metadata.")
    );
    assert!(
        w["properties"]["apiVersion"]["description"]
            .as_str()
            .unwrap()
            .starts_with("APIVersion defines the versioned schema")
    );
    assert_eq!(w["properties"]["kind"]["type"], "string");
    assert_eq!(
        w["x-kubernetes-selectable-fields"],
        json!([{"fieldPath": "spec.size"}])
    );
    let spec = &w["properties"]["spec"];
    assert_eq!(spec["required"], json!(["color"]));
    assert_eq!(
        spec["x-kubernetes-validations"],
        json!([{"rule": "self.replicas <= 10 || self.size == 'large'", "message": "only large widgets may have more than 10 replicas"}])
    );
    assert_eq!(
        spec["properties"]["size"],
        json!({"type": "string", "description": "How big each widget is.", "enum": ["small", "medium", "large"], "default": "medium"})
    );
    assert_eq!(
        spec["properties"]["replicas"],
        json!({"type": "integer", "format": "int32", "description": "How many widgets to run.", "minimum": 0, "maximum": 100, "default": 1})
    );
    assert_eq!(spec["properties"]["color"]["pattern"], "^[a-z]+$");
    assert_eq!(spec["properties"]["color"]["maxLength"], 32);
    let ports = &spec["properties"]["ports"];
    assert_eq!(ports["x-kubernetes-list-type"], "map");
    assert_eq!(ports["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(
        ports["items"]["properties"]["targetPort"],
        json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]})
    );
    assert_eq!(spec["properties"]["tags"]["x-kubernetes-list-type"], "set");
    assert_eq!(
        spec["properties"]["labels"]["additionalProperties"],
        json!({"type": "string"})
    );
    assert_eq!(
        spec["properties"]["config"],
        json!({"type": "object", "description": "Opaque configuration passed through unchanged.", "x-kubernetes-preserve-unknown-fields": true})
    );

    let list = &doc["components"]["schemas"]["dev.kapi.example.v1.WidgetList"];
    assert_eq!(by_gvk(&doc, "example.kapi.dev", "v1", "WidgetList"), list);
    assert_eq!(list["required"], json!(["items"]));
    assert_eq!(
        list["properties"]["items"]["items"],
        json!({"$ref": format!("#/components/schemas/{WIDGET}")})
    );
    assert_eq!(
        list["properties"]["metadata"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}])
    );
}

#[test]
fn widget_paths_follow_the_crd_builder() {
    let doc = widget_doc();
    let paths = doc["paths"].as_object().unwrap();
    let base = "/apis/example.kapi.dev/v1";
    let ns = format!("{base}/namespaces/{{namespace}}/widgets");
    let expected: BTreeSet<String> = [
        format!("{base}/widgets"),
        ns.clone(),
        format!("{ns}/{{name}}"),
        format!("{ns}/{{name}}/status"),
        format!("{ns}/{{name}}/scale"),
    ]
    .into_iter()
    .collect();
    assert_eq!(paths.keys().cloned().collect::<BTreeSet<_>>(), expected);

    let methods = |p: &str| -> Vec<String> {
        paths[p]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "parameters")
            .cloned()
            .collect()
    };
    assert_eq!(methods(&ns), ["delete", "get", "post"]);
    assert_eq!(
        methods(&format!("{ns}/{{name}}")),
        ["delete", "get", "patch", "put"]
    );
    assert_eq!(
        methods(&format!("{ns}/{{name}}/scale")),
        ["get", "patch", "put"]
    );

    let item = &paths[&format!("{ns}/{{name}}")];
    let common: Vec<&str> = item["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(common, ["name", "namespace", "pretty"]);
    assert_eq!(
        item["parameters"][0],
        json!({"name": "name", "in": "path", "required": true, "description": "name of the Widget", "schema": {"type": "string", "uniqueItems": true}})
    );
    let get = &item["get"];
    assert_eq!(get["operationId"], "readExampleKapiDevV1NamespacedWidget");
    assert_eq!(get["description"], "read the specified Widget");
    assert_eq!(get["tags"], json!(["exampleKapiDev_v1"]));
    assert_eq!(get["x-kubernetes-action"], "get");
    assert_eq!(
        get["x-kubernetes-group-version-kind"],
        json!({"group": "example.kapi.dev", "version": "v1", "kind": "Widget"})
    );
    assert_eq!(
        get["responses"]["200"],
        json!({"description": "OK", "content": {
            "application/json": {"schema": {"$ref": format!("#/components/schemas/{WIDGET}")}},
            "application/yaml": {"schema": {"$ref": format!("#/components/schemas/{WIDGET}")}}
        }})
    );
    assert_eq!(
        get["responses"]["401"],
        json!({"description": "Unauthorized"})
    );

    let patch = &item["patch"];
    let content = patch["requestBody"]["content"].as_object().unwrap();
    assert!(content.contains_key("application/strategic-merge-patch+json"));
    assert!(content.contains_key("application/apply-patch+yaml"));
    assert_eq!(patch["requestBody"]["required"], true);
    assert_eq!(
        content["application/merge-patch+json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
    );
    let names: Vec<&str> = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );

    let delete = &item["delete"];
    assert_eq!(
        delete["operationId"],
        "deleteExampleKapiDevV1NamespacedWidget"
    );
    assert!(delete["requestBody"].get("required").is_none());
    assert_eq!(
        delete["responses"]["202"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status"
    );
    let collection = &paths[&ns]["delete"];
    assert_eq!(
        collection["operationId"],
        "deleteExampleKapiDevV1CollectionNamespacedWidget"
    );
    assert_eq!(collection["x-kubernetes-action"], "deletecollection");
    assert_eq!(paths[&ns]["post"]["x-kubernetes-action"], "post");
    assert_eq!(
        paths[&ns]["post"]["responses"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["200", "201", "202", "401"]
    );
    let all = &paths[&format!("{base}/widgets")];
    assert_eq!(
        all["get"]["operationId"],
        "listExampleKapiDevV1WidgetForAllNamespaces"
    );
    // A path with one operation has all its parameters at path level.
    assert!(all["get"].get("parameters").is_none());
    assert!(
        all["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "watch")
    );

    let scale = &paths[&format!("{ns}/{{name}}/scale")];
    assert_eq!(
        scale["put"]["operationId"],
        "replaceExampleKapiDevV1NamespacedWidgetScale"
    );
    assert_eq!(
        scale["get"]["description"],
        "read scale of the specified Widget"
    );
    assert_eq!(
        scale["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"
    );
    assert_eq!(
        by_gvk(&doc, "autoscaling", "v1", "Scale")["properties"]["spec"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.autoscaling.v1.ScaleSpec"
    );

    // Without server-side field validation, kubectl validates client-side instead.
    let no_fv = v3_document(
        &repo_schema("widget"),
        &OpenApiOptions {
            field_validation: false,
        },
        "apis/example.kapi.dev/v1",
    )
    .unwrap();
    let text = serde_json::to_string(&no_fv).unwrap();
    assert!(!text.contains("\"fieldValidation\""));
}

#[test]
fn operations_are_shaped_like_kube_apiserver_s() {
    // Same keys at every level as the published coordination.k8s.io document (which
    // also lists protobuf/CBOR content and watch paths we do not serve).
    let lease = published("apis__coordination.k8s.io__v1_openapi.json");
    let mut op_keys = BTreeSet::new();
    let mut param_keys = BTreeSet::new();
    for item in lease["paths"].as_object().unwrap().values() {
        for (k, op) in item.as_object().unwrap() {
            if k == "parameters" {
                continue;
            }
            op_keys.extend(op.as_object().unwrap().keys().cloned());
        }
        for p in item["parameters"].as_array().into_iter().flatten() {
            param_keys.extend(p.as_object().unwrap().keys().cloned());
        }
    }
    let doc = widget_doc();
    for item in doc["paths"].as_object().unwrap().values() {
        for (k, op) in item.as_object().unwrap() {
            if k == "parameters" {
                for p in op.as_array().unwrap() {
                    for key in p.as_object().unwrap().keys() {
                        assert!(param_keys.contains(key), "parameter key {key}");
                    }
                }
                continue;
            }
            for key in op.as_object().unwrap().keys() {
                assert!(op_keys.contains(key), "operation key {key}");
            }
        }
    }
    // The apimachinery definitions have the published properties and types.
    for name in [
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
        "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause",
        "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
    ] {
        let ours = &doc["components"]["schemas"][name];
        let theirs = &lease["components"]["schemas"][name];
        assert_eq!(ours["type"], theirs["type"], "{name}");
        assert_eq!(ours["format"], theirs["format"], "{name}");
        let keys = |s: &Value| -> BTreeSet<String> {
            s["properties"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        // k8s-openapi may target a newer Kubernetes than the published 1.35 documents.
        assert!(keys(ours).is_superset(&keys(theirs)), "{name}");
        for (field, theirs_field) in theirs["properties"].as_object().into_iter().flatten() {
            let ours_field = &ours["properties"][field];
            assert_eq!(ours_field["type"], theirs_field["type"], "{name}.{field}");
            // kube wraps references that carry `default: {}`; the target is what counts.
            assert_eq!(target(ours_field), target(theirs_field), "{name}.{field}");
            assert_eq!(
                target(&ours_field["items"]),
                target(&theirs_field["items"]),
                "{name}.{field}"
            );
        }
    }
    // Scale as published in apps/v1.
    let apps = published("apis__apps__v1_openapi.json");
    let ours = by_gvk(&doc, "autoscaling", "v1", "Scale");
    let theirs = &apps["components"]["schemas"]["io.k8s.api.autoscaling.v1.Scale"];
    assert_eq!(
        ours["properties"]["spec"]["allOf"],
        theirs["properties"]["spec"]["allOf"]
    );
}

#[test]
fn every_testdata_crd_builds_consistent_documents() {
    let all = all_testdata();
    let opts = OpenApiOptions::default();
    let index = v3_index(&all, &opts);
    let paths = index["paths"].as_object().unwrap();
    assert!(paths.contains_key("apis/gateway.networking.k8s.io/v1beta1"));
    assert!(
        !paths.contains_key("apis/external-secrets.io/v1beta1"),
        "not served"
    );
    for (path, entry) in paths {
        let doc = v3_document(&all, &opts, path).unwrap();
        check_v3(&doc);
        assert_eq!(
            entry["serverRelativeURL"],
            format!("/openapi/v3/{path}?hash={}", v3_hash(&doc))
        );
        // Every kind of the group-version is findable by its group-version-kind.
        let (g, v) = path.trim_start_matches("apis/").split_once('/').unwrap();
        for s in all
            .iter()
            .map(|s| s.info())
            .filter(|i| i.served && i.group == g && i.version == v)
        {
            by_gvk(&doc, g, v, &s.kind);
            by_gvk(&doc, g, v, &s.list_kind);
        }
    }
    // Hashes are stable and differ between documents.
    assert_eq!(index, v3_index(&all, &opts));
    let hashes: BTreeSet<&str> = paths
        .values()
        .map(|e| e["serverRelativeURL"].as_str().unwrap())
        .collect();
    assert_eq!(hashes.len(), paths.len());

    assert_eq!(v3_document(&all, &opts, "apis/nope.example/v1"), None);
    assert_eq!(
        v3_document(&all, &opts, "apis/external-secrets.io/v1beta1"),
        None
    );
    assert_eq!(v3_document(&all, &opts, "nonsense"), None);
    assert!(v3_document(&all, &opts, "/apis/cert-manager.io/v1").is_some());
}

#[test]
fn v2_document() {
    let all = all_testdata();
    let mut with_widget = repo_schema("widget");
    with_widget.extend(all);
    let doc = v2(&with_widget, &OpenApiOptions::default());
    assert_eq!(doc["swagger"], "2.0");
    let defs = doc["definitions"].as_object().unwrap();
    let mut all_refs = Vec::new();
    refs(&doc, &mut all_refs);
    for r in all_refs {
        let name = r
            .strip_prefix("#/definitions/")
            .unwrap_or_else(|| panic!("{r}"));
        assert!(defs.contains_key(name), "dangling {r}");
    }
    // ToStructuralOpenAPIV2: no junctors, nullable or defaults anywhere in CRD schemas.
    fn walk(v: &Value, at: &str) {
        if let Value::Object(m) = v {
            for key in ["anyOf", "allOf", "oneOf", "not", "nullable"] {
                assert!(!m.contains_key(key), "{key} at {at}");
            }
            if m.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true)) {
                assert!(
                    !m.contains_key("properties") && !m.contains_key("items"),
                    "{at}"
                );
                assert_ne!(m.get("type"), Some(&json!("object")), "{at}");
            }
            if m.get("type") == Some(&json!("array")) {
                assert!(m.contains_key("items"), "{at}");
            }
            for (k, x) in m {
                if k != "default" || at.ends_with("properties") {
                    walk(x, &format!("{at}.{k}"));
                } else {
                    panic!("default at {at}");
                }
            }
        }
    }
    for (name, def) in defs {
        if !name.starts_with("io.k8s.") {
            walk(def, name);
        }
    }
    let w = &defs[WIDGET];
    assert_eq!(
        w["properties"]["metadata"],
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": w["properties"]["metadata"]["description"]})
    );
    assert_eq!(
        w["properties"]["spec"]["properties"]["ports"]["items"]["properties"]["targetPort"],
        json!({"x-kubernetes-int-or-string": true})
    );
    assert_eq!(
        w["properties"]["spec"]["properties"]["config"],
        json!({"description": "Opaque configuration passed through unchanged.", "x-kubernetes-preserve-unknown-fields": true})
    );
    let op =
        &doc["paths"]["/apis/example.kapi.dev/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    assert!(
        op["consumes"]
            .as_array()
            .unwrap()
            .contains(&json!("application/strategic-merge-patch+json"))
    );
    assert_eq!(
        op["produces"],
        json!(["application/json", "application/yaml"])
    );
    assert_eq!(op["schemes"], json!(["https"]));
    assert_eq!(
        op["parameters"][0],
        json!({"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}})
    );
    assert_eq!(
        op["parameters"][1],
        json!({"uniqueItems": true, "type": "string", "description": op["parameters"][1]["description"], "name": "dryRun", "in": "query"})
    );
    assert_eq!(
        op["responses"]["200"],
        json!({"description": "OK", "schema": {"$ref": format!("#/definitions/{WIDGET}")}})
    );
    // Nullable fields lose their type (sealed-secrets), and preserve-unknown at the
    // root publishes a bare object.
    let sealed = v2(
        &testdata_crd("sealed-secrets-sealedsecret"),
        &OpenApiOptions::default(),
    );
    let text = serde_json::to_string(&sealed).unwrap();
    assert!(!text.contains("\"nullable\""));
}

#[test]
fn kubectl_explain_and_apply_lookups() {
    let doc = widget_doc();
    // explain widgets.spec.replicas
    let w = by_gvk(&doc, "example.kapi.dev", "v1", "Widget");
    assert_eq!(
        w["properties"]["spec"]["properties"]["replicas"]["description"],
        "How many widgets to run."
    );
    // apply: the PATCH operation of the kind accepts strategic merge
    // (gvkSupportsPatchOpenAPIV3) and lists fieldValidation (QueryParamVerifierV3).
    let want = json!({"group": "example.kapi.dev", "version": "v1", "kind": "Widget"});
    let patch_ops: Vec<&Value> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|p| p.get("patch"))
        .filter(|op| op["x-kubernetes-group-version-kind"] == want)
        .collect();
    assert_eq!(patch_ops.len(), 3);
    for op in patch_ops {
        assert!(
            op["requestBody"]["content"]
                .get("application/strategic-merge-patch+json")
                .is_some()
        );
        assert!(
            op["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
    }
}

#[test]
fn core_group_documents() {
    let core = builtin_schema("core-v1");
    let opts = OpenApiOptions::default();
    let index = v3_index(&core, &opts);
    assert!(index["paths"].get("api/v1").is_some(), "{index}");
    let doc = v3_document(&core, &opts, "api/v1").unwrap();
    check_v3(&doc);
    assert_eq!(
        definition_name("", "v1", "Namespace"),
        "io.k8s.api.core.v1.Namespace"
    );
    assert!(
        doc["components"]["schemas"]
            .get("io.k8s.api.core.v1.Namespace")
            .is_some()
    );
    // Shared definitions are published once and referred to, as kube-apiserver does:
    // the Pod's spec is a $ref (wrapped in allOf beside its description) to PodSpec.
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["allOf"],
        json!([{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}])
    );
    let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(
        containers["items"],
        json!({"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"})
    );
    assert!(schemas["io.k8s.api.core.v1.Container"]["properties"]["image"].is_object());
    let ns = &doc["paths"]["/api/v1/namespaces/{name}"]["get"];
    assert_eq!(ns["operationId"], "readCoreV1Namespace");
    assert_eq!(ns["tags"], json!(["core_v1"]));
    assert_eq!(group_version_path("", "v1"), "api/v1");
    assert_eq!(group_version_path("apps", "v1"), "apis/apps/v1");
}

#[test]
fn definition_names_reverse_the_group() {
    assert_eq!(definition_name("example.kapi.dev", "v1", "Widget"), WIDGET);
    assert_eq!(
        definition_name("gateway.networking.k8s.io", "v1beta1", "GatewayClass"),
        "io.k8s.networking.gateway.v1beta1.GatewayClass"
    );
}
