//! CSIDrivers. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::storage_k8s_io::v1::CSIDriver;

/// The hooks of CSIDriver.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsiDriverHooks;

impl Hooks<CSIDriver> for CsiDriverHooks {}
