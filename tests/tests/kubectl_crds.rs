//! Every real CRD in the shared testdata, installed with kubectl at run time: applied
//! (server-side, as the large ones must be), established, listed by `kubectl
//! api-resources`, explained for each served version, and serving objects — the valid
//! samples are accepted and invalid objects are refused with Kubernetes' causes.

use std::collections::BTreeSet;

use kapi_tests::{Backend, Kapi};
use serde_json::Value;

/// Waits (bounded) until every CRD is established; kubectl's output.
fn wait_established(kapi: &Kapi) -> String {
    kapi.kubectl(&[
        "wait",
        "--for",
        "condition=established",
        "crd",
        "--all",
        "--timeout=60s",
    ])
}

fn samples() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../codegen/tests/compile/samples/valid.yaml");
    kapi_testing::yaml_documents(&path)
}

#[test]
fn every_testdata_crd_is_installed_explained_and_served_through_kubectl() {
    let kapi = Kapi::start(Backend::Embedded);
    let dir = kapi_testing::testdata_dir().join("crds");
    let dir = dir.to_str().expect("a UTF-8 path");
    let applied = kapi.kubectl(&["apply", "--server-side", "-f", dir]);
    assert_eq!(
        applied.matches("serverside-applied").count(),
        14,
        "{applied}"
    );
    let waited = wait_established(&kapi);
    assert_eq!(waited.matches("condition met").count(), 14, "{waited}");

    let resources: BTreeSet<String> = kapi
        .kubectl(&["api-resources", "-o", "name"])
        .lines()
        .map(str::to_string)
        .collect();
    let mut explained = 0;
    for file in kapi_testing::testdata_crd_files() {
        let crd = kapi_testing::yaml_documents(&file).remove(0);
        let group = crd["spec"]["group"].as_str().unwrap();
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap();
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap();
        assert!(
            resources.contains(&format!("{plural}.{group}")),
            "{plural}.{group} not in api-resources"
        );
        for version in crd["spec"]["versions"].as_array().unwrap() {
            if version["served"] != true {
                continue;
            }
            let v = version["name"].as_str().unwrap();
            let out = kapi.kubectl(&["explain", plural, &format!("--api-version={group}/{v}")]);
            assert!(out.contains(&format!("KIND:       {kind}")), "{out}");
            assert!(out.contains(&format!("VERSION:    {v}")), "{out}");
            assert!(out.contains("FIELDS:"), "{out}");
            explained += 1;
        }
    }
    // 21 served versions over the 14 CRDs (external-secrets' v1beta1 is not served).
    assert_eq!(explained, 21);

    let samples = samples();
    let namespaces: BTreeSet<&str> = samples
        .iter()
        .filter_map(|s| s["metadata"]["namespace"].as_str())
        .collect();
    let manifest: String = namespaces
        .iter()
        .filter(|ns| **ns != "default")
        .map(|ns| format!("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n"))
        .collect();
    kapi.kubectl_ok(None, &["apply", "-f", "-"], Some(&manifest));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../codegen/tests/compile/samples/valid.yaml");
    let created = kapi.kubectl(&["apply", "-f", path.to_str().unwrap()]);
    assert_eq!(created.matches(" created").count(), 14, "{created}");
    for sample in &samples {
        let (group, _) = sample["apiVersion"]
            .as_str()
            .unwrap()
            .split_once('/')
            .unwrap();
        let kind = sample["kind"].as_str().unwrap().to_lowercase();
        let name = sample["metadata"]["name"].as_str().unwrap();
        let ns = sample["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default");
        let got: Value = serde_json::from_str(&kapi.kubectl(&[
            "get",
            &format!("{kind}.{group}"),
            "-n",
            ns,
            name,
            "-o",
            "json",
        ]))
        .expect("JSON");
        assert_eq!(got["apiVersion"], sample["apiVersion"]);
        // Stored as sent, plus the schema's defaults.
        assert!(
            includes(&got["spec"], &sample["spec"]),
            "{kind} {name}: sent {}, stored {}",
            sample["spec"],
            got["spec"]
        );
    }
}

/// Whether `got` has everything `sent` has (maps may have more keys: defaults).
fn includes(got: &Value, sent: &Value) -> bool {
    match (got, sent) {
        (Value::Object(g), Value::Object(s)) => s
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|gv| includes(gv, v))),
        (Value::Array(g), Value::Array(s)) => {
            g.len() == s.len() && g.iter().zip(s).all(|(gv, sv)| includes(gv, sv))
        }
        _ => got == sent,
    }
}

#[test]
fn invalid_objects_of_testdata_crds_are_refused_with_kubernetes_causes() {
    let kapi = Kapi::start(Backend::Embedded);
    for file in [
        "cert-manager-certificate.yaml",
        "gateway-api-httproute.yaml",
        "prometheus-operator-servicemonitor.yaml",
    ] {
        let path = kapi_testing::testdata_dir().join("crds").join(file);
        kapi.kubectl(&["apply", "--server-side", "-f", path.to_str().unwrap()]);
    }
    wait_established(&kapi);
    let cases = [
        (
            "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: x\nspec:\n  issuerRef:\n    name: le\n",
            vec!["The Certificate \"x\" is invalid: spec.secretName: Required value"],
        ),
        (
            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: x\nspec:\n  rules:\n  - backendRefs:\n    - name: b\n      port: 70000\n",
            vec![
                "spec.rules[0].backendRefs[0].port: Invalid value: 70000: spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535",
            ],
        ),
        (
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: x\nspec:\n  selector: {}\n  endpoints:\n  - scheme: FTP\n",
            vec![
                r#"spec.endpoints[0].scheme: Unsupported value: "FTP": supported values: "http", "https", "HTTP", "HTTPS""#,
            ],
        ),
    ];
    for (manifest, causes) in cases {
        let err = kapi.kubectl_err(&["apply", "-f", "-"], Some(manifest));
        for cause in causes {
            assert!(err.contains(cause), "expected {cause:?} in:\n{err}");
        }
    }
}
