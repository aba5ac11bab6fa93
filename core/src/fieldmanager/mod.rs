//! Kubernetes' field manager (k8s.io/apimachinery's `managedfields` package): who
//! set which fields of an object, kept in `metadata.managedFields` on every write, and
//! server-side apply. The semantics of ownership (field sets, comparison, merge,
//! prune, conflicts) are structured-merge-diff's, in [`crate::managedfields`]; this
//! module is kube's layer around them, as kube chains its managers:
//!
//! - the entries are read from the object written, or from the stored one when the
//!   write is a subresource's or sends none (a client that does not know them cannot
//!   drop them), and an empty list (or one empty entry) starts over;
//! - an update of an object that has no managed fields keeps none (kube's
//!   `skipNonApplied`: tracking starts at creation or at the first apply, which first
//!   records everything already there as `before-first-apply`);
//! - the writer is named by kube's manager identifier (name, operation, version for
//!   updates, subresource) and takes the time of its write when it changed the
//!   object; `apiVersion`, `kind` and the server's metadata (`name`, `uid`,
//!   `resourceVersion`, …) are never owned;
//! - beyond ten update entries the oldest merge into `ancient-changes`
//!   ([`entries::cap_update_managers`]);
//! - `kubectl apply --server-side` (manager `kubectl`) on an object last written by
//!   client-side apply may take the fields its `last-applied-configuration` annotation
//!   names without conflict, and keeps that annotation up to date ([`last_applied`]).
//!
//! Reset fields: a write of the main resource never owns `status` when the resource
//! has a status subresource, and a status write never owns `spec`, as kube's
//! strategies reset them.
//!
//! All versions of a kind share one shape in kapi, so sets are never converted
//! between versions; an apply must name the version it is sent to, as kube requires.

pub mod entries;
pub mod last_applied;

use serde_json::{Map, Value};

use crate::managedfields::{
    ApplyError, ConflictReport, Conflicts, FieldSet, ManagerSet, Managers, ObjectRole, ObjectType,
    Operation, PathElement, Updater, conflict_report, manager_identifier, parse_manager_identifier,
};
use crate::schema::Schema;

pub use entries::Managed;

/// The name of a write without one (kube's `buildManagerInfo`).
const UNKNOWN: &str = "unknown";

/// The stand-in name of the write being recorded (kube's `managedFieldsUpdater`): its
/// fields are merged into the writer's entry afterwards, and only if it has any.
const CURRENT_OPERATION: &str = "current-operation";

/// The manager that owns what an object held before its first apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Fields nobody owns: the type's and the server's (kube's `stripMetaManager`). Built
/// once: every write strips them.
fn stripped() -> &'static FieldSet {
    static STRIPPED: std::sync::OnceLock<FieldSet> = std::sync::OnceLock::new();
    STRIPPED.get_or_init(stripped_fields)
}

fn stripped_fields() -> FieldSet {
    let meta = |name: &str| [PathElement::field("metadata"), PathElement::field(name)];
    let mut set = FieldSet::new();
    for top in ["apiVersion", "kind", "metadata"] {
        set.insert(&[PathElement::field(top)]);
    }
    for name in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        set.insert(&meta(name));
    }
    set
}

/// Which part of a resource a write goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// The object itself; `has_status` when `status` is a subresource (and so never
    /// owned through the main resource).
    Main {
        /// The resource has a status subresource.
        has_status: bool,
    },
    /// A subresource: `status` owns nothing of `spec`; others (`scale`) reset nothing.
    Subresource(&'a str),
}

/// Why an apply was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldManagerError {
    /// Other managers own fields the apply changes: kube's 409 with its causes.
    #[error("{}", .0.message)]
    Conflicts(ConflictReport),
    /// The applied configuration is wrong (400 in kube's words).
    #[error("{0}")]
    BadRequest(String),
    /// The stored object or its managed fields cannot be read (500).
    #[error("{0}")]
    Internal(String),
}

/// The field manager of one resource version and one write target.
pub struct FieldManager<'s> {
    ty: ObjectType<'s>,
    updater: Updater<'s>,
    api_version: String,
    kind: &'s str,
    subresource: &'s str,
}

impl<'s> FieldManager<'s> {
    /// The field manager of `kind` objects of `schema` (a resource's root) in
    /// `api_version` (`apps/v1`), written through `target`.
    pub fn new(
        schema: &'s Schema,
        api_version: impl Into<String>,
        kind: &'s str,
        target: Target<'s>,
    ) -> Self {
        let mut reset = FieldSet::new();
        let subresource = match target {
            Target::Main { has_status } => {
                if has_status {
                    reset.insert(&[PathElement::field("status")]);
                }
                ""
            }
            Target::Subresource(name) => {
                if name == "status" {
                    reset.insert(&[PathElement::field("spec")]);
                }
                name
            }
        };
        let ty = ObjectType::resource(schema);
        FieldManager {
            ty,
            updater: Updater::new(ty).ignoring(reset),
            api_version: api_version.into(),
            kind,
            subresource,
        }
    }

    /// Records an update (create, update, patch other than apply) from `live` (`{}` on
    /// create) to `new` by `manager` at `now` in `new`'s `managedFields` (kube's
    /// `UpdateNoErrors`: when the objects cannot be typed, `new` keeps `live`'s
    /// entries).
    pub fn update(&self, live: &Value, new: &mut Value, manager: &str, now: &str) {
        let managed = self.live_or_new(live, new);
        let stored = live;
        let live = without_managed_fields(stored);
        set_managed_fields(new, None);
        // Tracking starts at creation (no uid yet) or at the first apply.
        let created = meta_str(&live, "uid").is_empty();
        if managed.fields.is_empty() && !created {
            return;
        }
        match self.record_update(&live, new, managed, manager, now) {
            Some(managed) => set_managed_fields(new, entries::encode(&managed)),
            None => set_managed_fields(new, entries::of(stored).cloned()),
        }
    }

    /// Applies `config` to `live` (`{}` when the object does not exist yet) for
    /// `manager`, taking conflicting fields when `force`: the object to write, with
    /// its `managedFields` (kube's `FieldManager.Apply`).
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, FieldManagerError> {
        self.check_config(config)?;
        let mut managed = match entries::of(live) {
            Some(e) => entries::decode(e).map_err(|e| {
                FieldManagerError::Internal(format!("failed to decode managed fields: {e}"))
            })?,
            None => Managed::default(),
        };
        let live = without_managed_fields(live);
        if managed.fields.is_empty() {
            // Whatever the object holds was set before anyone applied.
            let mut before = live.clone();
            managed = self
                .record_update(
                    &Value::Object(Map::new()),
                    &mut before,
                    managed,
                    BEFORE_FIRST_APPLY,
                    now,
                )
                .ok_or_else(|| {
                    FieldManagerError::Internal(
                        "failed to create manager for existing fields".into(),
                    )
                })?;
        }
        let id = manager_identifier(manager, Operation::Apply, "", self.subresource);
        let (mut new, mut fields) = match self.apply_as(&live, config, &managed.fields, &id, force)
        {
            Err(ApplyError::Conflicts(conflicts)) if manager == last_applied::KUBECTL => {
                // Fields that client-side apply set are the applier's to take.
                let allowed = last_applied::allowed_conflicts(&live, self.ty, &self.api_version);
                let left = Conflicts(
                    conflicts
                        .0
                        .into_iter()
                        .filter(|c| !allowed.has(c.path.elements()))
                        .collect(),
                );
                if !left.0.is_empty() {
                    return Err(FieldManagerError::Conflicts(report(&left)));
                }
                self.apply_as(&live, config, &managed.fields, &id, true)
                    .map_err(apply_error)?
            }
            other => other.map_err(apply_error)?,
        };
        strip(&mut fields, &id);
        if new != live {
            managed.times.insert(id.clone(), now.to_string());
        }
        managed.fields = fields;
        if manager == last_applied::KUBECTL {
            last_applied::update_annotation(&live, config, &mut new);
        }
        set_managed_fields(&mut new, entries::encode(&managed));
        Ok(new)
    }

    /// kube's checks of an applied configuration: the kind and version the request
    /// is sent to (`versionCheckManager`, which words a mismatch as Go prints a
    /// `GroupVersionKind`), and no `managedFields`.
    fn check_config(&self, config: &Value) -> Result<(), FieldManagerError> {
        let text = |key: &str| config.get(key).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        if api_version != self.api_version || kind != self.kind {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            return Err(FieldManagerError::BadRequest(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )));
        }
        if entries::of(config).is_some() {
            return Err(FieldManagerError::BadRequest(
                "metadata.managedFields must be nil".into(),
            ));
        }
        Ok(())
    }

    fn apply_as(
        &self,
        live: &Value,
        config: &Value,
        managers: &Managers,
        id: &str,
        force: bool,
    ) -> Result<(Value, Managers), ApplyError> {
        self.updater
            .apply(live, config, managers, id, &self.api_version, force)
    }

    /// The entries a write starts from (kube's `decodeLiveOrNew`): the stored ones for
    /// a subresource; none when `new` resets them; `new`'s when it has readable ones;
    /// else the stored ones (a client that does not know them cannot drop them).
    fn live_or_new(&self, live: &Value, new: &Value) -> Managed {
        let decode = |v: &Value| entries::of(v).and_then(|e| entries::decode(e).ok());
        if !self.subresource.is_empty() {
            return decode(live).unwrap_or_default();
        }
        if entries::of(new).is_some_and(entries::is_reset) {
            return Managed::default();
        }
        match decode(new) {
            Some(managed) if !managed.fields.is_empty() => managed,
            _ => decode(live).unwrap_or_default(),
        }
    }

    /// The managers after `manager` wrote `new` over `live` (kube's
    /// `buildManagerInfo`, `managedFieldsUpdater`, `stripMeta` and `capManagers`
    /// around SMD's update); `None` when an object cannot be typed.
    fn record_update(
        &self,
        live: &Value,
        new: &mut Value,
        mut managed: Managed,
        manager: &str,
        now: &str,
    ) -> Option<Managed> {
        let name = if manager.is_empty() { UNKNOWN } else { manager };
        let id = manager_identifier(name, Operation::Update, &self.api_version, self.subresource);
        let mut fields = self
            .updater
            .update(
                live,
                new,
                &managed.fields,
                CURRENT_OPERATION,
                &self.api_version,
            )
            .ok()?;
        strip(&mut fields, CURRENT_OPERATION);
        if let Some(current) = fields.remove(CURRENT_OPERATION) {
            let set = match fields.get(&id) {
                Some(previous) => current.set.union(&previous.set),
                None => current.set,
            };
            let entry = ManagerSet {
                set,
                api_version: self.api_version.clone(),
                applied: false,
            };
            fields.insert(id.clone(), entry);
            managed.times.insert(id, now.to_string());
        }
        managed.fields = fields;
        managed
            .times
            .retain(|id, _| managed.fields.contains_key(id));
        entries::cap_update_managers(&mut managed);
        Some(managed)
    }
}

/// Takes the fields nobody owns out of `id`'s set, dropping it when nothing is left.
fn strip(fields: &mut Managers, id: &str) {
    if let Some(entry) = fields.get_mut(id) {
        entry.set = entry.set.difference(stripped());
        if entry.set.is_empty() {
            fields.remove(id);
        }
    }
}

fn apply_error(e: ApplyError) -> FieldManagerError {
    match e {
        ApplyError::Conflicts(conflicts) => FieldManagerError::Conflicts(report(&conflicts)),
        ApplyError::Invalid(invalid) if invalid.role == ObjectRole::Config => {
            FieldManagerError::BadRequest(invalid.to_string())
        }
        ApplyError::Invalid(invalid) => FieldManagerError::Internal(invalid.to_string()),
    }
}

/// kube's 409 message and causes of `conflicts`.
fn report(conflicts: &Conflicts) -> ConflictReport {
    conflict_report(conflicts, parse_manager_identifier)
}

fn meta_str<'v>(obj: &'v Value, field: &str) -> &'v str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `obj` without `metadata.managedFields`: the sets are compared without them.
fn without_managed_fields(obj: &Value) -> Value {
    let mut obj = obj.clone();
    set_managed_fields(&mut obj, None);
    obj
}

/// Sets (or, with `None`, removes) `metadata.managedFields`.
pub fn set_managed_fields(obj: &mut Value, entries: Option<Value>) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match entries {
        Some(entries) => {
            meta.insert("managedFields".into(), entries);
        }
        None => {
            meta.remove("managedFields");
        }
    }
}

#[cfg(test)]
mod tests;
