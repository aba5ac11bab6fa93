//! Jobs: batch/v1 defaults, the generated selector and labels, the spec's checks and
//! the template's immutability, and the STATUS cell of kube's printer.

use chrono::{DateTime, Utc};
use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::batch::v1::JobSpec;
use crate::generated::api::core::v1::PodTemplateSpec;
use crate::generated::batch::v1::Job;
use crate::hooks::core::pod_spec::{
    check_selects_template, container_cell, default_template, labels_mut, selector_error,
    selector_json, selector_string, validate_pod_spec,
};

use crate::hooks::{nonnegative, strings};

/// The label selecting a Job's pods.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// The label naming a Job's pods' Job.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

/// `SetDefaults_Job` on a Job's spec.
fn default_job_spec(spec: &mut JobSpec) {
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
        spec.parallelism = Some(1);
    }
    spec.parallelism.get_or_insert(1);
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() {
            i32::MAX
        } else {
            6
        });
    }
    spec.completion_mode
        .get_or_insert_with(|| "NonIndexed".into());
    spec.suspend.get_or_insert(false);
    if let Some(policy) = spec.pod_failure_policy.as_mut() {
        for rule in policy.rules.iter_mut() {
            for pattern in rule.on_pod_conditions.iter_mut().flatten() {
                if pattern.status.as_deref().unwrap_or("").is_empty() {
                    pattern.status = Some("True".into());
                }
            }
        }
    }
    if spec.pod_replacement_policy.is_none() {
        let policy = if spec.pod_failure_policy.is_some() {
            "Failed"
        } else {
            "TerminatingOrFailed"
        };
        spec.pod_replacement_policy = Some(policy.into());
    }
}

/// Copies the template's labels to the Job's when it has none, as `SetDefaults_Job`.
fn default_job_labels(job: &mut Job) {
    let Some(spec) = job.spec.as_ref() else {
        return;
    };
    let labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone());
    if labels.is_some() && job.metadata.labels.as_ref().is_none_or(|l| l.is_empty()) {
        job.metadata.labels = labels;
    }
}

/// kube's `generateSelector`: the job-name and controller-uid labels on the template
/// (unless already set) and a selector on the controller uid.
fn generate_selector(job: &mut Job) {
    let name = job.metadata.name.clone().unwrap_or_default();
    let uid = job
        .metadata
        .uid
        .clone()
        .filter(|u| !u.is_empty())
        // The registry assigns the uid before the strategy runs; a fresh one is only a
        // fallback for a strategy used without it.
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let Some(spec) = job.spec.as_mut() else {
        return;
    };
    let labels = labels_mut(spec.template.metadata.get_or_insert_with(Default::default));
    for key in [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL] {
        labels.entry(key.into()).or_insert_with(|| name.clone());
    }
    for key in [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL] {
        labels.entry(key.into()).or_insert_with(|| uid.clone());
    }
    let selector = spec.selector.get_or_insert_with(LabelSelector::default);
    selector
        .match_labels
        .get_or_insert_with(Default::default)
        .entry(CONTROLLER_UID_LABEL.into())
        .or_insert(uid);
}

/// `validateJobSpec` (in part) and the restart policy of `ValidateJobTemplateSpec`, at
/// `path` (`spec`, or `spec.jobTemplate.spec`).
pub(super) fn validate_job_spec(spec: &JobSpec, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    for (name, value) in [
        ("parallelism", spec.parallelism.map(i64::from)),
        ("completions", spec.completions.map(i64::from)),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit.map(i64::from)),
        (
            "ttlSecondsAfterFinished",
            spec.ttl_seconds_after_finished.map(i64::from),
        ),
    ] {
        nonnegative(&mut errs, &path.child(name), value);
    }
    if let Some(mode) = spec.completion_mode.as_deref() {
        if !["NonIndexed", "Indexed"].contains(&mode) {
            errs.push(FieldError::not_supported(
                &path.child("completionMode"),
                mode,
                &strings(&["NonIndexed", "Indexed"]),
            ));
        }
        if mode == "Indexed" && spec.completions.is_none() {
            errs.push(FieldError::required(
                &path.child("completions"),
                "when completion mode is Indexed",
            ));
        }
    }
    let template_path = path.child("template");
    if let Some(selector) = spec.selector.as_ref() {
        let json = selector_json(selector);
        if kapi_core::selector::LabelSelector::from_json(&json).is_err() {
            errs.push(selector_error(
                &path.child("selector"),
                selector,
                "invalid label selector",
            ));
        } else {
            errs.extend(check_selects_template(
                &spec.template,
                Some(&json),
                &template_path,
            ));
        }
    }
    if let Some(pod) = spec.template.spec.as_ref() {
        let pod_path = template_path.child("spec");
        errs.extend(validate_pod_spec(pod, &pod_path));
        let policy = pod.restart_policy.as_deref().unwrap_or("");
        if policy != "OnFailure" && policy != "Never" {
            errs.push(FieldError::not_supported(
                &pod_path.child("restartPolicy"),
                policy,
                &strings(&["OnFailure", "Never"]),
            ));
        }
    }
    errs
}

/// The template with what a suspended, never-started Job may change taken from `from`.
fn with_scheduling_directives(
    template: &PodTemplateSpec,
    from: &PodTemplateSpec,
) -> PodTemplateSpec {
    let mut t = template.clone();
    let from_meta = from.metadata.clone().unwrap_or_default();
    let meta = t.metadata.get_or_insert_with(Default::default);
    meta.labels = from_meta.labels;
    meta.annotations = from_meta.annotations;
    if let (Some(spec), Some(from_spec)) = (t.spec.as_mut(), from.spec.as_ref()) {
        spec.node_selector = from_spec.node_selector.clone();
        spec.affinity = from_spec.affinity.clone();
        spec.tolerations = from_spec.tolerations.clone();
        spec.scheduling_gates = from_spec.scheduling_gates.clone();
    }
    t
}

/// The hooks of Job.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobHooks;

impl Hooks<Job> for JobHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, job: &mut Job) {
        default_job_labels(job);
        if let Some(spec) = job.spec.as_mut() {
            default_job_spec(spec);
            default_template(&mut spec.template);
        }
    }

    fn prepare_for_create(&self, job: &mut Job) {
        let manual = job.spec.as_ref().and_then(|s| s.manual_selector) == Some(true);
        if !manual {
            generate_selector(job);
        }
        default_job_labels(job);
    }

    fn validate(&self, job: &Job) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = job.spec.as_ref() else {
            return errs;
        };
        if spec.selector.is_none() {
            errs.push(FieldError::required(&FieldPath::new("spec.selector"), ""));
        }
        errs.extend(validate_job_spec(spec, &FieldPath::new("spec")));
        errs
    }

    fn validate_update(&self, new: &Job, old: &Job) -> ErrorList {
        let mut errs = self.validate(new);
        let (Some(n), Some(o)) = (new.spec.as_ref(), old.spec.as_ref()) else {
            return errs;
        };
        if n.selector != o.selector {
            let selector = n.selector.clone().unwrap_or_default();
            errs.push(selector_error(
                &FieldPath::new("spec.selector"),
                &selector,
                "field is immutable",
            ));
        }
        if n.completion_mode != o.completion_mode {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec.completionMode"),
                n.completion_mode.clone().unwrap_or_default(),
                "field is immutable",
            ));
        }
        if n.completions != o.completions {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec.completions"),
                n.completions.map_or(Value::Null, Value::from),
                "field is immutable",
            ));
        }
        let never_started = old.status.as_ref().is_none_or(|s| s.start_time.is_none());
        let template = if o.suspend == Some(true) && never_started {
            with_scheduling_directives(&n.template, &o.template)
        } else {
            n.template.clone()
        };
        if template != o.template {
            errs.push(FieldError::invalid(
                &FieldPath::new("spec.template"),
                serde_json::to_value(&n.template).unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, job: &Job) -> Option<Value> {
        let spec = job.spec.as_ref();
        let status = serde_json::to_value(&job.status).unwrap_or(Value::Null);
        let succeeded = status.get("succeeded").and_then(Value::as_i64).unwrap_or(0);
        match column {
            "Status" => Some(Value::from(job_status(job, &status))),
            "Completions" => {
                let parallelism = spec.and_then(|s| s.parallelism).unwrap_or(0);
                Some(Value::from(match spec.and_then(|s| s.completions) {
                    Some(c) => format!("{succeeded}/{c}"),
                    None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
                    None => format!("{succeeded}/1"),
                }))
            }
            "Duration" => {
                let time = |key: &str| {
                    status
                        .get(key)
                        .and_then(Value::as_str)
                        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
                        .map(|t| t.with_timezone(&Utc))
                };
                Some(Value::from(
                    match (time("startTime"), time("completionTime")) {
                        (None, _) => String::new(),
                        (Some(start), None) => {
                            kapi_apiserver::duration::human_duration(Utc::now() - start)
                        }
                        (Some(start), Some(end)) => {
                            kapi_apiserver::duration::human_duration(end - start)
                        }
                    },
                ))
            }
            "Selector" => Some(Value::from(selector_string(
                spec.and_then(|s| s.selector.as_ref()),
            ))),
            _ => container_cell(column, spec.map(|s| &s.template)),
        }
    }
}

/// kube's printer's STATUS of a Job.
fn job_status(job: &Job, status: &Value) -> &'static str {
    let has = |kind: &str| {
        status
            .get("conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| {
                c.get("type") == Some(&Value::from(kind))
                    && c.get("status") == Some(&Value::from("True"))
            })
    };
    if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if job.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}
