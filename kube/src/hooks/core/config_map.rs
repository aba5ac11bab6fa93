//! ConfigMaps, as kube-apiserver's strategy for them behaves: no `metadata.generation`;
//! `immutable: true` freezes the data; the Table counts data keys. The data rules (keys,
//! size, immutability) are shared with [`super::secret`].

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use kapi_core::{ErrorList, FieldError, FieldPath, Hooks};
use serde_json::Value;

use crate::generated::core::v1::ConfigMap;

/// kube-apiserver's message for a change to immutable data.
const IMMUTABLE: &str = "field is immutable when `immutable` is set";

/// Errors for changes to data that `immutable: true` froze: `fields` are the data
/// fields with whether each changed.
pub(super) fn frozen(old: Option<bool>, new: Option<bool>, fields: &[(&str, bool)]) -> ErrorList {
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

/// The most data a ConfigMap or Secret may hold (kube's `MaxSecretSize`, 1 MiB).
const MAX_DATA_SIZE: usize = 1024 * 1024;

/// `IsConfigMapKey`: what a key of `data` (or `binaryData`) may be.
fn key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let valid = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !valid {
        errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')".to_string());
    }
    match key {
        "." => errs.push("must not be '.'".into()),
        ".." => errs.push("must not be '..'".into()),
        k if k.starts_with("..") => errs.push("must not start with '..'".into()),
        _ => {}
    }
    errs
}

/// `ValidateConfigMap`'s and `ValidateSecret`'s data rules: valid keys, none in both
/// bags, and at most 1 MiB in all (`sizes` gives each value's size in bytes).
pub(super) fn validate_data<'a>(
    bags: &[(&str, Option<&'a BTreeMap<String, String>>)],
    size: impl Fn(&str, &'a str) -> usize,
) -> ErrorList {
    let mut errs = ErrorList::new();
    let mut total = 0;
    for (i, (field, bag)) in bags.iter().enumerate() {
        for (key, value) in bag.iter().flat_map(|b| b.iter()) {
            let path = FieldPath::new(field).key(key);
            for msg in key_errors(key) {
                errs.push(FieldError::invalid(&path, key.as_str(), msg));
            }
            for (j, (other, other_bag)) in bags.iter().enumerate() {
                if i != j && other_bag.is_some_and(|b| b.contains_key(key)) {
                    errs.push(FieldError::invalid(
                        &path,
                        key.as_str(),
                        format!("duplicate of key present in {other}"),
                    ));
                }
            }
            total += size(field, value);
        }
    }
    if total > MAX_DATA_SIZE {
        errs.push(FieldError::too_long(
            &FieldPath::root(),
            MAX_DATA_SIZE as u64,
        ));
    }
    errs
}

/// The size of a base64 value once decoded.
pub(super) fn decoded_len(value: &str) -> usize {
    BASE64
        .decode(value)
        .map_or(value.len() * 3 / 4, |bytes| bytes.len())
}

fn validate_config_map(cm: &ConfigMap) -> ErrorList {
    validate_data(
        &[
            ("data", cm.data.as_ref()),
            ("binaryData", cm.binary_data.as_ref()),
        ],
        |field, value| {
            if field == "binaryData" {
                decoded_len(value)
            } else {
                value.len()
            }
        },
    )
}

/// The hooks of `core/v1` ConfigMap.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConfigMapHooks;

impl Hooks<ConfigMap> for ConfigMapHooks {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, cm: &ConfigMap) -> ErrorList {
        validate_config_map(cm)
    }

    fn validate_update(&self, new: &ConfigMap, old: &ConfigMap) -> ErrorList {
        let mut errs = validate_config_map(new);
        errs.extend(frozen(
            old.immutable,
            new.immutable,
            &[
                ("data", new.data != old.data),
                ("binaryData", new.binary_data != old.binary_data),
            ],
        ));
        errs
    }

    fn table_cell(&self, column: &str, cm: &ConfigMap) -> Option<Value> {
        (column == "Data").then(|| {
            let count = cm.data.as_ref().map_or(0, BTreeMap::len)
                + cm.binary_data.as_ref().map_or(0, BTreeMap::len);
            Value::from(count)
        })
    }
}
