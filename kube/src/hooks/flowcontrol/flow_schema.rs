//! FlowSchemas. (Stub: to be filled in with kube's strategy.)

use kapi_core::Hooks;

use crate::generated::flowcontrol_apiserver_k8s_io::v1::FlowSchema;

/// The hooks of FlowSchema.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowSchemaHooks;

impl Hooks<FlowSchema> for FlowSchemaHooks {}
