//! PriorityLevelConfigurations. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::flowcontrol_apiserver_k8s_io::v1::PriorityLevelConfiguration;

/// The hooks of PriorityLevelConfiguration.
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityLevelConfigurationHooks;

impl Hooks<PriorityLevelConfiguration> for PriorityLevelConfigurationHooks {}
