//! The flowcontrol.apiserver.k8s.io API group: FlowSchemas ([`flow_schema`]) and
//! PriorityLevelConfigurations ([`priority_level_configuration`]), and kube-apiserver's
//! bootstrap configuration of both ([`bootstrap`]). What the two kinds share is here:
//! the status checks, the generation rule and Go's rendering of string lists.

mod bootstrap;
mod flow_schema;
mod priority_level_configuration;

pub use bootstrap::{
    AUTO_UPDATE_ANNOTATION, BootstrapObject, bootstrap_flow_schemas, bootstrap_priority_levels,
    same_spec,
};
pub use flow_schema::FlowSchemaHooks;
pub use priority_level_configuration::PriorityLevelConfigurationHooks;

use kapi_core::{ErrorList, FieldError, FieldPath};

use crate::hooks::strings;

/// The generation after an update: bumped when the spec changed, as both kinds'
/// strategies do (metadata and status changes leave it).
fn next_generation(old: Option<i64>, spec_changed: bool) -> Option<i64> {
    let old = old.unwrap_or(1);
    Some(if spec_changed { old + 1 } else { old })
}

/// `ValidateFlowSchemaStatus` and `ValidatePriorityLevelConfigurationStatus`: each
/// condition has a type, and no two the same.
fn conditions_errors<'a>(types: impl Iterator<Item = &'a str>) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut seen = Vec::new();
    let path = FieldPath::new("status").child("conditions");
    for (i, t) in types.enumerate() {
        let at = path.index(i).child("type");
        if seen.contains(&t) {
            errs.push(FieldError::duplicate(&at, t));
        }
        seen.push(t);
        if t.is_empty() {
            errs.push(FieldError::required(&at, "must not be empty"));
        }
    }
    errs
}

/// Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
fn go_strings(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// `field.NotSupported` of a value kube prints with Go's `%#v` (`go`), which kapi's
/// JSON rendering of values would not.
fn not_supported_go(path: &FieldPath, go: String, supported: &[&str]) -> FieldError {
    let mut err = FieldError::not_supported(path, "", &strings(supported));
    err.bad_value = None;
    err.detail = format!("{go}: {}", err.detail);
    err
}
