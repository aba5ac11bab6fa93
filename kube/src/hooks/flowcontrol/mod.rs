//! The flowcontrol.apiserver.k8s.io API group: FlowSchemas ([`flow_schema`]) and
//! PriorityLevelConfigurations ([`priority_level_configuration`]).

mod flow_schema;
mod priority_level_configuration;

pub use flow_schema::FlowSchemaHooks;
pub use priority_level_configuration::PriorityLevelConfigurationHooks;
