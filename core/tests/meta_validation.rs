//! `metadata` validation answers with Kubernetes' messages
//! (k8s.io/apimachinery/pkg/api/validation; label keys and values with the current
//! `pkg/api/validate/content` wording, names with `pkg/util/validation`'s).

use kapi_core::meta::{NameRule, validate_object_meta, validate_object_meta_update};
use serde_json::{Value, json};

fn errors(meta: Value, namespaced: bool, rule: NameRule) -> Vec<String> {
    validate_object_meta(Some(&meta), namespaced, rule)
        .iter()
        .map(ToString::to_string)
        .collect()
}

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[test]
fn valid_metadata_has_no_errors() {
    let meta = json!({
        "name": "web-1.example", "namespace": "default",
        "labels": {"app.kubernetes.io/name": "web", "tier": "", "v": "1.2_3"},
        "annotations": {"example.com/Note": "anything at all: {}"},
        "finalizers": ["example.com/cleanup"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": true}]
    });
    assert_eq!(
        errors(meta, true, NameRule::Subdomain),
        Vec::<String>::new()
    );
}

#[test]
fn names() {
    assert_eq!(
        errors(json!({}), false, NameRule::Subdomain),
        ["metadata.name: Required value: name or generateName is required"]
    );
    assert_eq!(
        errors(json!({"name": "Web"}), false, NameRule::Subdomain),
        [format!(
            "metadata.name: Invalid value: \"Web\": {SUBDOMAIN}"
        )]
    );
    assert_eq!(
        errors(json!({"name": "a.b"}), false, NameRule::Label),
        [format!("metadata.name: Invalid value: \"a.b\": {LABEL}")]
    );
    let long = "a".repeat(254);
    assert_eq!(
        errors(json!({"name": long}), false, NameRule::Subdomain),
        [format!(
            "metadata.name: Invalid value: \"{long}\": must be no more than 253 characters"
        )]
    );
    // A generateName may end in '-'; the name is generated from it before validation.
    assert_eq!(
        errors(
            json!({"generateName": "web-", "name": "web-x7k2p"}),
            false,
            NameRule::Subdomain
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(
            json!({"generateName": "Web-", "name": "web-x7k2p"}),
            false,
            NameRule::Subdomain
        ),
        [format!(
            "metadata.generateName: Invalid value: \"Web-\": {SUBDOMAIN}"
        )]
    );
}

#[test]
fn namespaces() {
    assert_eq!(
        errors(json!({"name": "a"}), true, NameRule::Subdomain),
        ["metadata.namespace: Required value"]
    );
    assert_eq!(
        errors(
            json!({"name": "a", "namespace": "x"}),
            false,
            NameRule::Subdomain
        ),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
    assert_eq!(
        errors(
            json!({"name": "a", "namespace": "Dev"}),
            true,
            NameRule::Subdomain
        ),
        [format!(
            "metadata.namespace: Invalid value: \"Dev\": {LABEL}"
        )]
    );
}

#[test]
fn labels_and_annotations() {
    assert_eq!(
        errors(
            json!({"name": "a", "labels": {"-bad": "x"}}),
            false,
            NameRule::Subdomain
        ),
        [
            "metadata.labels: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        ]
    );
    assert_eq!(
        errors(
            json!({"name": "a", "labels": {"k": "bad value"}}),
            false,
            NameRule::Subdomain
        ),
        [
            "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        ]
    );
    let long = "v".repeat(64);
    assert_eq!(
        errors(
            json!({"name": "a", "labels": {"k": long}}),
            false,
            NameRule::Subdomain
        ),
        [format!(
            "metadata.labels: Invalid value: \"{long}\": must be no more than 63 bytes"
        )]
    );
    assert_eq!(
        errors(
            json!({"name": "a", "labels": {"Example.com/x": "y"}}),
            false,
            NameRule::Subdomain
        ),
        [format!(
            "metadata.labels: Invalid value: \"Example.com/x\": prefix part {SUBDOMAIN}"
        )]
    );
    assert_eq!(
        errors(
            json!({"name": "a", "labels": {"a/b/c": "y"}}),
            false,
            NameRule::Subdomain
        ),
        [
            "metadata.labels: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    );
    let big = "x".repeat(300 * 1024);
    assert_eq!(
        errors(
            json!({"name": "a", "annotations": {"k": big}}),
            false,
            NameRule::Subdomain
        ),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
}

#[test]
fn finalizers_and_owner_references() {
    assert_eq!(
        errors(
            json!({"name": "a", "finalizers": ["example.com/x", "example.com/x"]}),
            false,
            NameRule::Subdomain
        ),
        ["metadata.finalizers[1]: Duplicate value: \"example.com/x\""]
    );
    assert_eq!(
        errors(
            json!({"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}]}),
            false,
            NameRule::Subdomain
        ),
        ["metadata.ownerReferences.uid: Invalid value: \"\": uid must not be empty"]
    );
}

#[test]
fn identity_fields_are_immutable() {
    let old = json!({"name": "a", "namespace": "ns", "uid": "1"});
    let new = json!({"name": "a", "namespace": "ns", "uid": "2"});
    let errs: Vec<String> =
        validate_object_meta_update(Some(&new), Some(&old), true, NameRule::Subdomain)
            .iter()
            .map(ToString::to_string)
            .collect();
    assert_eq!(
        errs,
        ["metadata.uid: Invalid value: \"2\": field is immutable"]
    );
}
