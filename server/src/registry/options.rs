//! What a request asks of the registry, parsed from its query and body by the
//! endpoints: the `ListOptions`, `DeleteOptions` and write options of the API.

use kapi_core::selector::{FieldSelector, LabelSelector};
use kapi_storage::ReadAt;

/// `?fieldValidation=`: what to do with unknown or duplicate fields in a body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (the default since Kubernetes 1.27).
    #[default]
    Warn,
    /// Refuse the request with 400.
    Strict,
}

/// Validating admission: a check a create or update must pass after the strategy
/// validated it and before it is stored (also on dry runs), with what the registry
/// does not know, such as who asks.
pub trait Admission: Send + Sync {
    /// Refuses the write with an error, or lets it through. `old` is `None` on create.
    fn validate(
        &self,
        info: &kapi_core::ResourceInfo,
        namespace: Option<&str>,
        new: &serde_json::Value,
        old: Option<&serde_json::Value>,
    ) -> Result<(), crate::status::ApiError>;
}

/// Options of create, update and patch.
#[derive(Clone, Default)]
pub struct WriteOptions {
    /// `?dryRun=All`: do everything but write.
    pub dry_run: bool,
    /// `?fieldValidation=`.
    pub field_validation: FieldValidation,
    /// The request's admission checks, if any.
    pub admission: Option<std::sync::Arc<dyn Admission>>,
}

impl std::fmt::Debug for WriteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("dry_run", &self.dry_run)
            .field("field_validation", &self.field_validation)
            .field("admission", &self.admission.is_some())
            .finish()
    }
}

/// Options of list (and of the initial state of a watch).
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// `?labelSelector=`.
    pub label_selector: LabelSelector,
    /// `?fieldSelector=`.
    pub field_selector: FieldSelector,
    /// `?limit=`.
    pub limit: Option<usize>,
    /// `?continue=`.
    pub continue_token: Option<String>,
    /// `?resourceVersion=` with `?resourceVersionMatch=`.
    pub read_at: ReadAt,
}

/// Options of watch.
#[derive(Clone, Debug, Default)]
pub struct WatchOptions {
    /// Selectors filter events as they filter lists.
    pub label_selector: LabelSelector,
    /// See `label_selector`.
    pub field_selector: FieldSelector,
    /// `?resourceVersion=`: `None` or `Some(0)` start with the current state as ADDED
    /// events, `Some(n)` replays what happened after `n`.
    pub resource_version: Option<i64>,
    /// `?sendInitialEvents=true`: the watch-list protocol.
    pub send_initial_events: bool,
    /// `?allowWatchBookmarks=true`.
    pub allow_bookmarks: bool,
}

/// `propagationPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Propagation {
    /// Dependents are deleted after the owner, in the background (the default).
    #[default]
    Background,
    /// The owner stays (with the `foregroundDeletion` finalizer) until its blocking
    /// dependents are gone.
    Foreground,
    /// Dependents lose their owner reference (the `orphan` finalizer).
    Orphan,
}

/// Options of delete and deletecollection.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_resource_version: Option<String>,
    /// `propagationPolicy` (or the legacy `orphanDependents`).
    pub propagation: Option<Propagation>,
    /// `gracePeriodSeconds`: accepted; kapi runs no kubelet, so every grace period ends
    /// at once.
    pub grace_period_seconds: Option<i64>,
    /// `dryRun: [All]`.
    pub dry_run: bool,
    /// The legacy `orphanDependents: false` was given: a delete that has to wait then
    /// answers 202 Accepted (kube-apiserver answers 200 in every other case).
    pub orphan_dependents_false: bool,
}
