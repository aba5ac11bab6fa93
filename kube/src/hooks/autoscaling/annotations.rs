//! What autoscaling/v1 has no field for, kept in annotations of a v1
//! HorizontalPodAutoscaler so that a v1 client reading and writing it back loses
//! nothing (kube's `pkg/apis/autoscaling/annotations.go`): the metrics besides the CPU
//! utilization target and the current metrics, written in autoscaling/v1's own metric
//! shapes (the Go types of `k8s.io/api/autoscaling/v1`, which no v1 field uses; the
//! fields in Go's order), the conditions, and the scaling behavior, written as kube
//! writes it: its internal type marshalled without JSON tags, keyed by Go's field
//! names (`ScaleUp`, `StabilizationWindowSeconds`), read back whatever their case.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use serde::{Deserialize, Serialize};

use crate::generated::api::autoscaling::v2;

/// `autoscaling.MetricSpecsAnnotation`: the metrics besides the CPU utilization target.
pub const METRIC_SPECS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `autoscaling.MetricStatusesAnnotation`: every current metric.
pub const METRIC_STATUSES: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `autoscaling.HorizontalPodAutoscalerConditionsAnnotation`.
pub const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `autoscaling.BehaviorSpecsAnnotation`.
pub const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The tolerances autoscaling/v2beta2 keeps; dropped with the others.
const TOLERANCES: [&str; 2] = [
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
];

/// Every round-trip annotation (`DropRoundTripHorizontalPodAutoscalerAnnotations`).
pub const ALL: [&str; 6] = [
    METRIC_SPECS,
    BEHAVIOR,
    TOLERANCES[0],
    TOLERANCES[1],
    METRIC_STATUSES,
    CONDITIONS,
];

/// `autoscalingv1.CrossVersionObjectReference`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    api_version: Option<String>,
}

/// `autoscalingv1.MetricSpec`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricSpec {
    #[serde(default, rename = "type")]
    type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    object: Option<ObjectSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pods: Option<PodsSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource: Option<ResourceSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    container_resource: Option<ResourceSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    external: Option<ExternalSource>,
}

/// `autoscalingv1.ObjectMetricSource`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectSource {
    #[serde(default)]
    target: ObjectReference,
    #[serde(default)]
    metric_name: String,
    #[serde(default)]
    target_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    average_value: Option<Quantity>,
}

/// `autoscalingv1.PodsMetricSource`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodsSource {
    #[serde(default)]
    metric_name: String,
    #[serde(default)]
    target_average_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selector: Option<LabelSelector>,
}

/// `autoscalingv1.ResourceMetricSource` and `ContainerResourceMetricSource`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSource {
    #[serde(default)]
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_average_utilization: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_average_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    container: Option<String>,
}

/// `autoscalingv1.ExternalMetricSource`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalSource {
    #[serde(default)]
    metric_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metric_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    target_average_value: Option<Quantity>,
}

/// `autoscalingv1.MetricStatus`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricStatus {
    #[serde(default, rename = "type")]
    type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    object: Option<ObjectStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pods: Option<PodsStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    resource: Option<ResourceStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    container_resource: Option<ResourceStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    external: Option<ExternalStatus>,
}

/// `autoscalingv1.ObjectMetricStatus`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectStatus {
    #[serde(default)]
    target: ObjectReference,
    #[serde(default)]
    metric_name: String,
    #[serde(default)]
    current_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    average_value: Option<Quantity>,
}

/// `autoscalingv1.PodsMetricStatus`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodsStatus {
    #[serde(default)]
    metric_name: String,
    #[serde(default)]
    current_average_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selector: Option<LabelSelector>,
}

/// `autoscalingv1.ResourceMetricStatus` and `ContainerResourceMetricStatus`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceStatus {
    #[serde(default)]
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current_average_utilization: Option<i32>,
    #[serde(default)]
    current_average_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    container: Option<String>,
}

/// `autoscalingv1.ExternalMetricStatus`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalStatus {
    #[serde(default)]
    metric_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metric_selector: Option<LabelSelector>,
    #[serde(default)]
    current_value: Option<Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current_average_value: Option<Quantity>,
}

/// `autoscalingv1.HorizontalPodAutoscalerCondition`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(default, rename = "type")]
    type_: String,
    #[serde(default)]
    status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// Go's non-pointer `resource.Quantity`: the zero quantity is written `"0"`.
fn quantity(q: Option<&Quantity>) -> Option<Quantity> {
    Some(q.cloned().unwrap_or_else(|| Quantity("0".into())))
}

fn reference_to_v1(r: &v2::CrossVersionObjectReference) -> ObjectReference {
    ObjectReference {
        kind: r.kind.clone(),
        name: r.name.clone(),
        api_version: r.api_version.clone(),
    }
}

fn reference_to_v2(r: &ObjectReference) -> v2::CrossVersionObjectReference {
    v2::CrossVersionObjectReference {
        kind: r.kind.clone(),
        name: r.name.clone(),
        api_version: r.api_version.clone(),
    }
}

fn identifier(name: &str, selector: Option<&LabelSelector>) -> v2::MetricIdentifier {
    v2::MetricIdentifier {
        name: name.to_string(),
        selector: selector.cloned(),
    }
}

fn target(type_: &str, value: Option<Quantity>, average: Option<Quantity>) -> v2::MetricTarget {
    v2::MetricTarget {
        r#type: type_.to_string(),
        value,
        average_value: average,
        average_utilization: None,
    }
}

/// A v2 metric as autoscaling/v1 writes it in [`METRIC_SPECS`].
pub fn spec_to_v1(m: &v2::MetricSpec) -> MetricSpec {
    let resource = |name: &str, t: &v2::MetricTarget, container: Option<&String>| ResourceSource {
        name: name.to_string(),
        target_average_utilization: t.average_utilization,
        target_average_value: t.average_value.clone(),
        container: container.cloned(),
    };
    MetricSpec {
        type_: m.r#type.clone(),
        object: m.object.as_ref().map(|o| ObjectSource {
            target: reference_to_v1(&o.described_object),
            metric_name: o.metric.name.clone(),
            target_value: quantity(o.target.value.as_ref()),
            selector: o.metric.selector.clone(),
            average_value: o.target.average_value.clone(),
        }),
        pods: m.pods.as_ref().map(|p| PodsSource {
            metric_name: p.metric.name.clone(),
            target_average_value: quantity(p.target.average_value.as_ref()),
            selector: p.metric.selector.clone(),
        }),
        resource: m
            .resource
            .as_ref()
            .map(|r| resource(&r.name, &r.target, None)),
        container_resource: m
            .container_resource
            .as_ref()
            .map(|r| resource(&r.name, &r.target, Some(&r.container))),
        external: m.external.as_ref().map(|e| ExternalSource {
            metric_name: e.metric.name.clone(),
            metric_selector: e.metric.selector.clone(),
            target_value: e.target.value.clone(),
            target_average_value: e.target.average_value.clone(),
        }),
    }
}

/// An autoscaling/v1 metric of [`METRIC_SPECS`] as v2's, the target types as kube
/// infers them.
pub fn spec_to_v2(m: &MetricSpec) -> v2::MetricSpec {
    let resource_target = |r: &ResourceSource| v2::MetricTarget {
        r#type: if r.target_average_utilization.is_some() {
            "Utilization"
        } else {
            "AverageValue"
        }
        .into(),
        average_utilization: r.target_average_utilization,
        average_value: r.target_average_value.clone(),
        value: None,
    };
    v2::MetricSpec {
        r#type: m.type_.clone(),
        object: m.object.as_ref().map(|o| v2::ObjectMetricSource {
            described_object: reference_to_v2(&o.target),
            metric: identifier(&o.metric_name, o.selector.as_ref()),
            target: target(
                if o.average_value.is_some() {
                    "AverageValue"
                } else {
                    "Value"
                },
                quantity(o.target_value.as_ref()),
                o.average_value.clone(),
            ),
        }),
        pods: m.pods.as_ref().map(|p| v2::PodsMetricSource {
            metric: identifier(&p.metric_name, p.selector.as_ref()),
            target: target(
                "AverageValue",
                None,
                quantity(p.target_average_value.as_ref()),
            ),
        }),
        resource: m.resource.as_ref().map(|r| v2::ResourceMetricSource {
            name: r.name.clone(),
            target: resource_target(r),
        }),
        container_resource: m.container_resource.as_ref().map(|r| {
            v2::ContainerResourceMetricSource {
                name: r.name.clone(),
                container: r.container.clone().unwrap_or_default(),
                target: resource_target(r),
            }
        }),
        external: m.external.as_ref().map(|e| v2::ExternalMetricSource {
            metric: identifier(&e.metric_name, e.metric_selector.as_ref()),
            target: target(
                if e.target_value.is_some() {
                    "Value"
                } else {
                    "AverageValue"
                },
                e.target_value.clone(),
                e.target_average_value.clone(),
            ),
        }),
    }
}

/// A v2 current metric as autoscaling/v1 writes it in [`METRIC_STATUSES`].
pub fn status_to_v1(m: &v2::MetricStatus) -> MetricStatus {
    let resource =
        |name: &str, c: &v2::MetricValueStatus, container: Option<&String>| ResourceStatus {
            name: name.to_string(),
            current_average_utilization: c.average_utilization,
            current_average_value: quantity(c.average_value.as_ref()),
            container: container.cloned(),
        };
    MetricStatus {
        type_: m.r#type.clone(),
        object: m.object.as_ref().map(|o| ObjectStatus {
            target: reference_to_v1(&o.described_object),
            metric_name: o.metric.name.clone(),
            current_value: quantity(o.current.value.as_ref()),
            selector: o.metric.selector.clone(),
            average_value: o.current.average_value.clone(),
        }),
        pods: m.pods.as_ref().map(|p| PodsStatus {
            metric_name: p.metric.name.clone(),
            current_average_value: quantity(p.current.average_value.as_ref()),
            selector: p.metric.selector.clone(),
        }),
        resource: m
            .resource
            .as_ref()
            .map(|r| resource(&r.name, &r.current, None)),
        container_resource: m
            .container_resource
            .as_ref()
            .map(|r| resource(&r.name, &r.current, Some(&r.container))),
        external: m.external.as_ref().map(|e| ExternalStatus {
            metric_name: e.metric.name.clone(),
            metric_selector: e.metric.selector.clone(),
            current_value: quantity(e.current.value.as_ref()),
            current_average_value: e.current.average_value.clone(),
        }),
    }
}

/// An autoscaling/v1 current metric of [`METRIC_STATUSES`] as v2's.
pub fn status_to_v2(m: &MetricStatus) -> v2::MetricStatus {
    let value = |value: Option<Quantity>, average: Option<Quantity>, utilization: Option<i32>| {
        v2::MetricValueStatus {
            value,
            average_value: average,
            average_utilization: utilization,
        }
    };
    v2::MetricStatus {
        r#type: m.type_.clone(),
        object: m.object.as_ref().map(|o| v2::ObjectMetricStatus {
            described_object: reference_to_v2(&o.target),
            metric: identifier(&o.metric_name, o.selector.as_ref()),
            current: value(
                quantity(o.current_value.as_ref()),
                o.average_value.clone(),
                None,
            ),
        }),
        pods: m.pods.as_ref().map(|p| v2::PodsMetricStatus {
            metric: identifier(&p.metric_name, p.selector.as_ref()),
            current: value(None, quantity(p.current_average_value.as_ref()), None),
        }),
        resource: m.resource.as_ref().map(|r| v2::ResourceMetricStatus {
            name: r.name.clone(),
            current: value(
                None,
                quantity(r.current_average_value.as_ref()),
                r.current_average_utilization,
            ),
        }),
        container_resource: m.container_resource.as_ref().map(|r| {
            v2::ContainerResourceMetricStatus {
                name: r.name.clone(),
                container: r.container.clone().unwrap_or_default(),
                current: value(
                    None,
                    quantity(r.current_average_value.as_ref()),
                    r.current_average_utilization,
                ),
            }
        }),
        external: m.external.as_ref().map(|e| v2::ExternalMetricStatus {
            metric: identifier(&e.metric_name, e.metric_selector.as_ref()),
            current: value(
                quantity(e.current_value.as_ref()),
                e.current_average_value.clone(),
                None,
            ),
        }),
    }
}

/// A v2 condition as autoscaling/v1 writes it in [`CONDITIONS`].
pub fn condition_to_v1(c: &v2::HorizontalPodAutoscalerCondition) -> Condition {
    Condition {
        type_: c.r#type.clone(),
        status: c.status.clone(),
        last_transition_time: c.last_transition_time.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
    }
}

/// A condition of [`CONDITIONS`] as v2's.
pub fn condition_to_v2(c: &Condition) -> v2::HorizontalPodAutoscalerCondition {
    v2::HorizontalPodAutoscalerCondition {
        r#type: c.type_.clone(),
        status: c.status.clone(),
        last_transition_time: c.last_transition_time.clone(),
        reason: c.reason.clone(),
        message: c.message.clone(),
    }
}

/// kube's internal `HorizontalPodAutoscalerBehavior`, as [`BEHAVIOR`] holds it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Behavior {
    #[serde(rename = "ScaleUp", alias = "scaleUp", alias = "scaleup", default)]
    scale_up: Option<Rules>,
    #[serde(
        rename = "ScaleDown",
        alias = "scaleDown",
        alias = "scaledown",
        default
    )]
    scale_down: Option<Rules>,
}

/// kube's internal `HPAScalingRules`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Rules {
    #[serde(
        rename = "StabilizationWindowSeconds",
        alias = "stabilizationWindowSeconds",
        default
    )]
    stabilization_window_seconds: Option<i32>,
    #[serde(rename = "SelectPolicy", alias = "selectPolicy", default)]
    select_policy: Option<String>,
    #[serde(rename = "Policies", alias = "policies", default)]
    policies: Option<Vec<Policy>>,
    #[serde(rename = "Tolerance", alias = "tolerance", default)]
    tolerance: Option<Quantity>,
}

/// kube's internal `HPAScalingPolicy`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Policy {
    #[serde(rename = "Type", alias = "type", default)]
    type_: String,
    #[serde(rename = "Value", alias = "value", default)]
    value: i32,
    #[serde(rename = "PeriodSeconds", alias = "periodSeconds", default)]
    period_seconds: i32,
}

impl Behavior {
    /// v2's behavior as [`BEHAVIOR`] holds it.
    pub fn from_v2(b: &v2::HorizontalPodAutoscalerBehavior) -> Self {
        let rules = |r: &v2::HPAScalingRules| Rules {
            stabilization_window_seconds: r.stabilization_window_seconds,
            select_policy: r.select_policy.clone(),
            policies: r.policies.as_ref().map(|p| {
                p.iter()
                    .map(|p| Policy {
                        type_: p.r#type.clone(),
                        value: p.value,
                        period_seconds: p.period_seconds,
                    })
                    .collect()
            }),
            tolerance: r.tolerance.clone(),
        };
        Behavior {
            scale_up: b.scale_up.as_ref().map(rules),
            scale_down: b.scale_down.as_ref().map(rules),
        }
    }

    /// v2's behavior, unless this one is empty (kube moves only well-formed, non-empty
    /// behavior back).
    pub fn to_v2(&self) -> Option<v2::HorizontalPodAutoscalerBehavior> {
        if *self == Behavior::default() {
            return None;
        }
        let rules = |r: &Rules| v2::HPAScalingRules {
            stabilization_window_seconds: r.stabilization_window_seconds,
            select_policy: r.select_policy.clone(),
            policies: r.policies.as_ref().map(|p| {
                p.iter()
                    .map(|p| v2::HPAScalingPolicy {
                        r#type: p.type_.clone(),
                        value: p.value,
                        period_seconds: p.period_seconds,
                    })
                    .collect()
            }),
            tolerance: r.tolerance.clone(),
        };
        Some(v2::HorizontalPodAutoscalerBehavior {
            scale_up: self.scale_up.as_ref().map(rules),
            scale_down: self.scale_down.as_ref().map(rules),
        })
    }
}
