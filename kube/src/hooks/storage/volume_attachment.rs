//! VolumeAttachments. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::storage_k8s_io::v1::VolumeAttachment;

/// The hooks of VolumeAttachment.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeAttachmentHooks;

impl Hooks<VolumeAttachment> for VolumeAttachmentHooks {}
