//! CustomResourceDefinitions, checked as kube-apiserver's CRD strategy checks them
//! (`ValidateCustomResourceDefinition`): names, scope, versions with exactly one storage
//! version, and each version's schema structural, with every regex and CEL rule
//! compiling — the same parser the compiled resources and kapi's own schema files go
//! through, so a bad CRD gets a 422 with the field path of each problem.
//!
//! Not yet: serving the resources a CRD defines, its status conditions (Established,
//! NamesAccepted) and accepted names (issue #5).

use kapi_core::crd::CustomResourceDefinition as Definition;
use kapi_core::{ErrorList, Hooks};

use crate::generated::apiextensions_k8s_io::v1::CustomResourceDefinition;

/// The hooks of CustomResourceDefinition.
#[derive(Clone, Copy, Debug, Default)]
pub struct CustomResourceDefinitionHooks;

fn validate_definition(crd: &CustomResourceDefinition) -> ErrorList {
    match serde_json::to_value(crd) {
        Ok(json) => Definition::parse(&json).err().unwrap_or_default(),
        Err(_) => ErrorList::new(),
    }
}

impl Hooks<CustomResourceDefinition> for CustomResourceDefinitionHooks {
    fn validate(&self, crd: &CustomResourceDefinition) -> ErrorList {
        validate_definition(crd)
    }

    fn validate_update(
        &self,
        new: &CustomResourceDefinition,
        _old: &CustomResourceDefinition,
    ) -> ErrorList {
        validate_definition(new)
    }
}
