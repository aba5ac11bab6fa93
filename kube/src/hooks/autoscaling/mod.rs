//! The autoscaling API group: HorizontalPodAutoscalers of autoscaling/v2 and v1
//! ([`horizontal_pod_autoscaler`]), converted between the two as kube converts them
//! ([`conversion`], [`annotations`]).

mod annotations;
mod conversion;
mod horizontal_pod_autoscaler;

pub use conversion::HorizontalPodAutoscalerConversion;
pub use horizontal_pod_autoscaler::HorizontalPodAutoscalerHooks;
