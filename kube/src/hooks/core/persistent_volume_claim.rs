//! PersistentVolumeClaims, as kube-apiserver's strategy, v1 defaults and validation
//! treat them, and as its printer shows them: no generation; `volumeMode` defaults to
//! `Filesystem`; a new claim's status is `phase: Pending`; it needs access modes and a
//! positive `resources.requests.storage`; after create its spec is immutable except
//! `volumeName` while unset and the storage request of a bound claim, which may not
//! shrink.
//!
//! Deliberate differences from kube-apiserver:
//! - Data sources and selectors are not validated.
//! - `volumeAttributesClassName` changes on bound claims are refused like any other spec
//!   change (kube allows them when its VolumeAttributesClass feature is on).

use kapi_core::__private::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::api::core::v1::PersistentVolumeClaimStatus;
use crate::generated::core::v1::PersistentVolumeClaim;

use super::persistent_volume::{
    access_modes_string, validate_access_modes, validate_class_name, validate_volume_mode,
};
use crate::hooks::quantity::quantity_value;

/// `ValidatePersistentVolumeClaimSpec`, as far as kapi goes.
fn validate_pvc(pvc: &PersistentVolumeClaim) -> ErrorList {
    let spec_path = FieldPath::new("spec");
    let spec = pvc.spec.clone().unwrap_or_default();
    let mut errs = validate_access_modes(
        spec.access_modes.as_ref(),
        &spec_path.child("accessModes"),
        "at least 1 access mode is required",
    );
    let storage = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"));
    let storage_path = spec_path.child("resources").key("storage");
    match storage {
        None => errs.push(FieldError::required(&storage_path, "")),
        Some(q) => {
            if quantity_value(q).is_some_and(|v| v <= 0.0) {
                errs.push(FieldError::invalid(
                    &storage_path,
                    q.0.as_str(),
                    "must be greater than zero",
                ));
            }
        }
    }
    errs.extend(validate_volume_mode(
        spec.volume_mode.as_deref(),
        &spec_path.child("volumeMode"),
    ));
    errs.extend(validate_class_name(
        spec.storage_class_name.as_deref(),
        &spec_path.child("storageClassName"),
    ));
    errs
}

fn requested_storage(pvc: &PersistentVolumeClaim) -> Option<&Quantity> {
    pvc.spec
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
}

/// `ValidatePersistentVolumeClaimUpdate`: what may change in a claim's spec.
fn validate_pvc_update(new: &PersistentVolumeClaim, old: &PersistentVolumeClaim) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut new_spec = new.spec.clone().unwrap_or_default();
    let mut old_spec = old.spec.clone().unwrap_or_default();
    if old_spec.volume_name.as_deref().unwrap_or("").is_empty() {
        old_spec.volume_name = new_spec.volume_name.clone();
    }
    let bound = new
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_some_and(|p| p == "Bound");
    if bound {
        let old_storage = requested_storage(old).cloned();
        if let Some(requests) = new_spec
            .resources
            .as_mut()
            .and_then(|r| r.requests.as_mut())
        {
            match old_storage {
                Some(q) => {
                    requests.insert("storage".into(), q);
                }
                None => {
                    requests.remove("storage");
                }
            }
        }
    }
    if new_spec != old_spec {
        errs.push(FieldError::forbidden(
            &FieldPath::new("spec"),
            "spec is immutable after creation except resources.requests and \
             volumeAttributesClassName for bound claims",
        ));
    }
    let (new_size, old_size) = (
        requested_storage(new).and_then(quantity_value),
        requested_storage(old).and_then(quantity_value),
    );
    if let (Some(n), Some(o)) = (new_size, old_size) {
        if n < o {
            errs.push(FieldError::forbidden(
                &FieldPath::new("spec.resources.requests.storage"),
                "field can not be less than previous value",
            ));
        }
    }
    errs
}

/// The hooks of PersistentVolumeClaim.
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeClaimHooks;

impl Hooks<PersistentVolumeClaim> for PersistentVolumeClaimHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, pvc: &mut PersistentVolumeClaim) {
        let spec = pvc.spec.get_or_insert_with(Default::default);
        if spec.volume_mode.is_none() {
            spec.volume_mode = Some("Filesystem".into());
        }
    }

    fn prepare_for_create(&self, pvc: &mut PersistentVolumeClaim) {
        pvc.status = Some(PersistentVolumeClaimStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
    }

    fn validate(&self, pvc: &PersistentVolumeClaim) -> ErrorList {
        validate_pvc(pvc)
    }

    fn validate_update(
        &self,
        new: &PersistentVolumeClaim,
        old: &PersistentVolumeClaim,
    ) -> ErrorList {
        let mut errs = validate_pvc(new);
        errs.extend(validate_pvc_update(new, old));
        errs
    }

    fn table_cell(&self, column: &str, pvc: &PersistentVolumeClaim) -> Option<Value> {
        let spec = pvc.spec.clone().unwrap_or_default();
        let status = pvc.status.clone().unwrap_or_default();
        let bound = !spec.volume_name.as_deref().unwrap_or("").is_empty();
        let cell = match column {
            "Status" => {
                if pvc.metadata.deletion_timestamp.is_some() {
                    "Terminating".into()
                } else {
                    status.phase.unwrap_or_default()
                }
            }
            "Volume" => spec.volume_name.unwrap_or_default(),
            "Capacity" if bound => status
                .capacity
                .as_ref()
                .and_then(|c| c.get("storage"))
                .map(|q| q.0.clone())
                .unwrap_or_else(|| "0".into()),
            "Capacity" => String::new(),
            "Access Modes" if bound => {
                access_modes_string(status.access_modes.as_deref().unwrap_or(&[]))
            }
            "Access Modes" => String::new(),
            "StorageClass" => spec.storage_class_name.unwrap_or_default(),
            "VolumeAttributesClass" => status
                .current_volume_attributes_class_name
                .unwrap_or_else(|| "<unset>".into()),
            "VolumeMode" => spec.volume_mode.unwrap_or_else(|| "<unset>".into()),
            _ => return None,
        };
        Some(Value::String(cell))
    }
}
