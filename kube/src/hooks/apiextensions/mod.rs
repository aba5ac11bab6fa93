//! The apiextensions.k8s.io API group: CustomResourceDefinitions
//! ([`custom_resource_definition`]).

mod custom_resource_definition;

pub use custom_resource_definition::CustomResourceDefinitionHooks;
