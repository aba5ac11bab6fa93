//! Services and Endpoints, as kube-apiserver's strategies for them behave.

use kapi_core::Hooks;

use crate::generated::core::v1::Endpoints;
use crate::generated::core::v1::Service;

/// The hooks of Service.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServiceHooks;

impl Hooks<Service> for ServiceHooks {}

/// The hooks of Endpoints.
#[derive(Clone, Copy, Debug, Default)]
pub struct EndpointsHooks;

impl Hooks<Endpoints> for EndpointsHooks {}
