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

/// The operation a write admits, as admission and `AdmissionReview` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE` (also patch, and writes of subresources such as `status`).
    Update,
    /// `DELETE`.
    Delete,
}

impl Operation {
    /// The name in `AdmissionReview` and webhook rules.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// What admission is told about a write besides the objects; who asks is known to the
/// [`Admission`] itself, which is made per request.
#[derive(Clone, Copy, Debug)]
pub struct AdmissionRequest<'a> {
    /// The operation.
    pub operation: Operation,
    /// The resource written.
    pub info: &'a kapi_core::ResourceInfo,
    /// The subresource written (`status`, `scale`), `""` for the object itself.
    pub subresource: &'a str,
    /// The namespace, `None` for cluster-scoped resources.
    pub namespace: Option<&'a str>,
    /// The object's name (empty on a create that generates it).
    pub name: &'a str,
    /// `?dryRun=All`.
    pub dry_run: bool,
}

/// Admission: what every create, update and delete passes after decoding and before it
/// is stored (also on dry runs), knowing what the registry does not, such as who asks.
/// As in kube-apiserver, mutation runs before the strategy prepares and validates the
/// object, validation after it; on a conflict an update runs both again.
#[async_trait::async_trait]
pub trait Admission: Send + Sync {
    /// Mutating admission: may change `obj` (the object to create or the updated one).
    /// `old` is the stored object on update, `None` on create. Not called on delete.
    async fn admit(
        &self,
        request: &AdmissionRequest<'_>,
        obj: &mut serde_json::Value,
        old: Option<&serde_json::Value>,
    ) -> Result<(), crate::status::ApiError>;

    /// Validating admission: refuses the write with an error, or lets it through. `obj`
    /// is `None` on delete, `old` is `None` on create.
    async fn validate(
        &self,
        request: &AdmissionRequest<'_>,
        obj: Option<&serde_json::Value>,
        old: Option<&serde_json::Value>,
    ) -> Result<(), crate::status::ApiError>;

    /// The `Warning` headers admission gave the request so far (taken: a second call
    /// gives only newer ones). None by default.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The audit annotations admission gave the request so far, as (key, value);
    /// taken like [`Admission::warnings`]. None by default.
    fn audit_annotations(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The admission chain a server runs (its plugins, in order): makes the checks of each
/// request, knowing who asks.
pub trait AdmissionChain: Send + Sync {
    /// The checks of a request by `user`.
    fn for_user(
        self: std::sync::Arc<Self>,
        user: kapi_auth::UserInfo,
    ) -> std::sync::Arc<dyn Admission>;
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
    /// Who writes, as `metadata.managedFields` records it: `?fieldManager=`, else the
    /// User-Agent's product as kube-apiserver derives it; empty for the server's own
    /// writes (recorded as `unknown`, kube's word for a nameless manager).
    pub field_manager: String,
    /// `?force=true` on an apply patch: the applier takes the fields other managers own
    /// instead of failing with a conflict.
    pub force: bool,
    /// The write is a server-side apply whose managed fields the apply computed; other
    /// writes have theirs computed from the change they make.
    pub applied: bool,
}

impl WriteOptions {
    /// The options of a write the server makes itself, recorded in `managedFields` as
    /// `manager` (kube's components write as `kube-apiserver` and
    /// `kube-controller-manager`).
    pub fn by(manager: &str) -> Self {
        Self {
            field_manager: manager.to_string(),
            ..Self::default()
        }
    }
}

impl std::fmt::Debug for WriteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteOptions")
            .field("dry_run", &self.dry_run)
            .field("field_validation", &self.field_validation)
            .field("admission", &self.admission.is_some())
            .field("field_manager", &self.field_manager)
            .field("force", &self.force)
            .field("applied", &self.applied)
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
#[derive(Clone, Default)]
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
    /// The request's admission checks, if any.
    pub admission: Option<std::sync::Arc<dyn Admission>>,
    /// The legacy `orphanDependents: false` was given: a delete that has to wait then
    /// answers 202 Accepted (kube-apiserver answers 200 in every other case).
    pub orphan_dependents_false: bool,
}

impl std::fmt::Debug for DeleteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeleteOptions")
            .field("precondition_uid", &self.precondition_uid)
            .field(
                "precondition_resource_version",
                &self.precondition_resource_version,
            )
            .field("propagation", &self.propagation)
            .field("grace_period_seconds", &self.grace_period_seconds)
            .field("dry_run", &self.dry_run)
            .field("admission", &self.admission.is_some())
            .field("orphan_dependents_false", &self.orphan_dependents_false)
            .finish()
    }
}
