//! Strategies: what happens to an object on create and update, before it is stored.
//!
//! The server is generic: it only sees [`ObjectStrategy`] trait objects working on JSON
//! values. A compiled resource gets a [`TypedStrategy`], which runs the shared schema
//! engine and then the resource's typed [`Hooks`]; a run-time CRD gets a
//! [`SchemaStrategy`], which runs the same engine alone. The create/update rules implied
//! by the subresources (status ignored on main-resource writes, everything but status
//! ignored on status writes, generation bumped on spec change) live here, once.

use std::marker::PhantomData;

use serde_json::Value;
use serde_path_to_error::Segment;

use crate::field::{ErrorList, FieldError, FieldPath};
use crate::hooks::{Hooks, SubresourceError};
use crate::resource::{Resource, ResourceInfo};
use crate::schema::Schema;

/// The object-safe strategy the generic server works with.
pub trait ObjectStrategy: Send + Sync + 'static {
    /// The resource this strategy is for.
    fn info(&self) -> &ResourceInfo;

    /// Its structural schema.
    fn schema(&self) -> &Schema;

    /// What an object's name must look like.
    fn name_rule(&self) -> crate::meta::NameRule {
        crate::meta::NameRule::Subdomain
    }

    /// Prepares a new object: prune unknown fields, apply defaults, clear status when
    /// the status subresource is on, set generation to 1, then run the hooks.
    fn prepare_for_create(&self, obj: &mut Value);

    /// Prepares an update of the main resource: prune, default, keep the old status when
    /// the status subresource is on, bump generation when anything but metadata and
    /// status changed, then run the hooks.
    fn prepare_for_update(&self, new: &mut Value, old: &Value);

    /// Prepares a write to `/status`: only status is taken from the new object.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value);

    /// Validates a new object.
    fn validate(&self, obj: &Value) -> ErrorList;

    /// Validates an update (including CEL transition rules and immutable fields).
    fn validate_update(&self, new: &Value, old: &Value) -> ErrorList;

    /// [`ObjectStrategy::validate`] and, for a valid object, the warnings for the
    /// client ([`Hooks::warnings_on_create`]): one call, so that a strategy that reads
    /// a decoded form for both decodes the object once. None by default.
    fn validate_with_warnings(&self, obj: &Value) -> (ErrorList, Vec<String>) {
        (self.validate(obj), Vec::new())
    }

    /// [`ObjectStrategy::validate_update`] and, for a valid update, the warnings for
    /// the client ([`Hooks::warnings_on_update`]), as
    /// [`ObjectStrategy::validate_with_warnings`].
    fn validate_update_with_warnings(&self, new: &Value, old: &Value) -> (ErrorList, Vec<String>) {
        (self.validate_update(new, old), Vec::new())
    }

    /// Whether updates may omit `resourceVersion`; see
    /// [`Hooks::allow_unconditional_update`].
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Why the object may not be deleted; see [`Hooks::forbid_delete`].
    fn forbid_delete(&self, _obj: &Value) -> Option<String> {
        None
    }

    /// Prepares an object that a delete keeps for finalization; see
    /// [`Hooks::prepare_for_delete`].
    fn prepare_for_delete(&self, _obj: &mut Value) {}

    /// Whether resource-specific finalization is pending; see [`Hooks::finalizing`].
    fn finalizing(&self, _obj: &Value) -> bool {
        false
    }

    /// A computed Table cell; see [`Hooks::table_cell`].
    fn table_cell(&self, _column: &str, _obj: &Value) -> Option<Value> {
        None
    }

    /// Prepares a write to another subresource; false when the resource has none. See
    /// [`Hooks::update_subresource`].
    fn prepare_for_subresource_update(&self, _sub: &str, _new: &mut Value, _old: &Value) -> bool {
        false
    }

    /// Validates a write to another subresource. See
    /// [`Hooks::validate_subresource_update`].
    fn validate_subresource_update(&self, _sub: &str, _new: &Value, _old: &Value) -> ErrorList {
        ErrorList::new()
    }

    /// Validates a write to another subresource whole: the update's validation, then
    /// the subresource's, or the subresource's alone where the hooks say it replaces
    /// the update's ([`Hooks::subresource_replaces_update_validation`]).
    fn validate_subresource_write(&self, sub: &str, new: &Value, old: &Value) -> ErrorList {
        let mut errs = self.validate_update(new, old);
        errs.extend(self.validate_subresource_update(sub, new, old));
        errs
    }

    /// Applies a POST to another subresource. See [`Hooks::create_on_subresource`].
    fn create_on_subresource(
        &self,
        _sub: &str,
        _body: &Value,
        _obj: &mut Value,
    ) -> Result<(), SubresourceError> {
        Err(SubresourceError::NotFound)
    }
}

/// Where strategies are installed; implemented by the server's registry. The generated
/// `register` function calls [`Registrar::register`] once per served resource version.
pub trait Registrar {
    /// Installs one resource version.
    fn register(&mut self, strategy: std::sync::Arc<dyn ObjectStrategy>);

    /// Installs how the versions of resource `(group, plural)` convert, when more than
    /// their `apiVersion` differs. Ignored unless the registrar serves conversions.
    fn register_conversion(
        &mut self,
        group: &str,
        plural: &str,
        converter: std::sync::Arc<dyn crate::conversion::VersionConverter>,
    ) {
        let _ = (group, plural, converter);
    }

    /// Installs the conversion webhook of resource `(group, plural)`, whose versions
    /// convert through its own webhook (`conversion`: the CRD's `spec.conversion` as
    /// JSON). Ignored unless the registrar calls webhooks.
    fn register_conversion_webhook(&mut self, group: &str, plural: &str, conversion: &str) {
        let _ = (group, plural, conversion);
    }
}

/// A [`Registrar`] passing on only the resources `keep` accepts (and their
/// conversions): how a server takes single resources out of a generated `register`
/// that installs many.
///
/// ```ignore
/// let mut resources = Resources::new();
/// // Only Namespaces and the RBAC kinds of every built-in.
/// kapi_kube::generated::register(&mut Only::new(&mut resources, |r| {
///     (r.group.is_empty() && r.kind == "Namespace") || r.group == "rbac.authorization.k8s.io"
/// }));
/// ```
pub struct Only<'a, F> {
    inner: &'a mut dyn Registrar,
    keep: F,
    kept: std::collections::BTreeSet<(String, String)>,
}

impl<'a, F: Fn(&ResourceInfo) -> bool> Only<'a, F> {
    /// Passes on to `inner` what `keep` accepts.
    pub fn new(inner: &'a mut dyn Registrar, keep: F) -> Self {
        Self {
            inner,
            keep,
            kept: Default::default(),
        }
    }
}

impl<F: Fn(&ResourceInfo) -> bool> Registrar for Only<'_, F> {
    fn register(&mut self, strategy: std::sync::Arc<dyn ObjectStrategy>) {
        let info = strategy.info();
        if (self.keep)(info) {
            self.kept
                .insert((info.group.to_string(), info.plural.to_string()));
            self.inner.register(strategy);
        }
    }

    fn register_conversion(
        &mut self,
        group: &str,
        plural: &str,
        converter: std::sync::Arc<dyn crate::conversion::VersionConverter>,
    ) {
        if self.kept.contains(&(group.to_string(), plural.to_string())) {
            self.inner.register_conversion(group, plural, converter);
        }
    }

    fn register_conversion_webhook(&mut self, group: &str, plural: &str, conversion: &str) {
        if self.kept.contains(&(group.to_string(), plural.to_string())) {
            self.inner
                .register_conversion_webhook(group, plural, conversion);
        }
    }
}

/// Generic create preparation shared by every strategy.
fn generic_prepare_for_create(
    info: &ResourceInfo,
    schema: &Schema,
    obj: &mut Value,
    keep_status: bool,
) {
    schema.prune(obj);
    schema.apply_defaults(obj);
    if info.subresources.status && !keep_status {
        if let Some(map) = obj.as_object_mut() {
            map.remove("status");
            // A status with a default starts as that default (Kubernetes' own kinds
            // start with `status: {}`, the empty struct Go writes).
            // A required status starts empty, as Go writes a status struct that is
            // not a pointer (StorageVersion).
            if let Some(status) = schema.properties.get("status") {
                let required = schema.required.iter().any(|r| r == "status");
                if let Some(d) = status
                    .default
                    .clone()
                    .or(required.then(|| serde_json::json!({})))
                {
                    let mut d = d;
                    status.apply_defaults(&mut d);
                    map.insert("status".into(), d);
                }
            }
        }
    }
    set_generation(obj, 1);
}

/// Generic update preparation shared by every strategy.
fn generic_prepare_for_update(info: &ResourceInfo, schema: &Schema, new: &mut Value, old: &Value) {
    schema.prune(new);
    schema.apply_defaults(new);
    if info.subresources.status {
        copy_top_level(new, old, "status");
    }
    let old_gen = generation(old);
    let changed = differs_outside(new, old, info.subresources.status);
    set_generation(new, if changed { old_gen + 1 } else { old_gen.max(1) });
}

/// Generic status-update preparation: everything but status comes from the old object.
fn generic_prepare_for_status_update(schema: &Schema, new: &mut Value, old: &Value) {
    schema.prune(new);
    schema.apply_defaults(new);
    let status = new.get("status").cloned();
    let new_meta = new.get("metadata").cloned();
    let mut merged = old.clone();
    if let Some(map) = merged.as_object_mut() {
        match status {
            Some(s) => {
                map.insert("status".into(), s);
            }
            None => {
                map.remove("status");
            }
        }
        // Everything but status comes from the stored object, as in kube-apiserver's
        // status strategy; the request's resourceVersion is kept for the precondition.
        if let (Some(new_meta), Some(meta)) = (new_meta, map.get_mut("metadata")) {
            if let (Some(nm), Some(m)) = (new_meta.as_object(), meta.as_object_mut()) {
                if let Some(rv) = nm.get("resourceVersion") {
                    m.insert("resourceVersion".into(), rv.clone());
                }
            }
        }
    }
    *new = merged;
}

fn generation(obj: &Value) -> i64 {
    obj.get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// Leaves `obj` without `metadata.generation`, for kinds that do not track it.
fn clear_generation(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("generation");
    }
}

fn set_generation(obj: &mut Value, generation: i64) {
    if let Some(map) = obj.as_object_mut() {
        let meta = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert("generation".into(), Value::from(generation));
        }
    }
}

fn copy_top_level(new: &mut Value, old: &Value, field: &str) {
    if let Some(map) = new.as_object_mut() {
        match old.get(field) {
            Some(v) => {
                map.insert(field.into(), v.clone());
            }
            None => {
                map.remove(field);
            }
        }
    }
}

/// True when the objects differ in anything but metadata (and status, when it is a
/// subresource): Kubernetes' rule for bumping `metadata.generation` on custom resources.
fn differs_outside(new: &Value, old: &Value, status_is_subresource: bool) -> bool {
    let skip = |k: &str| k == "metadata" || (status_is_subresource && k == "status");
    let empty = serde_json::Map::new();
    let n = new.as_object().unwrap_or(&empty);
    let o = old.as_object().unwrap_or(&empty);
    n.iter()
        .filter(|(k, _)| !skip(k))
        .any(|(k, v)| o.get(k) != Some(v))
        || o.iter()
            .filter(|(k, _)| !skip(k))
            .any(|(k, _)| !n.contains_key(k))
}

/// Errors for each dotted path whose value differs between `new` and `old`.
pub fn check_immutable(paths: &[&str], new: &Value, old: &Value) -> ErrorList {
    let mut errs = ErrorList::new();
    for p in paths {
        let pointer: String = p.split('.').map(|s| format!("/{s}")).collect();
        if new.pointer(&pointer) != old.pointer(&pointer) {
            let path = FieldPath::new(p);
            let value = new.pointer(&pointer).cloned().unwrap_or(Value::Null);
            errs.push(FieldError::invalid(&path, value, "field is immutable"));
        }
    }
    errs
}

/// The strategy of a run-time resource: the schema engine and nothing else.
#[derive(Debug)]
pub struct SchemaStrategy {
    info: ResourceInfo,
    schema: Schema,
}

impl SchemaStrategy {
    /// A strategy for `info` validated by `schema`.
    pub fn new(info: ResourceInfo, schema: Schema) -> Self {
        Self { info, schema }
    }
}

impl ObjectStrategy for SchemaStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn prepare_for_create(&self, obj: &mut Value) {
        generic_prepare_for_create(&self.info, &self.schema, obj, false);
    }
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        generic_prepare_for_update(&self.info, &self.schema, new, old);
    }
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        generic_prepare_for_status_update(&self.schema, new, old);
    }
    fn validate(&self, obj: &Value) -> ErrorList {
        self.schema.validate(obj, &FieldPath::root())
    }
    fn validate_update(&self, new: &Value, old: &Value) -> ErrorList {
        self.schema.validate_update(new, old, &FieldPath::root())
    }
}

/// The strategy of a compiled resource `R`: the schema engine, then `R::Hooks`.
pub struct TypedStrategy<R: Resource> {
    hooks: R::Hooks,
    _marker: PhantomData<fn() -> R>,
}

impl<R: Resource> Default for TypedStrategy<R> {
    fn default() -> Self {
        Self {
            hooks: R::Hooks::default(),
            _marker: PhantomData,
        }
    }
}

impl<R: Resource> TypedStrategy<R> {
    /// Whether `R`'s hooks read the typed form ([`Hooks::TYPED`]).
    const TYPED_HOOKS: bool = <R::Hooks as Hooks<R>>::TYPED;

    /// A strategy for `R` with its default hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` on the typed form of `obj` and writes the result back. An object that
    /// does not decode is left alone here: validation, which runs next, answers 422 at
    /// the field that does not ([`Self::typed`]).
    fn with_typed(obj: &mut Value, f: impl FnOnce(&mut R)) {
        if let Ok(mut typed) = Self::typed(obj) {
            f(&mut typed);
            if let Ok(v) = serde_json::to_value(&typed) {
                *obj = v;
            }
        }
    }

    /// A new object's validation and, when `warn` and it is valid, the hooks' warnings,
    /// from one decoding of it.
    fn create_checks(&self, obj: &Value, warn: bool) -> (ErrorList, Vec<String>) {
        let errs = R::schema().validate(obj, &FieldPath::root());
        if !errs.is_empty() {
            return (errs, Vec::new());
        }
        match Self::typed(obj) {
            Ok(t) => {
                let errs = self.hooks.validate(&t);
                let warnings = match warn && errs.is_empty() && Self::TYPED_HOOKS {
                    true => self.hooks.warnings_on_create(&t),
                    false => Vec::new(),
                };
                (errs, warnings)
            }
            Err(e) => (vec![e], Vec::new()),
        }
    }

    /// An update's validation and, when `warn` and it is valid, the hooks' warnings,
    /// from one decoding of each object (two of the six an update decoded).
    fn update_checks(&self, new: &Value, old: &Value, warn: bool) -> (ErrorList, Vec<String>) {
        let mut errs = R::schema().validate_update(new, old, &FieldPath::root());
        errs.extend(check_immutable(self.hooks.immutable_fields(), new, old));
        if !errs.is_empty() {
            return (errs, Vec::new());
        }
        if !Self::TYPED_HOOKS {
            return (Self::typed(new).err().into_iter().collect(), Vec::new());
        }
        match (Self::typed(new), Self::typed(old)) {
            (Ok(n), Ok(o)) => {
                let errs = self.hooks.validate_update(&n, &o);
                let warnings = match warn && errs.is_empty() {
                    true => self.hooks.warnings_on_update(&n, &o),
                    false => Vec::new(),
                };
                (errs, warnings)
            }
            (Err(e), _) | (_, Err(e)) => (vec![e], Vec::new()),
        }
    }

    /// The typed form of `obj`, decoded from it in place. A value the schema let
    /// through but the type cannot hold (an `int32` out of range, say) is an `Invalid`
    /// error at that field, with the value and the decoder's words.
    fn typed(obj: &Value) -> Result<R, FieldError> {
        // Tracking the path more than doubles the decode's cost; only a failure needs it.
        if let Ok(typed) = R::deserialize(obj) {
            return Ok(typed);
        }
        serde_path_to_error::deserialize::<_, R>(obj).map_err(|e| {
            let mut path = FieldPath::root();
            let mut value = Some(obj);
            for segment in e.path().iter() {
                match segment {
                    Segment::Seq { index } => {
                        path = path.index(*index);
                        value = value.and_then(|v| v.get(*index));
                    }
                    Segment::Map { key } => {
                        path = path.child(key);
                        value = value.and_then(|v| v.get(key.as_str()));
                    }
                    Segment::Enum { .. } | Segment::Unknown => {}
                }
            }
            let detail = e.inner().to_string();
            match value.filter(|_| !path.is_root()) {
                Some(v) => FieldError::invalid(&path, v.clone(), detail),
                None => FieldError::invalid_omit_value(&path, detail),
            }
        })
    }
}

impl<R: Resource> ObjectStrategy for TypedStrategy<R> {
    fn info(&self) -> &ResourceInfo {
        R::info()
    }
    fn schema(&self) -> &Schema {
        R::schema()
    }
    fn name_rule(&self) -> crate::meta::NameRule {
        self.hooks.name_rule()
    }
    fn prepare_for_create(&self, obj: &mut Value) {
        self.hooks.normalize(obj);
        generic_prepare_for_create(
            R::info(),
            R::schema(),
            obj,
            self.hooks.keep_status_on_create(),
        );
        Self::with_typed(obj, |o| {
            self.hooks.apply_defaults(o);
            self.hooks.prepare_for_create(o);
        });
        if !self.hooks.tracks_generation() {
            clear_generation(obj);
        }
    }
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        self.hooks.normalize(new);
        generic_prepare_for_update(R::info(), R::schema(), new, old);
        if !Self::TYPED_HOOKS {
            Self::with_typed(new, |_| {});
        } else if let Ok(old_typed) = Self::typed(old) {
            Self::with_typed(new, |o| {
                self.hooks.apply_defaults(o);
                self.hooks.prepare_for_update(o, &old_typed);
            });
        }
        if !self.hooks.tracks_generation() {
            clear_generation(new);
        }
    }
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        generic_prepare_for_status_update(R::schema(), new, old);
    }
    fn validate(&self, obj: &Value) -> ErrorList {
        self.create_checks(obj, false).0
    }
    fn validate_update(&self, new: &Value, old: &Value) -> ErrorList {
        self.update_checks(new, old, false).0
    }
    fn validate_with_warnings(&self, obj: &Value) -> (ErrorList, Vec<String>) {
        self.create_checks(obj, true)
    }
    fn validate_update_with_warnings(&self, new: &Value, old: &Value) -> (ErrorList, Vec<String>) {
        self.update_checks(new, old, true)
    }
    fn allow_unconditional_update(&self) -> bool {
        self.hooks.allow_unconditional_update()
    }
    fn forbid_delete(&self, obj: &Value) -> Option<String> {
        let typed = Self::typed(obj).ok()?;
        self.hooks.forbid_delete(&typed)
    }
    fn prepare_for_delete(&self, obj: &mut Value) {
        Self::with_typed(obj, |o| self.hooks.prepare_for_delete(o));
    }
    fn finalizing(&self, obj: &Value) -> bool {
        Self::typed(obj).is_ok_and(|o| self.hooks.finalizing(&o))
    }
    fn table_cell(&self, column: &str, obj: &Value) -> Option<Value> {
        let typed = Self::typed(obj).ok()?;
        self.hooks.table_cell(column, &typed)
    }
    fn prepare_for_subresource_update(&self, sub: &str, new: &mut Value, old: &Value) -> bool {
        let Ok(old_typed) = Self::typed(old) else {
            return false;
        };
        let mut handled = false;
        Self::with_typed(new, |n| {
            handled = self.hooks.update_subresource(sub, n, &old_typed)
        });
        handled
    }
    fn validate_subresource_update(&self, sub: &str, new: &Value, old: &Value) -> ErrorList {
        match (Self::typed(new), Self::typed(old)) {
            (Ok(n), Ok(o)) => self.hooks.validate_subresource_update(sub, &n, &o),
            (Err(e), _) | (_, Err(e)) => vec![e],
        }
    }
    fn validate_subresource_write(&self, sub: &str, new: &Value, old: &Value) -> ErrorList {
        if !self.hooks.subresource_replaces_update_validation(sub) {
            let mut errs = self.validate_update(new, old);
            errs.extend(self.validate_subresource_update(sub, new, old));
            return errs;
        }
        let mut errs = R::schema().validate_update(new, old, &FieldPath::root());
        errs.extend(check_immutable(self.hooks.immutable_fields(), new, old));
        if errs.is_empty() {
            errs.extend(self.validate_subresource_update(sub, new, old));
        }
        errs
    }
    fn create_on_subresource(
        &self,
        sub: &str,
        body: &Value,
        obj: &mut Value,
    ) -> Result<(), SubresourceError> {
        let mut typed = Self::typed(obj).map_err(|e| SubresourceError::Invalid(vec![e]))?;
        self.hooks.create_on_subresource(sub, body, &mut typed)?;
        *obj = serde_json::to_value(&typed)
            .map_err(|e| SubresourceError::BadRequest(e.to_string()))?;
        Ok(())
    }
}
