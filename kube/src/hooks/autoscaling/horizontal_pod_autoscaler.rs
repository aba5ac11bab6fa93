//! HorizontalPodAutoscalers (autoscaling/v2 and v1), as kube-apiserver's strategy, v2 defaults,
//! validation and printer treat them: generation tracked; `minReplicas` defaults to 1
//! and an empty `metrics` to a CPU utilization target of 80%; `maxReplicas` must be at
//! least 1 and at least `minReplicas`; `scaleTargetRef` needs a kind and a name. The
//! Reference column is `Kind/name`, Targets lists each metric as `current/target`
//! (`cpu: <unknown>/80%`). A v1 object is validated and printed as its v2 conversion,
//! as kube validates and prints the internal version; v1's own default is
//! `minReplicas` (its CPU target is defaulted by the conversion).
//!
//! Deliberate differences from kube-apiserver:
//! - Metric specs and scaling behavior are not validated beyond the schema.
//! - Targets shows at most two metrics then `+ N more...`, as kube does, but only
//!   Resource, ContainerResource, Pods and External metrics get their names; Object
//!   metrics print as `<unknown>/target` with their metric name.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::autoscaling::v2::{
    MetricSpec, MetricStatus, MetricTarget, MetricValueStatus, ResourceMetricSource,
};
use crate::generated::autoscaling::conversions::horizontal_pod_autoscaler_v1_to_v2;
use crate::generated::autoscaling::v1;
use crate::generated::autoscaling::v2::HorizontalPodAutoscaler;

/// kube's default CPU utilization target.
pub(super) const DEFAULT_CPU_UTILIZATION: i32 = 80;

/// A CPU Resource metric with a utilization target of `percent`.
pub(super) fn cpu_utilization(percent: i32) -> MetricSpec {
    MetricSpec {
        r#type: "Resource".into(),
        resource: Some(ResourceMetricSource {
            name: "cpu".into(),
            target: MetricTarget {
                r#type: "Utilization".into(),
                average_utilization: Some(percent),
                average_value: None,
                value: None,
            },
        }),
        container_resource: None,
        external: None,
        object: None,
        pods: None,
    }
}

/// The hooks of HorizontalPodAutoscaler.
#[derive(Clone, Copy, Debug, Default)]
pub struct HorizontalPodAutoscalerHooks;

/// `IsValidPathSegmentName`.
fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

fn validate_hpa(hpa: &HorizontalPodAutoscaler) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(spec) = &hpa.spec else {
        return errs;
    };
    let path = FieldPath::new("spec");
    if let Some(min) = spec.min_replicas {
        if min < 1 {
            errs.push(FieldError::invalid(
                &path.child("minReplicas"),
                min,
                "must be greater than or equal to 1",
            ));
        }
    }
    if spec.max_replicas < 1 {
        errs.push(FieldError::invalid(
            &path.child("maxReplicas"),
            spec.max_replicas,
            "must be greater than 0",
        ));
    }
    if let Some(min) = spec.min_replicas {
        if spec.max_replicas < min {
            errs.push(FieldError::invalid(
                &path.child("maxReplicas"),
                spec.max_replicas,
                "must be greater than or equal to `minReplicas`",
            ));
        }
    }
    let r = &spec.scale_target_ref;
    let ref_path = path.child("scaleTargetRef");
    for (field, value) in [("kind", &r.kind), ("name", &r.name)] {
        if value.is_empty() {
            errs.push(FieldError::required(&ref_path.child(field), ""));
        } else {
            for msg in path_segment_errors(value) {
                errs.push(FieldError::invalid(
                    &ref_path.child(field),
                    value.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

fn quantity(q: &Option<Quantity>) -> Option<String> {
    q.as_ref().map(|q| q.0.clone())
}

/// A target as kube prints it: `80%` for utilization, else the (average) value.
fn target(t: &MetricTarget) -> String {
    if let Some(u) = t.average_utilization {
        return format!("{u}%");
    }
    quantity(&t.average_value)
        .or_else(|| quantity(&t.value))
        .unwrap_or_else(|| "<unknown>".into())
}

/// The current value matching `t`'s kind, `<unknown>` when there is none.
fn current(t: &MetricTarget, c: Option<&MetricValueStatus>) -> String {
    let Some(c) = c else {
        return "<unknown>".into();
    };
    let v = if t.average_utilization.is_some() {
        c.average_utilization.map(|u| format!("{u}%"))
    } else if t.average_value.is_some() {
        quantity(&c.average_value)
    } else {
        quantity(&c.value)
    };
    v.unwrap_or_else(|| "<unknown>".into())
}

/// kube's `formatHPAMetrics`, for the metric kinds kapi names.
fn targets(hpa: &HorizontalPodAutoscaler) -> String {
    let specs = hpa
        .spec
        .as_ref()
        .and_then(|s| s.metrics.as_deref())
        .unwrap_or(&[]);
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses: &[MetricStatus] = hpa
        .status
        .as_ref()
        .and_then(|s| s.current_metrics.as_deref())
        .unwrap_or(&[]);
    let mut list = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i);
        list.push(metric_text(spec, status));
    }
    const MAX: usize = 2;
    if list.len() > MAX {
        let more = list.len() - MAX;
        list.truncate(MAX);
        format!("{} + {more} more...", list.join(", "))
    } else {
        list.join(", ")
    }
}

fn metric_text(spec: &MetricSpec, status: Option<&MetricStatus>) -> String {
    if let Some(ResourceMetricSource { name, target: t }) = &spec.resource {
        let cur = status
            .and_then(|s| s.resource.as_ref())
            .filter(|r| &r.name == name)
            .map(|r| &r.current);
        return format!("{name}: {}/{}", current(t, cur), target(t));
    }
    if let Some(c) = &spec.container_resource {
        let cur = status
            .and_then(|s| s.container_resource.as_ref())
            .filter(|r| r.name == c.name)
            .map(|r| &r.current);
        return format!(
            "{}: {}/{}",
            c.name,
            current(&c.target, cur),
            target(&c.target)
        );
    }
    if let Some(p) = &spec.pods {
        let cur = status.and_then(|s| s.pods.as_ref()).map(|p| &p.current);
        return format!(
            "{}: {}/{}",
            p.metric.name,
            current(&p.target, cur),
            target(&p.target)
        );
    }
    if let Some(e) = &spec.external {
        let cur = status.and_then(|s| s.external.as_ref()).map(|e| &e.current);
        return format!(
            "{}: {}/{}",
            e.metric.name,
            current(&e.target, cur),
            target(&e.target)
        );
    }
    if let Some(o) = &spec.object {
        let cur = status.and_then(|s| s.object.as_ref()).map(|o| &o.current);
        return format!(
            "{}: {}/{}",
            o.metric.name,
            current(&o.target, cur),
            target(&o.target)
        );
    }
    "<unknown>".into()
}

impl Hooks<HorizontalPodAutoscaler> for HorizontalPodAutoscalerHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, hpa: &mut HorizontalPodAutoscaler) {
        let Some(spec) = hpa.spec.as_mut() else {
            return;
        };
        if spec.min_replicas.is_none() {
            spec.min_replicas = Some(1);
        }
        if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
            spec.metrics = Some(vec![cpu_utilization(DEFAULT_CPU_UTILIZATION)]);
        }
    }

    fn validate(&self, hpa: &HorizontalPodAutoscaler) -> ErrorList {
        validate_hpa(hpa)
    }

    fn validate_update(
        &self,
        new: &HorizontalPodAutoscaler,
        _old: &HorizontalPodAutoscaler,
    ) -> ErrorList {
        validate_hpa(new)
    }

    fn table_cell(&self, column: &str, hpa: &HorizontalPodAutoscaler) -> Option<Value> {
        match column {
            "Reference" => {
                let r = &hpa.spec.as_ref()?.scale_target_ref;
                Some(Value::String(format!("{}/{}", r.kind, r.name)))
            }
            "Targets" => Some(Value::String(targets(hpa))),
            "Replicas" => Some(Value::from(
                hpa.status
                    .as_ref()
                    .and_then(|s| s.current_replicas)
                    .unwrap_or(0),
            )),
            _ => None,
        }
    }
}

impl Hooks<v1::HorizontalPodAutoscaler> for HorizontalPodAutoscalerHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, hpa: &mut v1::HorizontalPodAutoscaler) {
        if let Some(spec) = hpa.spec.as_mut() {
            spec.min_replicas.get_or_insert(1);
        }
    }

    fn validate(&self, hpa: &v1::HorizontalPodAutoscaler) -> ErrorList {
        validate_hpa(&horizontal_pod_autoscaler_v1_to_v2(hpa))
    }

    fn validate_update(
        &self,
        new: &v1::HorizontalPodAutoscaler,
        _old: &v1::HorizontalPodAutoscaler,
    ) -> ErrorList {
        self.validate(new)
    }

    fn table_cell(&self, column: &str, hpa: &v1::HorizontalPodAutoscaler) -> Option<Value> {
        self.table_cell(column, &horizontal_pod_autoscaler_v1_to_v2(hpa))
    }
}
