//! CSIStorageCapacitys. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::storage_k8s_io::v1::CSIStorageCapacity;

/// The hooks of CSIStorageCapacity.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsiStorageCapacityHooks;

impl Hooks<CSIStorageCapacity> for CsiStorageCapacityHooks {}
