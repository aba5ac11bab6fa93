//! The apiextensions.k8s.io API group: CustomResourceDefinitions
//! ([`custom_resource_definition`], their `spec.conversion` in [`conversion`]).

mod conversion;
mod custom_resource_definition;

pub use custom_resource_definition::CustomResourceDefinitionHooks;
