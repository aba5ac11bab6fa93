//! CSIStorageCapacities, as kube-apiserver's strategy (`pkg/registry/storage/
//! csistoragecapacity/strategy.go`), validation (`ValidateCSIStorageCapacity`,
//! `ValidateCSIStorageCapacityUpdate` in `pkg/apis/storage/validation`) and printer
//! (`printCSIStorageCapacity`) treat them: namespaced, no defaults, no generation, and a
//! PUT needs a `resourceVersion`.
//!
//! Checks: `nodeTopology` is a valid label selector (`ValidateLabelSelector`: label
//! keys and values, operators, values required by `In`/`NotIn` and forbidden by
//! `Exists`/`DoesNotExist`); `storageClassName` is a DNS-1123 subdomain; `capacity` is
//! not negative. On update `nodeTopology` and `storageClassName` may not change; a
//! selector whose values were already invalid keeps being accepted, as kube's strategy
//! allows.
//!
//! Columns, as `printCSIStorageCapacity`: StorageClassName, Capacity (`<unset>` without
//! one) and Age.
//!
//! Deliberate differences from kube-apiserver: a quantity is shown as sent, not in
//! canonical form, in the Capacity cell and in errors; a changed selector is shown as
//! JSON in the error; kube's warnings about the selector are not given.

use kapi_core::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement,
};
use kapi_core::meta::{
    dns1123_subdomain_errors, label_value_errors, qualified_name_errors, validate_labels,
};
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::validation::immutable;
use crate::generated::storage_k8s_io::v1::CSIStorageCapacity;
use crate::hooks::node_labels::node_selector_warnings;
use crate::hooks::quantity::quantity_value;

/// The hooks of CSIStorageCapacity.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsiStorageCapacityHooks;

/// `ValidateLabelSelectorRequirement`; `any_values` is kube's
/// `AllowInvalidLabelValueInSelector`.
fn requirement_errors(
    req: &LabelSelectorRequirement,
    any_values: bool,
    path: &FieldPath,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let values = req.values.as_deref().unwrap_or_default();
    let values_path = path.child("values");
    match req.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
            &values_path,
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
            &values_path,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        other => errs.push(FieldError::invalid(
            &path.child("operator"),
            other,
            "not a valid selector operator",
        )),
    }
    for msg in qualified_name_errors(&req.key) {
        errs.push(FieldError::invalid(
            &path.child("key"),
            req.key.as_str(),
            msg,
        ));
    }
    if !any_values {
        for (i, value) in values.iter().enumerate() {
            for msg in label_value_errors(value) {
                errs.push(FieldError::invalid(
                    &values_path.index(i),
                    value.as_str(),
                    msg,
                ));
            }
        }
    }
    errs
}

/// kube's `ValidateLabelSelector`.
fn selector_errors(selector: Option<&LabelSelector>, any_values: bool) -> ErrorList {
    let Some(selector) = selector else {
        return ErrorList::new();
    };
    let path = FieldPath::new("nodeTopology");
    let labels = selector
        .match_labels
        .as_ref()
        .and_then(|m| serde_json::to_value(m).ok());
    let mut errs = validate_labels(labels.as_ref(), &path.child("matchLabels"));
    let exprs_path = path.child("matchExpressions");
    for (i, req) in selector.match_expressions.iter().flatten().enumerate() {
        errs.extend(requirement_errors(req, any_values, &exprs_path.index(i)));
    }
    errs
}

/// `ValidateCSIStorageCapacity` after the metadata checks.
fn validate_capacity(capacity: &CSIStorageCapacity, any_values: bool) -> ErrorList {
    let mut errs = selector_errors(capacity.node_topology.as_ref(), any_values);
    let class = capacity.storage_class_name.as_str();
    for msg in dns1123_subdomain_errors(class) {
        errs.push(FieldError::invalid(
            &FieldPath::new("storageClassName"),
            class,
            msg,
        ));
    }
    if let Some(q) = &capacity.capacity {
        if quantity_value(q).is_some_and(|v| v < 0.0) {
            errs.push(FieldError::invalid(
                &FieldPath::new("capacity"),
                q.0.as_str(),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

impl Hooks<CSIStorageCapacity> for CsiStorageCapacityHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    /// kube's `WarningsOnCreate`: deprecated node labels in `nodeTopology`.
    fn warnings_on_create(&self, capacity: &CSIStorageCapacity) -> Vec<String> {
        node_selector_warnings(
            capacity.node_topology.as_ref(),
            &FieldPath::new("nodeTopology"),
        )
    }

    fn warnings_on_update(
        &self,
        new: &CSIStorageCapacity,
        _old: &CSIStorageCapacity,
    ) -> Vec<String> {
        self.warnings_on_create(new)
    }

    fn validate(&self, capacity: &CSIStorageCapacity) -> ErrorList {
        validate_capacity(capacity, false)
    }

    fn validate_update(&self, new: &CSIStorageCapacity, old: &CSIStorageCapacity) -> ErrorList {
        // An object stored with values kube now refuses may still be updated.
        let any_values = !selector_errors(old.node_topology.as_ref(), false).is_empty();
        let mut errs = validate_capacity(new, any_values);
        if new.node_topology != old.node_topology {
            errs.push(immutable(
                &FieldPath::new("nodeTopology"),
                &new.node_topology,
            ));
        }
        if new.storage_class_name != old.storage_class_name {
            errs.push(immutable(
                &FieldPath::new("storageClassName"),
                &new.storage_class_name,
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, capacity: &CSIStorageCapacity) -> Option<Value> {
        match column {
            "Capacity" => Some(Value::String(
                capacity
                    .capacity
                    .as_ref()
                    .map_or_else(|| "<unset>".into(), |q| q.0.clone()),
            )),
            _ => None,
        }
    }
}
