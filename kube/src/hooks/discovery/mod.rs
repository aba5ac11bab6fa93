//! The discovery.k8s.io API group: EndpointSlices ([`endpoint_slice`]).

mod endpoint_slice;

pub use endpoint_slice::EndpointSliceHooks;
