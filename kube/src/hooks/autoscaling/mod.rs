//! The autoscaling API group: HorizontalPodAutoscalers of autoscaling/v2
//! ([`horizontal_pod_autoscaler`]).

mod horizontal_pod_autoscaler;

pub use horizontal_pod_autoscaler::HorizontalPodAutoscalerHooks;
