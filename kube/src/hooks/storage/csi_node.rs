//! CSINodes. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::storage_k8s_io::v1::CSINode;

/// The hooks of CSINode.
#[derive(Clone, Copy, Debug, Default)]
pub struct CsiNodeHooks;

impl Hooks<CSINode> for CsiNodeHooks {}
