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
//!   restart policy and the pod spec checks of [`super::core::pod_spec`].

mod cron;
mod cron_job;
mod job;

pub use cron_job::CronJobHooks;
pub use job::JobHooks;
