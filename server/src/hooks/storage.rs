//! PersistentVolumes, PersistentVolumeClaims and StorageClasses.

use kapi_core::Hooks;

use crate::generated::core::v1::PersistentVolume;
use crate::generated::core::v1::PersistentVolumeClaim;
use crate::generated::storage_k8s_io::v1::StorageClass;

/// The hooks of PersistentVolume.
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeHooks;

impl Hooks<PersistentVolume> for PersistentVolumeHooks {}

/// The hooks of PersistentVolumeClaim.
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentVolumeClaimHooks;

impl Hooks<PersistentVolumeClaim> for PersistentVolumeClaimHooks {}

/// The hooks of StorageClass.
#[derive(Clone, Copy, Debug, Default)]
pub struct StorageClassHooks;

impl Hooks<StorageClass> for StorageClassHooks {}
