//! CustomResourceDefinitions, checked as kube-apiserver's CRD strategy checks them
//! (`ValidateCustomResourceDefinition`): names, scope, versions with exactly one storage
//! version, and each version's schema structural, with every regex and CEL rule
//! compiling — the same parser the compiled resources and kapi's own schema files go
//! through, so a bad CRD gets a 422 with the field path of each problem.
//!
//! As kube-apiserver's CRD registry does, the strategy also keeps
//! `status.storedVersions` (the storage version of every write is added; a version may
//! only be dropped from `spec.versions` once it is gone from there), keeps the scope and
//! kind of an established CRD, and a delete keeps
//! the CRD with the `customresourcecleanup` finalizer and a `Terminating` condition
//! until [`kapi_apiextensions`] has deleted its objects.

use kapi_core::crd::CustomResourceDefinition as Definition;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::apiextensions_k8s_io::v1::CustomResourceDefinition;
use kapi_apiextensions::{CLEANUP_FINALIZER, conditions};

/// The hooks of CustomResourceDefinition.
#[derive(Clone, Copy, Debug, Default)]
pub struct CustomResourceDefinitionHooks;

/// The CRD parsed and checked, with its rules checked against their schemas where
/// they are new or changed since `old`.
fn validate_definition(
    crd: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
) -> ErrorList {
    let parse = |crd: &CustomResourceDefinition| {
        serde_json::to_value(crd)
            .map_err(|_| ErrorList::new())
            .and_then(|json| Definition::parse(&json))
    };
    let mut errs = match parse(crd) {
        Ok(definition) => {
            let old = old.and_then(|o| parse(o).ok());
            definition.check_rules(old.as_ref())
        }
        Err(errs) => errs,
    };
    let json = |crd: &CustomResourceDefinition| serde_json::to_value(crd).unwrap_or_default();
    let old = old.map(json);
    errs.extend(super::conversion::conversion_errors(
        &json(crd),
        old.as_ref(),
    ));
    errs
}

fn storage_version(crd: &CustomResourceDefinition) -> Option<String> {
    crd.spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
}

/// Changes the CRD's status as JSON (conditions are kept as kube writes them).
fn with_status(crd: &mut CustomResourceDefinition, f: impl FnOnce(&mut Value)) {
    let mut status = serde_json::to_value(&crd.status).unwrap_or(Value::Null);
    f(&mut status);
    if let Ok(s) = serde_json::from_value(status) {
        crd.status = s;
    }
}

fn add_stored_version(crd: &mut CustomResourceDefinition) {
    let Some(version) = storage_version(crd) else {
        return;
    };
    with_status(crd, |status| {
        if !status.is_object() {
            *status = serde_json::json!({});
        }
        let stored = status
            .as_object_mut()
            .expect("made an object above")
            .entry("storedVersions")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(list) = stored.as_array_mut() {
            if !list.iter().any(|v| v.as_str() == Some(version.as_str())) {
                list.push(Value::from(version));
            }
        }
    });
}

impl Hooks<CustomResourceDefinition> for CustomResourceDefinitionHooks {
    /// kube-apiserver's `SetDefaults_CustomResourceDefinitionSpec`: the singular and the
    /// list kind from the kind, and `None` conversion.
    fn apply_defaults(&self, crd: &mut CustomResourceDefinition) {
        let names = &mut crd.spec.names;
        if names.singular.as_deref().is_none_or(str::is_empty) {
            names.singular = Some(names.kind.to_lowercase());
        }
        if names.list_kind.as_deref().is_none_or(str::is_empty) {
            names.list_kind = Some(format!("{}List", names.kind));
        }
        if crd.spec.conversion.is_none() {
            crd.spec.conversion =
                serde_json::from_value(serde_json::json!({"strategy": "None"})).ok();
        }
    }

    fn prepare_for_create(&self, crd: &mut CustomResourceDefinition) {
        add_stored_version(crd);
    }

    fn prepare_for_update(
        &self,
        new: &mut CustomResourceDefinition,
        _old: &CustomResourceDefinition,
    ) {
        add_stored_version(new);
    }

    fn validate(&self, crd: &CustomResourceDefinition) -> ErrorList {
        validate_definition(crd, None)
    }

    fn validate_update(
        &self,
        new: &CustomResourceDefinition,
        old: &CustomResourceDefinition,
    ) -> ErrorList {
        let mut errs = validate_definition(new, Some(old));
        let stored = new
            .status
            .as_ref()
            .and_then(|s| s.stored_versions.clone())
            .unwrap_or_default();
        for (i, v) in stored.iter().enumerate() {
            if !new.spec.versions.iter().any(|x| &x.name == v) {
                errs.push(FieldError::invalid(
                    &FieldPath::new("status.storedVersions").index(i),
                    v.as_str(),
                    format!(
                        "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
                    ),
                ));
            }
        }
        // Once served, what decides the storage layout stays.
        let established = serde_json::to_value(&old.status)
            .is_ok_and(|s| conditions::is_true(&s, conditions::ESTABLISHED));
        if established {
            let immutable = [
                ("spec.scope", &new.spec.scope, &old.spec.scope),
                (
                    "spec.names.kind",
                    &new.spec.names.kind,
                    &old.spec.names.kind,
                ),
            ];
            for (path, n, o) in immutable {
                if n != o {
                    errs.push(FieldError::invalid(
                        &FieldPath::new(path),
                        n.as_str(),
                        "field is immutable",
                    ));
                }
            }
        }
        errs
    }

    /// A CRD that is not yet being deleted has its objects to delete first.
    fn finalizing(&self, crd: &CustomResourceDefinition) -> bool {
        crd.metadata.deletion_timestamp.is_none()
    }

    fn prepare_for_delete(&self, crd: &mut CustomResourceDefinition) {
        let finalizers = crd.metadata.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_string());
        }
        with_status(crd, |status| {
            conditions::set(
                status,
                conditions::TERMINATING,
                true,
                "InstanceDeletionPending",
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            )
        });
    }
}
