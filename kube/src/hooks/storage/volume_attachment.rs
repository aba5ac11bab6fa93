//! VolumeAttachments, as kube-apiserver's strategies (`pkg/registry/storage/
//! volumeattachment/strategy.go`, the main one and the status one), validation
//! (`ValidateVolumeAttachment`, `ValidateVolumeAttachmentV1`,
//! `ValidateVolumeAttachmentUpdate` in `pkg/apis/storage/validation`) and printer
//! (`printVolumeAttachment`) treat them: no generation, a PUT needs a `resourceVersion`,
//! and the status changes through `/status` only. A new attachment's status is
//! `{attached: false}`, the empty status kube writes.
//!
//! Checks: `spec.attacher` is a CSI driver name (required, at most 63 bytes, a DNS-1123
//! subdomain); `spec.source` has exactly one of `persistentVolumeName` (a non-empty
//! DNS-1123 subdomain) and `inlineVolumeSpec`; `spec.nodeName` is a DNS-1123 subdomain;
//! in the status, `attachmentMetadata` is at most 256 KiB, and each of `attachError` and
//! `detachError` has a message of at most 1024 bytes and a non-negative `errorCode`. The
//! spec may not change.
//!
//! Columns, as `printVolumeAttachment`: Attacher, PV (empty for an inline volume), Node,
//! Attached and Age.
//!
//! Deliberate differences from kube-apiserver: an `inlineVolumeSpec` is checked by the
//! schema only, not by kube's PersistentVolume spec rules; a changed spec is shown as
//! JSON in the error, where kube prints the Go struct.

use kapi_core::meta::dns1123_subdomain_errors;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::validation::{csi_driver_name_errors, dedup, immutable};
use crate::generated::api::storage::v1::{
    VolumeAttachmentSource, VolumeAttachmentStatus, VolumeError,
};
use crate::generated::storage_k8s_io::v1::VolumeAttachment;

/// The hooks of VolumeAttachment.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeAttachmentHooks;

/// The most bytes of `attachmentMetadata`, keys and values.
const MAX_METADATA_BYTES: usize = 256 * 1024;
/// The longest error message.
const MAX_ERROR_MESSAGE_BYTES: usize = 1024;
/// Why a source is refused.
const ONE_SOURCE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

/// `validateVolumeAttachmentSource`.
fn source_errors(source: &VolumeAttachmentSource, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    match (&source.persistent_volume_name, &source.inline_volume_spec) {
        (None, None) => errs.push(FieldError::required(path, ONE_SOURCE)),
        (Some(_), Some(_)) => errs.push(FieldError::forbidden(path, ONE_SOURCE)),
        (Some(pv), None) if pv.is_empty() => errs.push(FieldError::required(
            &path.child("persistentVolumeName"),
            "must specify non empty persistentVolumeName",
        )),
        _ => {}
    }
    errs
}

/// `validateVolumeError`. kube measures the message against 1024 bytes but names its
/// metadata limit in the error, and so does kapi.
fn volume_error_errors(error: Option<&VolumeError>, path: &FieldPath) -> ErrorList {
    let mut errs = ErrorList::new();
    let Some(error) = error else {
        return errs;
    };
    if error
        .message
        .as_ref()
        .is_some_and(|m| m.len() > MAX_ERROR_MESSAGE_BYTES)
    {
        errs.push(FieldError::too_long(
            &path.child("message"),
            MAX_METADATA_BYTES as u64,
        ));
    }
    if let Some(code) = error.error_code.filter(|c| *c < 0) {
        errs.push(FieldError::invalid(
            &path.child("errorCode"),
            code,
            format!("must be between 0 and {}, inclusive", i32::MAX),
        ));
    }
    errs
}

/// `validateVolumeAttachmentStatus`.
fn status_errors(status: &VolumeAttachmentStatus) -> ErrorList {
    let path = FieldPath::new("status");
    let mut errs = ErrorList::new();
    let size: usize = status
        .attachment_metadata
        .iter()
        .flatten()
        .map(|(k, v)| k.len() + v.len())
        .sum();
    if size > MAX_METADATA_BYTES {
        errs.push(FieldError::too_long(
            &path.child("attachmentMetadata"),
            MAX_METADATA_BYTES as u64,
        ));
    }
    errs.extend(volume_error_errors(
        status.attach_error.as_ref(),
        &path.child("attachError"),
    ));
    errs.extend(volume_error_errors(
        status.detach_error.as_ref(),
        &path.child("detachError"),
    ));
    errs
}

/// `ValidateVolumeAttachment`, after the metadata checks.
fn validate_attachment(va: &VolumeAttachment) -> ErrorList {
    let spec = FieldPath::new("spec");
    let mut errs = ErrorList::new();
    if va.spec.attacher.is_empty() {
        errs.push(FieldError::required(&spec.child("attacher"), ""));
    }
    errs.extend(source_errors(&va.spec.source, &spec.child("source")));
    let node = va.spec.node_name.as_str();
    for msg in dns1123_subdomain_errors(node) {
        errs.push(FieldError::invalid(&spec.child("nodeName"), node, msg));
    }
    if let Some(status) = &va.status {
        errs.extend(status_errors(status));
    }
    errs
}

/// `ValidateVolumeAttachmentV1`: the stricter checks of v1 attachments.
fn v1_errors(va: &VolumeAttachment) -> ErrorList {
    let spec = FieldPath::new("spec");
    let mut errs = csi_driver_name_errors(&va.spec.attacher, &spec.child("attacher"));
    if let Some(pv) = &va.spec.source.persistent_volume_name {
        let path = spec.child("source").child("persistentVolumeName");
        for msg in dns1123_subdomain_errors(pv) {
            errs.push(FieldError::invalid(&path, pv.as_str(), msg));
        }
    }
    errs
}

impl Hooks<VolumeAttachment> for VolumeAttachmentHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, va: &mut VolumeAttachment) {
        // kube resets the status to its empty struct, which reads `attached: false`.
        va.status = Some(VolumeAttachmentStatus {
            attach_error: None,
            attached: false,
            attachment_metadata: None,
            detach_error: None,
        });
    }

    fn validate(&self, va: &VolumeAttachment) -> ErrorList {
        let mut errs = validate_attachment(va);
        errs.extend(v1_errors(va));
        dedup(errs)
    }

    /// Runs for PUTs and PATCHes of the object and of `/status` alike, as kube's status
    /// strategy validates as the main one does.
    fn validate_update(&self, new: &VolumeAttachment, old: &VolumeAttachment) -> ErrorList {
        let mut errs = validate_attachment(new);
        if new.spec != old.spec {
            errs.push(immutable(&FieldPath::new("spec"), &new.spec));
        }
        dedup(errs)
    }

    fn table_cell(&self, column: &str, va: &VolumeAttachment) -> Option<Value> {
        match column {
            "PV" => Some(Value::String(
                va.spec
                    .source
                    .persistent_volume_name
                    .clone()
                    .unwrap_or_default(),
            )),
            "Attached" => Some(Value::Bool(va.status.as_ref().is_some_and(|s| s.attached))),
            _ => None,
        }
    }
}
