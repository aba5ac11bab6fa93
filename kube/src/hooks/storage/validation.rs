//! Checks the CSI kinds of storage.k8s.io share: kube's `ValidateCSIDriverName`
//! (`pkg/apis/core/validation`), which names a driver in a VolumeAttachment and a
//! CSINode; `ValidateImmutableField`'s error; and the de-duplication kube's error
//! aggregate does when one field fails the same check twice.
//!
//! Deliberate difference from kube-apiserver: an immutable field's value is shown as
//! JSON, where kube prints a Go struct or slice with `%#v`.

use std::collections::HashSet;

use kapi_core::meta::dns1123_subdomain_errors;
use kapi_core::{ErrorList, FieldError, FieldPath};
use serde::Serialize;
use serde_json::Value;

/// The longest CSI driver name kube accepts.
const MAX_CSI_DRIVER_NAME_LEN: u64 = 63;

/// kube's `ValidateCSIDriverName`: required, at most 63 bytes, and a DNS-1123 subdomain
/// once lowercased (the message quotes the name as given).
pub(super) fn csi_driver_name_errors(name: &str, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    if name.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    if name.len() as u64 > MAX_CSI_DRIVER_NAME_LEN {
        errs.push(FieldError::too_long(path, MAX_CSI_DRIVER_NAME_LEN));
    }
    for msg in dns1123_subdomain_errors(&name.to_lowercase()) {
        errs.push(FieldError::invalid(path, name, msg));
    }
    errs
}

/// `ValidateImmutableField`'s error when `value` (the new one) changed.
pub(super) fn immutable(path: &FieldPath, value: &impl Serialize) -> FieldError {
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    FieldError::invalid(path, value, "field is immutable")
}

/// `errs` without repeats: kube's aggregate message names each distinct error once, and
/// its strategies run some checks twice (a VolumeAttachment's attacher is required by
/// two of them).
pub(super) fn dedup(errs: ErrorList) -> ErrorList {
    let mut seen = HashSet::new();
    errs.into_iter()
        .filter(|e| seen.insert(e.to_string()))
        .collect()
}
