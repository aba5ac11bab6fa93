//! SMD's `merge.Updater`: who owns which fields after an update or an apply, and the
//! object an apply produces.
//!
//! All versions of a kind share one shape in kapi, so the versions SMD converts
//! between are only carried: every manager's set is compared against the same objects.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::conflict::Conflicts;
use super::set::FieldSet;
use super::typed::{self, Comparison, Duplicates, Error, ObjectType};

/// What one manager owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagerSet {
    /// The owned fields.
    pub set: FieldSet,
    /// The API version the manager last wrote with.
    pub api_version: String,
    /// True when the manager's last write was an apply.
    pub applied: bool,
}

/// Every manager's fields, by manager identifier (opaque here; kube's are
/// [`manager_identifier`](super::manager_identifier)s).
pub type Managers = BTreeMap<String, ManagerSet>;

/// Which object of an operation is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectRole {
    /// The stored object.
    Live,
    /// The object an update writes.
    New,
    /// The applied configuration (kube calls it the patch).
    Config,
    /// The result of merging or pruning (only if the inputs were already wrong).
    Merged,
}

impl fmt::Display for ObjectRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ObjectRole::Live => "live",
            ObjectRole::New => "new",
            ObjectRole::Config => "patch",
            ObjectRole::Merged => "merged",
        })
    }
}

/// An object of an update or apply that does not conform to the schema; kube answers
/// `failed to create typed <role> object (<gvk>): <error>`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("failed to create typed {role} object: {error}")]
pub struct InvalidObject {
    /// Which object.
    pub role: ObjectRole,
    /// What is wrong with it.
    pub error: Error,
}

/// Why an apply failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ApplyError {
    /// Other managers own fields the apply changes; kube answers 409 with
    /// [`conflict_report`](super::conflict_report).
    #[error("{0}")]
    Conflicts(Conflicts),
    /// An object does not conform to the schema.
    #[error(transparent)]
    Invalid(#[from] InvalidObject),
}

fn invalid(role: ObjectRole) -> impl FnOnce(Error) -> InvalidObject {
    move |error| InvalidObject { role, error }
}

/// Computes ownership for updates and applies of objects of one type (SMD's
/// `Updater`, with one version).
#[derive(Clone, Debug)]
pub struct Updater<'s> {
    ty: ObjectType<'s>,
    ignored: FieldSet,
}

impl<'s> Updater<'s> {
    /// An updater for objects of `ty`.
    pub fn new(ty: impl Into<ObjectType<'s>>) -> Self {
        Updater {
            ty: ty.into(),
            ignored: FieldSet::new(),
        }
    }

    /// Fields nobody gets to own through this updater (SMD's `IgnoredFields`, kube's
    /// reset fields: `status` for the main resource, everything but `status` for the
    /// status subresource). Changes to them and below them are left out of every
    /// comparison and of the applier's set.
    pub fn ignoring(mut self, fields: FieldSet) -> Self {
        self.ignored = fields;
        self
    }

    /// The managers after an update (create, update or patch) from `live` to `new` by
    /// `manager` (SMD's `Update`). An update never conflicts: the manager takes the
    /// fields it added or changed from everyone else and keeps its other fields, minus
    /// those removed; every manager loses removed fields; managers left with nothing
    /// are dropped.
    pub fn update(
        &self,
        live: &Value,
        new: &Value,
        managers: &Managers,
        manager: &str,
        api_version: &str,
    ) -> Result<Managers, InvalidObject> {
        typed::validate(live, self.ty, Duplicates::Allow).map_err(invalid(ObjectRole::Live))?;
        typed::validate(new, self.ty, Duplicates::Allow).map_err(invalid(ObjectRole::New))?;
        let mut managers = self.reconciled(managers);
        let compare = self.compare(live, new, ObjectRole::New)?;
        // An update is forced: what it changes is taken from the others.
        let taken = conflicts(&compare, &managers, manager);
        take_over(&compare, &taken, &mut managers, manager);
        let previous = managers.remove(manager).map(|m| m.set).unwrap_or_default();
        let set = previous
            .difference(&compare.removed)
            .union(&compare.modified)
            .union(&compare.added)
            .recursive_difference(&self.ignored);
        if !set.is_empty() {
            let entry = ManagerSet {
                set,
                api_version: api_version.to_owned(),
                applied: false,
            };
            managers.insert(manager.to_owned(), entry);
        }
        Ok(managers)
    }

    /// Applies `config` to `live` for `manager` (SMD's `Apply`): the object after the
    /// merge and the prune, and the managers after it.
    ///
    /// `config` is merged into `live`; the fields `manager` applied last time and no
    /// longer applies are removed unless another manager owns them (SMD's prune);
    /// `manager` then owns exactly `config`'s fields. Fields whose value the apply
    /// changes and another manager owns are conflicts: without `force` the apply fails
    /// with them all, with `force` the other managers lose them. Fields merely
    /// applied with the value they already have are shared, not conflicts.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        managers: &Managers,
        manager: &str,
        api_version: &str,
        force: bool,
    ) -> Result<(Value, Managers), ApplyError> {
        let config_set = typed::field_set_without_duplicates(config, self.ty)
            .map_err(invalid(ObjectRole::Config))?;
        typed::validate(live, self.ty, Duplicates::Allow).map_err(invalid(ObjectRole::Live))?;
        let mut managers = self.reconciled(managers);
        let merged = typed::merge(live, config, self.ty).map_err(invalid(ObjectRole::Merged))?;
        let last = managers.get(manager).map(|m| m.set.clone());
        let entry = ManagerSet {
            set: config_set.recursive_difference(&self.ignored),
            api_version: api_version.to_owned(),
            applied: true,
        };
        managers.insert(manager.to_owned(), entry);
        let new = self.prune(merged, &managers, last.as_ref());
        let compare = self.compare(live, &new, ObjectRole::Merged)?;
        let lost = conflicts(&compare, &managers, manager);
        if !force && !lost.is_empty() {
            return Err(ApplyError::Conflicts(Conflicts::from_sets(&lost)));
        }
        take_over(&compare, &lost, &mut managers, manager);
        Ok((new, managers))
    }

    /// Every manager's set adjusted to the schema (SMD's
    /// `reconcileManagedFieldsWithSchemaChanges`).
    fn reconciled(&self, managers: &Managers) -> Managers {
        let mut out = managers.clone();
        for entry in out.values_mut() {
            if let Some(set) = typed::reconcile_with_schema(&entry.set, self.ty) {
                entry.set = set;
            }
        }
        out
    }

    /// The comparison SMD's `update` works from, without the ignored fields.
    fn compare(
        &self,
        live: &Value,
        new: &Value,
        role: ObjectRole,
    ) -> Result<Comparison, InvalidObject> {
        let compare = typed::compare(live, new, self.ty).map_err(invalid(role))?;
        Ok(compare.exclude(&self.ignored))
    }

    /// SMD's `prune`: removes from `merged` what `last` (the applier's previous set)
    /// had and the applier's new set does not, unless another manager owns it; fields
    /// removed along with them (the insides of a removed item) come back unless `last`
    /// had them.
    fn prune(&self, merged: Value, managers: &Managers, last: Option<&FieldSet>) -> Value {
        let Some(last) = last.filter(|l| !l.is_empty()) else {
            return merged;
        };
        let ensure = |s: &FieldSet| typed::ensure_named_fields_are_members(s, self.ty);
        let pruned = typed::remove(&merged, &ensure(last), self.ty);

        // Add back what anyone (the applier's new configuration included) owns.
        let managed = managers
            .values()
            .fold(FieldSet::new(), |acc, m| acc.union(&m.set));
        let merged_set = ensure(&typed::lenient_field_set(&merged, self.ty));
        let pruned_set = ensure(&typed::lenient_field_set(&pruned, self.ty));
        let gone = merged_set.difference(&pruned_set.union(&ensure(&managed)));
        let pruned = typed::remove(&merged, &gone, self.ty);

        // Add back what was removed only as a consequence: keep removed only what the
        // applier had applied.
        let pruned_set = ensure(&typed::lenient_field_set(&pruned, self.ty));
        let gone = merged_set
            .difference(&pruned_set)
            .intersection(&ensure(last));
        typed::remove(&merged, &gone, self.ty)
    }
}

/// The fields other managers own that `compare` adds or changes (SMD's `update`
/// conflicts): an apply fails with them unless forced.
fn conflicts(
    compare: &Comparison,
    managers: &Managers,
    manager: &str,
) -> BTreeMap<String, FieldSet> {
    let changed = compare.modified.union(&compare.added);
    managers
        .iter()
        .filter(|(name, _)| name.as_str() != manager)
        .map(|(name, m)| (name.clone(), m.set.intersection(&changed)))
        .filter(|(_, set)| !set.is_empty())
        .collect()
}

/// The rest of SMD's `update`: the other managers lose the fields in `lost` and
/// every field `compare` removes; managers left with nothing are dropped (the
/// writing manager too, which its caller adds back if it owns anything).
fn take_over(
    compare: &Comparison,
    lost: &BTreeMap<String, FieldSet>,
    managers: &mut Managers,
    manager: &str,
) {
    for (name, entry) in managers.iter_mut() {
        if let Some(lost) = lost.get(name) {
            entry.set = entry.set.difference(lost);
        }
        if name != manager && !compare.removed.is_empty() {
            entry.set = entry.set.difference(&compare.removed);
        }
    }
    managers.retain(|_, m| !m.set.is_empty());
}

/// [`Updater::update`] without ignored fields.
pub fn update<'s>(
    live: &Value,
    new: &Value,
    ty: impl Into<ObjectType<'s>>,
    managers: &Managers,
    manager: &str,
    api_version: &str,
) -> Result<Managers, InvalidObject> {
    Updater::new(ty).update(live, new, managers, manager, api_version)
}

/// [`Updater::apply`] without ignored fields.
pub fn apply<'s>(
    live: &Value,
    config: &Value,
    ty: impl Into<ObjectType<'s>>,
    managers: &Managers,
    manager: &str,
    api_version: &str,
    force: bool,
) -> Result<(Value, Managers), ApplyError> {
    Updater::new(ty).apply(live, config, managers, manager, api_version, force)
}
