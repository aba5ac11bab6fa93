//! API Priority and Fairness (kube's `k8s.io/apiserver/pkg/util/flowcontrol`): requests
//! classified by FlowSchemas into priority levels, each level given a share of the
//! server's concurrency, and a level's requests over its share queued per flow and
//! dispatched fairly, or rejected.
//!
//! [`crate::limits`] maps a request to [`RequestAttributes`], calls
//! [`Controller::classify`] and [`Controller::admit_classified`] with a deadline from
//! [`wait_deadline`], holds the [`Seat`] while the request runs, and answers a
//! [`Rejection`] with 429. `kapi-kube` follows the stored objects into the
//! [`Controller`].
//!
//! - [`config`]: FlowSchemas and PriorityLevelConfigurations read from v1 JSON;
//! - [`classify`]: which schema, level and flow a request belongs to;
//! - [`shuffle`]: flows' hashes dealt to hands of queues;
//! - [`queueset`]: one level's seats, queues and fair dispatch;
//! - [`controller`]: the levels' limits and the live configuration;
//! - [`metrics`]: kube's `apiserver_flowcontrol_*` series.

pub mod classify;
pub mod config;
pub mod controller;
pub mod metrics;
pub mod queueset;
pub mod shuffle;

#[cfg(test)]
mod testdata;
#[cfg(test)]
mod tests;

pub use classify::{Classification, RequestAttributes};
pub use config::{Config, FlowSchema, PriorityLevel};
pub use controller::{Controller, LevelLimits, MAX_WAIT, concurrency_limits, wait_deadline};
pub use queueset::{LevelStats, Rejected, Rejection, SchemaStats, Seat};
pub use shuffle::FlowKey;
