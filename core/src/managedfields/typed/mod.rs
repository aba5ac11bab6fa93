//! Schema-driven walks over objects (SMD's `typed` package): the field set of an
//! object, the difference between two objects, merging an applied configuration into
//! an object, and removing or extracting a set of fields.

mod compare;
mod merge;
mod reconcile;
mod remove;
mod to_set;
mod types;

#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::Value;

use super::path::{Path, PathElement};
use super::set::FieldSet;
use crate::schema::Schema;

pub(crate) use self::types::Ty;
pub use self::types::object_meta_schema;

/// The type of a whole object: a schema, and whether it is a resource's root.
#[derive(Clone, Copy, Debug)]
pub struct ObjectType<'s> {
    schema: &'s Schema,
    resource: bool,
}

impl<'s> ObjectType<'s> {
    /// Typed by `schema` alone (an `x-kubernetes-embedded-resource` root still gets
    /// `apiVersion`, `kind` and `metadata`).
    pub fn new(schema: &'s Schema) -> Self {
        ObjectType {
            schema,
            resource: schema.x_embedded_resource,
        }
    }

    /// The root of a resource: as kube builds a kind's type, `apiVersion` and `kind`
    /// are strings and `metadata` is `ObjectMeta` ([`object_meta_schema`]) whatever
    /// `schema` declares for them (a CRD's schema declares little of `metadata`).
    pub fn resource(schema: &'s Schema) -> Self {
        ObjectType {
            schema,
            resource: true,
        }
    }

    pub(crate) fn ty(self) -> Ty<'s> {
        Ty::Node {
            schema: self.schema,
            preserve: false,
            resource: self.resource,
        }
    }
}

impl<'s> From<&'s Schema> for ObjectType<'s> {
    fn from(schema: &'s Schema) -> Self {
        ObjectType::new(schema)
    }
}

/// An object that does not conform to its type, at a path (SMD's validation errors,
/// the first one found).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// A value of the wrong kind for its type.
    #[error("{}expected {expected}, got {found}", At(path))]
    WrongType {
        /// Where the value is.
        path: Path,
        /// What the type wants: `map`, `list`, `string`, `numeric (int or float)`,
        /// `boolean` or `any scalar`.
        expected: &'static str,
        /// The Go type of what was found (`string`, `int64`, `[]interface {}`, ...).
        found: &'static str,
    },
    /// A key that a struct does not declare and whose unknown keys are not allowed.
    #[error("{}field not declared in schema", At(path))]
    UndeclaredField {
        /// The field's path.
        path: Path,
    },
    /// A list item that cannot be identified (no key fields, a null, a map in a set).
    #[error("{}element {index}: {reason}", At(path))]
    ListItem {
        /// The list's path.
        path: Path,
        /// The item's index.
        index: usize,
        /// SMD's reason.
        reason: String,
    },
    /// Two items of an associative list (or two values of a set) with the same key,
    /// where duplicates are not allowed.
    #[error("{}duplicate entries for key {key}", At(path))]
    DuplicateKey {
        /// The list's path.
        path: Path,
        /// The repeated key or value.
        key: PathElement,
    },
}

/// Renders `path: ` before a message, nothing for the root.
struct At<'a>(&'a Path);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "{}: ", self.0)
        }
    }
}

/// Whether associative lists and sets may repeat a key: kube allows it in stored
/// objects and in updates, not in applied configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplicates {
    /// Repeated keys are fine (their items are owned as a whole).
    Allow,
    /// A repeated key is an [`Error::DuplicateKey`].
    Reject,
}

/// The difference between two objects (SMD's `Comparison`). No path is in two sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Paths present in the new object only.
    pub added: FieldSet,
    /// Leaves (scalars, atomic lists and maps, empty lists and maps) present in both
    /// with different values.
    pub modified: FieldSet,
    /// Paths present in the old object only.
    pub removed: FieldSet,
}

impl Comparison {
    /// True when the objects are the same.
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// The comparison without `fields` and everything below them (SMD's
    /// `ExcludeFields`).
    pub fn exclude(&self, fields: &FieldSet) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(fields),
            modified: self.modified.recursive_difference(fields),
            removed: self.removed.recursive_difference(fields),
        }
    }
}

impl fmt::Display for Comparison {
    /// SMD's `Comparison.String()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.modified.is_empty() {
            writeln!(f, "- Modified Fields:\n{}", self.modified)?;
        }
        if !self.added.is_empty() {
            writeln!(f, "- Added Fields:\n{}", self.added)?;
        }
        if !self.removed.is_empty() {
            writeln!(f, "- Removed Fields:\n{}", self.removed)?;
        }
        Ok(())
    }
}

/// The fields of `value` (SMD's `ToFieldSet`), after checking it against its type
/// with duplicates allowed (`AsTyped(..., AllowDuplicates)`).
///
/// Scalars are members; atomic lists and maps are members as a whole; associative
/// list items are members and so are their fields; a map entry is a member when its
/// value is null or an empty map or when the key is not a declared field (so a
/// struct's fields are implied by their leaves, a map's keys are not). A key repeated
/// in a list is a member once, its items not walked.
pub fn field_set<'s>(value: &Value, ty: impl Into<ObjectType<'s>>) -> Result<FieldSet, Error> {
    to_set::field_set(
        value,
        ty.into().ty(),
        to_set::Mode::Strict(Duplicates::Allow),
    )
}

/// Checks `value` against its type (SMD's `AsTyped`): kinds, undeclared fields,
/// list items' keys and, with [`Duplicates::Reject`], repeated keys.
pub fn validate<'s>(
    value: &Value,
    ty: impl Into<ObjectType<'s>>,
    duplicates: Duplicates,
) -> Result<(), Error> {
    to_set::check(value, ty.into().ty(), duplicates)
}

/// What changed from `old` to `new` (SMD's `Compare`). Both are expected valid (see
/// [`validate`]); a value of the wrong kind is compared as absent, as SMD does.
///
/// Leaves are compared by value. A non-leaf (a non-empty granular map or list) present
/// on one side only is itself added or removed, besides its leaves; empty or null maps
/// and lists on both sides are compared as leaves, so `{}` → `null` is a modification.
pub fn compare<'s>(
    old: &Value,
    new: &Value,
    ty: impl Into<ObjectType<'s>>,
) -> Result<Comparison, Error> {
    compare::compare(old, new, ty.into().ty())
}

/// `config` merged into `live` (SMD's `Merge`, as apply uses it): structs and granular
/// maps key by key, associative lists item by item by key, sets value by value, and
/// leaves (scalars, atomic lists and maps) replaced by `config`'s. Nothing is removed;
/// a `null` in `config` replaces only a leaf. Items keep `live`'s order unless
/// `config` orders shared items otherwise, new items coming where `config` puts them.
pub fn merge<'s>(
    live: &Value,
    config: &Value,
    ty: impl Into<ObjectType<'s>>,
) -> Result<Value, Error> {
    merge::merge(live, config, ty.into().ty())
}

/// `value` without the fields, list items and set values of `set` (SMD's
/// `RemoveItems`). A map or list left empty becomes `null`, as in SMD.
pub fn remove<'s>(value: &Value, set: &FieldSet, ty: impl Into<ObjectType<'s>>) -> Value {
    remove::remove(value, set, ty.into().ty(), false)
}

/// Only the fields, list items and set values of `set` in `value` (SMD's
/// `ExtractItems`, without key fields added).
pub fn extract<'s>(value: &Value, set: &FieldSet, ty: impl Into<ObjectType<'s>>) -> Value {
    remove::remove(value, set, ty.into().ty(), true)
}

/// `set` with every declared struct field that has members below it made a member
/// too (SMD's `EnsureNamedFieldsAreMembers`; map keys and list items are not added).
pub fn ensure_named_fields_are_members<'s>(
    set: &FieldSet,
    ty: impl Into<ObjectType<'s>>,
) -> FieldSet {
    reconcile::ensure_named_fields_are_members(set, Some(ty.into().ty()))
}

/// `set` adjusted to a schema that changed since it was recorded (SMD's
/// `ReconcileFieldSetWithSchema`): below a list or map that became atomic only the
/// list or map itself stays. `None` when nothing changes.
pub fn reconcile_with_schema<'s>(
    set: &FieldSet,
    ty: impl Into<ObjectType<'s>>,
) -> Option<FieldSet> {
    reconcile::reconcile(set, ty.into().ty())
}

/// The field set of an applied configuration, whose lists may not repeat a key.
pub(crate) fn field_set_without_duplicates(
    value: &Value,
    ty: ObjectType<'_>,
) -> Result<FieldSet, Error> {
    to_set::field_set(value, ty.ty(), to_set::Mode::Strict(Duplicates::Reject))
}

/// SMD's `ToFieldSet` of an object the updater made from checked ones: never fails,
/// skipping what it cannot type.
pub(crate) fn lenient_field_set(value: &Value, ty: ObjectType<'_>) -> FieldSet {
    // Lenient walks report no errors.
    to_set::field_set(value, ty.ty(), to_set::Mode::Lenient).unwrap_or_default()
}
