//! CSIDrivers, as kube-apiserver's strategy (`pkg/registry/storage/csidriver/
//! strategy.go`), v1 defaults (`SetDefaults_CSIDriver` in `pkg/apis/storage/v1/
//! defaults.go`), validation (`ValidateCSIDriver`, `ValidateCSIDriverUpdate` in
//! `pkg/apis/storage/validation`) and printer (`printCSIDriver`) treat them.
//!
//! Defaults: `attachRequired` true; `podInfoOnMount`, `storageCapacity`,
//! `requiresRepublish` and `seLinuxMount` false (its gate, SELinuxMountReadWriteOncePod,
//! is on in 1.35); `fsGroupPolicy` `ReadWriteOnceWithFSType`; `volumeLifecycleModes`
//! `[Persistent]` when empty.
//!
//! Generation: none on create; each update that changes the spec bumps it, from 0.
//! A PUT needs a `resourceVersion`.
//!
//! Checks: `fsGroupPolicy` is `File`, `None` or `ReadWriteOnceWithFSType`; each lifecycle
//! mode is `Persistent` or `Ephemeral`; token requests have distinct audiences and an
//! `expirationSeconds` from 10 minutes to 2^32 seconds; `nodeAllocatableUpdatePeriodSeconds`
//! is at least 10; `serviceAccountTokenInSecrets` is only set with token requests. On
//! update `attachRequired` (at kube's path `spec.attachedRequired`) and
//! `volumeLifecycleModes` may not change; the rest of the spec may.
//!
//! Columns, as `printCSIDriver`: AttachRequired, PodInfoOnMount, StorageCapacity,
//! TokenRequests (the audiences, `<unset>` without any), RequiresRepublish, Modes
//! (comma-joined, `<none>` when empty) and Age; an unset boolean shows kube's default.
//!
//! Deliberate differences from kube-apiserver: no warning when token requests are given
//! without `serviceAccountTokenInSecrets` (kapi's hooks return no warnings); the
//! required-field checks on the defaulted booleans are left out, as the defaults always
//! set them first.

use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::validation::immutable;
use crate::generated::api::storage::v1::{CSIDriverSpec, TokenRequest};
use crate::generated::storage_k8s_io::v1::CSIDriver;
use crate::hooks::strings;

/// The hooks of CSIDriver.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsiDriverHooks;

/// The fsGroup policy when none is given.
const FS_GROUP_DEFAULT: &str = "ReadWriteOnceWithFSType";
/// The fsGroup policies, sorted as kube's `sets.String.List()` gives them.
const FS_GROUP_POLICIES: &[&str] = &["File", "None", FS_GROUP_DEFAULT];
/// The lifecycle mode when none is given.
const MODE_PERSISTENT: &str = "Persistent";
/// The lifecycle modes, in kube's order.
const LIFECYCLE_MODES: &[&str] = &[MODE_PERSISTENT, "Ephemeral"];
/// The shortest token lifetime a driver may ask for: 10 minutes.
const MIN_TOKEN_SECONDS: i64 = 600;
/// The longest token lifetime a driver may ask for.
const MAX_TOKEN_SECONDS: i64 = 1 << 32;
/// The shortest `nodeAllocatableUpdatePeriodSeconds`.
const MIN_ALLOCATABLE_PERIOD: i64 = 10;

/// `validateTokenRequests`: distinct audiences (one may be empty) and bounded lifetimes.
fn token_request_errors(requests: &[TokenRequest], path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut audiences = std::collections::HashSet::new();
    for (i, request) in requests.iter().enumerate() {
        let at = path.index(i);
        if !audiences.insert(request.audience.as_str()) {
            errs.push(FieldError::duplicate(
                &at.child("audience"),
                request.audience.as_str(),
            ));
            continue;
        }
        let Some(seconds) = request.expiration_seconds else {
            continue;
        };
        let seconds_path = at.child("expirationSeconds");
        if seconds < MIN_TOKEN_SECONDS {
            errs.push(FieldError::invalid(
                &seconds_path,
                seconds,
                "may not specify a duration less than 10 minutes",
            ));
        }
        if seconds > MAX_TOKEN_SECONDS {
            errs.push(FieldError::invalid(
                &seconds_path,
                seconds,
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    errs
}

/// `validateCSIDriverSpec`, after the defaults.
fn spec_errors(spec: &CSIDriverSpec) -> ErrorList {
    let path = FieldPath::new("spec");
    let mut errs = ErrorList::new();
    if let Some(policy) = spec.fs_group_policy.as_deref() {
        if !FS_GROUP_POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported(
                &path.child("fsGroupPolicy"),
                policy,
                &strings(FS_GROUP_POLICIES),
            ));
        }
    }
    let requests = spec.token_requests.as_deref().unwrap_or_default();
    errs.extend(token_request_errors(requests, &path.child("tokenRequests")));
    for mode in spec.volume_lifecycle_modes.iter().flatten() {
        if !LIFECYCLE_MODES.contains(&mode.as_str()) {
            // kube reports a bad mode at the list, not at its index.
            errs.push(FieldError::not_supported(
                &path.child("volumeLifecycleModes"),
                mode.as_str(),
                &strings(LIFECYCLE_MODES),
            ));
        }
    }
    if let Some(period) = spec
        .node_allocatable_update_period_seconds
        .filter(|p| *p < MIN_ALLOCATABLE_PERIOD)
    {
        errs.push(FieldError::invalid(
            &path.child("nodeAllocatableUpdatePeriodSeconds"),
            period,
            "must be greater than or equal to 10 seconds",
        ));
    }
    if let Some(in_secrets) = spec.service_account_token_in_secrets {
        if requests.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("serviceAccountTokenInSecrets"),
                in_secrets,
                "serviceAccountTokenInSecrets is set but no tokenRequests are specified",
            ));
        }
    }
    errs
}

/// `printCSIDriver`'s TokenRequests cell.
fn token_requests_cell(spec: &CSIDriverSpec) -> String {
    match spec.token_requests.as_deref() {
        None | Some([]) => "<unset>".into(),
        Some(requests) => requests
            .iter()
            .map(|r| r.audience.as_str())
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// `printCSIDriver`'s Modes cell.
fn modes_cell(spec: &CSIDriverSpec) -> String {
    match spec.volume_lifecycle_modes.as_deref() {
        None | Some([]) => "<none>".into(),
        Some(modes) => modes.join(","),
    }
}

impl Hooks<CSIDriver> for CsiDriverHooks {
    /// kube's `SetDefaults_CSIDriver`.
    fn apply_defaults(&self, driver: &mut CSIDriver) {
        let spec = &mut driver.spec;
        spec.attach_required.get_or_insert(true);
        spec.pod_info_on_mount.get_or_insert(false);
        spec.storage_capacity.get_or_insert(false);
        spec.fs_group_policy
            .get_or_insert_with(|| FS_GROUP_DEFAULT.into());
        if spec
            .volume_lifecycle_modes
            .as_ref()
            .is_none_or(Vec::is_empty)
        {
            spec.volume_lifecycle_modes = Some(vec![MODE_PERSISTENT.into()]);
        }
        spec.requires_republish.get_or_insert(false);
        spec.se_linux_mount.get_or_insert(false);
    }

    fn prepare_for_create(&self, driver: &mut CSIDriver) {
        // kube's strategy sets no generation on create.
        driver.metadata.generation = None;
    }

    fn prepare_for_update(&self, new: &mut CSIDriver, old: &CSIDriver) {
        // Compared after the defaults, so that leaving a defaulted field out changes
        // nothing; kube counts from the stored generation, none at first.
        new.metadata.generation = if new.spec == old.spec {
            old.metadata.generation
        } else {
            Some(old.metadata.generation.unwrap_or(0) + 1)
        };
    }

    fn validate(&self, driver: &CSIDriver) -> ErrorList {
        spec_errors(&driver.spec)
    }

    fn validate_update(&self, new: &CSIDriver, old: &CSIDriver) -> ErrorList {
        let mut errs = spec_errors(&new.spec);
        let path = FieldPath::new("spec");
        if new.spec.attach_required != old.spec.attach_required {
            // kube's path says "attached", not "attach".
            errs.push(immutable(
                &path.child("attachedRequired"),
                &new.spec.attach_required,
            ));
        }
        if new.spec.volume_lifecycle_modes != old.spec.volume_lifecycle_modes {
            errs.push(immutable(
                &path.child("volumeLifecycleModes"),
                &new.spec.volume_lifecycle_modes,
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, driver: &CSIDriver) -> Option<Value> {
        let spec = &driver.spec;
        let cell = match column {
            "AttachRequired" => Value::Bool(spec.attach_required.unwrap_or(true)),
            "PodInfoOnMount" => Value::Bool(spec.pod_info_on_mount.unwrap_or(false)),
            "StorageCapacity" => Value::Bool(spec.storage_capacity.unwrap_or(false)),
            "TokenRequests" => Value::String(token_requests_cell(spec)),
            "RequiresRepublish" => Value::Bool(spec.requires_republish.unwrap_or(false)),
            "Modes" => Value::String(modes_cell(spec)),
            _ => return None,
        };
        Some(cell)
    }
}
