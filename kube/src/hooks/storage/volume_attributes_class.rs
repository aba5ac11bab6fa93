//! VolumeAttributesClasses, as kube-apiserver's strategy (`pkg/registry/storage/
//! volumeattributesclass/strategy.go`), validation (`ValidateVolumeAttributesClass`,
//! `ValidateVolumeAttributesClassUpdate` in `pkg/apis/storage/validation`) and printer
//! (`printVolumeAttributesClass`) treat them: no defaults, no generation, and a PUT
//! without a `resourceVersion` overwrites.
//!
//! Checks: `driverName` is required and a qualified name once lowercased; `parameters`
//! has at least one and at most 512 entries, no empty key, and at most 256 KiB of keys
//! and values. On update `driverName` and `parameters` may not change.
//!
//! Columns, as `printVolumeAttributesClass`: DriverName and Age.

use std::collections::BTreeMap;

use kapi_core::meta::qualified_name_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};

use crate::generated::storage_k8s_io::v1::VolumeAttributesClass;

/// The hooks of VolumeAttributesClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeAttributesClassHooks;

/// kube's `maxProvisionerParameterLen`: the most parameters.
const MAX_PARAMETERS: usize = 512;
/// kube's `maxProvisionerParameterSize`: the most bytes of parameters.
const MAX_PARAMETER_BYTES: usize = 256 * 1024;

/// kube's `validateProvisioner`, which checks the driver name.
fn driver_name_errors(name: &str) -> ErrorList {
    let path = FieldPath::new("driverName");
    if name.is_empty() {
        return vec![FieldError::required(&path, "")];
    }
    qualified_name_errors(&name.to_lowercase())
        .into_iter()
        .map(|msg| FieldError::invalid(&path, name, msg))
        .collect()
}

/// kube's `validateParameters` with `allowEmpty` false.
fn parameters_errors(params: Option<&BTreeMap<String, String>>) -> ErrorList {
    let path = FieldPath::new("parameters");
    let empty = BTreeMap::new();
    let params = params.unwrap_or(&empty);
    if params.len() > MAX_PARAMETERS {
        return vec![FieldError::too_long(&path, MAX_PARAMETERS as u64)];
    }
    let mut errs = ErrorList::new();
    if params.contains_key("") {
        errs.push(FieldError::invalid(&path, "", "field can not be empty."));
    }
    let size: usize = params.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_PARAMETER_BYTES {
        errs.push(FieldError::too_long(&path, MAX_PARAMETER_BYTES as u64));
    }
    if params.is_empty() {
        errs.push(FieldError::required(
            &path,
            "must contain at least one key/value pair",
        ));
    }
    errs
}

/// `ValidateVolumeAttributesClass` after the metadata checks.
fn validate_class(class: &VolumeAttributesClass) -> ErrorList {
    let mut errs = driver_name_errors(&class.driver_name);
    errs.extend(parameters_errors(class.parameters.as_ref()));
    errs
}

impl Hooks<VolumeAttributesClass> for VolumeAttributesClassHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, class: &VolumeAttributesClass) -> ErrorList {
        validate_class(class)
    }

    /// kube runs the create checks before and inside its update checks; its message
    /// names each once, and so does this one.
    fn validate_update(
        &self,
        new: &VolumeAttributesClass,
        old: &VolumeAttributesClass,
    ) -> ErrorList {
        let mut errs = validate_class(new);
        if new.driver_name != old.driver_name {
            errs.push(FieldError::forbidden(
                &FieldPath::new("driverName"),
                "updates to driverName are forbidden.",
            ));
        }
        // kube compares the maps with reflect.DeepEqual, where nil and empty differ; an
        // empty map is invalid anyway.
        if new.parameters != old.parameters {
            errs.push(FieldError::forbidden(
                &FieldPath::new("parameters"),
                "updates to parameters are forbidden.",
            ));
        }
        errs
    }
}
