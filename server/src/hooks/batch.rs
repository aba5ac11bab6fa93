//! Jobs and CronJobs, as kube-apiserver's batch strategies behave: batch/v1 defaults
//! (`SetDefaults_Job`, `SetDefaults_CronJob`) and PodSpec defaults in their templates,
//! generation tracked, a Job's selector and pod labels generated unless
//! `manualSelector` is true, its template restarting `OnFailure` or `Never` and
//! immutable, a CronJob's schedule parsed as robfig/cron's `ParseStandard` parses it,
//! and the Table cells of kube's printers.
//!
//! Deliberate differences from kube-apiserver:
//! - The Job's metadata labels are copied from its template's when empty, after the
//!   selector labels are generated (kube gets the same result because it re-applies
//!   defaults when it reads the object back from etcd).
//! - `spec.template` of a Job may change only while the Job is suspended and has never
//!   started, and then only its labels, annotations, node selector, affinity,
//!   tolerations and scheduling gates (kube's mutable scheduling directives). The
//!   immutable-field error renders the template as JSON, not Go's `%#v`.
//! - A time zone (`spec.timeZone`, or a `TZ=` prefix of the schedule) is checked for
//!   kube's allowed characters and then looked up in `/usr/share/zoneinfo` when that
//!   directory exists (kube embeds the tz database; `UTC` is always known). The
//!   message is Go's `unknown time zone X`.
//! - Only part of `ValidateJobSpec` is made: counts not negative, `completionMode`,
//!   Indexed jobs needing `completions`, the selector selecting the template, the
//!   restart policy and the pod spec checks of [`super::pod_spec`].

use chrono::{DateTime, Utc};
use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::pod_spec::{
    check_selects_template, container_cell, default_template, labels_mut, selector_error,
    selector_json, selector_string, validate_pod_spec,
};
use crate::generated::api::batch::v1::JobSpec;
use crate::generated::api::core::v1::PodTemplateSpec;
use crate::generated::batch::v1::CronJob;
use crate::generated::batch::v1::Job;

/// The label selecting a Job's pods.
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// The label naming a Job's pods' Job.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
const LEGACY_CONTROLLER_UID_LABEL: &str = "controller-uid";
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

fn strings(values: &[&str]) -> Vec<Value> {
    values.iter().map(|v| Value::from(*v)).collect()
}

fn nonnegative(errs: &mut ErrorList, path: &FieldPath, value: Option<i64>) {
    if let Some(v) = value.filter(|v| *v < 0) {
        errs.push(FieldError::invalid(
            path,
            v,
            "must be greater than or equal to 0",
        ));
    }
}

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
fn validate_job_spec(spec: &JobSpec, path: &FieldPath) -> ErrorList {
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
                        (Some(start), None) => crate::table::human_duration(Utc::now() - start),
                        (Some(start), Some(end)) => crate::table::human_duration(end - start),
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

/// Whether `zone` is a time zone Go's `time.LoadLocation` would find; see the module
/// docs.
fn zone_known(zone: &str) -> bool {
    if zone == "UTC" || zone.is_empty() {
        return true;
    }
    if zone.split('/').any(|p| p == "." || p == "..") {
        return false;
    }
    let dir = std::path::Path::new("/usr/share/zoneinfo");
    !dir.is_dir() || dir.join(zone).is_file()
}

/// kube's `validateTimeZone`.
fn validate_time_zone(zone: &str, path: &FieldPath) -> ErrorList {
    let invalid = |msg: String| vec![FieldError::invalid(path, zone, msg)];
    if zone.is_empty() {
        return invalid("timeZone must be nil or non-empty string".into());
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
    };
    if !zone.split('/').all(part_ok) {
        return invalid(format!("unknown time zone {zone}"));
    }
    if zone.eq_ignore_ascii_case("Local") {
        return invalid(
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
                .into(),
        );
    }
    if !zone_known(zone) {
        return invalid(format!("unknown time zone {zone}"));
    }
    ErrorList::new()
}

/// kube's `validateScheduleFormat`.
fn validate_schedule(
    schedule: &str,
    allow_tz: bool,
    time_zone: Option<&str>,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    if let Err(e) = cron::parse(schedule, zone_known) {
        errs.push(FieldError::invalid(path, schedule, e));
    }
    if schedule.contains("TZ") {
        if allow_tz && time_zone.is_some() {
            errs.push(FieldError::invalid(
                path,
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !allow_tz {
            errs.push(FieldError::invalid(
                path,
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    errs
}

/// The hooks of CronJob.
#[derive(Clone, Copy, Debug, Default)]
pub struct CronJobHooks;

impl CronJobHooks {
    fn validate_spec(cj: &CronJob, allow_tz: bool) -> ErrorList {
        let mut errs = ErrorList::new();
        let Some(spec) = cj.spec.as_ref() else {
            return errs;
        };
        let path = FieldPath::new("spec");
        if spec.schedule.is_empty() {
            errs.push(FieldError::required(&path.child("schedule"), ""));
        } else {
            errs.extend(validate_schedule(
                &spec.schedule,
                allow_tz,
                spec.time_zone.as_deref(),
                &path.child("schedule"),
            ));
        }
        nonnegative(
            &mut errs,
            &path.child("startingDeadlineSeconds"),
            spec.starting_deadline_seconds,
        );
        if let Some(zone) = spec.time_zone.as_deref() {
            errs.extend(validate_time_zone(zone, &path.child("timeZone")));
        }
        let policy = spec.concurrency_policy.as_deref().unwrap_or("");
        let policies = ["Allow", "Forbid", "Replace"];
        if !policies.contains(&policy) {
            errs.push(FieldError::not_supported(
                &path.child("concurrencyPolicy"),
                policy,
                &strings(&policies),
            ));
        }
        for (name, value) in [
            (
                "successfulJobsHistoryLimit",
                spec.successful_jobs_history_limit,
            ),
            ("failedJobsHistoryLimit", spec.failed_jobs_history_limit),
        ] {
            nonnegative(&mut errs, &path.child(name), value.map(i64::from));
        }
        if let Some(job) = spec.job_template.spec.as_ref() {
            let job_path = path.child("jobTemplate").child("spec");
            if job.manual_selector == Some(true) {
                errs.push(FieldError::not_supported(
                    &job_path.child("manualSelector"),
                    true,
                    &strings(&["nil", "false"]),
                ));
            }
            errs.extend(validate_job_spec(job, &job_path));
        }
        errs
    }
}

impl Hooks<CronJob> for CronJobHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, cj: &mut CronJob) {
        let Some(spec) = cj.spec.as_mut() else {
            return;
        };
        spec.concurrency_policy
            .get_or_insert_with(|| "Allow".into());
        spec.suspend.get_or_insert(false);
        spec.successful_jobs_history_limit.get_or_insert(3);
        spec.failed_jobs_history_limit.get_or_insert(1);
        if let Some(job) = spec.job_template.spec.as_mut() {
            default_template(&mut job.template);
        }
    }

    fn validate(&self, cj: &CronJob) -> ErrorList {
        let mut errs = ErrorList::new();
        let name = cj.metadata.name.as_deref().unwrap_or("");
        if name.len() > 52 {
            errs.push(FieldError::invalid(
                &FieldPath::new("metadata.name"),
                name,
                "must be no more than 52 characters",
            ));
        }
        errs.extend(Self::validate_spec(cj, false));
        errs
    }

    fn validate_update(&self, new: &CronJob, old: &CronJob) -> ErrorList {
        let allow_tz = old.spec.as_ref().is_some_and(|s| s.schedule.contains("TZ"));
        Self::validate_spec(new, allow_tz)
    }

    fn table_cell(&self, column: &str, cj: &CronJob) -> Option<Value> {
        let spec = cj.spec.as_ref();
        let job = spec.and_then(|s| s.job_template.spec.as_ref());
        match column {
            "Active" => Some(Value::from(
                cj.status
                    .as_ref()
                    .and_then(|s| s.active.as_ref())
                    .map_or(0, Vec::len),
            )),
            "Timezone" => Some(Value::from(
                spec.and_then(|s| s.time_zone.as_deref())
                    .unwrap_or("<none>"),
            )),
            // kube's printBoolPtr.
            "Suspend" => Some(Value::from(match spec.and_then(|s| s.suspend) {
                Some(true) => "True",
                Some(false) => "False",
                None => "<unset>",
            })),
            "Last Schedule" => Some(Value::from(
                cj.status
                    .as_ref()
                    .and_then(|s| s.last_schedule_time.as_ref())
                    .and_then(|t| serde_json::to_value(t).ok())
                    .and_then(|t| t.as_str().map(str::to_string))
                    .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
                    .map_or("<none>".to_string(), |t| {
                        crate::table::human_duration(Utc::now() - t.with_timezone(&Utc))
                    }),
            )),
            "Selector" => Some(Value::from(selector_string(
                job.and_then(|j| j.selector.as_ref()),
            ))),
            _ => container_cell(column, job.map(|j| &j.template)),
        }
    }
}

/// Cron schedules as kube-apiserver checks them: `cron.ParseStandard` of robfig/cron
/// v3 (five fields, or a `@` descriptor, after an optional `TZ=`/`CRON_TZ=` prefix),
/// with its error messages.
mod cron {
    /// A field's bounds and names.
    struct Bounds {
        min: u64,
        max: u64,
        names: &'static [(&'static str, u64)],
    }

    const MONTHS: &[(&str, u64)] = &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ];
    const DAYS: &[(&str, u64)] = &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ];
    const FIELDS: [Bounds; 5] = [
        Bounds {
            min: 0,
            max: 59,
            names: &[],
        },
        Bounds {
            min: 0,
            max: 23,
            names: &[],
        },
        Bounds {
            min: 1,
            max: 31,
            names: &[],
        },
        Bounds {
            min: 1,
            max: 12,
            names: MONTHS,
        },
        Bounds {
            min: 0,
            max: 6,
            names: DAYS,
        },
    ];

    /// Parses `spec`; the error is robfig/cron's message. `zone_ok` says whether the
    /// zone of a `TZ=` prefix is known.
    pub(super) fn parse(spec: &str, zone_ok: impl Fn(&str) -> bool) -> Result<(), String> {
        if spec.is_empty() {
            return Err("empty spec string".into());
        }
        let mut spec = spec;
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            let eq = spec.find('=').unwrap_or(0);
            let end = spec.find(' ').unwrap_or(spec.len());
            let zone = &spec[eq + 1..end];
            if !zone_ok(zone) {
                return Err(format!(
                    "provided bad location {zone}: unknown time zone {zone}"
                ));
            }
            spec = spec[end..].trim();
        }
        if spec.starts_with('@') {
            return descriptor(spec);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ));
        }
        for (field, bounds) in fields.iter().zip(FIELDS.iter()) {
            for range in field.split(',').filter(|r| !r.is_empty()) {
                check_range(range, bounds)?;
            }
        }
        Ok(())
    }

    fn descriptor(spec: &str) -> Result<(), String> {
        match spec {
            "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight"
            | "@hourly" => Ok(()),
            _ => match spec.strip_prefix("@every ") {
                Some(d) => {
                    go_duration(d).map_err(|e| format!("failed to parse duration {spec}: {e}"))
                }
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        }
    }

    /// Go's `time.ParseDuration`, for its verdict only.
    fn go_duration(s: &str) -> Result<(), String> {
        let invalid = || format!("time: invalid duration {s:?}");
        let mut rest = s.strip_prefix(['+', '-']).unwrap_or(s);
        if rest == "0" {
            return Ok(());
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let number = &rest[..digits];
            if number.is_empty() || number == "." {
                return Err(invalid());
            }
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            let unit = &rest[..unit_len];
            if unit.is_empty() {
                return Err(format!("time: missing unit in duration {s:?}"));
            }
            if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
                return Err(format!("time: unknown unit {unit:?} in duration {s:?}"));
            }
            rest = &rest[unit_len..];
        }
        Ok(())
    }

    fn check_range(expr: &str, b: &Bounds) -> Result<(), String> {
        let range_and_step: Vec<&str> = expr.split('/').collect();
        let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
        let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
            (b.min, b.max)
        } else {
            let start = int_or_name(low_and_high[0], b.names)?;
            match low_and_high.len() {
                1 => (start, start),
                2 => (start, int_or_name(low_and_high[1], b.names)?),
                _ => return Err(format!("too many hyphens: {expr}")),
            }
        };
        let step = match range_and_step.len() {
            1 => 1,
            2 => {
                let step = int(range_and_step[1])?;
                if low_and_high.len() == 1 {
                    end = b.max;
                }
                step
            }
            _ => return Err(format!("too many slashes: {expr}")),
        };
        if start < b.min {
            return Err(format!(
                "beginning of range ({start}) below minimum ({}): {expr}",
                b.min
            ));
        }
        if end > b.max {
            return Err(format!(
                "end of range ({end}) above maximum ({}): {expr}",
                b.max
            ));
        }
        if start > end {
            return Err(format!(
                "beginning of range ({start}) beyond end of range ({end}): {expr}"
            ));
        }
        if step == 0 {
            return Err(format!("step of range should be a positive number: {expr}"));
        }
        Ok(())
    }

    fn int_or_name(expr: &str, names: &[(&str, u64)]) -> Result<u64, String> {
        let lower = expr.to_ascii_lowercase();
        match names.iter().find(|(n, _)| *n == lower) {
            Some((_, v)) => Ok(*v),
            None => int(expr),
        }
    }

    /// robfig/cron's `mustParseInt`: Go's `strconv.Atoi`, then no negatives.
    fn int(expr: &str) -> Result<u64, String> {
        let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
            ));
        }
        let n: i64 = expr.parse().map_err(|_| {
            format!("failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range")
        })?;
        u64::try_from(n).map_err(|_| format!("negative number ({n}) not allowed: {expr}"))
    }

    #[cfg(test)]
    mod tests {
        use super::parse;

        fn check(s: &str) -> Result<(), String> {
            parse(s, |z| z == "UTC")
        }

        #[test]
        fn valid_schedules() {
            for s in [
                "*/5 * * * *",
                "0 0 1,15 * mon-fri",
                "30 2 * JAN-jun SUN",
                "@hourly",
                "@every 1h30m",
                "TZ=UTC 0 * * * *",
                "0-59/15 0 * * ?",
            ] {
                assert_eq!(check(s), Ok(()), "{s}");
            }
        }

        #[test]
        fn invalid_schedules() {
            for (s, msg) in [
                ("bad", "expected exactly 5 fields, found 1: [bad]"),
                ("60 * * * *", "end of range (60) above maximum (59): 60"),
                ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
                (
                    "5-1 * * * *",
                    "beginning of range (5) beyond end of range (1): 5-1",
                ),
                (
                    "*/0 * * * *",
                    "step of range should be a positive number: */0",
                ),
                ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
                (
                    "-1 * * * *",
                    "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax",
                ),
                (
                    "x * * * *",
                    "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
                ),
                ("@fortnightly", "unrecognized descriptor: @fortnightly"),
                (
                    "TZ=Mars/Base 0 * * * *",
                    "provided bad location Mars/Base: unknown time zone Mars/Base",
                ),
            ] {
                assert_eq!(check(s), Err(msg.to_string()), "{s}");
            }
        }
    }
}
