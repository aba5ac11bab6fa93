//! Sample objects of the testdata CRDs validate cleanly and survive deserialize →
//! validate → serialize through their generated types unchanged; invalid ones are
//! refused with Kubernetes' causes.

use std::collections::BTreeMap;
use std::sync::Arc;

use kapi_codegen_compile_tests::testdata;
use kapi_core::{ObjectStrategy, Registrar, Resource};
use serde_json::Value;

#[derive(Default)]
struct Strategies(BTreeMap<(String, String), Arc<dyn ObjectStrategy>>);

impl Registrar for Strategies {
    fn register(&mut self, s: Arc<dyn ObjectStrategy>) {
        let info = s.info();
        self.0
            .insert((info.api_version(), info.kind.to_string()), s.clone());
    }
}

fn samples(file: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(file);
    kapi_testing::yaml_documents(&path)
}

fn strategies() -> Strategies {
    let mut s = Strategies::default();
    testdata::register(&mut s);
    s
}

/// Deserializes `obj` as `T` and serializes it back.
fn through<T: Resource>(obj: &Value) -> Value {
    let typed: T =
        serde_json::from_value(obj.clone()).unwrap_or_else(|e| panic!("{}: {e}", T::KIND));
    serde_json::to_value(&typed).expect("serialize")
}

fn roundtrip(obj: &Value) -> Value {
    use testdata::*;
    match obj["kind"].as_str().unwrap_or_default() {
        "SealedSecret" => through::<bitnami_com::v1alpha1::SealedSecret>(obj),
        "Certificate" => through::<cert_manager_io::v1::Certificate>(obj),
        "GatewayClass" => through::<gateway_networking_k8s_io::v1::GatewayClass>(obj),
        "Gateway" => through::<gateway_networking_k8s_io::v1::Gateway>(obj),
        "HTTPRoute" => through::<gateway_networking_k8s_io::v1::HTTPRoute>(obj),
        "ServiceMonitor" => through::<monitoring_coreos_com::v1::ServiceMonitor>(obj),
        "PodMonitor" => through::<monitoring_coreos_com::v1::PodMonitor>(obj),
        "Prometheus" => through::<monitoring_coreos_com::v1::Prometheus>(obj),
        "Application" => through::<argoproj_io::v1alpha1::Application>(obj),
        "Rollout" => through::<argoproj_io::v1alpha1::Rollout>(obj),
        "GitRepository" => through::<source_toolkit_fluxcd_io::v1::GitRepository>(obj),
        "ExternalSecret" => through::<external_secrets_io::v1::ExternalSecret>(obj),
        "Pipeline" => through::<tekton_dev::v1::Pipeline>(obj),
        "OpenTelemetryCollector" => {
            through::<opentelemetry_io::v1beta1::OpenTelemetryCollector>(obj)
        }
        other => panic!("no generated type mapped for kind {other}"),
    }
}

#[test]
fn every_testdata_crd_registers_its_served_versions() {
    let s = strategies();
    // 14 CRDs: flux serves 3 versions; the three gateway-api CRDs, otel and tekton 2
    // each; external-secrets' v1beta1 is not served: 3 + 6 + 2 + 2 + 8 = 21.
    assert_eq!(s.0.len(), 21, "{:?}", s.0.keys().collect::<Vec<_>>());
    assert!(!s.0.contains_key(&(
        "external-secrets.io/v1beta1".to_string(),
        "ExternalSecret".to_string()
    )));
}

#[test]
fn valid_samples_validate_and_round_trip_unchanged() {
    let s = strategies();
    let samples = samples("valid.yaml");
    assert_eq!(samples.len(), 14);
    let mut kinds = std::collections::BTreeSet::new();
    for mut obj in samples {
        let key = (
            obj["apiVersion"].as_str().unwrap().to_string(),
            obj["kind"].as_str().unwrap().to_string(),
        );
        kinds.insert(key.1.clone());
        let strategy =
            s.0.get(&key)
                .unwrap_or_else(|| panic!("{key:?} not registered"));
        // As in the API server: decode applies defaults, then the object is validated.
        strategy.schema().apply_defaults(&mut obj);
        let errs = strategy.validate(&obj);
        assert!(
            errs.is_empty(),
            "{key:?}: {:?}",
            errs.iter().map(ToString::to_string).collect::<Vec<_>>()
        );
        assert_eq!(roundtrip(&obj), obj, "{key:?} changed in the round trip");
    }
    assert_eq!(kinds.len(), 14, "one sample per CRD");
}

#[test]
fn invalid_samples_are_refused_with_kubernetes_causes() {
    let s = strategies();
    let get = |api: &str, kind: &str| s.0[&(api.to_string(), kind.to_string())].clone();
    let cases: Vec<(Arc<dyn ObjectStrategy>, Value, Vec<&str>)> = vec![
        (
            get("cert-manager.io/v1", "Certificate"),
            serde_json::json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": {"name": "x"}, "spec": {"issuerRef": {"name": "le"}}}),
            vec!["spec.secretName: Required value"],
        ),
        (
            get("gateway.networking.k8s.io/v1", "HTTPRoute"),
            serde_json::json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                "metadata": {"name": "x"},
                "spec": {"rules": [{"backendRefs": [{"name": "b", "port": 70000}]}]}}),
            vec![
                "spec.rules[0].backendRefs[0].port: Invalid value: 70000: spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535",
            ],
        ),
        (
            get("monitoring.coreos.com/v1", "ServiceMonitor"),
            serde_json::json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
                "metadata": {"name": "x"},
                "spec": {"selector": {}, "endpoints": [{"scheme": "FTP"}]}}),
            vec![
                r#"spec.endpoints[0].scheme: Unsupported value: "FTP": supported values: "http", "https", "HTTP", "HTTPS""#,
            ],
        ),
    ];
    for (strategy, mut obj, expected) in cases {
        strategy.schema().apply_defaults(&mut obj);
        let got: Vec<String> = strategy
            .validate(&obj)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got, expected, "{}", strategy.info().kind);
    }
}
