//! Discovery documents against the shapes kube-apiserver serves for custom resources.

mod common;

use kapi_apiserver::discovery::{
    AggregatedVersion, DiscoveryFormat, aggregated_api, aggregated_apis, api_group, api_group_list,
    api_resource_list, api_versions, negotiate, storage_version_hash,
};
use serde_json::json;

use common::{all_testdata, builtin_schema, repo_schema, testdata_crd};

#[test]
fn api_versions_lists_v1_and_the_address() {
    assert_eq!(
        api_versions("10.0.0.1:6443"),
        json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]
        })
    );
}

#[test]
fn widget_group_and_group_list() {
    let widget = repo_schema("widget");
    let gv = json!({"groupVersion": "example.kapi.dev/v1", "version": "v1"});
    let alpha = json!({"groupVersion": "example.kapi.dev/v1alpha1", "version": "v1alpha1"});
    assert_eq!(
        api_group_list(&widget),
        json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [{"name": "example.kapi.dev", "versions": [gv, alpha], "preferredVersion": gv}]
        })
    );
    assert_eq!(
        api_group(&widget, "example.kapi.dev"),
        Some(json!({
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": "example.kapi.dev",
            "versions": [gv, alpha],
            "preferredVersion": gv
        }))
    );
    assert_eq!(api_group(&widget, "nope.example"), None);
    assert_eq!(api_group(&widget, ""), None);
}

#[test]
fn preferred_version_is_the_highest_priority_served_version() {
    // flux serves v1 (storage), v1beta2 and v1beta1; external-secrets does not serve v1beta1.
    let flux = testdata_crd("flux-gitrepository");
    let g = api_group(&flux, "source.toolkit.fluxcd.io").unwrap();
    let versions: Vec<&str> = g["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "v1beta2", "v1beta1"]);
    assert_eq!(g["preferredVersion"]["version"], "v1");

    let es = testdata_crd("external-secrets-externalsecret");
    let g = api_group(&es, "external-secrets.io").unwrap();
    assert_eq!(g["versions"].as_array().unwrap().len(), 1);
    assert_eq!(
        api_resource_list(&es, "external-secrets.io", "v1beta1"),
        None
    );

    // tekton lists v1beta1 first although v1 is preferred.
    let tekton = testdata_crd("tekton-pipeline");
    let g = api_group(&tekton, "tekton.dev").unwrap();
    assert_eq!(g["preferredVersion"]["version"], "v1");
}

#[test]
fn widget_resource_list_with_subresources() {
    let widget = repo_schema("widget");
    let hash = storage_version_hash("example.kapi.dev", "v1", "Widget");
    assert_eq!(
        api_resource_list(&widget, "example.kapi.dev", "v1"),
        Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "example.kapi.dev/v1",
            "resources": [
                {
                    "name": "widgets",
                    "singularName": "widget",
                    "namespaced": true,
                    "kind": "Widget",
                    "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                    "shortNames": ["wd"],
                    "categories": ["kapi-examples"],
                    "storageVersionHash": hash
                },
                {
                    "name": "widgets/status",
                    "singularName": "",
                    "namespaced": true,
                    "kind": "Widget",
                    "verbs": ["get", "patch", "update"]
                },
                {
                    "name": "widgets/scale",
                    "singularName": "",
                    "namespaced": true,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"]
                }
            ]
        }))
    );
    assert_eq!(api_resource_list(&widget, "example.kapi.dev", "v2"), None);
}

#[test]
fn core_group_resource_list() {
    let core = builtin_schema("core-v1");
    let list = api_resource_list(&core, "", "v1").unwrap();
    assert_eq!(list["groupVersion"], "v1");
    let ns = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "namespaces")
        .expect("namespaces");
    assert_eq!(ns["namespaced"], false);
    assert_eq!(ns["shortNames"], json!(["ns"]));
    assert!(ns.get("categories").is_none(), "omitempty: {ns}");
    // /api/v1 exists even with nothing in it.
    assert_eq!(
        api_resource_list(&[], "", "v1").unwrap()["resources"],
        json!([])
    );
    // The core group never shows in /apis.
    assert_eq!(api_group_list(&core)["groups"], json!([]));
}

#[test]
fn every_version_reports_the_storage_version_hash() {
    let flux = testdata_crd("flux-gitrepository");
    let expected = storage_version_hash("source.toolkit.fluxcd.io", "v1", "GitRepository");
    for v in ["v1", "v1beta1", "v1beta2"] {
        let list = api_resource_list(&flux, "source.toolkit.fluxcd.io", v).unwrap();
        assert_eq!(list["resources"][0]["storageVersionHash"], expected, "{v}");
    }
}

#[test]
fn aggregated_apis_shape() {
    let widget = repo_schema("widget");
    let doc = aggregated_apis(&widget, AggregatedVersion::V2);
    assert_eq!(
        doc,
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": [{
                "metadata": {"name": "example.kapi.dev", "creationTimestamp": null},
                "versions": [{
                    "version": "v1",
                    "freshness": "Current",
                    "resources": [{
                        "resource": "widgets",
                        "responseKind": {"group": "example.kapi.dev", "version": "v1", "kind": "Widget"},
                        "scope": "Namespaced",
                        "singularResource": "widget",
                        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                        "shortNames": ["wd"],
                        "categories": ["kapi-examples"],
                        "subresources": [
                            {
                                "subresource": "status",
                                "responseKind": {"group": "example.kapi.dev", "version": "v1", "kind": "Widget"},
                                "verbs": ["get", "patch", "update"]
                            },
                            {
                                "subresource": "scale",
                                "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                                "verbs": ["get", "patch", "update"]
                            }
                        ]
                    }]
                }, {
                    // v1alpha1 has no scale subresource.
                    "version": "v1alpha1",
                    "freshness": "Current",
                    "resources": [{
                        "resource": "widgets",
                        "responseKind": {"group": "example.kapi.dev", "version": "v1alpha1", "kind": "Widget"},
                        "scope": "Namespaced",
                        "singularResource": "widget",
                        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                        "shortNames": ["wd"],
                        "categories": ["kapi-examples"],
                        "subresources": [{
                            "subresource": "status",
                            "responseKind": {"group": "example.kapi.dev", "version": "v1alpha1", "kind": "Widget"},
                            "verbs": ["get", "patch", "update"]
                        }]
                    }]
                }]
            }]
        })
    );
    let beta = aggregated_apis(&widget, AggregatedVersion::V2Beta1);
    assert_eq!(beta["apiVersion"], "apidiscovery.k8s.io/v2beta1");
    assert_eq!(beta["items"], doc["items"]);
}

#[test]
fn aggregated_groups_and_versions_are_ordered_like_kube_apiserver() {
    let all = all_testdata();
    let doc = aggregated_apis(&all, AggregatedVersion::V2);
    let groups: Vec<&str> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["metadata"]["name"].as_str().unwrap())
        .collect();
    let mut sorted = groups.clone();
    sorted.sort();
    assert_eq!(groups, sorted);
    assert!(groups.contains(&"gateway.networking.k8s.io"));

    let gw = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "gateway.networking.k8s.io")
        .unwrap();
    let v1 = &gw["versions"][0];
    assert_eq!(v1["version"], "v1");
    let resources: Vec<&str> = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["resource"].as_str().unwrap())
        .collect();
    assert_eq!(resources, ["gatewayclasses", "gateways", "httproutes"]);
    let gc = &v1["resources"][0];
    assert_eq!(gc["scope"], "Cluster");
    assert!(gc.get("shortNames").is_some());

    // No subresources: the key is left out.
    let argo = aggregated_apis(&testdata_crd("argo-cd-application"), AggregatedVersion::V2);
    assert!(
        argo["items"][0]["versions"][0]["resources"][0]
            .get("subresources")
            .is_none()
    );
}

#[test]
fn aggregated_api_has_the_core_group() {
    let core = builtin_schema("core-v1");
    let doc = aggregated_api(&core, AggregatedVersion::V2);
    assert_eq!(doc["items"].as_array().unwrap().len(), 1);
    let group = &doc["items"][0];
    assert_eq!(group["metadata"], json!({"creationTimestamp": null}));
    assert_eq!(group["versions"][0]["version"], "v1");
    let ns = group["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "namespaces")
        .unwrap();
    assert_eq!(
        ns["responseKind"],
        json!({"group": "", "version": "v1", "kind": "Namespace"})
    );
    assert_eq!(ns["scope"], "Cluster");
    let empty = aggregated_api(&[], AggregatedVersion::V2);
    assert_eq!(empty["items"][0]["versions"][0]["resources"], json!([]));
}

#[test]
fn negotiation_follows_what_kubectl_sends() {
    // kubectl 1.30–1.33.
    let v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    assert_eq!(
        negotiate(Some(v2)),
        DiscoveryFormat::Aggregated(AggregatedVersion::V2)
    );
    // kubectl 1.27–1.29.
    let v2beta1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    assert_eq!(
        negotiate(Some(v2beta1)),
        DiscoveryFormat::Aggregated(AggregatedVersion::V2Beta1)
    );
    assert_eq!(
        DiscoveryFormat::Aggregated(AggregatedVersion::V2Beta1).content_type(),
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    );
    // Legacy clients, curl, and ranges we cannot serve.
    for accept in [
        None,
        Some("application/json"),
        Some("*/*"),
        Some(""),
        Some("application/json, */*"),
        Some(
            "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
        ),
        Some(
            "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json",
        ),
        Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
    ] {
        assert_eq!(
            negotiate(accept),
            DiscoveryFormat::Unaggregated,
            "{accept:?}"
        );
    }
    assert_eq!(
        DiscoveryFormat::Unaggregated.content_type(),
        "application/json"
    );
    // q-values outrank order.
    assert_eq!(
        negotiate(Some(
            "application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )),
        DiscoveryFormat::Aggregated(AggregatedVersion::V2)
    );
    // Parameter order and spacing do not matter.
    assert_eq!(
        negotiate(Some(
            "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io"
        )),
        DiscoveryFormat::Aggregated(AggregatedVersion::V2)
    );
}
