//! HorizontalPodAutoscaler in autoscaling/v1 beside v2 (stored as v2), converted as
//! kube converts it: over raw HTTP on both backends (writes in either version read in
//! the other, what v1 lacks kept in kube's annotations through a v1 read-modify-write,
//! what a write may not change kept as stored, lists and watches in v1), kubectl 1.27–1.33 (whose `kubectl autoscale` writes v1
//! up to 1.30 and v2 after), and kube-rs with k8s-openapi's typed v1 and v2.

use futures_util::StreamExt;
use k8s_openapi::api::autoscaling::{v1, v2};
use kapi_tests::{KUBECTL_RELEASES, Kapi, on_every_backend};
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::{Value, json};

#[path = "support/kube.rs"]
mod support;
use support::{block_on, client};

const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const V1: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
const V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";

fn target() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

/// A v2 HPA with what v1 has no field for: other metrics, behavior.
fn rich_v2(name: &str) -> Value {
    json!({"metadata": {"name": name, "annotations": {"team": "a"}},
        "spec": {"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 9,
            "metrics": [
                {"type": "Pods", "pods": {"metric": {"name": "packets"},
                    "target": {"type": "AverageValue", "averageValue": "1k"}}},
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60,
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]}}}})
}

#[test]
fn both_versions_read_and_write_each_other_over_http() {
    on_every_backend(|kapi| {
        // v1 without a target: kube's default of 80 % shows in the create answer.
        let made = kapi.send_ok(
            "POST",
            V1,
            JSON,
            &json!({"metadata": {"name": "plain"},
                "spec": {"scaleTargetRef": target(), "maxReplicas": 3}}),
        );
        assert_eq!(made["apiVersion"], "autoscaling/v1");
        assert_eq!(made["spec"]["targetCPUUtilizationPercentage"], 80);
        assert_eq!(made["spec"]["minReplicas"], 1);
        let stored = kapi.get_ok(&format!("{V2}/plain"));
        assert_eq!(
            stored["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );

        // v2 with status, read in v1: the CPU target and the rest in annotations.
        kapi.send_ok("POST", V2, JSON, &rich_v2("rich"));
        let mut with_status = kapi.get_ok(&format!("{V2}/rich"));
        with_status["status"] = json!({"currentReplicas": 3, "desiredReplicas": 4,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 61}}}],
            "conditions": [{"type": "ScalingActive", "status": "True",
                "lastTransitionTime": "2026-12-05T00:00:00Z", "reason": "ValidMetricFound"}]});
        kapi.send_ok("PUT", &format!("{V2}/rich/status"), JSON, &with_status);
        let before = kapi.get_ok(&format!("{V2}/rich"));
        let old = kapi.get_ok(&format!("{V1}/rich"));
        assert_eq!(old["spec"]["targetCPUUtilizationPercentage"], 50);
        assert_eq!(old["status"]["currentCPUUtilizationPercentage"], 61);
        assert_eq!(old["metadata"]["annotations"]["team"], "a");
        assert_eq!(
            old["metadata"]["annotations"][METRICS],
            r#"[{"type":"Pods","pods":{"metricName":"packets","targetAverageValue":"1k"}}]"#
        );

        // A v1 client's read-modify-write loses nothing of v2.
        let mut edited = old.clone();
        edited["spec"]["maxReplicas"] = json!(12);
        kapi.send_ok("PUT", &format!("{V1}/rich"), JSON, &edited);
        let after = kapi.get_ok(&format!("{V2}/rich"));
        assert_eq!(after["spec"]["maxReplicas"], 12);
        for field in [
            "/spec/metrics",
            "/spec/behavior",
            "/status",
            "/metadata/annotations",
        ] {
            assert_eq!(
                after.pointer(field),
                before.pointer(field),
                "{field} through v1"
            );
        }

        // A status write through v1 keeps v2's spec as stored, though v1's shapes could
        // not hold it exactly (an Object metric's average target gains a value there).
        let averaged = json!({"type": "Object", "object": {"metric": {"name": "rps"},
            "describedObject": {"kind": "Service", "name": "front"},
            "target": {"type": "AverageValue", "averageValue": "10"}}});
        let mut lossy = rich_v2("lossy");
        lossy["spec"]["metrics"] = json!([averaged]);
        kapi.send_ok("POST", V2, JSON, &lossy);
        let mut status = kapi.get_ok(&format!("{V1}/lossy"));
        status["status"] = json!({"currentReplicas": 1, "desiredReplicas": 2});
        let answer = kapi.send_ok("PUT", &format!("{V1}/lossy/status"), JSON, &status);
        assert_eq!(answer["status"]["desiredReplicas"], 2);
        let stored = kapi.get_ok(&format!("{V2}/lossy"));
        assert_eq!(stored["spec"]["metrics"], json!([averaged]));
        assert_eq!(stored["status"]["desiredReplicas"], 2);
        kapi.send_ok("DELETE", &format!("{V2}/lossy"), JSON, &json!({}));

        // A merge patch through v1 changes the CPU target in v2's metric.
        kapi.send_ok(
            "PATCH",
            &format!("{V1}/rich"),
            MERGE,
            &json!({"spec": {"targetCPUUtilizationPercentage": 70}}),
        );
        let patched = kapi.get_ok(&format!("{V2}/rich"));
        assert_eq!(
            patched["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
            70
        );
        assert_eq!(patched["spec"]["metrics"][0]["type"], "Pods");

        // Validated in v1 with kube's words.
        let (code, refused) = kapi.request(
            "POST",
            V1,
            JSON,
            Some(&json!({"metadata": {"name": "bad"},
                "spec": {"scaleTargetRef": target(), "minReplicas": 0, "maxReplicas": 3}})),
        );
        assert_eq!(code, 422, "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
            "{refused}"
        );

        // Lists and watches in v1.
        let list = kapi.get_ok(V1);
        assert_eq!(list["apiVersion"], "autoscaling/v1");
        let targets: Vec<&Value> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| &h["spec"]["targetCPUUtilizationPercentage"])
            .collect();
        assert_eq!(targets, [&json!(80), &json!(70)]);
        let rv = list["metadata"]["resourceVersion"].as_str().unwrap();
        kapi.send_ok(
            "PATCH",
            &format!("{V2}/plain"),
            MERGE,
            &json!({"spec": {"maxReplicas": 6}}),
        );
        let events = kapi.watch_events(&format!("{V1}?watch=1&resourceVersion={rv}"));
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["object"]["apiVersion"], "autoscaling/v1");
        assert_eq!(events[0]["object"]["spec"]["maxReplicas"], 6);
    });
}

#[test]
fn every_kubectl_release_writes_and_reads_both_versions() {
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    kapi.kubectl(&["create", "deployment", "web", "--image=nginx"]);
    for release in KUBECTL_RELEASES {
        let name = format!("k-{}", release.replace('.', "-"));
        kapi.kubectl_ok(
            Some(release),
            &[
                "autoscale",
                "deployment",
                "web",
                "--name",
                &name,
                "--max=4",
                "--cpu-percent=70",
            ],
            None,
        );
        let manifest = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": format!("{name}-v1"), "namespace": "default"},
            "spec": {"scaleTargetRef": target(), "maxReplicas": 5,
                "targetCPUUtilizationPercentage": 40}})
        .to_string();
        kapi.kubectl_ok(Some(release), &["apply", "-f", "-"], Some(&manifest));
        for (hpa, percent) in [(name.clone(), 70), (format!("{name}-v1"), 40)] {
            let v1 = kapi.kubectl_ok(
                Some(release),
                &[
                    "get",
                    "horizontalpodautoscalers.v1.autoscaling",
                    &hpa,
                    "-o",
                    "jsonpath={.spec.targetCPUUtilizationPercentage}",
                ],
                None,
            );
            assert_eq!(v1, percent.to_string(), "kubectl {release}: {hpa}");
            let v2 = kapi.kubectl_ok(
                Some(release),
                &[
                    "get",
                    "horizontalpodautoscalers.v2.autoscaling",
                    &hpa,
                    "-o",
                    "jsonpath={.spec.metrics[0].resource.target.averageUtilization}",
                ],
                None,
            );
            assert_eq!(v2, percent.to_string(), "kubectl {release}: {hpa}");
        }
        let table = kapi.kubectl_ok(
            Some(release),
            &["get", "hpa", &format!("{name}-v1"), "--no-headers"],
            None,
        );
        let cells: Vec<&str> = table.split_whitespace().collect();
        assert_eq!(
            cells[..5],
            [
                format!("{name}-v1").as_str(),
                "Deployment/web",
                "cpu:",
                "<unknown>/40%",
                "1"
            ],
            "kubectl {release}: {table}"
        );
    }
}

#[test]
fn kube_rs_reads_and_writes_each_version() {
    let kapi = Kapi::start(kapi_tests::Backend::Embedded);
    block_on(async {
        let client = client(&kapi);
        let old: Api<v1::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
        let new: Api<v2::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
        let made: v2::HorizontalPodAutoscaler =
            serde_json::from_value(rich_v2("rs")).expect("a v2 HPA");
        new.create(&PostParams::default(), &made)
            .await
            .expect("create in v2");
        let read = old.get("rs").await.expect("get in v1");
        assert_eq!(read.spec.target_cpu_utilization_percentage, Some(50));
        assert!(
            read.metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(METRICS)),
            "{read:?}"
        );
        let patch = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "rs"}, "spec": {"maxReplicas": 11}});
        old.patch("rs", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("merge patch in v1");
        let stored = new.get("rs").await.expect("get in v2");
        let spec = stored.spec;
        assert_eq!(spec.max_replicas, 11);
        assert_eq!(spec.metrics.map(|m| m.len()), Some(2));
        assert!(spec.behavior.is_some(), "the behavior survives a v1 write");
        let listed = old.list(&Default::default()).await.expect("list in v1");
        assert_eq!(listed.items.len(), 1);
        let mut stream = old
            .watch(&WatchParams::default().timeout(2), "0")
            .await
            .expect("watch in v1")
            .boxed();
        let mut seen = false;
        while let Some(event) = stream.next().await {
            if let Ok(WatchEvent::Added(h)) = event {
                seen |= h.spec.target_cpu_utilization_percentage == Some(50);
            }
        }
        assert!(seen, "the watch in v1 sees rs in v1's shape");
    });
}
