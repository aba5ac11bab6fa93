//! The generated conversion of `conversion.yaml`'s Gadget, with the hooks of
//! `src/lib.rs`: what matches by name converts field by field, the hooks fill the rest,
//! and every object round trips through the other version unchanged.

use std::sync::Arc;

use kapi_core::conversion::VersionConverter;
use kapi_core::{ObjectStrategy, Registrar};
use serde_json::{Value, json};

#[derive(Default)]
struct Conversions(
    Vec<(String, String, Arc<dyn VersionConverter>)>,
    Vec<(String, String, Value)>,
);

impl Registrar for Conversions {
    fn register(&mut self, _: Arc<dyn ObjectStrategy>) {}

    fn register_conversion_webhook(&mut self, group: &str, plural: &str, conversion: &str) {
        let conversion = serde_json::from_str(conversion).expect("JSON");
        self.1.push((group.into(), plural.into(), conversion));
    }

    fn register_conversion(&mut self, group: &str, plural: &str, c: Arc<dyn VersionConverter>) {
        self.0.push((group.into(), plural.into(), c));
    }
}

/// The conversion the fixtures register for `group`.
fn converter_of(group: &str) -> Arc<dyn VersionConverter> {
    let mut c = Conversions::default();
    kapi_codegen_compile_tests::fixtures::register(&mut c);
    let groups: Vec<(&str, &str)> =
        c.0.iter()
            .map(|(g, p, _)| (g.as_str(), p.as_str()))
            .collect();
    assert_eq!(
        groups,
        [
            ("conv.example.com", "gadgets"),
            ("defs.example.com", "pools")
        ],
        "one per converting fixture"
    );
    c.0.into_iter()
        .find(|(g, _, _)| g == group)
        .map(|(_, _, c)| c)
        .expect("registered")
}

fn converter() -> Arc<dyn VersionConverter> {
    converter_of("conv.example.com")
}

#[test]
fn external_conversions_hand_their_webhook_to_the_server() {
    let mut c = Conversions::default();
    kapi_codegen_compile_tests::testdata::register(&mut c);
    assert!(
        c.0.is_empty(),
        "no conversion is generated for the testdata"
    );
    let resources: Vec<(&str, &str)> =
        c.1.iter()
            .map(|(g, p, _)| (g.as_str(), p.as_str()))
            .collect();
    assert_eq!(
        resources,
        [
            ("opentelemetry.io", "opentelemetrycollectors"),
            ("tekton.dev", "pipelines"),
        ]
    );
    let tekton = &c.1[1].2;
    assert_eq!(tekton["strategy"], "Webhook");
    assert_eq!(
        tekton["webhook"]["clientConfig"]["service"]["name"],
        "tekton-pipelines-webhook"
    );
    assert_eq!(
        tekton["webhook"]["conversionReviewVersions"],
        json!(["v1beta1", "v1"])
    );
}

#[test]
fn shared_definitions_convert_through_their_hooks_and_a_shared_one_is_cloned() {
    let c = converter_of("defs.example.com");
    let v1 = json!({"apiVersion": "defs.example.com/v1", "kind": "Pool", "metadata": {"name": "p"},
        "spec": {"size": 3, "zone": "eu-1"}, "status": {"ready": 2}});
    let v2 = c.convert(v1.clone(), "defs.example.com/v2").unwrap();
    assert_eq!(v2["spec"], json!({"size": 3, "zones": ["eu-1"]}));
    assert_eq!(v2["status"], json!({"ready": 2}));
    assert_eq!(c.convert(v2, "defs.example.com/v1").unwrap(), v1);
}

fn v1() -> Value {
    json!({"apiVersion": "conv.example.com/v1", "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u", "resourceVersion": "7",
            "labels": {"a": "b"}},
        "spec": {"owner": "ana", "endpoint": "db:5432", "weight": 3, "mode": "safe",
            "labels": {"x": "y"}, "parts": [{"name": "p", "count": 2}, {"name": "q"}]}})
}

#[test]
fn versions_convert_through_the_hub_and_back() {
    let c = converter();
    let v2 = c.convert(v1(), "conv.example.com/v2").unwrap();
    assert_eq!(
        v2,
        json!({"apiVersion": "conv.example.com/v2", "kind": "Gadget",
            "metadata": {"name": "g", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                "labels": {"a": "b"}},
            "spec": {"maintainer": "ana", "host": "db", "port": 5432, "weight": 3,
                "mode": "safe", "labels": {"x": "y"},
                "parts": [{"name": "p", "count": 2}, {"name": "q"}]}})
    );
    assert_eq!(c.convert(v2.clone(), "conv.example.com/v1").unwrap(), v1());
    assert_eq!(
        c.convert(v2.clone(), "conv.example.com/v2").unwrap(),
        v2,
        "hub to hub"
    );
    let empty = json!({"apiVersion": "conv.example.com/v1", "kind": "Gadget", "metadata": {}});
    let there = c.convert(empty.clone(), "conv.example.com/v2").unwrap();
    assert_eq!(c.convert(there, "conv.example.com/v1").unwrap(), empty);
}

#[test]
fn unknown_versions_and_bad_objects_are_errors() {
    let c = converter();
    let err = c.convert(v1(), "conv.example.com/v3").unwrap_err();
    assert_eq!(err, "no conversion to conv.example.com/v3");
    let mut other = v1();
    other["apiVersion"] = json!("conv.example.com/v0");
    assert_eq!(
        c.convert(other, "conv.example.com/v2").unwrap_err(),
        "no conversion from conv.example.com/v0"
    );
    let mut bad = v1();
    bad["spec"]["weight"] = json!("heavy");
    assert!(
        c.convert(bad, "conv.example.com/v2")
            .unwrap_err()
            .contains("invalid type")
    );
}
