//! CronJobs: defaults, the schedule and time zone checked as kube checks them, and
//! their job template checked as a Job's spec.

use chrono::{DateTime, Utc};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::batch::v1::CronJob;
use crate::hooks::core::pod_spec::{container_cell, default_template, selector_string};

use super::cron;
use super::job::validate_job_spec;
use crate::hooks::{nonnegative, strings};

/// Whether `zone` is a time zone Go's `time.LoadLocation` would find; see the `batch`
/// module's docs.
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
                        kapi_apiserver::duration::human_duration(Utc::now() - t.with_timezone(&Utc))
                    }),
            )),
            "Selector" => Some(Value::from(selector_string(
                job.and_then(|j| j.selector.as_ref()),
            ))),
            _ => container_cell(column, job.map(|j| &j.template)),
        }
    }
}
