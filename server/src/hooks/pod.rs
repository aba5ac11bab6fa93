//! Pods and pod templates, as kube-apiserver's pod strategies treat them.

use kapi_core::Hooks;

use crate::generated::core::v1::Pod;
use crate::generated::core::v1::PodTemplate;

/// The hooks of Pod.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodHooks;

impl Hooks<Pod> for PodHooks {
    fn create_on_subresource(
        &self,
        sub: &str,
        body: &serde_json::Value,
        pod: &mut Pod,
    ) -> Result<(), kapi_core::SubresourceError> {
        match sub {
            "binding" => super::pod_binding::bind(body, pod),
            _ => Err(kapi_core::SubresourceError::NotFound),
        }
    }
}

/// The hooks of PodTemplate.
#[derive(Clone, Copy, Debug, Default)]
pub struct PodTemplateHooks;

impl Hooks<PodTemplate> for PodTemplateHooks {}
