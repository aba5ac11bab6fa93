//! CustomResourceDefinitions written through the API are checked as kube-apiserver checks
//! them: every real CRD in the shared testdata is accepted, and a non-structural one is
//! refused with a 422 naming each problem's field path.

use kapi_tests::{Backend, Kapi};
use serde_json::{Value, json};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const JSON: &str = "application/json";

#[test]
fn every_testdata_crd_is_accepted() {
    let kapi = Kapi::start(Backend::Embedded);
    let files = kapi_testing::testdata_crd_files();
    assert_eq!(files.len(), 14);
    for file in files {
        let crd = kapi_testing::yaml_documents(&file).remove(0);
        let (code, body) = kapi.request("POST", CRDS, JSON, Some(&crd));
        assert_eq!(code, 201, "{}: {body}", file.display());
    }
    let out = kapi.kubectl(&["get", "crds", "-o", "name"]);
    assert_eq!(out.lines().count(), 14, "{out}");
}

fn crd(schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Gadget", "plural": "gadgets"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}]
        }
    })
}

#[test]
fn a_non_structural_crd_is_refused_with_field_paths() {
    let kapi = Kapi::start(Backend::Embedded);
    let (code, status) = kapi.request(
        "POST",
        CRDS,
        JSON,
        Some(&crd(json!({
            "type": "object",
            "properties": {"spec": {"properties": {"size": {"type": "strng"}}}}
        }))),
    );
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    let causes: Vec<String> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type: Unsupported value: \"strng\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields",
        ]
    );
    // A name that is not plural.group is refused too, and nothing was stored.
    let mut misnamed = crd(json!({"type": "object"}));
    misnamed["metadata"]["name"] = json!("gadget.example.com");
    let (code, status) = kapi.request("POST", CRDS, JSON, Some(&misnamed));
    assert_eq!(code, 422, "{status}");
    let (_, list) = kapi.request("GET", CRDS, JSON, None);
    assert_eq!(list["items"], json!([]));
}
