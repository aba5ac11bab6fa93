//! HorizontalPodAutoscalers.

use kapi_core::Hooks;

use crate::generated::autoscaling::v2::HorizontalPodAutoscaler;

/// The hooks of HorizontalPodAutoscaler.
#[derive(Clone, Copy, Debug, Default)]
pub struct HorizontalPodAutoscalerHooks;

impl Hooks<HorizontalPodAutoscaler> for HorizontalPodAutoscalerHooks {}
