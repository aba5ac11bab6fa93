//! The generated conversion of `conversion.yaml`'s Gadget, with the hooks of
//! `src/lib.rs`: what matches by name converts field by field, the hooks fill the rest,
//! and every object round trips through the other version unchanged.

use std::sync::Arc;

use kapi_core::conversion::VersionConverter;
use kapi_core::{ObjectStrategy, Registrar};
use serde_json::{Value, json};

#[derive(Default)]
struct Conversions(Vec<(String, String, Arc<dyn VersionConverter>)>);

impl Registrar for Conversions {
    fn register(&mut self, _: Arc<dyn ObjectStrategy>) {}

    fn register_conversion(&mut self, group: &str, plural: &str, c: Arc<dyn VersionConverter>) {
        self.0.push((group.into(), plural.into(), c));
    }
}

fn converter() -> Arc<dyn VersionConverter> {
    let mut c = Conversions::default();
    kapi_codegen_compile_tests::fixtures::register(&mut c);
    let [(group, plural, converter)] = <[_; 1]>::try_from(c.0).ok().expect("one conversion");
    assert_eq!(
        (group.as_str(), plural.as_str()),
        ("conv.example.com", "gadgets")
    );
    converter
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
