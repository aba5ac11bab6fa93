//! Tables and partial object metadata against kube-apiserver's shapes for custom
//! resources.

mod common;

use chrono::{DateTime, Utc};
use kapi_apiserver::negotiation::{Conversion, MetaVersion};
use kapi_apiserver::table::{
    IncludeObject, TableOptions, column_definitions, list_table, negotiate, object_table,
    partial_object_metadata, partial_object_metadata_list,
};
use kapi_core::ResourceInfo;
use serde_json::{Value, json};

use common::{repo_schema, testdata_crd};

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2024-05-10T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn info_of(
    strategies: &[std::sync::Arc<dyn kapi_core::ObjectStrategy>],
    version: &str,
) -> ResourceInfo {
    strategies
        .iter()
        .map(|s| s.info().clone())
        .find(|i| i.version == version)
        .expect("version")
}

fn widget(name: &str, created: &str, spec: Value, status: Value) -> Value {
    json!({
        "apiVersion": "example.kapi.dev/v1",
        "kind": "Widget",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": format!("uid-{name}"),
            "resourceVersion": "12",
            "creationTimestamp": created,
            "labels": {"app": "demo"}
        },
        "spec": spec,
        "status": status
    })
}

#[test]
fn widget_column_definitions() {
    let info = info_of(&repo_schema("widget"), "v1");
    let defs = column_definitions(&info);
    let summary: Vec<(String, String, i64)> = defs
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["type"].as_str().unwrap().to_string(),
                d["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, i64)> = [
        ("Name", "string", 0),
        ("Size", "string", 0),
        ("Replicas", "integer", 0),
        ("Ready", "integer", 0),
        ("Color", "string", 1),
        ("Age", "date", 0),
    ]
    .iter()
    .map(|(n, t, p)| (n.to_string(), t.to_string(), *p))
    .collect();
    assert_eq!(summary, want);
    assert_eq!(defs[0]["format"], "name");
    assert!(
        defs[0]["description"]
            .as_str()
            .unwrap()
            .starts_with("Name must be unique within a namespace."),
        "{}",
        defs[0]
    );
    assert_eq!(
        defs[1],
        json!({
            "name": "Size",
            "type": "string",
            "format": "",
            "description": "Custom resource definition column (in JSONPath format): .spec.size",
            "priority": 0
        })
    );
}

#[test]
fn widget_list_table() {
    let info = info_of(&repo_schema("widget"), "v1");
    let list = json!({
        "apiVersion": "example.kapi.dev/v1",
        "kind": "WidgetList",
        "metadata": {"resourceVersion": "42", "continue": "abc", "remainingItemCount": 3},
        "items": [
            widget("a", "2024-05-10T11:55:00Z", json!({"size": "small", "replicas": 2, "color": "red"}), json!({"readyReplicas": 1})),
            widget("b", "2024-05-08T09:00:00Z", json!({"replicas": 1, "color": "blue"}), json!({})),
        ]
    });
    let t = list_table(&info, &list, &TableOptions::default(), now());
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        t["metadata"],
        json!({"resourceVersion": "42", "continue": "abc", "remainingItemCount": 3})
    );
    assert_eq!(t["columnDefinitions"].as_array().unwrap().len(), 6);
    assert_eq!(
        t["rows"][0]["cells"],
        json!(["a", "small", 2, 1, "red", "5m"])
    );
    // Missing values are null (kubectl prints `<none>`).
    assert_eq!(
        t["rows"][1]["cells"],
        json!(["b", null, 1, null, "blue", "2d3h"])
    );
    // Default includeObject=Metadata.
    assert_eq!(
        t["rows"][0]["object"],
        json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": list["items"][0]["metadata"]
        })
    );
    assert!(t["rows"][0].get("conditions").is_none());

    let none = list_table(
        &info,
        &list,
        &TableOptions {
            include_object: IncludeObject::None,
            version: MetaVersion::V1Beta1,
            no_headers: true,
        },
        now(),
    );
    assert_eq!(none["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(none["rows"][1]["object"], Value::Null);
    assert_eq!(none["columnDefinitions"], json!([]));

    let full = list_table(
        &info,
        &list,
        &TableOptions {
            include_object: IncludeObject::Object,
            ..Default::default()
        },
        now(),
    );
    assert_eq!(full["rows"][1]["object"], list["items"][1]);

    let empty = list_table(
        &info,
        &json!({"metadata": {}, "items": []}),
        &TableOptions::default(),
        now(),
    );
    assert_eq!(empty["rows"], json!([]));
    assert_eq!(empty["metadata"], json!({}));
}

#[test]
fn single_object_table_carries_its_resource_version() {
    let info = info_of(&repo_schema("widget"), "v1");
    let w = widget(
        "a",
        "2024-05-10T11:59:30Z",
        json!({"size": "large", "replicas": 20, "color": "red"}),
        json!({}),
    );
    let t = object_table(&info, &w, &TableOptions::default(), now());
    assert_eq!(t["metadata"], json!({"resourceVersion": "12"}));
    assert_eq!(t["rows"].as_array().unwrap().len(), 1);
    assert_eq!(
        t["rows"][0]["cells"],
        json!(["a", "large", 20, null, "red", "30s"])
    );
}

#[test]
fn resources_without_printer_columns_get_name_and_age() {
    let info = info_of(&testdata_crd("prometheus-operator-podmonitor"), "v1");
    let defs = column_definitions(&info);
    assert_eq!(defs.len(), 2);
    assert_eq!(defs[1]["name"], "Age");
    assert_eq!(defs[1]["type"], "date");
    assert!(
        defs[1]["description"]
            .as_str()
            .unwrap()
            .starts_with("CreationTimestamp is a timestamp"),
        "{}",
        defs[1]
    );
    let obj = json!({"metadata": {"name": "pm", "creationTimestamp": "2024-05-10T09:00:00Z"}});
    let t = object_table(&info, &obj, &TableOptions::default(), now());
    assert_eq!(t["rows"][0]["cells"], json!(["pm", "3h"]));
}

#[test]
fn testdata_printer_columns_evaluate() {
    // cert-manager: filters on conditions, priority-1 columns.
    let info = info_of(&testdata_crd("cert-manager-certificate"), "v1");
    let paths: Vec<&str> = info
        .printer_columns
        .iter()
        .map(|c| c.json_path.as_ref())
        .collect();
    assert!(paths.iter().any(|p| p.contains("[?(@.type")), "{paths:?}");
    let cert = json!({
        "metadata": {"name": "c", "creationTimestamp": "2024-05-10T11:00:00Z"},
        "spec": {"secretName": "s", "issuerRef": {"name": "ca"}},
        "status": {"conditions": [
            {"type": "Issuing", "status": "False", "message": "m0"},
            {"type": "Ready", "status": "True", "message": "Certificate is up to date"}
        ]}
    });
    let t = object_table(&info, &cert, &TableOptions::default(), now());
    let defs = t["columnDefinitions"].as_array().unwrap();
    let cells = t["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(defs.len(), cells.len());
    for (d, c) in defs.iter().zip(cells) {
        match d["name"].as_str().unwrap() {
            "Ready" => assert_eq!(c, "True"),
            "Secret" => assert_eq!(c, "s"),
            "Issuer" => assert_eq!(c, "ca"),
            "Status" => assert_eq!(c, "Certificate is up to date"),
            "Age" => assert_eq!(c, "60m"),
            _ => {}
        }
    }

    // gateway: a wildcard column takes the first value; gatewayclass: priority 1.
    let gw = info_of(&testdata_crd("gateway-api-gateway"), "v1");
    let obj = json!({
        "metadata": {"name": "g"},
        "spec": {"gatewayClassName": "x"},
        "status": {"addresses": [{"value": "10.0.0.1"}, {"value": "10.0.0.2"}]}
    });
    let t = object_table(&gw, &obj, &TableOptions::default(), now());
    let defs = t["columnDefinitions"].as_array().unwrap();
    let at = defs.iter().position(|d| d["name"] == "Address").unwrap();
    assert_eq!(t["rows"][0]["cells"][at], "10.0.0.1");
    // No creationTimestamp: the date column is `<unknown>`-free null, as in Go.
    let age = defs.iter().position(|d| d["name"] == "Age").unwrap();
    assert_eq!(t["rows"][0]["cells"][age], Value::Null);

    let gc = info_of(&testdata_crd("gateway-api-gatewayclass"), "v1");
    assert!(column_definitions(&gc).iter().any(|d| d["priority"] == 1));

    // prometheus: a boolean column and a single-quoted filter.
    let prom = info_of(&testdata_crd("prometheus-operator-prometheus"), "v1");
    let obj = json!({
        "metadata": {"name": "p"},
        "spec": {"version": "v2", "replicas": 2, "shards": 1},
        "status": {"paused": true, "availableReplicas": 2, "conditions": [{"type": "Reconciled", "status": "True"}, {"type": "Available", "status": "True"}]}
    });
    let t = object_table(&prom, &obj, &TableOptions::default(), now());
    let defs = t["columnDefinitions"].as_array().unwrap();
    let cells = &t["rows"][0]["cells"];
    for (i, d) in defs.iter().enumerate() {
        if d["type"] == "boolean" {
            assert_eq!(cells[i], true, "{d}");
        }
        if d["name"] == "Reconciled" {
            assert_eq!(cells[i], "True");
        }
    }
}

#[test]
fn partial_metadata() {
    let w = widget("a", "2024-05-10T11:55:00Z", json!({}), json!({}));
    assert_eq!(
        partial_object_metadata(&w, MetaVersion::V1),
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": w["metadata"]})
    );
    let list = json!({"metadata": {"resourceVersion": "7"}, "items": [w.clone(), w.clone()]});
    let l = partial_object_metadata_list(&list, MetaVersion::V1Beta1);
    assert_eq!(l["kind"], "PartialObjectMetadataList");
    assert_eq!(l["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(l["metadata"], json!({"resourceVersion": "7"}));
    assert_eq!(l["items"].as_array().unwrap().len(), 2);
    assert_eq!(l["items"][1]["kind"], "PartialObjectMetadata");
    assert_eq!(l["items"][1]["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        partial_object_metadata_list(&json!({"items": []}), MetaVersion::V1)["items"],
        json!([])
    );
}

#[test]
fn negotiation() {
    let kubectl_get = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    assert_eq!(
        negotiate(Some(kubectl_get)),
        Some(Conversion::Table(MetaVersion::V1))
    );
    assert_eq!(
        negotiate(Some(
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json"
        )),
        Some(Conversion::Table(MetaVersion::V1Beta1))
    );
    // client-go's metadata client.
    assert_eq!(
        negotiate(Some(
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
        )),
        Some(Conversion::PartialObjectMetadataList(MetaVersion::V1))
    );
    assert_eq!(
        negotiate(Some(
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
        )),
        Some(Conversion::PartialObjectMetadata(MetaVersion::V1))
    );
    for plain in [
        None,
        Some("application/json"),
        Some("*/*"),
        Some("application/json;as=Table;v=v2;g=meta.k8s.io,application/json"),
        Some("application/yaml"),
    ] {
        assert_eq!(negotiate(plain), None, "{plain:?}");
    }
    assert_eq!(IncludeObject::from_query(None), Ok(IncludeObject::Metadata));
    assert_eq!(
        IncludeObject::from_query(Some("Object")),
        Ok(IncludeObject::Object)
    );
    assert_eq!(
        IncludeObject::from_query(Some("None")),
        Ok(IncludeObject::None)
    );
    assert_eq!(
        IncludeObject::from_query(Some("All")),
        Err("unrecognized includeObject value: \"All\"".to_string())
    );
}
