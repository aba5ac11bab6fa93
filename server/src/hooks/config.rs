//! ConfigMap and Secret, as kube-apiserver's strategies for them behave: no
//! `metadata.generation`; `immutable: true` freezes the data; a Secret's `stringData`
//! is folded into `data` (base64) and never stored; their Tables count data keys.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use super::untracked_generation;
use crate::generated::core::v1::{ConfigMap, Secret};

/// kube-apiserver's message for a change to immutable data.
const IMMUTABLE: &str = "field is immutable when `immutable` is set";

/// Errors for changes to data that `immutable: true` froze: `fields` are the data
/// fields with whether each changed.
fn frozen(old: Option<bool>, new: Option<bool>, fields: &[(&str, bool)]) -> ErrorList {
    let mut errs = ErrorList::new();
    if old != Some(true) {
        return errs;
    }
    if new != Some(true) {
        errs.push(FieldError::forbidden(
            &FieldPath::new("immutable"),
            IMMUTABLE,
        ));
    }
    for (field, changed) in fields {
        if *changed {
            errs.push(FieldError::forbidden(&FieldPath::new(field), IMMUTABLE));
        }
    }
    errs
}

/// The hooks of `core/v1` ConfigMap.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConfigMapHooks;

impl Hooks<ConfigMap> for ConfigMapHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, cm: &mut ConfigMap) {
        untracked_generation(&mut cm.metadata);
    }

    fn prepare_for_update(&self, new: &mut ConfigMap, _old: &ConfigMap) {
        untracked_generation(&mut new.metadata);
    }

    fn validate_update(&self, new: &ConfigMap, old: &ConfigMap) -> ErrorList {
        frozen(
            old.immutable,
            new.immutable,
            &[
                ("data", new.data != old.data),
                ("binaryData", new.binary_data != old.binary_data),
            ],
        )
    }

    fn table_cell(&self, column: &str, cm: &ConfigMap) -> Option<Value> {
        (column == "Data").then(|| {
            let count = cm.data.as_ref().map_or(0, BTreeMap::len)
                + cm.binary_data.as_ref().map_or(0, BTreeMap::len);
            Value::from(count)
        })
    }
}

/// The hooks of `core/v1` Secret.
#[derive(Clone, Copy, Debug, Default)]
pub struct SecretHooks;

/// Folds `stringData` into `data`, where it wins, as the API's conversion does.
fn fold_string_data(secret: &mut Secret) {
    if let Some(strings) = secret.string_data.take() {
        let data = secret.data.get_or_insert_with(BTreeMap::new);
        for (k, v) in strings {
            data.insert(k, BASE64.encode(v.as_bytes()));
        }
    }
}

impl Hooks<Secret> for SecretHooks {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, secret: &mut Secret) {
        untracked_generation(&mut secret.metadata);
        fold_string_data(secret);
    }

    fn prepare_for_update(&self, new: &mut Secret, _old: &Secret) {
        untracked_generation(&mut new.metadata);
        fold_string_data(new);
    }

    fn validate_update(&self, new: &Secret, old: &Secret) -> ErrorList {
        let mut errs = frozen(
            old.immutable,
            new.immutable,
            &[("data", new.data != old.data)],
        );
        if new.r#type != old.r#type {
            errs.push(FieldError::invalid(
                &FieldPath::new("type"),
                new.r#type.clone().unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs
    }

    fn table_cell(&self, column: &str, secret: &Secret) -> Option<Value> {
        (column == "Data").then(|| Value::from(secret.data.as_ref().map_or(0, BTreeMap::len)))
    }
}
