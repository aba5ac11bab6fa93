//! HorizontalPodAutoscaler autoscaling/v1 ↔ v2 (the storage version), as kube's
//! `pkg/apis/autoscaling/v1/conversion.go` converts it. v1 has one metric, the CPU
//! utilization target (`targetCPUUtilizationPercentage`, and its current value in
//! status); the generated conversion copies what both versions share and these hooks
//! fill the rest:
//! - spec: the first CPU Resource metric's utilization target is v1's target; v1's
//!   target is a CPU Resource metric;
//! - status: the last CPU Resource metric's current utilization is v1's; `currentReplicas`
//!   (optional in v2) is 0 when absent;
//! - the object: what v1 has no field for travels in annotations ([`super::annotations`]):
//!   the other metrics, every current metric, the conditions and the behavior; read
//!   back on the way to v2 and removed, and an HPA without metrics gets kube's default
//!   CPU target of 80 %.
//!
//! Deliberate difference: kube fails the conversion of a v1 object whose metrics or
//! conditions annotation is not valid JSON; a hook cannot fail, so such an annotation
//! is dropped as the behavior annotation always is.

use std::collections::BTreeMap;

use kapi_core::conversion::Convert;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::annotations::{self, Behavior};
use super::horizontal_pod_autoscaler::{DEFAULT_CPU_UTILIZATION, cpu_utilization};
use crate::generated::api::autoscaling::{v1 as v1def, v2 as v2def};
use crate::generated::autoscaling::{v1, v2};

/// The conversion hooks of HorizontalPodAutoscaler (`kapi.dev/conversion-hooks`).
pub struct HorizontalPodAutoscalerConversion;

/// Whether `m` is the metric v1's target stands for: a CPU Resource metric.
fn cpu_resource(m: &v2def::MetricSpec) -> Option<&v2def::ResourceMetricSource> {
    m.resource
        .as_ref()
        .filter(|r| m.r#type == "Resource" && r.name == "cpu")
}

impl Convert<v2def::HorizontalPodAutoscalerSpec, v1def::HorizontalPodAutoscalerSpec>
    for HorizontalPodAutoscalerConversion
{
    fn convert(
        from: &v2def::HorizontalPodAutoscalerSpec,
        to: &mut v1def::HorizontalPodAutoscalerSpec,
    ) {
        let metrics = from.metrics.as_deref().unwrap_or_default();
        to.target_cpu_utilization_percentage = metrics
            .iter()
            .find_map(cpu_resource)
            .and_then(|r| r.target.average_utilization);
    }
}

impl Convert<v1def::HorizontalPodAutoscalerSpec, v2def::HorizontalPodAutoscalerSpec>
    for HorizontalPodAutoscalerConversion
{
    fn convert(
        from: &v1def::HorizontalPodAutoscalerSpec,
        to: &mut v2def::HorizontalPodAutoscalerSpec,
    ) {
        to.metrics = from
            .target_cpu_utilization_percentage
            .map(|percent| vec![cpu_utilization(percent)]);
    }
}

impl Convert<v2def::HorizontalPodAutoscalerStatus, v1def::HorizontalPodAutoscalerStatus>
    for HorizontalPodAutoscalerConversion
{
    fn convert(
        from: &v2def::HorizontalPodAutoscalerStatus,
        to: &mut v1def::HorizontalPodAutoscalerStatus,
    ) {
        to.current_replicas = from.current_replicas.unwrap_or(0);
        to.current_cpu_utilization_percentage = from
            .current_metrics
            .as_deref()
            .unwrap_or_default()
            .iter()
            .rev()
            .filter(|m| m.r#type == "Resource")
            .filter_map(|m| m.resource.as_ref())
            .filter(|r| r.name == "cpu")
            .find_map(|r| r.current.average_utilization);
    }
}

impl Convert<v1def::HorizontalPodAutoscalerStatus, v2def::HorizontalPodAutoscalerStatus>
    for HorizontalPodAutoscalerConversion
{
    fn convert(
        from: &v1def::HorizontalPodAutoscalerStatus,
        to: &mut v2def::HorizontalPodAutoscalerStatus,
    ) {
        // v2's is `omitempty`: Go writes no zero.
        if from.current_replicas == 0 {
            to.current_replicas = None;
        }
        to.current_metrics = from.current_cpu_utilization_percentage.map(|percent| {
            vec![v2def::MetricStatus {
                r#type: "Resource".into(),
                resource: Some(v2def::ResourceMetricStatus {
                    name: "cpu".into(),
                    current: v2def::MetricValueStatus {
                        average_utilization: Some(percent),
                        average_value: None,
                        value: None,
                    },
                }),
                container_resource: None,
                external: None,
                object: None,
                pods: None,
            }]
        });
    }
}

/// Writes `items` as JSON into the annotation `key`, if there are any.
fn put<T: Serialize>(annotations: &mut BTreeMap<String, String>, key: &str, items: &[T]) {
    if !items.is_empty() {
        if let Ok(text) = serde_json::to_string(items) {
            annotations.insert(key.to_string(), text);
        }
    }
}

/// The annotation `key` read as `T`, if it is there and parses.
fn take<T: DeserializeOwned>(annotations: &BTreeMap<String, String>, key: &str) -> Option<T> {
    serde_json::from_str(annotations.get(key)?).ok()
}

/// `annotations` without the round-trip ones.
fn drop_round_trip(annotations: &mut Option<BTreeMap<String, String>>) {
    if let Some(map) = annotations {
        for key in annotations::ALL {
            map.remove(key);
        }
        if map.is_empty() {
            *annotations = None;
        }
    }
}

impl Convert<v2::HorizontalPodAutoscaler, v1::HorizontalPodAutoscaler>
    for HorizontalPodAutoscalerConversion
{
    fn convert(from: &v2::HorizontalPodAutoscaler, to: &mut v1::HorizontalPodAutoscaler) {
        drop_round_trip(&mut to.metadata.annotations);
        let mut kept = to.metadata.annotations.take().unwrap_or_default();
        if let Some(spec) = &from.spec {
            let others: Vec<_> = spec
                .metrics
                .as_deref()
                .unwrap_or_default()
                .iter()
                .filter(|m| cpu_resource(m).is_none_or(|r| r.target.average_utilization.is_none()))
                .map(annotations::spec_to_v1)
                .collect();
            put(&mut kept, annotations::METRIC_SPECS, &others);
            if let Some(b) = &spec.behavior {
                if let Ok(text) = serde_json::to_string(&Behavior::from_v2(b)) {
                    kept.insert(annotations::BEHAVIOR.to_string(), text);
                }
            }
        }
        if let Some(status) = &from.status {
            let current: Vec<_> = status
                .current_metrics
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(annotations::status_to_v1)
                .collect();
            put(&mut kept, annotations::METRIC_STATUSES, &current);
            let conditions: Vec<_> = status
                .conditions
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(annotations::condition_to_v1)
                .collect();
            put(&mut kept, annotations::CONDITIONS, &conditions);
        }
        if !kept.is_empty() {
            to.metadata.annotations = Some(kept);
        }
    }
}

impl Convert<v1::HorizontalPodAutoscaler, v2::HorizontalPodAutoscaler>
    for HorizontalPodAutoscalerConversion
{
    fn convert(from: &v1::HorizontalPodAutoscaler, to: &mut v2::HorizontalPodAutoscaler) {
        let annotations = from.metadata.annotations.clone().unwrap_or_default();
        if let Some(spec) = to.spec.as_mut() {
            let others: Option<Vec<annotations::MetricSpec>> =
                take(&annotations, annotations::METRIC_SPECS);
            if let Some(others) = others {
                // The v1 target, if any, comes after the other metrics.
                let mut metrics: Vec<_> = others.iter().map(annotations::spec_to_v2).collect();
                metrics.extend(spec.metrics.take().unwrap_or_default().into_iter().take(1));
                spec.metrics = Some(metrics);
            }
            if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
                spec.metrics = Some(vec![cpu_utilization(DEFAULT_CPU_UTILIZATION)]);
            }
            if let Some(b) = take::<Behavior>(&annotations, annotations::BEHAVIOR) {
                spec.behavior = b.to_v2();
            }
        }
        if let Some(status) = to.status.as_mut() {
            let current: Option<Vec<annotations::MetricStatus>> =
                take(&annotations, annotations::METRIC_STATUSES);
            if let Some(current) = current {
                status.current_metrics =
                    Some(current.iter().map(annotations::status_to_v2).collect());
            }
            let conditions: Option<Vec<annotations::Condition>> =
                take(&annotations, annotations::CONDITIONS);
            if let Some(conditions) = conditions {
                status.conditions = Some(
                    conditions
                        .iter()
                        .map(annotations::condition_to_v2)
                        .collect(),
                );
            }
        }
        drop_round_trip(&mut to.metadata.annotations);
    }
}

#[cfg(test)]
mod tests {
    use kapi_core::conversion::VersionConverter;
    use serde_json::{Value, json};

    use crate::generated::autoscaling::conversions::HorizontalPodAutoscalerConverter;

    const V1: &str = "autoscaling/v1";
    const V2: &str = "autoscaling/v2";

    fn hpa(api_version: &str, annotations: Value, spec: Value, status: Option<Value>) -> Value {
        let mut h = json!({"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "default", "uid": "u-1",
                "resourceVersion": "7", "generation": 1},
            "spec": spec});
        if !annotations.is_null() {
            h["metadata"]["annotations"] = annotations;
        }
        if let Some(status) = status {
            h["status"] = status;
        }
        h
    }

    fn target() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
    }

    fn convert(obj: Value, to: &str) -> Value {
        HorizontalPodAutoscalerConverter
            .convert(obj, to)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// v2 objects using what v1 lacks, each with its CPU utilization target (if any)
    /// last, where kube's way back to v2 puts it.
    fn v2_samples() -> Vec<Value> {
        let cpu = json!({"type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}});
        let others = json!([
            {"type": "Pods", "pods": {"metric": {"name": "packets"},
                "target": {"type": "AverageValue", "averageValue": "1k"}}},
            {"type": "Object", "object": {"metric": {"name": "hits", "selector": {"matchLabels": {"a": "b"}}},
                "describedObject": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "name": "main"},
                "target": {"type": "Value", "value": "2k"}}},
            {"type": "External", "external": {"metric": {"name": "queue"},
                "target": {"type": "AverageValue", "averageValue": "30"}}},
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
            {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "app",
                "target": {"type": "Utilization", "averageUtilization": 70}}},
        ]);
        let mut all = others.as_array().unwrap().clone();
        all.push(cpu.clone());
        vec![
            hpa(
                V2,
                Value::Null,
                json!({"scaleTargetRef": target(), "minReplicas": 1, "maxReplicas": 4,
                    "metrics": [cpu]}),
                None,
            ),
            hpa(
                V2,
                json!({"team": "a"}),
                json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 9,
                    "metrics": all,
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300,
                        "selectPolicy": "Min", "tolerance": "50m",
                        "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]},
                        "scaleUp": {"policies": []}}}),
                Some(
                    json!({"observedGeneration": 1, "currentReplicas": 3, "desiredReplicas": 4,
                    "lastScaleTime": "2026-12-05T00:00:00Z",
                    "currentMetrics": [
                        {"type": "Resource", "resource": {"name": "cpu",
                            "current": {"averageUtilization": 61, "averageValue": "300m"}}},
                        {"type": "Pods", "pods": {"metric": {"name": "packets"},
                            "current": {"averageValue": "2k"}}}],
                    "conditions": [{"type": "AbleToScale", "status": "True",
                        "lastTransitionTime": "2026-12-05T00:00:00Z",
                        "reason": "SucceededRescale", "message": "ok"}]}),
                ),
            ),
            hpa(
                V2,
                Value::Null,
                json!({"scaleTargetRef": target(), "maxReplicas": 3, "metrics": others}),
                Some(json!({"desiredReplicas": 0})),
            ),
        ]
    }

    #[test]
    fn v2_objects_round_trip_through_v1_unchanged() {
        for sample in v2_samples() {
            let v1 = convert(sample.clone(), V1);
            assert_eq!(v1["apiVersion"], V1);
            let back = convert(v1.clone(), V2);
            assert_eq!(back, sample, "through {v1:#}");
        }
    }

    #[test]
    fn v1_shows_the_cpu_target_and_keeps_the_rest_in_kubes_annotations() {
        let v1 = convert(v2_samples().remove(1), V1);
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 61);
        assert_eq!(v1["status"]["currentReplicas"], 3);
        let a = &v1["metadata"]["annotations"];
        assert_eq!(a["team"], "a");
        let metrics: Value = serde_json::from_str(
            a["autoscaling.alpha.kubernetes.io/metrics"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        // autoscaling/v1's own metric shapes, the CPU utilization target left out.
        assert_eq!(metrics.as_array().unwrap().len(), 5);
        assert_eq!(
            metrics[0],
            json!({"type": "Pods", "pods": {"metricName": "packets", "targetAverageValue": "1k"}})
        );
        assert_eq!(
            metrics[1],
            json!({"type": "Object", "object": {"target": {"kind": "Ingress", "name": "main",
                "apiVersion": "networking.k8s.io/v1"}, "metricName": "hits", "targetValue": "2k",
                "selector": {"matchLabels": {"a": "b"}}}})
        );
        assert_eq!(
            a["autoscaling.alpha.kubernetes.io/current-metrics"],
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":61,"currentAverageValue":"300m"}},{"type":"Pods","pods":{"metricName":"packets","currentAverageValue":"2k"}}]"#
        );
        assert_eq!(
            a["autoscaling.alpha.kubernetes.io/conditions"],
            r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-12-05T00:00:00Z","reason":"SucceededRescale","message":"ok"}]"#
        );
        // kube's internal type, marshalled without JSON tags.
        assert_eq!(
            a["autoscaling.alpha.kubernetes.io/behavior"],
            r#"{"ScaleUp":{"StabilizationWindowSeconds":null,"SelectPolicy":null,"Policies":[],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}],"Tolerance":"50m"}}"#
        );
    }

    #[test]
    fn v1_objects_convert_as_kube_converts_them() {
        // No target: kube's default of 80 % CPU.
        let bare = hpa(
            V1,
            Value::Null,
            json!({"scaleTargetRef": target(), "maxReplicas": 3}),
            None,
        );
        let v2 = convert(bare.clone(), V2);
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        let mut with_target = bare.clone();
        with_target["spec"]["targetCPUUtilizationPercentage"] = json!(65);
        with_target["status"] = json!({"currentReplicas": 2, "desiredReplicas": 2,
            "currentCPUUtilizationPercentage": 40});
        let v2 = convert(with_target.clone(), V2);
        assert_eq!(
            v2["status"]["currentMetrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 40}}}])
        );
        // The current metrics are kept in full as well, as kube keeps them.
        let mut back = convert(v2, V1);
        let kept = back["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations")
            .unwrap();
        assert_eq!(
            kept["autoscaling.alpha.kubernetes.io/current-metrics"],
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"0"}}]"#
        );
        assert_eq!(back, with_target);
        // Annotations written by hand (or by an older kube) that do not parse are dropped,
        // with every other round-trip annotation; the rest stays.
        let broken = hpa(
            V1,
            json!({"autoscaling.alpha.kubernetes.io/metrics": "[{",
                "autoscaling.alpha.kubernetes.io/scale-up-tolerance": "1",
                "autoscaling.alpha.kubernetes.io/behavior": "{}", "kept": "yes"}),
            json!({"scaleTargetRef": target(), "maxReplicas": 3, "targetCPUUtilizationPercentage": 10}),
            None,
        );
        let v2 = convert(broken, V2);
        assert_eq!(v2["metadata"]["annotations"], json!({"kept": "yes"}));
        assert_eq!(v2["spec"]["metrics"].as_array().unwrap().len(), 1);
        assert!(v2["spec"].get("behavior").is_none(), "{v2}");
    }
}
