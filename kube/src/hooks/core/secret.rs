//! Secrets, as kube-apiserver's strategy for them behaves: `type` defaults to `Opaque`;
//! no `metadata.generation`; `immutable: true` freezes the data; `stringData` is folded
//! into `data` (base64) and never stored; the Table counts data keys.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::core::v1::Secret;

use super::config_map::{decoded_len, frozen, validate_data};

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
    /// kube's `SetDefaults_Secret`.
    fn apply_defaults(&self, secret: &mut Secret) {
        if secret.r#type.as_deref().is_none_or(str::is_empty) {
            secret.r#type = Some("Opaque".to_string());
        }
    }

    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, secret: &mut Secret) {
        fold_string_data(secret);
    }

    fn prepare_for_update(&self, new: &mut Secret, _old: &Secret) {
        fold_string_data(new);
    }

    fn validate(&self, secret: &Secret) -> ErrorList {
        validate_data(&[("data", secret.data.as_ref())], |_, v| decoded_len(v))
    }

    fn validate_update(&self, new: &Secret, old: &Secret) -> ErrorList {
        let mut errs = validate_data(&[("data", new.data.as_ref())], |_, v| decoded_len(v));
        errs.extend(frozen(
            old.immutable,
            new.immutable,
            &[("data", new.data != old.data)],
        ));
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
