//! Checks of the defaults a schema gives: each must be free of unknown fields and
//! valid against its own schema.

use crate::field::{ErrorList, FieldError, FieldPath};
use crate::schema::{AdditionalProperties, Schema};

/// Defaults must validate against their own schema and must not carry unknown fields
/// (apiextensions validation/defaulting.go).
pub(super) fn check_defaults(s: &Schema, path: &FieldPath, errs: &mut ErrorList) {
    if let Some(d) = &s.default {
        let dpath = path.child("default");
        let mut pruned = d.clone();
        crate::schema::pruning::prune_node(s, &mut pruned, false);
        if &pruned != d {
            errs.push(FieldError::invalid(
                &dpath,
                d.clone(),
                "must not have unknown fields",
            ));
        } else {
            let mut defaulted = d.clone();
            s.apply_defaults(&mut defaulted);
            errs.extend(s.validate(&defaulted, &dpath));
        }
    }
    for (name, p) in &s.properties {
        check_defaults(p, &path.child("properties").key(name), errs);
    }
    if let Some(AdditionalProperties::Schema(a)) = &s.additional_properties {
        check_defaults(a, &path.child("additionalProperties"), errs);
    }
    if let Some(items) = &s.items {
        check_defaults(items, &path.child("items"), errs);
    }
}
