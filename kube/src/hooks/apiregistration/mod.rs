//! The apiregistration.k8s.io API group: APIServices ([`api_service`]), as
//! kube-aggregator's `pkg/registry/apiservice` serves them.

mod api_service;

pub use api_service::ApiServiceHooks;
