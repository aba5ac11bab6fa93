//! Auditing, as kube-apiserver's audit log: which requests are recorded and how much of
//! them ([`Policy`], an `audit.k8s.io/v1` `Policy` file), the records ([`Event`], one JSON
//! line each), and the log they go to ([`AuditLog`], `--audit-log-path`).

mod event;
mod log;
mod policy;
mod policy_file;

pub use event::{
    DECISION_ANNOTATION, EVENT_API_VERSION, Event, EventUser, MicroTime, ObjectReference,
    REASON_ANNOTATION, ResponseStatus, StatusCause, StatusDetails,
};
pub use log::{AuditLog, AuditLogOptions, Overflow};
pub use policy::{GroupResources, Level, Policy, PolicyRule, RequestAuditConfig, Stage, StageSet};
pub use policy_file::{API_VERSION, PolicyError};
