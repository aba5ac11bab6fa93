//! Widget v1alpha1 ↔ v1: what the generated conversion cannot match by name. The
//! colour was renamed (`colour` → `color`), and v1alpha1's `status.ready` (`"2/3"`)
//! is v1's `readyReplicas` and `replicas`. Everything else converts field by field in
//! generated code.

use kapi_core::conversion::Convert;

use crate::generated::example_kapi_dev::{v1, v1alpha1};

/// The conversion hooks of Widget (`kapi.dev/conversion-hooks` in its schema).
pub struct WidgetConversion;

impl Convert<v1alpha1::WidgetSpec, v1::WidgetSpec> for WidgetConversion {
    fn convert(from: &v1alpha1::WidgetSpec, to: &mut v1::WidgetSpec) {
        to.color.clone_from(&from.colour);
    }
}

impl Convert<v1::WidgetSpec, v1alpha1::WidgetSpec> for WidgetConversion {
    fn convert(from: &v1::WidgetSpec, to: &mut v1alpha1::WidgetSpec) {
        to.colour.clone_from(&from.color);
    }
}

impl Convert<v1alpha1::WidgetStatus, v1::WidgetStatus> for WidgetConversion {
    fn convert(from: &v1alpha1::WidgetStatus, to: &mut v1::WidgetStatus) {
        let (ready, desired) = split_ready(from.ready.as_deref());
        to.ready_replicas = ready;
        to.replicas = desired;
    }
}

impl Convert<v1::WidgetStatus, v1alpha1::WidgetStatus> for WidgetConversion {
    fn convert(from: &v1::WidgetStatus, to: &mut v1alpha1::WidgetStatus) {
        to.ready = join_ready(from.ready_replicas, from.replicas);
    }
}

/// `"2/3"` → (2, 3); a side left empty (`"2/"`) or not a number is `None`.
fn split_ready(ready: Option<&str>) -> (Option<i32>, Option<i32>) {
    let Some((ready, desired)) = ready.and_then(|r| r.split_once('/')) else {
        return (None, None);
    };
    (ready.parse().ok(), desired.parse().ok())
}

/// (2, 3) → `"2/3"`, an unknown side left empty; nothing when both are unknown.
fn join_ready(ready: Option<i32>, desired: Option<i32>) -> Option<String> {
    if ready.is_none() && desired.is_none() {
        return None;
    }
    let text = |n: Option<i32>| n.map(|n| n.to_string()).unwrap_or_default();
    Some(format!("{}/{}", text(ready), text(desired)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::example_kapi_dev::conversions::WidgetConverter;
    use kapi_core::conversion::VersionConverter;
    use serde_json::{Value, json};

    const V1: &str = "example.kapi.dev/v1";
    const V1ALPHA1: &str = "example.kapi.dev/v1alpha1";

    fn widget(api_version: &str, spec: Value, status: Option<Value>) -> Value {
        let mut w = json!({"apiVersion": api_version, "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default", "uid": "u-1",
                "resourceVersion": "12", "generation": 2, "labels": {"app": "demo"},
                "creationTimestamp": "2026-12-05T00:00:00Z"},
            "spec": spec});
        if let Some(status) = status {
            w["status"] = status;
        }
        w
    }

    /// Every shape of v1 the schema allows, each field set and unset.
    fn v1_samples() -> Vec<Value> {
        vec![
            widget(V1, json!({"color": "red"}), None),
            widget(
                V1,
                json!({"color": "blue", "size": "large", "replicas": 12,
                    "ports": [{"name": "http", "port": 80, "targetPort": "web"},
                              {"name": "admin", "port": 9000, "targetPort": 9001}],
                    "tags": ["a", "b"], "labels": {"tier": "front"},
                    "config": {"nested": {"any": [1, "two", null]}}}),
                Some(
                    json!({"replicas": 12, "readyReplicas": 7, "selector": "app=demo",
                    "phase": "Running", "observedGeneration": 2,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "Up",
                        "message": "all good", "lastTransitionTime": "2026-12-05T00:01:00Z"}]}),
                ),
            ),
            widget(
                V1,
                json!({"color": "green"}),
                Some(json!({"readyReplicas": 0})),
            ),
            widget(V1, json!({"color": "green"}), Some(json!({"replicas": 3}))),
            widget(
                V1,
                json!({"color": "green"}),
                Some(json!({"phase": "Pending"})),
            ),
        ]
    }

    fn v1alpha1_samples() -> Vec<Value> {
        vec![
            widget(V1ALPHA1, json!({"colour": "red", "size": "small"}), None),
            widget(
                V1ALPHA1,
                json!({"colour": "teal", "replicas": 3, "ports": [{"name": "p", "port": 1}]}),
                Some(json!({"ready": "2/3", "phase": "Failed"})),
            ),
            widget(
                V1ALPHA1,
                json!({"colour": "red"}),
                Some(json!({"ready": "/4"})),
            ),
        ]
    }

    #[test]
    fn every_sample_round_trips_through_the_other_version_unchanged() {
        let c = WidgetConverter;
        for (samples, there, back) in [
            (v1_samples(), V1ALPHA1, V1),
            (v1alpha1_samples(), V1, V1ALPHA1),
        ] {
            for sample in samples {
                let converted = c.convert(sample.clone(), there).unwrap();
                assert_eq!(converted["apiVersion"], there);
                assert_eq!(converted["metadata"], sample["metadata"]);
                let again = c.convert(converted.clone(), back).unwrap();
                assert_eq!(again, sample, "through {converted}");
            }
        }
    }

    #[test]
    fn renamed_and_split_fields_convert() {
        let c = WidgetConverter;
        let alpha = c.convert(v1_samples()[1].clone(), V1ALPHA1).unwrap();
        assert_eq!(alpha["spec"]["colour"], "blue");
        assert!(alpha["spec"].get("color").is_none());
        assert_eq!(alpha["status"]["ready"], "7/12");
        assert!(alpha["status"].get("readyReplicas").is_none());
        let v1 = c.convert(v1alpha1_samples()[1].clone(), V1).unwrap();
        assert_eq!(v1["spec"]["color"], "teal");
        assert_eq!(
            (&v1["status"]["readyReplicas"], &v1["status"]["replicas"]),
            (&json!(2), &json!(3))
        );
    }

    #[test]
    fn readiness_round_trips() {
        for (ready, desired) in [
            (Some(2), Some(3)),
            (None, Some(3)),
            (Some(0), None),
            (None, None),
        ] {
            let joined = join_ready(ready, desired);
            assert_eq!(
                split_ready(joined.as_deref()),
                (ready, desired),
                "{joined:?}"
            );
        }
    }
}
