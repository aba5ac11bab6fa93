//! Jobs and CronJobs, as kube-apiserver's batch strategies behave.

use kapi_core::Hooks;

use crate::generated::batch::v1::CronJob;
use crate::generated::batch::v1::Job;

/// The hooks of Job.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobHooks;

impl Hooks<Job> for JobHooks {}

/// The hooks of CronJob.
#[derive(Clone, Copy, Debug, Default)]
pub struct CronJobHooks;

impl Hooks<CronJob> for CronJobHooks {}
