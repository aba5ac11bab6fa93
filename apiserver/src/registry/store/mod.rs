//! [`Store`]: the generic create, get, update, patch and delete of one resource version,
//! assembled from its strategy and the storage. Mirrors `Store` in
//! k8s.io/apiserver/pkg/registry/generic/registry: handlers decode, the store runs the
//! strategy in a fixed order and writes, and storage errors become API errors here.

use std::sync::Arc;

use kapi_core::meta::validate_object_meta;
use kapi_core::{ObjectStrategy, ResourceInfo};
use kapi_storage::{ReadAt, Storage, StorageError};
use serde_json::{Value, json};

use crate::registry::NamespaceLookup;
use crate::registry::codec::{StoredObject, encode};
use crate::registry::conversion::Converter;
use crate::registry::keys;
use crate::registry::lifecycle::{Lifecycle, LifecycleError};
use crate::registry::object::{self, is_being_deleted, meta_str, set_meta};
use crate::registry::options::{AdmissionRequest, FieldValidation, Operation, WriteOptions};
use crate::status::ApiError;

mod apply;
mod convert;
mod delete;
mod migrate;
mod update;

pub(crate) use convert::Conversion;
pub use migrate::MigratedPage;

/// The finalizer the garbage collector honours for `propagationPolicy: Orphan`.
pub const ORPHAN_FINALIZER: &str = "orphan";
/// The finalizer the garbage collector honours for `propagationPolicy: Foreground`.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// Which part of an object a write is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subresource {
    /// The object itself.
    Main,
    /// `/status`.
    Status,
    /// `/scale`: prepared as the object itself (the scale handler changes only the
    /// replicas), and named `scale` to admission and in `managedFields`.
    Scale,
    /// Another subresource the resource's hooks handle (Namespace `finalize`,
    /// CertificateSigningRequest `approval`).
    Extra(kapi_core::resource::Str),
}

/// What a delete did.
#[derive(Clone, Debug)]
pub enum Deletion {
    /// The object is gone; this was its last state.
    Deleted(Value),
    /// The object waits for its finalizers; this is its state now.
    Pending(Value),
}

/// What a store does beyond its strategy; see [`super::StoreOptions`] and
/// [`super::Install`].
#[derive(Clone, Default)]
pub struct StoreSetup {
    /// Where namespaces live, for namespaced resources.
    pub namespaces: Option<Arc<NamespaceLookup>>,
    /// Work around writes that needs storage of its own.
    pub lifecycle: Option<Arc<dyn Lifecycle>>,
    /// How long an object lives after its last write (Events: `--event-ttl`).
    pub ttl: Option<std::time::Duration>,
    /// The `apiVersion` objects are stored in; `None`: the version written through.
    pub storage_version: Option<String>,
    /// Why creates are refused, if they are.
    pub refuse_create: Option<String>,
    /// How objects change between versions beyond `apiVersion`.
    pub converter: Option<Arc<dyn Converter>>,
    /// The largest stored object, in bytes.
    pub max_object_bytes: usize,
}

/// One resource version's store.
pub struct Store {
    strategy: Arc<dyn ObjectStrategy>,
    storage: Arc<dyn Storage>,
    prefix: String,
    namespaces: Option<Arc<NamespaceLookup>>,
    lifecycle: Option<Arc<dyn Lifecycle>>,
    ttl: Option<std::time::Duration>,
    storage_version: Option<String>,
    refuse_create: Option<String>,
    /// Into the served version, when versions differ beyond `apiVersion`.
    conversion: Option<convert::Conversion>,
    max_object_bytes: usize,
}

/// The outcome of a write: the object and warnings for the client.
pub type Written = (Value, Vec<String>);

impl Store {
    pub(super) fn new(
        strategy: Arc<dyn ObjectStrategy>,
        storage: Arc<dyn Storage>,
        prefix: String,
        setup: StoreSetup,
    ) -> Self {
        let conversion = setup
            .converter
            .map(|c| convert::Conversion::new(c, strategy.info().api_version()));
        Self {
            strategy,
            storage,
            prefix,
            conversion,
            namespaces: setup.namespaces,
            lifecycle: setup.lifecycle,
            ttl: setup.ttl,
            max_object_bytes: setup.max_object_bytes,
            storage_version: setup.storage_version,
            refuse_create: setup.refuse_create,
        }
    }

    /// The stored form of `obj`: in the storage version (`None` conversion: only
    /// `apiVersion` changes between versions, as for CRDs).
    /// A 413 for an object whose stored form is over the limit (etcd's
    /// `--max-request-bytes` on kube-apiserver).
    fn check_size(&self, name: &str, value: &bytes::Bytes) -> Result<(), ApiError> {
        if value.len() <= self.max_object_bytes {
            return Ok(());
        }
        Err(ApiError::too_large(format!(
            "{} {name:?} is too large: it would be stored as {} bytes, more than the limit of {} bytes",
            crate::status::qualified_resource(self.info()),
            value.len(),
            self.max_object_bytes
        )))
    }

    fn encode(&self, obj: &Value) -> bytes::Bytes {
        match &self.storage_version {
            Some(v) if obj.get("apiVersion").and_then(Value::as_str) != Some(v) => {
                let mut stored = obj.clone();
                if let Some(map) = stored.as_object_mut() {
                    map.insert("apiVersion".into(), Value::from(v.as_str()));
                }
                encode(&stored)
            }
            _ => encode(obj),
        }
    }

    fn lifecycle_error(&self, name: &str, e: LifecycleError) -> ApiError {
        match e {
            LifecycleError::Invalid(errs) => ApiError::invalid(self.info(), name, &errs),
            LifecycleError::Storage(e) => self.storage_error(name, &e),
            LifecycleError::Internal(why) => ApiError::internal(&why, &std::fmt::Error),
        }
    }

    /// Releases what a removed object held (Service IPs and ports).
    async fn removed(&self, obj: &Value) {
        if let Some(l) = &self.lifecycle {
            l.after_delete(obj).await;
        }
    }

    /// The resource this store serves.
    pub fn info(&self) -> &ResourceInfo {
        self.strategy.info()
    }

    /// Its strategy.
    pub fn strategy(&self) -> &Arc<dyn ObjectStrategy> {
        &self.strategy
    }

    /// The storage under it.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// The prefix of every key of this resource.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub(crate) fn key(&self, namespace: Option<&str>, name: &str) -> String {
        keys::object_key(&self.prefix, namespace, name)
    }

    fn storage_error(&self, name: &str, e: &StorageError) -> ApiError {
        ApiError::from_storage(self.info(), name, e)
    }

    /// `GET .../{name}`.
    pub async fn get(
        &self,
        namespace: Option<&str>,
        name: &str,
        read_at: ReadAt,
    ) -> Result<Value, ApiError> {
        self.get_stored(namespace, name, read_at)
            .await?
            .decode(self.info())
    }

    /// [`Store::get`], before the object is parsed.
    pub async fn get_stored(
        &self,
        namespace: Option<&str>,
        name: &str,
        read_at: ReadAt,
    ) -> Result<StoredObject, ApiError> {
        let kv = self
            .storage
            .get(&self.key(namespace, name), read_at)
            .await
            .map_err(|e| self.storage_error(name, &e))?
            .ok_or_else(|| ApiError::not_found(self.info(), name))?;
        self.served_one(kv.into()).await
    }

    /// Checks the body's `apiVersion` and `kind` (defaulting them when absent) and its
    /// namespace against the request's, as kube-apiserver's handlers do.
    fn check_identity(&self, obj: &mut Value, namespace: Option<&str>) -> Result<(), ApiError> {
        let info = self.info();
        // `null` decodes to an empty object, as Go's decoder leaves one.
        if obj.is_null() {
            *obj = json!({});
        }
        let Some(map) = obj.as_object_mut() else {
            return Err(ApiError::bad_request(format!(
                "the body of the request is not a {} object",
                info.kind
            )));
        };
        let api_version = info.api_version();
        // Not a string at all is a body that does not decode (400), as in kube.
        for field in ["apiVersion", "kind"] {
            if map
                .get(field)
                .is_some_and(|v| !v.is_string() && !v.is_null())
            {
                return Err(ApiError::bad_request(format!(
                    "the body of the request is not a {} object: {field} must be a string",
                    info.kind
                )));
            }
        }
        match map.get("apiVersion").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("apiVersion".into(), json!(api_version));
            }
            Some(v) if v == api_version => {}
            Some(v) => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({v}) does not match the expected API version ({api_version})"
                )));
            }
        }
        match map.get("kind").and_then(Value::as_str) {
            None | Some("") => {
                map.insert("kind".into(), json!(info.kind));
            }
            Some(k) if k == info.kind => {}
            Some(k) => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({k}) does not match the expected kind ({})",
                    info.kind
                )));
            }
        }
        match namespace {
            Some(ns) => {
                let body_ns = object::namespace(obj).to_string();
                if body_ns.is_empty() {
                    set_meta(obj, "namespace", Some(json!(ns)));
                } else if body_ns != ns {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
            }
            None => {
                // Cluster-scoped objects carry no namespace; kube-apiserver clears it.
                set_meta(obj, "namespace", None);
            }
        }
        Ok(())
    }

    fn admission_request<'a>(
        &'a self,
        operation: Operation,
        subresource: &'a str,
        namespace: Option<&'a str>,
        name: &'a str,
        opts: &WriteOptions,
    ) -> AdmissionRequest<'a> {
        AdmissionRequest {
            operation,
            info: self.info(),
            subresource,
            namespace,
            name,
            dry_run: opts.dry_run,
        }
    }

    async fn check_namespace(&self, namespace: Option<&str>, name: &str) -> Result<(), ApiError> {
        let (Some(lookup), Some(ns)) = (&self.namespaces, namespace) else {
            return Ok(());
        };
        // From the cache, as kube-apiserver's NamespaceLifecycle admission reads its
        // informer; only a namespace the cache does not know yet is read from storage.
        let key = lookup.key(ns);
        let mut kv = lookup
            .storage()
            .get(&key, ReadAt::Any)
            .await
            .map_err(|e| self.storage_error(name, &e))?;
        if kv.is_none() {
            kv = lookup
                .storage()
                .get(&key, ReadAt::Latest)
                .await
                .map_err(|e| self.storage_error(name, &e))?;
        }
        match kv {
            None => Err(ApiError::namespace_not_found(ns)),
            Some(kv) => {
                let obj: Value = serde_json::from_slice(&kv.value).unwrap_or(Value::Null);
                if is_being_deleted(&obj) {
                    Err(ApiError::forbidden(
                        self.info(),
                        name,
                        &format!(
                            "unable to create new content in namespace {ns} because it is being terminated"
                        ),
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Removes fields the schema does not know, reporting them per `fieldValidation`.
    fn unknown_fields(&self, obj: &Value, mode: FieldValidation) -> Result<Vec<String>, ApiError> {
        if mode == FieldValidation::Ignore {
            return Ok(Vec::new());
        }
        let mut pruned = obj.clone();
        self.strategy.schema().prune(&mut pruned);
        object::prune_metadata(&mut pruned);
        let mut unknown = Vec::new();
        collect_removed(obj, &pruned, &mut Vec::new(), &mut unknown);
        let messages: Vec<String> = unknown
            .iter()
            .map(|p| format!("unknown field \"{p}\""))
            .collect();
        if mode == FieldValidation::Strict && !messages.is_empty() {
            return Err(ApiError::bad_request(format!(
                "strict decoding error: {}",
                messages.join(", ")
            )));
        }
        Ok(messages)
    }

    /// `POST`: creates an object in `namespace` (`None` for cluster-scoped resources).
    pub async fn create(
        &self,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let info = self.info();
        if let Some(why) = &self.refuse_create {
            return Err(ApiError::forbidden(info, object::name(&obj), why));
        }
        self.check_identity(&mut obj, namespace)?;
        let mut warnings = self.unknown_fields(&obj, opts.field_validation)?;
        object::prune_metadata(&mut obj);
        if let Some(admission) = &opts.admission {
            // Mutating admission sees the object as sent, before the strategy and the
            // server-set metadata, as in kube-apiserver's create handler.
            let name = object::name(&obj).to_string();
            let request = self.admission_request(Operation::Create, "", namespace, &name, opts);
            admission.admit(&request, &mut obj, None).await?;
            self.check_identity(&mut obj, namespace)?;
            object::prune_metadata(&mut obj);
        }
        if !meta_str(&obj, "resourceVersion").is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        if object::name(&obj).is_empty() {
            let generate = meta_str(&obj, "generateName").to_string();
            if !generate.is_empty() {
                let name = format!("{generate}{}", random_suffix());
                set_meta(&mut obj, "name", Some(json!(name)));
            }
        }
        // Server-set metadata: before the strategy, which may use the uid (a Job's
        // selector), as kube-apiserver's FillObjectMetaSystemFields does...
        let uid = json!(uuid::Uuid::new_v4().to_string());
        let created = json!(object::now());
        set_meta(&mut obj, "uid", Some(uid.clone()));
        set_meta(&mut obj, "creationTimestamp", Some(created.clone()));
        self.strategy.prepare_for_create(&mut obj);
        // ...and again after it, so that nothing can override it.
        set_meta(&mut obj, "uid", Some(uid));
        set_meta(&mut obj, "creationTimestamp", Some(created));
        set_meta(&mut obj, "deletionTimestamp", None);
        set_meta(&mut obj, "deletionGracePeriodSeconds", None);
        // Defaults are the creator's, as kube's decoder defaults before its field
        // manager runs; reset fields (a status) are nobody's.
        self.record_update(&json!({}), &mut obj, "", opts);
        let name = object::name(&obj).to_string();
        let mut errs = validate_object_meta(
            obj.get("metadata"),
            info.namespaced(),
            self.strategy.name_rule(),
        );
        let (checked, warned) = self.strategy.validate_with_warnings(&obj);
        errs.extend(checked);
        if !errs.is_empty() {
            return Err(ApiError::invalid(info, &name, &errs));
        }
        warnings.extend(warned);
        self.check_namespace(namespace, &name).await?;
        if let Some(admission) = &opts.admission {
            let request = self.admission_request(Operation::Create, "", namespace, &name, opts);
            admission.validate(&request, Some(&obj), None).await?;
        }
        if opts.dry_run {
            return Ok((obj, warnings));
        }
        if let Some(l) = &self.lifecycle {
            l.begin_create(&mut obj)
                .await
                .map_err(|e| self.lifecycle_error(&name, e))?;
        }
        let key = self.key(namespace, &name);
        let value = match self.encode_for_storage(&obj).await {
            Ok(value) => value,
            Err(e) => {
                if let Some(l) = &self.lifecycle {
                    l.abort_create(&obj).await;
                }
                return Err(e);
            }
        };
        if let Err(e) = self.check_size(&name, &value) {
            if let Some(l) = &self.lifecycle {
                l.abort_create(&obj).await;
            }
            return Err(e);
        }
        let created = match self.ttl {
            Some(ttl) => self.storage.create_with_ttl(&key, value.clone(), ttl).await,
            None => self.storage.create(&key, value.clone()).await,
        };
        let kv = match created {
            Ok(kv) => kv,
            Err(e) => {
                if let Some(l) = &self.lifecycle {
                    l.abort_create(&obj).await;
                }
                return Err(self.storage_error(&name, &e));
            }
        };
        Ok((self.written(obj, &value, kv.mod_revision).await?, warnings))
    }
}

/// Paths (`spec.foo`) present in `original` but pruned away in `pruned`.
fn collect_removed<'v>(
    original: &'v Value,
    pruned: &Value,
    at: &mut Vec<Step<'v>>,
    out: &mut Vec<String>,
) {
    match (original, pruned) {
        (Value::Object(o), Value::Object(p)) => {
            for (k, v) in o {
                match p.get(k) {
                    // A null the schema does not allow is dropped, as a typed decode
                    // drops it; it is not an unknown field.
                    None if v.is_null() => {}
                    None => out.push(render(at, Step::Key(k))),
                    Some(pv) => {
                        at.push(Step::Key(k));
                        collect_removed(v, pv, at, out);
                        at.pop();
                    }
                }
            }
        }
        (Value::Array(o), Value::Array(p)) => {
            for (i, (v, pv)) in o.iter().zip(p).enumerate() {
                at.push(Step::Index(i));
                collect_removed(v, pv, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// One step of a path to an unknown field; the path is written out only for the fields
/// found, which are few or none.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// `a.b[0].c`: the path `at` and then `last`.
fn render(at: &[Step<'_>], last: Step<'_>) -> String {
    let mut path = String::new();
    for step in at.iter().chain([&last]) {
        match step {
            Step::Key(k) if path.is_empty() => path.push_str(k),
            Step::Key(k) => {
                path.push('.');
                path.push_str(k);
            }
            Step::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    path
}

/// Five characters from the alphabet kube-apiserver's `generateName` uses (no vowels, no
/// look-alikes).
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::collect_removed;

    #[test]
    fn removed_fields_are_named_by_their_paths() {
        let sent = json!({
            "bogus": 1,
            "dropped": null,
            "spec": {"kept": 1, "extra": {"a": 1}, "items": [{"x": 1}, {"x": 2, "y": 3}]},
        });
        let pruned = json!({"spec": {"kept": 1, "items": [{"x": 1}, {"x": 2}]}});
        let mut found = Vec::new();
        collect_removed(&sent, &pruned, &mut Vec::new(), &mut found);
        assert_eq!(found, ["bogus", "spec.extra", "spec.items[1].y"]);
        let mut found = Vec::new();
        collect_removed(
            &json!([{"a": 1}]),
            &json!([{}]),
            &mut Vec::new(),
            &mut found,
        );
        assert_eq!(found, ["[0].a"]);
    }
}
