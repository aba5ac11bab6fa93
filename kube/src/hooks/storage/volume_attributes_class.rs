//! VolumeAttributesClasss. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::storage_k8s_io::v1::VolumeAttributesClass;

/// The hooks of VolumeAttributesClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeAttributesClassHooks;

impl Hooks<VolumeAttributesClass> for VolumeAttributesClassHooks {}
