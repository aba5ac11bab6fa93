//! CustomResourceDefinitions written through the API are checked as kube-apiserver checks
//! them: every real CRD in the shared testdata is accepted, and a non-structural one,
//! one whose CEL rules name missing fields or cost too much, or one with a bad conversion
//! webhook configuration, is refused with a 422 naming each problem's field path.

use kapi_tests::{Backend, Kapi, causes};
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
    let causes = causes(&status);
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

#[test]
fn cel_rules_are_checked_against_the_schema_when_the_crd_is_written() {
    let kapi = Kapi::start(Backend::Embedded);
    let rules = |rule: &str| {
        crd(json!({
            "type": "object",
            "properties": {"spec": {
                "type": "object",
                "properties": {"shelves": {"type": "integer"},
                               "tags": {"type": "array", "items": {"type": "string"}}},
                "x-kubernetes-validations": [{"rule": rule}]
            }}
        }))
    };
    let at = "spec.versions[0].schema.openAPIV3Schema";
    let (code, status) = kapi.request("POST", CRDS, JSON, Some(&rules("self.shelfs > 0")));
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        causes(&status),
        [format!(
            "{at}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: \"self.shelfs > 0\": compilation failed: ERROR: <input>:1:5: undefined field 'shelfs'\n | self.shelfs > 0\n | ....^"
        )]
    );
    let quadratic = "self.tags.all(a, self.tags.all(b, a == b))";
    let (code, status) = kapi.request("POST", CRDS, JSON, Some(&rules(quadratic)));
    assert_eq!(code, 422, "{status}");
    let hint = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";
    assert_eq!(
        causes(&status),
        [
            format!(
                "{at}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {hint}"
            ),
            format!(
                "{at}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
            ),
            format!(
                "{at}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x {hint}"
            ),
        ]
    );
    // Bounded, the same rule is cheap enough, and the CRD is served.
    let mut bounded = rules(quadratic);
    let tags = &mut bounded["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["tags"];
    tags["maxItems"] = json!(16);
    tags["items"]["maxLength"] = json!(64);
    let (code, status) = kapi.request("POST", CRDS, JSON, Some(&bounded));
    assert_eq!(code, 201, "{status}");
}

/// `spec.conversion` is checked as kube's `validateCustomResourceConversion` checks it,
/// naming kube's internal fields as kube's messages do.
#[test]
fn conversion_webhooks_are_checked_as_kube_checks_them() {
    let kapi = Kapi::start(Backend::Embedded);
    let mut body = crd(json!({"type": "object"}));
    let refused = |body: &Value| {
        let (code, status) = kapi.request("POST", CRDS, JSON, Some(body));
        assert_eq!(code, 422, "{status}");
        causes(&status)
    };
    body["spec"]["conversion"] = json!({"strategy": "Webhook"});
    assert_eq!(
        refused(&body),
        [
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            "spec.conversion.conversionReviewVersions: Required value",
        ]
    );
    body["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "http://convert.example.com/x?y=1"},
        "conversionReviewVersions": ["v2"]}});
    assert_eq!(
        refused(&body),
        [
            "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            "spec.conversion.webhookClientConfig.url: Invalid value: \"y=1\": query parameters are not permitted in the URL",
            "spec.conversion.conversionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1",
        ]
    );
    body["spec"]["conversion"] = json!({"strategy": "None", "webhook": {
        "conversionReviewVersions": ["v1"]}});
    assert_eq!(
        refused(&body),
        [
            "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"
        ]
    );
    body["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"name": "conv", "namespace": "default", "path": "/convert"}},
        "conversionReviewVersions": ["v1"]}});
    let (code, out) = kapi.request("POST", CRDS, JSON, Some(&body));
    assert_eq!(code, 201, "{out}");
}
