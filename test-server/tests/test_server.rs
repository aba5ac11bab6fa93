//! The test server as a controller's test uses it: started in the test's runtime, a
//! kube-rs client, CRDs installed from a real project's YAML and from a
//! `CustomResourceExt` type, built-ins picked, a condition waited for, a clean stop;
//! and the failures a test must see (a server that cannot start, a condition that
//! never holds) as errors, not hangs.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kapi_test_server::{Error, TestServer};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use kube::{Api, CustomResourceExt};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_test_starts_a_server_uses_it_and_stops_it() {
    let server = TestServer::start().await.expect("started");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client());
    let made: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "c"}, "data": {"k": "v"}})).unwrap();
    configmaps
        .create(&PostParams::default(), &made)
        .await
        .expect("created");
    // What a reconciler would do later, and a test waiting for it.
    let waited = server.wait_for(&configmaps, "c", |c: Option<&ConfigMap>| {
        c.and_then(|c| c.data.as_ref())
            .is_some_and(|d| d.get("k").map(String::as_str) == Some("w"))
    });
    let (params, change) = (
        PatchParams::default(),
        Patch::Merge(json!({"data": {"k": "w"}})),
    );
    let patch = configmaps.patch("c", &params, &change);
    let (waited, patched) = tokio::join!(waited, patch);
    patched.expect("patched");
    waited.expect("the condition held");
    assert!(server.ready().kubeconfig.exists());
    server.stop().await.expect("a clean stop");
}

/// A CRD as `#[derive(CustomResource)]` would give it.
struct Gadget;

impl kube::CustomResourceExt for Gadget {
    fn crd() -> CustomResourceDefinition {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.test.kapi.dev"},
            "spec": {"group": "test.kapi.dev", "scope": "Namespaced",
                "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}}))
        .unwrap()
    }
    fn crd_name() -> &'static str {
        "gadgets.test.kapi.dev"
    }
    fn api_resource() -> ApiResource {
        ApiResource::from_gvk(&GroupVersionKind::gvk("test.kapi.dev", "v1", "Gadget"))
    }
    fn shortnames() -> &'static [&'static str] {
        &[]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_from_yaml_and_from_types_are_served_once_started() {
    let certificates = kapi_testing::testdata_dir().join("crds/cert-manager-certificate.yaml");
    let server = TestServer::builder()
        // Only what a controller of these kinds needs from the built-ins.
        .builtins(|r| {
            (r.group.is_empty() && r.kind == "Namespace")
                || r.group == "rbac.authorization.k8s.io"
                || r.group == "apiextensions.k8s.io"
        })
        .crd_file(&certificates)
        .crd::<Gadget>()
        .start()
        .await
        .expect("started");
    let gadgets: Api<DynamicObject> =
        Api::default_namespaced_with(server.client(), &Gadget::api_resource());
    let made = DynamicObject::new("g", &Gadget::api_resource()).data(json!({"spec": {"n": 1}}));
    gadgets
        .create(&PostParams::default(), &made)
        .await
        .expect("a Gadget");
    let certs = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "cert-manager.io",
        "v1",
        "Certificate",
    ));
    let certificates: Api<DynamicObject> = Api::default_namespaced_with(server.client(), &certs);
    assert!(
        certificates
            .list(&Default::default())
            .await
            .expect("Certificates are served")
            .items
            .is_empty()
    );
    // Pods were left out.
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::default_namespaced(server.client());
    assert!(pods.list(&Default::default()).await.is_err());
    server.stop().await.expect("a clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_errors_not_hangs() {
    // Namespaced kinds without Namespaces: kapi says what is missing.
    let refused = TestServer::builder()
        .builtins(|r| r.group == "rbac.authorization.k8s.io")
        .start()
        .await;
    match refused {
        Err(Error::Start(e)) => assert!(e.to_string().contains("need the Namespace kind"), "{e}"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("started without Namespaces"),
    }
    // A condition that never holds ends at the timeout.
    let server = TestServer::builder()
        .timeout(Duration::from_millis(300))
        .start()
        .await
        .expect("started");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client());
    let never = server
        .wait_for(&configmaps, "absent", |c: Option<&ConfigMap>| c.is_some())
        .await;
    assert!(matches!(never, Err(Error::Timeout(_))), "{never:?}");
    server.stop().await.expect("a clean stop");
}

#[cfg(feature = "etcd")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_runs_over_etcd_when_a_test_asks() {
    let etcd = kapi_testing::EtcdProcess::start();
    let endpoint = etcd.endpoint();
    let server = TestServer::builder()
        .etcd(&[&endpoint])
        .start()
        .await
        .expect("started over etcd");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client());
    let made: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "e"}})).unwrap();
    configmaps
        .create(&PostParams::default(), &made)
        .await
        .expect("created");
    server.stop().await.expect("a clean stop");
    // The object lives in etcd: a second server over it reads it back.
    let again = TestServer::builder()
        .etcd(&[&endpoint])
        .start()
        .await
        .expect("started again over etcd");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(again.client());
    configmaps.get("e").await.expect("kept in etcd");
    again.stop().await.expect("a clean stop");
}
