//! EndpointSlices. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::discovery_k8s_io::v1::EndpointSlice;

/// The hooks of EndpointSlice.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointSliceHooks;

impl Hooks<EndpointSlice> for EndpointSliceHooks {}
