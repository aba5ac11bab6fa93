//! StorageClasses, as kube-apiserver's strategy, v1 defaults and validation treat them:
//! no generation; `reclaimPolicy` defaults to `Delete` and `volumeBindingMode` to
//! `Immediate`; provisioner, parameters, reclaim policy and binding mode may not change.
//!
//! Deliberate differences from kube-apiserver:
//! - The name column has no `(default)` suffix: computed cells cannot change the Name
//!   column.

use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::storage_k8s_io::v1::StorageClass;
use crate::hooks::node_labels::storage_class_warnings;
use crate::hooks::strings;

/// The hooks of StorageClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct StorageClassHooks;

/// `ValidateStorageClass`, as far as kapi goes.
fn validate_sc(sc: &StorageClass) -> ErrorList {
    let mut errs = ErrorList::new();
    let path = FieldPath::new("provisioner");
    if sc.provisioner.is_empty() {
        errs.push(FieldError::required(&path, ""));
    } else {
        if sc.provisioner.len() > 63 {
            errs.push(FieldError::too_long(&path, 63));
        }
        for msg in qualified_name_errors(&sc.provisioner.to_lowercase()) {
            errs.push(FieldError::invalid(&path, sc.provisioner.as_str(), msg));
        }
    }
    match sc.reclaim_policy.as_deref() {
        None | Some("Delete" | "Retain") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &FieldPath::new("reclaimPolicy"),
            other,
            &strings(&["Delete", "Retain"]),
        )),
    }
    match sc.volume_binding_mode.as_deref() {
        None => errs.push(FieldError::required(
            &FieldPath::new("volumeBindingMode"),
            "",
        )),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &FieldPath::new("volumeBindingMode"),
            other,
            &strings(&["Immediate", "WaitForFirstConsumer"]),
        )),
    }
    errs
}

impl Hooks<StorageClass> for StorageClassHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    /// kube's `WarningsOnCreate`: deprecated node labels in `allowedTopologies`.
    fn warnings_on_create(&self, sc: &StorageClass) -> Vec<String> {
        storage_class_warnings(sc.allowed_topologies.as_deref())
    }

    fn warnings_on_update(&self, new: &StorageClass, _old: &StorageClass) -> Vec<String> {
        self.warnings_on_create(new)
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn apply_defaults(&self, sc: &mut StorageClass) {
        if sc.reclaim_policy.is_none() {
            sc.reclaim_policy = Some("Delete".into());
        }
        if sc.volume_binding_mode.is_none() {
            sc.volume_binding_mode = Some("Immediate".into());
        }
    }

    fn validate(&self, sc: &StorageClass) -> ErrorList {
        validate_sc(sc)
    }

    fn validate_update(&self, new: &StorageClass, old: &StorageClass) -> ErrorList {
        let mut errs = validate_sc(new);
        if new.parameters != old.parameters {
            errs.push(FieldError::forbidden(
                &FieldPath::new("parameters"),
                "updates to parameters are forbidden.",
            ));
        }
        if new.provisioner != old.provisioner {
            errs.push(FieldError::forbidden(
                &FieldPath::new("provisioner"),
                "updates to provisioner are forbidden.",
            ));
        }
        if new.reclaim_policy != old.reclaim_policy {
            errs.push(FieldError::forbidden(
                &FieldPath::new("reclaimPolicy"),
                "updates to reclaimPolicy are forbidden.",
            ));
        }
        if new.volume_binding_mode != old.volume_binding_mode {
            errs.push(FieldError::invalid(
                &FieldPath::new("volumeBindingMode"),
                new.volume_binding_mode.clone().unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, sc: &StorageClass) -> Option<Value> {
        match column {
            "AllowVolumeExpansion" => Some(Value::Bool(sc.allow_volume_expansion.unwrap_or(false))),
            _ => None,
        }
    }
}
