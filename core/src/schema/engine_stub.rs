//! STUB entry points of the schema engine; replaced by parse/default/prune/validate modules.

use serde_json::Value;

use super::Schema;
use crate::field::{ErrorList, FieldPath};

impl Schema {
    /// Parses and checks a structural schema (the value of `openAPIV3Schema`).
    /// Errors carry paths relative to the schema root.
    pub fn parse(value: &Value) -> Result<Schema, ErrorList> {
        Self::parse_at(value, &FieldPath::root())
    }

    /// Like [`Schema::parse`], with error paths prefixed by `at`.
    pub fn parse_at(_value: &Value, _at: &FieldPath) -> Result<Schema, ErrorList> {
        Ok(Schema::default())
    }

    /// Fills in `default`s, recursively.
    pub fn apply_defaults(&self, _obj: &mut Value) {}

    /// Drops fields the schema does not know, unless preserved.
    pub fn prune(&self, _obj: &mut Value) {}

    /// Validates `obj`, reporting errors under `at`.
    pub fn validate(&self, _obj: &Value, _at: &FieldPath) -> ErrorList {
        ErrorList::new()
    }

    /// Validates an update: everything [`Schema::validate`] checks plus transition rules.
    pub fn validate_update(&self, new: &Value, _old: &Value, at: &FieldPath) -> ErrorList {
        self.validate(new, at)
    }
}
