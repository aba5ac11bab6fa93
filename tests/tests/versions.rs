//! A compiled resource whose versions really differ, converted in process by generated
//! code and its hooks: Widget `v1` (stored) and `v1alpha1` (`colour` for `color`,
//! `status.ready: "2/3"` for `readyReplicas` and `replicas`). Through raw HTTP (reads,
//! lists, watches, the status subresource, patches and validation in the request's
//! version), kubectl 1.27–1.33, and kube-rs, on both backends.

use futures_util::StreamExt;
use kapi_tests::{KUBECTL_RELEASES, Kapi, on_every_backend};
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};

#[path = "support/kube.rs"]
mod support;
use support::{block_on, client};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const V1: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const V1ALPHA1: &str = "/apis/example.kapi.dev/v1alpha1/namespaces/default/widgets";

#[test]
fn both_widget_versions_read_and_write_each_other_over_http() {
    on_every_backend(|kapi| {
        // Written in v1, with its status; read in v1alpha1.
        kapi.send_ok(
            "POST",
            V1,
            JSON,
            &json!({"metadata": {"name": "a"},
            "spec": {"color": "red", "replicas": 3, "ports": [{"name": "http", "port": 80}]}}),
        );
        let mut status = kapi.get_ok(&format!("{V1}/a"));
        status["status"] = json!({"replicas": 3, "readyReplicas": 2, "phase": "Running"});
        kapi.send_ok("PUT", &format!("{V1}/a/status"), JSON, &status);
        let alpha = kapi.get_ok(&format!("{V1ALPHA1}/a"));
        assert_eq!(alpha["apiVersion"], "example.kapi.dev/v1alpha1");
        assert_eq!(alpha["spec"]["colour"], "red");
        assert_eq!(
            alpha["spec"]["ports"],
            json!([{"name": "http", "port": 80}])
        );
        assert_eq!(alpha["status"], json!({"ready": "2/3", "phase": "Running"}));

        // Written in v1alpha1 (defaulted and validated in v1alpha1), stored in v1.
        let b = kapi.send_ok(
            "POST",
            V1ALPHA1,
            JSON,
            &json!({"metadata": {"name": "b"},
            "spec": {"colour": "blue"}}),
        );
        assert_eq!(
            b["spec"],
            json!({"colour": "blue", "replicas": 1, "size": "medium"})
        );
        assert_eq!(kapi.get_ok(&format!("{V1}/b"))["spec"]["color"], "blue");
        let (code, refused) = kapi.request(
            "POST",
            V1ALPHA1,
            JSON,
            Some(&json!({
            "metadata": {"name": "c"}, "spec": {"color": "blue"}})),
        );
        assert_eq!(code, 422, "v1alpha1 requires colour: {refused}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("spec.colour: Required value"),
            "{refused}"
        );

        // The status subresource and a patch through v1alpha1.
        let mut alpha_b = kapi.get_ok(&format!("{V1ALPHA1}/b"));
        alpha_b["status"] = json!({"ready": "1/4"});
        kapi.send_ok("PUT", &format!("{V1ALPHA1}/b/status"), JSON, &alpha_b);
        let v1_b = kapi.get_ok(&format!("{V1}/b"));
        assert_eq!(
            (
                &v1_b["status"]["readyReplicas"],
                &v1_b["status"]["replicas"]
            ),
            (&json!(1), &json!(4))
        );
        kapi.send_ok(
            "PATCH",
            &format!("{V1ALPHA1}/b"),
            MERGE,
            &json!({"spec": {"replicas": 5}}),
        );
        assert_eq!(kapi.get_ok(&format!("{V1}/b"))["spec"]["replicas"], 5);
        // The CEL rule of v1alpha1's colour holds there.
        let (code, immutable) = kapi.request(
            "PATCH",
            &format!("{V1ALPHA1}/b"),
            MERGE,
            Some(&json!({"spec": {"colour": "green"}})),
        );
        assert_eq!(code, 422, "{immutable}");
        assert!(
            immutable["message"]
                .as_str()
                .unwrap()
                .contains("colour is immutable"),
            "{immutable}"
        );

        // Lists and watches in v1alpha1.
        let list = kapi.get_ok(V1ALPHA1);
        assert_eq!(list["apiVersion"], "example.kapi.dev/v1alpha1");
        let colours: Vec<&Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| &i["spec"]["colour"])
            .collect();
        assert_eq!(colours, [&json!("red"), &json!("blue")]);
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        kapi.send_ok(
            "POST",
            V1,
            JSON,
            &json!({"metadata": {"name": "d"}, "spec": {"color": "teal"}}),
        );
        let events = kapi.watch_events(&format!("{V1ALPHA1}?watch=true&resourceVersion={rv}"));
        let d = events
            .iter()
            .find(|e| e["object"]["metadata"]["name"] == "d")
            .expect("d's event");
        assert_eq!(
            (&d["type"], &d["object"]["spec"]["colour"]),
            (&json!("ADDED"), &json!("teal"))
        );
        // v1alpha1's printer columns: READY is its `status.ready`.
        let row = kapi.kubectl(&[
            "get",
            "widgets.v1alpha1.example.kapi.dev",
            "a",
            "--no-headers",
        ]);
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[..4], ["a", "medium", "3", "2/3"], "{row}");
    });
}

#[test]
fn every_kubectl_release_applies_and_reads_v1alpha1() {
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    for release in KUBECTL_RELEASES {
        let name = format!("k-{}", release.replace('.', "-"));
        let manifest = json!({"apiVersion": "example.kapi.dev/v1alpha1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"colour": "amber", "replicas": 2}})
        .to_string();
        kapi.kubectl_ok(
            Some(release),
            &["apply", "--server-side", "-f", "-"],
            Some(&manifest),
        );
        let colour = kapi.kubectl_ok(
            Some(release),
            &[
                "get",
                "widgets.v1alpha1.example.kapi.dev",
                &name,
                "-o",
                "jsonpath={.spec.colour}",
            ],
            None,
        );
        assert_eq!(colour, "amber", "kubectl {release}");
        let color = kapi.kubectl_ok(
            Some(release),
            &[
                "get",
                "widgets.v1.example.kapi.dev",
                &name,
                "-o",
                "jsonpath={.spec.color}",
            ],
            None,
        );
        assert_eq!(color, "amber", "kubectl {release}");
    }
}

#[test]
fn kube_rs_reads_and_writes_each_version() {
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    block_on(async {
        let client = client(&kapi);
        let version = |v: &str| {
            ApiResource::from_gvk(&GroupVersionKind::gvk("example.kapi.dev", v, "Widget"))
        };
        let (v1, alpha) = (version("v1"), version("v1alpha1"));
        let api_v1: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &v1);
        let api_alpha: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &alpha);
        let made = DynamicObject::new("rs", &alpha).data(json!({"spec": {"colour": "plum"}}));
        let created = api_alpha
            .create(&PostParams::default(), &made)
            .await
            .expect("create in v1alpha1");
        assert_eq!(created.data["spec"]["colour"], "plum");
        let read = api_v1.get("rs").await.expect("get in v1");
        assert_eq!(read.data["spec"]["color"], "plum");
        let patch = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
            "metadata": {"name": "rs"}, "spec": {"color": "plum", "replicas": 4}});
        api_v1
            .patch(
                "rs",
                &PatchParams::apply("kube-rs-test").force(),
                &Patch::Apply(&patch),
            )
            .await
            .expect("apply in v1");
        let listed = api_alpha
            .list(&Default::default())
            .await
            .expect("list in v1alpha1");
        let rs = listed
            .items
            .iter()
            .find(|w| w.metadata.name.as_deref() == Some("rs"))
            .expect("rs listed");
        assert_eq!(
            (&rs.data["spec"]["colour"], &rs.data["spec"]["replicas"]),
            (&json!("plum"), &json!(4))
        );
        let mut stream = api_alpha
            .watch(&kube::api::WatchParams::default().timeout(2), "0")
            .await
            .expect("watch in v1alpha1")
            .boxed();
        let mut seen = false;
        while let Some(event) = stream.next().await {
            if let Ok(kube::api::WatchEvent::Added(w)) = event {
                seen |=
                    w.metadata.name.as_deref() == Some("rs") && w.data["spec"]["colour"] == "plum";
            }
        }
        assert!(seen, "the watch in v1alpha1 sees rs in its shape");
    });
}

#[test]
fn kapi_answers_conversion_reviews_for_its_compiled_resources() {
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    let widget = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
        "metadata": {"name": "x", "uid": "u"}, "spec": {"color": "red"},
        "status": {"readyReplicas": 1, "replicas": 2}});
    for review_version in ["v1", "v1beta1"] {
        let review = json!({"apiVersion": format!("apiextensions.k8s.io/{review_version}"),
            "kind": "ConversionReview",
            "request": {"uid": "r-1", "desiredAPIVersion": "example.kapi.dev/v1alpha1",
                "objects": [widget]}});
        let answer = kapi.send_ok("POST", "/convert", JSON, &review);
        assert_eq!(answer["apiVersion"], review["apiVersion"]);
        let response = &answer["response"];
        assert_eq!(
            (&response["uid"], &response["result"]["status"]),
            (&json!("r-1"), &json!("Success"))
        );
        let converted = &response["convertedObjects"][0];
        assert_eq!(converted["spec"], json!({"colour": "red"}));
        assert_eq!(converted["status"], json!({"ready": "1/2"}));
    }
    // A kind it does not convert is a Failure result, as a webhook answers.
    let review = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "r-2", "desiredAPIVersion": "apps/v1",
            "objects": [{"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}}]}});
    let answer = kapi.send_ok("POST", "/convert", JSON, &review);
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    assert_eq!(
        answer["response"]["result"]["message"],
        "this server converts no Deployment of group \"apps\""
    );
}
