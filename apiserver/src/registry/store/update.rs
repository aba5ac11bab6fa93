//! [`Store`]'s writes of an existing object: update and patch (`update_with`), `PUT`,
//! and the subresources of another kind (`pods/binding`).

use kapi_core::meta::validate_object_meta_update;
use kapi_core::{ErrorList, FieldError, FieldPath, ResourceInfo, SubresourceError};
use kapi_storage::{Update, UpdateAttempts, UpdateError, Updated};
use serde_json::Value;

use crate::registry::object::{self, finalizers, is_being_deleted, meta_str, set_meta};
use crate::registry::options::{Operation, WriteOptions};
use crate::status::ApiError;

use super::{Store, Subresource, Written};

impl Store {
    /// Validates an update of `sub` (the metadata, then the strategy's checks, which
    /// cover everything a create checks plus transition rules); the warnings for the
    /// client when it passes.
    fn validate_write(
        &self,
        sub: &Subresource,
        new: &Value,
        old: &Value,
        name: &str,
    ) -> Result<Vec<String>, ApiError> {
        let info = self.info();
        let mut errs: ErrorList = validate_object_meta_update(
            new.get("metadata"),
            old.get("metadata"),
            info.namespaced(),
            self.strategy.name_rule(),
        );
        let (checked, warnings) = match sub {
            Subresource::Extra(name) => (
                self.strategy.validate_subresource_write(name, new, old),
                Vec::new(),
            ),
            Subresource::Main => self.strategy.validate_update_with_warnings(new, old),
            _ => (self.strategy.validate_update(new, old), Vec::new()),
        };
        errs.extend(checked);
        if !errs.is_empty() {
            return Err(ApiError::invalid(info, name, &errs));
        }
        Ok(warnings)
    }

    /// Writes a new state computed from the current one by `compute` (update and patch),
    /// with the strategy's preparation and validation, a compare-and-swap retried on
    /// conflicts, and finalization: an object being deleted whose last finalizer was
    /// removed is deleted.
    pub async fn update_with<F>(
        &self,
        namespace: Option<&str>,
        name: &str,
        sub: Subresource,
        opts: &WriteOptions,
        mut compute: F,
    ) -> Result<Written, ApiError>
    where
        F: FnMut(&Value) -> Result<Value, ApiError> + Send,
    {
        let info = self.info().clone();
        let key = self.key(namespace, name);
        let mut warnings = Vec::new();
        let mut dry_result = None;
        let mut written = None;
        let subresource = sub.name();
        let request = self.admission_request(Operation::Update, subresource, namespace, name, opts);
        let outcome = async {
            let mut attempts = UpdateAttempts::begin(self.storage.as_ref(), &key, self.ttl).await?;
            loop {
                let decision = async {
                    let kv = attempts.current();
            let old = self.decode_served(&kv.value, kv.mod_revision).await?;
            let mut new = compute(&old)?;
            // A uid that is sent must be the object's: it is immutable (kube keeps the
            // stored one only when none is sent).
            let sent_uid = meta_str(&new, "uid");
            if !sent_uid.is_empty() && sent_uid != meta_str(&old, "uid") {
                let errs = vec![FieldError::invalid(
                    &FieldPath::new("metadata.uid"),
                    sent_uid,
                    "field is immutable",
                )];
                return Err(ApiError::invalid(&info, name, &errs));
            }
            self.check_identity(&mut new, namespace)?;
            if object::name(&new) != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    object::name(&new)
                )));
            }
            let rv = meta_str(&new, "resourceVersion");
            if rv.is_empty() && !self.strategy.allow_unconditional_update() {
                let errs = vec![FieldError::invalid(
                    &FieldPath::new("metadata.resourceVersion"),
                    0,
                    "must be specified for an update",
                )];
                return Err(ApiError::invalid(&info, name, &errs));
            }
            if !rv.is_empty() && rv != meta_str(&old, "resourceVersion") {
                return Err(ApiError::stale(&info, name));
            }
            warnings = self.unknown_fields(&new, opts.field_validation)?;
            object::prune_metadata(&mut new);
            if let Some(admission) = &opts.admission {
                admission.admit(&request, &mut new, Some(&old)).await?;
                self.check_identity(&mut new, namespace)?;
                if object::name(&new) != name {
                    return Err(ApiError::bad_request(
                        "admission changed the name of the object",
                    ));
                }
                object::prune_metadata(&mut new);
            }
            match &sub {
                Subresource::Main | Subresource::Scale => {
                    self.strategy.prepare_for_update(&mut new, &old)
                }
                Subresource::Status => self.strategy.prepare_for_status_update(&mut new, &old),
                Subresource::Extra(name) => {
                    if !self
                        .strategy
                        .prepare_for_subresource_update(name.as_ref(), &mut new, &old)
                    {
                        return Err(ApiError::no_route());
                    }
                }
            }
            object::keep_server_metadata(&mut new, &old);
            self.record_update(&old, &mut new, subresource, opts);
            warnings.extend(self.validate_write(&sub, &new, &old, name)?);
            if let Some(admission) = &opts.admission {
                admission.validate(&request, Some(&new), Some(&old)).await?;
            }
            if opts.dry_run {
                dry_result = Some(new);
                return Ok(Update::Keep);
            }
            if new == old {
                return Ok(Update::Keep);
            }
            if is_being_deleted(&new)
                && finalizers(&new).is_empty()
                && !self.strategy.finalizing(&new)
            {
                return Ok(Update::Delete);
            }
            set_meta(&mut new, "resourceVersion", None);
            let value = self.encode_update(&new, &kv.value, &sub).await?;
            self.check_size(name, &value)?;
            written = Some((new, value.clone()));
            Ok(Update::Write(value))
                }
                .await;
                if let Some(done) = attempts.settle(decision).await? {
                    return Ok(done);
                }
            }
        }
        .await;
        let obj = match outcome {
            Err(UpdateError::Rejected(e)) => return Err(e),
            Err(UpdateError::Storage(e)) => return Err(self.storage_error(name, &e)),
            Ok(_) if dry_result.is_some() => dry_result.take().expect("checked"),
            Ok(Updated::Written(kv)) => {
                let (obj, value) = written.take().expect("a write was computed");
                self.written(obj, &value, kv.mod_revision).await?
            }
            Ok(Updated::Kept(kv)) => self.decode_served(&kv.value, kv.mod_revision).await?,
            Ok(Updated::Deleted(d)) => {
                let obj = self.decode_served(&d.prev.value, d.revision).await?;
                self.removed(&obj).await;
                obj
            }
        };
        Ok((obj, warnings))
    }

    /// `POST .../{name}/{subresource}` of another kind (`pods/binding`): the resource's
    /// hooks change the stored object as `body` asks, retried on conflicts. The object is
    /// not run through the update strategy: the subresource is the only way to make that
    /// change (a Pod's nodeName), which an update would refuse.
    pub async fn create_on_subresource(
        &self,
        namespace: Option<&str>,
        name: &str,
        sub: &str,
        body: &Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let info = self.info().clone();
        let key = self.key(namespace, name);
        let mut dry_result = None;
        let outcome = async {
            let mut attempts = UpdateAttempts::begin(self.storage.as_ref(), &key, self.ttl).await?;
            loop {
                let decision = async {
                    let kv = attempts.current();
                    let old = self.decode_served(&kv.value, kv.mod_revision).await?;
                    let mut new = old.clone();
                    self.strategy
                        .create_on_subresource(sub, body, &mut new)
                        .map_err(|e| subresource_error(&info, name, sub, e))?;
                    if opts.dry_run {
                        dry_result = Some(new);
                        return Ok(Update::Keep);
                    }
                    if new == old {
                        return Ok(Update::Keep);
                    }
                    Ok(Update::Write(self.encode_for_storage(&new).await?))
                }
                .await;
                if let Some(done) = attempts.settle(decision).await? {
                    return Ok(done);
                }
            }
        }
        .await;
        match outcome {
            Err(UpdateError::Rejected(e)) => Err(e),
            Err(UpdateError::Storage(e)) => Err(self.storage_error(name, &e)),
            Ok(_) if dry_result.is_some() => Ok(dry_result.take().expect("checked")),
            Ok(Updated::Written(kv) | Updated::Kept(kv)) => {
                self.decode_served(&kv.value, kv.mod_revision).await
            }
            Ok(Updated::Deleted(d)) => self.decode_served(&d.prev.value, d.revision).await,
        }
    }

    /// `PUT`: replaces an object (or its status).
    pub async fn update(
        &self,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        sub: Subresource,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let info = self.info();
        self.update_with(namespace, name, sub, opts, |current| {
            // The uid of a replacement is a precondition, as kube-apiserver's update
            // handler makes it: 409 when it is not the stored object's.
            let (sent, stored) = (meta_str(&obj, "uid"), meta_str(current, "uid"));
            if !sent.is_empty() && sent != stored {
                return Err(ApiError::conflict(
                    info,
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {sent}, UID in object meta: {stored}"
                    ),
                ));
            }
            Ok(obj.clone())
        })
        .await
    }
}

/// A subresource hook's refusal as the API's error.
fn subresource_error(info: &ResourceInfo, name: &str, sub: &str, e: SubresourceError) -> ApiError {
    let mut sub_info = info.clone();
    sub_info.plural = format!("{}/{sub}", info.plural).into();
    match e {
        SubresourceError::NotFound => ApiError::no_route(),
        SubresourceError::Conflict(why) => ApiError::conflict(&sub_info, name, &why),
        SubresourceError::Invalid(errs) => ApiError::invalid(info, name, &errs),
        SubresourceError::BadRequest(why) => ApiError::bad_request(why),
    }
}
